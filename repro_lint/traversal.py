"""A read-only traversal of LibCST trees, for visitors that only look.

`node.visit(visitor)` rebuilds and revalidates every node it passes, even for a `CSTVisitor` that
changes nothing: on transformers' sources that rebuilding, and the abstract-class `isinstance`
checks it makes, cost more than the parse. `walk` calls the same `on_visit`/`on_leave` hooks on the
same nodes in the same order, reading each node's children in the order its own
`_visit_and_replace_children` visits them.
"""

from __future__ import annotations

import inspect
import re
from typing import Protocol

import libcst as cst

_VISITED_FIELD = re.compile(r"""visit_\w+\(\s*self,\s*["'](\w+)["']""")
_ORDER: dict[type[cst.CSTNode], tuple[str, ...]] = {}


class Visitor(Protocol):
    def on_visit(self, node: cst.CSTNode) -> bool: ...

    def on_leave(self, original_node: cst.CSTNode) -> None: ...


def _children_fields(node_type: type[cst.CSTNode]) -> tuple[str, ...]:
    """The fields holding child nodes, in visiting order, read from the class's own visiting code
    (some visit a field only when it is set, so one instance need not show them all)."""
    source = inspect.getsource(node_type._visit_and_replace_children)
    order = _ORDER[node_type] = tuple(dict.fromkeys(_VISITED_FIELD.findall(source)))
    return order


def walk(node: cst.CSTNode, visitor: Visitor) -> None:
    """Visit `node` and its descendants as `node.visit(visitor)` would, without rebuilding them."""
    if visitor.on_visit(node):
        fields = _ORDER.get(type(node))
        for name in _children_fields(type(node)) if fields is None else fields:
            value = getattr(node, name)
            if type(value) is tuple or type(value) is list:
                for child in value:
                    walk(child, visitor)
            elif value is not None and value is not cst.MaybeSentinel.DEFAULT:
                walk(value, visitor)
    visitor.on_leave(node)
