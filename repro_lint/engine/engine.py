"""The engine every front-end's run goes through: per-file analysis (cached, on worker processes),
the project pass, suppression, and fix rounds.

Per file: read, parse once, run the local rules and collect facts (analysis/python.py). Per
project: join the facts into a program model and run the program-level rules; a project unchanged
since the last run is answered from its record. Fixes are applied as text edits, re-linted and
applied again until nothing changes (bounded)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import ExitStack
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from repro_lint.analysis.result import FileAnalysis
from repro_lint.analysis.suppression import unused_noqa
from repro_lint.core.findings import Finding
from repro_lint.core.problems import Problem, internal_error
from repro_lint.core.program_outline import ProgramOutline
from repro_lint.core.records import forget_shared_beyond
from repro_lint.core.settings import Settings
from repro_lint.core.source import unpacked
from repro_lint.engine.cache import AnalysisCache, LastRun, RecordedResolutions, RecordedRun, ResolutionsRecord, prune
from repro_lint.engine.closure import OnItsOwn, needed
from repro_lint.engine.fixes import MAX_FIX_ROUNDS, applicable, apply_fixes
from repro_lint.engine.heap import collector_paused, freed_memory_returned, kept_out_of_collections
from repro_lint.engine.last_run import (
    Change,
    defined_names,
    facts_by_module,
    imports_unseen,
    in_no_program,
    moved_along,
    named_elsewhere,
    resolutions_holding,
    seen_by_the_pass,
    with_methods,
)
from repro_lint.engine.modules import Project, SourceModule, cache_entries, cache_identity, cached, failure, has_failed, identities, project_display
from repro_lint.engine.progress import MIN_FILES, Progress
from repro_lint.engine.workers import Task, analyse_all
from repro_lint.facts.shift import absent, read_by_name_otherwise
from repro_lint.program.declared import VERSION_SHOWN_BY, Declared, declared
from repro_lint.program.module_names import ModuleNames
from repro_lint.rules.base import ProgramRule, Rule, RuleMeta
from repro_lint.rules.unused_noqa import UNUSED_NOQA
from repro_lint.sources import scanner_for, validator_for

if TYPE_CHECKING:
    from repro_lint.facts.module_facts import ModuleFacts
    from repro_lint.program.call_graph import Resolutions
    from repro_lint.program.model import ProjectModel


# What a local finding asks of the program model: its module, the innermost function holding it (not
# its line: an edit above it moves the line, not the answer), whether its rule fires only in training
# code, and the condition some program reaching the module must meet.
_Question = tuple[str, str | None, bool, tuple[str, ...]]


class Engine:
    def __init__(
        self, settings: Settings, use_cache: bool = False, jobs: int = 1, progress: bool = False, honour_noqa: bool = True
    ) -> None:
        self.settings = settings
        self.honour_noqa = honour_noqa  # flake8 --disable-noqa turns it off
        self.use_cache = use_cache
        self.jobs = jobs
        self.progress = progress  # shown where a person watches, in a run of MIN_FILES files or more
        self.display = Progress(False)  # the current run's, set by `findings`
        self.enabled = settings.enabled_codes
        self.problems: list[Problem] = []  # of the project pass and of fixing; files' own are in their analyses
        # By the last `fix`: each fixed module's (by id) text before its fixes, packed, and the fixes kept, by code.
        self.fixes_applied: dict[int, tuple[bytes, Counter[str]]] = {}
        # The programs of the projects `findings` answered for, their files as displayed (for the audit).
        self.programs: list[ProgramOutline] = []

    @staticmethod
    def _analyze(module: SourceModule) -> FileAnalysis:
        assert module.analysis is not None, "findings() analyses every module first"
        return module.analysis

    def _cache_for(self, project: Project) -> AnalysisCache | None:
        return AnalysisCache(project.root, repr(self.settings)) if self.use_cache and project.root else None

    def _analyze_pending(self, projects: Sequence[Project]) -> None:
        """Analyse every module of every project not analysed yet, in one batch, so that the files
        that must be parsed (not in the cache) can be spread over worker processes."""
        self._analyze_modules([(module, self._cache_for(project)) for project in projects for module in project.modules])

    def _analyze_modules(self, modules: Sequence[tuple[SourceModule, AnalysisCache | None]]) -> None:
        forget_shared_beyond()  # the names the facts about to be loaded share (core/records.py)
        pending: list[tuple[SourceModule, AnalysisCache | None]] = []
        unread = [(module, cache) for module, cache in modules if module.analysis is None]
        with ExitStack() as kept:
            # Reading, hashing and unpickling leave no reference cycles.
            with collector_paused(), self.display.phase("reading", len(unread), "files") as reading:
                for module, cache in unread:
                    if not self._read(module, cache):
                        pending.append((module, cache))
                    reading.advance()
                # The analyses read, and those of an earlier fix round, stay to the run's end. Taken
                # out of collections before these resume: the first would traverse all of them (on
                # transformers, 0.6 s of a warm run's 9 s that reads 2,800 analyses), and the ones
                # while files are analysed here again, to free none; the collection after this
                # process's own analyses (workers.py) traverses only what they made. Thawed, they
                # join the oldest generation, which only a full collection traverses.
                if unread:
                    kept.enter_context(kept_out_of_collections())
            tasks = [Task(module.pack(), module.display, module.identity, module.report) for module, _ in pending]
            with self.display.phase("analysing", len(tasks), "files") as analysing:
                for index, analysis in analyse_all(tasks, self.settings, self.jobs):
                    module, cache = pending[index]
                    module.analysis = analysis
                    # Kept at once: an interrupted audit still fills the cache. An overridden text is no
                    # file's: each keystroke in an editor would add an entry.
                    if cache is not None and not module.overridden and not has_failed(analysis):
                        cache.store(module.display, cache_identity(module), module.digest, analysis)
                    analysing.advance()

    @staticmethod
    def _read(module: SourceModule, cache: AnalysisCache | None) -> bool:
        """Give the module its analysis where no parse is needed: a launch script's or config's scan,
        or the cache's; whether it got one. Its text is packed after: no more than one is held whole."""
        scanner = scanner_for(module.display)  # launch scripts and configs: cheap, no parse
        if scanner is None and cache is not None and module.unread_but_known:
            module.analysis = cached(cache, module)  # unchanged since the last run: not read for it
            if module.analysis is not None:
                return True
        module.load()  # a file that cannot be read gets its problem as its analysis here
        if module.analysis is None and scanner is not None:
            try:
                module.analysis = scanner(module.text, module.display)
            except Exception as error:  # one file's bug must not cost the other files' findings
                module.analysis = failure(module, error)
        if module.analysis is None and cache is not None:
            module.analysis = cached(cache, module)
        module.pack()
        return module.analysis is not None

    def findings(self, projects: Sequence[Project]) -> list[Finding]:
        self.display = Progress(self.progress and sum(len(project.modules) for project in projects) >= MIN_FILES)
        self.programs = []  # this call's: each fix round judges the programs again
        return sorted(self._findings(projects, read_alone=True), key=lambda finding: finding.sort_key)

    def _findings(self, projects: Sequence[Project], read_alone: bool) -> list[Finding]:
        found: list[Finding] = []
        pending = []
        for whole in projects:
            # The last run's record of the whole project (an audit) may answer a run on some of its
            # files; else only the modules their programs need are read (`read_alone`: those a file
            # read on its own needs, where it may be), and their own record tried.
            project = whole
            answer, last_run = self._answer(project)
            alone = partial(self._on_their_own, whole) if read_alone else None
            if answer is None and (project := needed(whole, whole.root if self.use_cache else None, alone)) is not whole:
                answer, last_run = self._answer(project)
            if answer is None:
                pending.append((whole, project, last_run))
            else:
                found.extend(answer)
        self._analyze_pending([project for _, project, _ in pending])
        refused = []
        # The pass keeps what it builds to its end, and its garbage holds few reference cycles (a few
        # thousand objects a pass on transformers, Megatron-LM and diffusers): collections during it
        # traversed millions of objects to free nothing, a sixth of a run after a one-file edit.
        with collector_paused():
            for whole, project, last_run in pending:
                answer = self._project_findings(project, last_run)
                if answer is None:
                    refused.append(whole)
                else:
                    found.extend(answer)
        # A file read on its own trained when loaded, and modules left out may import it, or one read
        # without what it imports is imported by none read: read them.
        return found + self._findings(refused, read_alone=False) if refused else found

    def _on_their_own(self, project: Project, reported: Sequence[SourceModule]) -> dict[str, OnItsOwn]:
        """The reported modules whose findings no program but their own decides (engine/closure.py),
        by name: analysed (here, first), none of their findings asks the program model, and no
        enabled project check reports in the kinds of place they hold. No module where a check does
        not say where it reports. Each with what it needs of what it imports: all of it where it is
        an entry of itself, or holds a place where a check reports what those modules decide
        (`RuleMeta.imported_sites`); for a seed after calls, only what those calls may run; for calls
        passing arguments, only where a module it imports may define a function they call applying a
        caller's choice."""
        from repro_lint.facts.module_facts import ARGUMENTS
        from repro_lint.program.model import entry_of_itself
        from repro_lint.rules.registry import REGISTRY

        checks = [rule for code in self.enabled if _checks_project(rule := REGISTRY[code])]
        if any(rule.sites is None for rule in checks):
            return {}
        sites = frozenset().union(*(rule.sites for rule in checks if rule.sites is not None))
        undeclared = any(rule.imported_sites is None for rule in checks)
        imported_sites = frozenset().union(*(rule.imported_sites for rule in checks if rule.imported_sites is not None))
        self._analyze_modules([(module, self._cache_for(project)) for module in reported])
        # A call of a library's function runs none of the project's: a torch seed after such calls
        # alone is judged by its body (ModuleFacts.calls_before_seeds).
        outside = ModuleNames(module.identity.name for module in project.modules).outside
        alone = {}
        for module in reported:
            analysis = self._analyze(module)
            try:
                facts = analysis.facts
                if has_failed(analysis) or facts is None or not sites.isdisjoint(held := facts.sites(outside)):
                    continue
                if any(_question(finding, module) is not None for finding in analysis.findings):
                    continue
                before_seeds = {kind: targets for kind, targets in facts.calls_before_seeds(outside).items() if kind in imported_sites}
                narrowed = {ARGUMENTS, *before_seeds}
                imports = undeclared or entry_of_itself(facts, self.settings.entry_points) or not (imported_sites - narrowed).isdisjoint(held)
                calling = ARGUMENTS in imported_sites and ARGUMENTS in held
                callees = frozenset(target.rpartition(".")[2] for call in facts.arguments for target in call.targets) if calling else frozenset()
                alone[module.identity.name] = OnItsOwn(imports, callees, frozenset().union(*before_seeds.values()))
            except Exception:  # a bug here must not cost the run: read with its programs, the module gets the same findings
                continue
        return alone

    def _answer(self, project: Project) -> tuple[list[Finding] | None, LastRun | None]:
        """The findings the project's last run gives, if it answers; and that run's record."""
        last_run = self._last_run(project)
        recorded = last_run.load() if last_run is not None else None
        if last_run is None or recorded is None:
            return None, last_run
        # Known also where the record does not answer: the scan of a run on some files, and the
        # cache's look-ups, then read no file the record knows unchanged.
        known = last_run.known_digests(recorded)
        for module, digest in zip(project.modules, known):
            if digest is not None:
                module.assume_digest(digest)
        try:
            answer = self._from_last_run(project, last_run, recorded, known)
        except Exception:  # the record only spares the pass, which then gives the same findings
            answer = None
        if answer is not None:
            self.programs.extend(_current(recorded.programs, project))
        return answer, last_run

    def _last_run(self, project: Project) -> LastRun | None:
        # A module read without what it imports is no entry where one read imports it: a change
        # elsewhere may leave it imported by none, which its own record cannot tell. Its pass is small.
        if not (self.use_cache and project.root) or project.by_itself:
            return None
        files = [(module.display, cache_identity(module), None if module.edited else module.path) for module in project.modules]
        writable = not any(module.overridden for module in project.modules)
        return LastRun(project.root, f"{self.settings!r}:{self.honour_noqa}", files, writable)

    def _from_last_run(self, project: Project, last_run: LastRun, recorded: RecordedRun, known: list[bytes | None]) -> list[Finding] | None:
        """The findings the last run's record gives, where the project has the same files, the
        declarations that decided them (read again from the entries' folders) are unchanged, and the
        changed files, analysed again, kept their facts: the project pass would then give what it gave.
        Facts whose lines moved do too, with the pass's findings in that file and the lines they name
        there moved along (`moved_along`), and so do calls and imports added or removed that the pass
        cannot see, and changes to where fixes would edit the file, where its findings' fixes move
        along. A module that no program reaches before or after (`in_no_program`) is compared less
        what only names reach; one added, as a change from a module without code; one removed, as a
        change to one."""
        files = recorded.files
        # A record that reports more files than this run answers for its own: a run on the files of a
        # commit after an audit of the whole project, which also read launch scripts and configs
        # (which have no facts). A launch script or config added is one more file without facts.
        displays = {module.display for module in project.modules}
        beyond = files.keys() - displays
        # A Python file removed is judged as a change to a module without code, where no program reaches it.
        removed = sorted(display for display in beyond if not _scanned(display) and not Path(display).exists())
        if not all(_scanned(display) or display in removed for display in beyond):
            return None  # a Python file the record read, which this run does not read
        added = [module for module in project.modules if module.display not in files and not _scanned(module.display)]
        listed = [module for module in project.modules if module.display in files]
        if not all(files[module.display].identity in identities(module) for module in listed):
            return None  # a file reported now that the record read only for its facts
        same_files = beyond == set(removed) and all(files[module.display].identity == cache_identity(module) for module in listed)
        changed = [module for module in project.modules if module.display not in files or files[module.display].digest != module.digest]
        # Read again unless the files it was read from are as they were, then kept so for the next run.
        declared_again = False
        if recorded.entries is not None and recorded.declared is not None and not recorded.declared.unchanged():
            shown = any(finding.code == VERSION_SHOWN_BY for finding in recorded.program_findings)
            declared_now = self._declared(project, recorded.entries)
            if not declared_now.read_alike(recorded.declared, shown):
                return None
            recorded, declared_again = replace(recorded, declared=declared_now), declared_now.read_from is not None
        reported = {module.display for module in project.modules if module.report}
        if not changed and not removed:
            # Texts read for their hashes, or declarations read again: the next run knows them by the files' stamps.
            if (None in known or declared_again) and same_files:
                last_run.store(replace(recorded, files=last_run.files(module.digest for module in project.modules)))
            return [finding for finding in recorded.findings if finding.path in reported]
        cache = self._cache_for(project)
        assert cache is not None, "a project with a last run has a cache"
        self._analyze_modules([(module, cache) for module in changed])
        module_names = ModuleNames(recorded.modules)
        added_ids = {id(module) for module in added}
        versions = []
        for module in changed:
            after = self._analyze(module)
            before: FileAnalysis | None
            if id(module) in added_ids:
                before = replace(after, facts=absent(after.facts)) if after.facts is not None else None
            elif _scanned(module.display):  # a launch script's or config's scan, never cached, has no facts in any version
                before = self._analyze(module)
            else:
                before = cache.load(module.display, files[module.display].identity, files[module.display].digest)
            if before is None:
                return None
            versions.append((before, after))
        gone: list[tuple[str, FileAnalysis, FileAnalysis]] = []  # by module name, each removed module's versions
        removed_changes = []
        for display in removed:
            before = cache.load(display, files[display].identity, files[display].digest)
            if before is None or before.facts is None or any(finding.path == display for finding in recorded.program_findings):
                return None
            gone.append((before.facts.module, before, replace(before, facts=absent(before.facts))))
            removed_changes.append(Change(before.facts.module, before.facts.is_package, display, before.facts, None))
        # The modules added, and those whose names, imports or classes changed or whose findings ask
        # what the model was not asked: the pass reads them alike where no program reaches them.
        candidates = [
            (module, Change(module.identity.name, module.identity.is_package, module.display, None if id(module) in added_ids else before.facts, after.facts))
            for module, (before, after) in zip(changed, versions)
            if before.facts is not None and after.facts is not None
            and (id(module) in added_ids or read_by_name_otherwise(before.facts, after.facts, module_names.outside) or self._asks_anew(module, recorded.verdicts))
        ]
        changes = [*(change for _, change in candidates), *removed_changes]
        unreached = in_no_program(project, changes, recorded, module_names, self.settings.entry_points) if changes else frozenset()
        if not all(module.identity.name in unreached for module in added) or not all(change.name in unreached for change in removed_changes):
            return None
        facts_of = facts_by_module(project, files, cache, [*((module.identity.name, *version) for module, version in zip(changed, versions)), *gone])
        imports_alike = partial(imports_unseen, project, changed, module_names, facts_of)
        # The removed modules' versions come last: `named_elsewhere` reads the changed modules' texts
        # with the first, and searches every other file for the names of all.
        moves = seen_by_the_pass([*versions, *((before, after) for _, before, after in gone)], recorded, module_names, partial(named_elsewhere, project, changed), facts_of, imports_alike, unreached)
        if moves is None:
            return None
        verdicts = {**recorded.verdicts, **self._unreached_verdicts((module, change.after) for module, change in candidates if change.name in unreached)}
        # The pass's findings where lines moved, and those naming such lines, move with them.
        moved = {module: lines for module, lines in zip(changed, moves) if lines is not None}
        displays = {module.display for module in changed}
        program_findings = moved_along(recorded.program_findings, moved)
        found = moved_along((finding for finding in recorded.findings if finding.path in reported and finding.path not in displays), moved)
        if program_findings is None or found is None:
            return None
        for module in changed:
            if module.report:
                judged = self._module_findings(module, program_findings, verdicts)
                if judged is None:
                    return None  # a finding the program model was not asked about
                found.extend(judged)
        if same_files:  # else the record stays, with what it holds for the files this run does not report
            files = last_run.files(module.digest for module in project.modules)
            # The functions added can be reached by name from now on (`obj.summary()` of a method added).
            names = recorded.function_names | defined_names(after for _, after in versions)
            methods = with_methods(recorded.method_modules, (after for _, after in versions))
            last_run.store(
                replace(
                    recorded,
                    findings=found,
                    files=files,
                    program_findings=program_findings,
                    verdicts=verdicts,
                    analyses=cache_entries(project, cache),
                    modules=(recorded.modules - {name for name, _, _ in gone}) | {module.identity.name for module in added},
                    function_names=names,
                    method_modules=methods,
                )
            )
        return found

    def _unreached_verdicts(self, modules: Iterable[tuple[SourceModule, ModuleFacts]]) -> dict[_Question, bool]:
        """The verdicts on the questions of the modules' local findings, where no program reaches them."""
        from repro_lint.program.model import unreached_verdict  # the model loads LibCST, which a run answered from its record never does

        verdicts: dict[_Question, bool] = {}
        for module, facts in modules:
            for finding in self._analyze(module).findings:
                question = _question(finding, module)
                if question is not None:
                    verdicts[question] = unreached_verdict(facts.path, question[2], question[3])
        return verdicts

    def _asks_anew(self, module: SourceModule, verdicts: Mapping[_Question, bool]) -> bool:
        """Whether a local finding of the module asks the program model what `verdicts` do not answer."""
        return any((question := _question(finding, module)) is not None and question not in verdicts for finding in self._analyze(module).findings)

    def _declared(self, project: Project, entries: Iterable[str], recorded: RecordedRun | None = None) -> Declared:
        """What the project declares for these entry modules: the last run's (`recorded`) where it
        read them for the same entries from files and folders still as they were. Reading them again,
        with `packaging`'s requirement parser loaded for it, took 80-110 ms on transformers; checking
        their stamps, 2 ms."""
        entries = tuple(entries)
        if recorded is not None and recorded.entries == entries and recorded.declared is not None and recorded.declared.unchanged():
            return recorded.declared
        return declared(project.root, entries, self.settings.target_torch_version)

    def _project_findings(self, project: Project, last_run: LastRun | None) -> list[Finding] | None:
        """The project's findings; None where a module read on its own is a program's entry only if
        no module left out imports it (`Project.importers_left_out`), or one read without what it
        imports is imported by no module (`Project.by_itself`)."""
        # The rules and the program model are imported only here and in the workers: a run that the
        # last run's records answer never loads them, nor LibCST.
        from repro_lint.program.model import ProjectModel
        from repro_lint.program.outline import outline
        from repro_lint.rules.registry import REGISTRY

        chosen = [REGISTRY[code] for code in sorted(self.enabled)]
        program_rules: list[ProgramRule | _ProjectCheck] = [rule() for rule in chosen if issubclass(rule, ProgramRule)]
        # Local rules that also judge call sites across modules run with them.
        program_rules += [_ProjectCheck(rule) for rule in chosen if issubclass(rule, Rule) and rule.checks_project]
        modules = project.modules
        analyses = [self._analyze(module) for module in modules]
        reported = [module for module in modules if module.report]
        where = project_display(project)
        failures = len(self.problems)
        # A run on some files reads only the modules they need: what it resolves would not answer the
        # next audit, and what the last audit resolved would not answer it.
        resolved = last_run.resolutions() if last_run is not None and project.universe is None else None
        model: ProjectModel | None
        entries = None
        with self.display.phase("project pass", len(program_rules), "rules") as step:
            step.describe("building the program model")
            try:
                kept = self._resolutions_holding(project, resolved)
                model = ProjectModel((analysis.facts for analysis in analyses if analysis.facts is not None), self.settings.entry_points, kept=kept)
                if any(model.is_entry_point(name) and not model.entry_of_itself(name) for name in project.importers_left_out if name in model.modules):
                    return None
                if any(not model.is_imported(name) for name in project.by_itself if name in model.modules):
                    return None
                if program_rules:
                    entries = tuple(program.entry.path for program in model.programs)
                    model.declared = self._declared(project, entries, last_run.load() if last_run is not None else None)
            except Exception as error:  # without a model, the findings that need none are still reported
                self.problems.append(internal_error(where, error))
                model = None
            outlined: tuple[ProgramOutline, ...] = ()
            if model is not None:
                try:
                    outlined = _displayed(outline(model), project)
                except Exception as error:  # the audit's view of the programs, which no finding needs
                    self.problems.append(internal_error(where, error))
            self.programs.extend(outlined)
            programs = f"{len(entries)} program{'' if len(entries) == 1 else 's'}, " if entries is not None else ""
            step.describe(f"{programs}judging local findings")
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
                step.describe(f"{programs}{rule.code} {rule.name}")
                try:
                    judged = list(rule.check(model))  # type: ignore[arg-type]
                except Exception as error:  # one rule's bug must not cost the other rules' findings
                    self.problems.append(internal_error(where, error, rule.code))
                    continue
                finally:
                    step.advance()
                program_findings += [replace(finding, path=by_relative[finding.path].display) for finding in judged if finding.path in by_relative]
        found = []
        for module in reported:
            try:
                found += self._module_findings(module, program_findings, verdicts) or ()
            except Exception as error:
                self.problems.append(internal_error(module.display, error))
        cache = self._cache_for(project)
        complete = len(self.problems) == failures and not any(map(has_failed, analyses))
        if last_run is not None and cache is not None and complete and model is not None:  # an incomplete run is not a record
            files = last_run.files(module.digest for module in modules)
            declared = model.declared if entries is not None else None
            analyses_kept = cache_entries(project, cache)
            last_run.store(
                RecordedRun(
                    found,
                    entries,
                    declared,
                    files,
                    program_findings,
                    verdicts,
                    analyses_kept,
                    project.universe or frozenset(model.modules),
                    model.function_names,
                    model.chosen_names,
                    model.method_modules,
                    model.calls.worker_only,
                    model.calls.worker_links,
                    model.checkpointing,
                    model.dispatch_scopes,
                    model.importers_read,
                    outlined,
                )
            )
            if resolved is not None:
                resolved.store(RecordedResolutions(files, model.calls.resolutions()))
            prune(cache.folder)  # after a full pass only: a run answered from its record must stay quick
        return found

    def _resolutions_holding(self, project: Project, record: ResolutionsRecord | None) -> dict[str, Resolutions]:
        """What the last pass resolved that holds for the project's facts now (program/kept_resolutions.py)."""
        cache = self._cache_for(project)
        recorded = record.load() if record is not None else None
        if recorded is None or cache is None:
            return {}
        try:
            return resolutions_holding(project, recorded, cache, lambda module: self._analyze(module).facts)
        except Exception:  # it only spares resolving calls again, which then finds the same
            return {}

    def _judged(self, model: ProjectModel, question: _Question, module: SourceModule) -> bool:
        """The verdict on a local finding's question; no (the finding is dropped) where judging it fails."""
        try:
            return _verdict(model, question)
        except Exception as error:
            self.problems.append(internal_error(module.display, error))
            return False

    def _module_findings(
        self, module: SourceModule, program_findings: Iterable[Finding], verdicts: Mapping[_Question, bool]
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

    def _unused_noqa(self, module: SourceModule) -> list[Finding]:
        """REP002. Codes ignored for a file count as not run there; with `noqa` comments disabled,
        none suppressed anything and none is judged."""
        if UNUSED_NOQA not in self.enabled or not self.honour_noqa:
            return []
        ran = self.enabled - self.settings.ignored_for(self._config_relative(module))
        suppressions = self._analyze(module).suppressions
        if UNUSED_NOQA not in ran or not suppressions.noqas:  # else nothing to judge, and the text stays packed
            return []
        return unused_noqa(module.display, module.text, suppressions, ran)

    def _reported(self, finding: Finding, module: SourceModule) -> bool:
        if finding.code not in self.enabled:
            return False
        if finding.code in self.settings.ignored_for(self._config_relative(module)):
            return False
        analysis = self._analyze(module)
        return not (self.honour_noqa and analysis.suppressions.suppresses(finding.code, finding.start.line))

    def _config_relative(self, module: SourceModule) -> str:
        if module.path is not None and self.settings.config_dir is not None:
            try:
                return module.path.relative_to(self.settings.config_dir).as_posix()
            except ValueError:
                pass
        return module.display

    def fix(self, projects: Sequence[Project], unsafe: bool) -> tuple[list[Finding], int]:
        """Apply fixes round after round until none applies; returns the findings left and the count
        fixed. A file whose fixes fail, or whose fixed text the analysis then fails on, gets its text
        back and is not fixed again: its fixes are lost, not the file."""
        # A fixed module's text before its first fix, packed (a campaign on diffusers fixes 172 files, 21 MB
        # of text held whole), and the fixes since by code.
        before: dict[int, tuple[bytes, Counter[str]]] = {}
        broken: set[int] = set()
        self.fixes_applied = {}
        for _ in range(MAX_FIX_ROUNDS):
            findings = self.findings(projects)
            freed_memory_returned()  # the pass's, before the fixes and the next round's analyses and pass
            modules = [module for project in projects for module in project.modules]
            if self._give_back(modules, before, broken):
                continue
            by_path: dict[str, list[Finding]] = {}
            for finding in _this_round(findings, unsafe):
                by_path.setdefault(finding.path, []).append(finding)
            changed = False
            to_fix = [module for module in modules if module.display in by_path and id(module) not in broken]
            with self.display.phase("fixing", len(to_fix), "files") as fixing:
                for module in to_fix:
                    changed = self._fix_module(module, by_path[module.display], before, broken) or changed
                    fixing.advance()
            self.fixes_applied = dict(before)
            if not changed:
                return findings, fixed_count(before)
        return self.findings(projects), fixed_count(before)

    def _fix_module(
        self, module: SourceModule, findings: Sequence[Finding], before: dict[int, tuple[bytes, Counter[str]]], broken: set[int]
    ) -> bool:
        """Apply the module's fixes to its text; whether any applied. `before` keeps its text from
        before its first fix and the fixes since, by code; a module whose fixes fail goes into `broken`."""
        # Each fix with its finding's code, for counting what was fixed by code.
        fixes = {id(finding.fix): (finding.fix, finding.code) for finding in findings if finding.fix is not None}
        if not fixes:
            return False
        line_length = self.settings.line_length if module.display.endswith(".py") else None
        try:
            text, applied = apply_fixes(module.text, [fix for fix, _ in fixes.values()], validator_for(module.display), line_length)
        except Exception as error:
            self.problems.append(internal_error(module.display, error, "while fixing it"))
            broken.add(id(module))
            return False
        if not applied:
            return False
        original, done = before.get(id(module), (module.pack(), Counter()))
        before[id(module)] = (original, done + Counter(fixes[id(fix)][1] for fix in applied))
        module.text, module.analysis = text, None
        return True

    def _give_back(self, modules: Sequence[SourceModule], before: dict[int, tuple[bytes, Counter[str]]], broken: set[int]) -> bool:
        """Give fixed modules whose analysis failed their text from before the fixes; whether any."""
        failed = [module for module in modules if id(module) in before and has_failed(module.analysis)]
        for module in failed:
            problem = module.analysis.problem  # type: ignore[union-attr]
            self.problems.append(replace(problem, summary=f"after its fixes: {problem.summary}"))  # type: ignore[arg-type]
            module.text, module.analysis = unpacked(before.pop(id(module))[0]), None
            broken.add(id(module))
        return bool(failed)


def _this_round(findings: Sequence[Finding], unsafe: bool) -> list[Finding]:
    """The findings whose fixes this round applies: those of rules that fix first, while any is left."""
    # Imported here: a run answered from the cache never imports the rules, and only fixing asks.
    from repro_lint.rules.registry import REGISTRY

    fixable = [finding for finding in findings if applicable(finding, unsafe)]
    first = [finding for finding in fixable if (rule := REGISTRY.get(finding.code)) is not None and rule.fixes_first]
    return first or fixable


def _scanned(display: str) -> bool:
    """A launch script or config: scanned on every run, it has no facts."""
    return scanner_for(display) is not None


def fixed_count(fixes_applied: Mapping[int, tuple[bytes, Counter[str]]]) -> int:
    return sum(sum(codes.values()) for _, codes in fixes_applied.values())


def _displayed(programs: Iterable[ProgramOutline], project: Project) -> tuple[ProgramOutline, ...]:
    """The programs with their files named as the run displays them."""
    display = {module.identity.relative_path: module.display for module in project.modules}
    return tuple(replace(program, path=display[program.path], modules=tuple(display[path] for path in program.modules)) for program in programs)


def _current(programs: Iterable[ProgramOutline], project: Project) -> list[ProgramOutline]:
    """The recorded programs, with their entry lines as they are now: an edit the project pass cannot
    see may have moved a main guard (the entry module was then analysed again)."""
    analysed = {module.display: module.analysis.facts for module in project.modules if module.analysis is not None}
    return [
        replace(program, line=facts.main_guard_line or 1) if (facts := analysed.get(program.path)) is not None else program
        for program in programs
    ]


def _checks_project(rule: type[RuleMeta]) -> bool:
    """Whether the rule runs in the project pass: a program rule, or a local rule that also judges
    call sites across modules."""
    return issubclass(rule, ProgramRule) or (issubclass(rule, Rule) and rule.checks_project)


class _ProjectCheck:
    """A local rule's `check_project`, run as the program rules are."""

    def __init__(self, rule: type[Rule]) -> None:
        self.rule = rule
        self.code, self.name = rule.code, rule.name

    def check(self, model: ProjectModel) -> Iterator[Finding]:
        return self.rule.check_project(model)


def _question(finding: Finding, module: SourceModule) -> _Question | None:
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


def _verdict(model: ProjectModel, question: _Question) -> bool:
    module, function, training_only, condition = question
    if training_only and model.only_reached_by_non_training_programs(module, function):
        return False
    return not condition or model.reached_by_program_where(module, condition)
