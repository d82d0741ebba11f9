"""Calls that choose at run time which code runs (knowledge/dispatch.json), and where the code they
may run lives: `globals()[name](...)` and a bare `fire.Fire()` run a function of their own module,
`getattr(models, name)(...)` a member of `models`; `hydra.utils.instantiate(cfg)` and
`construct_class_by_name(...)` anything. The project pass follows the calls into those candidates,
and judges whether a program trains on every function of its modules when the candidates are
unknown (the catalog's **trains**)."""

from __future__ import annotations

from collections.abc import Callable, Collection
from functools import cache

import libcst as cst

from repro_lint.facts.edits import argument, literal
from repro_lint.knowledge import load

QualifiedNames = Callable[[cst.BaseExpression], frozenset[str]]
# What a dispatch may run when nothing says where its candidates live.
ANYTHING = "*"


@cache
def _table() -> tuple[frozenset[str], frozenset[str], frozenset[str], frozenset[str], frozenset[str]]:
    data = load("dispatch.json")
    keys = ("calls", "terminal_names", "namespaces", "attribute_getters", "module_callers")
    return tuple(frozenset(data[key]) for key in keys)  # type: ignore[return-value]


def dispatch_scopes(call: cst.Call, targets: Collection[str], qualified_names: QualifiedNames, module: str) -> frozenset[str]:
    """Where the code `call` chooses at run time may live: qualified names of modules or classes
    whose members it may run, or ANYTHING; empty for a call that chooses nothing (`module` is the
    calling module's name; `targets`, what the callee may denote)."""
    calls, terminal_names, namespaces, getters, module_callers = _table()
    if any(target in module_callers for target in targets) and not any(arg.keyword is None for arg in call.args):
        return frozenset({module})  # `fire.Fire()`: the module's own functions, by their names on the command line
    if any(target in calls or target.rpartition(".")[2] in terminal_names for target in targets):
        return frozenset({ANYTHING})
    func = call.func
    # Asked of every call: exact types (see names.py).
    if type(func) is cst.Subscript and type(func.value) is cst.Call and qualified_names(func.value.func) & namespaces:
        return frozenset({module})
    if type(func) is cst.Call and qualified_names(func.func) & getters:
        # Of an imported module or class (`getattr(models, args.arch)(...)`), by a name only known
        # when it runs; `getattr(self, ...)` picks among one object's own attributes.
        owner, name = argument(func, "o", 0), argument(func, "name", 1)
        if owner is not None and name is not None and not isinstance(literal(name.value), str):
            return qualified_names(owner.value)
    return frozenset()
