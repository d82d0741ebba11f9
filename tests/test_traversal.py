"""`walk` must be indistinguishable from LibCST's own `visit` for a read-only visitor, but for the
trivia it skips."""

from __future__ import annotations

from pathlib import Path

import libcst as cst
import pytest

from repro_lint.facts.traversal import TRIVIA, walk

PACKAGE = Path(__file__).parent.parent / "repro_lint"

EVERY_KIND_OF_SYNTAX = '''
"""Docstring."""
from __future__ import annotations
import os.path as osp, sys
from . import sibling
from ..pkg import (a as b, c,)
from x import *

@decorator(arg)
@other
async def f[T: int, *Ts, **P](a, /, b: int = 1, *args: T, c=2, **kwargs) -> list[T]:
    global g
    x: int = await thing
    async with open(p) as fh, other() as (o, q):
        async for i in aiter():
            yield i
    return [y async for y in z if y] or {k: v for k, v in d.items()} or {s for s in t} or (g for g in h)

class C[T](Base, metaclass=Meta):
    attr = 1
    def m(self):
        nonlocal_ = lambda q, *r, s=1, **t: q
        def inner():
            nonlocal nonlocal_
        return f"{self.attr!r:>{width}.{precision}} {x=} {'nested'}" + rb"raw" + "implicit" "concat"

type Alias[K] = dict[K, int]

try:
    pass
except* (ValueError, TypeError) as group:
    raise RuntimeError("x") from group
else:
    del a[1:2, ::3], b.c
finally:
    assert x, "message"

match command.split():
    case [action, *rest] if rest:
        pass
    case {"key": value, **others}:
        pass
    case Point(x=0, y=_) | Point(1, 2) as p:
        pass
    case str() | None | -1 | 1+2j | "s" "t":
        pass

while (n := n - 1) > 0:
    x += 1; y <<= 2
    if not a and b or c is not d in e:
        continue
    elif ~x ** -y // z @ w:
        break
else:
    print(*args, **kwargs, sep="")
with (open(a) as x, open(b)):
    x[...] = y if z else w
for i, (j, k) in enumerate(pairs):
    *first, last = i
'''


class Recorder(cst.CSTVisitor):
    def __init__(self) -> None:
        super().__init__()
        self.events: list[tuple[str, int]] = []
        self.inside_trivia: list[cst.CSTNode] = []
        self.below_trivia: list[str] = []

    def on_visit(self, node: cst.CSTNode) -> bool:
        if type(node) in TRIVIA:
            self.inside_trivia.append(node)
        elif self.inside_trivia:
            self.below_trivia.append(type(node).__name__)
        else:
            self.events.append(("visit", id(node)))
        return not isinstance(node, cst.Lambda)  # a visitor may prune a subtree

    def on_leave(self, original_node: cst.CSTNode) -> None:
        if type(original_node) in TRIVIA:
            self.inside_trivia.pop()
        elif not self.inside_trivia:
            self.events.append(("leave", id(original_node)))


SOURCES = [EVERY_KIND_OF_SYNTAX, *(path.read_text() for path in sorted(PACKAGE.rglob("*.py")) if path.stat().st_size > 2000)]


@pytest.mark.parametrize("source", SOURCES, ids=lambda source: source[:20])
def test_walk_visits_the_nodes_libcst_visits_in_the_same_order_but_the_trivia(source: str) -> None:
    module = cst.parse_module(source)
    expected = Recorder()
    module.visit(expected)
    walked = Recorder()
    walk(module, walked)
    assert len(expected.events) > 50
    assert walked.events == expected.events


@pytest.mark.parametrize("source", SOURCES, ids=lambda source: source[:20])
def test_nothing_but_trivia_lies_below_trivia(source: str) -> None:
    libcst_visit = Recorder()
    cst.parse_module(source).visit(libcst_visit)
    assert libcst_visit.below_trivia == []
