"""SARIF 2.1.0 for GitHub code scanning and other SARIF viewers: one run, the reported rules described
from their documentation pages, one result per finding with its fix as replacements. Files are named
relative to the repository root (`%SRCROOT%`), which is what GitHub matches, whatever folder the run
started in."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from urllib.parse import quote

from repro_lint.core.catalog import CATALOG
from repro_lint.core.findings import Finding
from repro_lint.core.pages import page_text, page_url
from repro_lint.core.problems import Problem
from repro_lint.output.context import ReportContext, path_under_root
from repro_lint.output.json_output import cell_location, finding_object

SCHEMA_URI = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
# Every finding is something to fix before the run can be trusted; flake8 and Ruff report them all as
# errors too, and GitHub only fails a check on `error`.
LEVEL = "error"
SRCROOT = "%SRCROOT%"  # the name SARIF's specification and GitHub give the root of the checkout
_WHAT_IT_DOES = re.compile(r"^## What it does\n(?P<body>.*?)(?=^## |\Z)", re.MULTILINE | re.DOTALL)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s")


def tool_version() -> str | None:
    from importlib import metadata  # here: a run reporting in another format never loads it

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


def rule_descriptor(code: str, docs_url: str | None) -> dict[str, object]:
    """The rule, with its page inline as `help` (a code-scanning alert shows it without a link to follow)
    and `helpUri` only where the pages are published."""
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
    url = page_url(code, docs_url)
    if url is not None:
        descriptor["helpUri"] = url
    return descriptor


def artifact_location(reported: str, root: Path) -> dict[str, str]:
    """A file under the root as a URI relative to `%SRCROOT%`; one outside it as an absolute `file://` URI."""
    relative = path_under_root(reported, root)
    if relative is None:
        return {"uri": Path(os.path.abspath(reported)).as_uri()}
    return {"uri": quote(relative), "uriBaseId": SRCROOT}


def _folder_uri(folder: Path) -> str:
    uri = folder.as_uri()
    return uri if uri.endswith("/") else uri + "/"  # a base URI names a folder only with its slash


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


def result(finding: Finding, rule_index: int, root: Path) -> dict[str, object]:
    data = finding_object(finding)
    location = artifact_location(finding.path, root)
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


def invocation(problems: Sequence[Problem], root: Path) -> dict[str, object]:
    """Whether the run did its whole job, and, as notifications, the files it failed on or skipped."""
    notifications = [
        {
            "level": "error" if problem.kind == "error" else "warning",
            "message": {"text": f"repro-lint {'failed on' if problem.kind == 'error' else 'skipped'} this file: {problem.summary}"},
            "locations": [{"physicalLocation": {"artifactLocation": artifact_location(problem.path, root)}}],
        }
        for problem in problems
    ]
    return {"executionSuccessful": all(problem.kind != "error" for problem in problems), "toolExecutionNotifications": notifications}


def sarif_log(findings: Sequence[Finding], context: ReportContext) -> dict[str, object]:
    codes = sorted({finding.code for finding in findings})
    index = {code: position for position, code in enumerate(codes)}
    driver: dict[str, object] = {"name": "repro-lint"}
    version = tool_version()
    if version is not None:
        driver["version"] = version
    driver["rules"] = [rule_descriptor(code, context.docs_url) for code in codes]
    run = {
        "tool": {"driver": driver},
        "originalUriBaseIds": {SRCROOT: {"uri": _folder_uri(context.root)}},
        # Positions count characters (code points), as LibCST does, not UTF-16 units (SARIF's default).
        "columnKind": "unicodeCodePoints",
        "results": [result(finding, index[finding.code], context.root) for finding in findings],
        "invocations": [invocation(context.problems, context.root)],
    }
    return {"$schema": SCHEMA_URI, "version": "2.1.0", "runs": [run]}


def render(findings: Sequence[Finding], context: ReportContext) -> str:
    return json.dumps(sarif_log(findings, context), indent=2)
