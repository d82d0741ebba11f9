"""The one engine every front-end calls: lint paths or a source text, and fix.

Per file: read, parse once, run the local rules and collect facts (analysis.py). Per project: join
the facts into a program model and run the program-level rules. Fixes are applied as text edits,
re-linted and applied again until nothing changes (bounded).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from repro_lint.cache import AnalysisCache
from repro_lint.analysis import FileAnalysis, ModuleIdentity, analyze, parses, syntax_error
from repro_lint.config import Settings
from repro_lint.declared import declared
from repro_lint.discovery import SCANNED_SUFFIXES, SourcePath, discover, project_files, project_root
from repro_lint.fixes import MAX_FIX_ROUNDS, applicable, apply_fixes, unified_diff, write_atomically
from repro_lint.program import ProjectModel
from repro_lint.registry import REGISTRY
from repro_lint.rules.base import ProgramRule, Rule
from repro_lint.rules.base import Finding
from repro_lint.source import UnreadableSource, read_source
from repro_lint.sources import scanner_for, validator_for


@dataclass
class _Module:
    """One file of a project: `report` is False for files read only for their facts."""

    identity: ModuleIdentity
    display: str
    text: str
    report: bool
    path: Path | None = None
    analysis: FileAnalysis | None = None
    encoding: str = "utf-8"


@dataclass
class _Project:
    root: Path | None
    modules: list[_Module]


@dataclass
class LintResult:
    findings: list[Finding]
    fixed: int = 0
    diffs: list[str] = field(default_factory=list)


class Engine:
    def __init__(self, settings: Settings, use_cache: bool = False) -> None:
        self.settings = settings
        self.use_cache = use_cache
        self._cache: AnalysisCache | None = None
        enabled = settings.enabled_codes
        chosen = [REGISTRY[code] for code in sorted(enabled)]
        self.local_rules: list[type[Rule]] = [rule for rule in chosen if issubclass(rule, Rule)]
        self.program_rules: list[ProgramRule] = [rule() for rule in chosen if issubclass(rule, ProgramRule)]
        self.enabled = enabled

    def _analyze(self, module: _Module) -> FileAnalysis:
        if module.analysis is None:
            scanner = scanner_for(module.display)  # launch scripts and configs
            if scanner is not None:
                module.analysis = scanner(module.text, module.display)
            else:
                rules = self.local_rules if module.report else []
                module.analysis = self._analyze_python(module, rules)
        return module.analysis

    def _analyze_python(self, module: _Module, rules: list[type[Rule]]) -> FileAnalysis:
        identity = f"{module.identity}:{module.report}"
        cached = self._cache.load(module.display, identity, module.text) if self._cache else None
        if cached is not None:
            return cached
        analysis = analyze(module.text, module.display, module.identity, rules, self.settings)
        if self._cache is not None:
            self._cache.store(module.display, identity, module.text, analysis)
        return analysis

    def findings(self, projects: Sequence[_Project]) -> list[Finding]:
        found: list[Finding] = []
        for project in projects:
            modules = project.modules
            self._cache = AnalysisCache(project.root, repr(self.settings)) if self.use_cache and project.root else None
            analyses = [self._analyze(module) for module in modules]
            model = ProjectModel(
                (analysis.facts for analysis in analyses if analysis.facts is not None), self.settings.entry_points
            )
            if self.program_rules:
                entries = [program.entry.path for program in model.programs]
                model.declared = declared(project.root, entries, self.settings.target_torch_version)
            by_display = {module.display: module for module in modules if module.report}
            candidates = [finding for module in modules if module.report for finding in self._analyze(module).findings]
            candidates = [finding for finding in candidates if self._keep_local(finding, by_display, model)]
            # Program rules know modules by their project-relative path; report them under the display path.
            by_relative = {module.identity.relative_path: module for module in modules if module.report}
            for rule in self.program_rules:
                candidates.extend(
                    replace(finding, path=by_relative[finding.path].display)
                    for finding in rule.check(model)
                    if finding.path in by_relative
                )
            found.extend(finding for finding in candidates if self._reported(finding, by_display[finding.path]))
        return sorted(found, key=lambda finding: finding.sort_key)

    @staticmethod
    def _keep_local(finding: Finding, modules: dict[str, _Module], model: ProjectModel) -> bool:
        rule = REGISTRY[finding.code]
        if not (isinstance(rule, type) and issubclass(rule, Rule)):
            return True
        module = modules[finding.path].identity.name
        if rule.training_only and model.only_reached_by_non_training_programs(module, finding.start.line):
            return False
        condition = rule.program_condition_for(finding)
        return not condition or model.reached_by_program_where(module, condition)

    def _reported(self, finding: Finding, module: _Module) -> bool:
        if finding.code not in self.enabled:
            return False
        if finding.code in self.settings.ignored_for(self._config_relative(module)):
            return False
        analysis = self._analyze(module)
        return not analysis.suppressions.suppresses(finding.code, finding.start.line)

    def _config_relative(self, module: _Module) -> str:
        if module.path is not None and self.settings.config_dir is not None:
            try:
                return module.path.relative_to(self.settings.config_dir).as_posix()
            except ValueError:
                pass
        return module.display

    def fix(self, projects: Sequence[_Project], unsafe: bool) -> tuple[list[Finding], int]:
        """Apply fixes round after round until none applies; returns the findings left and the count fixed."""
        fixed = 0
        for _ in range(MAX_FIX_ROUNDS):
            findings = self.findings(projects)
            by_path: dict[str, list[Finding]] = {}
            for finding in findings:
                if applicable(finding, unsafe):
                    by_path.setdefault(finding.path, []).append(finding)
            progress = False
            for project in projects:
                for module in project.modules:
                    fixes = [finding.fix for finding in by_path.get(module.display, ()) if finding.fix is not None]
                    if not fixes:
                        continue
                    text, count = apply_fixes(module.text, fixes, validator_for(module.display) or parses)
                    if count:
                        module.text, module.analysis = text, None
                        fixed += count
                        progress = True
            if not progress:
                return findings, fixed
        return self.findings(projects), fixed


def _unreadable(display: str, reason: str) -> FileAnalysis:
    return syntax_error(display, "", reason, 1, 0)


def _module_for(path: Path, display: str, root: Path, report: bool) -> _Module | None:
    identity = ModuleIdentity.from_relative_path(path.relative_to(root).as_posix())
    try:
        text, encoding = read_source(path)
    except UnreadableSource as error:
        if not report:
            return None
        module = _Module(identity, display, "", report, path)
        module.analysis = _unreadable(display, str(error))
        return module
    return _Module(identity, display, text, report, path, encoding=encoding)


def _projects(sources: Sequence[SourcePath], given: Sequence[Path], settings: Settings) -> list[_Project]:
    """Group the files to lint by project, adding the project's other modules for their facts."""
    roots: dict[Path | None, list[SourcePath]] = {}
    for source in sources:
        roots.setdefault(project_root(source.path.parent), []).append(source)
    projects = []
    for root, members in sorted(roots.items(), key=lambda item: str(item[0])):
        if root is None:
            # Outside any project (a downloaded archive): each folder given on the command line is
            # one project, so an entry script still sees its sibling modules.
            folders: dict[Path, list[_Module]] = {}
            for source in members:
                base = _given_folder(source.path, given)
                module = _module_for(source.path, source.display, base, True)
                if module is not None:
                    folders.setdefault(base, []).append(module)
            projects.extend(_Project(base, modules) for base, modules in sorted(folders.items()))
            continue
        reported = {source.path for source in members}
        modules = [_module_for(source.path, source.display, root, True) for source in members]
        if any(source.path.suffix not in SCANNED_SUFFIXES for source in members):
            # Python modules need the project's other modules for their facts; scripts and configs do not.
            modules += [_module_for(path, path.as_posix(), root, False) for path in project_files(root, settings) if path not in reported]
        projects.append(_Project(root, [module for module in modules if module is not None]))
    return projects


def _given_folder(path: Path, given: Sequence[Path]) -> Path:
    folders = [folder.resolve() for folder in given if folder.is_dir() and folder.resolve() in path.parents]
    return max(folders, key=lambda folder: len(folder.parts)) if folders else path.parent


def lint_paths(
    paths: Sequence[Path],
    settings: Settings,
    *,
    fix: bool = False,
    unsafe_fixes: bool = False,
    diff: bool = False,
    use_cache: bool = False,
) -> LintResult:
    """Lint files and folders. With `fix`, write the fixed files (atomically); with `diff`, only
    return the fixes as unified diffs. With `use_cache`, unchanged files are not analysed again."""
    projects = _projects(discover(paths, settings), paths, settings)
    engine = Engine(settings, use_cache)
    if not (fix or diff):
        return LintResult(engine.findings(projects))
    originals = {id(module): module.text for project in projects for module in project.modules}
    findings, fixed = engine.fix(projects, unsafe_fixes)
    result = LintResult(findings, fixed)
    for module in _changed(projects, originals):
        if diff:
            result.diffs.append(unified_diff(module.display, originals[id(module)], module.text))
        elif module.path is not None:
            write_atomically(module.path, module.text, module.encoding)
    return result


def _changed(projects: Iterable[_Project], originals: dict[int, str]) -> list[_Module]:
    return [module for project in projects for module in project.modules if module.report and module.text != originals[id(module)]]


def _single(text: str, path: str) -> list[_Project]:
    identity = ModuleIdentity.from_relative_path(Path(path).name if path.endswith(".py") else "module.py")
    return [_Project(None, [_Module(identity, path, text, True)])]


def lint_source(text: str, path: str = "<string>.py", settings: Settings | None = None) -> list[Finding]:
    """Lint one source text as a program of its own."""
    return Engine(settings or Settings()).findings(_single(text, path))


def fix_source(text: str, path: str = "<string>.py", settings: Settings | None = None, unsafe: bool = False) -> str:
    """The text after applying every applicable fix (safe ones, plus unsafe ones when asked)."""
    projects = _single(text, path)
    Engine(settings or Settings()).fix(projects, unsafe)
    return projects[0].modules[0].text
