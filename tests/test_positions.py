"""`Positions` must give every node the range LibCST's PositionProvider gives it."""

from __future__ import annotations

import re

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper, PositionProvider

from repro_lint.core.source import LineIndex, Position
from repro_lint.facts.positions import Positions
from repro_lint.facts.traversal import walk
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
    "x = (a) + ((1)) * ( 2.0 ) - (3j) + (\n    'text'\n) + (...)\nf((b), c)\n",  # parenthesized leaves
    "",
    "# only a comment",
    *(path.read_text() for path in sorted(PACKAGE.rglob("*.py")) if path.stat().st_size > 2000),
]


@pytest.mark.parametrize("source", SOURCES, ids=lambda source: repr(source[:20]))
def test_every_node_has_the_range_libcst_gives_it(source: str) -> None:
    module = cst.parse_module(source)
    expected = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    positions = Positions(module, source)
    visitor = _Nodes()
    walk(module, visitor)
    assert visitor.nodes
    for node in visitor.nodes:
        start, end = expected[node].start, expected[node].end
        assert positions.range(node) == (Position(start.line, start.column), Position(end.line, end.column)), node
        assert positions.start(node) == Position(start.line, start.column), node


# LibCST's code generation leaves out a form feed (with the blanks before it) in the indentation of
# a statement's first line; positions stay columns of the file's own text.
FORM_FEED_SOURCES = [re.sub(r"(?m)^(?=.)", prefix, EVERY_KIND_OF_SYNTAX) for prefix in ("\f", " \f", "\f\f")] + [
    # A form feed opening a block's first line: LibCST regenerates every line of the block with it.
    re.sub(r"(?m):\n(?=[ \t]+\S)", ":\n\f", EVERY_KIND_OF_SYNTAX),
]
_DROPPED = re.compile(r"(?m)^[ \t\f]*\f")


@pytest.mark.parametrize("source", FORM_FEED_SOURCES, ids=["form feed", "blank and form feed", "two form feeds", "form feed opening a block"])
def test_ranges_are_columns_of_the_text_after_form_feeds(source: str) -> None:
    module = cst.parse_module(source)
    generated = module.code
    assert generated != source  # the case at hand: code generation lost some form feeds
    expected = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    positions = Positions(module, source)
    in_source, in_generated = LineIndex(source), LineIndex(generated)
    visitor = _Nodes()
    walk(module, visitor)
    for node in visitor.nodes:
        start, end = positions.range(node)
        text = source[in_source.offset(start) : in_source.offset(end)]
        libcst_range = expected[node]
        begin = in_generated.offset(Position(libcst_range.start.line, libcst_range.start.column))
        finish = in_generated.offset(Position(libcst_range.end.line, libcst_range.end.column))
        assert _DROPPED.sub("", text) == _DROPPED.sub("", generated[begin:finish]), node
        if isinstance(node, (cst.Name, cst.Integer, cst.SimpleString)):
            assert text == node.value
