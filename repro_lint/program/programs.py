"""What the program model answers about: programs (an entry-point module and the modules it imports,
or a worker it starts in processes of its own) and the events that happen in their modules."""

from __future__ import annotations

from dataclasses import dataclass, field

from repro_lint.core.message_text import elide, place
from repro_lint.facts.events import Event
from repro_lint.facts.launches import POOL
from repro_lint.facts.module_facts import ModuleFacts


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
