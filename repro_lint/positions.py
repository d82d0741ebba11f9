"""Node positions without LibCST's metadata machinery.

`MetadataWrapper.resolve(PositionProvider)` costs about 2.5x the parse itself; the same syntactic
ranges come out of one plain code generation pass that counts tokens, at little more than the code
generation itself (tests/test_positions.py checks every node's range against PositionProvider's).
"""

from __future__ import annotations

from itertools import accumulate

import libcst as cst
from libcst._nodes.internal import CodegenState

from repro_lint.source import LineIndex, Position
from repro_lint.traversal import TRIVIA

Range = tuple[Position, Position]

# LibCST ends an import's range where its `)` or `*` ends, so their ranges are kept.
_UNTRACKED = TRIVIA - {cst.RightParen, cst.ImportStar}


class _TrackingState(CodegenState):
    """Records, per node, how many tokens code generation had emitted before and after it; offsets,
    lines and columns are worked out only for the nodes asked about. Keyed by `id(node)`: a node's
    own `__hash__` is Python code, run per dict access."""

    def __init__(self, module: cst.Module) -> None:
        super().__init__(default_indent=module.default_indent, default_newline=module.default_newline)
        self.add_token = self.tokens.append  # type: ignore[method-assign]  # no Python frame per token
        self.ranges: dict[int, tuple[int, int]] = {}
        self._stack: list[int] = []

    def before_codegen(self, node: cst.CSTNode) -> None:
        self._stack.append(len(self.tokens))

    def after_codegen(self, node: cst.CSTNode) -> None:
        start = self._stack.pop()
        # A syntactic position recorded inside the node wins over the whitespace-inclusive one.
        self.ranges.setdefault(id(node), (start, len(self.tokens)))

    def pop_trailing_newline(self) -> None:
        """Kept: ranges count tokens, and LibCST's positions count that newline too."""

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
        self.start = len(self.state.tokens)

    def __exit__(self, *exception: object) -> None:
        state = self.state
        start = self.start if self.start_node is None else state.ranges[id(self.start_node)][0]
        end = len(state.tokens) if self.end_node is None else state.ranges[id(self.end_node)][1]
        state.ranges[id(self.node)] = (start, end)


class Positions:
    """Syntactic ranges (as LibCST's PositionProvider defines them) of every node of one module but
    the trivia, which no rule reports or edits (see traversal.py)."""

    def __init__(self, module: cst.Module) -> None:
        state = _TrackingState(module)
        # A trivia node's code is generated without the hooks recording its range: two thirds of the
        # nodes, each costing two Python calls. Every node class inherits `_codegen` from CSTNode.
        for trivia in _UNTRACKED:
            trivia._codegen = trivia._codegen_impl  # type: ignore[method-assign]
        try:
            module._codegen(state)
        finally:
            for trivia in _UNTRACKED:
                del trivia._codegen
        self._ranges = state.ranges
        self._tokens = state.tokens
        self._offsets: list[int] | None = None
        self._lines: LineIndex | None = None

    def _position(self, token: int) -> Position:
        if self._offsets is None or self._lines is None:
            self._offsets = list(accumulate(map(len, self._tokens), initial=0))
            self._lines = LineIndex("".join(self._tokens))
        return self._lines.position(self._offsets[token])

    def range(self, node: cst.CSTNode) -> Range:
        start, end = self._ranges[id(node)]
        return self._position(start), self._position(end)

    def start(self, node: cst.CSTNode) -> Position:
        return self.range(node)[0]
