"""REP2xx: splits and shuffles that draw from a global RNG instead of a stream of their own."""

from __future__ import annotations

import re

import libcst as cst

from repro_lint.core.findings import Applicability, FixAvailability
from repro_lint.facts.context import NodeEdit, PendingFix, import_statement_edit, replace_node
from repro_lint.facts.edits import argument, has_star_args, literal, with_keyword
from repro_lint.facts.random_state import missing_random_state
from repro_lint.facts.seed_values import SeedValues
from repro_lint.knowledge import load
from repro_lint.rules.base import Rule, register

RANDOM_SPLIT = frozenset({"torch.utils.data.random_split", "torch.utils.data.dataset.random_split"})


@register
class RandomSplitMissingGenerator(Rule):
    """`random_split` without `generator=` draws from torch's global RNG, so the split changes whenever
    anything before it (model initialisation, another split) consumes a different number of values."""

    code = "REP203"
    name = "random-split-missing-generator"
    fix_availability = FixAvailability.ALWAYS
    required_text = ("random_split",)

    def visit_Call(self, node: cst.Call) -> None:
        if self.context.callee(node, RANDOM_SPLIT, ("random_split",)) is None:
            return
        given = argument(node, "generator", 2)
        # `generator=None` is the default: the split still draws from the global RNG.
        if has_star_args(node) or (given is not None and literal(given.value) is not None):
            return
        torch, import_edit = import_statement_edit(self.context, "torch")
        seed, constant = SeedValues(self.context).for_fix()
        generator = f"{torch}.Generator().manual_seed({seed})"
        if given is None:
            edits = [replace_node(node, with_keyword(node, "generator", generator), self.context)]
        else:
            edits = [NodeEdit(given.value, generator)]
        edits.extend(edit for edit in (import_edit, constant) if edit is not None)
        self.report(
            node,
            "`random_split` without `generator` draws from torch's global RNG: earlier draws change the split",
            PendingFix(Applicability.SAFE, f"Add `generator={generator}`", tuple(edits)),
        )


def _splitters() -> dict[str, dict[str, object]]:
    data = load("sklearn_splitters.json")
    table = {f"{module}.{name}": entry for name, entry in data["entries"].items() for module in data["modules"]}
    table.update(data["utilities"])
    return table


SPLITTERS = _splitters()
_SHORT_NAMES = frozenset(name.rpartition(".")[2] for name in SPLITTERS)
# pandas `DataFrame.sample(n=None, frac=None, replace=False, weights=None, random_state=None, ...)`.
_PANDAS_RANDOM_STATE_POSITION = 4


@register
class SklearnMissingRandomState(Rule):
    """A scikit-learn split or shuffle without `random_state` draws from numpy's global RNG: it changes
    whenever other code draws from numpy first, and a global `np.random.seed` does not isolate it."""

    code = "REP204"
    name = "sklearn-missing-random-state"
    fix_availability = FixAvailability.ALWAYS
    required_text = (*sorted(_SHORT_NAMES), ".sample(")

    def visit_Call(self, node: cst.Call) -> None:
        if isinstance(node.func, cst.Attribute) and node.func.attr.value == "sample":
            self._pandas_sample(node)
            return
        qualified = self.context.callee(node, SPLITTERS, _SHORT_NAMES)
        if qualified is None or has_star_args(node):
            return
        short = qualified.rpartition(".")[2]
        entry = SPLITTERS[qualified]
        if not self._shuffles(node, entry):
            return
        random_state = argument(node, "random_state", entry["random_state_position"])
        self._report(node, short, random_state)

    def _pandas_sample(self, node: cst.Call) -> None:
        """`df.sample(frac=...)`, or `df.sample(n=...)` in a module that imports pandas: the receiver's
        type is unknown, so the keywords pandas uses (and `random.sample` does not) identify the call."""
        assert isinstance(node.func, cst.Attribute)
        if has_star_args(node) or self.context.qualified_names(node.func.value):
            return  # `random.sample(...)`, `np.random...`: a module's function, not a DataFrame's method
        if argument(node, "frac") is None and not (argument(node, "n") is not None and self._imports_pandas()):
            return
        self._report(node, "DataFrame.sample", argument(node, "random_state", _PANDAS_RANDOM_STATE_POSITION))

    def _imports_pandas(self) -> bool:
        return re.search(r"^[ \t]*(import|from)[ \t]+pandas\b", self.context.source, re.MULTILINE) is not None

    def _report(self, node: cst.Call, short: str, random_state: cst.Arg | None) -> None:
        missing = missing_random_state(self.context, node, random_state)
        if missing is None:
            return
        edits, problem, seed = missing
        self.report(
            node,
            f"`{short}` {problem} draws from numpy's global RNG: earlier draws change the "
            f"{'sample' if short == 'DataFrame.sample' else 'split'}",
            PendingFix(Applicability.SAFE, f"Pass `random_state={seed}`", edits),
        )

    @staticmethod
    def _shuffles(node: cst.Call, entry: dict[str, object]) -> bool:
        if entry["shuffles"] == "always":
            return True
        shuffle = argument(node, "shuffle", entry["shuffle_position"])  # type: ignore[arg-type]
        if entry["shuffles"] == "unless-shuffle-false":
            return shuffle is None or literal(shuffle.value) is True
        return shuffle is not None and literal(shuffle.value) is True
