"""Scanning a launch script (`.sh`): REP305 flash-attention flags and REP308 Megatron settings."""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache

from repro_lint.analysis.result import FileAnalysis
from repro_lint.analysis.suppression import Suppressions
from repro_lint.core.source import LineIndex
from repro_lint.knowledge import load
from repro_lint.sources.launches import Launch, check_environment, check_launch, deterministic_mode, launches
from repro_lint.sources.reports import Report, analysis, empty
from repro_lint.sources.shell import Command, interpret


@cache
def _required_text() -> tuple[str, ...]:
    """Words without which a script cannot give a finding: it is not even parsed then."""
    data = load("launch.json")
    words = [spec["flag"] for spec in data["flash_flags"]]
    words += [entry["variable"] for entry in data["environment"].values()]
    words += [pattern.split("*")[0] for pattern in data["megatron"]["scripts"]]
    words += data["megatron"]["marker_flags"]
    return tuple(words)


def scan(text: str, display: str) -> FileAnalysis:
    """The findings of a script. A syntax error is reported as REP001 (`cannot parse: ...`), and the
    script is read on around it, as Ruff does: only the commands the error is part of are left out."""
    if not any(word in text for word in _required_text()):
        return empty(display)
    script = interpret(text)
    found = list(launches(script))
    claims_determinism = any(deterministic_mode(launch) for launch in found)
    reports = [report for launch in found for report in check_launch(launch)]
    reports += [
        report
        for command in script.commands
        for assignment in command.assignments
        for report in check_environment(assignment, claims_determinism)
    ]
    reports += [Report("REP001", error.offset, 0, f"cannot parse: {error.message}") for error in script.errors]
    return analysis(display, text, sorted(reports, key=lambda report: (report.offset, report.code)), _suppressions(text, script.comments, script.commands))


def started(text: str) -> list[Launch]:
    """The launches of a script: what the audit matches to programs (a command a syntax error is
    part of starts nothing)."""
    return list(launches(interpret(text)))


def _suppressions(text: str, comments: Sequence[tuple[int, int]], commands: Sequence[Command]) -> Suppressions:
    """`# noqa` comments. A command split over lines cannot hold a comment before its last line (it
    would end the command), so a comment after its last line covers all its lines."""
    index = LineIndex(text)
    suppressions = Suppressions()
    for start, end in comments:
        at = index.position(start)
        own_line = not index.line_text(at.line)[: at.column].strip()
        suppressions.add_comment(at.line, at.column, text[start:end], own_line)
    for command in commands:
        first, last = index.position(command.start).line, index.position(command.end).line
        suppressions.cover(range(first, last), last)
    return suppressions
