"""GitHub Actions workflow commands: each finding becomes an `::error` annotation on its lines of the
pull request's diff. GitHub matches `file=` against the repository root, so files are named from it."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from repro_lint.core.findings import Finding
from repro_lint.core.problems import Problem
from repro_lint.output.context import ReportContext, path_under_root
from repro_lint.output.json_output import cell_location, finding_object


def escape_data(text: str) -> str:
    """The message part, escaped as @actions/core's `escapeData` does (`%` first, so it is not doubled)."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """A `key=value` property: also `:` and `,`, which would otherwise end the value."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def _file(reported: str, root: Path) -> str:
    return path_under_root(reported, root) or reported


def annotation(finding: Finding, root: Path) -> str:
    data = finding_object(finding)  # 1-based columns, as GitHub wants
    properties: dict[str, object] = {"file": _file(finding.path, root)}
    message = finding.message
    if finding.cell is None:
        properties.update(line=data["line"], col=data["column"], endLine=data["end_line"], endColumn=data["end_column"])
    else:
        # Cell lines are not lines of the .ipynb file: a file-level annotation that names the cell.
        message = f"{cell_location(finding)}: {message}"
    properties["title"] = f"{finding.code} {finding.name}"
    listed = ",".join(f"{key}={escape_property(str(value))}" for key, value in properties.items())
    return f"::error {listed}::{escape_data(message)}"


def problem_annotation(problem: Problem, root: Path) -> str:
    """A file repro-lint failed on (an error) or skipped (a warning), annotated on the whole file."""
    level, verb = ("error", "failed on") if problem.kind == "error" else ("warning", "skipped")
    properties = f"file={escape_property(_file(problem.path, root))},title=repro-lint {verb} this file"
    return f"::{level} {properties}::{escape_data(problem.summary)}"


def render(findings: Sequence[Finding], context: ReportContext) -> str:
    annotations = [annotation(finding, context.root) for finding in findings]
    return "\n".join([*annotations, *(problem_annotation(problem, context.root) for problem in context.problems)])
