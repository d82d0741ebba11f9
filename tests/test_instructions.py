"""benchmarks/instructions.py: instruction counts of the per-file analysis, against a git ref."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "benchmarks" / "instructions.py"


@pytest.mark.skipif(shutil.which("valgrind") is None, reason="valgrind counts the instructions")
def test_a_build_counted_against_its_own_commit_counts_the_same():
    result = subprocess.run(
        [sys.executable, str(SCRIPT), str(ROOT / "examples"), "--files", "1", "--vs", "HEAD"], capture_output=True, text=True, timeout=600
    )
    assert result.returncode == 0, result.stdout + result.stderr
    here = re.search(r"this build: ([\d,]+) instructions", result.stdout)
    reference = re.search(r"HEAD: ([\d,]+) instructions; this build / HEAD: ([\d.]+)", result.stdout)
    assert here is not None and reference is not None, result.stdout
    assert int(here.group(1).replace(",", "")) > 1_000_000
    unchanged = subprocess.run(["git", "-C", str(ROOT), "diff", "--quiet", "HEAD", "--", "repro_lint"]).returncode == 0
    if unchanged:  # the same build, files and hash seed: the same count but for memory addresses
        assert abs(float(reference.group(2)) - 1) < 0.01


@pytest.mark.skipif(shutil.which("valgrind") is None, reason="valgrind counts the instructions")
def test_the_build_counted_is_the_one_given_not_the_working_folders(tmp_path, monkeypatch):
    import importlib.util

    spec = importlib.util.spec_from_file_location("instructions", SCRIPT)
    assert spec is not None and spec.loader is not None
    instructions = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(instructions)
    (tmp_path / "repro_lint").mkdir()
    (tmp_path / "repro_lint" / "__init__.py").write_text("raise ImportError('the build given')\n")
    monkeypatch.chdir(ROOT)  # where `repro_lint` could be imported from by mistake
    with pytest.raises(SystemExit, match="the build given"):
        instructions.instructions(tmp_path, ROOT / "examples", 1, analyse=False)
