"""The audit's report in the chosen format."""

from __future__ import annotations

from collections.abc import Callable

from repro_lint.engine.scorecard import Scorecard
from repro_lint.output.audit import html, json_report, markdown, text
from repro_lint.output.audit.context import AuditContext

RENDERERS: dict[str, Callable[[Scorecard, AuditContext], str]] = {
    "text": text.render,
    "markdown": markdown.render,
    "html": html.render,
    "json": json_report.render,
}


def render_audit(output_format: str, scorecard: Scorecard, context: AuditContext) -> str:
    if output_format not in RENDERERS:
        raise ValueError(f"unknown audit format {output_format!r}")
    return RENDERERS[output_format](scorecard, context)
