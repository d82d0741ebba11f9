"""The one engine every front-end calls: lint paths or a source text, and fix.

Per file: read, parse once, run the local rules and collect facts (analysis.py). Per project: join
the facts into a program model and run the program-level rules. Fixes are applied as text edits,
re-linted and applied again until nothing changes (bounded).
"""

from __future__ import annotations

import hashlib
import os
import re
from functools import partial
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from repro_lint.engine.cache import AnalysisCache, LastRun, RecordedRun, prune
from repro_lint.core.settings import Settings
from repro_lint.program.declared import Declared, declared
from repro_lint.engine.discovery import SCANNED_SUFFIXES, SourcePath, discover, display_path, project_files, project_root
from repro_lint.facts.shift import same_but_for_moved_lines, without_calls, without_imports, without_unseen_functions
from repro_lint.analysis.result import FileAnalysis, ModuleIdentity, syntax_error
from repro_lint.engine.fixes import MAX_FIX_ROUNDS, NotWritten, applicable, apply_fixes, unified_diff, write_atomically
from repro_lint.engine.heap import collector_paused, kept_out_of_collections
from repro_lint.program.module_names import ModuleNames
from repro_lint.core.problems import Problem, internal_error
from repro_lint.engine.progress import Progress
from repro_lint.core.findings import Finding
from repro_lint.rules.base import ProgramRule, Rule
from repro_lint.core.source import UnreadableSource, encoded, packed, read_source, unpacked
from repro_lint.sources import notebook, scanner_for, validator_for
from repro_lint.analysis.suppression import NOT_SILENCED_BY_ADD_NOQA, add_noqa, takes_noqa, unused_noqa
from repro_lint.rules.unused_noqa import UNUSED_NOQA
from repro_lint.engine.workers import Task, analyse_all

if TYPE_CHECKING:
    from repro_lint.program.model import ProjectModel


class _Module:
    """One file of a project: `report` is False for files read only for their facts. The file is read
    when its text is first needed, so a project that the last run's record answers reads none.

    Once read, the text is held compressed (`pack`), and the workers get it so: a big project's texts
    take more memory than all its facts (123 MB of `str` on transformers, 16 MB compressed), and
    after the analysis only REP002, fixes, diffs and `--add-noqa` read them again."""

    def __init__(self, identity: ModuleIdentity, display: str, report: bool, path: Path | None = None, text: str | None = None) -> None:
        self.identity = identity
        self.display = display
        self.report = report
        self.path = path
        self.analysis: FileAnalysis | None = None
        self.encoding = "utf-8"
        self._notebook: notebook.Notebook | None = None  # `text` is then its cells joined into one module
        self._text = text
        self._packed: bytes | None = None
        self._digest: bytes | None = None
        self.edited = False  # by a fix or a noqa comment, in memory: the file's times no longer describe the text

    @property
    def text(self) -> str:
        return self.load()

    @text.setter
    def text(self, text: str) -> None:
        self._text, self._packed, self._digest = text, None, None
        self.edited = True

    @property
    def digest(self) -> bytes:
        """The text's hash, for the cache's keys: computed once, however many keys it enters. The
        text is packed then: hashing every file of a project for the last run's record must not hold
        them all whole."""
        if self._digest is None:
            self._digest = hashlib.sha256(encoded(self.text)).digest()
            self.pack()
        return self._digest

    @property
    def unread_but_known(self) -> bool:
        """The file was not read, and its text's hash is known from the last run's record."""
        return self._digest is not None and self._text is None and self._packed is None

    def assume_digest(self, digest: bytes) -> None:
        """The text's hash, known without reading it (the file's times are those the last run saw)."""
        if self._text is None and self._packed is None:
            self._digest = digest

    def pack(self) -> bytes:
        """The text compressed, as the module holds it from now on."""
        if self._packed is None:
            self._packed, self._text = packed(self.text), None
        return self._packed

    @property
    def notebook(self) -> notebook.Notebook | None:
        """The notebook's cells; None for any other file, which is not read for the answer."""
        if not notebook.is_notebook(self.display):
            return None
        if self._text is None and self._packed is None:
            self.load()  # the cells are read with the file; a text read already is not unpacked for them
        return self._notebook

    def raw(self) -> bytes | None:
        """The file's bytes as they are now, without keeping them; the text where there is no file
        or it was edited in this run. None where the file cannot be read."""
        if self.path is None or self.edited:
            return self.text.encode()
        try:
            return self.path.read_bytes()
        except OSError:
            return None

    def load(self) -> str:
        """The text, read now if not yet. A file that cannot be read gets its analysis here: REP001
        where it is reported, no facts where it is read only for them."""
        if self._text is not None:
            return self._text
        if self._packed is not None:
            return unpacked(self._packed)
        assert self.path is not None, "a module without a file is made with its text"
        try:
            text, self.encoding = read_source(self.path)
            cells = notebook.read(text) if notebook.is_notebook(self.display) else None
        except (UnreadableSource, notebook.NotebookError) as error:
            self._text = ""
            where = (error.line, error.column) if isinstance(error, notebook.NotebookError) else (1, 0)
            self.analysis = syntax_error(self.display, str(error), *where) if self.report else FileAnalysis(self.display, [], None)
            return ""
        except Exception as error:
            self._text = ""
            self.analysis = _failure(self, error)
            return ""
        self._notebook = cells
        self._text = cells.code if cells is not None else text
        return self._text


# What a local finding asks of the program model: its module, the innermost function holding it (not
# its line: an edit above it moves the line, not the answer), whether its rule fires only in training
# code, and the condition some program reaching the module must meet.
_Question = tuple[str, str | None, bool, tuple[str, ...]]


@dataclass
class _Project:
    root: Path | None
    modules: list[_Module]


@dataclass
class LintResult:
    findings: list[Finding]
    fixed: int = 0
    diffs: list[str] = field(default_factory=list)
    noqa_added: int = 0
    problems: list[Problem] = field(default_factory=list)  # files or programs not (fully) analysed


class Engine:
    def __init__(
        self, settings: Settings, use_cache: bool = False, jobs: int = 1, progress: bool = False, honour_noqa: bool = True
    ) -> None:
        self.settings = settings
        self.honour_noqa = honour_noqa  # flake8 --disable-noqa turns it off
        self.use_cache = use_cache
        self.jobs = jobs
        self.progress = progress
        self.enabled = settings.enabled_codes
        self.problems: list[Problem] = []  # of the project pass and of fixing; files' own are in their analyses
        # By the last `fix`: each fixed module's (by id) text before its fixes, and the fixes kept.
        self.fixes_applied: dict[int, tuple[str, int]] = {}

    @staticmethod
    def _analyze(module: _Module) -> FileAnalysis:
        assert module.analysis is not None, "findings() analyses every module first"
        return module.analysis

    def _cache_for(self, project: _Project) -> AnalysisCache | None:
        return AnalysisCache(project.root, repr(self.settings)) if self.use_cache and project.root else None

    def _analyze_pending(self, projects: Sequence[_Project]) -> None:
        """Analyse every module of every project not analysed yet, in one batch, so that the files
        that must be parsed (not in the cache) can be spread over worker processes."""
        self._analyze_modules([(module, self._cache_for(project)) for project in projects for module in project.modules])

    def _analyze_modules(self, modules: Sequence[tuple[_Module, AnalysisCache | None]]) -> None:
        pending: list[tuple[_Module, AnalysisCache | None]] = []
        with collector_paused():  # reading, hashing and unpickling leave no reference cycles
            for module, cache in modules:
                if module.analysis is not None:
                    continue
                scanner = scanner_for(module.display)  # launch scripts and configs: cheap, no parse
                if scanner is None and cache is not None and module.unread_but_known:
                    module.analysis = _cached(cache, module)  # unchanged since the last run: not read for it
                    if module.analysis is not None:
                        continue
                module.load()
                if module.analysis is None and scanner is not None:
                    try:
                        module.analysis = scanner(module.text, module.display)
                    except Exception as error:  # one file's bug must not cost the other files' findings
                        module.analysis = _failure(module, error)
                if module.analysis is None:
                    if cache is not None and (cached := _cached(cache, module)):
                        module.analysis = cached
                    else:
                        pending.append((module, cache))
                module.pack()  # before the next file is read: no more than one text is held whole
        tasks = [Task(module.pack(), module.display, module.identity, module.report) for module, _ in pending]
        progress = Progress(len(tasks)) if self.progress else None
        try:
            for index, analysis in analyse_all(tasks, self.settings, self.jobs):
                module, cache = pending[index]
                module.analysis = analysis
                if cache is not None and not _failed(analysis):  # kept at once: an interrupted audit still fills the cache
                    cache.store(module.display, _cache_identity(module), module.digest, analysis)
                if progress is not None:
                    progress.advance()
        finally:
            if progress is not None:
                progress.close()

    def findings(self, projects: Sequence[_Project]) -> list[Finding]:
        found: list[Finding] = []
        pending = []
        for project in projects:
            last_run = self._last_run(project)
            recorded = last_run.load() if last_run is not None else None
            answer = self._from_last_run(project, last_run, recorded) if last_run is not None and recorded is not None else None
            if answer is None:
                pending.append((project, last_run))
            else:
                found.extend(answer)
        self._analyze_pending([project for project, _ in pending])
        with kept_out_of_collections():  # the analyses, which the project pass reads and keeps
            for project, last_run in pending:
                found.extend(self._project_findings(project, last_run))
        return sorted(found, key=lambda finding: finding.sort_key)

    def _last_run(self, project: _Project) -> LastRun | None:
        if not (self.use_cache and project.root):
            return None
        files = [(module.display, _cache_identity(module), None if module.edited else module.path) for module in project.modules]
        return LastRun(project.root, f"{self.settings!r}:{self.honour_noqa}", files)

    def _from_last_run(self, project: _Project, last_run: LastRun, recorded: RecordedRun) -> list[Finding] | None:
        """The findings the last run's record gives, where the project has the same files, the
        declarations that decided them (read again from the entries' folders) are unchanged, and the
        changed files, analysed again, kept their facts: the project pass would then give what it gave.
        Facts whose lines moved do too, where no program finding is in that file or names its lines,
        and so do calls and imports added or removed that the pass cannot see, and changes to where
        fixes would edit the file, where no program finding is in it."""
        files = recorded.files
        # A record that reports more files than this run answers for its own: a run on the files of a
        # commit after an audit of the whole project, which also read launch scripts and configs
        # (which have no facts).
        displays = {module.display for module in project.modules}
        beyond = files.keys() - displays
        if not displays <= files.keys() or not all(display.endswith(SCANNED_SUFFIXES) for display in beyond):
            return None  # a file added or removed
        if not all(files[module.display].identity in _identities(module) for module in project.modules):
            return None  # a file reported now that the record read only for its facts
        same_files = not beyond and all(files[module.display].identity == _cache_identity(module) for module in project.modules)
        known = last_run.known_digests(recorded)
        for module, digest in zip(project.modules, known):
            if digest is not None:
                module.assume_digest(digest)
        changed = [module for module in project.modules if files[module.display].digest != module.digest]
        if recorded.entries is not None and self._declared(project, recorded.entries) != recorded.declared:
            return None
        reported = {module.display for module in project.modules if module.report}
        if not changed:
            if None in known and same_files:  # texts read for their hashes: the next run knows them by the files' times
                last_run.store(replace(recorded, files=last_run.files(module.digest for module in project.modules)))
            return [finding for finding in recorded.findings if finding.path in reported]
        cache = self._cache_for(project)
        assert cache is not None, "a project with a last run has a cache"
        self._analyze_modules([(module, cache) for module in changed])
        moved: list[_Module] = []
        names = ModuleNames(recorded.modules)
        for module in changed:
            before = cache.load(module.display, files[module.display].identity, files[module.display].digest)
            named_elsewhere = partial(_named_elsewhere, project, module)
            seen = _seen_by_the_pass(before, self._analyze(module), recorded, names, named_elsewhere) if before is not None else None
            if seen is None:
                return None
            if seen:
                moved.append(module)
        if any(_points_into(finding, module) for finding in recorded.program_findings for module in moved):
            return None
        displays = {module.display for module in changed}
        found = [finding for finding in recorded.findings if finding.path in reported and finding.path not in displays]
        for module in changed:
            if module.report:
                judged = self._module_findings(module, recorded.program_findings, recorded.verdicts)
                if judged is None:
                    return None  # a finding the program model was not asked about
                found.extend(judged)
        if same_files:  # else the record stays, with what it holds for the files this run does not report
            files = last_run.files(module.digest for module in project.modules)
            last_run.store(replace(recorded, findings=found, files=files, analyses=_analyses(project, cache)))
        return found

    def _declared(self, project: _Project, entries: Iterable[str]) -> Declared:
        return declared(project.root, entries, self.settings.target_torch_version)

    def _project_findings(self, project: _Project, last_run: LastRun | None) -> list[Finding]:
        # The rules and the program model are imported only here and in the workers: a run that the
        # last run's records answer never loads them, nor LibCST.
        from repro_lint.program.model import ProjectModel
        from repro_lint.rules.registry import REGISTRY

        chosen = [REGISTRY[code] for code in sorted(self.enabled)]
        program_rules = [rule() for rule in chosen if issubclass(rule, ProgramRule)]
        modules = project.modules
        analyses = [self._analyze(module) for module in modules]
        reported = [module for module in modules if module.report]
        where = _project_display(project)
        failures = len(self.problems)
        model: ProjectModel | None
        entries = None
        try:
            model = ProjectModel((analysis.facts for analysis in analyses if analysis.facts is not None), self.settings.entry_points)
            if program_rules:
                entries = tuple(program.entry.path for program in model.programs)
                model.declared = self._declared(project, entries)
        except Exception as error:  # without a model, the findings that need none are still reported
            self.problems.append(internal_error(where, error))
            model = None
        verdicts: dict[_Question, bool] = {}
        for module in reported:
            for finding in self._analyze(module).findings:
                question = _question(finding, module)
                if question is not None and question not in verdicts:
                    verdicts[question] = model is not None and self._judged(model, question, module)
        # Program rules know modules by their project-relative path; report them under the display path.
        by_relative = {module.identity.relative_path: module for module in reported}
        program_findings = []
        for rule in program_rules if model is not None else ():
            try:
                judged = list(rule.check(model))  # type: ignore[arg-type]
            except Exception as error:  # one rule's bug must not cost the other rules' findings
                self.problems.append(internal_error(where, error, rule.code))
                continue
            program_findings += [replace(finding, path=by_relative[finding.path].display) for finding in judged if finding.path in by_relative]
        found = []
        for module in reported:
            try:
                found += self._module_findings(module, program_findings, verdicts) or ()
            except Exception as error:
                self.problems.append(internal_error(module.display, error))
        cache = self._cache_for(project)
        complete = len(self.problems) == failures and not any(map(_failed, analyses))
        if last_run is not None and cache is not None and complete and model is not None:  # an incomplete run is not a record
            files = last_run.files(module.digest for module in modules)
            declared = model.declared if entries is not None else None
            analyses_kept = _analyses(project, cache)
            last_run.store(RecordedRun(found, entries, declared, files, program_findings, verdicts, analyses_kept, frozenset(model.modules), model.function_names))
            prune(cache.folder)  # after a full pass only: a run answered from its record must stay quick
        return found

    def _judged(self, model: ProjectModel, question: _Question, module: _Module) -> bool:
        """The verdict on a local finding's question; no (the finding is dropped) where judging it fails."""
        try:
            return _verdict(model, question)
        except Exception as error:
            self.problems.append(internal_error(module.display, error))
            return False

    def _module_findings(
        self, module: _Module, program_findings: Iterable[Finding], verdicts: Mapping[_Question, bool]
    ) -> list[Finding] | None:
        """A reported module's findings: its own that the program model keeps, and the program rules'
        in it, less those silenced; then REP002, once every other finding is judged (which `# noqa`
        comments suppressed one is known only then). None where a verdict is missing."""
        analysis = self._analyze(module)
        candidates = [finding for finding in program_findings if finding.path == module.display]
        for finding in analysis.findings:
            question = _question(finding, module)
            if question is not None and question not in verdicts:
                return None
            if question is None or verdicts[question]:
                candidates.append(finding)
        found = [finding for finding in candidates if self._reported(finding, module)]
        found.extend(self._unused_noqa(module))
        return found

    def _unused_noqa(self, module: _Module) -> list[Finding]:
        """REP002. Codes ignored for a file count as not run there; with `noqa` comments disabled,
        none suppressed anything and none is judged."""
        if UNUSED_NOQA not in self.enabled or not self.honour_noqa:
            return []
        ran = self.enabled - self.settings.ignored_for(self._config_relative(module))
        suppressions = self._analyze(module).suppressions
        if UNUSED_NOQA not in ran or not suppressions.noqas:  # else nothing to judge, and the text stays packed
            return []
        return unused_noqa(module.display, module.text, suppressions, ran)

    def _reported(self, finding: Finding, module: _Module) -> bool:
        if finding.code not in self.enabled:
            return False
        if finding.code in self.settings.ignored_for(self._config_relative(module)):
            return False
        analysis = self._analyze(module)
        return not (self.honour_noqa and analysis.suppressions.suppresses(finding.code, finding.start.line))

    def _config_relative(self, module: _Module) -> str:
        if module.path is not None and self.settings.config_dir is not None:
            try:
                return module.path.relative_to(self.settings.config_dir).as_posix()
            except ValueError:
                pass
        return module.display

    def fix(self, projects: Sequence[_Project], unsafe: bool) -> tuple[list[Finding], int]:
        """Apply fixes round after round until none applies; returns the findings left and the count
        fixed. A file whose fixes fail, or whose fixed text the analysis then fails on, gets its text
        back and is not fixed again: its fixes are lost, not the file."""
        fixed = 0
        before: dict[int, tuple[str, int]] = {}  # a fixed module's text before its first fix, and the fixes since
        broken: set[int] = set()
        self.fixes_applied = {}
        for _ in range(MAX_FIX_ROUNDS):
            findings = self.findings(projects)
            modules = [module for project in projects for module in project.modules]
            if self._give_back(modules, before, broken):
                fixed = sum(count for _, count in before.values())
                continue
            by_path: dict[str, list[Finding]] = {}
            for finding in findings:
                if applicable(finding, unsafe):
                    by_path.setdefault(finding.path, []).append(finding)
            progress = False
            for module in modules:
                fixes = [finding.fix for finding in by_path.get(module.display, ()) if finding.fix is not None]
                if not fixes or id(module) in broken:
                    continue
                try:
                    text, count = apply_fixes(module.text, fixes, validator_for(module.display))
                except Exception as error:
                    self.problems.append(internal_error(module.display, error, "while fixing it"))
                    broken.add(id(module))
                    continue
                if count:
                    original, done = before.get(id(module), (module.text, 0))
                    before[id(module)] = (original, done + count)
                    module.text, module.analysis = text, None
                    fixed += count
                    progress = True
            self.fixes_applied = dict(before)
            if not progress:
                return findings, fixed
        return self.findings(projects), fixed

    def _give_back(self, modules: Sequence[_Module], before: dict[int, tuple[str, int]], broken: set[int]) -> bool:
        """Give fixed modules whose analysis failed their text from before the fixes; whether any."""
        failed = [module for module in modules if id(module) in before and _failed(module.analysis)]
        for module in failed:
            problem = module.analysis.problem  # type: ignore[union-attr]
            self.problems.append(replace(problem, summary=f"after its fixes: {problem.summary}"))  # type: ignore[arg-type]
            module.text, module.analysis = before.pop(id(module))[0], None
            broken.add(id(module))
        return bool(failed)


def _project_display(project: _Project) -> str:
    """The project's folder as paths are shown: relative to the current folder where it is inside."""
    if project.root is None:
        return "."
    return display_path(project.root, Path.cwd().resolve())


def _failure(module: _Module, error: Exception) -> FileAnalysis:
    return FileAnalysis(module.display, [], None, problem=internal_error(module.display, error))


def _failed(analysis: FileAnalysis | None) -> bool:
    return analysis is not None and analysis.problem is not None and analysis.problem.kind == "error"


def _question(finding: Finding, module: _Module) -> _Question | None:
    """What a local finding asks of the program model, which keeps it where the answer is yes: are
    the programs reaching its line training ones, do those reaching its module meet its rule's
    condition. None for a finding that asks nothing."""
    from repro_lint.rules.registry import REGISTRY

    rule = REGISTRY[finding.code]
    if not (isinstance(rule, type) and issubclass(rule, Rule)):
        return None
    condition = tuple(rule.program_condition_for(finding))
    if not (rule.training_only or condition):
        return None
    facts = Engine._analyze(module).facts
    function = facts.function_at(finding.start.line) if facts is not None else None
    return (module.identity.name, function, rule.training_only, condition)


def _seen_by_the_pass(
    before: FileAnalysis,
    after: FileAnalysis,
    recorded: RecordedRun,
    names: ModuleNames,
    named_elsewhere: Callable[[Mapping[str, range]], bool],
) -> bool | None:
    """How the project pass sees the change from `before` to `after`: not at all (False); only in
    what it reports in this file (True), where lines moved or the places its fixes would edit
    changed; otherwise (None), it may see it. Calls and imports it cannot see (of a library's
    functions and modules), and functions added or removed that nothing names, are left out where
    the facts differ by more than moved lines."""
    old, new = before.facts, after.facts
    if old == new:
        return False
    if old is None or new is None:
        return None
    if not same_but_for_moved_lines(old, new):
        from repro_lint.program.model import is_inert  # the model loads LibCST, which a run answered from its record never does

        inert = partial(is_inert, module=new.module, names=names, function_names=recorded.function_names)
        # A module's fix facts are read only for the fixes of findings in that module: a fix edits its
        # finding's file alone (an edit holds positions, not a path).
        fixes_changed = old.fix != new.fix
        old, new = (replace(without_imports(without_calls(facts, inert), names.outside), fix=None) for facts in (old, new))
        old, new = without_unseen_functions(old, new, named_elsewhere)
        if not same_but_for_moved_lines(old, new):
            return None
        return fixes_changed or old != new
    return True


def _named_elsewhere(project: _Project, module: _Module, names: Mapping[str, range]) -> bool:
    """Whether one of `names` occurs as a word in `module` outside the lines given with it, or in
    another file of the project: where a call of a function of that name could be. Files not read in
    this run are read for it, once for all the names, as bytes, and not kept."""
    if not all(name.isascii() for name in names):
        return True  # searched for as ASCII bytes in files of any encoding
    words = {name: re.compile(rf"(?<!\w){re.escape(name)}(?!\w)", re.ASCII) for name in names}
    for number, line in enumerate(module.text.split("\n"), 1):  # as LineIndex counts
        if any(number not in names[name] and word.search(line) for name, word in words.items()):
            return True
    encoded = [name.encode() for name in names]
    any_word = re.compile(rf"(?<!\w)(?:{'|'.join(map(re.escape, names))})(?!\w)".encode(), re.ASCII)
    for other in project.modules:
        if other is not module:
            data = other.raw()
            # The substring test first: far quicker than the pattern, and most files hold no name.
            if data is None or (any(name in data for name in encoded) and any_word.search(data)):
                return True
    return False


def _points_into(finding: Finding, module: _Module) -> bool:
    """Whether a program finding is in `module`, or its message names a line there ("first use of
    torch randomness: models/net.py:6")."""
    return finding.path == module.display or f"{module.identity.relative_path}:" in finding.message


def _verdict(model: ProjectModel, question: _Question) -> bool:
    module, function, training_only, condition = question
    if training_only and model.only_reached_by_non_training_programs(module, function):
        return False
    return not condition or model.reached_by_program_where(module, condition)


def _cache_identity(module: _Module, report: bool | None = None) -> str:
    return f"{module.identity}:{module.report if report is None else report}"


def _identities(module: _Module) -> tuple[str, ...]:
    """The analyses that give what a run needs of the module: a file read only for its facts takes
    them from its reported analysis too (the rules do not change the facts)."""
    return (_cache_identity(module),) if module.report else (_cache_identity(module), _cache_identity(module, report=True))


def _analyses(project: _Project, cache: AnalysisCache) -> frozenset[str]:
    """The cache entries that may hold the project's analyses."""
    return frozenset(cache.name(module.display, identity, module.digest) for module in project.modules for identity in _identities(module))


def _cached(cache: AnalysisCache, module: _Module) -> FileAnalysis | None:
    """The module's analysis from the cache: after an audit of the whole project, a run on one file
    parses none of the others."""
    for identity in _identities(module):
        if (found := cache.load(module.display, identity, module.digest)) is not None:
            return found
    return None


def _module_for(path: Path, display: str, root: Path, report: bool) -> _Module:
    relative = path.relative_to(root).as_posix()
    identity = notebook.identity(relative) if notebook.is_notebook(relative) else ModuleIdentity.from_relative_path(relative)
    return _Module(identity, display, report, path)


def _projects(sources: Sequence[SourcePath], given: Sequence[Path], settings: Settings) -> list[_Project]:
    """Group the files to lint by project, adding the project's other modules for their facts."""
    roots: dict[Path | None, list[SourcePath]] = {}
    discovered = [source.path for source in sources]
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
                folders.setdefault(base, []).append(_module_for(source.path, source.display, base, True))
            projects.extend(_Project(base, modules) for base, modules in sorted(folders.items()))
            continue
        reported = {source.path for source in members}
        modules = [_module_for(source.path, source.display, root, True) for source in members]
        if any(source.path.suffix not in SCANNED_SUFFIXES for source in members):
            # Python modules need the project's other modules for their facts; scripts and configs do not.
            if any(folder.is_dir() and folder.resolve() == root for folder in given):
                # The walk of the root found them all already (some under a nested project's marker).
                inside = os.path.join(root, "")  # a prefix test: Path.parents builds a Path per level
                files = [path for path in discovered if path.suffix not in SCANNED_SUFFIXES and str(path).startswith(inside)]
            else:
                files = project_files(root, settings)
            # Shown nowhere, but the cache and the last run's record know files by it: as an audit of
            # the project names them, so that a run on some files takes the audit's analyses.
            cwd = Path.cwd().resolve()
            modules += [_module_for(path, display_path(path, cwd), root, False) for path in files if path not in reported]
        projects.append(_Project(root, modules))
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
    jobs: int = 1,
    progress: bool = False,
    add_noqa: bool = False,
    honour_noqa: bool = True,
) -> LintResult:
    """Lint files and folders. With `fix`, write the fixed files (atomically); with `diff`, only
    return the fixes as unified diffs. With `use_cache`, unchanged files are not analysed again;
    `jobs` processes parse the others; `progress` shows a counter on a watched stderr. With
    `add_noqa`, silence every finding with a `# noqa` comment instead; without `honour_noqa`, `noqa`
    comments and directives silence nothing."""
    projects = _projects(discover(paths, settings), paths, settings)
    engine = Engine(settings, use_cache, jobs, progress, honour_noqa)
    if add_noqa:
        return _add_noqa(engine, projects)
    if not (fix or diff):
        findings = engine.findings(projects)
        return LintResult(_in_cells(findings, projects), problems=_problems(engine, projects))
    findings, fixed = engine.fix(projects, unsafe_fixes)
    result = LintResult([], fixed)
    unwritten: list[Problem] = []
    for module, before in _changed(projects, engine.fixes_applied):
        if diff:
            result.diffs.append(module.notebook.diff(module.display, module.text) if module.notebook else unified_diff(module.display, before, module.text))
        elif module.path is not None:
            text = module.notebook.updated(module.text) if module.notebook else module.text
            try:
                write_atomically(module.path, text, module.encoding, module.notebook.raw if module.notebook else before)
            except NotWritten as error:
                unwritten.append(Problem(module.display, "skipped", f"not fixed: {error.reason}"))
                # Its findings are those of the text on disk, which keeps every one the fixes removed.
                result.fixed -= engine.fixes_applied[id(module)][1]
                module.text, module.analysis = before, None
    if unwritten:
        findings = engine.findings(projects)
    result.findings = _in_cells(findings, projects)
    result.problems = _problems(engine, projects) + unwritten
    return result


def _add_noqa(engine: Engine, projects: list[_Project]) -> LintResult:
    """Add `# noqa: CODES` for every finding and write the files. A comment that does not silence its
    finding where it went (in a YAML block scalar, say) is taken out again: that finding stays reported."""
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
    findings = engine.findings(projects)
    return LintResult(_in_cells(findings, projects), noqa_added=added, problems=_problems(engine, projects) + problems)


def _problems(engine: Engine, projects: Iterable[_Project]) -> list[Problem]:
    """The run's problems, each once, by path: the files' own and those of the project pass and fixing."""
    found = [module.analysis.problem for project in projects for module in project.modules if module.analysis is not None and module.analysis.problem is not None]
    return sorted(set(found + engine.problems), key=lambda problem: (problem.path, problem.kind, problem.summary))


def _in_cells(findings: list[Finding], projects: Iterable[_Project]) -> list[Finding]:
    """Findings in notebooks with their cell and positions within it (the engine counts lines of
    the joined cells)."""
    notebooks = {module.display: module for project in projects for module in project.modules if module.report and module.notebook}
    return [
        notebooks[finding.path].notebook.locate(finding, notebooks[finding.path].identity.relative_path)  # type: ignore[union-attr]
        if finding.path in notebooks
        else finding
        for finding in findings
    ]


def _changed(projects: Iterable[_Project], fixed: Mapping[int, tuple[str, int]]) -> list[tuple[_Module, str]]:
    """The modules reported whose fixes changed them, each with its text before: only those texts are
    kept through the fix rounds, not every module's."""
    return [
        (module, fixed[id(module)][0])
        for project in projects
        for module in project.modules
        if module.report and id(module) in fixed and module.text != fixed[id(module)][0]
    ]


def _single(text: str, path: str) -> list[_Project]:
    identity = ModuleIdentity.from_relative_path(Path(path).name if path.endswith(".py") else "module.py")
    return [_Project(None, [_Module(identity, path, True, text=text)])]


def lint_source(
    text: str, path: str = "<string>.py", settings: Settings | None = None, *, honour_noqa: bool = True
) -> list[Finding]:
    """Lint one source text as a program of its own."""
    return lint_text(text, path, settings, honour_noqa=honour_noqa).findings


def lint_text(text: str, path: str = "<string>.py", settings: Settings | None = None, *, honour_noqa: bool = True) -> LintResult:
    """Lint one source text as a program of its own: its findings, and what kept the analysis from it."""
    projects = _single(text, path)
    engine = Engine(settings or Settings(), honour_noqa=honour_noqa)
    findings = engine.findings(projects)
    return LintResult(findings, problems=_problems(engine, projects))


def fix_source(text: str, path: str = "<string>.py", settings: Settings | None = None, unsafe: bool = False) -> str:
    """The text after applying every applicable fix (safe ones, plus unsafe ones when asked)."""
    projects = _single(text, path)
    Engine(settings or Settings()).fix(projects, unsafe)
    return projects[0].modules[0].text
