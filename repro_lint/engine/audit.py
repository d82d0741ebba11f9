"""The audit's run: lint as `check` does (same discovery, settings, cache and engine), then give each
program the findings that belong to it and the launch scripts and configs that start it.

A finding belongs to every program whose modules hold its file, except a program rule's finding at
an entry's main guard (where they report "this program never seeds torch"), which belongs to that
entry's program alone. A finding in a launch script belongs to the programs its launches start, one
in a config to those whose launches name it (`--config_file ds.yaml`). What no program runs (library
code, tests, a script launching something the audit cannot name) is kept apart, never dropped."""

from __future__ import annotations

import posixpath
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from repro_lint.core.findings import Finding
from repro_lint.core.problems import Problem
from repro_lint.core.program_outline import ProgramOutline
from repro_lint.core.settings import Settings
from repro_lint.engine.discovery import SCANNED_SUFFIXES, discover
from repro_lint.engine.engine import Engine
from repro_lint.engine.modules import Project, group_projects
from repro_lint.engine.pipeline import in_cells, run_problems
from repro_lint.engine.probe_reports import ProbeReport
from repro_lint.sources.shell_scan import started

_CONFIG_SUFFIXES = (".yaml", ".yml", ".json")


@dataclass(frozen=True)
class AuditedProgram:
    outline: ProgramOutline
    findings: tuple[Finding, ...]
    launchers: tuple[str, ...]  # the launch scripts and configs that start it
    probes: tuple[ProbeReport, ...]  # the probe reports taken while it ran, or in its environment


@dataclass(frozen=True)
class AuditRun:
    programs: tuple[AuditedProgram, ...]
    outside: tuple[Finding, ...]  # the findings of no program
    findings: tuple[Finding, ...]
    problems: tuple[Problem, ...]
    unmatched_probes: tuple[ProbeReport, ...]  # reports of a script that is no program audited


def audit_paths(
    paths: Sequence[Path],
    settings: Settings,
    *,
    use_cache: bool = False,
    jobs: int = 1,
    progress: bool = False,
    probes: Sequence[ProbeReport] = (),
) -> AuditRun:
    projects = group_projects(discover(paths, settings), paths, settings)
    engine = Engine(settings, use_cache, jobs, progress)
    findings = in_cells(engine.findings(projects), projects)
    reported = {module.display for project in projects for module in project.modules if module.report}
    programs = sorted((program for program in engine.programs if program.path in reported), key=lambda program: program.path)
    entries = [program.path for program in programs]
    launchers = _launchers(projects, entries)
    by_path: dict[str, list[Finding]] = {}
    for finding in findings:
        by_path.setdefault(finding.path, []).append(finding)
    at_entry = {(program.path, program.line) for program in programs}
    probed = {id(report): _resolve(report.script, ".", entries) if report.script is not None else entries for report in probes}
    claimed: set[int] = set()
    audited = []
    for program in programs:
        mine = [
            finding
            for path in (*program.modules, *launchers.get(program.path, ()))
            for finding in by_path.get(path, ())
            if not (path != program.path and _at_an_entry(finding, at_entry))
        ]
        claimed.update(map(id, mine))
        own_probes = tuple(report for report in probes if program.path in probed[id(report)])
        audited.append(AuditedProgram(program, tuple(sorted(mine, key=lambda f: f.sort_key)), tuple(sorted(launchers.get(program.path, ()))), own_probes))
    outside = tuple(finding for finding in findings if id(finding) not in claimed)
    unmatched = tuple(report for report in probes if not probed[id(report)])
    return AuditRun(tuple(audited), outside, tuple(findings), tuple(run_problems(engine, projects)), unmatched)


def _at_an_entry(finding: Finding, entries: set[tuple[str, int]]) -> bool:
    """A program rule's finding about the program of that entry (reported at its main guard)."""
    return finding.start.column == 0 and (finding.path, finding.start.line) in entries


def _launchers(projects: Iterable[Project], programs: Sequence[str]) -> dict[str, set[str]]:
    """For each program, the reported launch scripts that start it and the configs they name."""
    found: dict[str, set[str]] = {}
    for project in projects:
        configs = [module.display for module in project.modules if module.report and module.display.endswith(_CONFIG_SUFFIXES)]
        for module in project.modules:
            if not (module.report and module.display.endswith(SCANNED_SUFFIXES) and not module.display.endswith(_CONFIG_SUFFIXES)):
                continue
            folder = posixpath.dirname(module.display)
            for launch in started(module.text):
                for program in _resolve(launch.script.text.rstrip(";"), folder, programs):
                    named = [
                        config
                        for word in launch.arguments
                        if word.text.endswith(_CONFIG_SUFFIXES)
                        for config in _resolve(word.text.rpartition("=")[2], folder, configs)
                    ]
                    found.setdefault(program, set()).update([module.display, *named])
    return found


def _resolve(written: str, folder: str, candidates: Sequence[str]) -> list[str]:
    """The one file of `candidates` that a path written in a file of `folder` names: relative to that
    folder, else the only candidate ending with the part of it that is known (`$DIR/train.py`, a
    script launched after a `cd`). None where several could be meant: a wrong program would be judged."""
    exact = posixpath.normpath(posixpath.join(folder, written))
    if exact in candidates:
        return [exact]
    known: list[str] = []
    for part in reversed(written.split("/")):
        if not part or part in (".", "..") or "$" in part or "`" in part:
            break
        known.insert(0, part)
    if not known:
        return []
    tail = "/".join(known)
    matching = [candidate for candidate in candidates if candidate == tail or candidate.endswith("/" + tail)]
    return matching if len(matching) == 1 else []
