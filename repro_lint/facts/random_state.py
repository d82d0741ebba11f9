"""Passing `random_state=` to scikit-learn and pandas calls that draw from numpy's global RNG."""

from __future__ import annotations

import libcst as cst

from repro_lint.facts.context import FileContext, NodeEdit
from repro_lint.facts.edits import literal, with_keyword
from repro_lint.facts.module_index import replace_in_place
from repro_lint.facts.seed_values import SeedValues


def missing_random_state(
    context: FileContext, call: cst.Call, given: cst.Arg | None
) -> tuple[tuple[NodeEdit, ...], str, str] | None:
    """For a call that needs a `random_state`: the edits that supply one (a seed in scope, else the
    module's seed constant), how the call falls short, and the seed used. None when a value is
    already given."""
    if given is not None and literal(given.value) is not None:
        return None
    seed, constant = SeedValues(context).for_fix()
    added = (constant,) if constant is not None else ()
    if given is None:
        return (replace_in_place(context, call, with_keyword(call, "random_state", seed)), *added), "without `random_state`", seed
    return (NodeEdit(given.value, seed), *added), "with `random_state=None`", seed
