"""benchmarks/sweep.py on tiny generated repositories: the numbers in its table and the faults it lists."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

SWEEP = Path(__file__).resolve().parent.parent / "benchmarks" / "sweep.py"

TRAIN = """\
import torch

torch.backends.cudnn.benchmark = True
model = torch.nn.Linear(2, 2)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(3):
    model(torch.ones(2)).sum().backward()
    optimizer.step()
"""

# Stands in for repro-lint: an internal error on a.py; its "fix" appends an undefined name to a.py
# (each time: not idempotent) and breaks b.py.
FAKE = """\
import sys
from pathlib import Path

print("[]")
if "--fix" in sys.argv:
    Path("a.py").write_text(Path("a.py").read_text() + "undefined_name\\n")
    Path("b.py").write_text("def (\\n")
else:
    print("error: repro-lint failed on a.py: ValueError: boom", file=sys.stderr)
    print("Traceback (most recent call last):\\n  File 'x.py', line 1\\nValueError: boom", file=sys.stderr)
    sys.exit(2)
"""


def _sweep(repo: Path, *options: str) -> tuple[int, list[str], list[dict]]:
    details = repo.parent / "details.json"
    done = subprocess.run(
        [sys.executable, str(SWEEP), str(repo), "--jobs", "1", "--details", str(details), *options],
        capture_output=True,
        text=True,
        timeout=60,
    )
    rows = [line for line in done.stdout.splitlines() if line.startswith("| ")]
    assert rows[0].startswith("| repository | files |"), done.stdout + done.stderr
    return done.returncode, rows[1].strip("| ").split(" | "), json.loads(details.read_text())


def _repo(tmp_path: Path, files: dict[str, str]) -> Path:
    repo = tmp_path / "repo"
    repo.mkdir()
    for name, text in files.items():
        (repo / name).write_text(text)
    return repo


def test_a_clean_file_and_a_fixable_finding(tmp_path: Path) -> None:
    repo = _repo(tmp_path, {"clean.py": "print(1)\n", "train.py": TRAIN, "pyproject.toml": '[tool.repro-lint]\nselect = ["REP301"]\n'})
    returncode, row, faults = _sweep(repo, "--fix-campaign")
    # repository, files, check s, peak MB, findings, skipped, internal errors, fix s, files fixed, no
    # longer compile, new undefined names, fixed again
    assert [row[0], row[1], *row[4:7], *row[8:]] == ["repo", "2", "1", "0", "0", "1", "0", "0", "0"]
    assert float(row[3]) > 10  # a Python process holding LibCST
    assert (returncode, faults) == (0, [])
    assert "benchmark = True" in (repo / "train.py").read_text()  # the fixes went to a copy


def test_a_read_only_checkout_is_fixed_in_its_copy(tmp_path: Path) -> None:
    repo = _repo(tmp_path, {"train.py": TRAIN, "pyproject.toml": '[tool.repro-lint]\nselect = ["REP301"]\n'})
    for path in (repo / "train.py", repo / "pyproject.toml", repo):
        path.chmod(0o555 if path.is_dir() else 0o444)
    try:
        returncode, row, faults = _sweep(repo, "--fix-campaign")
    finally:
        repo.chmod(0o755)
    assert (row[8], returncode, faults) == ("1", 0, [])  # one file fixed


def test_every_kind_of_fault_is_counted_and_listed(tmp_path: Path) -> None:
    repo = _repo(tmp_path, {"a.py": "x = 1\n", "b.py": "y = 2\n"})
    (tmp_path / "fake.py").write_text(FAKE)
    fake = f"{shlex.quote(sys.executable)} {shlex.quote(str(tmp_path / 'fake.py'))}"
    returncode, row, faults = _sweep(repo, "--fix-campaign", "--repro-lint", fake)
    assert [row[0], row[1], *row[4:7], *row[8:]] == ["repo", "2", "0", "0", "1", "2", "1", "1", "1"]
    assert returncode == 1
    assert [(fault["file"], fault["kind"], fault["stage"]) for fault in faults] == [
        ("a.py", "internal error", "check"),
        ("a.py", "new undefined name", "fix"),
        ("b.py", "no longer compiles", "fix"),
        ("a.py", "fixed again", "fix again"),
    ]
    assert faults[0]["message"].startswith("ValueError: boom\nTraceback")
    assert "line 2: undefined name 'undefined_name'" in faults[1]["message"]
    assert "+undefined_name" in faults[3]["message"]


@pytest.mark.parametrize(
    ("program", "limit", "message"),
    [
        ("import time; time.sleep(30)", ["--timeout", "1"], "killed past --timeout"),
        ('import time; x = b"x" * (400 * 2**20); time.sleep(30)', ["--max-rss-mb", "200"], "killed past --max-rss-mb"),
    ],
    ids=["time", "memory"],
)
def test_a_run_past_its_limit_is_killed_and_counted(tmp_path: Path, program: str, limit: list[str], message: str) -> None:
    repo = _repo(tmp_path, {"a.py": "x = 1\n"})
    fake = f"{shlex.quote(sys.executable)} -c {shlex.quote(program)}"
    returncode, row, faults = _sweep(repo, "--repro-lint", fake, *limit)
    assert (returncode, row[4], row[6]) == (1, "—", "1")
    assert [(fault["kind"], fault["message"].split(" after ")[0]) for fault in faults] == [("internal error", message)]
