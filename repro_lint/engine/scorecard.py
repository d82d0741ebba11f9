"""The audit's verdicts: each program judged in each area (`core/areas.json` maps areas to rule
codes) as pass, warn, fail or n/a, and the totals the reports close with."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import TYPE_CHECKING

from repro_lint.core.findings import Finding
from repro_lint.core.program_outline import ProgramOutline
from repro_lint.engine.discovery import SCANNED_SUFFIXES
from repro_lint.engine.probe_reports import ProbeReport

if TYPE_CHECKING:  # the audit's engine, and the launch scripts' parser it loads, are for audits only
    from repro_lint.engine.audit import AuditedProgram, AuditRun

PASS, WARN, FAIL, NOT_APPLICABLE = "pass", "warn", "fail", "n/a"


@dataclass(frozen=True)
class Area:
    key: str
    title: str
    codes: frozenset[str]
    warn: frozenset[str]
    files: str  # "python" or "launch"
    passes: str
    applies: str | None  # a name in _APPLIES; None: every program
    not_applicable: str


@cache
def areas() -> tuple[Area, ...]:
    data = json.loads(resources.files("repro_lint.core").joinpath("areas.json").read_text(encoding="utf-8"))
    return tuple(
        Area(
            entry["key"],
            entry["title"],
            frozenset(entry["codes"]),
            frozenset(entry["warn"]),
            entry["files"],
            entry["passes"],
            entry.get("applies"),
            entry.get("not_applicable", ""),
        )
        for entry in data["areas"]
    )


_APPLIES: dict[str, Callable[[AuditedProgram], bool]] = {
    "saves_checkpoint": lambda program: program.outline.saves_checkpoint,
    "launched": lambda program: bool(program.launchers),
}


@dataclass(frozen=True)
class AreaVerdict:
    status: str
    findings: tuple[Finding, ...]  # those that fail the area
    warnings: tuple[Finding, ...]  # of opt-in rules: shown, never failing it
    note: str  # why the area is n/a


@dataclass(frozen=True)
class ProgramVerdict:
    outline: ProgramOutline
    areas: Mapping[str, AreaVerdict]  # by area key, in the order of `areas()`
    other: tuple[Finding, ...]  # of rules outside every area: syntax errors, unused noqa comments
    launchers: tuple[str, ...]
    probes: tuple[ProbeReport, ...]

    @property
    def reproducible(self) -> bool:
        return all(verdict.status != FAIL for verdict in self.areas.values())

    @property
    def findings(self) -> tuple[Finding, ...]:
        listed = [finding for verdict in self.areas.values() for finding in (*verdict.findings, *verdict.warnings)]
        return tuple(sorted({id(finding): finding for finding in [*listed, *self.other]}.values(), key=lambda finding: finding.sort_key))


@dataclass(frozen=True)
class Scorecard:
    programs: tuple[ProgramVerdict, ...]
    outside: tuple[Finding, ...]  # findings in code no program runs
    findings: tuple[Finding, ...]  # every finding of the run
    run: AuditRun
    enabled: frozenset[str]

    @property
    def reproducible(self) -> int:
        return sum(program.reproducible for program in self.programs)

    def failing(self, area: str) -> int:
        return sum(program.areas[area].status == FAIL for program in self.programs)


def judge(run: AuditRun, enabled: frozenset[str]) -> Scorecard:
    """The verdicts of every program of `run`, under the rules `enabled`."""
    return Scorecard(tuple(_program(program, enabled) for program in run.programs), run.outside, run.findings, run, enabled)


def _program(program: AuditedProgram, enabled: frozenset[str]) -> ProgramVerdict:
    verdicts = {}
    placed: set[int] = set()
    for area in areas():
        mine = [finding for finding in program.findings if _in_files(finding, area.files)]
        failing = tuple(finding for finding in mine if finding.code in area.codes)
        warnings = tuple(finding for finding in mine if finding.code in area.warn)
        placed.update(map(id, failing + warnings))
        verdicts[area.key] = _verdict(area, program, failing, warnings, enabled)
    other = tuple(finding for finding in program.findings if id(finding) not in placed)
    return ProgramVerdict(program.outline, verdicts, other, program.launchers, program.probes)


def _verdict(area: Area, program: AuditedProgram, failing: tuple[Finding, ...], warnings: tuple[Finding, ...], enabled: frozenset[str]) -> AreaVerdict:
    if failing:
        return AreaVerdict(FAIL, failing, warnings, "")
    if not (area.codes | area.warn) & enabled:
        return AreaVerdict(NOT_APPLICABLE, (), (), "none of its rules is selected")
    if not warnings and area.applies is not None and not _APPLIES[area.applies](program):
        return AreaVerdict(NOT_APPLICABLE, (), (), area.not_applicable)
    return AreaVerdict(WARN if warnings else PASS, (), warnings, "")


def _in_files(finding: Finding, files: str) -> bool:
    return finding.path.endswith(SCANNED_SUFFIXES) == (files == "launch")
