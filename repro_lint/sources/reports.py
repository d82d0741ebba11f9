"""What the scanners of launch scripts and configs report, turned into the engine's findings."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from repro_lint.analysis.result import FileAnalysis
from repro_lint.analysis.suppression import Suppressions
from repro_lint.core.catalog import CATALOG
from repro_lint.core.findings import Applicability, Edit, Finding, Fix
from repro_lint.core.problems import Problem
from repro_lint.core.source import LineIndex


@dataclass(frozen=True)
class Report:
    """A finding of a scanner: the rule, the offset and length of the text it is reported at, its
    message, and optionally the fix: a replacement of the text between two offsets (always unsafe:
    it changes a setting the user chose)."""

    code: str
    offset: int
    length: int
    message: str
    fix: tuple[int, int, str, str] | None = None  # start, end, new text, fix message


def empty(display: str) -> FileAnalysis:
    return FileAnalysis(display, [], None, Suppressions())


def skipped(display: str, reason: str) -> FileAnalysis:
    """A file the scanner refuses by design (too large, too deep to read within bounds)."""
    return FileAnalysis(display, [], None, Suppressions(), Problem(display, "skipped", reason))


def analysis(display: str, text: str, reports: Iterable[Report], suppressions: Suppressions) -> FileAnalysis:
    """Findings at the reports' offsets, one per rule and place."""
    index = LineIndex(text)
    findings: dict[tuple[str, int], Finding] = {}
    for report in reports:
        key = (report.code, report.offset)
        if key in findings:
            continue
        rule = CATALOG[report.code]
        start = index.position(report.offset)
        end = index.position(min(report.offset + report.length, len(text)))
        if end.line != start.line:
            end = start
        fix = None
        if report.fix is not None:
            fix_start, fix_end, content, message = report.fix
            edit = Edit(index.position(fix_start), index.position(fix_end), content)
            fix = Fix(Applicability.UNSAFE, message, (edit,))
        findings[key] = Finding(report.code, rule.name, report.message, display, start, end, fix)
    return FileAnalysis(display, list(findings.values()), None, suppressions)
