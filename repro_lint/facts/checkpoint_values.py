"""The values a checkpoint collector traces, and the checkpoint facts they become.

While `checkpoint_collector` reads a module, positions are not yet wanted and most dicts a function
builds are never saved: entries, dicts, save calls and each function's findings are kept here in a
pending form, with what each entry holds worked out only when it is saved. `function_facts` turns
one function's pending findings into its `FunctionCheckpoints` once positions are known.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import libcst as cst

from repro_lint.core.source import Position
from repro_lint.facts.checkpoints import (
    Creation,
    DictInsertion,
    FunctionCheckpoints,
    Restore,
    RestorePoint,
    SaveCall,
    SavedEntry,
    Slot,
)
from repro_lint.facts.positions import Positions


@dataclass(eq=False)
class PendingEntry:
    """An entry of a dict being built, before positions are known. What it holds is worked out only
    when it is saved: most dicts a function builds never are. `refers` is what the variable the
    value names held when the entry was made (`{"state_dict": state_dict}` holds the old
    `state_dict`); a dict it refers to may still gain entries, and may come to hold this one."""

    key: str | None
    node: cst.CSTNode
    value: cst.BaseExpression
    # What the entry holds, given the states of the entries it refers to (those settled).
    classify: Callable[[PendingEntry], tuple[str, str | None]]
    refers: TracedDict | PendingEntry | None = None
    settled: tuple[str, str | None] | None = field(default=None, init=False, repr=False)

    @property
    def state(self) -> tuple[str, str | None]:
        if self.settled is None:
            _settle(self)
        assert self.settled is not None
        return self.settled

    @property
    def kind(self) -> str:
        return self.state[0]

    @property
    def lossy(self) -> str | None:
        return self.state[1]

    def referred(self) -> list[PendingEntry]:
        if isinstance(self.refers, PendingEntry):
            return [self.refers]
        return list(self.refers.entries.values()) if isinstance(self.refers, TracedDict) else []


def _settle(root: PendingEntry) -> None:
    """Work out what `root` and the entries it refers to hold, those first, on an explicit stack (a
    chain of dicts held in dicts is as long as the code makes it). An entry found again while it is
    being worked out (`ckpt["self"] = ckpt`) adds nothing to what refers to it."""
    open_ids = {id(root)}
    stack = [(root, iter(root.referred()))]
    while stack:
        entry, referred = stack[-1]
        following = next((other for other in referred if other.settled is None and id(other) not in open_ids), None)
        if following is not None:
            open_ids.add(id(following))
            stack.append((following, iter(following.referred())))
            continue
        entry.settled = entry.classify(entry)
        open_ids.discard(id(entry))
        stack.pop()


def same_as_referred(entry: PendingEntry) -> tuple[str, str | None]:
    """An object saved whole holds what the entry it was traced to holds."""
    referred = entry.referred()
    return referred[0].settled or ("other", None) if referred else ("other", None)


@dataclass
class TracedDict:
    """A dict the code builds: its entries by key, and the literal a fix can extend."""

    entries: dict[str, PendingEntry] = field(default_factory=dict)
    literal: cst.Dict | None = None

    def add(self, key: object, entry: PendingEntry) -> None:
        # An entry under a computed key (`ckpt[scaler.state_dict_key] = ...`) still holds its state.
        self.entries[key if isinstance(key, str) else f"\0{len(self.entries)}"] = entry

    @property
    def keys(self) -> tuple[str, ...]:
        return tuple(key for key in self.entries if not key.startswith("\0"))


@dataclass
class PendingSave:
    """A call that may write a checkpoint, before positions are known (see SaveCall)."""

    call: cst.Call
    targets: tuple[str, ...]
    method: str | None
    receiver: str | None
    entries: tuple[PendingEntry, ...]
    parameter: str | None
    literal: cst.Dict | None = None
    keys: tuple[str, ...] = ()
    slot: Slot = (0, None)
    named_progress: tuple[str, ...] = ()


@dataclass
class Body:
    """What the collector finds in one function (or the module-level code) as it reads it, before
    positions are known, and what it must remember to trace saved values and restored keys."""

    qualname: str
    parameters: frozenset[str]
    positional: tuple[str, ...] = ()
    keyword_only: tuple[str, ...] = ()
    values: dict[str, TracedDict | PendingEntry] = field(default_factory=dict)
    # `state = ckpt["model"]`: local names holding one key of a loaded dict.
    picked: dict[str, tuple[str, str, int | None]] = field(default_factory=dict)
    # Where each local name was last assigned.
    assigned: dict[str, int] = field(default_factory=dict)
    saves: list[PendingSave] = field(default_factory=list)
    restores: list[tuple[cst.Call, str | None, str, bool, int | None]] = field(default_factory=list)
    bases: set[str] = field(default_factory=set)
    reads: set[str] = field(default_factory=set)
    opaque: bool = False
    loaded_progress: set[str] = field(default_factory=set)
    # Names handed whole to a call that is not a restore (`set_rng_state_for_device(..., rng_state)`).
    handed: set[str] = field(default_factory=set)
    restore_point: tuple[cst.SimpleStatementLine, str, str] | None = None
    creations: list[tuple[cst.CSTNode, str, str, str, bool]] = field(default_factory=list)
    names: set[str] = field(default_factory=set)


# Building the facts ----------------------------------------------------------------------------------


def function_facts(body: Body, positions: Positions, lines: list[str]) -> FunctionCheckpoints | None:
    """One function's checkpoint facts, now that positions are known; None when it has none."""
    if not (body.saves or body.restores or body.creations):
        return None

    def entry(pending: PendingEntry) -> SavedEntry:
        start = positions.start(pending.node)
        return SavedEntry(pending.key, pending.kind, start.line, start.column, pending.lossy)

    saves = tuple(
        SaveCall(
            save.targets,
            save.method,
            save.receiver,
            *positions.range(save.call),
            tuple(entry(pending) for pending in save.entries),
            save.parameter,
            _insertion(save.literal, positions, lines) if save.literal is not None else None,
            save.keys,
            save.slot,
            save.named_progress,
        )
        for save in body.saves
    )
    restores = tuple(Restore(key, kind, *positions.range(node), strict, origin) for node, key, kind, strict, origin in body.restores)
    reads = sorted(read.partition("\0")[2] for read in body.reads if read.partition("\0")[0] in body.bases)
    point = None
    if body.restore_point is not None:
        statement, indent, base = body.restore_point
        point = RestorePoint(positions.range(statement)[1].line + 1, indent, base)
    creations = tuple(
        Creation(kind, name, positions.start(node).line, what, stateless) for node, kind, name, what, stateless in body.creations
    )
    return FunctionCheckpoints(
        body.qualname,
        saves,
        restores,
        tuple(reads),
        # A loaded dict handed to a helper may have any of its keys restored there.
        body.opaque or bool(body.handed & body.bases),
        point,
        creations,
        tuple(sorted(body.names)),
        tuple(sorted(body.parameters)),
        body.positional,
        body.keyword_only,
        tuple(sorted(body.loaded_progress)),
    )


def _insertion(node: cst.Dict, positions: Positions, lines: list[str]) -> DictInsertion:
    """Where and how a new entry goes into a dict literal, following its layout: one entry per line
    (with the entries' indentation and a trailing comma when the dict has one) or all on one line."""
    quote = next(
        (element.key.quote for element in node.elements if isinstance(element, cst.DictElement) and isinstance(element.key, cst.SimpleString)),
        '"',
    )
    open_brace, close_brace = positions.range(node)
    if not node.elements:
        at = Position(open_brace.line, open_brace.column + 1)
        return DictInsertion(at, "", "", None, quote)
    last = node.elements[-1]
    last_end = positions.range(last.value)[1]
    text = lines[last_end.line - 1]
    rest = text[last_end.column :]
    has_comma = rest.lstrip().startswith(",")
    comma_end = last_end.column + (len(rest) - len(rest.lstrip())) + 1 if has_comma else last_end.column
    closing_alone = close_brace.line > last_end.line and not lines[close_brace.line - 1][: close_brace.column - 1].strip()
    if closing_alone:
        first_line = lines[positions.start(last).line - 1]
        indent = first_line[: len(first_line) - len(first_line.lstrip())]
        return DictInsertion(
            Position(last_end.line + 1, 0),
            indent,
            "," + ("\n" if not text.endswith("\r\n") else "\r\n"),
            None if has_comma else last_end,
            quote,
        )
    if has_comma:
        return DictInsertion(Position(last_end.line, comma_end), " ", ",", None, quote)
    return DictInsertion(last_end, ", ", "", None, quote)
