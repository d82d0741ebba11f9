"""The project's call graph: which project functions a call runs, and who calls whom.

Calls resolve through the symbol table (re-exports through `__init__` modules, `from x import *`);
an unresolved `obj.method()` may reach any method of that name among a program's modules. A walk
from an entry module follows its calls transitively; a narrower walk (`walk_built`) takes such a call
only into the classes the program builds, for questions where a wrong guess raises a finding. The
project pass asks the same questions once per rule and per program: each is answered once and kept.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from functools import cached_property
from typing import NamedTuple

from repro_lint.core.graphs import closure
from repro_lint.facts.dispatch import ANYTHING
from repro_lint.facts.module_facts import WORKER_METHODS, CallFact, ClassFacts, FunctionFacts, ModuleFacts
from repro_lint.program.module_names import ModuleNames
from repro_lint.program.symbols import SymbolResolver

# Calls, with the module making them: a module's top-level calls, or a function's.
Calls = tuple[str, Sequence[CallFact]]
# What calls of a module resolve to, by their targets: for calls (index 0) and references (1).
_ByTargets = tuple[dict[tuple[str, ...], tuple[str, ...]], dict[tuple[str, ...], tuple[str, ...]]]
# Where a function's calls lead (`CallGraph.links`), with the places among its calls of those leading
# there (`linking_calls`).
Link = tuple[tuple[str, ...], tuple[str, ...], tuple[int, ...]]


class Resolutions(NamedTuple):
    """What a pass resolved of one module's calls, kept for the next (program/kept_resolutions.py):
    its functions' links, and what its calls resolve to by their targets (`callees`, `callees_run_now`)."""

    links: dict[str, Link]
    callees: _ByTargets
    run_now: _ByTargets


class CallGraph:
    """The project functions each call may run, over the facts of the project's modules; the walks
    from an entry module and the callers of a function that follow."""

    def __init__(
        self,
        modules: dict[str, ModuleFacts],
        functions: dict[str, FunctionFacts],
        classes: dict[str, ClassFacts],
        names: ModuleNames,
        kept: Mapping[str, Resolutions] | None = None,
    ) -> None:
        """`kept`: what a pass before resolved, by module, that holds for these facts (`resolutions_kept`)."""
        self.modules = modules
        self.functions = functions
        self.module_of_function = {
            function.qualname: facts.module for facts in modules.values() for function in facts.functions
        }
        self.classes = classes
        self._module_of_class = {cls.qualname: facts.module for facts in modules.values() for cls in facts.classes}
        self._symbols = SymbolResolver(modules, names, functions.keys() | classes.keys())
        self._symbol_cache: dict[tuple[str, str | None], str | None] = {}
        # What a call resolves to depends on its targets, whether it names a function rather than
        # calling it, and the module it is made in: by module, then by the first two. A module's calls
        # repeat their targets, so there are fewer keys than calls (a key per call took 20 MB of the
        # project pass on transformers), and hashing the targets is cheap: their strings keep theirs.
        self._callee_cache: dict[str, _ByTargets] = {}
        self._module_sets: dict[tuple[str, ...], frozenset[str]] = {}
        self._run_now_cache: dict[str, _ByTargets] = {}
        self._linking_calls_cache: dict[str, tuple[CallFact, ...]] = {}
        self._links_cache: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {}
        self._linking_at: dict[str, tuple[int, ...]] = {}
        self._reachable_cache: dict[str, list[str]] = {}
        self._on_load_cache: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {}
        self._reaching_calls_cache: dict[tuple[str, int], tuple[tuple[CallFact, tuple[str, ...], str | None], ...]] = {}
        self._built_walk_cache: dict[tuple[str, tuple[str, ...]], list[str]] = {}
        self._classes_built_cache: dict[str, tuple[str, ...]] = {}
        self._lineage_cache: dict[str, tuple[str, ...]] = {}
        self._methods_within_cache: dict[tuple[str, frozenset[str]], tuple[str, ...]] = {}
        self._all_methods_cache: dict[str, tuple[str, ...]] = {}
        self._sibling_callers_cache: dict[str, dict[str, set[str]]] = {}
        # The project's functions by last name: those an unresolved `obj.method()` may reach.
        self.methods: dict[str, list[str]] = {}
        for qualname in sorted(functions):
            self.methods.setdefault(qualname.rpartition(".")[2], []).append(qualname)
        for module, resolutions in (kept or {}).items():
            self._callee_cache[module] = resolutions.callees
            self._run_now_cache[module] = resolutions.run_now
            for function, (resolved, methods, linking) in resolutions.links.items():
                if self.module_of_function.get(function) == module:  # not a function of another module so named
                    calls = functions[function].calls
                    self._links_cache[function] = (resolved, methods)
                    self._linking_calls_cache[function] = tuple(calls[at] for at in linking)
                    self._linking_at[function] = linking

    def resolutions(self) -> dict[str, Resolutions]:
        """What was resolved so far, by module: for the next pass (`kept`)."""
        links: dict[str, dict[str, Link]] = {}
        for function, (resolved, methods) in self._links_cache.items():
            links.setdefault(self.module_of_function[function], {})[function] = (resolved, methods, self._linking_at[function])
        return {
            module: Resolutions(links.get(module, {}), self._callee_cache.get(module, ({}, {})), self._run_now_cache.get(module, ({}, {})))
            for module in links.keys() | self._callee_cache.keys() | self._run_now_cache.keys()
        }

    def resolve_functions(self, qualified: str, importer: str | None = None) -> tuple[str, ...]:
        """The project functions a call of a qualified name runs. Building an instance of a project
        class runs its `__init__`, and hands the object to code that calls its protocol methods
        implicitly (a DataLoader calls `__getitem__`, calling a module runs `forward`)."""
        found = self.resolve_symbol(qualified, importer)
        if found is None:
            return ()
        if found in self.functions:
            return (found,)
        return tuple(f"{found}.{method}" for method in IMPLICIT_METHODS if f"{found}.{method}" in self.functions)

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
        method = unresolved_method(call)
        return self.methods_within(method, fallback_within) if method is not None else resolved

    @staticmethod
    def _by_targets(caches: dict[str, _ByTargets], call: CallFact, caller_module: str) -> dict[tuple[str, ...], tuple[str, ...]]:
        """The part of `caches` that holds what calls like `call`, made in `caller_module`, resolve to."""
        found = caches.get(caller_module)
        if found is None:
            found = caches[caller_module] = ({}, {})
        return found[call.reference]

    def _resolved_callees(self, call: CallFact, caller_module: str) -> tuple[str, ...]:
        cache = self._by_targets(self._callee_cache, call, caller_module)
        resolved = cache.get(call.targets)
        if resolved is None:
            if call.reference:
                targets = (self.resolve_symbol(target, caller_module) for target in call.targets)
                resolved = tuple(sorted({found for found in targets if found in self.functions}))
            else:
                resolved = tuple(sorted({found for target in call.targets for found in self.resolve_functions(target, caller_module)}))
            cache[call.targets] = resolved
        return resolved

    def module_set(self, modules: tuple[str, ...]) -> frozenset[str]:
        """One set object per program's modules: `_methods_within` is cached by it, and comparing two
        equal sets of thousands of modules on every look-up cost seconds."""
        found = self._module_sets.get(modules)
        if found is None:
            found = self._module_sets[modules] = frozenset(modules)
        return found

    @cached_property
    def _methods_by_name(self) -> dict[str, tuple[tuple[str, str], ...]]:
        """The project's methods (not module-level functions) by last name, with their modules."""
        found: dict[str, list[tuple[str, str]]] = {}
        for method, names in self.methods.items():
            for name in names:
                module = self.module_of_function[name]
                if is_method(name, module):
                    found.setdefault(method, []).append((name, module))
        return {method: tuple(names) for method, names in found.items()}

    @cached_property
    def method_modules(self) -> dict[str, frozenset[str]]:
        """The modules defining the project's methods of each last name: where an unresolved
        `obj.method()` may lead."""
        return {method: frozenset(module for _, module in names) for method, names in self._methods_by_name.items()}

    def methods_within(self, method: str, within: frozenset[str]) -> tuple[str, ...]:
        """Methods named `method` in the modules `within`: asked for every unresolved `obj.method()`
        of every program, each time filtering all the project's methods of that name."""
        key = (method, within)
        found = self._methods_within_cache.get(key)
        if found is None:
            if self.method_modules.get(method, frozenset()) <= within:  # most, where programs share a library
                found = self._all_methods_named(method)
            else:
                found = tuple(name for name, module in self._methods_by_name.get(method, ()) if module in within)
            self._methods_within_cache[key] = found
        return found

    def _all_methods_named(self, method: str) -> tuple[str, ...]:
        found = self._all_methods_cache.get(method)
        if found is None:
            found = self._all_methods_cache[method] = tuple(name for name, _ in self._methods_by_name.get(method, ()))
        return found

    def callees_run_now(self, call: CallFact, caller_module: str) -> tuple[str, ...]:
        """The project functions a call runs before it returns: a function, or a class's `__init__`
        (not the protocol methods users of the instance call later). A function started in another
        process runs there, not here; one handed to `torch.compile` runs when the wrapper is called."""
        if call.launcher or call.wrapped:
            return ()
        cache = self._by_targets(self._run_now_cache, call, caller_module)
        found = cache.get(call.targets)
        if found is None:
            named = {self.resolve_symbol(target, caller_module) for target in call.targets}
            found = cache[call.targets] = tuple(
                name for name in self.callees(call, caller_module) if name in named or name.endswith(".__init__")
            )
        return found

    def entry_calls(self, entry: str, modules: tuple[str, ...]) -> list[Calls]:
        """Calls made when `entry` runs: module-level code of every module it imports, and the
        `__main__` block of the entry alone."""
        groups = self.module_level_calls(modules)
        groups.append((entry, self.modules[entry].main_calls))
        return groups

    def module_level_calls(self, modules: tuple[str, ...]) -> list[Calls]:
        # Each module's pair is made once and shared: asked several times per program, each of a
        # thousand modules or more.
        pairs = self._module_level_pairs
        return [pairs[module] for module in sorted(modules)]

    @cached_property
    def _module_level_pairs(self) -> dict[str, Calls]:
        return {module: (module, facts.module_calls) for module, facts in self.modules.items()}

    def walk(self, entry: str, modules: tuple[str, ...]) -> list[str]:
        """Project functions that may run when `entry` runs (its program's modules being `modules`),
        followed transitively, into the candidates of calls that choose at run time what they run
        (`globals()[task]()`: the functions of that module)."""
        cached = self._reachable_cache.get(entry)
        if cached is None:
            cached = self._reachable_cache[entry] = self._follow_calls(entry, modules)
        return cached

    def dispatches_anything(self, entry: str, modules: tuple[str, ...]) -> bool:
        """Whether `entry`'s program reaches a call that may run anything (`hydra.utils.instantiate`):
        past it the call graph cannot be followed."""
        reached = self._dispatching.intersection(self.walk(entry, modules))
        return ANYTHING in self.modules[entry].dispatches_on_load or any(ANYTHING in self.functions[name].dispatches for name in reached)

    @cached_property
    def _dispatching(self) -> frozenset[str]:
        """The functions making calls that choose at run time what they run: few, where a program's
        walk reaches thousands."""
        return frozenset(name for name, function in self.functions.items() if function.dispatches)

    def _follow_calls(self, entry: str, modules: tuple[str, ...]) -> list[str]:
        within = self.module_set(modules)
        # The methods an unresolved `obj.method()` may run are the same wherever it is called: each
        # name is followed once.
        methods_followed: set[str] = set()

        def resolved_only(function: str) -> tuple[str, ...]:
            return self.links(function)[0]

        # What an imported module's top-level code runs is followed through resolved calls only, at
        # any depth: at import time an unresolved `obj.method()` fills registries and settings
        # (`SETTINGS.update({...})`, `kwargs.update(...)` in a helper building a table), and matching
        # it by name to the program's methods made importers of Megatron-LM's library (its tests)
        # training programs. The entry module's own code keeps the name matches.
        own: list[str] = []
        on_import: list[str] = []
        for module, calls in self.entry_calls(entry, modules):
            if module == entry:
                for call in calls:
                    own.extend(self.callees(call, module, within))
            else:
                on_import.extend(self.on_load(module)[0])
        found = sorted(self._reach_by_links(own, within, methods_followed).union(reach(on_import, resolved_only)))
        followed: set[str] = set()
        while True:  # each scope is followed once: the loop ends when no new one is reached
            new = self._dispatch_scopes(entry, found) - followed - {ANYTHING}
            if not new:
                return found
            followed |= new
            known = set(found)
            found = found + [name for name in sorted(self._reach_by_links(self._functions_in(new, within), within, methods_followed)) if name not in known]

    def _reach_by_links(self, roots: list[str], within: frozenset[str], methods_followed: set[str]) -> set[str]:
        """`roots` and the functions they call, transitively, through each one's links taken whole
        (resolving its calls one by one for every program of a large project would resolve millions),
        an unresolved `obj.method()` leading to the methods of that name in the modules `within`,
        each name followed once for all the walks sharing `methods_followed`. A loop of its own, not
        `reach` with a generator per function: a walk of diffusers' 263 programs reaches a million."""
        seen: set[str] = set()
        stack = list(roots)
        while stack:
            name = stack.pop()
            if name in seen:
                continue
            seen.add(name)
            resolved, methods = self.links(name)
            stack.extend(resolved)
            for method in methods:
                if method not in methods_followed:
                    methods_followed.add(method)
                    stack.extend(self.methods_within(method, within))
        return seen

    def on_load(self, module: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """The project functions `module`'s top-level calls resolve to, and the project classes they
        build: the same in every program importing it."""
        found = self._on_load_cache.get(module)
        if found is None:
            calls = self.modules[module].module_calls
            found = self._on_load_cache[module] = (
                tuple(callee for call in calls for callee in self.callees(call, module)),
                tuple(cls for call in calls for cls in sorted(self.built_by(call, module))),
            )
        return found

    def _dispatch_scopes(self, entry: str, found: Iterable[str]) -> set[str]:
        """Where the calls that choose at run time what they run, made by `entry`'s code or the
        functions `found`, may find it."""
        return {*self.modules[entry].dispatches_on_load, *(scope for name in self._dispatching.intersection(found) for scope in self.functions[name].dispatches)}

    def _functions_in(self, scopes: set[str], within: frozenset[str]) -> list[str]:
        return [
            function.qualname
            for module in sorted(within)
            for function in self.modules[module].functions
            if any(function.qualname.startswith(scope + ".") for scope in scopes)
        ]

    def _classes_in(self, scopes: set[str], within: frozenset[str]) -> list[str]:
        return [cls.qualname for module in sorted(within) for cls in self.modules[module].classes if any(cls.qualname.startswith(scope + ".") for scope in scopes)]

    def walk_built(self, entry: str, modules: tuple[str, ...], running: tuple[str, ...] = ()) -> list[str]:
        """Project functions known to run when `entry` runs: what its calls resolve to, transitively,
        where an unresolved `obj.method()` reaches the methods of that name only of the classes the
        program builds by a call it resolves (and their bases), or of the calling method's own class
        (`self.helper()`). For questions whose wrong guess raises a finding (what a checkpoint's
        programs build): `model.train()` taken for every `train` method of the program's modules
        gave LoRA's apex-only scripts the GradScaler of a vendored Trainer they never build.
        `running` are functions known to run as well (a checkpoint's function and its callers): a
        method runs on an object of its class, built however the program built it (a registry), so
        that class counts as built and its constructor as run. Never more than `walk`; all of it
        where the program may build anything by name (`hydra.utils.instantiate`)."""
        if self.dispatches_anything(entry, modules):
            return self.walk(entry, modules)
        key = (entry, running)
        cached = self._built_walk_cache.get(key)
        if cached is None:
            cached = self._built_walk_cache[key] = self._follow_built(entry, modules, running)
        return cached

    def _follow_built(self, entry: str, modules: tuple[str, ...], running: tuple[str, ...]) -> list[str]:
        within = self.module_set(modules)
        walk = _BuiltWalk(self, within)
        for module, calls in self.entry_calls(entry, modules):
            if module == entry:
                walk.take(calls, module)
            else:  # as in `walk`, an imported module's top-level code is followed through resolved calls only
                functions, classes = self.on_load(module)
                for function in functions:
                    walk.reach(function)
                for cls in classes:
                    walk.build(cls)
        for function in running:
            walk.assume(function)
        walk.run()
        followed: set[str] = set()
        while True:  # each scope is followed once: the loop ends when no new one is reached
            new = self._dispatch_scopes(entry, walk.found) - followed
            if not new:
                # `walk` follows what import-time code reaches through resolved calls only; this walk,
                # matching calls by name there too, may go further: that is not known to run.
                return sorted(walk.found & set(self.walk(entry, modules)))
            followed |= new
            # A class or function chosen by name from a module or class (`getattr(models, arch)(...)`).
            for cls in self._classes_in(new, within):
                walk.build(cls)
            for function in self._functions_in(new, within):
                walk.reach(function)
            walk.run()

    def classes_built(self, function: str) -> tuple[str, ...]:
        """The project classes `function` builds by a call it resolves (`Trainer(...)`)."""
        found = self._classes_built_cache.get(function)
        if found is None:
            module = self.module_of_function[function]
            found = self._classes_built_cache[function] = tuple(sorted({cls for call in self.functions[function].calls for cls in self.built_by(call, module)}))
        return found

    def built_by(self, call: CallFact, caller_module: str) -> set[str]:
        """The project classes `call` builds: naming a class (`callbacks=[Saver]`) builds none."""
        if call.reference:
            return set()
        return {found for target in call.targets if (found := self.resolve_symbol(target, caller_module)) in self.classes}

    def lineage(self, cls: str) -> tuple[str, ...]:
        """A project class and its project bases, transitively, each once (broken code may make the
        chain a cycle)."""
        found = self._lineage_cache.get(cls)
        if found is None:
            seen = [cls]
            stack = [cls]
            while stack:
                current = stack.pop()
                module = self._module_of_class.get(current)
                for base in self.classes[current].bases if current in self.classes else ():
                    resolved = self.resolve_symbol(base, module)
                    if resolved is not None and resolved in self.classes and resolved not in seen:
                        seen.append(resolved)
                        stack.append(resolved)
            found = self._lineage_cache[cls] = tuple(seen)
        return found

    def own_classes(self, function: str) -> tuple[str, ...]:
        """For a method, its class and that class's bases (where `self.helper()` finds `helper`)."""
        module = self.module_of_function[function]
        return self.lineage(function.rpartition(".")[0]) if is_method(function, module) else ()

    @cached_property
    def methods_of(self) -> dict[str, tuple[str, ...]]:
        """The methods each project class defines, by the class's qualified name."""
        found: dict[str, list[str]] = {}
        for name, module in self.module_of_function.items():
            if is_method(name, module):
                found.setdefault(name.rpartition(".")[0], []).append(name)
        return {owner: tuple(sorted(names)) for owner, names in found.items()}

    def reaching_calls(self, module: str, calls: Sequence[CallFact]) -> tuple[tuple[CallFact, tuple[str, ...], str | None], ...]:
        """Of `calls` (made in `module`), those that may reach project functions, each with the
        functions it resolves to, else the method name of its unresolved `obj.method()`: its callees
        in a program are those functions, or that method's there (`callees`). Kept by the identity
        of `calls`, a tuple of the facts or of `linking_calls`, which live as long as the graph:
        every program asks again about the same calls."""
        key = (module, id(calls))
        found = self._reaching_calls_cache.get(key)
        if found is None:
            reaching = []
            for call in calls:
                resolved = self._resolved_callees(call, module)
                method = None if resolved else unresolved_method(call)
                if resolved or method is not None:
                    reaching.append((call, resolved, method))
            found = self._reaching_calls_cache[key] = tuple(reaching)
        return found

    def links(self, function: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """The project functions `function`'s calls resolve to, and the methods named by its unresolved
        `obj.method()` calls (which may be any method of that name in a program's modules)."""
        found = self._links_cache.get(function)
        if found is None:
            self._link(function)
            found = self._links_cache[function]
        return found

    def linking_calls(self, function: str) -> tuple[CallFact, ...]:
        """The calls of `function` that may reach a project function: resolved to one, or an unresolved
        `obj.method()`. Most calls go to libraries; walks skip them once, not once per program."""
        found = self._linking_calls_cache.get(function)
        if found is None:
            self._link(function)
            found = self._linking_calls_cache[function]
        return found

    def _link(self, function: str) -> None:
        """`links` and `linking_calls` of `function`, from one pass over its calls: every function's
        links are asked for, and resolving each call twice took a third of the time."""
        module = self.module_of_function[function]
        linking: list[CallFact] = []
        linking_at: list[int] = []
        resolved: set[str] = set()
        methods: set[str] = set()
        for at, call in enumerate(self.functions[function].calls):
            callees = self._resolved_callees(call, module)
            if callees:
                resolved.update(callees)
            elif (method := unresolved_method(call)) is not None:
                methods.add(method)
            else:
                continue
            linking.append(call)
            linking_at.append(at)
        self._links_cache[function] = (tuple(sorted(resolved)), tuple(sorted(methods)))
        self._linking_at[function] = tuple(linking_at)
        # `reaching_calls` keeps its answers by the identity of this tuple: it is made once.
        self._linking_calls_cache.setdefault(function, tuple(linking))

    def functions_drawing(self, rng: str, initialising: bool = True) -> frozenset[str]:
        """Project functions that draw from `rng`, directly or through the functions they call;
        without `initialising`, leaving out parameter initialisation: what a call still draws where
        it builds modules without initialising their weights (`CallFact.no_init`). Initialisation
        is passed on only through calls made outside such blocks."""
        consuming = closure(self._with_events("consume", rng), self._run_now_callers)
        if not initialising:
            return consuming
        return consuming | closure(self._with_events("init", rng), self._initialising_callers)

    def _with_events(self, kind: str, rng: str) -> set[str]:
        return {name for name, function in self.functions.items() if any(event.kind == kind and event.rng == rng for event in function.events)}

    def callers(self, function: str) -> frozenset[str]:
        """The project functions whose calls run `function` before they return; for a method, also
        the methods of its class that call an unknown object's method of its name
        (`self._save_rng_state()`)."""
        found = set(self._run_now_callers.get(function, ()))
        module = self.module_of_function.get(function)
        if module is not None and is_method(function, module):
            found.update(self._sibling_callers(module).get(function, ()))
        return frozenset(found)

    def _sibling_callers(self, module: str) -> dict[str, set[str]]:
        """For each `Class.method` that a function of `module` defined beside it in the same class
        may run through an unresolved `obj.method()`, those functions. A method's callers are asked
        for each callee of a function running only in DataLoader workers: looking through its
        siblings' calls each time was most of `worker_only` on transformers."""
        found = self._sibling_callers_cache.get(module)
        if found is None:
            found = self._sibling_callers_cache[module] = {}
            for sibling in self.modules[module].functions:
                owner = sibling.qualname.rpartition(".")[0]
                for call in sibling.calls:
                    method = unresolved_method(call)
                    if method is not None:
                        found.setdefault(f"{owner}.{method}", set()).add(sibling.qualname)
        return found

    def linking_to(self, functions: Iterable[str], methods: Iterable[str]) -> set[str]:
        """The project functions whose links (`links`) resolve to one of `functions`, or name one of
        `methods` in an unresolved `obj.method()`: asked of every program, where looking through
        each of its functions' links took most of a pass on diffusers' 263 programs."""
        resolved_to, methods_named = self._linked_from
        found: set[str] = set()
        for function in functions:
            found.update(resolved_to.get(function, ()))
        for method in methods:
            found.update(methods_named.get(method, ()))
        return found

    def reaching(self, functions: Iterable[str]) -> frozenset[str]:
        """`functions` and the project functions whose links lead to one of them, transitively, where
        an unresolved `obj.method()` may be any method of its name in the project: a superset of what
        any program's walk reaches. Walked over `linking_to`'s reverse index, each method name once."""
        resolved_to, methods_named = self._linked_from
        seen = set(functions)
        stack = list(seen)
        methods_seen: set[str] = set()
        while stack:
            name = stack.pop()
            callers: Iterable[str] = resolved_to.get(name, ())
            method = name.rpartition(".")[2]
            if method not in methods_seen and is_method(name, self.module_of_function[name]):
                methods_seen.add(method)
                callers = (*callers, *methods_named.get(method, ()))
            for caller in callers:
                if caller not in seen:
                    seen.add(caller)
                    stack.append(caller)
        return frozenset(seen)

    @cached_property
    def _linked_from(self) -> tuple[dict[str, list[str]], dict[str, list[str]]]:
        """`links` reversed: for each function, those resolving a call to it; for each method name,
        those calling an unknown object's method of that name (each once: a function's links name
        each callee and method once)."""
        resolved_to: dict[str, list[str]] = {}
        methods_named: dict[str, list[str]] = {}
        for name in self.functions:
            resolved, methods = self.links(name)
            for callee in resolved:
                resolved_to.setdefault(callee, []).append(name)
            for method in methods:
                methods_named.setdefault(method, []).append(name)
        return resolved_to, methods_named

    @cached_property
    def worker_only(self) -> frozenset[str]:
        """Functions that run only inside DataLoader workers: the item methods of datasets and the
        transforms they call (`__getitem__`, `__iter__`, `__call__`), and the helpers that nothing
        else calls, transitively (yolov5's `random_perspective`, called from `__getitem__` only).
        A function that module-level or `__main__` code calls is never one."""
        from_module_code = {
            callee
            for module, facts in self.modules.items()
            for call in (*facts.module_calls, *facts.main_calls)
            for callee in self.callees_run_now(call, module)
        }
        worker = {
            name
            for name, module in self.module_of_function.items()
            if name.rpartition(".")[2] in WORKER_METHODS and is_method(name, module) and name not in from_module_code
        }
        stack = sorted(worker)
        while stack:  # a function joins once; its callees are judged again each time a caller joins
            resolved, _ = self.links(stack.pop())
            for callee in resolved:
                if callee not in worker and callee not in from_module_code and self.callers(callee) <= worker:
                    worker.add(callee)
                    stack.append(callee)
        return frozenset(worker)

    @cached_property
    def worker_links(self) -> frozenset[str]:
        """The functions that those running only in DataLoader workers resolve calls to: the only ones
        a caller taken away may leave running only there (`worker_only` takes a function in only
        from a call of one of them)."""
        return frozenset(callee for name in self.worker_only for callee in self.links(name)[0])

    def calling(self, function: str) -> frozenset[str]:
        """`function` and the project functions whose calls run it, transitively."""
        return self.calling_any((function,))

    def calling_any(self, functions: Iterable[str]) -> frozenset[str]:
        """`functions` and the project functions whose calls run one of them, transitively."""
        return closure(functions, self._run_now_callers)

    def run_with(self, function: str) -> frozenset[str]:
        """Project functions that may run in the same run as `function`, where no program is known to
        run it: the functions calling it, transitively, the constructors of their classes (a method
        works on what `__init__` built), and every function those call."""
        roots = set(self.calling(function))
        for name in list(roots):
            module = self.module_of_function.get(name)
            if module is not None and is_method(name, module):
                constructor = f"{name.rpartition('.')[0]}.__init__"
                if constructor in self.functions:
                    roots.add(constructor)
        return frozenset(reach(sorted(roots), lambda name: self.links(name)[0]))

    @cached_property
    def linked(self) -> frozenset[str]:
        """Project functions that some code of the project calls or references by a name it resolves
        (from a function, module-level code or a `__main__` block); a plain function outside it is
        dead code. A method is not judged so: an unresolved `obj.method()` may run it."""
        found = {callee for name in self.functions for callee in self.links(name)[0]}
        for module, facts in self.modules.items():
            for call in (*facts.module_calls, *facts.main_calls):
                found.update(self._resolved_callees(call, module))
        return frozenset(found)

    @property
    def _run_now_callers(self) -> dict[str, set[str]]:
        """For each function, the functions whose calls run it before they return."""
        return self._callers_run_now[0]

    @property
    def _initialising_callers(self) -> dict[str, set[str]]:
        """As `_run_now_callers`, through the calls that initialise what they build: those made
        outside blocks that build modules without initialising their weights (`CallFact.no_init`)."""
        return self._callers_run_now[1]

    @cached_property
    def _callers_run_now(self) -> tuple[dict[str, set[str]], dict[str, set[str]]]:
        """`_run_now_callers` and `_initialising_callers`, from one pass over every call that links."""
        callers: dict[str, set[str]] = {}
        initialising: dict[str, set[str]] = {}
        for name in self.functions:
            if not self.links(name)[0]:
                continue  # a call runs before it returns only functions it resolves to
            module = self.module_of_function[name]
            for call in self.linking_calls(name):
                for callee in self.callees_run_now(call, module):
                    callers.setdefault(callee, set()).add(name)
                    if not call.no_init:
                        initialising.setdefault(callee, set()).add(name)
        return callers, initialising

    @cached_property
    def building_without_init(self) -> tuple[frozenset[str], frozenset[str]]:
        """The functions, and the modules by their top-level code (module level and `__main__`
        block), that make a call where modules are built without initialising their weights
        (`CallFact.no_init`): few, so most programs need no walk to find what runs there."""
        functions = frozenset(name for name, function in self.functions.items() if any(call.no_init for call in function.calls))
        modules = frozenset(
            module for module, facts in self.modules.items() if any(call.no_init for call in (*facts.module_calls, *facts.main_calls))
        )
        return functions, modules


class _BuiltWalk:
    """The state of `CallGraph.walk_built`: the functions found, the classes built, and the method
    names called on unknown objects; a class built later answers the names called before it."""

    def __init__(self, graph: CallGraph, within: frozenset[str]) -> None:
        self.graph = graph
        self.within = within
        self.found: set[str] = set()
        self.built: set[str] = set()
        self.called: set[str] = set()
        self._pending: list[str] = []
        self._named: dict[str, frozenset[str]] = {}  # the methods of each name in `within`

    def reach(self, function: str) -> None:
        if function not in self.found:
            self.found.add(function)
            self._pending.append(function)

    def build(self, cls: str) -> None:
        """An instance of `cls` exists: its methods, and those it inherits, answer calls by name."""
        for owner in self.graph.lineage(cls):
            if owner in self.built:
                continue
            self.built.add(owner)
            for method in self.graph.methods_of.get(owner, ()):
                if method.rpartition(".")[2] in self.called and self.graph.module_of_function[method] in self.within:
                    self.reach(method)

    def assume(self, function: str) -> None:
        """`function` runs: so does the constructor of its class, whose instance it works on."""
        self.reach(function)
        own = self.graph.own_classes(function)
        if own:
            self.build(own[0])
            constructor = f"{own[0]}.__init__"
            if constructor in self.graph.functions:
                self.reach(constructor)

    def call(self, method: str, own_classes: tuple[str, ...]) -> None:
        """`obj.method()` on an unknown object: a method of that name of a class built so far or of
        the caller's own class. A name called before has been answered by every class built since
        (`build`): only the caller's own classes may add a method, which spares looking through all
        the methods of a common name (diffusers' `forward`s) at each of its calls."""
        if method in self.called:
            if own_classes:
                named = self._named.get(method)
                if named is None:
                    named = self._named[method] = frozenset(self.graph.methods_within(method, self.within))
                for owner in own_classes:
                    if (candidate := f"{owner}.{method}") in named:
                        self.reach(candidate)
            return
        self.called.add(method)
        for candidate in self.graph.methods_within(method, self.within):
            owner = candidate.rpartition(".")[0]
            if owner in self.built or owner in own_classes:
                self.reach(candidate)

    def take(self, calls: Sequence[CallFact], module: str) -> None:
        """Calls of the entry's code outside functions: the functions they run, the classes they
        build, and the methods they may call on unknown objects."""
        for call in calls:
            for callee in self.graph._resolved_callees(call, module):
                self.reach(callee)
            for cls in sorted(self.graph.built_by(call, module)):
                self.build(cls)
            method = unresolved_method(call)
            if method is not None:
                self.call(method, ())

    def run(self) -> None:
        # `reach` written out: a walk of diffusers' 263 programs reaches a million functions.
        graph, found, pending = self.graph, self.found, self._pending
        while pending:
            function = pending.pop()
            resolved, methods = graph.links(function)
            for callee in resolved:
                if callee not in found:
                    found.add(callee)
                    pending.append(callee)
            for cls in graph.classes_built(function):
                self.build(cls)
            if methods:
                own = graph.own_classes(function)
                for method in methods:
                    self.call(method, own)


def reach(stack: list[str], called: Callable[[str], Iterable[str]]) -> list[str]:
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


def unresolved_method(call: CallFact) -> str | None:
    """The method name an unresolved call may reach any method of: `obj.method()` on an unknown
    object, not a dunder (which Python calls implicitly, and the facts model on their own)."""
    if call.method is None or call.targets or call.method.startswith("__"):
        return None
    return call.method


IMPLICIT_METHODS = ("__init__", "__call__", "forward", "__getitem__", "__getitems__", "__iter__", "__next__")


def is_method(qualname: str, module: str) -> bool:
    """`module.Class.method`, not a module-level function."""
    return qualname.count(".") > module.count(".") + 1 and "<locals>" not in qualname


def methods_by_name(facts: ModuleFacts) -> dict[str, list[str]]:
    """The methods a module defines (not its module-level functions), by last name: those an
    unresolved `obj.method()` of that name may reach."""
    found: dict[str, list[str]] = {}
    for function in facts.functions:
        if is_method(function.qualname, facts.module):
            found.setdefault(function.qualname.rpartition(".")[2], []).append(function.qualname)
    return found
