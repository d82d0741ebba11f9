"""A reproducibility linter's own output must not depend on the hash salt."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _json_output(hash_seed: str) -> str:
    result = subprocess.run(
        # --no-cache: the second run must compute, not read the first run's results.
        [sys.executable, "-m", "repro_lint", "check", "--no-cache", "--output-format", "json", "examples/"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONHASHSEED": hash_seed},
    )
    assert result.returncode == 1, result.stderr
    return result.stdout


def test_json_identical_under_two_hash_seeds():
    first = _json_output("0")
    assert '"code": "REP301"' in first
    assert first == _json_output("1")
