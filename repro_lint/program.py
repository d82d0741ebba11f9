"""The project model: modules' facts joined into an import graph, a call graph and programs.

A program is an entry-point module plus every project module it imports, transitively. Program-level
rules and the `training_only` filter of local rules work from this model alone, never from syntax.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import cached_property

from repro_lint.facts import CallFact, FunctionFacts, ModuleFacts


@dataclass(frozen=True)
class Program:
    entry: ModuleFacts
    modules: tuple[str, ...]
    trains: bool


class ProjectModel:
    def __init__(self, modules: Iterable[ModuleFacts], entry_point_globs: Iterable[str] = ()) -> None:
        self.modules: dict[str, ModuleFacts] = {facts.module: facts for facts in sorted(modules, key=lambda m: m.module)}
        self._entry_point_globs = tuple(entry_point_globs)
        self.functions: dict[str, FunctionFacts] = {
            function.qualname: function for facts in self.modules.values() for function in facts.functions
        }
        self._module_of_function = {
            function.qualname: facts.module for facts in self.modules.values() for function in facts.functions
        }
        self._methods: dict[str, list[str]] = {}
        for qualname in sorted(self.functions):
            self._methods.setdefault(qualname.rpartition(".")[2], []).append(qualname)

    # Modules and imports -------------------------------------------------------------------------

    def resolve_module(self, name: str, importer: str | None = None) -> str | None:
        """The project module `name` refers to, trying the importer's own folder first (where
        `python train.py` puts it on sys.path), then the project root, then a unique suffix match
        (src/ layouts, scripts run from a subfolder)."""
        if importer is not None:
            folder = importer.rpartition(".")[0]
            if folder and f"{folder}.{name}" in self.modules:
                return f"{folder}.{name}"
        if name in self.modules:
            return name
        matches = [module for module in self.modules if module.endswith("." + name)]
        return matches[0] if len(matches) == 1 else None

    def imported_modules(self, module: str) -> tuple[str, ...]:
        facts = self.modules[module]
        found = {resolved for name in facts.imports if (resolved := self.resolve_module(name, module))}
        found.discard(module)
        return tuple(sorted(found))

    def program_modules(self, entry: str) -> tuple[str, ...]:
        seen = {entry}
        stack = [entry]
        while stack:
            for imported in self.imported_modules(stack.pop()):
                if imported not in seen:
                    seen.add(imported)
                    stack.append(imported)
        return tuple(sorted(seen))

    # Calls -------------------------------------------------------------------------------------

    def resolve_function(self, qualified: str, importer: str | None = None, depth: int = 0) -> str | None:
        """The project function a qualified name denotes, following re-exports through `__init__`
        modules and `from x import *`."""
        if qualified in self.functions:
            return qualified
        if depth > 8:
            return None
        parts = qualified.split(".")
        for cut in range(len(parts) - 1, 0, -1):
            module = self.resolve_module(".".join(parts[:cut]), importer)
            if module is None:
                continue
            rest = parts[cut:]
            local = f"{module}.{'.'.join(rest)}"
            if local in self.functions:
                return local
            facts = self.modules[module]
            for target in facts.binding(rest[0]):
                found = self.resolve_function(".".join([target, *rest[1:]]), module, depth + 1)
                if found:
                    return found
            for star in facts.star_imports:
                found = self.resolve_function(".".join([star, *rest]), module, depth + 1)
                if found:
                    return found
            return None
        return None

    def callees(self, call: CallFact, caller_module: str) -> tuple[str, ...]:
        """Project functions a call may reach. `obj.method()` on an unknown object may be any project
        method of that name: over-approximating keeps "does this program train?" from missing
        training loops written as methods."""
        found = {resolved for target in call.targets if (resolved := self.resolve_function(target, caller_module))}
        if not found and call.method is not None and not call.targets:
            found.update(name for name in self._methods.get(call.method, ()) if _is_method(name, self._module_of_function[name]))
        return tuple(sorted(found))

    @cached_property
    def _training_functions(self) -> frozenset[str]:
        """Functions that train directly or through the project functions they call (a fixed point)."""
        trains = {name for name, function in self.functions.items() if function.trains}
        changed = True
        while changed:
            changed = False
            for name, function in self.functions.items():
                if name in trains:
                    continue
                module = self._module_of_function[name]
                if any(callee in trains for call in function.calls for callee in self.callees(call, module)):
                    trains.add(name)
                    changed = True
        return frozenset(trains)

    def function_trains(self, qualname: str) -> bool:
        return qualname in self._training_functions

    def module_trains_on_load(self, module: str) -> bool:
        """Module-level statements (the main guard included) train, directly or through calls."""
        facts = self.modules[module]
        return facts.trains_at_module_level or any(
            callee in self._training_functions for call in facts.module_calls for callee in self.callees(call, module)
        )

    # Entry points and programs ------------------------------------------------------------------

    def is_entry_point(self, module: str) -> bool:
        facts = self.modules[module]
        if facts.main_guard_line is not None or self.module_trains_on_load(module):
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

    def only_reached_by_non_training_programs(self, module: str) -> bool:
        reaching = list(self.programs_reaching(module))
        return bool(reaching) and not any(program.trains for program in reaching)


def _is_method(qualname: str, module: str) -> bool:
    """`module.Class.method`, not a module-level function."""
    return qualname.count(".") > module.count(".") + 1 and "<locals>" not in qualname
