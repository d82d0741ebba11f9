"""REP205 across modules: a loader handed to another module's training function, which may call
`set_epoch` itself."""

from __future__ import annotations

from pathlib import Path

import pytest

from repro_lint.api import lint_paths
from repro_lint.core.settings import Settings

MAIN = """\
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler
{imports}


def main(args):
    sampler = DistributedSampler(train_set)
    loader = DataLoader(train_set, sampler=sampler)
    for epoch in range(args.epochs):
        {call}


if __name__ == "__main__":
    main(None)
"""
ITERATES = "def train_one_epoch(data_loader, epoch=0):\n    for batch in data_loader:\n        step(batch)\n"
SETS_EPOCH = "def train_one_epoch(data_loader, epoch=0):\n    data_loader.sampler.set_epoch(epoch)\n    for batch in data_loader:\n        step(batch)\n"


def rep205(root: Path) -> list[tuple[str, int]]:
    return [
        (Path(finding.path).relative_to(root).as_posix(), finding.start.line)
        for finding in lint_paths([root], Settings(select=("REP205",))).findings
    ]


@pytest.mark.parametrize(
    "files",
    [
        # the helper in another module iterates the loader and never sets the epoch
        {"engine.py": ITERATES, "main.py": MAIN.format(imports="from engine import train_one_epoch", call="train_one_epoch(loader, epoch)")},
        # through a module attribute
        {"engine.py": ITERATES, "main.py": MAIN.format(imports="import engine", call="engine.train_one_epoch(loader, epoch)")},
        # a set_epoch in a function the program never runs does not count
        {
            "engine.py": ITERATES + "\n\ndef unused(data_loader, epoch):\n    data_loader.sampler.set_epoch(epoch)\n",
            "main.py": MAIN.format(imports="from engine import train_one_epoch", call="train_one_epoch(loader, epoch)"),
        },
    ],
    ids=["from-import", "module-attribute", "set-epoch-never-runs"],
)
def test_rep205_fires_when_no_code_on_the_path_sets_the_epoch(project, files):
    root = project(files)
    assert rep205(root) == [("main.py", 7)]
    (finding,) = lint_paths([root], Settings(select=("REP205",))).findings
    assert "DistributedSampler without `set_epoch` (nor in `" in finding.message
    assert "train_one_epoch`, given the loader)" in finding.message


@pytest.mark.parametrize(
    "files",
    [
        # the helper sets the epoch on its loader's sampler
        {"engine.py": SETS_EPOCH, "main.py": MAIN.format(imports="from engine import train_one_epoch", call="train_one_epoch(loader, epoch)")},
        # re-exported through a package __init__, setting the epoch in a nested helper
        {
            "engine/__init__.py": "from .loop import train_one_epoch\n",
            "engine/loop.py": "def _start(loader, epoch):\n    loader.sampler.set_epoch(epoch)\n\n\n"
            + ITERATES.replace("    for batch", "    _start(data_loader, epoch)\n    for batch"),
            "main.py": MAIN.format(imports="from engine import train_one_epoch", call="train_one_epoch(loader, epoch)"),
        },
        # a relative import inside a package
        {
            "pkg/__init__.py": "",
            "pkg/engine.py": SETS_EPOCH,
            "pkg/main.py": MAIN.format(imports="from .engine import train_one_epoch", call="train_one_epoch(loader, epoch)"),
        },
        # a library module no program runs: whoever calls it may set the epoch
        {
            "engine.py": ITERATES,
            "lib.py": MAIN.format(imports="from engine import train_one_epoch", call="train_one_epoch(loader, epoch)").split("\n\nif __name__")[0] + "\n",
        },
    ],
    ids=["helper-sets-epoch", "reexport-nested-helper", "relative-import", "no-program"],
)
def test_rep205_silent_when_another_module_sets_the_epoch(project, files):
    assert rep205(project(files)) == []


def test_rep205_fix_still_inserts_set_epoch_in_the_caller_loop(project):
    root = project({"engine.py": ITERATES, "main.py": MAIN.format(imports="from engine import train_one_epoch", call="train_one_epoch(loader, epoch)")})
    settings = Settings(select=("REP205",))
    lint_paths([root], settings, fix=True, unsafe_fixes=True)
    expected = MAIN.format(imports="from engine import train_one_epoch", call="sampler.set_epoch(epoch)\n        train_one_epoch(loader, epoch)")
    assert (root / "main.py").read_text(encoding="utf-8") == expected
    lint_paths([root], settings, fix=True, unsafe_fixes=True)
    assert (root / "main.py").read_text(encoding="utf-8") == expected
    assert lint_paths([root], settings).findings == []
