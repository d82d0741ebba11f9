"""Scanning a launch script (`.sh`): REP305 flash-attention flags and REP308 Megatron settings."""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache

from repro_lint.analysis.result import FileAnalysis, syntax_error
from repro_lint.analysis.suppression import Suppressions
from repro_lint.core.source import LineIndex
from repro_lint.knowledge import load
from repro_lint.sources.launches import Launch, check_environment, check_launch, deterministic_mode, launches
from repro_lint.sources.reports import analysis, empty
from repro_lint.sources.shell import Command, interpret
from repro_lint.sources.shell_lexer import Comment, ShellSyntaxError, lex


@cache
def _required_text() -> tuple[str, ...]:
    """Words without which a script cannot give a finding: it is not even tokenized then."""
    data = load("launch.json")
    words = [spec["flag"] for spec in data["flash_flags"]]
    words += [entry["variable"] for entry in data["environment"].values()]
    words += [pattern.split("*")[0] for pattern in data["megatron"]["scripts"]]
    words += data["megatron"]["marker_flags"]
    return tuple(words)


def scan(text: str, display: str) -> FileAnalysis:
    if not any(word in text for word in _required_text()):
        return empty(display)
    try:
        lexed = lex(text)
    except ShellSyntaxError as error:
        at = LineIndex(text).position(error.offset)
        return syntax_error(display, f"cannot parse: {error.message}", at.line, at.column)
    script = interpret(text, lexed)
    found = list(launches(script))
    claims_determinism = any(deterministic_mode(launch) for launch in found)
    reports = [report for launch in found for report in check_launch(launch)]
    reports += [
        report
        for command in script.commands
        for assignment in command.assignments
        for report in check_environment(assignment, claims_determinism)
    ]
    return analysis(display, text, sorted(reports, key=lambda report: (report.offset, report.code)), _suppressions(text, lexed.comments, script.commands))


def started(text: str) -> list[Launch]:
    """The launches of a script (none when it does not lex): what the audit matches to programs."""
    try:
        lexed = lex(text)
    except ShellSyntaxError:
        return []
    return list(launches(interpret(text, lexed)))


def parses(text: str) -> bool:
    try:
        lex(text)
    except ShellSyntaxError:
        return False
    return True


def _suppressions(text: str, comments: Sequence[Comment], commands: Sequence[Command]) -> Suppressions:
    """`# noqa` comments. A command split over lines cannot hold a comment before its last line (it
    would end the command), so a comment after its last line covers all its lines."""
    index = LineIndex(text)
    suppressions = Suppressions()
    for comment in comments:
        at = index.position(comment.start)
        own_line = not index.line_text(at.line)[: at.column].strip()
        suppressions.add_comment(at.line, at.column, text[comment.start : comment.end], own_line)
    for command in commands:
        first, last = index.position(command.start).line, index.position(command.end).line
        suppressions.cover(range(first, last), last)
    return suppressions
