"""The audit as one self-contained HTML page: inline CSS, no script, nothing fetched, so it opens
from a CI artifact or an e-mail as it is. The table, each program's details in a folded section,
the findings linked to their rule's page (published under `docs-url`, else included at the end of
the page), and when, by which version and with which settings it was made."""

from __future__ import annotations

from html import escape

from repro_lint.core.findings import Finding
from repro_lint.core.pages import page_text, page_url
from repro_lint.engine.scorecard import FAIL, NOT_APPLICABLE, PASS, WARN, ProgramVerdict, Scorecard, areas
from repro_lint.output.audit.context import AuditContext
from repro_lint.output.audit.text import mark, probe_mark
from repro_lint.output.audit.totals import fix_label, totals_line

_STYLE = """
body { font: 14px/1.45 system-ui, sans-serif; margin: 2em; color: #1f2328; }
table { border-collapse: collapse; margin: 1em 0; }
th, td { border: 1px solid #d0d7de; padding: 4px 10px; text-align: left; }
th { background: #f6f8fa; }
code, pre { font: 12px ui-monospace, monospace; }
pre { background: #f6f8fa; padding: 1em; white-space: pre-wrap; }
.pass { background: #dafbe1; } .fail { background: #ffebe9; } .warn { background: #fff8c5; } .na { color: #656d76; }
details { margin: .5em 0; } summary { cursor: pointer; }
ul { margin: .2em 0 .6em; } .meta { color: #656d76; }
"""
_CLASSES = {PASS: "pass", WARN: "warn", FAIL: "fail", NOT_APPLICABLE: "na"}
_PROBE_CLASSES = {"pass": "pass", "warn": "warn", "fail": "fail", "error": "fail"}


def render(scorecard: Scorecard, context: AuditContext) -> str:
    probed = any(program.probes for program in scorecard.programs)
    header = ["Program", *(area.title.capitalize() for area in areas()), *(["Probe"] if probed else []), "Findings"]
    rows = [_row(index, program, probed) for index, program in enumerate(scorecard.programs)]
    body = [
        "<h1>repro-lint audit</h1>",
        f'<p class="meta">{_meta(scorecard, context)}</p>',
        "<table>",
        "<tr>" + "".join(f"<th>{escape(title)}</th>" for title in header) + "</tr>",
        *rows,
        "</table>" if scorecard.programs else "</table><p>No programs found.</p>",
        f"<p><strong>{escape(totals_line(scorecard))}</strong></p>",
        "<h2>Programs</h2>",
        *(_details(index, program, context) for index, program in enumerate(scorecard.programs)),
    ]
    if scorecard.outside:
        body += [
            f"<details><summary>{len(scorecard.outside)} findings in code no program runs</summary>",
            _findings(scorecard.outside, context),
            "</details>",
        ]
    if context.docs_url is None:
        body += _rule_pages(scorecard)
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>repro-lint audit</title>\n<style>{_STYLE}</style>\n</head>\n<body>\n" + "\n".join(body) + "\n</body>\n</html>\n"
    )


def _meta(scorecard: Scorecard, context: AuditContext) -> str:
    paths = ", ".join(f"<code>{escape(path)}</code>" for path in context.paths)
    config = f"<code>{escape(context.config)}</code>" if context.config else "none (the defaults)"
    codes = " ".join(sorted(scorecard.enabled))
    return (
        f"Made {escape(context.generated.isoformat(timespec='seconds'))} by repro-lint {escape(context.version or 'of unknown version')}"
        f" on {paths}. Configuration: {config}. Rules: {escape(codes)}."
    )


def _row(index: int, program: ProgramVerdict, probed: bool) -> str:
    anchor = f"program-{index + 1}"
    cells = [f'<td><a href="#{anchor}"><code>{escape(program.outline.path)}</code></a></td>']
    cells += [f'<td class="{_CLASSES[verdict.status]}" title="{escape(verdict.note)}">{escape(mark(verdict))}</td>' for verdict in program.areas.values()]
    if probed:
        status = program.probes[0].status if len(program.probes) == 1 else ""
        cells.append(f'<td class="{_PROBE_CLASSES.get(status, "na")}">{escape(probe_mark(program))}</td>')
    cells.append(f"<td>{len(program.findings)}</td>")
    return "<tr>" + "".join(cells) + "</tr>"


def _details(index: int, program: ProgramVerdict, context: AuditContext) -> str:
    outline = program.outline
    verdict = "reproducible" if program.reproducible else "not reproducible"
    parts = [
        f'<details id="program-{index + 1}"{"" if program.reproducible else " open"}>',
        f"<summary><code>{escape(outline.path)}</code> (line {outline.line}): {verdict}</summary>",
        f"<p>{'Trains' if outline.trains else 'Never trains'}; runs {len(outline.modules)} module{'s' if len(outline.modules) != 1 else ''}"
        + (f"; started by {', '.join(f'<code>{escape(path)}</code>' for path in program.launchers)}" if program.launchers else "")
        + ".</p>",
        "<ul>",
    ]
    for area in areas():
        found = program.areas[area.key]
        why = f": {escape(found.note)}" if found.note else f" ({escape(area.passes)})" if found.status == PASS else ""
        parts.append(f'<li><span class="{_CLASSES[found.status]}">{escape(area.title)}: {escape(found.status)}</span>{why}')
        if found.findings or found.warnings:
            parts.append(_findings(found.findings, context) + _findings(found.warnings, context, "warn: "))
        parts.append("</li>")
    if program.other:
        parts.append(f"<li>other{_findings(program.other, context)}</li>")
    for report in program.probes:
        checks = "".join(
            f"<li>{escape(check.severity)}: {escape(check.id)} <code>{escape(check.setting)}</code>: {escape(check.message)} (fix: {escape(check.fix)})</li>"
            for check in report.checks
            if check.severity in ("fail", "warn")
        )
        parts.append(
            f'<li><span class="{_PROBE_CLASSES[report.status]}">probe: {escape(report.status)}</span> '
            f"(<code>{escape(report.file)}</code>, {escape(report.mode)})" + (f"<ul>{checks}</ul>" if checks else "") + "</li>"
        )
    return "\n".join([*parts, "</ul>", "</details>"])


def _findings(findings: tuple[Finding, ...], context: AuditContext, prefix: str = "") -> str:
    if not findings:
        return ""
    items = []
    for finding in findings:
        where = f"{finding.path}:" + (f"cell {finding.cell}:" if finding.cell is not None else "") + f"{finding.start.line}:{finding.start.column + 1}"
        url = page_url(finding.code, context.docs_url) or f"#rule-{finding.code}"
        label = fix_label(finding)
        items.append(
            f'<li>{escape(prefix)}<code>{escape(where)}</code> <a href="{escape(url)}">{finding.code}</a> {escape(finding.message)}'
            + (f" <em>({escape(label)})</em>" if label else "")
            + "</li>"
        )
    return "<ul>" + "".join(items) + "</ul>"


def _rule_pages(scorecard: Scorecard) -> list[str]:
    """The pages of the rules the findings name, for their links to land on."""
    codes = sorted({finding.code for finding in scorecard.findings})
    if not codes:
        return []
    parts = ["<h2>Rules</h2>"]
    for code in codes:
        text = page_text(code) or f"{code}: no documentation page found."
        parts.append(f'<details id="rule-{code}"><summary>{code}</summary><pre>{escape(text)}</pre></details>')
    return parts

