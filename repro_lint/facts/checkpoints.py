"""Checkpoint facts: what each function saves and what each load path restores (REP401-REP407).

For every function (and the module-level code) the facts record the calls that may write a
checkpoint, with the state each saved key holds; the state each `load_state_dict` / `set_rng_state` /
`setstate` / `set_state` call restores and from which key; what builds schedulers, scalers, optimizers
and generators; and where a fix can insert a dict entry or a restore. This module holds those facts
and the checkpoint knowledge (`knowledge()`: savers, schedulers, RNG getters and setters, key hints)
that reading them and judging them share; `checkpoint_collector` reads them from a module's tree.
Whether a call really saves (a project-local wrapper such as `save_on_master`) is decided by the
project pass.
"""

from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass
from functools import cache

from repro_lint.core.records import pickled_by_constructor
from repro_lint.core.source import Line, Position
from repro_lint.knowledge import load

MODULE_CODE = "<module>"
# Where a call takes an argument: its position among the positional arguments and its keyword (either
# may be None: an argument given by keyword has no position, a `*args` pass-through no keyword).
Slot = tuple[int | None, str | None]
# Kinds of state, most specific first: a key `optimizer_state` holds an optimizer, not a model.
STATE_KINDS = ("rng", "scheduler", "scaler", "optimizer", "model")
TRAINING_STATE = ("optimizer", "scheduler", "scaler", "rng")
# Words a statement must contain to save, restore, build something the checkpoint rules care about,
# or build a dict that may be saved; with the last components of the names in the data, they let the
# traversal skip every other statement (most of a module).
_WORDS = ("save", "load(", "state", "sched", "optim", "half", "float16", "last_epoch", "step(")
# `ckpt = {...}`, `ckpt = dict(...)`, `state = ckpt["model"]`, `state = ckpt.get("model")`.
_ASSIGNMENTS = (r"=\s*\{", r"=\s*dict\(", r"=\s*\w+\[['\"]", r"=\s*\w+\.get\(")


@pickled_by_constructor
@dataclass(frozen=True, slots=True)
class _Knowledge:
    # Where each saver takes the object it writes: (position, keyword).
    savers: dict[str, Slot]
    saver_methods: dict[str, dict[str, Slot]]
    exempt_names: frozenset[str]
    exempt_methods: dict[str, tuple[str, ...]]
    schedulers: frozenset[str]
    scheduler_patterns: tuple[str, ...]
    stateful_schedulers: frozenset[str]
    scalers: frozenset[str]
    optimizer_prefixes: tuple[str, ...]
    optimizers: frozenset[str]
    optimizer_factories: frozenset[str]
    stateless_optimizers: dict[str, str]
    rng_getters: dict[str, str]
    rng_setters: dict[str, str]
    generator_get: str
    generator_set: str
    generator_classes: frozenset[str]
    data_loaders: frozenset[str]
    data_position_hints: frozenset[str]
    # Last components of the names above, and patterns of them: calls named otherwise are not resolved.
    terminals: frozenset[str]
    terminal_patterns: tuple[str, ...]
    relevant: re.Pattern[str]
    builds_dict: re.Pattern[str]
    kind_hints: dict[str, str]
    wrapper_hint: str
    progress_keys: frozenset[str]
    loaders: frozenset[str]
    cast_methods: frozenset[str]
    cast_dtypes: frozenset[str]

    def saved_slot(self, targets: tuple[str, ...], method: str | None, receiver: str | None) -> Slot | None:
        """Where a call to `targets` (or `<receiver>.<method>`) takes the object it saves; None when
        it is no saver (`torch.save(obj, f)`: (0, "obj"); `fabric.save(path, state)`: (1, "state"))."""
        slot = next((self.savers[name] for name in targets if name in self.savers), None)
        if slot is not None:
            return slot
        hints = self.saver_methods.get(method or "", {})
        return next((found for hint, found in hints.items() if hint in (receiver or "").lower()), None)

    def worth_resolving(self, terminal: str) -> bool:
        return (
            terminal in self.terminals
            or self.wrapper_hint in terminal.lower()
            or any(fnmatch.fnmatchcase(terminal, pattern) for pattern in self.terminal_patterns)
        )


@cache
def knowledge() -> _Knowledge:
    data = load("checkpoints.json")
    named = [
        *data["savers"], *data["exempt_savers"]["names"], *data["schedulers"], *data["scalers"],
        *data["optimizer_factories"], *data["stateless_optimizers"], *data["rng_getters"], *data["rng_setters"],
        *data["generator_classes"], *data["data_loaders"], *data["loaders"], *data["lossy_casts"]["dtypes"], *data["optimizers"], "builtins.dict",
    ]
    terminals = frozenset(name.rpartition(".")[2] for name in named)
    patterns = tuple(pattern.rpartition(".")[2] for pattern in data["scheduler_factory_patterns"])
    # `dict` is found by `_ASSIGNMENTS`; scheduler factories all say "sched".
    words = sorted({*_WORDS, *terminals} - {"dict"})
    return _Knowledge(
        savers={name: (position, keyword) for name, (position, keyword) in data["savers"].items()},
        saver_methods={
            method: {hint: (position, keyword) for hint, (position, keyword) in hints.items()} for method, hints in data["saver_methods"].items()
        },
        exempt_names=frozenset(data["exempt_savers"]["names"]),
        exempt_methods={method: tuple(hints) for method, hints in data["exempt_savers"]["methods"].items()},
        schedulers=frozenset(data["schedulers"]),
        scheduler_patterns=tuple(data["scheduler_factory_patterns"]),
        stateful_schedulers=frozenset(data["stateful_schedulers"]),
        scalers=frozenset(data["scalers"]),
        optimizer_prefixes=tuple(data["optimizer_prefixes"]),
        optimizers=frozenset(data["optimizers"]),
        optimizer_factories=frozenset(data["optimizer_factories"]),
        stateless_optimizers=dict(data["stateless_optimizers"]),
        rng_getters=dict(data["rng_getters"]),
        rng_setters=dict(data["rng_setters"]),
        generator_get=data["generator_methods"]["get"],
        generator_set=data["generator_methods"]["set"],
        generator_classes=frozenset(data["generator_classes"]),
        data_loaders=frozenset(data["data_loaders"]),
        data_position_hints=frozenset(data["data_position_hints"]),
        terminals=terminals,
        terminal_patterns=patterns,
        relevant=re.compile("|".join(re.escape(word) for word in words)),
        builds_dict=re.compile("|".join(_ASSIGNMENTS)),
        kind_hints=dict(data["kind_hints"]),
        wrapper_hint=data["wrapper_name_hint"],
        progress_keys=frozenset(data["progress_keys"]),
        loaders=frozenset(data["loaders"]),
        cast_methods=frozenset(data["lossy_casts"]["methods"]),
        cast_dtypes=frozenset(data["lossy_casts"]["dtypes"]),
    )


def progress_word(name: str) -> str | None:
    """The progress counter an identifier names (`epoch`, `opt.start_epoch` -> epoch, `global_step`),
    if any: in a file path it records how far training went."""
    lowered = name.lower()
    keys = knowledge().progress_keys
    if lowered in keys:
        return lowered
    return next((key for key in sorted(keys) if lowered.endswith("_" + key)), None)


def hinted_kind(name: str | None) -> str | None:
    """The state a key or a receiver's name suggests (`lr_scheduler` -> scheduler), if any."""
    hinted = {knowledge().kind_hints[word] for word in _words(name) if word in knowledge().kind_hints}
    return next((kind for kind in STATE_KINDS if kind in hinted), None)


def names_a_data_position(name: str | None) -> bool:
    """Whether a receiver's name says its `state_dict()` is a position in the data (`train_loader`)."""
    return not _words(name).isdisjoint(knowledge().data_position_hints)


def _words(name: str | None) -> set[str]:
    return {word for word in re.split(r"[._\d\W]+", name.lower()) if word} if name else set()


# Facts -----------------------------------------------------------------------------------------


@pickled_by_constructor
@dataclass(frozen=True, slots=True)
class SavedEntry:
    """One thing a checkpoint holds: under `key` (None for the saved object itself), state of `kind`
    (one of STATE_KINDS, "progress" or "other"); `lossy` names a cast to lower precision."""

    key: str | None
    kind: str
    line: Line
    column: int
    lossy: str | None = None


@pickled_by_constructor
@dataclass(frozen=True, slots=True)
class DictInsertion:
    """How to add an entry to a saved dict literal: insert `before + entry + after` at `at`, and a
    comma at `comma_at` when the last entry has none."""

    at: Position
    before: str
    after: str
    comma_at: Position | None
    quote: str

    def entry(self, key: str, value: str) -> str:
        return f"{self.before}{self.quote}{key}{self.quote}: {value}{self.after}"


@pickled_by_constructor
@dataclass(frozen=True, slots=True)
class SaveCall:
    """A call that may write a checkpoint: `targets`/`method` name the callee."""

    targets: tuple[str, ...]
    method: str | None
    receiver: str | None
    start: Position
    end: Position
    entries: tuple[SavedEntry, ...]
    # The saved object is this parameter of the function's own: the function may be a saver wrapper.
    parameter: str | None
    insertion: DictInsertion | None = None
    keys: tuple[str, ...] = ()
    # Where the call takes the saved object (a wrapper may take it at any position or keyword).
    slot: Slot = (0, None)
    # Progress counters its other arguments name (`torch.save(sd, f"G_{epoch}.pth")`): the file
    # name records how far training went.
    named_progress: tuple[str, ...] = ()

    @property
    def passes_parameter(self) -> bool:
        return self.parameter is not None


@pickled_by_constructor
@dataclass(frozen=True, slots=True)
class Restore:
    """`receiver.load_state_dict(ckpt[key])`, `torch.set_rng_state(ckpt[key])`, ...: state of
    `kind` restored from `key` (None when the state does not come from a literal key)."""

    key: str | None
    kind: str
    start: Position
    end: Position
    strict_false: bool = False
    # The line where the dict it reads from was last assigned (0: a parameter), telling apart two
    # checkpoints loaded into one name in different branches: a line, which moves with the others.
    source: Line | None = None


@pickled_by_constructor
@dataclass(frozen=True, slots=True)
class RestorePoint:
    """Where restores can be added on a load path: before `line`, indented by `indent`, reading the
    loaded checkpoint from `checkpoint`."""

    line: Line
    indent: str
    checkpoint: str


@pickled_by_constructor
@dataclass(frozen=True, slots=True)
class Creation:
    """Something built in this function that checkpoint rules care about: a scheduler, scaler,
    optimizer or generator (`name` is what it is assigned to), a cast of a model to lower precision
    ("cast"), or a scheduler position set from an epoch ("scheduler_position")."""

    kind: str
    name: str
    line: Line
    what: str
    stateless: bool = False


@pickled_by_constructor
@dataclass(frozen=True, slots=True)
class FunctionCheckpoints:
    qualname: str
    saves: tuple[SaveCall, ...] = ()
    restores: tuple[Restore, ...] = ()
    # Literal keys read from the dict a restore reads (`ckpt["epoch"]`), and whether some restore
    # reads a key that cannot be known (`ckpt[name]`), so any key may be restored.
    reads: tuple[str, ...] = ()
    opaque: bool = False
    restore_point: RestorePoint | None = None
    creations: tuple[Creation, ...] = ()
    # Names a fix may use in this function: parameters and local variables, and the parameters alone.
    names: tuple[str, ...] = ()
    parameters: tuple[str, ...] = ()
    # The parameters a caller passes by position, in order (`self` of a method left out), and those
    # passed only by keyword.
    positional: tuple[str, ...] = ()
    keyword_only: tuple[str, ...] = ()
    # Progress counters the path of a loaded file names (`torch.load(f"G_{opt.epoch}.pth")`): the
    # run resumes from the counter in the file name.
    loaded_progress: tuple[str, ...] = ()

    def slot_of(self, parameter: str) -> Slot | None:
        """Where a caller passes `parameter`; None for a `*args`/`**kwargs` parameter."""
        if parameter in self.positional:
            return self.positional.index(parameter), parameter
        return (None, parameter) if parameter in self.keyword_only else None


@pickled_by_constructor
@dataclass(frozen=True, slots=True)
class ModuleCheckpoints:
    functions: tuple[FunctionCheckpoints, ...] = ()

