"""Node positions without LibCST's metadata machinery.

`MetadataWrapper.resolve(PositionProvider)` costs about 2.5x the parse itself; the same syntactic
ranges come out of one plain code generation pass with a tracking state, at about a third of a parse
(measured on torch.nn/torch.optim sources, identical ranges for every node).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import libcst as cst
from libcst._nodes.internal import CodegenState

from repro_lint.source import Position

Range = tuple[Position, Position]


class _TrackingState(CodegenState):
    def __init__(self, module: cst.Module) -> None:
        super().__init__(default_indent=module.default_indent, default_newline=module.default_newline)
        self.line = 1
        self.column = 0
        self.ranges: dict[cst.CSTNode, tuple[tuple[int, int], tuple[int, int]]] = {}
        self._stack: list[tuple[int, int]] = []

    def add_token(self, value: str) -> None:
        self.tokens.append(value)
        newlines = value.count("\n")
        if newlines:
            self.line += newlines
            self.column = len(value) - value.rindex("\n") - 1
        else:
            self.column += len(value)

    def add_indent_tokens(self) -> None:
        self.tokens.extend(self.indent_tokens)
        self.column += sum(len(token) for token in self.indent_tokens)

    def before_codegen(self, node: cst.CSTNode) -> None:
        self._stack.append((self.line, self.column))

    def after_codegen(self, node: cst.CSTNode) -> None:
        start = self._stack.pop()
        # A syntactic position recorded inside the node wins over the whitespace-inclusive one.
        if node not in self.ranges:
            self.ranges[node] = (start, (self.line, self.column))

    @contextmanager
    def record_syntactic_position(
        self,
        node: cst.CSTNode,
        *,
        start_node: cst.CSTNode | None = None,
        end_node: cst.CSTNode | None = None,
    ) -> Iterator[None]:
        start = (self.line, self.column)
        try:
            yield
        finally:
            end = (self.line, self.column)
            if start_node is not None:
                start = self.ranges[start_node][0]
            if end_node is not None:
                end = self.ranges[end_node][1]
            self.ranges[node] = (start, end)


class Positions:
    """Syntactic ranges (as LibCST's PositionProvider defines them) of every node of one module."""

    def __init__(self, module: cst.Module) -> None:
        state = _TrackingState(module)
        module._codegen(state)
        self._ranges = state.ranges

    def range(self, node: cst.CSTNode) -> Range:
        (start_line, start_column), (end_line, end_column) = self._ranges[node]
        return Position(start_line, start_column), Position(end_line, end_column)

    def start(self, node: cst.CSTNode) -> Position:
        return self.range(node)[0]
