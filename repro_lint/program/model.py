"""The project model: modules' facts joined into an import graph, a call graph and programs.

A program is an entry-point module plus every project module it imports, transitively. Program-level
rules and the `training_only` filter of local rules work from this model alone, never from syntax.
What a program does in its own process (`events`) leaves out the functions it starts in fresh
processes (`mp.spawn(main_worker)`, process pools): those are programs of their own
(`processes.workers`). The model holds its call graph (`calls`, see `call_graph.py`) and what runs
in which process (`processes`, see `processes.py`); this module builds them, finds the programs, and
answers what the rules and the engine ask of them.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import replace
from functools import cached_property
from typing import NamedTuple

from repro_lint.core.graphs import closure
from repro_lint.facts.callers_choice import chosen_names
from repro_lint.facts.events import Event, tables
from repro_lint.facts.module_facts import CallFact, ClassFacts, FunctionFacts, ModuleFacts
from repro_lint.program.call_graph import IMPLICIT_METHODS, CallGraph, Resolutions, unresolved_method
from repro_lint.program.declared import Declared
from repro_lint.program.module_names import ModuleNames
from repro_lint.program.processes import Processes
from repro_lint.program.programs import Located, Program
from repro_lint.program.symbols import denotes_nothing


class _InitEdges(NamedTuple):
    """Where a function's calls lead, for the walk that finds what runs only inside blocks building
    modules without initialising their weights: each resolved callee with whether it runs inside
    such a block, when the calls are made inside one and when made outside; and the method names of
    its unresolved `obj.method()` calls, whose callees run outside."""

    inside: tuple[tuple[str, bool], ...]
    outside: tuple[tuple[str, bool], ...]
    methods: tuple[str, ...]


class ProjectModel:
    def __init__(
        self,
        modules: Iterable[ModuleFacts],
        entry_point_globs: Iterable[str] = (),
        declared: Declared | None = None,
        kept: Mapping[str, Resolutions] | None = None,
    ) -> None:
        """`kept`: what a pass before resolved that holds for these facts (program/kept_resolutions.py)."""
        self.modules: dict[str, ModuleFacts] = {facts.module: facts for facts in sorted(modules, key=lambda m: m.module)}
        self._entry_point_globs = tuple(entry_point_globs)
        self.declared = declared or Declared()
        self.classes: dict[str, ClassFacts] = {
            cls.qualname: cls for facts in self.modules.values() for cls in facts.classes
        }
        self.functions: dict[str, FunctionFacts] = {
            function.qualname: function for facts in self.modules.values() for function in facts.functions
        }
        self.names = ModuleNames(self.modules)
        self.calls = CallGraph(self.modules, self.functions, self.classes, self.names, kept)
        self.processes = Processes(self.modules, self.functions, self.calls)
        # The project pass asks the same questions once per rule and per program: answer each once.
        self._reachable_set_cache: dict[str, frozenset[str]] = {}
        self._built_set_cache: dict[tuple[str, tuple[str, ...]], frozenset[str]] = {}
        self._program_modules_cache: dict[str, tuple[str, ...]] = {}
        self._imported_modules_cache: dict[str, tuple[str, ...]] = {}
        self._events_cache: dict[str, list[Located]] = {}
        self._function_init_edges: dict[str, _InitEdges] = {}
        self._root_init_edges: dict[tuple[str, int], _InitEdges] = {}
        # By module and the identity of a tuple of calls of its facts, which live as long as the model.
        self._framework_seeds_cache: dict[tuple[str, int], tuple[Event, ...]] = {}
        self._calls_to_seeding_cache: dict[tuple[str, int], tuple[tuple[CallFact, tuple[str, ...], str | None], ...]] = {}
        self._kinds: dict[str, frozenset[str]] = {}
        # Views the rules build over the model (the checkpoints), kept with it and freed with it: a
        # module-level table keyed by the model, weakly or not, kept every model of a --fix run alive
        # (each view refers to its model), 100 MB a fix round on Megatron-LM.
        self.views: dict[str, object] = {}

    @property
    def function_names(self) -> frozenset[str]:
        """The last names of the project's functions: those an unresolved `obj.method()` may reach."""
        return frozenset(self.calls.methods)

    @property
    def method_modules(self) -> dict[str, frozenset[str]]:
        """The modules defining the project's methods of each last name (`CallGraph.method_modules`)."""
        return self.calls.method_modules

    @property
    def chosen_names(self) -> frozenset[str]:
        """The last names of the functions whose setting a caller decides: those a call must
        (maybe) reach for the pass to read its arguments."""
        return chosen_names(choice for facts in self.modules.values() for choice in facts.choices)

    @property
    def checkpointing(self) -> frozenset[str]:
        """The functions with checkpoint facts, and those that run one, transitively: whose callers
        decide what is known to run with a checkpoint (`CallGraph.calling`, `callers`), and whether
        it may run at all (`CallGraph.linked`). A function that no walk reaches may call any other
        function, but these and those running only in DataLoader workers, without changing the
        pass's results (engine/last_run.py)."""
        return self.calls.calling_any(function.qualname for facts in self.modules.values() for function in facts.checkpoints.functions)

    @property
    def dispatch_scopes(self) -> frozenset[str]:
        """Where calls that choose at run time what they run may find it (`globals()[name]()`: their
        module): a function defined there may be reached without a call naming it."""
        return frozenset(
            scope
            for facts in self.modules.values()
            for scope in (*facts.dispatches_on_load, *(scope for function in facts.functions for scope in function.dispatches))
        )

    @property
    def importers_read(self) -> frozenset[str]:
        """The modules whose importers the pass reads: the entry points that are so only while
        nothing imports them, and those importing, transitively, a module whose module-level code
        may train (a module importing one may train when it loads, and be an entry point). A module
        that imports none of them, and that nothing imports, is in no program but its own
        (engine/last_run.py)."""
        entries = (program.entry.module for program in self.programs)
        return frozenset(module for module in entries if not self.entry_of_itself(module)) | self._importing_training_loaders

    # Modules and imports -------------------------------------------------------------------------

    def resolve_module(self, name: str, importer: str | None = None) -> str | None:
        return self.names.resolve(name, importer)

    def imported_modules(self, module: str) -> tuple[str, ...]:
        cached = self._imported_modules_cache.get(module)
        if cached is None:
            found = {resolved for name in self.modules[module].imports if (resolved := self.resolve_module(name, module))}
            found.discard(module)
            cached = self._imported_modules_cache[module] = tuple(sorted(found))
        return cached

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

    # Training when a module runs ------------------------------------------------------------------

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
        if not facts.dispatches_on_load and not any(
            callee in self._may_reach_training for where, call in starts for callee in self.calls.callees(call, where, everywhere)
        ):
            return False
        modules = self.program_modules(module)
        if any(self.functions[name].trains for name in self.calls.walk(module, modules)):
            return True
        # Past a call that may run anything, the program trains when any of its modules holds a training step.
        return self.calls.dispatches_anything(module, modules) and any(function.trains for name in modules for function in self.modules[name].functions)

    @cached_property
    def _all_modules(self) -> frozenset[str]:
        return frozenset(self.modules)

    @cached_property
    def _may_reach_training(self) -> frozenset[str]:
        """Functions from which a training function may be reached (`CallGraph.reaching`). A function
        that chooses at run time what it runs may run any of them, training among them."""
        return self.calls.reaching(name for name, function in self.functions.items() if function.trains or function.dispatches)

    @cached_property
    def _importing_training_loaders(self) -> frozenset[str]:
        """Modules that import, transitively, a module in `_loads_training` (or are one)."""
        importers: dict[str, set[str]] = {}
        for module in self.modules:
            for imported in self.imported_modules(module):
                importers.setdefault(imported, set()).add(module)
        return closure(self._loads_training, importers)

    @cached_property
    def _loads_training(self) -> frozenset[str]:
        """Modules whose module-level code may call into training (see `_may_reach_training`)."""
        everywhere = self._all_modules
        return frozenset(
            module
            for module, facts in self.modules.items()
            if any(callee in self._may_reach_training for call in facts.module_calls for callee in self.calls.callees(call, module, everywhere))
        )

    # Entry points and programs ------------------------------------------------------------------

    def is_entry_point(self, module: str) -> bool:
        """A module run as a program: one with a main guard, a notebook, one the `entry-points`
        setting names, or one that trains when run and that no project module imports (an imported
        module's top-level code runs as part of its importer's program, which is the entry point)."""
        return self.entry_of_itself(module) or (module not in self._imported and self.module_trains_on_load(module))

    def entry_of_itself(self, module: str) -> bool:
        """An entry point whatever imports it (`entry_of_itself`)."""
        return entry_of_itself(self.modules[module], self._entry_point_globs)

    def is_imported(self, module: str) -> bool:
        """Whether some other project module imports `module`."""
        return module in self._imported

    @cached_property
    def _imported(self) -> frozenset[str]:
        """The modules some other project module imports."""
        return frozenset(imported for module in self.modules for imported in self.imported_modules(module))

    @cached_property
    def programs(self) -> tuple[Program, ...]:
        return tuple(
            Program(self.modules[module], self.program_modules(module), self.module_trains_on_load(module))
            for module in self.modules
            if self.is_entry_point(module)
        )

    def programs_reaching(self, module: str) -> Iterator[Program]:
        return iter(self._programs_by_module.get(module, ()))

    @cached_property
    def _programs_by_module(self) -> dict[str, list[Program]]:
        """The programs holding each module, in the order of `programs`: asked for modules by the
        hundred, where a program's modules are thousands (diffusers: 263 programs of 1,013)."""
        found: dict[str, list[Program]] = {}
        for program in self.programs:
            for module in program.modules:
                found.setdefault(module, []).append(program)
        return found

    # What a program does ------------------------------------------------------------------------

    def _reachable(self, program: Program) -> list[str]:
        return self.calls.walk(program.entry.module, program.modules)

    def _call_guards(self, program: Program, seeding: frozenset[str], callers: Iterable[str] | None = None) -> dict[str, str | None]:
        """For each function in `seeding`, the seed option guarding every call to it (`args.seed` when
        all its calls sit under `if args.seed is not None:`), else None: of the calls the program's
        top-level code makes and those of `callers` (all the functions its process runs when None)."""
        guards: dict[str, set[str | None]] = {name: set() for name in seeding}
        if seeding:
            within = self.calls.module_set(program.modules)
            # Of a function's calls, only those linking to project functions can reach a seeding one,
            # and only in functions whose links name one: a large program's functions make hundreds
            # of thousands of calls, most into libraries, and its seeding functions are few.
            methods = {name.rpartition(".")[2] for name in seeding}
            may_seed = self.calls.linking_to(seeding, methods)
            groups = self.processes.process_roots(program)
            # In any order: the guards found are sets.
            groups.extend(
                (self.calls.module_of_function[name], self.calls.linking_calls(name))
                for name in may_seed.intersection(self.processes.process_functions(program) if callers is None else callers)
            )
            for module, calls in groups:
                for call, resolved, method in self._calls_to_seeding(module, calls):
                    for callee in resolved or (self.calls.methods_within(method, within) if method in methods else ()):
                        if callee in seeding:
                            guards[callee].add(call.guard)
        return {name: next(iter(found)) if len(found) == 1 else None for name, found in guards.items()}

    def _calls_to_seeding(self, module: str, calls: Sequence[CallFact]) -> tuple[tuple[CallFact, tuple[str, ...], str | None], ...]:
        """Of `calls`' `reaching_calls`, those that may reach a function seeding a generator itself:
        resolved to one, or an unresolved `obj.method()` of a seeding method's name. Every program
        asks about the module-level calls of each of its modules, hundreds of thousands in a project
        whose programs share a library (diffusers), and few of them may seed."""
        key = (module, id(calls))  # as `reaching_calls` keeps them: the same calls in every program
        found = self._calls_to_seeding_cache.get(key)
        if found is None:
            seeding, methods = self._seeding_functions, self._seeding_methods
            found = self._calls_to_seeding_cache[key] = tuple(
                (call, resolved, method)
                for call, resolved, method in self.calls.reaching_calls(module, calls)
                if (not seeding.isdisjoint(resolved) if resolved else method in methods)
            )
        return found

    def events(self, program: Program) -> list[Located]:
        """Everything that may happen in `program`, entry module first, then by path and line. An
        event in a function only ever called under a seed guard carries that guard."""
        cached = self._events_cache.get(program.key)
        if cached is None:
            cached = self._events_cache[program.key] = self._collect_events(program)
        return cached

    def _collect_events(self, program: Program) -> list[Located]:
        # Of a large program's thousands of modules and functions, few hold events: those are taken
        # from the sets of the project's that do, in any order (the list is sorted on a total key).
        entry = self.modules[program.entry.module]
        found = [Located(self.modules[module], event) for module in self._loading_with_events.intersection(program.modules) for event in self.modules[module].module_events]
        if program.worker is None:
            found.extend(Located(entry, event) for event in entry.main_events)
        functions = self.processes.process_functions(program)
        # Guards matter only to seed events: the calls of a large program are many, its seeding functions few.
        call_guards = self._call_guards(program, self._seeding_functions.intersection(functions))
        worker_only = self.calls.worker_only
        without_init = self._built_without_init(program, functions)
        for name in self._with_events.intersection(functions):
            events = self.functions[name].events
            module = self.modules[self.calls.module_of_function[name]]
            guard = call_guards.get(name)
            in_worker = name in worker_only
            found.extend(
                Located(module, replace(event, guard=event.guard or guard) if event.kind == "seed" else replace(event, in_worker=True) if in_worker else event)
                for event in events
                if not (event.kind == "init" and name in without_init)
            )
        found.extend(self._framework_subclass_seeds(program))
        entry = program.entry.module
        # Told apart by module name and event: a set of them hashes the event alone (hashing a
        # module's facts is costly), and one event made alike in many modules would fill one bucket.
        unique = {(located.module.module, located.event): located for located in found}
        return sorted(unique.values(), key=lambda located: (located.module.module != entry, located.module.path, located.event.order))

    @cached_property
    def _loading_with_events(self) -> frozenset[str]:
        """The modules whose module-level code has events."""
        return frozenset(module for module, facts in self.modules.items() if facts.module_events)

    @cached_property
    def _with_events(self) -> frozenset[str]:
        """The functions that have events."""
        return frozenset(name for name, function in self.functions.items() if function.events)

    @cached_property
    def _seeding_methods(self) -> frozenset[str]:
        """The last names of the functions seeding a generator themselves."""
        return frozenset(name.rpartition(".")[2] for name in self._seeding_functions)

    @cached_property
    def _seeding_functions(self) -> frozenset[str]:
        """The functions that seed a generator themselves: asked of each program's functions."""
        return frozenset(name for name, function in self.functions.items() if any(event.kind == "seed" for event in function.events))

    def _built_without_init(self, program: Program, functions: Collection[str]) -> frozenset[str]:
        """Functions of `program` that run only inside blocks that build modules without initialising
        their weights (`with torch.device("meta"): model = GPT(config)` runs `GPT.__init__` there):
        their parameter initialisation draws nothing. A call there runs there only until it returns:
        what the object it builds does later (its `forward`) runs outside."""
        functions_there, modules_there = self.calls.building_without_init
        if functions_there.isdisjoint(functions) and modules_there.isdisjoint(program.modules):
            return frozenset()
        within = self.calls.module_set(program.modules)
        inside: set[str] = set()
        outside: set[str] = set()
        # Each function is followed at most twice: once reached inside such a block, once outside.
        # Two stacks of names, not one of (name, inside) pairs: most of a large program is reached
        # outside only, by plain links, and the sets reached do not depend on the order followed.
        to_inside: list[str] = []
        to_outside: list[str] = list(program.worker.functions) if program.worker is not None else []

        # What an unresolved `obj.method()` may run is the same wherever it is called, and runs
        # outside: each method name is followed once.
        methods_followed: set[str] = set()
        links, methods_within = self.calls.links, self.calls.methods_within

        def follow(leads: Iterable[tuple[str, bool]], methods: Iterable[str]) -> None:
            for callee, in_block in leads:
                (to_inside if in_block else to_outside).append(callee)
            for method in methods:
                if method not in methods_followed:
                    methods_followed.add(method)
                    to_outside.extend(methods_within(method, within))

        for module, calls in self.processes.process_roots(program):
            key = (module, id(calls))  # the facts' calls, which live as long as the model: the same in every program
            edges = self._root_init_edges.get(key)
            if edges is None:
                edges = self._root_init_edges[key] = self._init_edges(module, calls)
            follow(edges.outside, edges.methods)
        while to_outside or to_inside:
            while to_outside:
                name = to_outside.pop()
                if name in outside:
                    continue
                outside.add(name)
                if name in functions_there:
                    edges = self._function_edges(name)
                    follow(edges.outside, edges.methods)
                else:
                    # Outside any block, and opening none: its calls lead where its links do, outside
                    # (most of a program, whose functions mostly call no method by name).
                    resolved, methods = links(name)
                    to_outside.extend(resolved)
                    if methods:
                        follow((), methods)
            if to_inside:
                name = to_inside.pop()
                if name not in inside:
                    inside.add(name)
                    edges = self._function_edges(name)
                    follow(edges.inside, edges.methods)
        return frozenset(inside - outside)

    def _function_edges(self, name: str) -> _InitEdges:
        edges = self._function_init_edges.get(name)
        if edges is None:
            edges = self._function_init_edges[name] = self._init_edges(self.calls.module_of_function[name], self.calls.linking_calls(name))
        return edges

    def _init_edges(self, module: str, calls: Sequence[CallFact]) -> _InitEdges:
        """Where `calls` lead, for `_built_without_init`: a callee a call runs before it returns
        (`CallGraph.callees_run_now`) runs inside the block the call is made in, or inside one the
        call itself opens (`CallFact.no_init`); any other callee, and any method an unresolved
        `obj.method()` may reach, runs later, outside."""
        inside: list[tuple[str, bool]] = []
        outside: list[tuple[str, bool]] = []
        methods: list[str] = []
        for call, resolved, method in self.calls.reaching_calls(module, calls):
            if method is not None:
                methods.append(method)
                continue
            run_now = self.calls.callees_run_now(call, module)
            for callee in resolved:
                inside.append((callee, callee in run_now))
                outside.append((callee, callee in run_now and call.no_init))
        return _InitEdges(tuple(inside), tuple(outside), tuple(methods))

    def seeds_known_to_run(self, program: Program, rng: str) -> list[Located]:
        """The program's seeding of `rng` in code known to run (`functions_known_to_run`), each with
        the seed option guarding every known call to its function: where a seed missing would raise a
        finding (REP108), a seed that only a name-only guess reaches (a vendored Trainer the program
        never builds) does not count."""
        known = self.functions_known_to_run(program) & set(self.processes.process_functions(program))
        seeding = frozenset(
            name for name in self._seeding_functions.intersection(known) if any(event.kind == "seed" and event.rng == rng for event in self.functions[name].events)
        )
        guards = self._call_guards(program, seeding, known)
        found = []
        for located in self.events(program):
            if located.event.kind != "seed" or located.event.rng != rng:
                continue
            function = located.module.function_at(located.event.line)
            if function is not None and function not in known:
                continue
            if function is None or located.event.guard:
                found.append(located)
            else:
                found.append(Located(located.module, replace(located.event, guard=guards.get(function))))
        return found

    def _framework_subclass_seeds(self, program: Program) -> list[Located]:
        """`MyTrainer(...)` where MyTrainer subclasses a framework object that seeds (HF Trainer)."""
        if not self._framework_subclasses:
            return []  # most projects subclass none: their calls need no look-up
        found = []
        for module, calls in self.processes.process_calls(program):
            # The same calls, made in the same module, in every program running them.
            key = (module, id(calls))
            seeds = self._framework_seeds_cache.get(key)
            if seeds is None:
                seeds = self._framework_seeds_cache[key] = self._framework_seeds(module, calls)
            found.extend(Located(self.modules[module], event) for event in seeds)
        return found

    def _framework_seeds(self, module: str, calls: Iterable[CallFact]) -> tuple[Event, ...]:
        frameworks = tables().frameworks
        found = []
        for call in calls:
            if call.reference:
                continue
            for target in call.targets:
                cls = self.calls.resolve_symbol(target, module)
                framework = self._framework_subclasses.get(cls) if cls is not None else None
                if framework is not None:
                    found.extend(Event("seed", call.line, framework, rng) for rng in frameworks[framework]["seeds"])
        return tuple(found)

    @cached_property
    def _framework_subclasses(self) -> dict[str, str]:
        """The project's classes deriving from a framework class that seeds, each with that class
        (`_framework_base`): searched only among those with such a class above them, which most
        projects do not have."""
        frameworks = tables().frameworks
        subclasses: dict[str, set[str]] = {}
        deriving = set()
        for cls in self.classes:
            for base, module in self._bases(cls):
                if base in frameworks:
                    deriving.add(cls)
                    continue
                resolved = self.calls.resolve_symbol(base, module)
                if resolved is not None and resolved in self.classes:
                    subclasses.setdefault(resolved, set()).add(cls)
        return {cls: framework for cls in closure(deriving, subclasses) if (framework := self._framework_base(cls)) is not None}

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
            resolved = self.calls.resolve_symbol(base, module)
            if resolved is not None and resolved in self.classes and resolved not in seen:
                seen.add(resolved)
                stack.append(self._bases(resolved))
        return None

    def _bases(self, qualname: str) -> Iterator[tuple[str, str]]:
        """A project class's bases as written, with the module they are written in."""
        cls = self.classes.get(qualname)
        module = qualname.rsplit(".", 1)[0]
        return iter([(base, module) for base in cls.bases] if cls is not None else [])

    # Which programs reach code, and what they are -------------------------------------------------

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
        return is_test_module(self.modules[module].path)

    def reachable_functions(self, program: Program) -> frozenset[str]:
        """Project functions that may run when `program` runs."""
        return self._reachable_set(program)

    def functions_known_to_run(self, program: Program, running: Iterable[str] = ()) -> frozenset[str]:
        """Project functions that run when `program` runs, as far as its calls are known: an
        `obj.method()` on an unknown object reaches only the classes the program builds
        (`CallGraph.walk_built`), or those of the functions in `running` that the program may run
        (known to run too). What a finding says the program builds is taken from these."""
        also = tuple(sorted(name for name in running if name in self._reachable_set(program)))
        key = (program.entry.module, also)
        cached = self._built_set_cache.get(key)
        if cached is None:
            cached = self._built_set_cache[key] = frozenset(self.calls.walk_built(program.entry.module, program.modules, also))
        return cached

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
        calls = [call for _, group in self.calls.entry_calls(program.entry.module, program.modules) for call in group]
        calls += [call for name in self._reachable(program) for call in self.functions[name].calls]
        return any(call.method == method for call in calls)

    def reached_by_program_where(self, module: str, condition: Iterable[str]) -> bool:
        """Whether some program that reaches `module` meets `condition`, where "entry" requires the
        program to run `module` as its entry (a library module's code applies its caller's choices)."""
        required = tuple(requirement for requirement in condition if requirement != _ENTRY)
        programs = self.programs_reaching(module)
        if _ENTRY in condition:
            programs = (program for program in programs if program.entry.module == module)
        return any(self.program_satisfies(program, required) for program in programs)

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


_ENTRY = "entry"
# The method whose calls, whatever they resolve to, decide the "epochs_unset" requirement.
_SET_EPOCH = "set_epoch"


def reached_by_name(method: str) -> bool:
    """Whether the pass may reach a method of this name without a call naming it: a protocol method
    a call of its class or instance runs (`__init__`, `forward`, `__getitem__`), any other name
    Python calls implicitly (`__enter__`), or `set_epoch`, whose calls it reads whatever they run."""
    return method.startswith("__") or method in IMPLICIT_METHODS or method == _SET_EPOCH


def unreached_verdict(path: str, training_only: bool, condition: Collection[str]) -> bool:
    """The verdict on a local finding's question in the module at `path` where no program reaches
    it: what `only_reached_by_non_training_programs` (a test module's code counts as not training)
    and `reached_by_program_where` (no program meets a condition) then give."""
    return not (training_only and is_test_module(path)) and not condition


def is_inert(
    call: CallFact, module: str, names: ModuleNames, function_names: Collection[str], facts_of: Callable[[str], ModuleFacts | None] | None = None
) -> bool:
    """Whether the project pass cannot see `call` (made in `module`): `resolve_symbol` finds nothing
    its targets denote (no prefix of one names a project module; or, with `facts_of` giving modules'
    facts, what the module named denotes by the rest is nothing: `symbols.denotes_nothing`), it may
    not be a project method (`obj.method()` with no such method name among the project's functions),
    it starts no process, and it is not a `set_epoch` call. Adding or removing such a call changes
    none of the pass's results (the model reads calls nowhere else, and a call's targets only
    through `resolve_symbol`)."""
    if call.launcher is not None or call.method == _SET_EPOCH:
        return False
    method = unresolved_method(call)
    if method is not None and method in function_names:
        return False
    return all(
        names.split(target, module) is None or (facts_of is not None and denotes_nothing(target, module, names, facts_of)) for target in call.targets
    )


def entry_of_itself(facts: ModuleFacts, entry_point_globs: Iterable[str]) -> bool:
    """Whether the module is an entry point whatever imports it: one with a main guard, a notebook,
    one the `entry-points` setting (`entry_point_globs`) names."""
    if facts.main_guard_line is not None or facts.path.endswith(".ipynb"):
        return True
    return any(fnmatch.fnmatch(facts.path, pattern) for pattern in entry_point_globs)


def is_test_module(path: str) -> bool:
    """A test's module by its path (`test_*.py`, `*_test.py`, `conftest.py`, under `tests/`)."""
    name = path.rpartition("/")[2]
    return name.startswith("test_") or name.endswith("_test.py") or name == "conftest.py" or "/tests/" in f"/{path}"
