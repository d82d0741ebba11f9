"""The closure of a graph given as a mapping: shared by the project pass (callers of functions,
importers of modules) and by the engine's cut of a project (engine/closure.py), which must not load
the program model."""

from __future__ import annotations

from collections.abc import Iterable, Mapping


def closure(start: Iterable[str], edges: Mapping[str, Iterable[str]]) -> frozenset[str]:
    """`start` and all that `edges` lead to from it, transitively (given each name's callers, the
    names reaching `start`; given each name's callees, the names it reaches)."""
    seen = set(start)
    stack = list(seen)
    while stack:
        for other in edges.get(stack.pop(), ()):
            if other not in seen:
                seen.add(other)
                stack.append(other)
    return frozenset(seen)
