"""The garbage collector's settings around a run's long-lived objects are restored afterwards."""

from __future__ import annotations

import gc

import pytest

from repro_lint.engine.heap import collector_paused, kept_out_of_collections


@pytest.fixture
def collector_enabled():
    yield
    gc.enable()


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
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "train.py").write_text(
        "import torch\n"
        "torch.backends.cudnn.benchmark = True\n"
        "model = torch.nn.Linear(2, 2)\n"
        "optimizer = torch.optim.SGD(model.parameters(), lr=0.1)\n"
        "model(torch.ones(2)).sum().backward()\n"
        "torch.save({'model': model.state_dict()}, 'last.pt')\n"
    )
    result = lint_paths([tmp_path], Settings(), fix=True, unsafe_fixes=True, use_cache=False)
    assert result.fixed >= 2 and len(built) >= 2
    gc.collect()
    assert [ref for ref in built if ref() is not None] == []
