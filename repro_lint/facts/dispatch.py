"""Calls that choose at run time which code runs (knowledge/dispatch.json): `globals()[name](...)`,
`getattr(module, name)(...)`, `fire.Fire(main)`, `hydra.utils.instantiate(cfg)`. The project pass
cannot follow them, and judges a program that reaches one on every function of its modules."""

from __future__ import annotations

from collections.abc import Callable, Collection
from functools import cache

import libcst as cst

from repro_lint.facts.edits import argument, literal
from repro_lint.knowledge import load

QualifiedNames = Callable[[cst.BaseExpression], frozenset[str]]


@cache
def _table() -> tuple[frozenset[str], frozenset[str], frozenset[str], frozenset[str]]:
    data = load("dispatch.json")
    return tuple(frozenset(data[key]) for key in ("calls", "terminal_names", "namespaces", "attribute_getters"))  # type: ignore[return-value]


def dispatches(call: cst.Call, targets: Collection[str], qualified_names: QualifiedNames) -> bool:
    """Whether `call`, whose callee may denote any of `targets`, chooses at run time what it runs."""
    calls, terminal_names, namespaces, getters = _table()
    if any(target in calls or target.rpartition(".")[2] in terminal_names for target in targets):
        return True
    func = call.func
    if isinstance(func, cst.Subscript) and isinstance(func.value, cst.Call):
        return bool(qualified_names(func.value.func) & namespaces)
    if isinstance(func, cst.Call) and qualified_names(func.func) & getters:
        # Of an imported module or class (`getattr(models, args.arch)(...)`), by a name only known
        # when it runs; `getattr(self, ...)` picks among one object's own attributes.
        owner, name = argument(func, "o", 0), argument(func, "name", 1)
        return owner is not None and bool(qualified_names(owner.value)) and name is not None and not isinstance(literal(name.value), str)
    return False
