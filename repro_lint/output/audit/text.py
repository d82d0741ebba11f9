"""The audit on a terminal: one row per program with a mark per area, then each program's findings
by area where there are any, then the totals. Colours only where the context says a terminal
shows them."""

from __future__ import annotations

import click

from repro_lint.core.findings import Finding
from repro_lint.engine.scorecard import FAIL, NOT_APPLICABLE, PASS, WARN, AreaVerdict, ProgramVerdict, Scorecard, areas
from repro_lint.output.audit.context import AuditContext
from repro_lint.output.audit.totals import fix_label, totals_line
from repro_lint.output.text import finding_line

_COLOURS = {PASS: "green", WARN: "yellow", FAIL: "red", NOT_APPLICABLE: None}
_PROBE_COLOURS = {"pass": "green", "warn": "yellow", "fail": "red", "error": "red"}


def mark(verdict: AreaVerdict) -> str:
    """`pass`, `FAIL 2`, `warn 1`, `n/a`: the word says it where colours do not."""
    if verdict.status == FAIL:
        return f"FAIL {len(verdict.findings)}"
    if verdict.status == WARN:
        return f"warn {len(verdict.warnings)}"
    return verdict.status


def probe_mark(program: ProgramVerdict) -> str:
    return ", ".join(report.status for report in program.probes) or "-"


def render(scorecard: Scorecard, context: AuditContext) -> str:
    probed = any(program.probes for program in scorecard.programs)
    header = ["program", *(area.title for area in areas()), *(["probe"] if probed else []), "findings"]
    rows = []
    for program in scorecard.programs:
        cells = [(program.outline.path, None)]
        cells += [(mark(verdict), _COLOURS[verdict.status]) for verdict in program.areas.values()]
        if probed:
            cells.append((probe_mark(program), _PROBE_COLOURS.get(program.probes[0].status) if len(program.probes) == 1 else None))
        cells.append((str(len(program.findings)), None))
        rows.append(cells)
    widths = [max(len(cell) for cell in column) for column in zip(header, *([text for text, _ in row] for row in rows))]
    lines = [_row([(title, None) for title in header], widths, context.color, bold=True)]
    lines += [_row(row, widths, context.color) for row in rows]
    if not scorecard.programs:
        lines.append("No programs found (a program is a module with a main guard, or one that trains when run).")
    for program in scorecard.programs:
        if program.findings or any(report.status != "pass" for report in program.probes):
            lines += ["", *_details(program, context)]
    if scorecard.outside:
        lines += ["", f"{len(scorecard.outside)} findings are in code no program runs (library code, tests); `repro-lint check` lists them."]
    lines += ["", totals_line(scorecard)]
    return "".join(line + "\n" for line in lines)


def _row(cells: list[tuple[str, str | None]], widths: list[int], color: bool, bold: bool = False) -> str:
    parts = []
    for (text, colour), width in zip(cells, widths):
        padded = text.ljust(width)
        parts.append(click.style(padded, fg=colour, bold=bold) if color and (colour or bold) else padded)
    return "  ".join(parts).rstrip()


def _details(program: ProgramVerdict, context: AuditContext) -> list[str]:
    verdict = "reproducible" if program.reproducible else "not reproducible"
    outline = program.outline
    lines = [_style(f"{outline.path}:{outline.line}: {verdict}", "green" if program.reproducible else "red", context.color, bold=True)]
    for area in areas():
        found = program.areas[area.key]
        if found.findings or found.warnings:
            lines.append(f"  {area.title}: {found.status}")
            lines += [f"    {_line(finding)}" for finding in found.findings]
            lines += [f"    warn: {_line(finding)}" for finding in found.warnings]
    if program.other:
        lines.append("  other")
        lines += [f"    {_line(finding)}" for finding in program.other]
    for report in program.probes:
        lines.append(f"  probe ({report.file}, {report.mode}): {report.status}")
        lines += [f"    {check.id} {check.setting}: {check.message}" for check in report.checks if check.severity in ("fail", "warn")]
    return lines


def _line(finding: Finding) -> str:
    label = fix_label(finding)
    return finding_line(finding) + (f" [{label}]" if label else "")


def _style(text: str, colour: str, color: bool, bold: bool = False) -> str:
    return click.style(text, fg=colour, bold=bold) if color else text
