"""Linting text that is not on disk: `check --stdin-filename PATH -` and the engine's overrides
(`lint_paths(..., overrides=...)`), which an editor's unsaved buffers use too. The text is linted as
the file it names, in its project; nothing on disk changes, and the caches never take it for the
file's own."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

from repro_lint.api import lint_paths
from repro_lint.cli import main
from repro_lint.core.settings import Settings
from repro_lint.engine.cache import CACHE_FOLDER

# Turns cuDNN's benchmark mode on: reported only where a training program reaches it.
HELPER = "import torch\n\ndef speed_up():\n    torch.backends.cudnn.benchmark = True\n"
TRAIN = textwrap.dedent(
    """\
    import torch
    from helper import speed_up

    if __name__ == "__main__":
        torch.manual_seed(0)
        speed_up()
        model(x).sum().backward()
    """
)
INFER = TRAIN.replace("model(x).sum().backward()", "print(model(x))")
SPLIT = "import torch\nfrom torch.utils.data import random_split\ntorch.manual_seed(0)\ntrain, val = random_split(ds, [0.9, 0.1])\nloss.backward()\n"
FIXED_SPLIT = SPLIT.replace("[0.9, 0.1])", "[0.9, 0.1], generator=torch.Generator().manual_seed(0))")


def check(*args: str, stdin: str | bytes = "") -> tuple[int, str, str]:
    result = CliRunner().invoke(main, ["check", "--no-cache", *args], input=stdin)
    assert not isinstance(result.exception, Exception) or isinstance(result.exception, SystemExit), result.exception
    return result.exit_code, result.stdout, result.stderr


def snapshot(root: Path) -> dict[str, bytes]:
    return {path.relative_to(root).as_posix(): path.read_bytes() for path in sorted(root.rglob("*")) if path.is_file()}


def test_stdin_is_linted_as_the_named_file_of_its_project(project, monkeypatch):
    """The helper's finding depends on the project's other files: a training script reaches it."""
    root = project({"train.py": TRAIN, "helper.py": "def speed_up():\n    pass\n"})
    monkeypatch.chdir(root)
    status, out, _ = check("--stdin-filename", "helper.py", "-", stdin=HELPER)
    assert status == 1
    assert out.splitlines()[0].startswith("helper.py:4:5: REP301 ")
    (root / "train.py").write_text(INFER)
    status, out, _ = check("--stdin-filename", "helper.py", stdin=HELPER)  # `-` may be left out, as in Ruff
    assert (status, out) == (0, "All checks passed!\n")


def test_stdin_file_need_not_exist_and_picks_up_the_project_settings(project, monkeypatch):
    root = project({}, pyproject='[tool.repro-lint.per-file-ignores]\n"scripts/*" = ["REP203"]\n')
    monkeypatch.chdir(root)
    assert check("--stdin-filename", "new.py", "-", stdin=SPLIT)[1].startswith("new.py:4:14: REP203 ")
    assert check("--stdin-filename", "scripts/new.py", "-", stdin=SPLIT)[0] == 0
    assert not (root / "new.py").exists()


def test_stdin_fix_prints_the_fixed_text_and_writes_nothing(project, monkeypatch):
    root = project({"train.py": SPLIT})
    monkeypatch.chdir(root)
    before = snapshot(root)
    status, out, err = check("--stdin-filename", "train.py", "--fix", "-", stdin=SPLIT)
    assert (status, out) == (0, FIXED_SPLIT)
    assert err == "Found 1 finding (1 fixed, 0 remaining).\n"  # the report goes to stderr
    assert snapshot(root) == before
    # A second fix changes nothing, and the fixed text no longer raises the finding.
    assert check("--stdin-filename", "train.py", "--fix", "-", stdin=FIXED_SPLIT)[:2] == (0, FIXED_SPLIT)
    assert check("--stdin-filename", "train.py", "-", stdin=FIXED_SPLIT)[:2] == (0, "All checks passed!\n")
    # Nothing to fix: the input comes back byte for byte, also in an encoding a fix would keep.
    latin = "# -*- coding: latin-1 -*-\nname = 'é'\n".encode("latin-1")
    assert CliRunner().invoke(main, ["check", "--stdin-filename", "x.py", "--fix"], input=latin).stdout_bytes == latin


def test_stdin_diff_changes_nothing(project, monkeypatch):
    root = project({"train.py": SPLIT})
    monkeypatch.chdir(root)
    status, out, _ = check("--stdin-filename", "train.py", "--diff", "-", stdin=SPLIT)
    assert status == 1 and "+train, val = random_split(ds, [0.9, 0.1], generator=" in out
    assert (root / "train.py").read_text() == SPLIT


def test_stdin_notebook(project, monkeypatch):
    root = project({})
    monkeypatch.chdir(root)
    cells = [
        {"cell_type": "markdown", "metadata": {}, "source": ["# Train"]},
        {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [], "source": SPLIT.splitlines(keepends=True)},
    ]
    document = json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}, indent=1) + "\n"
    status, out, _ = check("--stdin-filename", "train.ipynb", "-", stdin=document)
    assert status == 1 and out.startswith("train.ipynb:cell 2:4:14: REP203 ")
    status, out, _ = check("--stdin-filename", "train.ipynb", "--fix", "-", stdin=document)
    assert status == 0
    fixed = json.loads(out)
    assert "".join(fixed["cells"][1]["source"]) == FIXED_SPLIT
    assert fixed["cells"][0] == cells[0]
    assert not (root / "train.ipynb").exists()
    status, out, _ = check("--stdin-filename", "broken.ipynb", "-", stdin="{not json")
    assert status == 1 and "REP001" in out


def test_stdin_that_is_not_text_is_a_finding(project, monkeypatch):
    monkeypatch.chdir(project({}))
    status, out, _ = check("--stdin-filename", "x.py", "-", stdin=b"x = '\xff'\n")
    assert status == 1 and out.startswith("x.py:1:1: REP001 ")
    # --fix gives back what it could not read, untouched.
    result = CliRunner().invoke(main, ["check", "--stdin-filename", "x.py", "--fix", "-"], input=b"x = '\xff'\n")
    assert result.stdout_bytes == b"x = '\xff'\n"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["-"], "reading standard input (`-`) needs --stdin-filename PATH"),
        (["--stdin-filename", "x.py", "other.py"], "--stdin-filename lints standard input: give no path, or `-`"),
        (["--stdin-filename", "x.py", "--add-noqa", "-"], "--add-noqa writes files: it cannot read standard input"),
    ],
)
def test_stdin_misuse_is_a_clear_error(project, monkeypatch, args, message):
    monkeypatch.chdir(project({}))
    status, _, err = check(*args, stdin=SPLIT)
    assert status == 2 and message in err


def test_override_is_never_cached_as_the_file_on_disk(project):
    """A run with an override reads the cache but writes neither the text's analysis nor the
    project's record: the next run on the files on disk gives their findings, still from the record."""
    root = project({"train.py": TRAIN, "helper.py": "def speed_up():\n    pass\n"})
    on_disk = lint_paths([root], Settings(), use_cache=True).findings
    assert on_disk == []
    cache = snapshot(root / CACHE_FOLDER)
    overridden = lint_paths([root / "helper.py"], Settings(), use_cache=True, overrides={root / "helper.py": HELPER})
    assert [finding.code for finding in overridden.findings] == ["REP301"]
    assert snapshot(root / CACHE_FOLDER) == cache
    assert lint_paths([root], Settings(), use_cache=True).findings == []
    assert lint_paths([root / "helper.py"], Settings(), use_cache=True).findings == []


def test_override_of_a_file_not_given_counts_for_the_program_rules(project):
    """An editor's unsaved buffer of another module: the project pass reads it, not the file."""
    root = project({"train.py": INFER, "helper.py": HELPER})
    assert lint_paths([root / "helper.py"], Settings()).findings == []
    found = lint_paths([root / "helper.py"], Settings(), overrides={root / "train.py": TRAIN}).findings
    assert [finding.code for finding in found] == ["REP301"]
    assert (root / "train.py").read_text() == INFER


def test_override_fix_returns_the_text_and_writes_nothing(project):
    root = project({"train.py": SPLIT})
    result = lint_paths([root / "train.py"], Settings(), fix=True, overrides={root / "train.py": SPLIT})
    assert result.fixed == 1 and result.findings == []
    assert result.fixed_sources == {(root / "train.py").resolve(): FIXED_SPLIT.encode()}
    assert (root / "train.py").read_text() == SPLIT
