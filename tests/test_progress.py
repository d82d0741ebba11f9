"""The progress counter: on a watched terminal only, never in CI, pipes or stdout."""

from __future__ import annotations

import io

import pytest

from repro_lint.engine import progress as progress_module
from repro_lint.engine.progress import MIN_FILES, Progress


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.fixture
def no_ci(monkeypatch):
    monkeypatch.delenv("CI", raising=False)


def _run(stream, total: int = MIN_FILES) -> str:
    shown = Progress(total, stream)
    for _ in range(total):
        shown.advance()
    shown.close()
    return stream.getvalue()


def test_counts_on_a_terminal_and_erases_itself(no_ci):
    written = _run(_Terminal())
    assert f"\rrepro-lint: analysed {MIN_FILES}/{MIN_FILES} files" in written
    assert written.startswith("\rrepro-lint: analysed 1/")
    assert written.endswith("\r\x1b[K")


def test_silent_in_ci(monkeypatch):
    monkeypatch.setenv("CI", "true")
    assert _run(_Terminal()) == ""


def test_silent_in_a_pipe(no_ci):
    assert _run(io.StringIO()) == ""


def test_silent_for_a_short_audit(no_ci):
    assert _run(_Terminal(), total=MIN_FILES - 1) == ""


def test_throttled_to_a_few_updates_a_second(no_ci, monkeypatch):
    clock = iter(range(0, 10_000))
    monkeypatch.setattr(progress_module.time, "monotonic", lambda: next(clock) / 1000)  # 1 ms per call
    written = _run(_Terminal(), total=1000)
    updates = written.count("\rrepro-lint:")
    assert 2 <= updates < 1000 / 50
    assert "1000/1000" in written  # the last count is always shown


def test_cli_shows_the_counter_on_stderr_only(project, monkeypatch):
    from click.testing import CliRunner

    from repro_lint.cli import main

    monkeypatch.setattr(progress_module, "_watched", lambda stream: True)  # as if stderr were a terminal
    monkeypatch.setattr(progress_module, "MIN_FILES", 1)
    root = project({f"m{index}.py": "x = {1, 2}\n" for index in range(3)})
    result = CliRunner().invoke(main, ["check", "--jobs", "1", "--no-cache", "--output-format", "json", str(root)])
    assert "analysed 3/3 files" in result.stderr
    assert "analysed" not in result.stdout
