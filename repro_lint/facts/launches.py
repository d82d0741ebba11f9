"""Calls that start a project function in other processes: `mp.spawn(main_worker, ...)`,
`mp.Process(target=train)`, `pool.map(task, items)`, submitit's `executor.submit(trainer)`.

Such a function does not run in the launcher's process, so what the launcher set (RNG seeds,
deterministic algorithms) reaches it only through a fork (see knowledge/processes.json). Pools,
executors and multiprocessing contexts are followed through the names they are bound to in the same
body, and a callable object (`trainer = Trainer(args)`) through its class's `__call__`.
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from repro_lint.core.records import pickled_by_constructor
from repro_lint.facts.context import FileContext
from repro_lint.facts.edits import argument, keyword, literal
from repro_lint.knowledge import load

_DATA = load("processes.json")
_LAUNCHERS = {name: entry for entry in _DATA["launchers"] for name in entry["names"]}
_CONTEXTS = frozenset(_DATA["contexts"])
_POOLS = frozenset(_DATA["pools"])
_POOL_METHODS = frozenset(_DATA["pool_methods"])
START_METHOD_SETTERS = frozenset(_DATA["start_method_setters"])
FRESH_START_METHODS = frozenset(_DATA["fresh_start_methods"])
POOL = "pool"
_PROCESS = next(entry for entry in _DATA["launchers"] if "multiprocessing.Process" in entry["names"])


@pickled_by_constructor
@dataclass(frozen=True, slots=True)
class Launch:
    """The argument naming the function a call starts elsewhere, the qualified names that function may
    have, how messages show the launching call, and the start method ("spawn", "forkserver", "fork",
    "" for the platform's default, or "pool" for tasks of a process pool)."""

    arg: cst.BaseExpression
    targets: tuple[str, ...]
    launcher: str
    start: str


def _start_method(node: cst.BaseExpression | None) -> str:
    value = literal(node) if node is not None else None
    return value if isinstance(value, str) else ""


class LaunchFinder:
    """Per file: what names in each body are bound to (pools, contexts, callable objects), and the
    launches among calls."""

    def __init__(self, context: FileContext) -> None:
        self.context = context
        # (scope, name) -> ("pool", ""), ("context", start method) or ("object", class names)
        self._bound: dict[tuple[int, str], tuple[str, tuple[str, ...] | str]] = {}
        # Qualified names of the functions launched from this file (a fix may seed them).
        self.launched: set[str] = set()

    def bind(self, target: cst.BaseExpression, value: cst.BaseExpression) -> None:
        """`pool = Pool(4)`, `ctx = mp.get_context("spawn")`, `trainer = Trainer(args)`, and the
        same in `with ... as name:`."""
        if type(target) is not cst.Name or type(value) is not cst.Call:  # every assignment: exact types (see names.py)
            return
        key = (id(self.context.scopes[-1]), target.value)
        kind = self._object_kind(value)
        if kind is not None:
            self._bound[key] = kind
            return
        names = tuple(sorted(self.context.qualified_names(value.func)))
        if names:
            self._bound[key] = ("object", names)

    def _object_kind(self, value: cst.BaseExpression) -> tuple[str, str] | None:
        """("pool", "") for a process pool or executor, ("context", method) for a multiprocessing context."""
        if not isinstance(value, cst.Call):
            return self._named(value)
        names = self.context.qualified_names(value.func)
        if names & _POOLS:
            return (POOL, "")
        if names & _CONTEXTS:
            given = argument(value, "method", 0)
            return ("context", _start_method(given.value if given is not None else None))
        if isinstance(value.func, cst.Attribute) and value.func.attr.value == "Pool":
            receiver = self._object_kind(value.func.value)
            if receiver is not None and receiver[0] == "context":
                return (POOL, "")
        return None

    def _named(self, value: cst.BaseExpression) -> tuple[str, str] | None:
        if not isinstance(value, cst.Name):
            return None
        bound = self._bound.get((id(self.context.scopes[-1]), value.value))
        if bound is None or bound[0] == "object":
            return None
        return bound[0], str(bound[1])

    def launch(self, node: cst.Call, targets: frozenset[str]) -> Launch | None:
        launcher = next((name for name in sorted(targets) if name in _LAUNCHERS), None)
        if launcher is not None:
            entry = _LAUNCHERS[launcher]
            given = keyword(node, entry["start_method_keyword"]) if entry.get("start_method_keyword") else None
            start = _start_method(given.value) if given is not None else entry["start_method"]
            return self._launch(argument(node, entry["target"], entry["position"]), launcher, start)
        if not isinstance(node.func, cst.Attribute):
            return None
        method = node.func.attr.value
        receiver = self._object_kind(node.func.value)
        if receiver is None:
            return None
        value = node.func.value
        shown = f"{self.context.code_for(value.func)}(...).{method}" if isinstance(value, cst.Call) else f"{self.context.code_for(value)}.{method}"
        if method == "Process" and receiver[0] == "context":
            return self._launch(argument(node, _PROCESS["target"], _PROCESS["position"]), shown, receiver[1])
        if method in _POOL_METHODS and receiver[0] == POOL:
            return self._launch(argument(node, "fn", 0) or argument(node, "func"), shown, POOL)
        return None

    def _launch(self, arg: cst.Arg | None, launcher: str, start: str) -> Launch | None:
        if arg is None or not isinstance(arg.value, (cst.Name, cst.Attribute)):
            return None
        names: tuple[str, ...] = ()
        if isinstance(arg.value, cst.Name):
            bound = self._bound.get((id(self.context.scopes[-1]), arg.value.value))
            if bound is not None and bound[0] == "object":
                # A callable object runs its class's `__call__`.
                names = tuple(f"{name}.__call__" for name in bound[1])
        if not names:
            names = tuple(sorted(self.context.qualified_names(arg.value)))
        self.launched.update(names)
        return Launch(arg.value, names, launcher, start) if names else None
