"""benchmarks/repeats.py: its table, on a few repeats of two statements."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPEATS = Path(__file__).resolve().parent.parent / "benchmarks" / "repeats.py"


def test_the_table_has_a_row_per_statement_and_mode_and_no_fault():
    result = subprocess.run(
        [sys.executable, str(REPEATS), "--repeats", "3", "cudnn.benchmark", "seeding"], capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 0, result.stdout + result.stderr
    rows = [line.split("|")[1:-1] for line in result.stdout.splitlines()[2:]]
    assert [(name.strip(), mode.strip()) for name, mode, *_ in rows] == [
        ("seeding", "check"),
        ("seeding", "fix"),
        ("cudnn.benchmark", "check"),
        ("cudnn.benchmark", "fix"),
    ]  # in the script's order
    assert all(float(row[2]) > 0 and float(row[3]) > 0 and row[6].strip() == "" for row in rows)


def test_an_unknown_statement_is_refused():
    result = subprocess.run([sys.executable, str(REPEATS), "no such statement"], capture_output=True, text=True)
    assert result.returncode == 2 and "unknown statements: no such statement" in result.stderr
