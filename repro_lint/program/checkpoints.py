"""A project's checkpoints: the checkpoint facts of every module joined through the program model.

A checkpoint is what one function saves (through `torch.save` and friends, or a project-local wrapper
that passes its argument on to one, such as `save_on_master`), all its save calls taken together.
Its context is what the programs that run the function build (schedulers, scalers, optimizers,
generators) and which RNGs they draw from; load paths are the functions that restore state.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cached_property

from repro_lint.facts.checkpoints import MODULE_CODE, Creation, FunctionCheckpoints, SaveCall, SavedEntry, Slot, knowledge
from repro_lint.facts.events import NUMPY, RANDOM
from repro_lint.facts.module_facts import ModuleFacts
from repro_lint.program.call_graph import is_method
from repro_lint.program.model import ProjectModel
from repro_lint.program.programs import Program


@dataclass(frozen=True)
class Located:
    """A function's checkpoint facts and the module it is in."""

    module: ModuleFacts
    function: FunctionCheckpoints

    @property
    def is_module_code(self) -> bool:
        return self.function.qualname.endswith("." + MODULE_CODE)


@dataclass(frozen=True)
class Checkpoint:
    owner: Located
    saves: tuple[SaveCall, ...]

    @property
    def entries(self) -> tuple[SavedEntry, ...]:
        return tuple(entry for save in self.saves for entry in save.entries)

    @property
    def kinds(self) -> frozenset[str]:
        return frozenset(entry.kind for entry in self.entries)

    @property
    def named_progress(self) -> frozenset[str]:
        """Progress counters the file names of its saves record."""
        return frozenset(word for save in self.saves for word in save.named_progress)

    @property
    def first(self) -> SaveCall:
        return min(self.saves, key=lambda save: save.start)

    @property
    def is_training(self) -> bool:
        return "optimizer" in self.kinds

    @property
    def extendable(self) -> SaveCall | None:
        """The save of a dict literal holding the optimizer state, where a fix adds entries."""
        in_order = sorted(self.saves, key=lambda save: save.start)
        return next((save for save in in_order if save.insertion is not None and any(entry.kind == "optimizer" for entry in save.entries)), None)


@dataclass(frozen=True)
class Context:
    """What the programs running a checkpoint's function do: the objects they are known to build,
    which findings name, and those they may build, where a wrong guess only keeps a finding back."""

    creations: tuple[tuple[Located, Creation], ...]
    possible: tuple[tuple[Located, Creation], ...]
    programs: tuple[Program, ...]

    def built(self, kind: str) -> list[tuple[Located, Creation]]:
        return [(located, creation) for located, creation in self.creations if creation.kind == kind]

    def may_build(self, kind: str) -> bool:
        return any(creation.kind == kind for _, creation in self.possible)


class ProjectCheckpoints:
    """Checkpoints and load paths of one project, computed once per project model."""

    def __init__(self, project: ProjectModel) -> None:
        # The model keeps this view (`views`): a strong reference back would make the two a cycle,
        # and the whole model garbage only the cyclic collector frees, by traversing all of it.
        self.project = weakref.proxy(project)
        self.located = [
            Located(module, function) for module in project.modules.values() for function in module.checkpoints.functions
        ]
        self._by_name = {located.function.qualname: located for located in self.located}

    # Saves ---------------------------------------------------------------------------------------

    @staticmethod
    def _direct(save: SaveCall) -> bool:
        return knowledge().saved_slot(save.targets, save.method, save.receiver) is not None

    def _callees(self, save: SaveCall, module: str) -> tuple[str, ...]:
        return tuple(sorted({found for target in save.targets for found in self.project.calls.resolve_functions(target, module)}))

    @cached_property
    def wrappers(self) -> dict[str, Slot | None]:
        """Project functions that save what they are given (`save_on_master(obj, path)`), with where
        their callers pass the saved object (None: anywhere, for a `*args` pass-through of unknown
        position): those handing a parameter to a saver, or to a wrapper at the place it takes the
        object, found from the savers outwards (a chain of wrappers written in any order takes one pass)."""
        pending: list[tuple[str, Slot | None]] = []
        # The functions handing a parameter to each callee, at which place, which are wrappers once it is.
        handing: dict[str, list[tuple[Located, SaveCall]]] = {}
        for located in self.located:
            for save in located.function.saves:
                if save.parameter is None:
                    continue
                if self._direct(save):
                    pending.append((located.function.qualname, self._forwarded(located, save, save.slot)))
                for callee in self._callees(save, located.module.module):
                    handing.setdefault(callee, []).append((located, save))
        found: dict[str, Slot | None] = {}
        while pending:
            name, slot = pending.pop()
            if name in found:
                continue
            found[name] = slot
            for located, save in handing.get(name, ()):
                if _matches(save.slot, slot):
                    pending.append((located.function.qualname, self._forwarded(located, save, slot)))
        return found

    @staticmethod
    def _forwarded(located: Located, save: SaveCall, inner: Slot | None) -> Slot | None:
        """Where callers of a wrapper pass what it hands on: its parameter's place, or for a
        `*args` pass-through, the place the callee takes it."""
        assert save.parameter is not None
        return located.function.slot_of(save.parameter) or inner

    def _saves(self, save: SaveCall, module: str) -> bool:
        if self._direct(save):
            return True
        wrappers = self.wrappers
        return any(callee in wrappers and _matches(save.slot, wrappers[callee]) for callee in self._callees(save, module))

    @cached_property
    def checkpoints(self) -> tuple[Checkpoint, ...]:
        found = []
        for located in self.located:
            saves = tuple(
                save
                for save in located.function.saves
                if not save.passes_parameter and save.entries and self._saves(save, located.module.module)
            )
            if saves and self._checked(located, saves[0]):
                found.append(Checkpoint(located, saves))
        return tuple(sorted(found, key=lambda checkpoint: (checkpoint.owner.module.path, checkpoint.first.start)))

    def rng_saved_by_a_sibling(self, checkpoint: Checkpoint) -> bool:
        """Whether a function that runs the checkpoint's function also saves an RNG state, itself or
        through another function it runs: a checkpoint folder written part by part
        (`_save_checkpoint` runs `_save_optimizer` and `_save_rng_state`)."""
        callers = self.project.calls.callers(checkpoint.owner.function.qualname)
        return any(
            saver in callers or callers & self.project.calls.callers(saver)
            for saver in self._rng_savers
        )

    @cached_property
    def _rng_savers(self) -> tuple[str, ...]:
        return tuple(checkpoint.owner.function.qualname for checkpoint in self.checkpoints if "rng" in checkpoint.kinds)

    def _checked(self, located: Located, save: SaveCall) -> bool:
        """Code a program runs is judged by what it saves (optimizer state means training, even where
        the training step is hidden in a library); code no program runs is checked unless it is a
        test, whose files no training run resumes from."""
        module = located.module.module
        if self.programs_running(located):
            return True
        if any(True for _ in self.project.programs_reaching(module)):
            # The programs importing the module never run this function: judged only when something
            # may still run it (a plain function that nothing in the project calls is dead code; a
            # name-only match elsewhere in the project, such as `self.deepspeed.save_checkpoint()`,
            # does not run a module-level function).
            return located.is_module_code or self._maybe_called(located)
        return not self.project.only_reached_by_non_training_programs(module, located.module.function_at(save.start.line))

    def _maybe_called(self, located: Located) -> bool:
        name = located.function.qualname
        calls = self.project.calls
        module = located.module.module
        return name in calls.linked or name not in calls.module_of_function or is_method(name, module) or "<locals>" in name

    # Context ---------------------------------------------------------------------------------------

    def programs_running(self, located: Located) -> tuple[Program, ...]:
        if located.is_module_code:
            return tuple(self.project.programs_reaching(located.module.module))
        name = located.function.qualname
        return tuple(program for program in self.project.programs if name in self.project.reachable_functions(program))

    def context(self, checkpoint: Checkpoint) -> Context:
        """What the programs running the checkpoint's function build; where no program is known to
        run it (library code called from elsewhere, a sub-command a CLI picks at run time), what the
        code running with it builds: never the whole project's code (LoRA: another example tree's
        GradScaler; litgpt: another sub-command's scheduler). Known to be built is what the functions
        the programs are known to run build, given that the checkpoint's function and its callers
        run (`functions_known_to_run`); what they may run only keeps findings back."""
        owner = checkpoint.owner
        programs = self.programs_running(owner)
        if not programs and not owner.is_module_code:
            chosen = self._run_with(owner)
            return Context(_creations(chosen), _creations(chosen), programs)
        running = () if owner.is_module_code else self.project.calls.calling(owner.function.qualname)
        known = self._run_by(programs, lambda program: self.project.functions_known_to_run(program, running))
        return Context(_creations(known), _creations(self._run_by(programs, self.project.reachable_functions)), programs)

    def _run_with(self, located: Located) -> list[Located]:
        together = self.project.calls.run_with(located.function.qualname) | {located.function.qualname}
        module_code = f"{located.module.module}.{MODULE_CODE}"
        return [other for other in self.located if other.function.qualname in together or other.function.qualname == module_code]

    def _run_by(self, programs: tuple[Program, ...], running: Callable[[Program], frozenset[str]]) -> list[Located]:
        """The functions these programs run, as `running` finds them, and their modules' top-level
        code; every function when there are no programs."""
        if not programs:
            return self.located
        names: set[str] = set()
        for program in programs:
            names |= running(program)
            names |= {f"{module}.{MODULE_CODE}" for module in program.modules}
        return [located for located in self.located if located.function.qualname in names]

    def draws_from(self, programs: tuple[Program, ...], rng: str) -> bool:
        return any(
            located.event.rng == rng and located.event.kind == "consume" for program in programs for located in self.project.events(program)
        )

    def uses_cuda(self, programs: tuple[Program, ...]) -> bool:
        return any(self.project.program_satisfies(program, ("cuda",)) for program in programs)

    def rngs_used(self, programs: tuple[Program, ...]) -> tuple[str, ...]:
        """The global RNGs whose state a checkpoint of these programs should hold."""
        used = ["torch"]
        if self.uses_cuda(programs):
            used.append("cuda")
        used += [rng for rng in (NUMPY, RANDOM) if self.draws_from(programs, rng)]
        return tuple(used)

    # Load paths --------------------------------------------------------------------------------------

    @cached_property
    def load_paths(self) -> tuple[Located, ...]:
        return tuple(located for located in self.located if located.function.restores)

    @cached_property
    def resume_paths(self) -> tuple[Located, ...]:
        """Load paths that continue training: they restore an optimizer."""
        return tuple(located for located in self.load_paths if any(restore.kind == "optimizer" for restore in located.function.restores))

    @cached_property
    def restored_keys(self) -> frozenset[str]:
        return frozenset(restore.key for located in self.load_paths for restore in located.function.restores if restore.key is not None)

    @cached_property
    def any_key_may_be_restored(self) -> bool:
        return any(located.function.opaque for located in self.load_paths)

    def resumes_from(self, checkpoint: Checkpoint, keys: frozenset[str]) -> bool:
        """Whether a load path of the programs that write `checkpoint` restores state and reads one
        of `keys` (an epoch or step counter), from the loaded dict or the loaded file's name."""
        run = {located.function.qualname for located in self._run_by(self.programs_running(checkpoint.owner), self.project.reachable_functions)}
        return any(
            keys & {*located.function.reads, *located.function.loaded_progress} for located in self.load_paths if located.function.qualname in run
        )

    def function(self, qualname: str) -> Located | None:
        return self._by_name.get(qualname)

    def in_module(self, module: str) -> Iterator[Located]:
        return (located for located in self.located if located.module.module == module)


def _creations(functions: list[Located]) -> tuple[tuple[Located, Creation], ...]:
    return tuple((located, creation) for located in functions for creation in located.function.creations)


def _matches(given: Slot, taken: Slot | None) -> bool:
    """Whether an argument given at `given` is the one a wrapper takes at `taken` (unknown: any)."""
    if taken is None:
        return True
    return (given[0] is not None and given[0] == taken[0]) or (given[1] is not None and given[1] == taken[1])


def project_checkpoints(project: ProjectModel) -> ProjectCheckpoints:
    """The checkpoints of `project`, shared by the seven checkpoint rules."""
    found = project.views.get("checkpoints")
    if found is None:
        found = project.views["checkpoints"] = ProjectCheckpoints(project)
    return found  # type: ignore[return-value]
