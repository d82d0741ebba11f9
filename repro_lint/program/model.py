"""The project model: modules' facts joined into an import graph, a call graph and programs.

A program is an entry-point module plus every project module it imports, transitively. Program-level
rules and the `training_only` filter of local rules work from this model alone, never from syntax.
What a program does in its own process (`events`) leaves out the functions it starts in fresh
processes (`mp.spawn(main_worker)`, process pools): those are programs of their own (`workers`).
"""

from __future__ import annotations

import fnmatch
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property

from repro_lint.program.declared import Declared
from repro_lint.facts.events import Event, tables
from repro_lint.facts.module_facts import CallFact, ClassFacts, FunctionFacts, ModuleFacts
from repro_lint.facts.launches import FRESH_START_METHODS, POOL
from repro_lint.core.message_text import elide, place
from repro_lint.program.module_names import ModuleNames
from repro_lint.program.symbols import SymbolResolver

# Calls, with the module making them: a module's top-level calls, or a function's.
_Calls = tuple[str, Sequence[CallFact]]


@dataclass(frozen=True)
class Worker:
    """A project function a program starts in processes of their own (`mp.spawn(main_worker, ...)`,
    `executor.submit(trainer)`), which inherit nothing of the launcher's RNG state or torch settings:
    the functions the launch may start, the module and line of the launch, and its start method."""

    functions: tuple[str, ...]
    module: ModuleFacts
    line: int
    start: str

    def started(self, here: str) -> str:
        """How a message in the file `here` says where the worker runs and where it is started."""
        processes = "pool task" if self.start == POOL else "fresh process"
        return f"`{elide(self.name)}` ({processes}, {place(self.module.path, self.line, here)})"

    @property
    def name(self) -> str:
        """`main_worker`, `Trainer.__call__`: the function's name within its module."""
        function = self.functions[0]
        module = self.module.module
        return function[len(module) + 1 :] if function.startswith(module + ".") else function.rpartition(".")[2]



@dataclass(frozen=True)
class Program:
    entry: ModuleFacts
    modules: tuple[str, ...]
    trains: bool
    # Set for the program a worker process runs: the worker's functions and the module-level code of
    # the program's modules (a fresh interpreter imports them again), not the launcher's `__main__` block.
    worker: Worker | None = None

    @property
    def key(self) -> str:
        return self.entry.module if self.worker is None else f"{self.entry.module}>{','.join(self.worker.functions)}"


@dataclass(frozen=True)
class Located:
    """An event and the module it happens in."""

    module: ModuleFacts = field(hash=False)  # hashing a module's facts hashes all of them, every time
    event: Event

    def seen_from(self, here: str) -> str:
        """Where it happens and what it is, as a message in the file `here` names it."""
        return f"{place(self.module.path, self.event.line, here)} ({elide(self.event.what, 48)})"


class ProjectModel:
    def __init__(
        self,
        modules: Iterable[ModuleFacts],
        entry_point_globs: Iterable[str] = (),
        declared: Declared | None = None,
    ) -> None:
        self.modules: dict[str, ModuleFacts] = {facts.module: facts for facts in sorted(modules, key=lambda m: m.module)}
        self._entry_point_globs = tuple(entry_point_globs)
        self.declared = declared or Declared()
        self.classes: dict[str, ClassFacts] = {
            cls.qualname: cls for facts in self.modules.values() for cls in facts.classes
        }
        self.functions: dict[str, FunctionFacts] = {
            function.qualname: function for facts in self.modules.values() for function in facts.functions
        }
        self._module_of_function = {
            function.qualname: facts.module for facts in self.modules.values() for function in facts.functions
        }
        # The project pass asks the same questions once per rule and per program: answer each once.
        self.names = ModuleNames(self.modules)
        self._symbols = SymbolResolver(self.modules, self.names, self.functions.keys() | self.classes.keys())
        self._symbol_cache: dict[tuple[str, str | None], str | None] = {}
        # By module, then by the call's identity: hashing a call fact hashes all its fields, millions of
        # times on a large project, and a (call, module) key per call took 25 MB on transformers. The
        # facts live as long as the model, so identities stay unique.
        self._callee_cache: dict[str, dict[int, tuple[str, ...]]] = {}
        self._module_sets: dict[tuple[str, ...], frozenset[str]] = {}
        self._run_now_cache: dict[str, dict[int, tuple[str, ...]]] = {}
        self._linking_calls_cache: dict[str, tuple[CallFact, ...]] = {}
        self._links_cache: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {}
        self._process_walks: dict[str, list[str]] = {}
        self._workers_cache: dict[str, tuple[Program, ...]] = {}
        self._reachable_cache: dict[str, list[str]] = {}
        self._reachable_set_cache: dict[str, frozenset[str]] = {}
        self._program_modules_cache: dict[str, tuple[str, ...]] = {}
        self._events_cache: dict[str, list[Located]] = {}
        self._methods: dict[str, list[str]] = {}
        self._kinds: dict[str, frozenset[str]] = {}
        self._methods_within_cache: dict[tuple[str, frozenset[str]], tuple[str, ...]] = {}
        # Views the rules build over the model (the checkpoints), kept with it and freed with it: a
        # module-level table keyed by the model, weakly or not, kept every model of a --fix run alive
        # (each view refers to its model), 100 MB a fix round on Megatron-LM.
        self.views: dict[str, object] = {}
        for qualname in sorted(self.functions):
            self._methods.setdefault(qualname.rpartition(".")[2], []).append(qualname)

    @property
    def function_names(self) -> frozenset[str]:
        """The last names of the project's functions: those an unresolved `obj.method()` may reach."""
        return frozenset(self._methods)

    # Modules and imports -------------------------------------------------------------------------

    def resolve_module(self, name: str, importer: str | None = None) -> str | None:
        return self.names.resolve(name, importer)

    def imported_modules(self, module: str) -> tuple[str, ...]:
        facts = self.modules[module]
        found = {resolved for name in facts.imports if (resolved := self.resolve_module(name, module))}
        found.discard(module)
        return tuple(sorted(found))

    def program_modules(self, entry: str) -> tuple[str, ...]:
        cached = self._program_modules_cache.get(entry)
        if cached is None:
            cached = self._program_modules_cache[entry] = self._imported_closure(entry)
        return cached

    def _imported_closure(self, entry: str) -> tuple[str, ...]:
        seen = {entry}
        stack = [entry]
        while stack:
            for imported in self.imported_modules(stack.pop()):
                if imported not in seen:
                    seen.add(imported)
                    stack.append(imported)
        return tuple(sorted(seen))

    # Calls -------------------------------------------------------------------------------------

    def resolve_functions(self, qualified: str, importer: str | None = None) -> tuple[str, ...]:
        """The project functions a call of a qualified name runs. Building an instance of a project
        class runs its `__init__`, and hands the object to code that calls its protocol methods
        implicitly (a DataLoader calls `__getitem__`, calling a module runs `forward`)."""
        found = self.resolve_symbol(qualified, importer)
        if found is None:
            return ()
        if found in self.functions:
            return (found,)
        return tuple(f"{found}.{method}" for method in _IMPLICIT_METHODS if f"{found}.{method}" in self.functions)

    def resolve_symbol(self, qualified: str, importer: str | None = None) -> str | None:
        """The project function or class a qualified name denotes, following re-exports through
        `__init__` modules and `from x import *`."""
        key = (qualified, importer)
        if key not in self._symbol_cache:
            self._symbol_cache[key] = self._symbols.resolve(qualified, importer)
        return self._symbol_cache[key]

    def callees(self, call: CallFact, caller_module: str, fallback_within: frozenset[str] | None = None) -> tuple[str, ...]:
        """Project functions a call may reach. `obj.method()` on an unknown object may be any method of
        that name in `fallback_within` (the program's own modules): over-approximating there keeps
        "does this program seed / train?" from missing code written as methods. Without
        `fallback_within` only resolved callees count (where a wrong guess would raise a finding)."""
        resolved = self._resolved_callees(call, caller_module)
        if resolved or fallback_within is None:
            return resolved
        method = _unresolved_method(call)
        return self._methods_within(method, fallback_within) if method is not None else resolved

    def _resolved_callees(self, call: CallFact, caller_module: str) -> tuple[str, ...]:
        cache = self._callee_cache.get(caller_module)
        if cache is None:
            cache = self._callee_cache[caller_module] = {}
        resolved = cache.get(id(call))
        if resolved is None:
            if call.reference:
                targets = (self.resolve_symbol(target, caller_module) for target in call.targets)
                resolved = tuple(sorted({found for found in targets if found in self.functions}))
            else:
                resolved = tuple(sorted({found for target in call.targets for found in self.resolve_functions(target, caller_module)}))
            cache[id(call)] = resolved
        return resolved

    def _module_set(self, modules: tuple[str, ...]) -> frozenset[str]:
        """One set object per program's modules: `_methods_within` is cached by it, and comparing two
        equal sets of thousands of modules on every look-up cost seconds."""
        found = self._module_sets.get(modules)
        if found is None:
            found = self._module_sets[modules] = frozenset(modules)
        return found

    def _methods_within(self, method: str, within: frozenset[str]) -> tuple[str, ...]:
        """Methods named `method` in the modules `within`: asked for every unresolved `obj.method()`
        of every program, each time filtering all the project's methods of that name."""
        key = (method, within)
        found = self._methods_within_cache.get(key)
        if found is None:
            found = self._methods_within_cache[key] = tuple(
                name
                for name in self._methods.get(method, ())
                if self._module_of_function[name] in within and _is_method(name, self._module_of_function[name])
            )
        return found

    def callees_run_now(self, call: CallFact, caller_module: str) -> tuple[str, ...]:
        """The project functions a call runs before it returns: a function, or a class's `__init__`
        (not the protocol methods users of the instance call later). A function started in another
        process runs there, not here."""
        if call.launcher:
            return ()
        cache = self._run_now_cache.get(caller_module)
        if cache is None:
            cache = self._run_now_cache[caller_module] = {}
        found = cache.get(id(call))
        if found is None:
            named = {self.resolve_symbol(target, caller_module) for target in call.targets}
            found = cache[id(call)] = tuple(
                name for name in self.callees(call, caller_module) if name in named or name.endswith(".__init__")
            )
        return found

    def _entry_calls(self, entry: str, modules: Collection[str]) -> list[_Calls]:
        """Calls made when `entry` runs: module-level code of every module it imports, and the
        `__main__` block of the entry alone."""
        groups = self._module_level_calls(modules)
        groups.append((entry, self.modules[entry].main_calls))
        return groups

    def _module_level_calls(self, modules: Collection[str]) -> list[_Calls]:
        return [(module, self.modules[module].module_calls) for module in sorted(modules)]

    def _walk(self, entry: str) -> list[str]:
        """Project functions that may run when `entry` runs, followed transitively."""
        cached = self._reachable_cache.get(entry)
        if cached is None:
            cached = self._reachable_cache[entry] = self._follow_calls(entry, self.program_modules(entry))
        return cached

    def _follow_calls(self, entry: str, modules: tuple[str, ...]) -> list[str]:
        within = self._module_set(modules)

        def called(function: str) -> Iterator[str]:
            # Each function's links taken whole: the walks of a large project's programs would
            # otherwise resolve millions of calls one by one.
            resolved, methods = self._links(function)
            yield from resolved
            for method in methods:
                yield from self._methods_within(method, within)

        return self._reach([callee for module, calls in self._entry_calls(entry, modules) for call in calls for callee in self.callees(call, module, within)], called)

    def _links(self, function: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """The project functions `function`'s calls resolve to, and the methods named by its unresolved
        `obj.method()` calls (which may be any method of that name in a program's modules)."""
        found = self._links_cache.get(function)
        if found is None:
            module = self._module_of_function[function]
            resolved: set[str] = set()
            methods: set[str] = set()
            for call in self._linking_calls(function):
                callees = self._resolved_callees(call, module)
                if callees:
                    resolved.update(callees)
                elif (method := _unresolved_method(call)) is not None:
                    methods.add(method)
            found = self._links_cache[function] = (tuple(sorted(resolved)), tuple(sorted(methods)))
        return found

    @staticmethod
    def _reach(stack: list[str], called: Callable[[str], Iterable[str]]) -> list[str]:
        """The functions in `stack` and every project function they call, transitively, as `called`
        gives the functions each one calls."""
        seen: set[str] = set()
        while stack:
            name = stack.pop()
            if name in seen:
                continue
            seen.add(name)
            stack.extend(called(name))
        return sorted(seen)

    def _linking_calls(self, function: str) -> tuple[CallFact, ...]:
        """The calls of `function` that may reach a project function: resolved to one, or an unresolved
        `obj.method()`. Most calls go to libraries; walks skip them once, not once per program."""
        found = self._linking_calls_cache.get(function)
        if found is None:
            module = self._module_of_function[function]
            found = self._linking_calls_cache[function] = tuple(
                call for call in self.functions[function].calls if self._resolved_callees(call, module) or _unresolved_method(call) is not None
            )
        return found

    def module_trains_on_load(self, module: str) -> bool:
        """Running the module (its module-level code and main block) trains, directly or through calls."""
        facts = self.modules[module]
        if facts.trains_at_module_level:
            return True
        # Most modules of a library cannot reach training from their load-time calls at all; proving
        # that on the over-approximated call graph spares the module's own walk.
        everywhere = self._all_modules
        starts = [(module, call) for call in facts.main_calls]
        if module in self._importing_training_loaders:
            starts += [
                (imported, call)
                for imported in self.program_modules(module)
                if imported in self._loads_training
                for call in self.modules[imported].module_calls
            ]
        if not any(callee in self._may_reach_training for where, call in starts for callee in self.callees(call, where, everywhere)):
            return False
        return any(self.functions[name].trains for name in self._walk(module))

    @cached_property
    def _all_modules(self) -> frozenset[str]:
        return frozenset(self.modules)

    @cached_property
    def _may_reach_training(self) -> frozenset[str]:
        """Functions from which a training function may be reached when `obj.method()` may be any
        method of that name in the project: a superset of what any program's walk reaches."""
        # An unresolved `obj.m()` reaches every method named `m`: one node stands for them all, so the
        # graph has an edge per call and per method instead of one per pair.
        callers: dict[str, set[str]] = {}
        for name in self.functions:
            if _is_method(name, self._module_of_function[name]):
                callers.setdefault(name, set()).add(_ANY_METHOD + name.rpartition(".")[2])
            resolved, methods = self._links(name)  # which the programs' walks take again
            for callee in (*resolved, *(_ANY_METHOD + method for method in methods)):
                callers.setdefault(callee, set()).add(name)
        reaching = _backward_closure({name for name, function in self.functions.items() if function.trains}, callers)
        return frozenset(name for name in reaching if not name.startswith(_ANY_METHOD))

    @cached_property
    def _importing_training_loaders(self) -> frozenset[str]:
        """Modules that import, transitively, a module in `_loads_training` (or are one)."""
        importers: dict[str, set[str]] = {}
        for module in self.modules:
            for imported in self.imported_modules(module):
                importers.setdefault(imported, set()).add(module)
        return _backward_closure(self._loads_training, importers)

    @cached_property
    def _loads_training(self) -> frozenset[str]:
        """Modules whose module-level code may call into training (see `_may_reach_training`)."""
        everywhere = self._all_modules
        return frozenset(
            module
            for module, facts in self.modules.items()
            if any(callee in self._may_reach_training for call in facts.module_calls for callee in self.callees(call, module, everywhere))
        )

    # Entry points and programs ------------------------------------------------------------------

    def is_entry_point(self, module: str) -> bool:
        facts = self.modules[module]
        if facts.main_guard_line is not None or self.module_trains_on_load(module) or facts.path.endswith(".ipynb"):
            return True
        return any(fnmatch.fnmatch(facts.path, pattern) for pattern in self._entry_point_globs)

    @cached_property
    def programs(self) -> tuple[Program, ...]:
        return tuple(
            Program(self.modules[module], self.program_modules(module), self.module_trains_on_load(module))
            for module in self.modules
            if self.is_entry_point(module)
        )

    def programs_reaching(self, module: str) -> Iterator[Program]:
        return (program for program in self.programs if module in program.modules)

    # What a program does ------------------------------------------------------------------------

    def _reachable(self, program: Program) -> list[str]:
        return self._walk(program.entry.module)

    def _call_guards(self, program: Program, seeding: frozenset[str]) -> dict[str, str | None]:
        """For each function in `seeding`, the seed option guarding every call to it (`args.seed` when
        all its calls sit under `if args.seed is not None:`), else None."""
        guards: dict[str, set[str | None]] = {name: set() for name in seeding}
        if seeding:
            within = self._module_set(program.modules)
            # Of a function's calls, only those linking to project functions can reach a seeding one:
            # a large program's functions make hundreds of thousands of calls, most into libraries.
            for module, calls in self._process_calls(program, linking_only=True):
                for call in calls:
                    for callee in self.callees(call, module, within):
                        if callee in seeding:
                            guards[callee].add(call.guard)
        return {name: next(iter(found)) if len(found) == 1 else None for name, found in guards.items()}

    def events(self, program: Program) -> list[Located]:
        """Everything that may happen in `program`, entry module first, then by path and line. An
        event in a function only ever called under a seed guard carries that guard."""
        cached = self._events_cache.get(program.key)
        if cached is None:
            cached = self._events_cache[program.key] = self._collect_events(program)
        return cached

    def _collect_events(self, program: Program) -> list[Located]:
        entry = self.modules[program.entry.module]
        found = [Located(self.modules[module], event) for module in program.modules for event in self.modules[module].module_events]
        if program.worker is None:
            found.extend(Located(entry, event) for event in entry.main_events)
        functions = self._process_functions(program)
        # Guards matter only to seed events: the calls of a large program are many, its seeding functions few.
        call_guards = self._call_guards(program, frozenset(name for name in functions if any(event.kind == "seed" for event in self.functions[name].events)))
        for name in functions:
            module = self.modules[self._module_of_function[name]]
            guard = call_guards.get(name)
            found.extend(
                Located(module, replace(event, guard=event.guard or guard) if event.kind == "seed" else event)
                for event in self.functions[name].events
            )
        found.extend(self._framework_subclass_seeds(program))
        entry = program.entry.module
        # Told apart by module name and event: a set of them hashes the event alone (hashing a
        # module's facts is costly), and one event made alike in many modules would fill one bucket.
        unique = {(located.module.module, located.event): located for located in found}
        return sorted(unique.values(), key=lambda located: (located.module.module != entry, located.module.path, located.event.order))

    def _framework_subclass_seeds(self, program: Program) -> list[Located]:
        """`MyTrainer(...)` where MyTrainer subclasses a framework object that seeds (HF Trainer)."""
        frameworks = tables().frameworks
        found = []
        for module, calls in self._process_calls(program):
            for call in calls:
                if call.reference:
                    continue
                for target in call.targets:
                    cls = self.resolve_symbol(target, module)
                    framework = self._framework_base(cls) if cls in self.classes else None
                    if framework is not None:
                        for rng in frameworks[framework]["seeds"]:
                            found.append(Located(self.modules[module], Event("seed", call.line, framework, rng)))
        return found

    # Processes -------------------------------------------------------------------------------------

    def workers(self, program: Program) -> tuple[Program, ...]:
        """The programs of the functions `program` starts in fresh processes (spawned, or tasks of a
        process pool), one per launched function, first launch first."""
        cached = self._workers_cache.get(program.key)
        if cached is None:
            cached = self._workers_cache[program.key] = self._find_workers(program)
        return cached

    def _find_workers(self, program: Program) -> tuple[Program, ...]:
        if not any(self._module_processes[module][1] for module in program.modules):
            return ()
        found: dict[tuple[str, ...], Program] = {}
        fresh_default = self._fresh_default(program)
        for module, calls in self._process_calls(program):
            for call in calls:
                if call.launcher is None or self._runs_here(call, fresh_default):
                    continue
                functions = self.callees(call, module)
                if not functions or functions in found:
                    continue
                worker = Program(program.entry, program.modules, False, Worker(functions, self.modules[module], call.line, call.start))
                trains = any(self.functions[name].trains for name in self._process_functions(worker))
                found[functions] = replace(worker, trains=trains)
        return tuple(found.values())

    def trains_in_process(self, program: Program) -> bool:
        """Whether `program` trains in its own process, not only in workers it starts elsewhere."""
        if program.worker is not None:
            return program.trains
        return program.entry.trains_at_module_level or any(self.functions[name].trains for name in self._process_functions(program))

    def _process_functions(self, program: Program) -> list[str]:
        """Project functions that run in `program`'s own process: for a worker, its functions and what
        they call; for an entry, what its code calls, except functions it starts in fresh processes
        (a callable object submitted to an executor is not run by building it)."""
        cached = self._process_walks.get(program.key)
        if cached is not None:
            return cached
        if program.worker is None and not any(self._module_processes[module][1] for module in program.modules):
            return self._walk(program.entry.module)  # nothing starts elsewhere: every call runs here
        within = self._module_set(program.modules)
        fresh_default = self._fresh_default(program)
        launched = self._launched_fresh(program, fresh_default)

        def callees(call: CallFact, module: str) -> tuple[str, ...]:
            return self._callees_here(call, module, within, launched, fresh_default)

        def called(function: str) -> Iterator[str]:
            module = self._module_of_function[function]
            return (callee for call in self._linking_calls(function) for callee in callees(call, module))

        stack = list(program.worker.functions) if program.worker is not None else []
        stack += [callee for module, calls in self._process_roots(program) for call in calls for callee in callees(call, module)]
        found = self._process_walks[program.key] = self._reach(stack, called)
        return found

    def _process_roots(self, program: Program) -> list[_Calls]:
        """The calls `program`'s process makes outside functions: the entry's (module-level code of
        its modules and its `__main__` block), or, in a worker's fresh interpreter, the module-level
        code alone."""
        if program.worker is None:
            return self._entry_calls(program.entry.module, program.modules)
        return self._module_level_calls(program.modules)

    def _process_calls(self, program: Program, linking_only: bool = False) -> list[_Calls]:
        """The calls made in `program`'s own process; with `linking_only`, of its functions' calls only
        those that may reach a project function (`_linking_calls`)."""
        groups = self._process_roots(program)
        calls = self._linking_calls if linking_only else (lambda name: self.functions[name].calls)
        groups.extend((self._module_of_function[name], calls(name)) for name in self._process_functions(program))
        return groups

    def _callees_here(
        self, call: CallFact, module: str, within: frozenset[str], launched: frozenset[str], fresh_default: bool
    ) -> tuple[str, ...]:
        if not self._runs_here(call, fresh_default):
            return ()
        found = self.callees(call, module, within)
        if call.reference or not launched or not set(found) & launched:
            return found
        # `Trainer(args)` builds an object whose `__call__` runs in a submitted job, not here.
        named = {self.resolve_symbol(target, module) for target in call.targets}
        return tuple(name for name in found if name not in launched or name in named)

    @staticmethod
    def _runs_here(call: CallFact, fresh_default: bool) -> bool:
        """Whether the function a call hands over runs in the caller's process (or a fork of it)."""
        if call.launcher is None:
            return True
        if call.start == POOL or call.start in FRESH_START_METHODS:
            return False
        return not (call.start == "" and fresh_default)

    def _fresh_default(self, program: Program) -> bool:
        """Whether the program sets a start method that starts fresh interpreters (`set_start_method("spawn")`)."""
        return any(self._module_processes[module][0] for module in program.modules)

    def _launched_fresh(self, program: Program, fresh_default: bool) -> frozenset[str]:
        """Functions that code in the program's modules starts in fresh processes."""
        return frozenset(
            name
            for module in program.modules
            for call in self._module_processes[module][1]
            if not self._runs_here(call, fresh_default)
            for name in self.callees(call, module)
        )

    @cached_property
    def _module_processes(self) -> dict[str, tuple[bool, tuple[CallFact, ...]]]:
        """Per module: whether it sets a fresh start method, and its launching calls (main block included)."""
        found = {}
        for name, facts in self.modules.items():
            events = [*facts.module_events, *facts.main_events, *(event for function in facts.functions for event in function.events)]
            calls = [*facts.module_calls, *facts.main_calls, *(call for function in facts.functions for call in function.calls)]
            fresh = any(event.kind == "start_method" and event.what in FRESH_START_METHODS for event in events)
            found[name] = (fresh, tuple(call for call in calls if call.launcher))
        return found

    def _framework_base(self, qualname: str) -> str | None:
        """The framework class (HF Trainer) `qualname` derives from through project classes, if
        any: bases searched depth first in the order written, each class once (an inheritance chain
        is as long as the project makes it, and broken code may make it a cycle)."""
        seen = {qualname}
        stack = [self._bases(qualname)]
        while stack:
            step = next(stack[-1], None)
            if step is None:
                stack.pop()
                continue
            base, module = step
            if base in tables().frameworks:
                return base
            resolved = self.resolve_symbol(base, module)
            if resolved is not None and resolved in self.classes and resolved not in seen:
                seen.add(resolved)
                stack.append(self._bases(resolved))
        return None

    def _bases(self, qualname: str) -> Iterator[tuple[str, str]]:
        """A project class's bases as written, with the module they are written in."""
        cls = self.classes.get(qualname)
        module = qualname.rsplit(".", 1)[0]
        return iter([(base, module) for base in cls.bases] if cls is not None else [])

    def functions_drawing(self, rng: str) -> frozenset[str]:
        """Project functions that draw from `rng`, directly or through the functions they call."""
        drawing = {
            name
            for name, function in self.functions.items()
            if any(event.kind in ("consume", "init") and event.rng == rng for event in function.events)
        }
        return _backward_closure(drawing, self._run_now_callers)

    def callers(self, function: str) -> frozenset[str]:
        """The project functions whose calls run `function` before they return; for a method, also
        the methods of its class that call an unknown object's method of its name
        (`self._save_rng_state()`)."""
        found = set(self._run_now_callers.get(function, ()))
        module = self._module_of_function.get(function)
        if module is not None and _is_method(function, module):
            owner, _, name = function.rpartition(".")
            found.update(
                sibling.qualname
                for sibling in self.modules[module].functions
                if sibling.qualname.rpartition(".")[0] == owner and any(_unresolved_method(call) == name for call in sibling.calls)
            )
        return frozenset(found)

    @cached_property
    def _run_now_callers(self) -> dict[str, set[str]]:
        """For each function, the functions whose calls run it before they return."""
        callers: dict[str, set[str]] = {}
        for name, function in self.functions.items():
            module = self._module_of_function[name]
            for call in self._linking_calls(name):
                for callee in self.callees_run_now(call, module):
                    callers.setdefault(callee, set()).add(name)
        return callers

    def spawns_workers(self, program: Program) -> bool:
        return any(self.modules[module].spawns_workers for module in program.modules)

    def only_reached_by_non_training_programs(self, module: str, function: str | None = None) -> bool:
        """Whether code of `module` in `function` (the innermost function holding it; None for code
        outside functions) only runs in programs that never train (an inference script, an export).
        Judged for the function when programs reach it, else for the module; a test module that no
        program reaches counts as not training."""
        if module not in self.modules:
            return False  # not Python (a launch script): no program reaches it
        if function is not None:
            reaching = [program for program in self.programs if function in self._reachable_set(program)]
            if reaching:
                return not any(program.trains for program in reaching)
        reaching = list(self.programs_reaching(module))
        if reaching:
            return not any(program.trains for program in reaching)
        return _is_test_module(self.modules[module].path)

    def reachable_functions(self, program: Program) -> frozenset[str]:
        """Project functions that may run when `program` runs."""
        return self._reachable_set(program)

    def _reachable_set(self, program: Program) -> frozenset[str]:
        cached = self._reachable_set_cache.get(program.entry.module)
        if cached is None:
            cached = self._reachable_set_cache[program.entry.module] = frozenset(self._reachable(program))
        return cached

    def program_satisfies(self, program: Program, condition: Iterable[str]) -> bool:
        """Whether `program` meets every requirement of a rule's program condition: "trains",
        "cuda" (some of its work runs on CUDA), "nondeterministic" (deterministic algorithms are never
        switched on globally; `cudnn.deterministic` alone covers only cuDNN, and a value that cannot
        be known counts as on, so the rule stays silent), "epochs_unset" (no code on its path calls
        `.set_epoch(...)` on anything). The program's events are gathered only when a requirement
        needs them."""
        for requirement in condition:
            if requirement == "trains":
                met = program.trains
            elif requirement == "epochs_unset":
                met = not self._calls_method(program, _SET_EPOCH)
            elif requirement == "cuda":
                met = "cuda" in self._event_kinds(program)
            elif requirement == "nondeterministic":
                met = "deterministic" not in self._event_kinds(program)
            else:
                raise ValueError(f"unknown program requirement {requirement!r}")
            if not met:
                return False
        return True

    def _calls_method(self, program: Program, method: str) -> bool:
        """Whether code on the program's path calls `<anything>.<method>(...)`."""
        calls = [call for _, group in self._entry_calls(program.entry.module, program.modules) for call in group]
        calls += [call for name in self._reachable(program) for call in self.functions[name].calls]
        return any(call.method == method for call in calls)

    def reached_by_program_where(self, module: str, condition: Iterable[str]) -> bool:
        """Whether some program that reaches `module` meets `condition`."""
        required = tuple(condition)
        return any(self.program_satisfies(program, required) for program in self.programs_reaching(module))

    def _event_kinds(self, program: Program) -> frozenset[str]:
        """The kinds of event that may happen in `program` (as `events` finds them, without the
        seed guards and framework seeds that only seed events need, which are costly to resolve)."""
        cached = self._kinds.get(program.entry.module)
        if cached is None:
            happen = [event for module in program.modules for event in self.modules[module].module_events]
            happen += program.entry.main_events
            happen += [event for name in self._reachable(program) for event in self.functions[name].events]
            cached = frozenset(
                event.kind for event in happen if not (event.kind == "deterministic" and event.what == "cudnn.deterministic = True")
            )
            self._kinds[program.entry.module] = cached
        return cached


_ANY_METHOD = "*."  # no qualified name starts so
# The method whose calls, whatever they resolve to, decide the "epochs_unset" requirement.
_SET_EPOCH = "set_epoch"


def is_inert(call: CallFact, module: str, names: ModuleNames, function_names: Collection[str]) -> bool:
    """Whether the project pass cannot see `call` (made in `module`): no prefix of its targets names
    a project module (so `resolve_symbol` finds nothing), it may not be a project method
    (`obj.method()` with no such method name among the project's functions), it starts no process,
    and it is not a `set_epoch` call. Adding or removing such a call changes none of the pass's
    results (the model reads calls nowhere else)."""
    if call.launcher is not None or call.method == _SET_EPOCH:
        return False
    method = _unresolved_method(call)
    if method is not None and method in function_names:
        return False
    return all(names.split(target, module) is None for target in call.targets)


def _unresolved_method(call: CallFact) -> str | None:
    """The method name an unresolved call may reach any method of: `obj.method()` on an unknown
    object, not a dunder (which Python calls implicitly, and the facts model on their own)."""
    if call.method is None or call.targets or call.method.startswith("__"):
        return None
    return call.method


_IMPLICIT_METHODS = ("__init__", "__call__", "forward", "__getitem__", "__getitems__", "__iter__", "__next__")


def _backward_closure(targets: Iterable[str], sources: dict[str, set[str]]) -> frozenset[str]:
    """`targets` and everything that reaches one of them, given who reaches each name directly."""
    found = set(targets)
    stack = sorted(found)
    while stack:
        for source in sources.get(stack.pop(), ()):
            if source not in found:
                found.add(source)
                stack.append(source)
    return frozenset(found)


def _is_test_module(path: str) -> bool:
    name = path.rpartition("/")[2]
    return name.startswith("test_") or name.endswith("_test.py") or name == "conftest.py" or "/tests/" in f"/{path}"


def _is_method(qualname: str, module: str) -> bool:
    """`module.Class.method`, not a module-level function."""
    return qualname.count(".") > module.count(".") + 1 and "<locals>" not in qualname
