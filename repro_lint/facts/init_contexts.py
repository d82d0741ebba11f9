"""Contexts that build modules without initialising their weights (randomness.json, `no_draw_contexts`).

`with torch.device("meta"): model = GPT(config)` builds a model whose parameters hold no data: the
initialisers run on nothing and draw nothing from torch's RNG. Construction in such a block is no
draw, so a seed after it is not late (REP105), and a program that builds only there and loads its
weights uses no randomness there (REP101).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import cache
from typing import Any

import libcst as cst

from repro_lint.facts.edits import argument, literal
from repro_lint.knowledge import load

QualifiedNames = Callable[[cst.BaseExpression], frozenset[str]]


@cache
def _contexts() -> tuple[dict[str, Any], ...]:
    return tuple(load("randomness.json")["no_draw_contexts"])


def initialises_nothing(item: cst.BaseExpression, qualified_names: QualifiedNames) -> bool:
    """Whether `with <item>:` builds modules without initialising their weights: a call the table
    names (`torch.device("meta")`, `fabric.init_module(empty_init=True)`, `init_empty_weights()`)."""
    if not isinstance(item, cst.Call):
        return False
    names = qualified_names(item.func)
    method = item.func.attr.value if isinstance(item.func, cst.Attribute) else None
    return any(_names_call(entry, names, method) and _given(entry, item, qualified_names) for entry in _contexts())


def _names_call(entry: dict[str, Any], names: frozenset[str], method: str | None) -> bool:
    # A method is matched on any receiver: `fabric` and `trainer` are variables whose type is unknown.
    return not names.isdisjoint(entry.get("names", ())) or (method is not None and method == entry.get("method"))


def _given(entry: dict[str, Any], call: cst.Call, qualified_names: QualifiedNames) -> bool:
    """The entry's condition on its argument, where it has one: a literal among its `values`, or a
    call the table matches itself (`init_on_device(torch.device("meta"))`). An argument that cannot be
    known (`empty_init=world_size > 1`) may initialise, and so draw."""
    if "values" not in entry:
        return True
    given = _argument(call, entry["keywords"], entry.get("position"))
    if given is None:
        return False
    return literal(given.value) in entry["values"] or initialises_nothing(given.value, qualified_names)


def _argument(call: cst.Call, keywords: Sequence[str], position: int | None) -> cst.Arg | None:
    """The argument given by any of `keywords` (`torch.device(type=...)` or `(device=...)`), or at `position`."""
    return next((found for name in keywords if (found := argument(call, name, position)) is not None), None)
