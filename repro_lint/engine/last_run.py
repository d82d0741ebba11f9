"""What a run answered from the last run's record must check of each changed file: whether the
project pass could see the change at all, and whether findings of the pass point into it."""

from __future__ import annotations

import ast
import fnmatch
import re
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import replace
from functools import cache as cache_results
from functools import partial
from typing import TYPE_CHECKING, NamedTuple

from repro_lint.analysis.result import FileAnalysis
from repro_lint.core.findings import Finding
from repro_lint.core.source import Position
from repro_lint.engine.cache import AnalysisCache, RecordedFile, RecordedResolutions, RecordedRun
from repro_lint.engine.modules import Project, SourceModule, cache_identity
from repro_lint.facts.shift import (
    ImportChange,
    Naming,
    added_or_removed,
    calls_of,
    imports_set_apart,
    moved_lines,
    unnamed,
    unseen_functions,
    without_calls,
    without_imports,
    without_unseen,
)
from repro_lint.program.module_names import ModuleNames
from repro_lint.sources import scanner_for

if TYPE_CHECKING:  # the facts' module loads LibCST, which a run answered from its record never does
    from repro_lint.facts.callers_choice import ArgumentsFact
    from repro_lint.facts.fix_points import EntryFixFacts
    from repro_lint.facts.module_facts import CallFact, FunctionFacts, ModuleFacts
    from repro_lint.program.call_graph import Resolutions
    from repro_lint.program.quiet import UnseenCalls


def seen_by_the_pass(
    changes: Sequence[tuple[FileAnalysis, FileAnalysis]],
    recorded: RecordedRun,
    names: ModuleNames,
    named_elsewhere: Callable[[Sequence[Mapping[str, Naming]]], bool],
    facts_of: Callable[[str, bool], ModuleFacts | None],
    imports_unseen: Callable[[Sequence[ImportChange]], bool],
    unreached: Collection[str] = frozenset(),
) -> list[dict[int, int] | None] | None:
    """How the project pass sees the changes to the changed files, each from its analysis before to
    the one after; None where it may see one. For each file: None where it sees nothing; else only
    where it reports in that file and the lines its messages name there, where lines moved or the
    places its fixes would edit changed: how the lines its facts and fix facts hold moved (empty
    where the fix facts changed otherwise, so that nothing there moves along). Calls and imports it
    cannot see (of a library's functions and modules), and functions added or removed that run
    nothing it sees, with the calls that only run them in any of the files, are left out where the
    facts differ by more than moved lines: where `named_elsewhere`, given for each file where its
    text may name those functions, finds no other place naming one. So are imports of project
    modules added or removed, and the names they bind, where `imports_unseen` finds the pass reads
    them alike. `facts_of` gives a project module's facts before the changes (False) or after (True):
    what a call names there tells whether it denotes anything the pass sees. The modules no program
    reaches (`unreached`: `in_no_program`) are compared less what the pass reads of a module only
    through names (`unnamed`); one added, as a change from a module without code."""
    moves: list[dict[int, int] | None] = []
    differing: dict[int, tuple[ModuleFacts, ModuleFacts, EntryFixFacts | None, EntryFixFacts | None]] = {}
    # A call `obj.summary()` may reach a method `summary` added now, which the record does not name.
    function_names = recorded.function_names | defined_names(after for _, after in changes)
    # The pass reads a call's arguments only where it may reach a function whose setting a caller
    # decides (program/callers_choice.py): the others may change, or move within their lines. The
    # changed files' choices are compared as facts: any difference there is seen.
    chosen = recorded.chosen_names
    judges: tuple[UnseenCalls, UnseenCalls] | None = None
    for before, after in changes:
        old, new = before.facts, after.facts
        if old is None or new is None:
            if old != new:
                return None
        elif old != new and (moved := moved_lines(old, new)) is not None:
            moves.append(moved)
            continue
        elif old != new:
            if judges is None:
                judges = _unseen_calls(names, function_names, facts_of, recorded, changes)
            inert_before, inert_after = (partial(judge, module=new.module) for judge in judges)
            # A module's fix facts are read only for the fixes of findings in that module: a fix edits its
            # finding's file alone (an edit holds positions, not a path).
            kept_old, kept_new = (
                replace(without_imports(without_calls(facts, inert), names.outside), fix=None, arguments=_read_arguments(facts, chosen))
                for facts, inert in ((old, inert_before), (new, inert_after))
            )
            if new.module in unreached:
                kept_old, kept_new = unnamed(kept_old), unnamed(kept_new)
            differing[len(moves)] = (kept_old, kept_new, old.fix, new.fix)
        moves.append(None)
    if not differing:
        return moves
    from repro_lint.program.model import reached_by_name

    assert judges is not None, "built for the first file differing"
    unreached = partial(_unreached, judges, recorded.worker_only | recorded.checkpointing, recorded)
    unseen = unseen_functions(((old, new) for old, new, _, _ in differing.values()), partial(_denoting, names), reached_by_name, unreached)
    if unseen is None:
        return None
    namings: list[Mapping[str, Naming]] = [{} for _ in changes]
    imports_changed: list[ImportChange] = []
    for at, (old, new, old_fix, new_fix) in differing.items():
        if unseen:
            denoted = _denoting(names, unseen, new.module)
            namings[at] = calls_of(new, denoted, unseen.values())  # no call it counts is one the pass cannot see
            no_module = partial(_names_no_module, names, new.module)
            old, new = (without_unseen(facts, denoted, no_module) for facts in (old, new))
        new, imports = imports_set_apart(old, new)
        if imports is not None:
            imports_changed.append(imports)
        moved = moved_lines(old, new)
        if moved is None:
            return None
        if old != new or old_fix != new_fix:
            moves[at] = _with_fix_lines(moved, moved_lines(old_fix, new_fix))
    if unseen and named_elsewhere(namings):
        return None
    if imports_changed and not imports_unseen(imports_changed):
        return None
    return moves


class Change(NamedTuple):
    """A changed module as `in_no_program` judges it: its name, whether it is a package's
    `__init__`, its file, and its facts before (None where it is added) and after (None where it is
    removed)."""

    name: str
    is_package: bool
    display: str
    before: ModuleFacts | None
    after: ModuleFacts | None


def in_no_program(
    project: Project,
    changed: Sequence[Change],
    recorded: RecordedRun,
    names: ModuleNames,
    entry_points: Iterable[str],
) -> frozenset[str]:
    """Of the changed modules, those in no program in either version, whatever their facts but the
    few that make a module an entry point of its own (a main guard, code running when it loads that
    the pass sees), which `seen_by_the_pass` compares. Such a module is a plain module (not a
    package's `__init__`, not a notebook), which no program's walk may name: one added has a new
    name the `entry-points` setting does not name; one that was there (changed or removed) was no
    entry point (`RecordedRun.entries`, known where program rules ran) and imports nothing whose
    importers the pass reads (`RecordedRun.importers_read`: an entry point only while nothing
    imports it, or a module whose module-level code may train, transitively); the imports it adds
    reach none of those modules; and no file holds as a word the last part of its name, nor a part
    no other module's name has, but such modules (so nothing imports it or names what it defines,
    and every name resolves as it did). Files not read in this run are read for it, once, as bytes,
    and not kept."""
    patterns = tuple(entry_points)
    removed = {change.name for change in changed if change.after is None}
    known_parts = {part for name in recorded.modules if name not in removed for part in name.split(".")}
    # What the recorded programs run is in a program, and spares a search of every file.
    running = {display for program in recorded.programs for display in program.modules}
    words: dict[str, set[str]] = {}  # by module name
    for name, is_package, display, before, after in changed:
        if is_package or not display.endswith(".py") or display in running:
            continue
        if before is None:
            assert after is not None, "a module added has facts after"
            if name in recorded.modules or any(fnmatch.fnmatch(after.path, pattern) for pattern in patterns):
                continue
        elif recorded.entries is None or before.path in recorded.entries or name in recorded.importers_read:
            continue
        imported = {*after.imports, *after.star_imports} if after is not None else set()
        imported -= {*before.imports, *before.star_imports} if before is not None else set()
        if any(names.resolve(each, name) in recorded.importers_read for each in imported):
            continue
        parts = name.split(".")
        words[name] = {parts[-1], *(part for part in parts[:-1] if part not in known_parts)}
    if not words or not all(word.isascii() for found in words.values() for word in found):
        return frozenset()  # searched for as ASCII bytes in files of any encoding
    every_word = sorted(set().union(*words.values()))
    words_in = _words_held(every_word)
    held: dict[str, set[str]] = {}  # by module name, the words the text of each candidate holds
    for other in project.modules:
        data = other.raw()
        found = words_in(data) if data is not None else set(every_word)
        if other.identity.name in words:
            held[other.identity.name] = found
        elif found:
            words = {name: own for name, own in words.items() if own.isdisjoint(found)}
            if not words:
                return frozenset()  # every one named where a program may reach it
    # A candidate named by another is in no program only where that one is in none.
    while True:
        kept = {name: own for name, own in words.items() if all(own.isdisjoint(held[other]) for other in held if other not in words)}
        if len(kept) == len(words):
            return frozenset(kept)
        words = kept


# Events the pass reads in every function, reached or not: a seed after a draw in the same body
# (REP105), a start method set anywhere in a module (program/processes.py).
_READ_ANYWHERE = frozenset({"seed", "start_method"})


def _unreached(
    judges: tuple[UnseenCalls, UnseenCalls],
    now_read: frozenset[str],
    recorded: RecordedRun,
    facts: ModuleFacts,
    function: FunctionFacts,
    beyond: Sequence[CallFact],
    added: bool,
) -> bool:
    """Whether the pass reads nothing of `function`, added to the module of `facts` or removed from
    it, which no call reaches (`unseen_functions`) and which makes the calls `beyond` (of others than
    those it left out), resolved in the version defining it (`judges`: before the changes, after):
    no call choosing at run time what it runs may find it (`dispatch_scopes`), no event of it is
    read anywhere (`_READ_ANYWHERE`), and no function it calls is one whose callers the pass reads:
    one running only in DataLoader workers, which a caller outside takes out, where the call runs it
    before it returns (so does an `obj.method()` a method of its own class of that name,
    `CallGraph.callers`), nor one running a checkpoint, which it may. Then it reaches no program, and
    a caller the pass reads nothing of, added to functions, changes none of its results. `now_read`:
    the record's functions of both kinds. A caller taken away may also leave a function running only
    in workers, where one running only there calls it too: a function removed calls none of those
    (`RecordedRun.worker_links`)."""
    if any(function.qualname.startswith(scope + ".") for scope in recorded.dispatch_scopes):
        return False
    if any(event.kind in _READ_ANYWHERE for event in function.events):
        return False
    calls = judges[1] if added else judges[0]
    owner = function.qualname.rpartition(".")[0]
    links: set[str] = set()
    for call in beyond:
        if not call.targets:
            if call.method is not None:
                if f"{owner}.{call.method}" in now_read:
                    return False
                links.add(f"{owner}.{call.method}")
            continue
        linked = calls.linked(call, facts.module)
        if linked is None:
            return False
        now, later = linked
        if not now_read.isdisjoint(now) or not recorded.checkpointing.isdisjoint(later):
            return False
        links.update(now, later)
    return added or recorded.worker_links.isdisjoint(links)


def _with_fix_lines(moved: dict[int, int], fix_moved: dict[int, int] | None) -> dict[int, int]:
    """How the lines of a module's facts and of its fix facts moved, but a line the two move apart;
    nothing where the fix facts changed otherwise (the fixes of findings there may change)."""
    if fix_moved is None:
        return {}
    both = {**moved, **fix_moved}
    return {line: to for line, to in both.items() if moved.get(line, to) == fix_moved.get(line, to)}


def _unseen_calls(
    names: ModuleNames,
    function_names: Collection[str],
    facts_of: Callable[[str, bool], ModuleFacts | None],
    recorded: RecordedRun,
    changes: Sequence[tuple[FileAnalysis, FileAnalysis]],
) -> tuple[UnseenCalls, UnseenCalls]:
    """What tells a call the pass cannot see before the changes, and after. The functions local
    findings' verdicts ask about are the record's: a finding asking about another runs the pass. Calls
    of functions added or removed are left to `unseen_functions`, which also accounts for the text
    naming them."""
    from repro_lint.program.quiet import UnseenCalls  # the model loads LibCST, which a run answered from its record never does

    asked = frozenset(question[1] for question in recorded.verdicts if isinstance(question[1], str))
    # Where a module has facts in one version only, the record does not answer (`seen_by_the_pass`).
    differing = frozenset().union(*(added_or_removed(old.facts, new.facts) for old, new in changes if old.facts is not None and new.facts is not None))
    # The changed modules may define methods of any name: one added now, which the record does not
    # hold, is unfollowed, and an `obj.method()` of its name is kept for `unseen_functions`.
    changed = frozenset(old.facts.module for old, _ in changes if old.facts is not None)

    def method_modules(name: str) -> frozenset[str]:
        return recorded.method_modules.get(name, frozenset()) | changed

    before, after = (UnseenCalls(names, function_names, partial(facts_of, after=state), asked, method_modules, differing) for state in (False, True))
    return before, after


def with_methods(method_modules: Mapping[str, frozenset[str]], analyses: Iterable[FileAnalysis]) -> dict[str, frozenset[str]]:
    """`method_modules` with the methods the analyses' modules define (one no longer defined may stay:
    a module that may define a method of a name is looked into, and found without one)."""
    from repro_lint.program.call_graph import methods_by_name  # the model loads LibCST, which a run answered from its record never does

    found = dict(method_modules)
    for analysis in analyses:
        if analysis.facts is not None:
            for name in methods_by_name(analysis.facts):
                found[name] = found.get(name, frozenset()) | {analysis.facts.module}
    return found


def facts_by_module(
    project: Project, files: Mapping[str, RecordedFile], cache: AnalysisCache, versions: Iterable[tuple[str, FileAnalysis, FileAnalysis]]
) -> Callable[[str, bool], ModuleFacts | None]:
    """A project module's facts by its name, before the changes (False: the record's, from the cache)
    or after (True); None where unknown (no such module, two files of that name, no entry). The
    changed modules' come from `versions`, by module name."""
    changed = {name: (before.facts, after.facts) for name, before, after in versions}
    displays: dict[str, str | None] = {}
    for module in project.modules:
        displays[module.identity.name] = None if module.identity.name in displays else module.display

    @cache_results
    def unchanged(name: str) -> ModuleFacts | None:
        display = displays.get(name)
        recorded = files.get(display) if display is not None else None
        analysis = cache.load(display, recorded.identity, recorded.digest) if display is not None and recorded is not None else None
        return analysis.facts if analysis is not None else None

    def facts_of(name: str, after: bool) -> ModuleFacts | None:
        return changed[name][after] if name in changed else unchanged(name)

    return facts_of


def _read_arguments(facts: ModuleFacts, chosen: frozenset[str]) -> tuple[ArgumentsFact, ...]:
    """The arguments facts of the module's calls that the pass reads: of those that may reach a
    function whose setting a caller decides."""
    return tuple(passed for passed in facts.arguments if passed.may_reach(chosen))


def defined_names(analyses: Iterable[FileAnalysis]) -> frozenset[str]:
    """The last names of the functions the analyses' modules define."""
    return frozenset(function.qualname.rpartition(".")[2] for analysis in analyses if analysis.facts is not None for function in analysis.facts.functions)


def _denoting(names: ModuleNames, unseen: Mapping[str, str], importer: str) -> Callable[[str], str | None]:
    return partial(_denoted, unseen, names, importer)


def _denoted(unseen: Mapping[str, str], names: ModuleNames, importer: str, target: str) -> str | None:
    """The name of the function in `unseen` that `target`, written in `importer`, denotes: itself, or
    a member of the module its other parts name as the pass resolves them (`model.summary` in a script
    beside model.py); None where it denotes none of them."""
    found = unseen.get(target)
    if found is None and (split := names.split(target, importer)) is not None and len(split[1]) == 1:
        found = unseen.get(f"{split[0]}.{split[1][0]}")
    return found


def _names_no_module(names: ModuleNames, importer: str, name: str) -> bool:
    return not names.candidates(name, importer)


def named_elsewhere(project: Project, changed: Sequence[SourceModule], namings: Sequence[Mapping[str, Naming]]) -> bool:
    """Whether one of the names `namings` holds occurs as a word where a call of a function of that
    name could be: in a changed module with a naming of it (its lines defining it, and how many plain
    calls of it each other line makes), outside the lines defining it and more often on a line than
    those calls and the unaliased `from ... import` of it there; in any other file of the project, at
    all (the namings past `changed`'s are of modules removed, which have no text). Files not read in
    this run are read for it, once for all the names, as bytes, and not kept."""
    names = sorted({name for naming in namings for name in naming})
    if not all(name.isascii() for name in names):
        return True  # searched for as ASCII bytes in files of any encoding
    words = {name: re.compile(rf"(?<!\w){re.escape(name)}(?!\w)", re.ASCII) for name in names}
    searched = set()
    for module, naming in zip(changed, namings):
        if not naming:
            continue  # searched as the other files are
        searched.add(id(module))
        imported = _imported_unaliased(module.text, naming)
        if imported is None:
            return True
        for number, line in enumerate(module.text.split("\n"), 1):  # as LineIndex counts
            for name, (defining, calls) in naming.items():
                if not any(number in lines for lines in defining) and len(words[name].findall(line)) > calls.get(number, 0) + imported[name].get(number, 0):
                    return True
    holds_one = _holds_a_word(names)
    for other in project.modules:
        if id(other) not in searched:
            data = other.raw()
            if data is None or holds_one(data):
                return True
    return False


def resolutions_holding(
    project: Project, recorded: RecordedResolutions, cache: AnalysisCache, facts_now: Callable[[SourceModule], ModuleFacts | None]
) -> dict[str, Resolutions]:
    """What the last pass resolved (`recorded`) that holds for the project's modules as they are now
    (`facts_now` gives a module's facts: program/kept_resolutions.py), where it has the same files:
    the changed modules' facts before are the cache's. Nothing where that cannot be told."""
    from repro_lint.program.kept_resolutions import resolutions_kept

    if recorded.files.keys() != {module.display for module in project.modules}:
        return {}
    unchanged: list[SourceModule] = []
    changes: list[tuple[ModuleFacts, ModuleFacts]] = []
    for module in project.modules:
        file = recorded.files[module.display]
        if file.identity != cache_identity(module):
            return {}  # the module's name, or whether it is reported, changed
        if scanner_for(module.display) is not None:
            continue  # a launch script or config: no facts, and no calls
        if file.digest == module.digest:
            unchanged.append(module)
            continue
        before, after = cache.load(module.display, file.identity, file.digest), facts_now(module)
        if before is None or before.facts is None or after is None:
            return {}
        changes.append((before.facts, after))

    def mentioned(words: frozenset[str]) -> bool:
        holds_one = _holds_a_word(sorted(words))
        return any((data := module.raw()) is None or holds_one(data) for module in unchanged)

    names = ModuleNames(facts.module for module in project.modules if (facts := facts_now(module)) is not None)
    return resolutions_kept(recorded.resolutions, changes, names, mentioned)


def _holds_a_word(names: Sequence[str]) -> Callable[[bytes], bool]:
    """Whether a file's bytes hold one of the ASCII `names` as a word."""
    encoded = [name.encode() for name in names]
    any_word = _as_words(encoded)
    # The substring test first: far quicker than the pattern, and most files hold no name.
    return lambda data: any(name in data for name in encoded) and any_word.search(data) is not None


def _words_held(names: Sequence[str]) -> Callable[[bytes], set[str]]:
    """Which of the ASCII `names` a file's bytes hold as words."""
    encoded = [name.encode() for name in names]
    any_word = _as_words(encoded)
    return lambda data: {word.decode() for word in any_word.findall(data)} if any(name in data for name in encoded) else set()


def _as_words(names: Iterable[bytes]) -> re.Pattern[bytes]:
    return re.compile(rb"(?<!\w)(?:%s)(?!\w)" % b"|".join(map(re.escape, names)), re.ASCII)


# A star import (`from models import *`), as bytes, in a file of any encoding; the statement may go on
# past a backslash.
_STAR_IMPORT = re.compile(rb"\bimport[\s\\]*\*")


def imports_unseen(
    project: Project,
    changed: Sequence[SourceModule],
    names: ModuleNames,
    facts_of: Callable[[str, bool], ModuleFacts | None],
    changes: Sequence[ImportChange],
) -> bool:
    """Whether the pass reads the changed modules' imports, and the names they bind, as it did
    (program/import_changes.py): every module each imports in one version only is one it reaches
    through imports both versions make, and no module's facts, in either version, may name a member
    of a changed module, or of a module star-importing one (`holders`), by a name it binds
    otherwise. Only the files whose texts hold such a name, or a star import, are looked into: files
    not read in this run are read for it, once, as bytes, and not kept."""
    from repro_lint.program.import_changes import holders, name_members, reached_alike  # the model loads LibCST

    if not reached_alike(changes, names, facts_of):
        return False
    rebound = sorted({name for change in changes for name in change.rebound})
    if not rebound:
        return True
    if not all(name.isascii() for name in rebound):
        return False  # searched for as ASCII bytes in files of any encoding
    changed_names = {module.identity.name for module in changed}
    holds_one = _holds_a_word(rebound)
    starring: list[ModuleFacts | None] = []
    naming: list[ModuleFacts | None] = []
    for module in project.modules:
        name = module.identity.name
        if name not in names.modules:
            continue  # no facts: nothing the pass resolves
        if name in changed_names:  # both versions, whatever the text holds now
            versions = [facts_of(name, False), facts_of(name, True)]
            starring += versions
            naming += versions
            continue
        data = module.raw()
        if data is None:
            return False
        if _STAR_IMPORT.search(data):
            starring.append(facts_of(name, True))
        if holds_one(data):
            naming.append(facts_of(name, True))
    if None in starring or None in naming:
        return False  # a module whose facts are not known
    return not name_members(filter(None, naming), holders(changes, names, filter(None, starring), facts_of))


def _imported_unaliased(text: str, names: Iterable[str]) -> dict[str, Counter[int]] | None:
    """For each of `names`, how many times each line of `text` names it in `from ... import NAME`
    (unaliased, or aliased to itself); None where Python cannot parse it."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    found: dict[str, Counter[int]] = {name: Counter() for name in names}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            for alias in node.names:
                if alias.name in found and alias.asname in (None, alias.name):
                    found[alias.name][alias.lineno] += 1 if alias.asname is None else 2
    return found


# A line of the file a message is in, as `core/message_text.place` names it.
_SAME_FILE = re.compile(r"(?<![\w-])line (\d+)\b")


def moved_along(findings: Iterable[Finding], moves: Mapping[SourceModule, Mapping[int, int]]) -> list[Finding] | None:
    """The findings with the lines of the changed modules whose lines only moved (`seen_by_the_pass`)
    moved along: where a finding is (its range, its fix's edits), and the lines its message names
    there (`core/message_text.place`: "first draw: models/net.py:6", or "line 6" in that file). The
    pass takes each from a line the facts hold, which moved as the facts show, or reports at line 1 a
    program with no main guard (`program/fixes.entry_position`). None where a line is neither, or
    line 1 moved, or the module is a notebook (lines count in cells there)."""
    notebooks = [module for module in moves if module.display.endswith(".ipynb")]
    moves = {module: lines for module, lines in moves.items() if module not in notebooks}
    by_display = {module.display: lines for module, lines in moves.items()}
    mentions = [(re.compile(rf"(?<![\w./-]){re.escape(module.identity.relative_path)}:(\d+)"), lines) for module, lines in moves.items()]
    found = []
    for finding in findings:
        if any(finding.path == module.display or f"{module.identity.relative_path}:" in finding.message for module in notebooks):
            return None
        lines = by_display.get(finding.path)
        moved = _moved(finding, lines) if lines is not None else finding
        message = _moved_message(finding.message, [*mentions, (_SAME_FILE, lines)] if lines is not None else mentions)
        if moved is None or message is None:
            return None
        found.append(replace(moved, message=message) if message != finding.message else moved)
    return found


def _moved(finding: Finding, lines: Mapping[int, int]) -> Finding | None:
    def moved(position: Position, reported: bool = False) -> Position | None:
        if reported and position.line == 1:  # the line of a program without a main guard, or a fact's
            return position if lines.get(1, 1) == 1 else None
        to = lines.get(position.line)
        return Position(to, position.column) if to is not None else None

    start, end = moved(finding.start, True), moved(finding.end, True)
    fix = finding.fix
    if fix is not None:
        edits = [replace(edit, start=edit_start, end=edit_end) for edit in fix.edits if (edit_start := moved(edit.start)) and (edit_end := moved(edit.end))]
        if len(edits) < len(fix.edits):
            return None
        fix = replace(fix, edits=tuple(edits))
    return replace(finding, start=start, end=end, fix=fix) if start is not None and end is not None else None


def _moved_message(message: str, mentions: Iterable[tuple[re.Pattern[str], Mapping[int, int]]]) -> str | None:
    for mention, lines in mentions:
        parts = []
        done = 0
        for match in mention.finditer(message):
            to = lines.get(int(match[1]))  # an event's line: one the facts hold
            if to is None:
                return None
            parts.append(f"{message[done:match.start(1)]}{to}")
            done = match.end(1)
        message = "".join(parts) + message[done:]
    return message
