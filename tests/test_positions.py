"""`Positions` must give every node the range LibCST's PositionProvider gives it."""

from __future__ import annotations

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper, PositionProvider

from repro_lint.positions import Positions
from repro_lint.source import Position
from repro_lint.traversal import walk
from tests.test_traversal import EVERY_KIND_OF_SYNTAX, PACKAGE


class _Nodes(cst.CSTVisitor):
    def __init__(self) -> None:
        super().__init__()
        self.nodes: list[cst.CSTNode] = []

    def on_visit(self, node: cst.CSTNode) -> bool:
        self.nodes.append(node)
        return True


SOURCES = [
    EVERY_KIND_OF_SYNTAX,
    EVERY_KIND_OF_SYNTAX.rstrip("\n"),  # no newline at the end: LibCST drops the last token
    EVERY_KIND_OF_SYNTAX.replace("\n", "\r\n"),
    "if x:\n\ty = 1\n",  # a tab indent
    "",
    "# only a comment",
    *(path.read_text() for path in sorted(PACKAGE.glob("*.py")) if path.stat().st_size > 2000),
]


@pytest.mark.parametrize("source", SOURCES, ids=lambda source: repr(source[:20]))
def test_every_node_has_the_range_libcst_gives_it(source: str) -> None:
    module = cst.parse_module(source)
    expected = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    positions = Positions(module)
    visitor = _Nodes()
    walk(module, visitor)
    assert visitor.nodes
    for node in visitor.nodes:
        start, end = expected[node].start, expected[node].end
        assert positions.range(node) == (Position(start.line, start.column), Position(end.line, end.column)), node
