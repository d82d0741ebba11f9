"""The flake8 extension, run through the real `python -m flake8`: same findings as the CLI, program rules
from the file's project, flake8's `noqa`, and opt-in rules only when selected."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from repro_lint.api import lint_source
from repro_lint.flake8_plugin import opt_in_codes_selected
from repro_lint.rules.registry import REGISTRY

pytest.importorskip("flake8", reason="flake8 is not installed (it is in the `test` extra)")

FORMAT = "%(path)s|%(row)d|%(col)d|%(code)s|%(text)s"

HELPERS = """\
import torch


def seed_everything(seed):
    torch.manual_seed(seed)


def fit(model, batches, optimizer):
    torch.backends.cudnn.benchmark = True
    for inputs, targets in batches:
        loss = torch.nn.functional.cross_entropy(model(inputs), targets)
        loss.backward()
        optimizer.step()
"""

TRAIN = """\
import torch

from helpers import fit


def main():
    model = torch.nn.Linear(4, 2)
    fit(model, [], torch.optim.SGD(model.parameters(), lr=0.1))


if __name__ == "__main__":
    main()
"""

TRAIN_SEEDED = """\
import torch

from helpers import fit, seed_everything


def main():
    seed_everything(0)
    model = torch.nn.Linear(4, 2)
    fit(model, [], torch.optim.SGD(model.parameters(), lr=0.1))


if __name__ == "__main__":
    main()
"""

SPLIT = """\
import torch
from torch.utils.data import random_split


def main():
    torch.manual_seed(0)
    torch.backends.cudnn.benchmark = True{noqa}
    train, val = random_split(torch.arange(10), [8, 2])
    model = torch.nn.Linear(1, 1)
    model(torch.ones(1)).sum().backward()


if __name__ == "__main__":
    main()
"""

LOADER = """\
from torch.utils.data import DataLoader

loader = DataLoader(range(10), batch_size=2, num_workers=2)
"""


def write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (root / name).write_text(textwrap.dedent(text), encoding="utf-8")
    return root


def flake8(cwd: Path, *args: str) -> set[tuple[str, int, int, str, str]]:
    result = subprocess.run(
        [sys.executable, "-m", "flake8", f"--format={FORMAT}", *args],
        cwd=cwd, capture_output=True, text=True, env={**os.environ, "NO_COLOR": "1"},
    )  # fmt: skip
    assert result.returncode in (0, 1), result.stderr
    assert "Traceback" not in result.stderr, result.stderr
    rows = set()
    for line in result.stdout.splitlines():
        path, row, col, code, text = line.split("|", 4)
        rows.add((path.removeprefix("./"), int(row), int(col), code, text))
    return rows


def cli(cwd: Path, *args: str) -> set[tuple[str, int, int, str, str]]:
    result = subprocess.run(
        [sys.executable, "-m", "repro_lint", "check", "--output-format", "json", *args], cwd=cwd, capture_output=True, text=True
    )
    assert result.returncode in (0, 1), result.stderr
    return {(f["path"], f["line"], f["column"], f["code"], f["message"]) for f in json.loads(result.stdout)}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'demo'\n")
    return write(tmp_path, {"helpers.py": HELPERS, "train.py": TRAIN, "train_seeded.py": TRAIN_SEEDED, "split.py": SPLIT.format(noqa="")})


def test_same_findings_as_the_cli_including_program_rules(project):
    files = ["helpers.py", "split.py", "train.py", "train_seeded.py"]
    reported = flake8(project, "--isolated", "--select", "REP", *files)
    assert reported == cli(project, *files)
    codes = {(path, code) for path, _, _, code, _ in reported}
    # REP101 is a program rule: train.py is never seeded, train_seeded.py is, through a helper module.
    assert ("train.py", "REP101") in codes and ("train_seeded.py", "REP101") not in codes
    assert ("helpers.py", "REP301") in codes and {("split.py", "REP203"), ("split.py", "REP301")} <= codes
    # Linted on its own, train.py calls a `fit` nobody knows, and REP101 stays silent: flake8's REP101
    # came from the project model.
    assert "REP101" not in [finding.code for finding in lint_source(TRAIN, "train.py")]


def test_one_file_at_a_time_still_sees_its_project(project):
    # As pre-commit and editors call it: flake8 is given a single file.
    assert {row[3] for row in flake8(project, "--isolated", "--select", "REP", "helpers.py")} == {"REP301"}
    assert flake8(project, "--isolated", "--select", "REP", "train_seeded.py") == set()


def test_columns_are_the_clis(project):
    (row,) = [row for row in flake8(project, "--isolated", "--select", "REP", "split.py") if row[3] == "REP203"]
    assert row[1:3] == (8, 18)  # `random_split(` starts in column 18, counted from 1 as the CLI prints it


def test_flake8_noqa(project):
    write(project, {"split.py": SPLIT.format(noqa="  # noqa: REP301"), "skipped.py": "# flake8: noqa\n" + SPLIT.format(noqa="")})
    reported = flake8(project, "--isolated", "--select", "REP", "split.py", "skipped.py")
    assert {(path, code) for path, _, _, code, _ in reported} == {("split.py", "REP203")}
    # The file-level `# flake8: noqa` is flake8's alone: the CLI still reports that file.
    assert {code for path, _, _, code, _ in cli(project, "skipped.py")} == {"REP203", "REP301"}


def test_disable_noqa_brings_back_what_a_noqa_comment_silenced(project):
    # `# repro-lint: noqa` is repro-lint's file-level directive, honoured by the engine, not by flake8.
    write(project, {"split.py": SPLIT.format(noqa="  # noqa: REP301"), "skipped.py": "# repro-lint: noqa\n" + SPLIT.format(noqa="")})
    files = ["split.py", "skipped.py"]
    assert {(path, code) for path, _, _, code, _ in flake8(project, "--isolated", "--select", "REP", *files)} == {("split.py", "REP203")}
    everything = flake8(project, "--isolated", "--select", "REP", "--disable-noqa", *files)
    assert {(path, code) for path, _, _, code, _ in everything} == {
        ("split.py", "REP203"), ("split.py", "REP301"), ("skipped.py", "REP203"), ("skipped.py", "REP301")
    }  # fmt: skip
    # The same positions and messages as the CLI reports once the comments are gone.
    write(project, {"split.py": SPLIT.format(noqa="")})
    assert {row for row in everything if row[0] == "split.py"} == cli(project, "split.py")


def test_opt_in_rules_need_an_explicit_selection(project):
    write(project, {"loader.py": LOADER})
    assert flake8(project, "--isolated", "--select", "REP", "loader.py") == set()
    assert {row[3] for row in flake8(project, "--isolated", "--select", "REP206", "loader.py")} == {"REP206"}
    assert {row[3] for row in flake8(project, "--isolated", "--select", "REP", "--extend-select", "REP2", "loader.py")} == {
        "REP206"
    }
    # The project's own configuration can turn it on too, as for the CLI.
    (project / "pyproject.toml").write_text("[tool.repro-lint]\nextend-select = ['REP206']\n")
    assert {row[3] for row in flake8(project, "--isolated", "--select", "REP", "loader.py")} == {"REP206"}


def test_flake8_config_file_selection(project):
    write(project, {"loader.py": LOADER, "setup.cfg": "[flake8]\nselect = REP\nextend-select = REP206\n"})
    assert {row[3] for row in flake8(project, "loader.py")} == {"REP206"}


def test_opt_in_selection_rule():
    opt_in = sorted(code for code, rule in REGISTRY.items() if not rule.default_enabled)
    assert "REP206" in opt_in
    assert opt_in_codes_selected(["REP"]) == ()
    assert opt_in_codes_selected(["E", "F", "rep"]) == ()
    assert opt_in_codes_selected(["REP206"]) == ("REP206",)
    assert opt_in_codes_selected(["E501", "REP2"]) == tuple(code for code in opt_in if code.startswith("REP2"))
    assert opt_in_codes_selected(["REP3"]) == tuple(code for code in opt_in if code.startswith("REP3"))


def test_bad_project_config_fails_loudly(project):
    (project / "pyproject.toml").write_text("[tool.repro-lint]\nselct = ['REP']\n")
    result = subprocess.run(
        [sys.executable, "-m", "flake8", "--isolated", "--select", "REP", "train.py"], cwd=project, capture_output=True, text=True
    )
    assert result.returncode == 1
    assert "repro-lint: " in result.stdout and "unknown key `selct`" in result.stdout
    assert "Traceback" not in result.stdout + result.stderr


CUDA_TRAIN = """\
import torch

from lib.helpers import fit


def main():
    torch.manual_seed(0)
    model = torch.nn.Linear(4, 2).cuda()
    fit(model, [], torch.optim.SGD(model.parameters(), lr=0.1))


if __name__ == "__main__":
    main()
"""


@pytest.fixture
def unmarked(tmp_path: Path) -> Path:
    """A project without a marker (no pyproject.toml, setup.cfg, .git): the folder linted is the project."""
    root = tmp_path / "unmarked"
    for folder in ("app", "lib"):
        (root / folder).mkdir(parents=True)
    write(root / "lib", {"__init__.py": "", "helpers.py": HELPERS})
    write(root / "app", {"__init__.py": "", "train.py": CUDA_TRAIN, "split.py": SPLIT.format(noqa="")})
    return root


@pytest.mark.parametrize("marker", [None, "pyproject.toml", "setup.cfg"])
def test_same_project_root_as_the_cli_with_and_without_a_marker(unmarked, marker):
    if marker is not None:
        (unmarked / marker).write_text("")
    reported = flake8(unmarked, "--isolated", "--select", "REP", ".")
    assert reported == cli(unmarked, ".")
    # REP302 is a program rule: app/train.py runs on CUDA and trains in lib/helpers.py, which only a
    # project holding both folders sees.
    assert ("app/train.py", "REP302") in {(path, code) for path, _, _, code, _ in reported}


def test_shares_the_cli_cache(unmarked):
    cache = unmarked / ".repro_lint_cache"
    flake8(unmarked, "--isolated", "--select", "REP", ".")
    assert cache.is_dir()  # flake8 filled repro-lint's cache: `check` now analyses nothing again
    shutil.rmtree(cache)
    cli(unmarked, ".")
    entries = sorted(path.relative_to(cache) for path in cache.rglob("*.pickle"))
    assert entries
    # After `check`, flake8's run is answered from the same entries: it adds none of its own.
    assert flake8(unmarked, "--isolated", "--select", "REP", "-j", "2", ".") == cli(unmarked, ".")
    assert sorted(path.relative_to(cache) for path in cache.rglob("*.pickle")) == entries
