"""Node positions without LibCST's metadata machinery.

`MetadataWrapper.resolve(PositionProvider)` costs about 2.5x the parse itself; the same syntactic
ranges come out of one plain code generation pass with a tracking state, at about a third of a parse
(measured on torch.nn/torch.optim sources, identical ranges for every node).
"""

from __future__ import annotations

import libcst as cst
from libcst._nodes.internal import CodegenState

from repro_lint.source import Position

Range = tuple[Position, Position]


class _TrackingState(CodegenState):
    """Ranges are keyed by `id(node)`: a node's own `__hash__` is Python code, run per dict access."""

    def __init__(self, module: cst.Module) -> None:
        super().__init__(default_indent=module.default_indent, default_newline=module.default_newline)
        self.line = 1
        self.column = 0
        self.ranges: dict[int, tuple[tuple[int, int], tuple[int, int]]] = {}
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
        self.ranges.setdefault(id(node), (start, (self.line, self.column)))

    def record_syntactic_position(
        self,
        node: cst.CSTNode,
        *,
        start_node: cst.CSTNode | None = None,
        end_node: cst.CSTNode | None = None,
    ) -> _SyntacticRange:
        return _SyntacticRange(self, node, start_node, end_node)


class _SyntacticRange:
    """`record_syntactic_position` as a plain context manager: a generator-based one costs several
    times more, and it is entered for most nodes."""

    __slots__ = ("state", "node", "start_node", "end_node", "start")

    def __init__(self, state: _TrackingState, node: cst.CSTNode, start_node: cst.CSTNode | None, end_node: cst.CSTNode | None) -> None:
        self.state, self.node, self.start_node, self.end_node = state, node, start_node, end_node

    def __enter__(self) -> None:
        self.start = (self.state.line, self.state.column)

    def __exit__(self, *exception: object) -> None:
        state = self.state
        start = self.start if self.start_node is None else state.ranges[id(self.start_node)][0]
        end = (state.line, state.column) if self.end_node is None else state.ranges[id(self.end_node)][1]
        state.ranges[id(self.node)] = (start, end)


class Positions:
    """Syntactic ranges (as LibCST's PositionProvider defines them) of every node of one module."""

    def __init__(self, module: cst.Module) -> None:
        state = _TrackingState(module)
        module._codegen(state)
        self._ranges = state.ranges

    def range(self, node: cst.CSTNode) -> Range:
        (start_line, start_column), (end_line, end_column) = self._ranges[id(node)]
        return Position(start_line, start_column), Position(end_line, end_column)

    def start(self, node: cst.CSTNode) -> Position:
        return self.range(node)[0]
