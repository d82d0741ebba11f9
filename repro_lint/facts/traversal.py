"""A read-only traversal of LibCST trees, for visitors that only look.

`node.visit(visitor)` rebuilds and revalidates every node it passes, even for a `CSTVisitor` that
changes nothing: on transformers' sources that rebuilding, and the abstract-class `isinstance`
checks it makes, cost more than the parse. `walk` calls the same `on_visit`/`on_leave` hooks on the
same nodes in the same order, reading each node's children in the order its own
`_visit_and_replace_children` visits them, except the trivia: whitespace, comments, punctuation and
operators, which no visitor of repro-lint looks at, and which are two thirds of a tree's nodes.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable
from typing import Protocol
from weakref import WeakKeyDictionary

import libcst as cst

_VISITED_FIELD = re.compile(r"""visit_\w+\(\s*self,\s*["'](\w+)["']""")
_ORDER: dict[type[cst.CSTNode], tuple[str, ...]] = {}

# Nodes holding nothing but other trivia (tests/test_traversal.py checks that on every kind of syntax).
TRIVIA: frozenset[type[cst.CSTNode]] = frozenset(
    {
        cst.SimpleWhitespace, cst.ParenthesizedWhitespace, cst.TrailingWhitespace, cst.EmptyLine, cst.Newline, cst.Comment,
        cst.Comma, cst.Dot, cst.Colon, cst.Semicolon, cst.AssignEqual, cst.ImportStar, cst.Asynchronous,
        cst.LeftParen, cst.RightParen, cst.LeftSquareBracket, cst.RightSquareBracket, cst.LeftCurlyBrace, cst.RightCurlyBrace,
        *(op for base in (cst.BaseBinaryOp, cst.BaseBooleanOp, cst.BaseCompOp, cst.BaseUnaryOp, cst.BaseAugOp) for op in base.__subclasses__()),
    }
)
SKIPPED: frozenset[type] = TRIVIA | {type(None), cst.MaybeSentinel}  # and the values of fields left unset
# Nodes with no children but trivia (tests/test_traversal.py checks it): a traversal whose visitors
# have no method for one may pass it by. Names are over a third of the nodes `walk` visits.
LEAVES: frozenset[type[cst.CSTNode]] = frozenset(
    {cst.Name, cst.Integer, cst.Float, cst.Imaginary, cst.SimpleString, cst.Ellipsis, cst.Pass, cst.Break, cst.Continue}
)


_DISPATCH_VISIT, _DISPATCH_LEAVE = cst.CSTVisitor.on_visit, cst.CSTVisitor.on_leave


def node_types(*bases: type[cst.CSTNode]) -> frozenset[type[cst.CSTNode]]:
    """The node classes deriving from `bases`, for `type(node) in ...` where code asks it of most
    nodes: `isinstance` against LibCST's abstract classes (their metaclass is ABCMeta) runs Python
    code for every check that fails."""
    found: set[type[cst.CSTNode]] = set()
    waiting = list(bases)
    while waiting:
        node_type = waiting.pop()
        if node_type not in found:
            found.add(node_type)
            waiting.extend(node_type.__subclasses__())
    return frozenset(found)


class Visitor(Protocol):
    def on_visit(self, node: cst.CSTNode) -> bool: ...

    def on_leave(self, original_node: cst.CSTNode) -> None: ...


def children_fields(node_type: type[cst.CSTNode]) -> tuple[str, ...]:
    """The fields holding child nodes, in visiting order, read from the class's own visiting code
    (some visit a field only when it is set, so one instance need not show them all)."""
    order = _ORDER.get(node_type)
    if order is None:
        source = inspect.getsource(node_type._visit_and_replace_children)
        order = _ORDER[node_type] = tuple(dict.fromkeys(_VISITED_FIELD.findall(source)))
    return order


def walk(node: cst.CSTNode, visitor: Visitor) -> None:
    """Visit `node` and its descendants but the trivia as `node.visit(visitor)` would, without
    rebuilding them."""
    _walk(node, *_hooks(visitor))


def _walk(
    node: cst.CSTNode, on_visit: Callable[[cst.CSTNode], bool], on_leave: Callable[[cst.CSTNode], None], skipped: frozenset[type]
) -> None:
    if on_visit(node):
        fields = _ORDER.get(type(node))
        for name in children_fields(type(node)) if fields is None else fields:
            value = getattr(node, name)
            if type(value) is tuple or type(value) is list:
                for child in value:
                    if type(child) not in skipped:
                        _walk(child, on_visit, on_leave, skipped)
            elif type(value) not in skipped:
                _walk(value, on_visit, on_leave, skipped)
    on_leave(node)


def _hooks(visitor: Visitor) -> tuple[Callable[[cst.CSTNode], bool], Callable[[cst.CSTNode], None], frozenset[type]]:
    """The visitor's `on_visit` and `on_leave`, and the node types passed by; where the hooks are
    LibCST's, which format and look up a method name at every node, the same dispatch with each
    node type's methods looked up once per visitor class, none run where it is `CSTVisitor`'s own
    (which does nothing), and the leaves it has no method of its own for passed by (as
    `BatchedVisitor.traverse` does: nothing would run at them)."""
    kind = type(visitor)
    if kind.on_visit is not _DISPATCH_VISIT or kind.on_leave is not _DISPATCH_LEAVE:
        return visitor.on_visit, visitor.on_leave, SKIPPED
    dispatch = _DISPATCH.get(kind)
    if dispatch is None:
        dispatch = _DISPATCH[kind] = _Dispatch(kind)
    visits, leaves = dispatch.visits, dispatch.leaves

    def on_visit(node: cst.CSTNode) -> bool:
        node_type = type(node)
        method = visits[node_type] if node_type in visits else dispatch.method(kind, "visit_", node_type)
        return method is None or method(visitor, node) is not False

    def on_leave(node: cst.CSTNode) -> None:
        node_type = type(node)
        method = leaves[node_type] if node_type in leaves else dispatch.method(kind, "leave_", node_type)
        if method is not None:
            method(visitor, node)

    return on_visit, on_leave, dispatch.skipped


class _Dispatch:
    """The `visit_`/`leave_` functions of one visitor class by node type (None where it has none of
    its own), and the node types its walks pass by. It holds no reference to the class, which would
    keep it alive as a key of `_DISPATCH`."""

    def __init__(self, kind: type) -> None:
        self.visits: dict[type, Callable[..., object] | None] = {}
        self.leaves: dict[type, Callable[..., object] | None] = {}
        self.skipped = SKIPPED | {leaf for leaf in LEAVES if self.method(kind, "visit_", leaf) is None and self.method(kind, "leave_", leaf) is None}

    def method(self, kind: type, prefix: str, node_type: type) -> Callable[..., object] | None:
        name = prefix + node_type.__name__
        found = getattr(kind, name, None)
        if found is getattr(cst.CSTVisitor, name, None):
            found = None  # CSTVisitor's own, which does nothing
        (self.visits if prefix == "visit_" else self.leaves)[node_type] = found
        return found


# By visitor class; weakly, since some classes are made anew for each walk (`calls_in`).
_DISPATCH: WeakKeyDictionary[type, _Dispatch] = WeakKeyDictionary()


def calls_in(node: cst.CSTNode) -> list[cst.Call]:
    """Every call under `node` (itself included), in source order."""
    calls: list[cst.Call] = []

    class Collect(cst.CSTVisitor):
        def visit_Call(self, call: cst.Call) -> None:
            calls.append(call)

    walk(node, Collect())
    return calls


def names_in(node: cst.CSTNode) -> set[str]:
    """Every name under `node` (itself included): variables, and the attribute names of `a.b`."""
    collect = _Names()
    walk(node, collect)
    return collect.names


class _Names(cst.CSTVisitor):
    def __init__(self) -> None:
        self.names: set[str] = set()

    def visit_Name(self, node: cst.Name) -> None:
        self.names.add(node.value)


class OwnScopeVisitor(cst.CSTVisitor):
    """A visitor that stays in the code it is handed: nested functions, lambdas and classes run at
    another time, in a scope of their own."""

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return False

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return False

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        return False
