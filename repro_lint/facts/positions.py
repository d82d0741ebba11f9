"""Node positions without LibCST's metadata machinery.

`MetadataWrapper.resolve(PositionProvider)` costs about 2.5x the parse itself; the same syntactic
ranges come out of one plain code generation pass that counts tokens, at little more than the code
generation itself (tests/test_positions.py checks every node's range against PositionProvider's).

Code generation gives back the parsed text but for one thing: LibCST drops a form feed (0x0C) in the
indentation of a statement's first line, with the blanks before it, which Python's tokenizer reads as
resetting the indentation; and where the form feed opens a block's first line, it regenerates every
line of the block with it. Positions are columns in the file's own text, as flake8 and Ruff report
them, so a line that lost (gained) such a prefix has its columns shifted back (forth) by its length.
"""

from __future__ import annotations

from itertools import accumulate
from typing import Any

import libcst as cst
from libcst._nodes.internal import CodegenState

from repro_lint.core.source import LineIndex, Position
from repro_lint.facts.traversal import TRIVIA

Range = tuple[Position, Position]

_CODEGEN = cst.CSTNode._codegen
_PARENTHESIZED = cst._nodes.expression._BaseParenthesizedNode
_PARENTHESIZE = _PARENTHESIZED._parenthesize

# LibCST ends an import's range where its `)` or `*` ends, so their ranges are kept.
_UNTRACKED = TRIVIA - {cst.RightParen, cst.ImportStar}
# Leaves whose code is their `value` inside their parentheses: over a third of the nodes tracked.
_VALUE_LEAVES = (cst.Name, cst.Integer, cst.Float, cst.Imaginary, cst.SimpleString)


class _TrackingState(CodegenState):
    """Holds, per node, how many tokens code generation had emitted before and after it; offsets,
    lines and columns are worked out only for the nodes asked about. Keyed by `id(node)`: a node's
    own `__hash__` is Python code, run per dict access."""

    def __init__(self, module: cst.Module) -> None:
        super().__init__(default_indent=module.default_indent, default_newline=module.default_newline)
        self.add_token = self.tokens.append  # type: ignore[method-assign]  # no Python frame per token
        self.ranges: dict[int, tuple[int, int]] = {}

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
        if exception[0] is not None:
            return  # the ranges inside were not all recorded: looking them up would hide the error
        state = self.state
        start = self.start if self.start_node is None else state.ranges[id(self.start_node)][0]
        end = len(state.tokens) if self.end_node is None else state.ranges[id(self.end_node)][1]
        state.ranges[id(self.node)] = (start, end)


class _Parenthesized(_SyntacticRange):
    """LibCST's `_parenthesize` (an expression's parentheses around its syntactic range) as a plain
    context manager: the generator-based one is entered for every expression."""

    __slots__ = ()

    def __enter__(self) -> None:
        for lpar in self.node.lpar:  # type: ignore[attr-defined]
            lpar._codegen(self.state)
        self.start = len(self.state.tokens)

    def __exit__(self, *exception: object) -> None:
        if exception[0] is not None:
            return
        super().__exit__(*exception)
        for rpar in self.node.rpar:  # type: ignore[attr-defined]
            rpar._codegen(self.state)


def _parenthesize(node: cst.CSTNode, state: _TrackingState) -> _Parenthesized:
    return _Parenthesized(state, node, None, None)


def _tracked_codegen(node: cst.CSTNode, state: _TrackingState, **kwargs: Any) -> None:
    """`CSTNode._codegen` recording the node's range itself, instead of through the state's
    `before_codegen` and `after_codegen` hooks: two Python calls fewer per node."""
    start = len(state.tokens)
    node._codegen_impl(state, **kwargs)
    # A syntactic position recorded inside the node wins over the whitespace-inclusive one.
    state.ranges.setdefault(id(node), (start, len(state.tokens)))


def _leaf_codegen(node: cst.Name, state: _TrackingState, **kwargs: Any) -> None:
    """`_tracked_codegen` of a value leaf: without parentheses, as nearly all are, its range is its
    one token, with no context manager entered."""
    if node.lpar or node.rpar:
        _tracked_codegen(node, state, **kwargs)
        return
    start = len(state.tokens)
    state.tokens.append(node.value)
    state.ranges[id(node)] = (start, start + 1)


class Positions:
    """Syntactic ranges (as LibCST's PositionProvider defines them) of every node of one module but
    the trivia, which no rule reports or edits (see traversal.py)."""

    def __init__(self, module: cst.Module, source: str) -> None:
        state = _TrackingState(module)
        # For the length of this code generation: every node class inherits `_codegen` from CSTNode,
        # which here records the node's range; a trivia node's code is generated without recording
        # it (two thirds of the nodes), a value leaf's directly; parentheses use the plain context manager.
        cst.CSTNode._codegen = _tracked_codegen  # type: ignore[method-assign]
        for trivia in _UNTRACKED:
            trivia._codegen = trivia._codegen_impl  # type: ignore[method-assign]
        for leaf in _VALUE_LEAVES:
            leaf._codegen = _leaf_codegen  # type: ignore[assignment]
        _PARENTHESIZED._parenthesize = _parenthesize  # type: ignore[method-assign]
        try:
            module._codegen(state)
        finally:
            cst.CSTNode._codegen = _CODEGEN  # type: ignore[method-assign]
            for untracked in (*_UNTRACKED, *_VALUE_LEAVES):
                del untracked._codegen
            _PARENTHESIZED._parenthesize = _PARENTHESIZE  # type: ignore[method-assign]
        self._ranges = state.ranges
        self._tokens = state.tokens
        self._source = source
        self._offsets: list[int] | None = None
        self._lines: LineIndex | None = None
        self._dropped: dict[int, int] = {}

    def _position(self, token: int, starts: bool) -> Position:
        """Where token `token` starts (`starts`), or where the token before it ends: at the start of a
        line that lost a prefix, the one lies after the prefix, the other before it."""
        if self._offsets is None or self._lines is None:
            self._offsets = list(accumulate(map(len, self._tokens), initial=0))
            generated = "".join(self._tokens)
            self._lines = LineIndex(generated)
            self._dropped = _dropped_prefixes(self._source, generated)
            self._source = ""  # not needed any more, and a file's text is large
        position = self._lines.position(self._offsets[token])
        dropped = self._dropped.get(position.line, 0)
        if dropped and (position.column or starts):
            return Position(position.line, max(0, position.column + dropped))
        return position

    def range(self, node: cst.CSTNode) -> Range:
        start, end = self._ranges[id(node)]
        return self._position(start, True), self._position(end, start == end)

    def start(self, node: cst.CSTNode) -> Position:
        # Asked of every call and function the facts record (their lines): their ends are not.
        return self._position(self._ranges[id(node)][0], True)


def _dropped_prefixes(source: str, generated: str) -> dict[int, int]:
    """For each line whose leading blanks and form feeds code generation left out: the number of
    characters left out; negative where it added them (a block whose first line's indentation holds
    a form feed is regenerated with that indentation on every line)."""
    if source == generated:
        return {}
    dropped = {}
    for line, (original, kept) in enumerate(zip(source.split("\n"), generated.split("\n")), start=1):
        shorter, longer = sorted((original, kept), key=len)
        prefix = longer[: len(longer) - len(shorter)]
        if prefix and longer.endswith(shorter) and "\f" in prefix and not prefix.strip(" \t\f"):
            dropped[line] = len(original) - len(kept)
    return dropped
