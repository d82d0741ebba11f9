"""What the last pass resolved, kept for the next (program/kept_resolutions.py): what it keeps is what a
pass over the changed facts finds, and a change that another module's calls may resolve to is resolved
again."""

from __future__ import annotations

import random
import re
import textwrap

import pytest

from repro_lint.analysis.python import analyze
from repro_lint.analysis.result import ModuleIdentity
from repro_lint.api import lint_paths
from repro_lint.core.settings import Settings
from repro_lint.engine.cache import CACHE_FOLDER
from repro_lint.facts.module_facts import ModuleFacts
from repro_lint.program.call_graph import CallGraph, Resolutions
from repro_lint.program.kept_resolutions import resolutions_kept
from repro_lint.program.model import ProjectModel
from repro_lint.program.module_names import ModuleNames

PACKAGE = {
    "pkg/__init__.py": "from .core import helper as alias\n",
    "pkg/core.py": "class Net:\n    def run(self):\n        return 1\n\n\ndef helper():\n    return Net()\n",
    "train.py": "import pkg\nfrom pkg import core\n\n\ndef main():\n    pkg.alias()\n    core.Net().run()\n    return pkg.core.later()\n",
}


def _facts(files: dict[str, str]) -> dict[str, ModuleFacts]:
    found = {}
    for path, code in files.items():
        facts = analyze(textwrap.dedent(code), path, ModuleIdentity.from_relative_path(path), [], Settings()).facts
        assert facts is not None
        found[path] = facts
    return found


def model_of(files: dict[str, str]) -> ProjectModel:
    return ProjectModel(_facts(files).values())


def _linked(model: ProjectModel) -> dict[str, Resolutions]:
    """Every function's links, and what every call resolves to, as a pass keeps them."""
    for function in model.functions:
        model.calls.links(function)
    for module, facts in model.modules.items():
        for call in facts.every_call():
            model.calls.callees_run_now(call, module)
    return model.calls.resolutions()


def _kept(before: dict[str, str], after: dict[str, str]) -> tuple[dict, dict, dict]:
    """What is kept from a pass over `before` for `after` (the same files), what a pass over `after`
    with it resolves, and what a pass over `after` resolves alone."""
    old, new = _facts(before), _facts(after)
    recorded = _linked(ProjectModel(old.values()))
    changes = [(old[path], new[path]) for path in new if old[path] != new[path]]
    unchanged = [text for path, text in after.items() if old[path] == new[path]]

    def mentioned(words: frozenset[str]) -> bool:
        return any(re.search(rf"\b(?:{'|'.join(words)})\b", text) for text in unchanged)

    kept = resolutions_kept(recorded, changes, ModuleNames(facts.module for facts in new.values()), mentioned)
    return kept, _linked(ProjectModel(new.values(), kept=kept)), _linked(ProjectModel(new.values()))


def _edited(path: str, old: str, new: str, files: dict[str, str] = PACKAGE) -> dict[str, str]:
    assert old in files[path]
    return {**files, path: files[path].replace(old, new, 1)}


# Edits no call elsewhere may resolve to: what they change is named by no other module.
UNSEEN = [
    pytest.param(_edited("pkg/core.py", "def helper", "def fresh_edit():\n    return 2\n\n\ndef helper"), id="function added"),
    pytest.param(_edited("pkg/core.py", "return Net()", "return Net().run()"), id="function body changed"),
    pytest.param(_edited("pkg/core.py", "class Net:", "import os\n\n\nclass Net:"), id="import added"),
    pytest.param(_edited("train.py", "return pkg", "pkg.alias()\n    return pkg"), id="caller changed"),
]


@pytest.mark.parametrize("after", UNSEEN)
def test_what_calls_outside_the_changed_modules_resolve_to_is_kept_and_is_what_a_pass_finds(after):
    kept, with_kept, fresh = _kept(PACKAGE, after)
    changed = {facts.module for path, facts in _facts(after).items() if after[path] != PACKAGE[path]}
    assert kept.keys() == _linked(model_of(PACKAGE)).keys() - changed
    assert with_kept == fresh


# Edits that calls made elsewhere may resolve to: each must be resolved again.
SEEN = [
    pytest.param(PACKAGE, _edited("pkg/core.py", "def helper", "def later():\n    return 2\n\n\ndef helper"), id="function a caller names added"),
    pytest.param(PACKAGE, _edited("pkg/core.py", "def helper():\n    return Net()\n", "def other():\n    return Net()\n"), id="function a re-export names renamed"),
    pytest.param(
        PACKAGE, _edited("pkg/core.py", "    def run", "    def __init__(self):\n        pass\n\n    def run"), id="method a construction runs added"
    ),
    pytest.param(PACKAGE, _edited("pkg/__init__.py", "\n", "\nfrom .core import *\n"), id="star import added"),
    # A re-export the changed module keeps, of a function it adds (`train` names it by the alias alone).
    pytest.param(
        {**PACKAGE, "pkg/__init__.py": "from .core import helper as alias\nfrom pkg.core import start as begin\n", "train.py": "import pkg\n\n\ndef main():\n    return pkg.begin()\n"},
        {
            **PACKAGE,
            "pkg/__init__.py": "from .core import helper as alias\nfrom pkg.core import start as begin\n\n\ndef added():\n    return 1\n",
            "pkg/core.py": PACKAGE["pkg/core.py"] + "\n\ndef start():\n    return 3\n",
            "train.py": "import pkg\n\n\ndef main():\n    return pkg.begin()\n",
        },
        id="function a kept re-export names added",
    ),
    pytest.param(PACKAGE, _edited("pkg/core.py", "def helper", "def train():\n    return 2\n\n\ndef helper"), id="definition named as a module"),
]


@pytest.mark.parametrize(("before", "after"), SEEN)
def test_a_change_calls_elsewhere_may_resolve_to_keeps_nothing(before, after):
    kept, with_kept, fresh = _kept(before, after)
    assert kept == {}
    assert with_kept == fresh


def test_a_resolution_elsewhere_finds_what_a_change_defines():
    """What the cases above guard: the pass over `after` resolves differently from the one before."""
    after = _edited("pkg/core.py", "def helper", "def later():\n    return 2\n\n\ndef helper")
    assert _linked(model_of(after))["train"] != _linked(model_of(PACKAGE))["train"]


def test_links_kept_for_a_function_now_of_another_module_are_not_taken():
    model = model_of(PACKAGE)
    recorded = _linked(model)
    link = recorded["train"].links["train.main"]
    moved = {"pkg.core": Resolutions({"train.main": ((), (), ())}, ({}, {}), ({}, {}))}  # train.main is train's
    graph = CallGraph(model.modules, model.functions, model.classes, model.names, moved)
    assert "train.main" not in graph.resolutions()["pkg.core"].links
    assert graph.links("train.main") == link[:2] != ((), ())


def test_an_audit_after_an_edit_resolves_only_the_changed_modules_calls(project, monkeypatch):
    root = project({**PACKAGE, "run.py": "from train import main\n\nif __name__ == '__main__':\n    main()\n"})
    lint_paths([root], Settings(), use_cache=True)
    assert list((root / CACHE_FOLDER).glob("resolved-*.pickle"))
    # An event in a function the program runs: the pass runs again.
    (root / "pkg/core.py").write_text(_edited("pkg/core.py", "    return Net()", "    import random\n\n    random.seed(0)\n    return Net()")["pkg/core.py"])
    linked: list[str] = []
    link = CallGraph._link
    monkeypatch.setattr(CallGraph, "_link", lambda graph, function: linked.append(function) or link(graph, function))
    found = lint_paths([root], Settings(), use_cache=True).findings
    assert linked and all(function.startswith("pkg.core.") for function in linked)
    assert found == lint_paths([root], Settings()).findings


# Statements an edit appends to a module: definitions that calls elsewhere name or not (directly, by
# an alias, as a method a construction runs), re-exports, star imports, and calls of all of them.
_APPENDED = (
    "def later():\n    return 1\n", "def unnamed_{number}():\n    return 1\n", "from .core import later as begin\n",
    "from pkg.core import *\n", "class Net:\n    def __init__(self):\n        pass\n", "def helper():\n    return later()\n",
    "def call_{number}():\n    return pkg.begin()\n", "import pkg\n", "from pkg import core\n", "begin = None\n",
    "def go_{number}():\n    return core.Net()\n", "# note {number}\n",
)  # fmt: skip


def test_random_edits_keep_only_what_a_pass_resolves():
    chosen = random.Random(0)
    files = dict(PACKAGE)
    keeping = 0
    for number in range(40):
        path = chosen.choice(sorted(files))
        after = {**files, path: files[path] + "\n\n" + chosen.choice(_APPENDED).format(number=number)}
        kept, with_kept, fresh = _kept(files, after)
        assert with_kept == fresh, after
        keeping += bool(kept)
        files = after
    assert 0 < keeping < 40


def test_a_run_on_one_file_after_an_audit_keeps_what_the_audit_resolved(project, monkeypatch):
    root = project({**PACKAGE, "run.py": "from train import main\n\nif __name__ == '__main__':\n    main()\n"})
    lint_paths([root], Settings(), use_cache=True)
    (record,) = (root / CACHE_FOLDER).glob("resolved-*.pickle")
    kept = record.read_bytes()
    (root / "pkg/core.py").write_text(_edited("pkg/core.py", "    return Net()", "    import random\n\n    random.seed(0)\n    return Net()")["pkg/core.py"])
    loaded = []
    monkeypatch.setattr("repro_lint.engine.cache.ResolutionsRecord.load", lambda record: loaded.append(record))
    assert lint_paths([root / "pkg/core.py"], Settings(), use_cache=True).findings == lint_paths([root / "pkg/core.py"], Settings()).findings
    assert loaded == [] and record.read_bytes() == kept
