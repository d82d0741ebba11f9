"""GitLab Code Quality (a Code Climate subset): a JSON array of issues, each with its description,
check, severity, location and a fingerprint by which GitLab tells new issues from those the target
branch already has. Files are named relative to the repository root, which is what GitLab matches.

The fingerprint is made of what stays when code moves: the file, the rule, and the flagged source
(whitespace aside), not the line; findings alike in all three are told apart by their order."""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Sequence

from repro_lint.core.findings import Finding
from repro_lint.output.context import ReportContext, path_under_root, source_of
from repro_lint.output.json_output import cell_location

# Every finding is something to fix before the run can be trusted; Ruff reports its findings as
# `major` too (GitLab's scale: info, minor, major, critical, blocker).
SEVERITY = "major"


def _flagged(finding: Finding, context: ReportContext) -> str:
    """The source the finding spans, whitespace collapsed; its message where the source is unknown."""
    index = source_of(finding, context)
    if index is None:
        return finding.message
    return " ".join(index.text[index.offset(finding.start) : index.offset(finding.end)].split())


def issue(finding: Finding, path: str, fingerprint: str) -> dict[str, object]:
    description = finding.message if finding.cell is None else f"{cell_location(finding)}: {finding.message}"
    # A notebook's cell lines are not lines of the .ipynb file: its first line, as SARIF's region.
    lines = {"begin": finding.start.line, "end": finding.end.line} if finding.cell is None else {"begin": 1}
    return {
        "description": f"{finding.code} {description}",
        "check_name": finding.code,
        "fingerprint": fingerprint,
        "severity": SEVERITY,
        "location": {"path": path, "lines": lines},
    }


def render(findings: Sequence[Finding], context: ReportContext) -> str:
    seen: Counter[tuple[str, str, str]] = Counter()
    issues = []
    for finding in findings:
        path = path_under_root(finding.path, context.root) or finding.path
        key = (path, finding.code, _flagged(finding, context))
        seen[key] += 1
        digest = hashlib.md5("\0".join((*key, str(seen[key]))).encode(), usedforsecurity=False)  # GitLab's example hash
        issues.append(issue(finding, path, digest.hexdigest()))
    return json.dumps(issues, indent=2)
