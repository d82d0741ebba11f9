"""JSON Lines: each finding as one JSON object on a line of its own (the objects of the `json`
format), for tools that read a stream a line at a time."""

from __future__ import annotations

import json
from collections.abc import Sequence

from repro_lint.core.findings import Finding
from repro_lint.core.pages import page_url
from repro_lint.output.context import ReportContext
from repro_lint.output.json_output import finding_object


def render(findings: Sequence[Finding], context: ReportContext) -> str:
    return "\n".join(json.dumps({**finding_object(finding), "url": page_url(finding.code, context.docs_url)}) for finding in findings)
