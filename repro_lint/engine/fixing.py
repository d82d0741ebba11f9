"""Writing what the fix rounds changed (or showing it as diffs), and adding `noqa` comments for every
finding (`--add-noqa`): atomic writes, and a file that cannot be written keeps its findings."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from pathlib import Path

from repro_lint.analysis.suppression import NOT_SILENCED_BY_ADD_NOQA, add_noqa, takes_noqa
from repro_lint.core.problems import Problem
from repro_lint.core.source import unpacked
from repro_lint.engine.engine import Engine
from repro_lint.engine.fixes import NotWritten, unified_diff, write_atomically
from repro_lint.engine.modules import Project, SourceModule
from repro_lint.sources import scanner_for, validator_for


def add_noqa_comments(engine: Engine, projects: list[Project]) -> tuple[int, list[Problem]]:
    """Add `# noqa: CODES` for every finding and write the files. A comment that does not silence its
    finding where it went (in a YAML block scalar, say) is taken out again: that finding stays reported.
    Returns the count of comments added and the files that could not be written."""
    wanted: dict[str, dict[int, list[str]]] = {}
    for finding in engine.findings(projects):
        if finding.code not in NOT_SILENCED_BY_ADD_NOQA and takes_noqa(finding.path):
            wanted.setdefault(finding.path, {}).setdefault(finding.start.line, []).append(finding.code)
    engine._analyze_pending(projects)  # the last run's findings may have spared the analyses, whose suppressions are needed
    modules = {module.display: module for project in projects for module in project.modules if module.report and module.display in wanted}
    originals = {display: module.text for display, module in modules.items()}
    placed: dict[str, dict[int, int]] = {}
    for display, module in modules.items():
        python = module.notebook is not None or scanner_for(display) is None
        text, placed[display] = add_noqa(module.text, wanted[display], engine._analyze(module).suppressions, python)
        if validator_for(display)(text):
            module.text, module.analysis = text, None
        else:
            placed[display] = {}
    failed: dict[str, set[int]] = {}
    for finding in engine.findings(projects):
        if finding.code in wanted.get(finding.path, {}).get(finding.start.line, ()) and finding.start.line in placed[finding.path]:
            failed.setdefault(finding.path, set()).add(placed[finding.path][finding.start.line])
    added, problems = 0, []
    for display, module in modules.items():
        if display in failed:
            lines, old = module.text.split("\n"), originals[display].split("\n")
            for line in failed[display]:
                lines[line - 1] = old[line - 1]
            module.text, module.analysis = "\n".join(lines), None
        count = len(set(placed[display].values()) - failed.get(display, set()))
        if module.text != originals[display] and module.path is not None:
            text, read = (module.notebook.updated(module.text), module.notebook.raw) if module.notebook else (module.text, originals[display])
            try:
                write_atomically(module.path, text, module.encoding, read)
            except NotWritten as error:
                problems.append(Problem(display, "skipped", f"not written: {error.reason}"))
                module.text, module.analysis = originals[display], None  # its findings stay unsilenced
                continue
        added += count
    return added, problems


def changed_modules(projects: Iterable[Project], fixed: Mapping[int, tuple[bytes, Counter[str]]]) -> list[tuple[SourceModule, str]]:
    """The modules reported whose fixes changed them, each with its text before: only those texts are
    kept through the fix rounds, not every module's, and packed."""
    found = []
    for project in projects:
        for module in project.modules:
            if module.report and id(module) in fixed and module.text != (before := unpacked(fixed[id(module)][0])):
                found.append((module, before))
    return found


def fix_diffs(projects: Iterable[Project], fixed: Mapping[int, tuple[bytes, Counter[str]]]) -> list[str]:
    """The fixes as unified diffs, per cell in notebooks."""
    return [
        module.notebook.diff(module.display, module.text) if module.notebook else unified_diff(module.display, before, module.text)
        for module, before in changed_modules(projects, fixed)
    ]


def write_fixes(projects: Iterable[Project], fixed: Mapping[int, tuple[bytes, Counter[str]]]) -> tuple[list[Problem], int]:
    """Write the fixed files, atomically. A file that cannot be written gets its text from before its
    fixes back; returns those files, and the count of their fixes, which are lost."""
    unwritten: list[Problem] = []
    lost = 0
    for module, before in changed_modules(projects, fixed):
        if module.path is None or module.overridden:  # an override's fixed text goes back to its caller
            continue
        text = module.notebook.updated(module.text) if module.notebook else module.text
        try:
            write_atomically(module.path, text, module.encoding, module.notebook.raw if module.notebook else before)
        except NotWritten as error:
            unwritten.append(Problem(module.display, "skipped", f"not fixed: {error.reason}"))
            lost += sum(fixed[id(module)][1].values())
            module.text, module.analysis = before, None
    return unwritten, lost


def fixed_overrides(projects: Iterable[Project], fixed: Mapping[int, tuple[bytes, Counter[str]]]) -> dict[Path, bytes]:
    """Each overridden file that the fixes changed, as it would be written (its encoding kept; a
    notebook as its JSON): an override is handed back, never written."""
    return {
        module.path: (module.notebook.updated(module.text) if module.notebook else module.text).encode(module.encoding)
        for module, _ in changed_modules(projects, fixed)
        if module.overridden and module.path is not None
    }


def fixes_by_file(projects: Iterable[Project], fixed: Mapping[int, tuple[bytes, Counter[str]]]) -> dict[str, dict[str, int]]:
    """For `--show-fixes`: each changed file's fixes, counted by code."""
    return {module.display: dict(sorted(fixed[id(module)][1].items())) for module, _ in changed_modules(projects, fixed)}
