"""The stages of a run, in order: discover the files and group them into projects; read, analyse each
file (cached) and run the project pass, with suppression (engine.py); fix, round after round, and
write (fixing.py); report the findings, in notebooks by cell, and the problems met on the way."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from repro_lint.core.findings import Finding
from repro_lint.core.problems import Problem
from repro_lint.core.settings import Settings
from repro_lint.engine.discovery import discover
from repro_lint.engine.engine import Engine
from repro_lint.engine.fixing import add_noqa_comments, fix_diffs, fixed_overrides, fixes_by_file, write_fixes
from repro_lint.engine.modules import Project, ReportedTexts, group_projects, single_project


@dataclass
class LintResult:
    findings: list[Finding]
    fixed: int = 0
    diffs: list[str] = field(default_factory=list)
    noqa_added: int = 0
    problems: list[Problem] = field(default_factory=list)  # files or programs not (fully) analysed
    # With `fix`: each overridden file that fixes changed, as it would be written (never written).
    fixed_sources: dict[Path, bytes] = field(default_factory=dict)
    fixed_by_file: dict[str, dict[str, int]] = field(default_factory=dict)  # with `fix` or `diff`: the fixes made, by code
    texts: ReportedTexts | None = None  # the reported files' texts, for reports that show source lines


def lint_paths(
    paths: Sequence[Path],
    settings: Settings,
    *,
    fix: bool = False,
    unsafe_fixes: bool = False,
    diff: bool = False,
    use_cache: bool = False,
    jobs: int = 1,
    progress: bool = False,
    add_noqa: bool = False,
    honour_noqa: bool = True,
    overrides: Mapping[Path, str | bytes] | None = None,
) -> LintResult:
    """Lint files and folders. With `fix`, write the fixed files (atomically); with `diff`, only
    return the fixes as unified diffs. With `use_cache`, unchanged files are not analysed again;
    `jobs` processes parse the others; `progress` shows each phase on a watched stderr. With
    `add_noqa`, silence every finding with a `# noqa` comment instead; without `honour_noqa`, `noqa`
    comments and directives silence nothing.

    `overrides` maps files to the text to lint instead of theirs on disk (standard input, an editor's
    unsaved buffers; bytes are decoded as a file's would be). A file given in `paths` is linted as if
    it held that text, in its project, whose other files are read from disk (or the cache); it need
    not exist. A file of the project not given counts with its override for the program rules. An
    overridden file is never written, and never cached as the file's: `fix` returns it fixed in
    `fixed_sources`."""
    overridden = {path.resolve(): text for path, text in (overrides or {}).items()}
    if add_noqa and overridden:
        raise ValueError("`add_noqa` writes files: it takes no overrides")
    projects = group_projects(discover(paths, settings, overridden.keys()), paths, settings, overridden)
    engine = Engine(settings, use_cache, jobs, progress, honour_noqa)
    if add_noqa:
        added, unwritten = add_noqa_comments(engine, projects)
        return _report(engine, projects, engine.findings(projects), unwritten, noqa_added=added)
    if not (fix or diff):
        return _report(engine, projects, engine.findings(projects))
    findings, fixed = engine.fix(projects, unsafe_fixes)
    if diff:
        result = _report(engine, projects, findings, fixed=fixed, diffs=fix_diffs(projects, engine.fixes_applied))
        result.fixed_by_file = fixes_by_file(projects, engine.fixes_applied)
        return result
    unwritten, lost = write_fixes(projects, engine.fixes_applied)
    if unwritten:
        findings = engine.findings(projects)  # those of the texts on disk, which keep what their fixes removed
    result = _report(engine, projects, findings, unwritten, fixed=fixed - lost)
    result.fixed_sources = fixed_overrides(projects, engine.fixes_applied)
    result.fixed_by_file = fixes_by_file(projects, engine.fixes_applied)  # less the files not written
    return result


def _report(
    engine: Engine,
    projects: Sequence[Project],
    findings: list[Finding],
    unwritten: Sequence[Problem] = (),
    *,
    fixed: int = 0,
    diffs: Sequence[str] = (),
    noqa_added: int = 0,
) -> LintResult:
    problems = run_problems(engine, projects) + list(unwritten)
    return LintResult(in_cells(findings, projects), fixed, list(diffs), noqa_added, problems, texts=ReportedTexts(projects))


def run_problems(engine: Engine, projects: Iterable[Project]) -> list[Problem]:
    """The run's problems, each once, by path: the files' own and those of the project pass and fixing."""
    found = [module.analysis.problem for project in projects for module in project.modules if module.analysis is not None and module.analysis.problem is not None]
    return sorted(set(found + engine.problems), key=lambda problem: (problem.path, problem.kind, problem.summary))


def in_cells(findings: list[Finding], projects: Iterable[Project]) -> list[Finding]:
    """Findings in notebooks with their cell and positions within it (the engine counts lines of
    the joined cells)."""
    notebooks = {module.display: module for project in projects for module in project.modules if module.report and module.notebook}
    return [
        notebooks[finding.path].notebook.locate(finding, notebooks[finding.path].identity.relative_path)  # type: ignore[union-attr]
        if finding.path in notebooks
        else finding
        for finding in findings
    ]


def lint_source(
    text: str, path: str = "<string>.py", settings: Settings | None = None, *, honour_noqa: bool = True
) -> list[Finding]:
    """Lint one source text as a program of its own."""
    return lint_text(text, path, settings, honour_noqa=honour_noqa).findings


def lint_text(text: str, path: str = "<string>.py", settings: Settings | None = None, *, honour_noqa: bool = True) -> LintResult:
    """Lint one source text as a program of its own: its findings, and what kept the analysis from it."""
    projects = single_project(text, path)
    engine = Engine(settings or Settings(), honour_noqa=honour_noqa)
    findings = engine.findings(projects)
    return LintResult(findings, problems=run_problems(engine, projects), texts=ReportedTexts(projects))


def fix_source(text: str, path: str = "<string>.py", settings: Settings | None = None, unsafe: bool = False) -> str:
    """The text after applying every applicable fix (safe ones, plus unsafe ones when asked)."""
    projects = single_project(text, path)
    Engine(settings or Settings()).fix(projects, unsafe)
    return projects[0].modules[0].text
