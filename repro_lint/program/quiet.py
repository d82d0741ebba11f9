"""Calls the project pass cannot see, told from the facts of the few modules they name: a change's
check against the last run's record (engine/last_run.py), which holds no model.

Beyond `is_inert` (calls resolving to nothing in the project), a call of project functions is one the
pass cannot see where every function it may run, and every function those may run, is **quiet**: no
events, no training, nothing chosen at run time, no process started, no function handed over or
wrapped, no class built, no `obj.method()` that may be a project method not quiet itself (the pass
takes it for any project method of its name), no other fact naming it (seed reads, a caller's choice,
checkpoints, datasets, its class among the datasets'), no name the pass reaches or reads by itself
(`forward`, `set_epoch`), and nothing in it whose report depends on the programs reaching it (a local
finding's verdict, a seed option).
Reaching such functions from one more place (or one fewer) changes only which quiet functions are
reached, which none of the pass's results reads: the walks that find events, training, seeding
guards, processes and built classes pass through them and find nothing there.

A call's targets are followed only where they name a function exactly (its qualified name: what
`SymbolResolver.resolve` gives back first), through names modules bind to one name each (a package's
re-export), or nothing (`denotes_nothing`); a class, a star import or anything else keeps the call.
An `obj.method()` is followed to every project method of its name (`logger.warning(...)` where some
project class defines `warning`). The functions a call may run are
bounded (`_MOST_FUNCTIONS`): past that, the call is kept, and the pass runs.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterator
from dataclasses import fields

from repro_lint.core.records import strings_held
from repro_lint.facts.module_facts import CallFact, FunctionFacts, ModuleFacts
from repro_lint.program.call_graph import IMPLICIT_METHODS, methods_by_name, unresolved_method
from repro_lint.program.model import is_inert, reached_by_name
from repro_lint.program.module_names import ModuleNames
from repro_lint.program.symbols import denotes_nothing

# A call reaching more functions than this is kept: the check must stay a fraction of the pass.
_MOST_FUNCTIONS = 64
# Names bound to names followed for one target, at most (a package re-exporting a subpackage's
# re-export takes two).
_MOST_REEXPORTS = 8
# The facts that name functions without running them or being run by them: a function any of
# them names is not quiet (`seed_reads` of REP109, `choices`, `checkpoints`, `datasets`, `fix`).
_CALL_FACTS = frozenset(
    {
        "module", "path", "is_package", "imports", "bindings", "star_imports", "main_guard_line", "module_calls",
        "trains_at_module_level", "functions", "module_events", "dispatches_on_load", "main_calls", "main_events",
        "classes", "arguments", "spawns_workers",
    }
)  # fmt: skip


class UnseenCalls:
    """Whether the pass cannot see a call made in a module (`__call__`), with `facts_of` giving a
    project module's facts in the state judged, `function_names` the last names of the project's
    functions, `asked` the functions that local findings' verdicts ask about, and `method_modules`
    the modules that may define methods of a name. A call of a function in `unfollowed` is kept."""

    def __init__(
        self,
        names: ModuleNames,
        function_names: Collection[str],
        facts_of: Callable[[str], ModuleFacts | None],
        asked: Collection[str],
        method_modules: Callable[[str], Collection[str]],
        unfollowed: Collection[str] = (),
    ) -> None:
        self._names = names
        self._function_names = function_names
        self._facts_of = facts_of
        self._asked = asked
        self._unfollowed = unfollowed
        self._method_modules = method_modules
        self._quiet: dict[str, bool] = {}
        self._modules: dict[str, _Module | None] = {}

    def __call__(self, call: CallFact, module: str) -> bool:
        if is_inert(call, module, self._names, self._function_names, self._facts_of):
            return True
        return self._runs_quiet_functions_only(call, module)

    def _runs_quiet_functions_only(self, call: CallFact, module: str) -> bool:
        functions = self._functions_run(call, module)
        return functions is not None and all(self._is_quiet(function) for function in functions)

    def _functions_run(self, call: CallFact, module: str) -> list[str] | None:
        """The project functions `call` runs, each named exactly by a target; None where one of its
        targets may be anything else, or the call does more than run them."""
        if call.reference or call.wrapped or call.launcher is not None or reached_by_name(call.method or ""):
            return None
        if not call.targets:
            method = unresolved_method(call)
            return self._methods(method) if method is not None else None
        found = []
        for target in call.targets:
            member = self._member(target, module)
            if member is not None and self._function(member) is not None:
                found.append(member)
            elif member is not None or not self._denotes_nothing(target, module):
                return None  # a class, or what may be anything
        return found

    def linked(self, call: CallFact, module: str) -> tuple[list[str], list[str]] | None:
        """The project functions `call` (made in `module`, with targets) links to as the pass resolves
        it, those it may run before it returns first (`CallGraph.callees_run_now`): a function a
        target denotes; of a class, its `__init__`, then the other methods an instance runs
        (`CallGraph.resolve_functions`). None where a target may denote anything else, or the call
        starts a process or is one the pass reads by its method's name (`set_epoch`)."""
        if call.launcher is not None or reached_by_name(call.method or ""):
            return None
        now: list[str] = []
        later: list[str] = []
        for target in call.targets:
            member = self._member(target, module)
            if member is None:
                if not self._denotes_nothing(target, module):
                    return None
            elif self._function(member) is not None:
                now.append(member)
            else:
                for method in IMPLICIT_METHODS:
                    if self._function(name := f"{member}.{method}") is not None:
                        (now if method == "__init__" else later).append(name)
        return now, later

    def _denotes_nothing(self, target: str, module: str) -> bool:
        return self._names.split(target, module) is None or denotes_nothing(target, module, self._names, self._facts_of)

    def _member(self, target: str, module: str) -> str | None:
        """The project function or class `target`, written in `module`, denotes: itself, or a member
        of the module its prefix names, following names bound to a single name (`pkg.f` where
        `pkg/__init__.py` holds `from pkg.impl import f`), as `SymbolResolver.resolve` does; None
        where another step decides (a submodule, a star import, a name bound to several) or it is not
        known."""
        if self._defined(target):
            return target
        for _ in range(_MOST_REEXPORTS):
            split = self._names.split(target, module)
            if split is None or len(split[1]) != 1:
                return None
            owner, (name,) = split
            member = f"{owner}.{name}"
            facts = self._module(owner)
            if facts is None or member in self._names.modules:
                return None
            if member in facts.functions or member in facts.classes:
                return member if self._defined(member) else None
            bound = facts.facts.binding(name)
            if len(bound) != 1 or bound[0] == member:
                return None
            target, module = bound[0], owner
            if self._defined(target):
                return target
        return None

    def _defined(self, name: str) -> bool:
        """Whether `name` is the qualified name of a project function or class (a function in
        `unfollowed` is not followed)."""
        return self._function(name) is not None or self._class(name)

    def _methods(self, name: str) -> list[str] | None:
        """The project methods an `obj.name()` may run, as the pass takes it; None where a module that
        may define one is not known, or they are too many to follow."""
        modules = self._method_modules(name)
        if len(modules) > _MOST_FUNCTIONS:
            return None  # each defines one at least: too many, known without loading their facts
        found = []
        for module_name in sorted(modules):
            module = self._module(module_name)
            if module is None:
                return None
            found += module.methods.get(name, ())
        return found if len(found) <= _MOST_FUNCTIONS else None

    def _is_quiet(self, start: str) -> bool:
        """Whether `start` and every function it may run are quiet (see the module's docstring)."""
        known = self._quiet.get(start)
        if known is not None:
            return known
        reached = {start}
        pending = [start]
        quiet = True
        while pending and quiet:
            name = pending.pop()
            calls = self._quiet_calls(name)
            if calls is None:
                quiet = False
                break
            for called in calls:
                if called not in reached:
                    reached.add(called)
                    pending.append(called)
            quiet = len(reached) <= _MOST_FUNCTIONS
        # Every function reached is quiet where `start` is: their reach is within its own.
        for name in reached if quiet else (start,):
            self._quiet[name] = quiet
        return quiet

    def _quiet_calls(self, name: str) -> list[str] | None:
        """The functions quiet function `name` runs; None where it is not quiet itself."""
        found = self._function(name)
        if found is None:
            return None
        module, function = found
        if function.events or function.trains or function.dispatches or reached_by_name(name.rpartition(".")[2]):
            return None
        if name in self._asked or any(module.facts.function_at(option.start.line) == name for option in module.facts.seed_options):
            return None  # what the pass reports there depends on the programs reaching it
        owner = name.rpartition(".")[0]
        if name in module.named_under or (owner in module.classes and owner in module.named):
            return None
        runs: list[str] = []
        for call in function.calls:
            if is_inert(call, module.facts.module, self._names, self._function_names, self._facts_of):
                continue
            called = self._functions_run(call, module.facts.module)
            if called is None:
                return None
            runs.extend(called)
        return runs

    def _function(self, name: str) -> tuple[_Module, FunctionFacts] | None:
        """The function whose qualified name is `name`, with its module; None where no module a
        prefix of it names defines such a function (or its facts are not known)."""
        if name in self._unfollowed:
            return None
        for module in self._modules_above(name):
            if (function := module.functions.get(name)) is not None:
                return module, function
        return None

    def _class(self, name: str) -> bool:
        return any(name in module.classes for module in self._modules_above(name))

    def _modules_above(self, name: str) -> Iterator[_Module]:
        """The known project modules a prefix of `name` names, the longest prefix first: where a
        definition of that qualified name may be."""
        parts = name.split(".")
        for cut in range(len(parts) - 1, 0, -1):
            module = self._module(".".join(parts[:cut]))
            if module is not None:
                yield module

    def _module(self, name: str) -> _Module | None:
        if name not in self._modules:
            facts = self._facts_of(name) if name in self._names.modules else None
            self._modules[name] = _Module(facts) if facts is not None else None
        return self._modules[name]


class _Module:
    """A module's facts, indexed for the questions asked of each of its functions."""

    def __init__(self, facts: ModuleFacts) -> None:
        self.facts = facts
        self.functions = {function.qualname: function for function in facts.functions}
        self.methods = methods_by_name(facts)
        self.classes = frozenset(cls.qualname for cls in facts.classes)
        # The names its other facts hold, and every dotted name above one (`a.b` above `a.b.c`).
        self.named: set[str] = set()
        for field in fields(facts):
            if field.name not in _CALL_FACTS:
                strings_held(getattr(facts, field.name), self.named)
        self.named_under = {".".join(parts[:cut]) for name in self.named for parts in [name.split(".")] for cut in range(1, len(parts) + 1)}

