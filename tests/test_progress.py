"""The progress display: every phase with its count, rate and time left on a watched terminal only,
never in CI, pipes, `--quiet` runs or stdout."""

from __future__ import annotations

import io
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from repro_lint.cli import main
from repro_lint.engine import engine as engine_module
from repro_lint.engine import progress as progress_module
from repro_lint.engine import progress_bar
from repro_lint.engine.progress import MIN_FILES, Progress

ROOT = Path(__file__).resolve().parent.parent


def _plain(shown: str) -> str:
    """The text drawn, without the terminal's control sequences (colours, cursor moves)."""
    return re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", shown)


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.fixture
def no_ci(monkeypatch):
    monkeypatch.delenv("CI", raising=False)


@pytest.fixture
def clock(monkeypatch):
    """A clock the test moves: `clock[0] += seconds`."""
    now = [0.0]
    monkeypatch.setattr(progress_bar, "clock", lambda: now[0])
    return now


def _run(stream, shown: bool = True, total: int = 4) -> str:
    with Progress(shown, stream).phase("analysing", total, "files") as phase:
        for _ in range(total):
            phase.advance()
    return stream.getvalue()


def test_a_phase_shows_its_count_rate_and_time_left_and_erases_itself(no_ci, clock):
    terminal = _Terminal()
    with Progress(True, terminal).phase("analysing", 4, "files") as phase:
        for _ in range(2):
            clock[0] += 0.5
            phase.advance()
        phase.display.refresh()  # as rich's thread redraws it, ten times a second
        halfway = _plain(terminal.getvalue()).rpartition("\r")[2]  # the last redraw
    assert halfway.startswith(" repro-lint: analysing ━━━━━━━━", 1)  # a spinner, the phase, the bar
    assert halfway.endswith(" 2/4 files 2.0/s ETA 0:01")  # one file each half second, two left
    # Erased when the phase ends: the cursor, shown again, goes back up to its line, which is cleared.
    assert terminal.getvalue().endswith("\x1b[?25h\r\x1b[1A\x1b[2K")


def test_a_phase_of_unknown_length_counts_and_says_what_it_does(no_ci, clock, monkeypatch):
    monkeypatch.setenv("COLUMNS", "120")
    terminal = _Terminal()
    with Progress(True, terminal).phase("project pass", None, "rules") as phase:
        phase.describe("12 programs, REP201 worker-seeding")
        clock[0] += 3
        phase.advance()
        phase.display.refresh()
        written = _plain(terminal.getvalue()).rpartition("\r")[2]
    assert "repro-lint: project pass: 12 programs, REP201 worker-seeding" in written
    assert written.endswith(" 1/? rules  0:03 elapsed") and "ETA" not in written


def test_a_narrow_terminal_cuts_the_label_short_on_one_line(no_ci, clock, monkeypatch):
    monkeypatch.setenv("COLUMNS", "60")
    terminal = _Terminal()
    with Progress(True, terminal).phase("project pass", 14, "rules") as phase:
        phase.describe("12 programs, REP407 checkpoint-missing-optimizer")
        phase.display.refresh()
        drawn = _plain(terminal.getvalue()).rpartition("\r")[2]
    assert "\n" not in drawn and len(drawn.rstrip()) <= 60
    assert drawn.startswith(" repro-lint: pro…", 1) and drawn.rstrip().endswith("0/14 rules  0:00 elapsed")


def test_silent_in_ci(monkeypatch):
    monkeypatch.setenv("CI", "true")
    assert _run(_Terminal()) == ""


def test_silent_in_a_pipe(no_ci):
    assert _run(io.StringIO()) == ""


def test_silent_when_not_to_be_shown(no_ci):
    assert _run(_Terminal(), shown=False) == ""


def test_an_empty_phase_is_not_shown(no_ci):
    assert _run(_Terminal(), total=0) == ""


def test_rich_is_imported_only_to_show_it():
    code = (
        "import io, sys\n"
        "from repro_lint.engine.progress import Progress\n"
        "with Progress(True, io.StringIO()).phase('analysing', 3, 'files') as phase:\n"
        "    phase.advance()\n"
        "assert 'rich' not in sys.modules, 'rich imported'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)})


def _watched_cli(monkeypatch, project, *args: str):
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.setattr(progress_module, "watched", lambda stream: True)  # as if stderr were a terminal
    monkeypatch.setattr(engine_module, "MIN_FILES", 1)
    root = project({f"m{index}.py": "import torch\ntorch.backends.cudnn.benchmark = True\n" for index in range(3)})
    return CliRunner().invoke(main, ["check", "--jobs", "1", "--no-cache", "--output-format", "json", *args, str(root)])


def test_cli_shows_every_phase_on_stderr_only(project, monkeypatch):
    result = _watched_cli(monkeypatch, project, "--fix", "--unsafe-fixes")
    shown = _plain(result.stderr)
    for phase in ("reading", "analysing", "project pass", "fixing"):
        assert f"repro-lint: {phase}" in shown, phase
    assert "3/3 files" in shown
    assert "repro-lint:" not in result.stdout


def test_cli_quiet_shows_no_progress(project, monkeypatch):
    result = _watched_cli(monkeypatch, project, "--quiet")
    assert result.exit_code == 1 and result.stdout  # the findings
    assert result.stderr == ""


@pytest.mark.skipif(sys.platform == "win32", reason="pseudo-terminals are POSIX")
@pytest.mark.parametrize("ci", [False, True])
def test_a_real_terminal_sees_it_and_ci_does_not(tmp_path, ci):
    """The CLI run on a pseudo-terminal, as a person runs it: stderr a terminal, stdout a pipe."""
    (tmp_path / "pyproject.toml").write_text("")
    for index in range(MIN_FILES):
        (tmp_path / f"m{index}.py").write_text(f"x = {index}\n")
    environment = {key: value for key, value in os.environ.items() if key != "CI"}
    environment.update(PYTHONPATH=str(ROOT), COLUMNS="120", **({"CI": "1"} if ci else {}))
    leader, follower = os.openpty()
    run = subprocess.Popen(
        [sys.executable, "-m", "repro_lint", "check", "--no-cache", "--jobs", "1", str(tmp_path)],
        stdout=subprocess.PIPE, stderr=follower, env=environment, cwd=tmp_path,
    )  # fmt: skip
    os.close(follower)
    shown = b""
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # the last writer closed it (EIO on Linux)
            break
        if not chunk:
            break
        shown += chunk
    os.close(leader)
    stdout, _ = run.communicate(timeout=120)
    assert run.returncode == 0 and stdout == b"All checks passed!\n"
    if ci:
        assert shown == b""
    else:
        drawn = _plain(shown.decode())
        assert "repro-lint: reading" in drawn and "repro-lint: analysing" in drawn and "/200 files" in drawn
