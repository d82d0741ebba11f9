"""What runs in a program's own process, and the programs of the workers it starts in others.

A function a program hands to `mp.spawn`, a process pool or an executor runs in a process of its
own, which inherits nothing of the launcher's RNG state or torch settings: it is no part of what the
launcher's process does, and is a program of its own (a worker), running the module-level code of
the program's modules again in its fresh interpreter. A forked process runs as its launcher's own,
unless the program sets a start method that starts fresh interpreters.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from functools import cached_property

from repro_lint.facts.launches import FRESH_START_METHODS, POOL
from repro_lint.facts.module_facts import CallFact, FunctionFacts, ModuleFacts
from repro_lint.program.call_graph import CallGraph, Calls, reach
from repro_lint.program.programs import Program, Worker


class Processes:
    """Which project functions run in each program's own process, and its workers."""

    def __init__(self, modules: dict[str, ModuleFacts], functions: dict[str, FunctionFacts], calls: CallGraph) -> None:
        self.modules = modules
        self.functions = functions
        self.calls = calls
        self._process_walks: dict[str, list[str]] = {}
        self._workers_cache: dict[str, tuple[Program, ...]] = {}

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
        for module, calls in self.process_calls(program):
            for call in calls:
                if call.launcher is None or self._runs_here(call, fresh_default):
                    continue
                functions = self.calls.callees(call, module)
                if not functions or functions in found:
                    continue
                worker = Program(program.entry, program.modules, False, Worker(functions, self.modules[module], call.line, call.start))
                trains = any(self.functions[name].trains for name in self.process_functions(worker))
                found[functions] = replace(worker, trains=trains)
        return tuple(found.values())

    def trains_in_process(self, program: Program) -> bool:
        """Whether `program` trains in its own process, not only in workers it starts elsewhere."""
        if program.worker is not None:
            return program.trains
        return program.entry.trains_at_module_level or any(self.functions[name].trains for name in self.process_functions(program))

    def process_functions(self, program: Program) -> list[str]:
        """Project functions that run in `program`'s own process: for a worker, its functions and what
        they call; for an entry, what its code calls, except functions it starts in fresh processes
        (a callable object submitted to an executor is not run by building it)."""
        cached = self._process_walks.get(program.key)
        if cached is not None:
            return cached
        if program.worker is None and not any(self._module_processes[module][1] for module in program.modules):
            # Nothing starts elsewhere: every call runs here.
            found = self._process_walks[program.key] = self.calls.walk(program.entry.module, program.modules)
            return found
        within = self.calls.module_set(program.modules)
        fresh_default = self._fresh_default(program)
        launched = self._launched_fresh(program, fresh_default)

        def callees(call: CallFact, module: str) -> tuple[str, ...]:
            return self._callees_here(call, module, within, launched, fresh_default)

        def called(function: str) -> Iterator[str]:
            module = self.calls.module_of_function[function]
            return (callee for call in self.calls.linking_calls(function) for callee in callees(call, module))

        stack = list(program.worker.functions) if program.worker is not None else []
        stack += [callee for module, calls in self.process_roots(program) for call in calls for callee in callees(call, module)]
        found = self._process_walks[program.key] = reach(stack, called)
        return found

    def process_roots(self, program: Program) -> list[Calls]:
        """The calls `program`'s process makes outside functions: the entry's (module-level code of
        its modules and its `__main__` block), or, in a worker's fresh interpreter, the module-level
        code alone."""
        if program.worker is None:
            return self.calls.entry_calls(program.entry.module, program.modules)
        return self.calls.module_level_calls(program.modules)

    def process_calls(self, program: Program) -> list[Calls]:
        """The calls made in `program`'s own process."""
        groups = self.process_roots(program)
        groups.extend((self.calls.module_of_function[name], self.functions[name].calls) for name in self.process_functions(program))
        return groups

    def _callees_here(
        self, call: CallFact, module: str, within: frozenset[str], launched: frozenset[str], fresh_default: bool
    ) -> tuple[str, ...]:
        if not self._runs_here(call, fresh_default):
            return ()
        found = self.calls.callees(call, module, within)
        if call.reference or not launched or not set(found) & launched:
            return found
        # `Trainer(args)` builds an object whose `__call__` runs in a submitted job, not here.
        named = {self.calls.resolve_symbol(target, module) for target in call.targets}
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
            for name in self.calls.callees(call, module)
        )

    @cached_property
    def _module_processes(self) -> dict[str, tuple[bool, tuple[CallFact, ...]]]:
        """Per module: whether it sets a fresh start method, and its launching calls (main block included)."""
        found = {}
        for name, facts in self.modules.items():
            events = [*facts.module_events, *facts.main_events, *(event for function in facts.functions for event in function.events)]
            fresh = any(event.kind == "start_method" and event.what in FRESH_START_METHODS for event in events)
            found[name] = (fresh, tuple(call for call in facts.every_call() if call.launcher))
        return found
