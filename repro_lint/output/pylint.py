"""pylint's parseable shape, `path:line: [CODE] message`, which editors, review bots and CI
problem matchers read. A notebook's finding is on the file's first line, its message naming the
cell, as in the SARIF and GitHub formats."""

from __future__ import annotations

from collections.abc import Sequence

from repro_lint.core.findings import Finding
from repro_lint.output.context import ReportContext
from repro_lint.output.json_output import cell_location


def line(finding: Finding) -> str:
    if finding.cell is None:
        return f"{finding.path}:{finding.start.line}: [{finding.code}] {finding.message}"
    return f"{finding.path}:1: [{finding.code}] {cell_location(finding)}: {finding.message}"


def render(findings: Sequence[Finding], context: ReportContext) -> str:
    return "\n".join(map(line, findings))
