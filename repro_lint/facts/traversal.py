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
    node type's methods looked up once, none run where it is `CSTVisitor`'s own (which does
    nothing), and the leaves it has no method of its own for passed by (as `BatchedVisitor.traverse`
    does: nothing would run at them)."""
    kind = type(visitor)
    if kind.on_visit is not _DISPATCH_VISIT or kind.on_leave is not _DISPATCH_LEAVE:
        return visitor.on_visit, visitor.on_leave, SKIPPED
    visits: dict[type[cst.CSTNode], Callable[[cst.CSTNode], object] | None] = {}
    leaves: dict[type[cst.CSTNode], Callable[[cst.CSTNode], object] | None] = {}

    def on_visit(node: cst.CSTNode) -> bool:
        kind = type(node)
        method = visits[kind] if kind in visits else visits.setdefault(kind, _own_method(visitor, f"visit_{kind.__name__}"))
        return method is None or method(node) is not False

    def on_leave(node: cst.CSTNode) -> None:
        kind = type(node)
        method = leaves[kind] if kind in leaves else leaves.setdefault(kind, _own_method(visitor, f"leave_{kind.__name__}"))
        if method is not None:
            method(node)

    unvisited = {leaf for leaf in LEAVES if _own_method(visitor, f"visit_{leaf.__name__}") is None and _own_method(visitor, f"leave_{leaf.__name__}") is None}
    return on_visit, on_leave, SKIPPED | unvisited


def _own_method(visitor: object, name: str) -> Callable[[cst.CSTNode], object] | None:
    """The visitor's method `name`; None where it has none, or only the one every `CSTVisitor` has,
    which does nothing."""
    method = getattr(type(visitor), name, None)
    return None if method is None or method is getattr(cst.CSTVisitor, name, None) else getattr(visitor, name)


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
