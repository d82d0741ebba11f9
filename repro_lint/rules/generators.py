"""REP103: RNG objects created without a seed draw fresh OS entropy in every run."""

from __future__ import annotations

import re

import libcst as cst

from repro_lint.context import PendingFix
from repro_lint.edits import argument, has_star_args, literal, replace_node
from repro_lint.knowledge import load
from repro_lint.rules.base import Applicability, FixAvailability, Rule, register
from repro_lint.seed_values import SeedValues

_DATA = load("generators.json")
BY_ARGUMENT: dict[str, str] = _DATA["seeded_by_argument"]
BY_METHOD: dict[str, list[str]] = _DATA["seeded_by_method"]
_ALL = {**{name: None for name in BY_METHOD}, **BY_ARGUMENT}
_SHORT = frozenset(name.rpartition(".")[2] for name in _ALL)


@register
class UnseededGenerator(Rule):
    """`np.random.default_rng()`, `random.Random()`, `torch.Generator()` and friends without a seed."""

    code = "REP103"
    name = "unseeded-generator"
    fix_availability = FixAvailability.ALWAYS
    required_text = ("default_rng", "RandomState", "Random(", "Generator", "PCG64", "MT19937", "Philox", "SFC64")

    def visit_Call(self, node: cst.Call) -> None:
        created = self.context.callee(node, _ALL, _SHORT)
        if created is None or has_star_args(node):
            return
        if created in BY_METHOD:
            self._torch_generator(node, created)
            return
        seed = argument(node, BY_ARGUMENT[created], 0)
        if seed is not None and literal(seed.value) is not None:
            return
        value = SeedValues(self.context).expression()
        shown = created.rpartition(".")[2]
        if seed is None:
            replacement = node.with_changes(args=[cst.Arg(cst.parse_expression(value)), *node.args])
            edit = replace_node(node, replacement, self.context)
        else:
            edit = replace_node(seed.value, cst.parse_expression(value), self.context)
        self.report(
            node,
            f"`{shown}()` without a seed draws fresh OS entropy, so every run gets different numbers; pass a seed "
            f"(`{shown}({value})`)",
            PendingFix(Applicability.UNSAFE, f"Seed it with `{value}`", (edit,)),
        )

    def _torch_generator(self, node: cst.Call, created: str) -> None:
        parent = self.context.ancestors[-2] if len(self.context.ancestors) > 1 else None
        if isinstance(parent, cst.Attribute) and parent.attr.value in BY_METHOD[created]:
            return
        target = self._assigned_to()
        if target is not None and self._seeded_later(target, BY_METHOD[created]):
            return
        value = SeedValues(self.context).expression()
        chained = cst.Call(func=cst.Attribute(node, cst.Name("manual_seed")), args=[cst.Arg(cst.parse_expression(value))])
        self.report(
            node,
            "`torch.Generator()` is never seeded before use: it runs from torch's fixed default seed, the same for "
            f"every unseeded generator, so the program's own seed never reaches it; call `.manual_seed({value})` on it",
            PendingFix(Applicability.UNSAFE, f"Chain `.manual_seed({value})`", (replace_node(node, chained, self.context),)),
        )

    def _assigned_to(self) -> str | None:
        """`g` in `g = torch.Generator()` (or `self.g`)."""
        statement = next((node for node in reversed(self.context.ancestors) if isinstance(node, (cst.Assign, cst.AnnAssign))), None)
        if isinstance(statement, cst.Assign) and len(statement.targets) == 1:
            return self.context.code_for(statement.targets[0].target)
        if isinstance(statement, cst.AnnAssign):
            return self.context.code_for(statement.target)
        return None

    def _seeded_later(self, target: str, methods: list[str]) -> bool:
        scope = self.context.scopes[-1]
        # Within a class, `self.g` may be seeded in another method.
        if isinstance(scope, cst.FunctionDef) and target.startswith("self.") and len(self.context.scopes) > 1:
            scope = self.context.scopes[-2]
        pattern = rf"{re.escape(target)}\s*\.\s*(?:{'|'.join(methods)})\s*\("
        return re.search(pattern, self.context.code_for(scope)) is not None
