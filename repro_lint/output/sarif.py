"""SARIF 2.1.0 for GitHub code scanning and other SARIF viewers: one run, the reported rules described
from their documentation pages, one result per finding with its fix as replacements."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from importlib import metadata
from pathlib import PurePosixPath
from urllib.parse import quote

from repro_lint.output.json_output import cell_location, finding_object
from repro_lint.pages import page_text, page_url
from repro_lint.problems import Problem
from repro_lint.rules.catalog import CATALOG
from repro_lint.rules.base import Finding

SCHEMA_URI = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
# Every finding is something to fix before the run can be trusted; flake8 and Ruff report them all as
# errors too, and GitHub only fails a check on `error`.
LEVEL = "error"
_WHAT_IT_DOES = re.compile(r"^## What it does\n(?P<body>.*?)(?=^## |\Z)", re.MULTILINE | re.DOTALL)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s")


def tool_version() -> str | None:
    try:
        return metadata.version("repro-lint")
    except metadata.PackageNotFoundError:
        return None


def _descriptions(code: str) -> tuple[str, str, str | None]:
    """(short, full, page) for a rule: the page's "What it does" section, first sentence and whole."""
    page = page_text(code)
    match = _WHAT_IT_DOES.search(page) if page else None
    if match is None:
        fallback = CATALOG[code].name.replace("-", " ")
        return fallback, fallback, page
    full = " ".join(match.group("body").split())
    return _SENTENCE_END.split(full, maxsplit=1)[0], full, page


def rule_descriptor(code: str) -> dict[str, object]:
    short, full, page = _descriptions(code)
    descriptor: dict[str, object] = {
        "id": code,
        "name": CATALOG[code].name,
        "shortDescription": {"text": short},
        "fullDescription": {"text": full},
        "defaultConfiguration": {"level": LEVEL},
    }
    if page is not None:
        descriptor["help"] = {"text": page, "markdown": page}
    descriptor["helpUri"] = page_url(code)
    return descriptor


def artifact_uri(path: str) -> str:
    """A relative path stays relative (GitHub resolves it against the checkout); an absolute one
    becomes a `file://` URI."""
    posix = PurePosixPath(path)
    if posix.is_absolute():
        return "file://" + quote(posix.as_posix())
    return quote(posix.as_posix())


def _region(line: object, column: object, end_line: object, end_column: object) -> dict[str, object]:
    # finding_object's columns are already 1-based, as SARIF's are.
    return {"startLine": line, "startColumn": column, "endLine": end_line, "endColumn": end_column}


def _fix(fix: Mapping[str, object], location: dict[str, str]) -> dict[str, object]:
    edits = fix["edits"]
    assert isinstance(edits, list)
    replacements = [
        {
            "deletedRegion": _region(edit["line"], edit["column"], edit["end_line"], edit["end_column"]),
            "insertedContent": {"text": edit["content"]},
        }
        for edit in edits
    ]
    return {
        "description": {"text": fix["message"]},
        "artifactChanges": [{"artifactLocation": location, "replacements": replacements}],
        "properties": {"applicability": fix["applicability"]},
    }


def result(finding: Finding, rule_index: int) -> dict[str, object]:
    data = finding_object(finding)
    location = {"uri": artifact_uri(finding.path)}
    region = _region(data["line"], data["column"], data["end_line"], data["end_column"])
    message = finding.message
    if finding.cell is not None:
        # A notebook's cell lines are not lines of the .ipynb file a viewer shows: the region is
        # the file's first line, as Ruff does, and the message and properties say where in the cell.
        message = f"{cell_location(finding)}: {message}"
        region = {"startLine": 1}
    sarif: dict[str, object] = {
        "ruleId": finding.code,
        "ruleIndex": rule_index,
        "level": LEVEL,
        "message": {"text": message},
        "locations": [{"physicalLocation": {"artifactLocation": location, "region": region}}],
    }
    fix = data["fix"]
    if finding.cell is not None:
        sarif["properties"] = {key: data[key] for key in ("cell", "line", "column", "end_line", "end_column")}
    elif isinstance(fix, dict):
        # Replacements count lines of the file; in a notebook they would land in its JSON.
        sarif["fixes"] = [_fix(fix, location)]
    return sarif


def invocation(problems: Sequence[Problem]) -> dict[str, object]:
    """Whether the run did its whole job, and, as notifications, the files it failed on or skipped."""
    notifications = [
        {
            "level": "error" if problem.kind == "error" else "warning",
            "message": {"text": f"repro-lint {'failed on' if problem.kind == 'error' else 'skipped'} this file: {problem.summary}"},
            "locations": [{"physicalLocation": {"artifactLocation": {"uri": artifact_uri(problem.path)}}}],
        }
        for problem in problems
    ]
    return {"executionSuccessful": all(problem.kind != "error" for problem in problems), "toolExecutionNotifications": notifications}


def sarif_log(findings: Sequence[Finding], problems: Sequence[Problem] = ()) -> dict[str, object]:
    codes = sorted({finding.code for finding in findings})
    index = {code: position for position, code in enumerate(codes)}
    driver: dict[str, object] = {"name": "repro-lint"}
    version = tool_version()
    if version is not None:
        driver["version"] = version
    driver["rules"] = [rule_descriptor(code) for code in codes]
    run = {
        "tool": {"driver": driver},
        # Positions count characters (code points), as LibCST does, not UTF-16 units (SARIF's default).
        "columnKind": "unicodeCodePoints",
        "results": [result(finding, index[finding.code]) for finding in findings],
        "invocations": [invocation(problems)],
    }
    return {"$schema": SCHEMA_URI, "version": "2.1.0", "runs": [run]}


def render(findings: Sequence[Finding], problems: Sequence[Problem] = ()) -> str:
    return json.dumps(sarif_log(findings, problems), indent=2)
