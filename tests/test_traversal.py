"""`walk` must be indistinguishable from LibCST's own `visit` for a read-only visitor, but for the
trivia it skips."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import libcst as cst
import pytest

from repro_lint.core.settings import Settings
from repro_lint.facts.context import BatchedVisitor, FileContext
from repro_lint.facts.names import SCOPE_TYPES
from repro_lint.facts.traversal import LEAVES, SKIPPED, TRIVIA, _hooks, children_fields, walk

PACKAGE = Path(__file__).parent.parent / "repro_lint"

EVERY_KIND_OF_SYNTAX = '''
"""Docstring."""
from __future__ import annotations
import os.path as osp, sys
from . import sibling
from ..pkg import (a as b, c,)
from x import *

@decorator(arg)
@other
async def f[T: int, *Ts, **P](a, /, b: int = 1, *args: T, c=2, **kwargs) -> list[T]:
    global g
    x: int = await thing
    async with open(p) as fh, other() as (o, q):
        async for i in aiter():
            yield i
    return [y async for y in z if y] or {k: v for k, v in d.items()} or {s for s in t} or (g for g in h)

class C[T](Base, metaclass=Meta):
    attr = 1
    def m(self):
        nonlocal_ = lambda q, *r, s=1, **t: q
        def inner():
            nonlocal nonlocal_
        return f"{self.attr!r:>{width}.{precision}} {x=} {'nested'}" + rb"raw" + "implicit" "concat"

type Alias[K] = dict[K, int]

try:
    pass
except* (ValueError, TypeError) as group:
    raise RuntimeError("x") from group
else:
    del a[1:2, ::3], b.c
finally:
    assert x, "message"

match command.split():
    case [action, *rest] if rest:
        pass
    case {"key": value, **others}:
        pass
    case Point(x=0, y=_) | Point(1, 2) as p:
        pass
    case str() | None | -1 | 1+2j | "s" "t":
        pass

while (n := n - 1) > 0:
    x += 1; y <<= 2
    if not a and b or c is not d in e:
        continue
    elif ~x ** -y // z @ w:
        break
else:
    print(*args, **kwargs, sep="")
with (open(a) as x, open(b)):
    x[...] = y if z else w
for i, (j, k) in enumerate(pairs):
    *first, last = i
'''


class Recorder(cst.CSTVisitor):
    def __init__(self) -> None:
        super().__init__()
        self.events: list[tuple[str, int]] = []
        self.inside_trivia: list[cst.CSTNode] = []
        self.below_trivia: list[str] = []

    def on_visit(self, node: cst.CSTNode) -> bool:
        if type(node) in TRIVIA:
            self.inside_trivia.append(node)
        elif self.inside_trivia:
            self.below_trivia.append(type(node).__name__)
        else:
            self.events.append(("visit", id(node)))
        return not isinstance(node, cst.Lambda)  # a visitor may prune a subtree

    def on_leave(self, original_node: cst.CSTNode) -> None:
        if type(original_node) in TRIVIA:
            self.inside_trivia.pop()
        elif not self.inside_trivia:
            self.events.append(("leave", id(original_node)))


SOURCES = [EVERY_KIND_OF_SYNTAX, *(path.read_text() for path in sorted(PACKAGE.rglob("*.py")) if path.stat().st_size > 2000)]


def _visited_and_walked(source: str, recorder: type[Recorder] | type[MethodRecorder]) -> tuple[list[tuple[str, int]], list[tuple[str, int]]]:
    """What a new `recorder` records through LibCST's own `visit` of `source`, and through `walk`."""
    module = cst.parse_module(source)
    expected, walked = recorder(), recorder()
    module.visit(expected)
    walk(module, walked)
    return expected.events, walked.events


@pytest.mark.parametrize("source", SOURCES, ids=lambda source: source[:20])
def test_walk_visits_the_nodes_libcst_visits_in_the_same_order_but_the_trivia(source: str) -> None:
    expected, walked = _visited_and_walked(source, Recorder)
    assert len(expected) > 50
    assert walked == expected


class MethodRecorder(cst.CSTVisitor):
    """A visitor with LibCST's own dispatch: `visit_`/`leave_` methods, one of which prunes."""

    def __init__(self) -> None:
        super().__init__()
        self.events: list[tuple[str, int]] = []

    def visit_Call(self, node: cst.Call) -> None:
        self.events.append(("visit_Call", id(node)))

    def leave_Call(self, original_node: cst.Call) -> None:
        self.events.append(("leave_Call", id(original_node)))

    def visit_Name(self, node: cst.Name) -> None:
        self.events.append(("visit_Name", id(node)))

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        self.events.append(("visit_Lambda", id(node)))
        return False  # what a lambda holds is not visited

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self.events.append(("leave_FunctionDef", id(original_node)))


class CallRecorder(MethodRecorder):
    """MethodRecorder's methods but for names (a method set to None is none, as LibCST takes it),
    and one for integers only where they are left: its walks pass names by."""

    visit_Name = None  # type: ignore[assignment]

    def leave_Integer(self, original_node: cst.Integer) -> None:
        self.events.append(("leave_Integer", id(original_node)))


@pytest.mark.parametrize("recorder", [MethodRecorder, CallRecorder])
@pytest.mark.parametrize("source", SOURCES, ids=lambda source: source[:20])
def test_walk_runs_a_visitors_methods_where_libcst_does(source: str, recorder: type[MethodRecorder]) -> None:
    expected, walked = _visited_and_walked(source, recorder)
    assert any(kind == "visit_Call" for kind, _ in expected)
    assert recorder is MethodRecorder or source is not EVERY_KIND_OF_SYNTAX or any(kind == "leave_Integer" for kind, _ in expected)
    assert walked == expected


def test_walk_passes_by_the_leaves_a_visitor_has_no_method_for() -> None:
    skipped = _hooks(CallRecorder())[2]
    assert cst.Name in skipped and cst.SimpleString in skipped and cst.Integer not in skipped
    assert cst.Name not in _hooks(MethodRecorder())[2]


@pytest.mark.parametrize("source", SOURCES, ids=lambda source: source[:20])
def test_nothing_but_trivia_lies_below_trivia(source: str) -> None:
    libcst_visit = Recorder()
    cst.parse_module(source).visit(libcst_visit)
    assert libcst_visit.below_trivia == []


@pytest.mark.parametrize("source", SOURCES, ids=lambda source: source[:20])
def test_leaves_hold_nothing_but_trivia(source: str) -> None:
    leaves = []

    class Leaves(cst.CSTVisitor):
        def on_visit(self, node: cst.CSTNode) -> bool:
            if type(node) in LEAVES:
                leaves.append(node)
            return True

    cst.parse_module(source).visit(Leaves())
    assert cst.Name in {type(leaf) for leaf in leaves}
    for leaf in leaves:
        children = [getattr(leaf, name) for name in children_fields(type(leaf))]
        flat = [child for value in children for child in (value if isinstance(value, (tuple, list)) else (value,))]
        assert all(type(child) in SKIPPED for child in flat), type(leaf).__name__


_Record = list[tuple[str, int, tuple[int, ...], tuple[int, ...]]]
_HANDLED = ("Call", "Name", "Attribute", "FunctionDef", "ClassDef", "Lambda", "Assign", "SimpleString", "If", "Arg")


def _recording(context: FileContext, record: _Record, node_types: tuple[str, ...]) -> object:
    """A visitor whose visit and leave methods for `node_types` record the node and the context's stacks."""

    def method(kind: str) -> Callable[[object, cst.CSTNode], None]:
        def run(self: object, node: cst.CSTNode) -> None:
            record.append((kind, id(node), tuple(map(id, context.ancestors)), tuple(map(id, context.scopes))))

        return run

    return type("Recording", (), {f"{kind}_{name}": method(f"{kind}_{name}") for name in node_types for kind in ("visit", "leave")})()


class _Dispatching:
    """The dispatch as a visitor of `walk`, keeping the stacks as the batched traversal does."""

    def __init__(self, context: FileContext, visitor: object) -> None:
        self.context, self.visitor = context, visitor

    def on_visit(self, node: cst.CSTNode) -> bool:
        self.context.ancestors.append(node)
        if type(node) in SCOPE_TYPES:
            self.context.scopes.append(node)
        getattr(self.visitor, f"visit_{type(node).__name__}", lambda node: None)(node)
        return True

    def on_leave(self, original_node: cst.CSTNode) -> None:
        getattr(self.visitor, f"leave_{type(original_node).__name__}", lambda node: None)(original_node)
        if type(original_node) in SCOPE_TYPES:
            self.context.scopes.pop()
        self.context.ancestors.pop()


@pytest.mark.parametrize("handled", [_HANDLED, tuple(name for name in _HANDLED if name != "Name")], ids=["names visited", "names passed by"])
@pytest.mark.parametrize("source", SOURCES[:8], ids=lambda source: source[:20])
def test_the_batched_traversal_runs_each_method_where_walk_would_with_the_same_stacks(source: str, handled: tuple[str, ...]) -> None:
    module = cst.parse_module(source)
    records: list[_Record] = [[], []]
    for record, batched in zip(records, (False, True)):
        context = FileContext(module, "pkg.mod", False, Settings(), source)
        visitor = _recording(context, record, handled)
        if batched:
            BatchedVisitor(context, [visitor]).traverse(module)
        else:
            walk(module, _Dispatching(context, visitor))
        assert context.ancestors == [] and context.scopes == []
    assert len(records[0]) > 50
    assert any(kind == "visit_Name" for kind, *_ in records[1]) == ("Name" in handled)
    assert records[1] == records[0]


def test_a_visitor_class_made_for_one_walk_is_not_kept_by_the_dispatch_tables() -> None:
    import gc
    import weakref

    from repro_lint.facts import traversal

    class Once(cst.CSTVisitor):
        def visit_Call(self, node: cst.Call) -> None:
            pass

    walk(cst.parse_module("f(x)\n"), Once())
    assert Once in traversal._DISPATCH
    gone = weakref.ref(Once)
    del Once
    gc.collect()
    assert gone() is None
