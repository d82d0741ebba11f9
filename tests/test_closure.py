"""A run on some files reads only the modules their programs need (engine/closure.py), and finds
in them exactly what an audit of the whole project finds there."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

import repro_lint.engine.engine as engine_module
from repro_lint.core.findings import Finding
from repro_lint.core.settings import Settings
from repro_lint.engine.closure import OnItsOwn, _denoted, needed, references
from repro_lint.engine.discovery import discover
from repro_lint.engine.modules import Project, group_projects
from repro_lint.engine.pipeline import lint_paths
from repro_lint.facts.callers_choice import may_apply_callers_choice
from repro_lint.facts.events import TORCH
from repro_lint.facts.module_facts import ARGUMENTS, CHECKPOINTS, LOADERS, SEED_OPTIONS, ModuleFacts, events_of_kind, seeds_after_calls
from repro_lint.program.module_names import ModuleNames
from repro_lint.rules.registry import REGISTRY
from test_properties import CORPUS, _write

ROOT = Path(__file__).resolve().parent.parent

NAMES = ModuleNames(["pkg", "pkg.a", "pkg.b", "pkg.sub", "pkg.sub.deep", "pkg.c", "tools.convert", "other.utils", "more.utils", "train"])


def refs(code: str, module: str = "pkg.a", is_package: bool = False) -> set[str]:
    return references(textwrap.dedent(code), module, is_package, NAMES)


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        ("import pkg.b as b\n", {"pkg", "pkg.b"}),
        ("from . import b\n", {"pkg", "pkg.b"}),
        ("from .sub import (\n    deep as d,\n    x,\n)\n", {"pkg", "pkg.sub", "pkg.sub.deep"}),
        ("from .. import train\n", set()),  # above the project's top package: nothing
        ("from pkg import \\\n    c\n", {"pkg", "pkg.c"}),
        ("import os, pkg.c\n", {"pkg", "pkg.c"}),
        ("def f():\n    import pkg.b; x = 1\n", {"pkg", "pkg.b"}),
        # A dotted name after an import reaches a module no statement imports.
        ("import pkg\npkg.sub.deep.run()\n", {"pkg", "pkg.sub", "pkg.sub.deep"}),
        ("import pkg as p\np.sub.run()\n", {"pkg", "pkg.sub"}),
        ("from pkg import *\nsub.deep.f()\n", {"pkg", "pkg.sub", "pkg.sub.deep"}),
        # A name several modules end with may denote any of them where the others are missing.
        ("import utils\n", {"other.utils", "more.utils"}),
        # Names no import binds, and words of text, denote nothing.
        ("x = config.sub.value\nprint('import nothing')\n", set()),
        # Text that only looks like an import statement (a docstring's line), empty parentheses included.
        ('"""\nfrom pkg import ()\nimport ()\n"""\n', {"pkg"}),
    ],
)
def test_references_from_the_text(code: str, expected: set[str]) -> None:
    assert refs(code) == expected


def test_a_module_never_refers_to_itself() -> None:
    assert refs("import pkg.a\nfrom . import a\n") == {"pkg"}


LIB = """\
    import numpy as np
    from torch.utils.data import DataLoader


    def noise():
        return np.random.rand(3)


    def loader(dataset):
        return DataLoader(dataset, batch_size=4, shuffle=True)
    """
TRAIN = """\
    import torch
    from lib import rng


    def main():
        model = torch.nn.Linear(3, 1)
        for batch in rng.loader(list(range(8))):
            loss = model(torch.tensor(rng.noise())).sum()
            loss.backward()


    if __name__ == "__main__":
        main()
    """
FILES = {
    "lib/__init__.py": "",
    "lib/rng.py": LIB,
    "lib/unused.py": "import random\n\n\ndef pick(xs):\n    return random.choice(xs)\n",
    "train.py": TRAIN,
    "tools/convert.py": "import lib.rng\n\n\nif __name__ == '__main__':\n    print(lib.rng.noise())\n",
    "other.py": "import random\n\nif __name__ == '__main__':\n    print(random.random())\n",
}


def test_a_run_on_one_file_reads_its_programs_modules_only(project) -> None:
    root = project(FILES)
    settings = Settings()
    given = [root / "lib" / "rng.py"]
    (whole,) = group_projects(discover(given, settings), given, settings)
    kept = sorted(module.identity.relative_path for module in needed(whole).modules)
    # Its importers (the two entries), and what they import; not the unrelated entry or module.
    assert kept == ["lib/__init__.py", "lib/rng.py", "tools/convert.py", "train.py"]
    assert needed(whole).universe == frozenset({"lib", "lib.rng", "lib.unused", "train", "tools.convert", "other"})


def test_a_scan_that_fails_keeps_the_whole_project(project, monkeypatch) -> None:
    root = project(FILES)
    settings = Settings()
    given = [root / "lib" / "rng.py"]
    (whole,) = group_projects(discover(given, settings), given, settings)

    def broken(*args: object) -> set[str]:
        raise ValueError("a bug of the scan")

    monkeypatch.setattr("repro_lint.engine.closure.references", broken)
    assert needed(whole) is whole


def _needed_calls(monkeypatch: pytest.MonkeyPatch) -> list[Project]:
    """The projects the engine's calls of `needed` give, in order, from now on."""
    read: list[Project] = []

    def recorded(*args: object) -> Project:
        read.append(needed(*args))  # type: ignore[arg-type]
        return read[-1]

    monkeypatch.setattr(engine_module, "needed", recorded)
    return read


def test_a_module_on_its_own_needs_only_what_it_imports(project, monkeypatch) -> None:
    # lib/paths.py holds no place where a program rule reports what the programs running it decide,
    # and no finding of its own asks the program model: its importer, an entry, is not read.
    files = {
        **FILES,
        # REP105, judged in its own body whatever program runs it.
        "lib/paths.py": "import os\n\nimport torch\n\n\ndef here():\n    torch.randn(2)\n    torch.manual_seed(0)\n    return os.getcwd()\n",
        "tools/where.py": "import lib.paths\n\nif __name__ == '__main__':\n    print(lib.paths.here())\n",
    }
    root = project(files)
    monkeypatch.chdir(root)
    settings = Settings()
    audit = lint_paths([Path(".")], settings).findings
    assert {finding.code for finding in audit if finding.path == "lib/paths.py"} == {"REP105"}
    given = [Path("lib/paths.py")]
    (whole,) = group_projects(discover(given, settings), given, settings)
    assert [module.identity.relative_path for module in needed(whole, None, lambda reported: {"lib.paths": OnItsOwn(imports=True)}).modules] == ["lib/paths.py"]
    # The engine tells it so from its analysis; an entry on its own reads its own program.
    for path, kept in (("lib/paths.py", ["lib/paths.py"]), ("tools/where.py", ["lib/__init__.py", "lib/paths.py", "tools/where.py"])):
        read = _needed_calls(monkeypatch)
        alone = lint_paths([Path(path)], settings).findings
        assert alone == [finding for finding in audit if finding.path == path]
        assert sorted(module.identity.relative_path for module in read[0].modules) == kept


_TRAINS_ON_CUDA = """\
import torch

{imports}


def main():
    {before}
    model = torch.nn.Linear(2, 2).cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, 10)
    for batch in {batches}:
        loss = model(batch.cuda()).sum()
        loss.backward()
        optimizer.step()
        scheduler.step()
        {after}


if __name__ == "__main__":
    main()
"""


def _trains(imports: str, before: str = "torch.manual_seed(0)", batches: str = "[torch.randn(4, 2)]", after: str = "pass") -> str:
    return _TRAINS_ON_CUDA.format(imports=imports, before=before, batches=batches, after=after)


def test_a_failure_judging_a_module_on_its_own_reads_its_programs(project, monkeypatch) -> None:
    files = {**FILES, "lib/paths.py": "import os\n\n\ndef here():\n    return os.getcwd()\n", "tools/where.py": "import lib.paths\n\nif __name__ == '__main__':\n    print(lib.paths.here())\n"}
    root = project(files)
    monkeypatch.chdir(root)

    def broken(facts: ModuleFacts) -> frozenset[str]:
        raise ValueError("a bug of the sites")

    monkeypatch.setattr(ModuleFacts, "sites", broken)
    read = _needed_calls(monkeypatch)
    result = lint_paths([Path("lib/paths.py")], Settings())
    assert result.findings == [] and result.problems == []
    assert "tools/where.py" in {module.identity.relative_path for module in read[0].modules}


_LOOP = """\
import torch

model = torch.nn.Linear(2, 2)
for epoch in range(3):
    model(torch.ones(2)).sum().backward()
"""


# A torch seed after a call of a function of the module itself (REP105 counts what the calls before
# a seed run, which may be anything the module imports).
_SEEDED_LOOP = "from lib.steps import train\n\n\ndef warm():\n    return train\n\n\n" + _LOOP.replace("model = ", "warm()\ntorch.manual_seed(0)\nmodel = ")


def test_a_module_on_its_own_that_trains_when_loaded_is_read_with_its_importers(project, monkeypatch) -> None:
    # A module that trains when loaded is a program's entry where no module imports it. lib/named.py,
    # which trains through the function it imports, is only named by main.py, which imports the
    # package: no module imports it.
    main = (
        "import lib\nimport lib.leaf\nimport lib.loop\nimport lib.seeded\n\n"
        "if __name__ == '__main__':\n    print(lib.leaf.model, lib.loop.model, lib.seeded.model, lib.named.model)\n"
    )
    steps = "import torch\n\n\ndef train():\n    model = torch.nn.Linear(2, 2)\n    model(torch.ones(2)).sum().backward()\n    return model\n"
    files = {
        "lib/__init__.py": "",
        "lib/leaf.py": _LOOP,
        "lib/loop.py": "from lib.steps import train\n\n" + _LOOP,
        "lib/seeded.py": _SEEDED_LOOP,
        "lib/named.py": "from lib.steps import train\n\nmodel = train()\n",
        "lib/steps.py": steps,
        "main.py": main,
        "run.py": _LOOP,
    }
    root = project(files)
    monkeypatch.chdir(root)
    settings = Settings()
    audit = lint_paths([Path(".")], settings).findings
    assert {finding.path for finding in audit if finding.code == "REP101"} == {"run.py", "lib/named.py"}
    read = _needed_calls(monkeypatch)
    every = ["lib/__init__.py", "lib/leaf.py", "lib/loop.py", "lib/named.py", "lib/seeded.py", "lib/steps.py", "main.py"]
    for path, kept in (
        # Nothing imports it: read with what it imports.
        ("run.py", [["run.py"]]),
        # Read without what it imports, with the module importing it, which tells it is no entry.
        ("lib/loop.py", [["lib/loop.py", "main.py"]]),
        # It imports nothing of the project, fewer than its importers: read on its own, which
        # proves it an entry there, then with its programs.
        ("lib/leaf.py", [["lib/leaf.py"], every]),
        # Its seed after a call needs what it imports (REP105): read with that first, which proves
        # it an entry there, then with its importer.
        ("lib/seeded.py", [["lib/__init__.py", "lib/seeded.py", "lib/steps.py"], every]),
        # Read with the module naming it, which does not import it: then with its programs.
        ("lib/named.py", [["lib/named.py", "main.py"], every]),
    ):
        read.clear()
        assert lint_paths([Path(path)], settings).findings == [finding for finding in audit if finding.path == path]
        assert [sorted(module.identity.relative_path for module in project.modules) for project in read] == kept


# A library module holding one kind of place where program rules report what the programs running it
# decide (ModuleFacts.sites), and no finding of its own that asks the program model; the rule whose
# finding there an importer's program decides (puts there, or keeps away). The entry imports it
# through lib/api.py: a module read without what it imports is read with the modules importing it.
SITES = {
    events_of_kind("nondeterministic"): (
        "REP302",
        {"lib/speed.py": "import torch\n\n\ndef go_fast():\n    torch.use_deterministic_algorithms(False)\n",
         "lib/api.py": "from lib.speed import go_fast\n",
         "train.py": _trains("from lib.api import go_fast", before="torch.manual_seed(0)\n    go_fast()")},
    ),
    SEED_OPTIONS: (
        "REP108",
        {
            "lib/options.py": "import argparse\n\n\ndef parse():\n    parser = argparse.ArgumentParser()\n"
            '    parser.add_argument("--seed", type=int, default=None)\n    return parser.parse_args()\n',
            "lib/api.py": "from lib.options import parse\n",
            "train.py": _trains("from lib.api import parse", before="args = parse()\n    if args.seed is not None:\n        torch.manual_seed(args.seed)"),
        },
    ),
    LOADERS: (
        "REP201",
        {
            "lib/data.py": "import numpy as np\nimport torch\nfrom torch.utils.data import DataLoader, Dataset\n\n\nclass Noisy(Dataset):\n"
            "    def __init__(self):\n        self.rng = np.random.default_rng(0)\n\n    def __len__(self):\n        return 8\n\n"
            "    def __getitem__(self, index):\n        return torch.tensor(self.rng.random(2)).float()\n\n\n"
            "def loader():\n    return DataLoader(Noisy(), batch_size=2, num_workers=2)\n",
            # Lightning seeds each worker's generators: the program keeps the loader from the finding.
            "lib/api.py": "from lib.data import loader\n",
            "train.py": _trains("import lightning\n\nfrom lib.api import loader", before="lightning.seed_everything(0, workers=True)", batches="loader()"),
        },
    ),
    CHECKPOINTS: (
        "REP401",
        {
            "lib/saving.py": "import torch\n\n\ndef save(model, optimizer, path):\n"
            '    torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict()}, path)\n',
            "lib/api.py": "from lib.saving import save\n",
            "train.py": _trains("from lib.api import save", after='save(model, optimizer, "checkpoint.pt")'),
        },
    ),
}


def _audit(files: dict[str, str], path: str, project, monkeypatch: pytest.MonkeyPatch) -> list[Finding]:
    """The findings an audit of the project of `files` (and a package `lib`) gives `path`."""
    monkeypatch.chdir(project({"lib/__init__.py": "", **files}))
    return [finding for finding in lint_paths([Path(".")], Settings()).findings if finding.path == path]


def _undeclare(kind: str, declaration: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Take `kind` out of every rule's `declaration` (`sites` or `imported_sites`)."""
    for rule in REGISTRY.values():
        declared = getattr(rule, declaration)
        if declared is not None and kind in declared:
            monkeypatch.setattr(rule, declaration, declared - {kind})


@pytest.mark.parametrize("kind", sorted(SITES))
def test_a_module_holding_a_rules_sites_is_read_with_its_programs(kind, project, monkeypatch) -> None:
    code, files = SITES[kind]
    library = next(name for name in files if name.startswith("lib/") and name != "lib/api.py")
    audit = _audit(files, library, project, monkeypatch)
    assert lint_paths([Path(library)], Settings()).findings == audit
    # Where no rule declared that kind of place, the module would count as on its own, and the
    # finding would be decided without the program.
    _undeclare(kind, "sites", monkeypatch)
    alone = lint_paths([Path(library)], Settings()).findings
    assert (code in {finding.code for finding in audit}) != (code in {finding.code for finding in alone})


# A library module holding one kind of place where a project check reports what the modules it
# imports decide (RuleMeta.imported_sites), and no other; the rule whose finding there lib/work.py
# decides.
IMPORTED_SITES = {
    seeds_after_calls(TORCH): (
        "REP105",
        {
            "lib/seeding.py": "import torch\n\nfrom lib.work import warm_up\n\n\ndef setup():\n    warm_up()\n    torch.manual_seed(0)\n",
            "lib/work.py": "import torch\n\n\ndef warm_up():\n    return torch.randn(2)\n",
            "train.py": _trains("from lib.seeding import setup", before="setup()"),
        },
    ),
    ARGUMENTS: (
        "REP202",
        {
            "lib/seeding.py": "from lib.work import make\n\n\ndef loader(dataset):\n    return make(dataset, shuffle=True)\n",
            "lib/work.py": "from torch.utils.data import DataLoader\n\n\ndef make(dataset, shuffle=False):\n"
            "    return DataLoader(dataset, batch_size=2, shuffle=shuffle)\n",
            "train.py": _trains("from lib.seeding import loader", batches="loader([torch.randn(4, 2)])"),
        },
    ),
}


@pytest.mark.parametrize("kind", sorted(IMPORTED_SITES))
def test_a_module_holding_a_rules_imported_sites_is_read_with_what_it_imports(kind, project, monkeypatch) -> None:
    code, files = IMPORTED_SITES[kind]
    audit = _audit(files, "lib/seeding.py", project, monkeypatch)
    assert code in {finding.code for finding in audit}
    read = _needed_calls(monkeypatch)
    assert lint_paths([Path("lib/seeding.py")], Settings()).findings == audit
    assert "lib/work.py" in {module.identity.relative_path for module in read[0].modules}
    # Where no rule declared that kind of place, the module would be read without lib/work.py.
    _undeclare(kind, "imported_sites", monkeypatch)
    assert code not in {finding.code for finding in lint_paths([Path("lib/seeding.py")], Settings()).findings}


@pytest.mark.parametrize(
    ("seeding", "work"),
    [
        # It passes arguments to a function of lib/work.py, which builds no DataLoader.
        ("from lib.work import make\n\n\ndef loader(dataset):\n    return make(dataset, shuffle=True)\n",
         "def make(dataset, shuffle=False):\n    return sorted(dataset) if shuffle else dataset\n"),
        # It seeds `random` after a call of a function drawing from torch: REP105 judges torch's seeds.
        ("import random\n\nfrom lib.work import warm_up\n\n\ndef loader(dataset):\n    warm_up()\n    random.seed(0)\n    return dataset\n",
         "import torch\n\n\ndef warm_up():\n    return torch.randn(2)\n"),
        # It seeds torch before any call of its body (and the module's body, after its call, does not).
        ("import torch\n\nfrom lib.work import warm_up\n\nwarm_up()\n\n\ndef loader(dataset):\n    torch.manual_seed(0)\n    warm_up()\n    return dataset\n",
         "import torch\n\n\ndef warm_up():\n    return torch.randn(2)\n"),
        # It seeds torch after calls of libraries' functions alone, and of an unknown object's method
        # (which REP105 does not follow), though a function of lib/work.py of the same name draws.
        ("import logging\nimport random\n\nimport numpy as np\nimport torch\n\nfrom lib.work import warm_up\n\nlog = logging.getLogger()\n\n\n"
         "def loader(dataset):\n    random.seed(0)\n    np.random.seed(0)\n    print(len(dataset))\n    log.warm_up()\n    torch.manual_seed(0)\n"
         "    warm_up()\n    return dataset\n",
         "import torch\n\n\ndef warm_up():\n    return torch.randn(2)\n"),
    ],
)
def test_a_module_on_its_own_that_what_it_imports_cannot_judge_is_read_by_itself(seeding: str, work: str, project, monkeypatch) -> None:
    # Read with its importer only, not with what it imports.
    files = {"lib/seeding.py": seeding, "lib/work.py": work, "train.py": _trains("from lib.seeding import loader", batches="loader([torch.randn(4, 2)])")}
    audit = _audit(files, "lib/seeding.py", project, monkeypatch)
    read = _needed_calls(monkeypatch)
    assert lint_paths([Path("lib/seeding.py")], Settings()).findings == audit
    assert [sorted(module.identity.relative_path for module in project.modules) for project in read] == [["lib/seeding.py", "train.py"]]


def _read_alone(files: dict[str, str], project, monkeypatch: pytest.MonkeyPatch) -> list[Project]:
    """The projects a run on lib/seeding.py alone reads, after checking that the audit of `files`
    gives it REP105 and the run the audit's findings."""
    audit = _audit(files, "lib/seeding.py", project, monkeypatch)
    assert "REP105" in {finding.code for finding in audit}
    read = _needed_calls(monkeypatch)
    assert lint_paths([Path("lib/seeding.py")], Settings()).findings == audit
    return read


def test_a_call_of_a_project_module_named_as_a_library_is_read_with_what_it_imports(project, monkeypatch) -> None:
    # The project's own random.py shadows the standard library's: its seed() draws from torch.
    files = {
        "lib/seeding.py": "import random\n\nimport torch\n\n\ndef setup():\n    random.seed(0)\n    torch.manual_seed(0)\n",
        "random.py": "import torch\n\n\ndef seed(value):\n    return torch.randn(value)\n",
        "train.py": _trains("from lib.seeding import setup", before="setup()"),
    }
    read = _read_alone(files, project, monkeypatch)
    assert "random.py" in {module.identity.relative_path for module in read[0].modules}


_SETUP = "\n\n\ndef setup():\n    warm_up()\n    torch.manual_seed(0)\n"


@pytest.mark.parametrize(
    ("seeding", "package", "read_with"),
    [
        # The function called before the seed, imported from its module: that module alone.
        ("import lib.other\nimport torch\n\nfrom lib.work import warm_up" + _SETUP, "", ["lib/seeding.py", "lib/work.py", "train.py"]),
        # Re-exported by the package: the package, and what it imports.
        ("import lib.other\nimport torch\n\nfrom lib import warm_up" + _SETUP, "from lib.work import warm_up\n", ["lib/__init__.py", "lib/seeding.py", "lib/work.py", "train.py"]),
    ],
)
def test_a_module_seeding_torch_after_a_call_is_read_with_what_the_call_may_run(seeding, package, read_with, project, monkeypatch) -> None:
    # Not with lib/other.py, which it imports too.
    files = {
        "lib/__init__.py": package,
        "lib/seeding.py": seeding,
        "lib/work.py": "import torch\n\n\ndef warm_up():\n    return torch.randn(2)\n",
        "lib/other.py": "VALUE = 2\n",
        "train.py": _trains("from lib.seeding import setup", before="setup()"),
    }
    read = _read_alone(files, project, monkeypatch)
    assert [sorted(module.identity.relative_path for module in project.modules) for project in read] == [read_with]
    assert read[0].by_itself == {"lib.seeding"}
    # Read without the modules the call's name denotes, the finding would be lost.
    monkeypatch.setattr("repro_lint.engine.closure._denoted", lambda targets, importer, names: set())
    assert "REP105" not in {finding.code for finding in lint_paths([Path("lib/seeding.py")], Settings()).findings}


def test_a_module_whose_calls_may_run_all_it_imports_is_read_as_one_needing_it(project, monkeypatch) -> None:
    # The package imports lib/seeding.py, and re-exports the function it calls: that is all it
    # imports, and its one importer. Read with what it imports, the run keeps a record.
    files = {
        "lib/__init__.py": "from lib.work import warm_up\nfrom lib.seeding import setup\n",
        "lib/seeding.py": "import torch\n\nfrom lib import warm_up" + _SETUP,
        "lib/work.py": "import torch\n\n\ndef warm_up():\n    return torch.randn(2)\n",
        "train.py": _trains("from lib import setup", before="setup()"),
    }
    read = _read_alone(files, project, monkeypatch)
    assert [sorted(module.identity.relative_path for module in project.modules) for project in read] == [["lib/__init__.py", "lib/seeding.py", "lib/work.py"]]
    assert read[0].by_itself == frozenset()


def test_the_modules_a_called_name_may_denote_stop_at_the_longest_prefix_naming_one() -> None:
    names = ModuleNames(["pkg", "pkg.utils", "pkg.utils.io", "other.utils", "vendor.utils"])
    # `pkg.utils` names a module: `pkg`, which the pass then never looks into, is left out.
    assert _denoted({"pkg.utils.load"}, "app.main", names) == {"pkg.utils"}
    # `utils` may be either of two modules, and so names none: what a shorter prefix names would
    # count, and the whole name's candidates too (none here).
    assert _denoted({"utils.load"}, "app.main", names) == {"other.utils", "pkg.utils", "vendor.utils"}
    assert _denoted({"pkg.utils.io"}, "app.main", names) == {"pkg.utils.io", "pkg.utils"}


def test_a_failure_reading_what_a_module_imports_reads_it(project, monkeypatch) -> None:
    audit = _audit(IMPORTED_SITES[ARGUMENTS][1], "lib/seeding.py", project, monkeypatch)

    def broken(text: str, names: frozenset[str]) -> bool:
        raise ValueError("a bug of the text check")

    monkeypatch.setattr("repro_lint.facts.callers_choice.may_apply_callers_choice", broken)
    read = _needed_calls(monkeypatch)
    result = lint_paths([Path("lib/seeding.py")], Settings())
    assert result.findings == audit and result.problems == []
    assert "lib/work.py" in {module.identity.relative_path for module in read[0].modules}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("from torch.utils.data import DataLoader\n\n\ndef make(shuffle):\n    return DataLoader([], shuffle=shuffle)\n", True),
        ("import torch\n\n\nasync def make(shuffle):\n    return torch.utils.data.DataLoader([], shuffle=shuffle)\n", True),
        ("from torch.utils.data import DataLoader\n\n\ndef \\\n  make(shuffle):\n    return DataLoader([], shuffle=shuffle)\n", True),
        # Another function builds the loader; none builds one.
        ("from torch.utils.data import DataLoader\n\n\ndef other(shuffle):\n    return DataLoader([], shuffle=shuffle)\n", False),
        ("def make(shuffle):\n    return sorted([]) if shuffle else []\n", False),
    ],
)
def test_a_module_may_apply_a_callers_choice_where_its_text_defines_the_function_and_names_the_loader(text: str, expected: bool) -> None:
    assert may_apply_callers_choice(text, frozenset({"make"})) is expected


def test_a_whole_project_is_kept_whole(project) -> None:
    root = project(FILES)
    settings = Settings()
    (whole,) = group_projects(discover([root], settings), [root], settings)
    assert needed(whole) is whole
    # Most of it reported (an audit of a folder beside a nested project): its record serves the next run.
    given = [root / name for name in FILES if name != "other.py"]
    (most,) = group_projects(discover(given, settings), given, settings)
    assert needed(most) is most


def _audit_and_alone(root: Path, settings: Settings, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(root)
    audit = lint_paths([Path(".")], settings).findings
    files = sorted({finding.path for finding in audit})
    assert files, "the project has findings to compare"
    for path in files:
        alone = lint_paths([Path(path)], settings).findings
        assert alone == [finding for finding in audit if finding.path == path], path


def test_a_file_alone_has_the_findings_the_audit_gives_it(project, monkeypatch) -> None:
    root = project(FILES)
    audit = lint_paths([root], Settings()).findings
    # A library module's finding, and program findings in two entries.
    assert {"lib/rng.py", "other.py", "train.py"} <= {Path(finding.path).relative_to(root).as_posix() for finding in audit}
    _audit_and_alone(root, Settings(), monkeypatch)


# Every project of several modules that the tests lint (the property tests' corpus: the examples
# and the tests' fixtures).
MULTI_MODULE = [project for project in CORPUS if sum(name.endswith((".py", ".ipynb")) for name in project) > 1]


@pytest.mark.parametrize("files", MULTI_MODULE, ids=range(len(MULTI_MODULE)))
def test_each_file_of_the_tests_projects_alone_has_the_audits_findings(files, tmp_path, monkeypatch) -> None:
    _write(files, tmp_path)
    monkeypatch.chdir(tmp_path)
    audit = lint_paths([Path(".")], Settings()).findings
    for name in sorted(name for name in files if name.endswith((".py", ".ipynb"))):
        alone = lint_paths([Path(name)], Settings()).findings
        assert alone == [finding for finding in audit if finding.path == name], name


def test_each_shipped_example_alone_has_the_audits_findings(tmp_path, monkeypatch) -> None:
    import shutil

    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    (tmp_path / "pyproject.toml").write_text("")
    _audit_and_alone(tmp_path, Settings(), monkeypatch)


def test_after_an_audit_a_run_on_one_file_scans_only_what_changed(project, monkeypatch) -> None:
    import repro_lint.engine.closure as closure

    root = project(FILES)
    monkeypatch.chdir(root)
    settings = Settings()
    lint_paths([Path(".")], settings, use_cache=True)
    scanned: list[str] = []
    scan = closure._scan
    monkeypatch.setattr(closure, "_scan", lambda text, module, names: scanned.append(module.display) or scan(text, module, names))

    def commit(number: int) -> list[str]:
        # A function added that calls another, which seeds, and called: the audit's record cannot
        # answer, the closure is needed.
        with open("lib/rng.py", "a") as stream:
            stream.write(f"\n\ndef added_{number}():\n    step_{number}()\n\n\ndef step_{number}():\n    import random\n\n    random.seed({number})\n\n\nadded_{number}()\n")
        scanned.clear()
        found = lint_paths([Path("lib/rng.py")], settings, use_cache=True).findings
        read = sorted(scanned)
        assert found == lint_paths([Path("lib/rng.py")], settings).findings
        return read

    python = sorted(name for name in FILES if name.endswith(".py"))
    assert commit(1) == python  # the first run after the audit scans every file, and keeps what it found
    assert commit(2) == ["lib/rng.py"]
    # A module added changes what names denote: every file is scanned again.
    Path("lib/extra.py").write_text("")
    assert commit(3) == sorted([*python, "lib/extra.py"])
    assert commit(4) == ["lib/rng.py"]
