"""GitHub Actions workflow commands: each finding becomes an `::error` annotation on its lines of the
pull request's diff."""

from __future__ import annotations

from collections.abc import Sequence

from repro_lint.output.json_output import finding_object
from repro_lint.rules.base import Finding


def escape_data(text: str) -> str:
    """The message part, escaped as @actions/core's `escapeData` does (`%` first, so it is not doubled)."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """A `key=value` property: also `:` and `,`, which would otherwise end the value."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def annotation(finding: Finding) -> str:
    data = finding_object(finding)  # 1-based columns, as GitHub wants
    properties = {
        "file": finding.path,
        "line": data["line"],
        "col": data["column"],
        "endLine": data["end_line"],
        "endColumn": data["end_column"],
        "title": f"{finding.code} {finding.name}",
    }
    listed = ",".join(f"{key}={escape_property(str(value))}" for key, value in properties.items())
    return f"::error {listed}::{escape_data(finding.message)}"


def render(findings: Sequence[Finding]) -> str:
    return "\n".join(annotation(finding) for finding in findings)
