"""The audit as one JSON object: each program with its verdict per area and the findings behind it,
in the shape of `check --output-format json`, the findings of no program, and the totals."""

from __future__ import annotations

import json

from repro_lint.core.findings import Finding
from repro_lint.core.pages import page_url
from repro_lint.engine.probe_reports import ProbeReport
from repro_lint.engine.scorecard import ProgramVerdict, Scorecard
from repro_lint.output.audit.context import AuditContext
from repro_lint.output.audit.totals import totals
from repro_lint.output.json_output import finding_object


def render(scorecard: Scorecard, context: AuditContext) -> str:
    def found(findings: tuple[Finding, ...]) -> list[dict[str, object]]:
        return [{**finding_object(finding), "url": page_url(finding.code, context.docs_url)} for finding in findings]

    def program(verdict: ProgramVerdict) -> dict[str, object]:
        outline = verdict.outline
        return {
            "path": outline.path,
            "entry_line": outline.line,
            "modules": list(outline.modules),
            "trains": outline.trains,
            "saves_checkpoint": outline.saves_checkpoint,
            "launchers": list(verdict.launchers),
            "reproducible": verdict.reproducible,
            "areas": {
                key: {"status": area.status, "findings": found(area.findings), "warnings": found(area.warnings), "note": area.note or None}
                for key, area in verdict.areas.items()
            },
            "other": found(verdict.other),
            "probe": [_probe(report) for report in verdict.probes],
        }

    document = {
        "version": context.version,
        "generated": context.generated.isoformat(timespec="seconds"),
        "paths": list(context.paths),
        "config": context.config,
        "rules": sorted(scorecard.enabled),
        "programs": [program(verdict) for verdict in scorecard.programs],
        "outside_programs": found(scorecard.outside),
        "totals": totals(scorecard),
    }
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


def _probe(report: ProbeReport) -> dict[str, object]:
    return {
        "file": report.file,
        "mode": report.mode,
        "status": report.status,
        "script": report.script,
        "findings": [
            {"id": check.id, "severity": check.severity, "setting": check.setting, "message": check.message, "fix": check.fix}
            for check in report.checks
        ],
    }
