"""The JSON array of interfaces.md: one object per finding."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence

from repro_lint.core.findings import Edit, Finding
from repro_lint.core.pages import page_url
from repro_lint.engine.fixes import applicable
from repro_lint.output.context import ReportContext


def _edit(edit: Edit) -> dict[str, object]:
    return {
        "content": edit.content,
        "line": edit.start.line,
        "column": edit.start.column + 1,
        "end_line": edit.end.line,
        "end_column": edit.end.column + 1,
    }


def finding_object(finding: Finding) -> dict[str, object]:
    fix = finding.fix
    return {
        "code": finding.code,
        "name": finding.name,
        "message": finding.message,
        "path": finding.path,
        "line": finding.start.line,
        "column": finding.start.column + 1,
        "end_line": finding.end.line,
        "end_column": finding.end.column + 1,
        "cell": finding.cell,
        "fix": None
        if fix is None
        else {"applicability": fix.applicability.value, "message": fix.message, "edits": [_edit(edit) for edit in fix.edits]},
    }


def cell_location(finding: Finding) -> str:
    """Where a notebook finding is, for formats whose positions count the file's lines."""
    return f"cell {finding.cell}, line {finding.start.line}, column {finding.start.column + 1}"


def render(findings: Sequence[Finding], context: ReportContext) -> str:
    """Each finding with the address of its rule's page, null when the pages are published nowhere."""
    objects = [{**finding_object(finding), "url": page_url(finding.code, context.docs_url)} for finding in findings]
    return json.dumps(objects, indent=2)


def statistics(findings: Sequence[Finding], unsafe_fixes: bool) -> str:
    """`--statistics` as Ruff writes it in JSON: per code, most frequent first, its name, count, and
    whether `--fix` (with `--unsafe-fixes` when given) fixes any of its findings."""
    counts = Counter((finding.code, finding.name) for finding in findings)
    fixable = {finding.code for finding in findings if applicable(finding, unsafe_fixes)}
    rows = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    return json.dumps([{"code": code, "name": name, "count": count, "fixable": code in fixable} for (code, name), count in rows], indent=2)
