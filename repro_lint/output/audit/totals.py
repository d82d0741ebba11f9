"""What every format of the audit closes with: counts of programs, failing areas and findings."""

from __future__ import annotations

from repro_lint.core.findings import Applicability, Finding
from repro_lint.engine.scorecard import Scorecard, areas


def totals(scorecard: Scorecard) -> dict[str, object]:
    """The JSON report's `totals`, which the other formats say in words."""
    findings = scorecard.findings
    return {
        "programs": len(scorecard.programs),
        "reproducible": scorecard.reproducible,
        "not_reproducible": len(scorecard.programs) - scorecard.reproducible,
        "failing": {area.key: scorecard.failing(area.key) for area in areas()},
        "findings": len(findings),
        "fixable": sum(finding.fix is not None for finding in findings),
        "outside_programs": len(scorecard.outside),
    }


def totals_line(scorecard: Scorecard) -> str:
    counted = totals(scorecard)
    programs = counted["programs"]
    line = f"{_plural(programs, 'program')}: {counted['reproducible']} reproducible, {counted['not_reproducible']} not"  # type: ignore[arg-type]
    failing = [f"{area.title} {scorecard.failing(area.key)}" for area in areas() if scorecard.failing(area.key)]
    if failing:
        line += f" (failing: {', '.join(failing)})"
    line += f". {_plural(len(scorecard.findings), 'finding')}"
    fixes = _fixes(scorecard.findings)
    if fixes:
        line += f" ({fixes})"
    if scorecard.outside:
        line += f", {len(scorecard.outside)} in code no program runs"
    return line + "."


def fix_label(finding: Finding) -> str:
    """"safe fix", "unsafe fix" or ""."""
    return "" if finding.fix is None else f"{finding.fix.applicability.value} fix"


def _fixes(findings: tuple[Finding, ...]) -> str:
    safe = sum(finding.fix is not None and finding.fix.applicability is Applicability.SAFE for finding in findings)
    unsafe = sum(finding.fix is not None and finding.fix.applicability is Applicability.UNSAFE for finding in findings)
    hints = [f"{safe} fixable with --fix"] if safe else []
    if unsafe:
        hints.append(f"{unsafe} more with --fix --unsafe-fixes")
    return ", ".join(hints)


def _plural(count: object, word: str) -> str:
    return f"{count} {word}" if count == 1 else f"{count} {word}s"
