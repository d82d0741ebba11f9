"""Whether two versions of a module's facts differ only by lines moved: an edit above some code (a
comment, a docstring, blank lines) shifts every line below it and changes nothing else.

The project pass compares a module's lines only with each other (which event comes first, which
function holds a line), so it gives the same results for both versions, but for the positions it
reports in that module and the lines its messages name there. Calls and imports the pass cannot see
(of a library's functions and modules: program.is_inert, ModuleNames.outside), and functions added or
removed that run nothing the pass sees, with the calls that only run them in any module, or added or
removed where nothing the pass reads runs them, may be left out of both versions first.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, fields, is_dataclass, replace
from functools import cache, partial
from typing import TYPE_CHECKING

from repro_lint.core.records import pickled_by_constructor

if TYPE_CHECKING:  # the facts' module loads LibCST, which a run answered from its record never does
    from repro_lint.facts.module_facts import CallFact, FunctionFacts, ModuleFacts

# Where a module's text may name a function without the pass seeing it: the lines defining the
# functions of that name (methods of several classes may share it), and the number of its plain calls
# on each other line (see `calls_of`).
Naming = tuple[tuple[range, ...], Mapping[int, int]]

# What an unresolved `obj.method()` denotes for `Denoted`: any method of that name (as the pass's
# call graph reads it).
_ANY_METHOD = "*."

# A field whose annotation names `Line` (repro_lint.core.source) holds lines: `Line`, `Line | None`, pairs
# of lines. The facts' modules postpone annotations, so each field's type is its annotation's text.
_HOLDS_LINES = re.compile(r"\bLine\b")


def moved_lines(old: object, new: object) -> dict[int, int] | None:
    """Where each line the facts hold moved to, where `new` is `old` with its lines moved in order:
    every line moved to one new line, with none swapped, merged or split, and columns, names and
    everything else equal; None where it is not."""
    moved: dict[int, int] = {}
    if not _match(old, new, False, moved):
        return None
    news = [new_line for _, new_line in sorted(moved.items())]
    return moved if all(earlier < later for earlier, later in zip(news, news[1:])) else None


def _match(old: object, new: object, lines: bool, moved: dict[int, int]) -> bool:
    if type(old) is not type(new):
        return False
    if lines and type(old) is int:
        return moved.setdefault(old, new) == new  # type: ignore[arg-type]
    if is_dataclass(old):
        return all(_match(getattr(old, name), getattr(new, name), holds_lines, moved) for name, holds_lines in _fields(type(old)))
    if isinstance(old, tuple):
        assert isinstance(new, tuple)
        return len(old) == len(new) and all(_match(before, after, lines, moved) for before, after in zip(old, new))
    return old == new


@cache
def _fields(kind: type) -> tuple[tuple[str, bool], ...]:
    return tuple((field.name, bool(_HOLDS_LINES.search(str(field.type)))) for field in fields(kind))


def without_calls(facts: ModuleFacts, left_out: Callable[[CallFact], bool]) -> ModuleFacts:
    """The facts less the calls `left_out` picks, wherever they are made."""

    def kept(calls: tuple[CallFact, ...]) -> tuple[CallFact, ...]:
        return tuple(call for call in calls if not left_out(call))

    return replace(
        facts,
        module_calls=kept(facts.module_calls),
        main_calls=kept(facts.main_calls),
        functions=tuple(replace(function, calls=kept(function.calls)) for function in facts.functions),
    )


def absent(facts: ModuleFacts) -> ModuleFacts:
    """The facts of the module before it was added: no code, nothing defined, nothing imported."""
    from repro_lint.facts.module_facts import ModuleFacts  # see TYPE_CHECKING above

    return ModuleFacts(
        module=facts.module,
        path=facts.path,
        is_package=facts.is_package,
        imports=(),
        bindings=(),
        star_imports=(),
        main_guard_line=None,
        module_calls=(),
        trains_at_module_level=False,
        functions=(),
    )


def unnamed(facts: ModuleFacts) -> ModuleFacts:
    """The facts less what the pass reads of a module only where some code names it: the names it
    binds and imports (through which other modules' names resolve) and its classes (which calls
    reach by their names, and programs through their modules)."""
    return replace(facts, imports=(), bindings=(), star_imports=(), classes=())


def read_by_name_otherwise(old: ModuleFacts, new: ModuleFacts, outside: Callable[[str], bool]) -> bool:
    """Whether two versions of a module's facts differ in what `unnamed` leaves out, but imports of
    the modules `outside` picks (see `without_imports`) and the names binding what the module
    defines itself (a function added: `unseen_functions` judges those)."""

    def read(facts: ModuleFacts) -> tuple[object, ...]:
        facts = without_imports(facts, outside)
        own = f"{facts.module}."
        bindings = tuple(binding for binding in facts.bindings if binding[1] != (own + binding[0],))
        return facts.imports, bindings, facts.star_imports, facts.classes

    return read(old) != read(new)


def without_imports(facts: ModuleFacts, outside: Callable[[str], bool]) -> ModuleFacts:
    """The facts less the imports of modules `outside` picks, and the names bound to nothing else
    (`import math`, `from typing import Any`, `from math import *`)."""
    return replace(
        facts,
        imports=tuple(name for name in facts.imports if not outside(name)),
        bindings=tuple((name, targets) for name, targets in facts.bindings if not all(map(outside, targets))),
        star_imports=tuple(name for name in facts.star_imports if not outside(name)),
    )


@pickled_by_constructor
@dataclass(frozen=True, slots=True)
class ImportChange:
    """How a module's imports changed (`imports` before and after) and which names it binds otherwise:
    what the project pass reads of them is which modules it imports (program/import_changes.py), and
    what those names denote when another module names them through it."""

    module: str
    before: tuple[str, ...]
    after: tuple[str, ...]
    rebound: frozenset[str]


def imports_set_apart(old: ModuleFacts, new: ModuleFacts) -> tuple[ModuleFacts, ImportChange | None]:
    """`new` with `old`'s imports and bindings, and how those differ (None where they do not)."""
    if old.imports == new.imports and old.bindings == new.bindings:
        return new, None
    rebound = frozenset(name for name, _ in set(old.bindings) ^ set(new.bindings))
    return replace(new, imports=old.imports, bindings=old.bindings), ImportChange(new.module, old.imports, new.imports, rebound)


# Which of the functions the pass cannot see (see `unseen_functions`) a name written in one module
# denotes (its module part resolved as the pass resolves it: `from model import summary` in a script
# beside model.py), by the name its module binds it to; None for any other name.
Denoted = Callable[[str], "str | None"]


def unseen_functions(
    changes: Iterable[tuple[ModuleFacts, ModuleFacts]],
    denoting: Callable[[Mapping[str, str], str], Denoted],
    reached_by_name: Callable[[str], bool],
    unreached: Callable[[ModuleFacts, FunctionFacts, Sequence[CallFact], bool], bool],
) -> dict[str, str] | None:
    """The functions that only one version of their module defines, each with the name its module
    binds it to (a method's own; for one defined within another such function, that one's), where
    the pass cannot see any of them: each is defined at module level, is a method, or is defined
    within such a function, and is named nothing the pass reaches or reads by the name alone
    (`reached_by_name`: `forward`, `__call__` and other protocol methods run implicitly, `set_epoch`);
    chooses nothing to run at run time (`globals()[name]()`) and does not train; and either makes no
    call the pass sees but plain calls of them (`denoting` gives, for these functions and a module,
    which of them a name written there denotes; `self.summary()` denotes the methods named
    `summary`) and has no events, or is called only by such functions, added or removed, and
    `unreached` finds the pass reads nothing of it, given the facts of its module's version defining
    it, its calls but those plain calls, and whether it is added. None where one of them is neither.

    The pass reaches a function only through a call or a reference naming it (a method, also through
    `obj.method()` on an object it cannot resolve), and the first kind reach only each other: a call
    that only runs one (not started in another process, not wrapped for later, not handed over by
    name), made in its module or another, changes none of the pass's results, nor do the functions,
    defined or not, nor a name importing one. The second kind are reached by nothing, so what they
    run and hold reaches no program. Which texts may name them otherwise is for the caller to rule
    out (see `calls_of`)."""
    changes = list(changes)
    found: dict[str, str] = {}
    defining: dict[str, tuple[ModuleFacts, FunctionFacts, bool]] = {}  # by qualified name: each is in one version only
    for old, new in changes:
        differing = added_or_removed(old, new)
        prefix = f"{new.module}."
        for function in (*old.functions, *new.functions):
            if function.qualname not in differing:
                continue
            defined, _, within = function.qualname.removeprefix(prefix).partition(".<locals>.")
            if within and prefix + defined not in differing:
                return None  # a function within one that stays
            owner, _, name = defined.rpartition(".")
            if reached_by_name(name) or reached_by_name(function.qualname.rpartition(".")[2]):
                return None  # the pass reaches such a method, or reads such calls, by the name alone
            if function.trains or function.dispatches:
                return None  # a function choosing at run time what it runs may run anything
            found[function.qualname] = name
            if owner:
                found[_ANY_METHOD + name] = name
            added = any(function is defined for defined in new.functions)
            defining[function.qualname] = (new if added else old, function, added)
    seen: dict[str, tuple[ModuleFacts, FunctionFacts, list[CallFact], bool]] = {}
    calling: dict[str, set[str]] = {}  # of the functions added or removed, which call each other one by name
    for facts, function, added in defining.values():
        denoted = denoting(found, facts.module)
        beyond = [call for call in function.calls if not _plain(denoted, call)]
        if beyond or function.events:
            seen[function.qualname] = (facts, function, beyond, added)
        for call in function.calls:
            for name in _denoted_by(denoted, call):
                calling.setdefault(name, set()).add(function.qualname)
    if not seen:
        return found
    # A function the pass may see is reached by no call, but of functions added or removed that it
    # may see too: a function calling one is one of them, and is judged as they are.
    reaching = set(seen)
    pending = list(seen)
    while pending:
        name = found[pending.pop()]
        for caller in calling.get(name, ()):
            if caller not in reaching:
                facts, function, added = defining[caller]
                reaching.add(caller)
                pending.append(caller)
                seen.setdefault(caller, (facts, function, [], added))
    names = {found[name] for name in reaching}
    for _, new in changes:
        denoted = denoting(found, new.module)
        outside = (call for function in new.functions if function.qualname not in reaching for call in function.calls)
        if any(names.intersection(_denoted_by(denoted, call)) for call in (*new.module_calls, *new.main_calls, *outside)):
            return None
    if not all(unreached(facts, function, beyond, added) for facts, function, beyond, added in seen.values()):
        return None
    return found


def _denoted_by(denoted: Denoted, call: CallFact) -> set[str]:
    """The names of the functions of `denoted` that a call's targets, or its `obj.method()`, denote."""
    return {name for target in _named(call) if (name := denoted(target)) is not None}


def _named(call: CallFact) -> tuple[str, ...]:
    """What a call names for `Denoted`: its targets, or, for an `obj.method()` on an object the pass
    cannot resolve, any method of that name."""
    return call.targets or ((_ANY_METHOD + call.method,) if call.method is not None else ())


def added_or_removed(old: ModuleFacts, new: ModuleFacts) -> set[str]:
    """The functions that only one version of a module defines."""
    return {function.qualname for function in old.functions} ^ {function.qualname for function in new.functions}


def _only(denoted: Denoted, targets: tuple[str, ...]) -> bool:
    return bool(targets) and all(denoted(target) is not None for target in targets)


def _plain(denoted: Denoted, call: CallFact) -> bool:
    """A call that only runs functions the pass cannot see."""
    if call.reference or call.launcher or call.wrapped:
        return False
    return _only(denoted, _named(call))


def without_unseen(facts: ModuleFacts, denoted: Denoted, no_module: Callable[[str], bool]) -> ModuleFacts:
    """The facts less the functions the pass cannot see (`denoted`: see `unseen_functions`), the
    plain calls of them and what those pass (such a function takes no setting from its callers), and
    the names importing them unaliased (`from models.helpers import summary`, with the import of
    `models.helpers.summary`, where `no_module` says that names no module)."""
    facts = without_calls(facts, partial(_plain, denoted))
    return replace(
        facts,
        functions=tuple(function for function in facts.functions if denoted(function.qualname) is None),
        imports=tuple(name for name in facts.imports if not (denoted(name) is not None and no_module(name))),
        bindings=tuple((name, targets) for name, targets in facts.bindings if not (len(targets) == 1 and denoted(targets[0]) == name)),
        arguments=tuple(passed for passed in facts.arguments if not _only(denoted, passed.targets)),
    )


def calls_of(facts: ModuleFacts, denoted: Denoted, names: Iterable[str]) -> dict[str, Naming]:
    """Where the module's text may name the functions the pass cannot see, by their `names`: the lines
    defining one of them here, and the number of plain calls of them each other line makes. The
    caller rules out any other place naming one (a reference, a call that hands one over, an alias)."""
    lines: dict[str, dict[int, int]] = {name: {} for name in names}
    for call in facts.every_call():
        if _plain(denoted, call):
            for target in _named(call):
                counts = lines[denoted(target)]  # type: ignore[index]
                counts[call.line] = counts.get(call.line, 0) + 1
    defined_at: dict[str, list[range]] = {}
    for function in facts.functions:
        if (name := denoted(function.qualname)) is not None and name == function.qualname.rpartition(".")[2]:
            defined_at.setdefault(name, []).append(range(function.line, function.end_line + 1))
    return {name: (tuple(defined_at.get(name, ())), counts) for name, counts in sorted(lines.items())}
