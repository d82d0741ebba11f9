"""A launch script's syntax tree, read by tree-sitter-bash, with its comments and syntax errors.

Why tree-sitter-bash and not bashlex: on the 463 `.sh` files of the repositories repro-lint is
measured on, bashlex (pure Python, a port of bash's own grammar from 2014) raised on 145 of them
(31%: no `$((...))`, no `[[ ... ]]`, no `case` patterns, no array assignments after `export`), and
raising loses the whole file; it took 0.97 s for all of them. tree-sitter-bash read them in 0.06 s,
recovers from an error by marking it in the tree and reading on, and is kept by the tree-sitter
organisation, which ships binary wheels for Linux, macOS and Windows (abi3, one per platform).

Its known misreadings are handled here, before anyone reads the tree, without moving an offset:

- a newline after several assignments or after a pipeline of three commands sometimes does not end
  the command (tree-sitter-bash issues 228, 342 and 347): a command that spans an unescaped newline
  between two of its words is split there by writing `;` over the blank that ends its first part;
- a line continuation at the very end of the file (`--last-flag \\` and nothing after) is an error
  to it, where bash just ends the command: the backslash is read as a blank.

What is still an error (a placeholder such as `<PATH>`, an unclosed quote, zsh syntax) is reported
by the scanner, and only the commands the error is part of are left out (see `Parsed.broken`).
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache

import tree_sitter
import tree_sitter_bash

Node = tree_sitter.Node

_TRAILING_CONTINUATION = re.compile(rb"\\(?:\r?\n[ \t\r\n]*)?\Z")
_ENDS_COMMAND = re.compile(r"(?<!\\)(?<!\\\r)\n|[;&|]")
_UNESCAPED_NEWLINE = re.compile(rb"(?<!\\)(?<!\\\r)\n")
_MAX_REPAIRS = 16  # rounds of the newline repair; each round re-parses once


@cache
def _parser() -> tree_sitter.Parser:
    return tree_sitter.Parser(tree_sitter.Language(tree_sitter_bash.language()))


@dataclass(frozen=True)
class SyntaxProblem:
    offset: int
    message: str


class Parsed:
    """The tree of a script and what it says about the script's text, in character offsets."""

    def __init__(self, text: str, base: int = 0) -> None:
        self.text = text
        self.base = base  # where `text` starts in the file (a here-document read as a script)
        self.source = text.encode("utf-8", "surrogatepass")
        self.root = _parse(self.source)
        # Character offset of each byte offset, for scripts that are not all ASCII.
        self._chars: list[int] | None = None if text.isascii() else _char_offsets(text)
        self.errors = [self._problem(node) for node in _errors(self.root)]
        self._error_offsets = sorted(problem.offset for problem in self.errors)

    def start(self, node: Node) -> int:
        return self.base + (node.start_byte if self._chars is None else self._chars[node.start_byte])

    def end(self, node: Node) -> int:
        return self.base + (node.end_byte if self._chars is None else self._chars[node.end_byte])

    def text_of(self, node: Node) -> str:
        return self.source[node.start_byte : node.end_byte].decode("utf-8", "surrogatepass")

    def comments(self) -> Iterator[tuple[int, int]]:
        """Where each comment starts and ends; here-document bodies hold none."""
        stack = [self.root]
        while stack:
            node = stack.pop()
            if node.type == "comment":
                yield self.start(node), self.end(node)
            elif node.type != "heredoc_body":
                stack.extend(node.children)

    def broken(self, node: Node) -> bool:
        """Whether a syntax error is inside this command or interrupts it: bash would not run it.
        An error interrupts a command when it follows on the same line (`cmd "unclosed`)."""
        start, end = self.start(node), self.end(node)
        following = bisect.bisect_left(self._error_offsets, start)
        if following == len(self._error_offsets):
            return False
        offset = self._error_offsets[following]
        return offset < end or not _ENDS_COMMAND.search(self.text[end - self.base : offset - self.base])

    def _problem(self, node: Node) -> SyntaxProblem:
        if node.is_missing:
            return SyntaxProblem(self.start(node), f"expected `{node.type}`")
        shown = self.text_of(node).strip().split("\n")[0][:40]
        return SyntaxProblem(self.start(node), f"unexpected `{shown}`" if shown else "unexpected end of file")


def parses(text: str) -> bool:
    return not Parsed(text).errors


def _parse(source: bytes) -> tree_sitter.Tree:
    continuation = _TRAILING_CONTINUATION.search(source)
    if continuation is not None:
        source = source[: continuation.start()] + b" " + source[continuation.start() + 1 :]
    tree = _parser().parse(source)
    for _ in range(_MAX_REPAIRS):
        splits = list(_unended_commands(tree.root_node, source))
        if not splits:
            break
        patched = bytearray(source)
        for at in splits:
            patched[at] = ord(";")
        source = bytes(patched)
        tree = _parser().parse(source)
    return tree.root_node


def _unended_commands(root: Node, source: bytes) -> Iterator[int]:
    """The byte at which each command the parser ran on past a newline should have ended."""
    stack = [root]
    while stack:
        node = stack.pop()
        if node.type == "command":
            words = [child for child in node.children if child.type != "comment"]
            for left, right in zip(words, words[1:]):
                gap = source[left.end_byte : right.start_byte]
                if _UNESCAPED_NEWLINE.search(gap) and left.end_byte < len(source):
                    yield left.end_byte
                    break
        stack.extend(node.children)


def _errors(root: Node) -> Iterator[Node]:
    """The outermost error and missing-token nodes, in order. What is inside `${...}` is not one:
    bash reads it only when it runs (`${A:$B+1}` is valid, tree-sitter-bash does not know it)."""
    stack = [root]
    found = []
    while stack:
        node = stack.pop()
        if node.is_error or node.is_missing:
            found.append(node)
        elif node.has_error and node.type != "expansion":
            stack.extend(node.children)
    return iter(sorted(found, key=lambda node: node.start_byte))


def _char_offsets(text: str) -> list[int]:
    offsets = []
    for index, char in enumerate(text):
        offsets.extend([index] * len(char.encode("utf-8", "surrogatepass")))
    offsets.append(len(text))
    return offsets
