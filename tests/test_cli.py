"""The command line as users run it: output shapes, exit codes, fixes and bad input."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import SEEDED_PROGRAM_WITH_TWO_FINDINGS

from repro_lint.cli import _status, main

BAD = SEEDED_PROGRAM_WITH_TWO_FINDINGS


def run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "repro_lint", *args], cwd=cwd, capture_output=True, text=True, env={**os.environ, "NO_COLOR": "1"}
    )


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'demo'\n")
    (tmp_path / "train.py").write_text(BAD)
    return tmp_path


def test_text_output_and_exit_code(repo):
    result = run("check", ".", cwd=repo)
    assert result.returncode == 1
    assert result.stdout.splitlines() == [
        "train.py:5:1: REP301 `cudnn.benchmark` is enabled: cuDNN picks kernels by timing them, "
        "so runs can differ",
        "train.py:9:18: REP203 `random_split` without `generator` draws from torch's global RNG: earlier draws change the split",
        "Found 2 findings (1 fixable with --fix, 1 more with --fix --unsafe-fixes).",
    ]


def test_json_schema(repo):
    result = run("check", "--output-format", "json", "train.py", cwd=repo)
    assert result.returncode == 1
    findings = json.loads(result.stdout)
    assert [finding["code"] for finding in findings] == ["REP301", "REP203"]
    first = findings[0]
    assert set(first) == {"code", "name", "message", "path", "line", "column", "end_line", "end_column", "cell", "fix", "url"}
    assert (first["path"], first["line"], first["column"], first["end_line"], first["end_column"]) == ("train.py", 5, 1, 5, 23)
    assert first["name"] == "cudnn-benchmark-enabled" and first["cell"] is None and first["url"] is None  # no docs-url: the pages are published nowhere
    assert first["fix"] == {
        "applicability": "unsafe",
        "message": "Change `cudnn.benchmark` from `True` to `False`",
        "edits": [{"content": "False", "line": 5, "column": 19, "end_line": 5, "end_column": 23}],
    }
    assert findings[1]["fix"]["applicability"] == "safe"


def test_fix_then_unsafe_fix_then_nothing_left(repo):
    safe = run("check", "--fix", ".", cwd=repo)
    assert safe.returncode == 1
    assert "generator=torch.Generator().manual_seed(0)" in (repo / "train.py").read_text()
    assert "cudnn.benchmark = True  # speed" in (repo / "train.py").read_text()
    unsafe = run("check", "--fix", "--unsafe-fixes", ".", cwd=repo)
    assert unsafe.returncode == 0, unsafe.stdout
    assert "cudnn.benchmark = False  # speed" in (repo / "train.py").read_text()
    before = (repo / "train.py").read_text()
    again = run("check", "--fix", "--unsafe-fixes", ".", cwd=repo)
    assert again.returncode == 0 and (repo / "train.py").read_text() == before
    assert "All checks passed!" in again.stdout


def test_diff_changes_nothing(repo):
    result = run("check", "--diff", "--unsafe-fixes", ".", cwd=repo)
    assert result.returncode == 1
    assert "-cudnn.benchmark = True  # speed\n+cudnn.benchmark = False  # speed" in result.stdout
    assert result.stdout.startswith("--- a/train.py\n+++ b/train.py\n")
    assert (repo / "train.py").read_text() == BAD


def test_exit_zero_statistics_and_quiet(repo):
    assert run("check", "--exit-zero", ".", cwd=repo).returncode == 0
    stats = run("check", "--statistics", ".", cwd=repo)
    assert stats.stdout.splitlines() == ["1\tREP203\trandom-split-missing-generator", "1\tREP301\tcudnn-benchmark-enabled"]
    as_json = run("check", "--statistics", "--output-format", "json", ".", cwd=repo)
    assert json.loads(as_json.stdout) == [
        {"code": "REP203", "name": "random-split-missing-generator", "count": 1, "fixable": True},
        {"code": "REP301", "name": "cudnn-benchmark-enabled", "count": 1, "fixable": False},
    ]
    with_unsafe = json.loads(run("check", "--statistics", "--output-format", "json", "--unsafe-fixes", ".", cwd=repo).stdout)
    assert [row["fixable"] for row in with_unsafe] == [True, True]
    quiet = run("check", "--quiet", ".", cwd=repo)
    assert not any(line.startswith("Found") for line in quiet.stdout.splitlines())


def test_select_and_ignore_by_prefix(repo):
    assert [line.split()[1] for line in run("check", "-q", "--select", "REP3", ".", cwd=repo).stdout.splitlines()] == ["REP301"]
    assert run("check", "--ignore", "REP2,REP3", ".", cwd=repo).returncode == 0


def test_missing_path_exits_2(tmp_path):
    result = run("check", "nowhere.py", cwd=tmp_path)
    assert result.returncode == 2
    assert "nowhere.py: no such file or folder" in result.stderr
    assert "Traceback" not in result.stderr


def test_missing_path_among_others_is_reported_and_the_others_linted(repo):
    result = run("check", "nowhere.py", "train.py", "gone/", cwd=repo)
    assert result.returncode == 2
    assert [line.split()[1] for line in result.stdout.splitlines() if line.startswith("train.py")] == ["REP301", "REP203"]
    assert "repro-lint: error: nowhere.py: no such file or folder" in result.stderr
    assert "repro-lint: error: gone: no such file or folder" in result.stderr
    assert "Traceback" not in result.stderr


def test_unknown_code_exits_2(repo):
    result = run("check", "--select", "REP999", ".", cwd=repo)
    assert result.returncode == 2 and "REP999" in result.stderr and "Traceback" not in result.stderr


def test_no_files_exits_0(tmp_path):
    (tmp_path / "notes.txt").write_text("nothing to lint")
    result = run("check", ".", cwd=tmp_path)
    assert result.returncode == 0 and "All checks passed!" in result.stdout


def test_syntax_error_is_reported_and_others_still_linted(repo):
    broken = "def f(:\n    pass\n"
    (repo / "broken.py").write_text(broken)
    result = run("check", "--fix", "--unsafe-fixes", ".", cwd=repo)
    assert result.returncode == 1
    assert result.stdout.splitlines()[0].startswith("broken.py:1:7: REP001 cannot parse:")
    assert (repo / "broken.py").read_text() == broken
    assert "cudnn.benchmark = False" in (repo / "train.py").read_text()
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize(
    "content, message",
    [
        (b"import torch\nx = '\xff\xfe'\n", "not valid UTF-8 (byte 0xff on line 2)"),
        (b"\x00\x01\x02binary", "file is binary"),
    ],
)
def test_unreadable_file_is_a_clear_finding(repo, content, message):
    (repo / "weird.py").write_bytes(content)
    result = run("check", ".", cwd=repo)
    assert result.returncode == 1
    assert any(line.startswith("weird.py:1:1: REP001") and message in line for line in result.stdout.splitlines())
    assert "Traceback" not in result.stderr
    assert (repo / "weird.py").read_bytes() == content


def test_rules_and_explain():
    runner = CliRunner()
    listing = runner.invoke(main, ["rules"])
    assert listing.exit_code == 0
    rows = {line.split()[0]: line.split(maxsplit=4)[1:] for line in listing.output.splitlines()[1:]}
    assert rows["REP301"] == ["cudnn-benchmark-enabled", "on", "always", "unsafe"]
    assert rows["REP203"] == ["random-split-missing-generator", "on", "always", "safe"]
    assert rows["REP106"] == ["hash-order-dependence", "on", "always", "safe or unsafe"]
    # Every rule with a fix says how safe it is; a rule without one says nothing more.
    assert all(len(row) == (3 if row[2] == "none" else 4) for row in rows.values())
    page = runner.invoke(main, ["explain", "rep301"])
    assert page.exit_code == 0 and page.output.startswith("# REP301 cudnn-benchmark-enabled")
    unknown = runner.invoke(main, ["explain", "REP999"])
    assert unknown.exit_code == 2


def test_static_check_never_imports_torch(repo):
    probe = (
        "import sys\n"
        "from repro_lint.cli import main\n"
        "try:\n    main(['check', '--exit-zero', '.'])\n"
        "except SystemExit:\n    pass\n"
        "assert 'torch' not in sys.modules, 'torch was imported'\n"
        "print('torch-free')\n"
    )
    result = subprocess.run([sys.executable, "-c", probe], cwd=repo, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().endswith("torch-free")
    assert "train.py:5:1: REP301" in result.stdout


@pytest.mark.parametrize(
    "prefix, encoding",
    [(b"\xef\xbb\xbf", "utf-8-sig"), (b"# -*- coding: latin-1 -*-\n", "latin-1")],
)
def test_fix_keeps_bom_and_declared_encoding(tmp_path, prefix, encoding):
    (tmp_path / "pyproject.toml").write_text("")
    body = "import torch\nnote = 'caf\u00e9'\ntorch.backends.cudnn.benchmark = True\n"
    (tmp_path / "train.py").write_bytes(prefix + body.encode("latin-1" if encoding == "latin-1" else "utf-8"))
    result = run("check", "--fix", "--unsafe-fixes", "--select", "REP301", ".", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    data = (tmp_path / "train.py").read_bytes()
    assert data.startswith(prefix)
    assert data.decode(encoding).endswith("note = 'caf\u00e9'\ntorch.backends.cudnn.benchmark = False\n")


def test_folder_without_project_markers_is_one_project(tmp_path):
    (tmp_path / "helpers.py").write_text("import torch\ndef fit(model):\n    model(torch.ones(2)).sum().backward()\n")
    (tmp_path / "train.py").write_text(
        "import torch\nfrom helpers import fit\ntorch.backends.cudnn.benchmark = True\n"
        "if __name__ == '__main__':\n    fit(torch.nn.Linear(2, 2))\n"
    )
    result = run("check", "--select", "REP301", str(tmp_path), cwd=tmp_path.parent)
    assert "REP301" in result.stdout


def test_the_command_exits_with_its_status_and_all_its_output(repo):
    # `python -m repro_lint` ends with `run`'s exit, which skips freeing the heap: what was printed
    # must still all arrive, with the status the command chose.
    (repo / "more.py").write_text("import torch\n" + "torch.backends.cudnn.benchmark = True\n" * 3000)
    result = run("check", "--output-format", "json", ".", cwd=repo)
    assert result.returncode == 1, result.stderr
    assert len(json.loads(result.stdout)) == 3002
    assert run("check", "--select", "REP999", ".", cwd=repo).returncode == 2


def test_a_reader_that_stops_early_gets_no_traceback(repo):
    (repo / "more.py").write_text("import torch\n" + "torch.backends.cudnn.benchmark = True\n" * 3000)
    command = subprocess.Popen(
        [sys.executable, "-m", "repro_lint", "check", "."], cwd=repo, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    assert command.stdout is not None and command.stderr is not None
    assert command.stdout.read(10)
    command.stdout.close()  # the output is larger than a pipe's buffer: its next writes fail
    assert command.wait(timeout=120) != 0
    assert b"Traceback" not in command.stderr.read()


@pytest.mark.parametrize("code, status, message", [(None, 0, ""), (2, 2, ""), ("stopped", 1, "stopped\n")])
def test_exit_status_of_an_exit_request(code, status, message, capsys):
    assert _status(code) == status
    assert capsys.readouterr().err == message
