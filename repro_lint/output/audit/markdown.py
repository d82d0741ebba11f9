"""The audit as GitHub-flavoured Markdown, for a pull-request comment or `$GITHUB_STEP_SUMMARY`: the
table with a mark per area, each program's findings in a folded section, the totals."""

from __future__ import annotations

from html import escape

from repro_lint.core.findings import Finding
from repro_lint.core.pages import page_url
from repro_lint.engine.scorecard import FAIL, NOT_APPLICABLE, PASS, WARN, ProgramVerdict, Scorecard, areas
from repro_lint.output.audit.context import AuditContext
from repro_lint.output.audit.text import mark, probe_mark
from repro_lint.output.audit.totals import fix_label, totals_line

_ICONS = {PASS: "✅", WARN: "⚠️", FAIL: "❌", NOT_APPLICABLE: "➖"}


def render(scorecard: Scorecard, context: AuditContext) -> str:
    probed = any(program.probes for program in scorecard.programs)
    header = ["Program", *(area.title.capitalize() for area in areas()), *(["Probe"] if probed else []), "Findings"]
    lines = ["## repro-lint audit", ""]
    if scorecard.programs:
        lines += ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
        for program in scorecard.programs:
            cells = [f"`{_cell(program.outline.path)}`"]
            cells += [f"{_ICONS[verdict.status]} {mark(verdict)}" for verdict in program.areas.values()]
            if probed:
                cells.append(probe_mark(program))
            cells.append(str(len(program.findings)))
            lines.append("| " + " | ".join(cells) + " |")
    else:
        lines.append("No programs found.")
    for program in scorecard.programs:
        if program.findings or any(report.status != "pass" for report in program.probes):
            lines += ["", *_details(program, context)]
    if scorecard.outside:
        lines += ["", f"{len(scorecard.outside)} findings are in code no program runs (library code, tests); `repro-lint check` lists them."]
    settings = f"repro-lint {context.version or ''} audit of {', '.join(f'`{path}`' for path in context.paths)}".replace("  ", " ")
    lines += ["", f"**{_text(totals_line(scorecard))}**", "", f"<sub>{settings}</sub>"]
    return "".join(line + "\n" for line in lines)


def _details(program: ProgramVerdict, context: AuditContext) -> list[str]:
    verdict = "reproducible" if program.reproducible else "not reproducible"
    lines = [f"<details><summary><code>{escape(program.outline.path)}</code>: {verdict}</summary>", ""]
    for area in areas():
        found = program.areas[area.key]
        if found.findings or found.warnings:
            lines.append(f"**{area.title.capitalize()}** ({found.status})")
            lines += [_item(finding, context) for finding in found.findings]
            lines += [_item(finding, context, "warn: ") for finding in found.warnings]
            lines.append("")
    if program.other:
        lines.append("**Other**")
        lines += [_item(finding, context) for finding in program.other]
        lines.append("")
    for report in program.probes:
        lines.append(f"**Probe** (`{report.file}`, {report.mode}): {report.status}")
        lines += [f"- {check.id} `{check.setting}`: {_text(check.message)}" for check in report.checks if check.severity in ("fail", "warn")]
        lines.append("")
    return [*lines, "</details>"]


def _item(finding: Finding, context: AuditContext, prefix: str = "") -> str:
    where = f"{finding.path}:" + (f"cell {finding.cell}:" if finding.cell is not None else "") + f"{finding.start.line}:{finding.start.column + 1}"
    url = page_url(finding.code, context.docs_url)
    code = f"[{finding.code}]({url})" if url else finding.code
    label = fix_label(finding)
    return f"- {prefix}`{where}` {code} {_text(finding.message)}" + (f" *({label})*" if label else "")


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def _text(text: str) -> str:
    """Text outside a code span, where `<` would start an HTML tag (quotes stay: a code span inside
    shows entities as written)."""
    return escape(text, quote=False)
