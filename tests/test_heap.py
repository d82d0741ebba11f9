"""The garbage collector around a run: its settings are restored afterwards, and what the run keeps
is spared its traversals."""

from __future__ import annotations

import gc
import os
import platform
import sys

import pytest

from repro_lint.engine.heap import collector_paused, freed_memory_returned, kept_out_of_collections


@pytest.fixture
def collector_enabled():
    yield
    gc.enable()


def _project(root):
    (root / "pyproject.toml").write_text("")
    (root / "helpers.py").write_text("import random\n\ndef pick(items):\n    return random.choice(items)\n")
    (root / "train.py").write_text(
        "import torch\n"
        "from helpers import pick\n"
        "torch.backends.cudnn.benchmark = True\n"
        "model = torch.nn.Linear(2, 2)\n"
        "optimizer = torch.optim.SGD(model.parameters(), lr=0.1)\n"
        "model(torch.ones(2)).sum().backward()\n"
        "optimizer.step()\n"
        "print(pick([1, 2]))\n"
        "torch.save({'model': model.state_dict()}, 'last.pt')\n"
    )


def test_collections_are_paused_in_the_block_and_resume_after(collector_enabled):
    with collector_paused():
        assert not gc.isenabled()
    assert gc.isenabled()


def test_a_collector_the_caller_paused_stays_paused(collector_enabled):
    gc.disable()
    with collector_paused():
        assert not gc.isenabled()
    assert not gc.isenabled()


def test_the_collector_resumes_after_an_error(collector_enabled):
    with pytest.raises(KeyError), collector_paused():
        raise KeyError("x")
    assert gc.isenabled()


def test_objects_alive_on_entry_are_frozen_in_the_block_and_tracked_again_after():
    kept = [[index] for index in range(1000)]
    with kept_out_of_collections():
        assert gc.get_freeze_count() >= len(kept)
    assert gc.get_freeze_count() == 0


def test_a_fix_run_keeps_no_program_model_of_an_earlier_round(tmp_path, monkeypatch):
    # Each fix round builds a new program model; one kept alive by a table of views keyed by the
    # model grew a --fix run by 100 MB a round on Megatron-LM.
    import weakref

    from repro_lint.api import lint_paths
    from repro_lint.core.settings import Settings
    from repro_lint.program import model as program

    built: list[weakref.ref[program.ProjectModel]] = []
    init = program.ProjectModel.__init__

    def recording(self, *args, **kwargs):
        init(self, *args, **kwargs)
        built.append(weakref.ref(self))

    monkeypatch.setattr(program.ProjectModel, "__init__", recording)
    _project(tmp_path)
    result = lint_paths([tmp_path], Settings(), fix=True, unsafe_fixes=True, use_cache=False)
    assert result.fixed >= 2 and len(built) >= 2
    gc.collect()
    assert [ref for ref in built if ref() is not None] == []


def test_what_the_project_pass_builds_is_freed_by_reference_counting_alone(tmp_path, monkeypatch, collector_enabled):
    # A model that is cyclic garbage costs a traversal of all of it (650,000 objects on transformers)
    # by the first collection after the pass.
    from repro_lint.api import lint_paths
    from repro_lint.core.settings import Settings
    from repro_lint.program import model as program

    init = program.ProjectModel.__init__

    def after_a_collection(self, *args, **kwargs):
        gc.collect()  # the garbage of the files' analyses, made before the pass
        init(self, *args, **kwargs)

    monkeypatch.setattr(program.ProjectModel, "__init__", after_a_collection)
    _project(tmp_path)
    result = lint_paths([tmp_path], Settings(), use_cache=False, jobs=1)
    assert {"REP101", "REP301"} <= {finding.code for finding in result.findings}
    assert _cyclic_garbage("repro_lint") == []


def test_the_pass_runs_without_collections_and_the_analyses_read_are_frozen_while_files_are_analysed(tmp_path, monkeypatch, collector_enabled):
    from repro_lint.api import lint_paths
    from repro_lint.core.settings import Settings
    from repro_lint.engine.cache import CACHE_FOLDER
    from repro_lint.program import model as program

    _project(tmp_path)
    lint_paths([tmp_path], Settings(), use_cache=True, jobs=1)  # fills the cache
    for record in (tmp_path / CACHE_FOLDER).glob("run-*.pickle"):
        record.unlink()  # the files' analyses are read, the last run's record does not answer
    (tmp_path / "helpers.py").write_text("import random\n\ndef pick(items):\n    return random.choice(items) + 0\n")
    analysed = _batches_analysed(monkeypatch)
    collecting_in_pass: list[bool] = []
    init = program.ProjectModel.__init__

    def recording(self, *args, **kwargs):
        collecting_in_pass.append(gc.isenabled())
        init(self, *args, **kwargs)

    monkeypatch.setattr(program.ProjectModel, "__init__", recording)
    lint_paths([tmp_path], Settings(), use_cache=True, jobs=1)
    # train.py read from the cache, and frozen while helpers.py is analysed
    assert analysed == [(1, True)]
    assert collecting_in_pass == [False]
    assert gc.isenabled() and gc.get_freeze_count() == 0


def test_the_analyses_read_where_none_is_analysed_are_kept_from_the_young_generations(tmp_path, monkeypatch, collector_enabled):
    """Read with collections paused, the analyses of an unchanged project would all be young when
    they resume, and the first collection would traverse every one of them: they are frozen before,
    and join the oldest generation when thawed."""
    from repro_lint.api import lint_paths
    from repro_lint.core.settings import Settings
    from repro_lint.engine.cache import CACHE_FOLDER
    from repro_lint.facts.module_facts import ModuleFacts
    from repro_lint.program import model as program

    _project(tmp_path)
    lint_paths([tmp_path], Settings(), use_cache=True, jobs=1)  # fills the cache
    for record in (tmp_path / CACHE_FOLDER).glob("run-*.pickle"):
        record.unlink()  # the files' analyses are read, the last run's record does not answer
    analysed = _batches_analysed(monkeypatch)
    young_facts: list[int] = []
    init = program.ProjectModel.__init__

    def recording(self, *args, **kwargs):
        young = gc.get_objects(generation=0) + gc.get_objects(generation=1)
        young_facts.append(sum(isinstance(item, ModuleFacts) for item in young))
        init(self, *args, **kwargs)

    monkeypatch.setattr(program.ProjectModel, "__init__", recording)
    result = lint_paths([tmp_path], Settings(), use_cache=True, jobs=1)
    assert {"REP101", "REP301"} <= {finding.code for finding in result.findings}
    assert analysed == [(0, True)]  # both files read, none analysed
    assert young_facts == [0]
    assert gc.isenabled() and gc.get_freeze_count() == 0


def test_files_analysed_with_none_read_run_with_what_is_alive_frozen(tmp_path, monkeypatch, collector_enabled):
    """A cold run's analyses, and a fix round's, where every file to analyse is new: what is alive
    is frozen all the same, so that collecting what this process's analyses left is cheap; and
    nothing they made (LibCST's nodes, the rules' and the facts' objects) is left for the pass."""
    from repro_lint.api import lint_paths
    from repro_lint.core.settings import Settings
    from repro_lint.program import model as program

    _project(tmp_path)
    analysed = _batches_analysed(monkeypatch)
    garbage_before_pass: list[list[str]] = []
    init = program.ProjectModel.__init__

    def recording(self, *args, **kwargs):
        garbage_before_pass.append(_cyclic_garbage("libcst", "repro_lint"))
        init(self, *args, **kwargs)

    monkeypatch.setattr(program.ProjectModel, "__init__", recording)
    gc.collect()
    lint_paths([tmp_path], Settings(), fix=True, unsafe_fixes=True, jobs=1)
    assert analysed == [(2, True), (1, True), (1, True)]  # train.py fixed twice (REP301, then REP302's fix)
    assert garbage_before_pass == [[], [], []]


def _batches_analysed(monkeypatch) -> list[tuple[int, bool]]:
    """For each batch of files the engine analyses from now on: how many, and whether objects were
    frozen then."""
    from repro_lint.engine import engine

    analysed = []
    analyse_all = engine.analyse_all

    def analysing(*args, **kwargs):
        analysed.append((len(args[0]), gc.get_freeze_count() > 0))
        return analyse_all(*args, **kwargs)

    monkeypatch.setattr(engine, "analyse_all", analysing)
    return analysed


def _cyclic_garbage(*modules: str) -> list[str]:
    """The types of the objects a collection now finds unreachable, of those the `modules` (by
    prefix) define."""
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        gc.collect()
        return [type(item).__qualname__ for item in gc.garbage if type(item).__module__.startswith(modules)]
    finally:
        gc.set_debug(0)
        gc.garbage.clear()


def _resident_mb() -> float:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


@pytest.mark.skipif(not sys.platform.startswith("linux") or platform.libc_ver()[0] != "glibc", reason="glibc's malloc_trim")
def test_memory_freed_between_blocks_still_held_is_returned():
    """Blocks of 64 KB come from the C allocator's heap (below its threshold for mapping blocks of
    their own); freeing every other one leaves 64 MB free between the ones held, which glibc keeps
    until told to return it."""
    blocks = [bytearray(64 * 1024) for _ in range(2048)]
    del blocks[::2]
    held = _resident_mb()
    freed_memory_returned()
    assert _resident_mb() < held - 32
    assert len(blocks) == 1024
