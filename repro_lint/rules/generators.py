"""REP103: RNG objects created without a seed draw fresh OS entropy in every run."""

from __future__ import annotations

import re

import libcst as cst

from repro_lint.core.findings import Applicability, FixAvailability
from repro_lint.core.message_text import elide
from repro_lint.facts.context import NodeEdit, PendingFix, replace_node
from repro_lint.facts.edits import argument, has_star_args, literal
from repro_lint.facts.module_index import index_for
from repro_lint.facts.seed_values import DEFAULT_SEED, SEED_CONSTANT, SeedValues
from repro_lint.knowledge import load
from repro_lint.rules.base import Rule, register

_DATA = load("generators.json")
BY_ARGUMENT: dict[str, str] = _DATA["seeded_by_argument"]
BY_METHOD: dict[str, list[str]] = _DATA["seeded_by_method"]
_ALL = {**{name: None for name in BY_METHOD}, **BY_ARGUMENT}
_SHORT = frozenset(name.rpartition(".")[2] for name in _ALL)
# `torch.Generator.seed()`: seeds the generator from a nondeterministic source.
_RESEED = "seed"


@register
class UnseededGenerator(Rule):
    """`np.random.default_rng()`, `random.Random()`, `torch.Generator()` and friends without a seed, or
    (`torch.Generator`) seeded only by `.seed()`."""

    code = "REP103"
    name = "unseeded-generator"
    fix_availability = FixAvailability.SOMETIMES
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
        value, constant = SeedValues(self.context).for_fix()
        shown = created.rpartition(".")[2]
        if seed is None:
            replacement = node.with_changes(args=[cst.Arg(cst.parse_expression(value)), *node.args])
            edit = replace_node(node, replacement, self.context)
        else:
            edit = replace_node(seed.value, cst.parse_expression(value), self.context)
        edits = (edit, constant) if constant is not None else (edit,)
        self.report(
            node,
            f"`{shown}()` without a seed draws fresh OS entropy, so every run gets different numbers",
            PendingFix(Applicability.UNSAFE, f"Seed it with `{value}`", edits),
        )

    def _torch_generator(self, node: cst.Call, created: str) -> None:
        parent = self.context.ancestors[-2] if len(self.context.ancestors) > 1 else None
        if isinstance(parent, cst.Attribute) and parent.attr.value in BY_METHOD[created]:
            return
        if isinstance(parent, cst.Attribute) and parent.attr.value == _RESEED:
            self.report(
                node,
                f"`torch.Generator().{_RESEED}()` seeds from a nondeterministic source, so every run differs",
                None,
            )
            return
        value, constant = SeedValues(self.context).for_fix()
        added = (constant,) if constant is not None else ()
        target = self._assigned_to()
        if target is not None:
            if self._seeded_later(target, BY_METHOD[created]):
                return
            if reseeds := self._reseeds(target):
                # A seed name of this function is not bound in the other methods `self.g.seed()` may be in.
                # The module constant is bound in every method.
                here = self._scope(target) is self.context.scopes[-1] or value == SEED_CONSTANT
                self._reseeded(node, target, reseeds, value if here else DEFAULT_SEED, added if here else ())
                return
        chained = cst.Call(func=cst.Attribute(node, cst.Name("manual_seed")), args=[cst.Arg(cst.parse_expression(value))])
        self.report(
            node,
            "`torch.Generator()` is never seeded before use: it runs from torch's fixed default seed, not the program's",
            PendingFix(Applicability.UNSAFE, f"Chain `.manual_seed({value})`", (replace_node(node, chained, self.context), *added)),
        )

    def _reseeded(
        self, node: cst.Call, target: str, reseeds: list[tuple[cst.Call, bool]], value: str, added: tuple[NodeEdit, ...]
    ) -> None:
        """`g = torch.Generator()` seeded only by `g.seed()`, which picks a seed from a nondeterministic
        source. The fix calls `manual_seed` instead, where no code uses the seed `.seed()` returns."""
        seeded = f"{target}.manual_seed({value})"
        fix = None
        if all(statement for _, statement in reseeds):
            edits = (*(NodeEdit(call, seeded) for call, _ in reseeds), *added)
            fix = PendingFix(Applicability.UNSAFE, f"Call `{seeded}` instead of `{target}.{_RESEED}()`", edits)
        self.report(
            node,
            f"`torch.Generator()` is seeded only by `{elide(target)}.{_RESEED}()`, which picks a nondeterministic seed",
            fix,
        )

    def _scope(self, target: str) -> cst.CSTNode:
        """Where code may seed `target`: the current scope; within a class, `self.g` in any method."""
        scope = self.context.scopes[-1]
        if isinstance(scope, cst.FunctionDef) and target.startswith("self.") and len(self.context.scopes) > 1:
            scope = self.context.scopes[-2]
        return scope

    def _reseeds(self, target: str) -> list[tuple[cst.Call, bool]]:
        """The `target.seed()` calls in its scope, each with whether it is a statement of its own."""
        index, scope = index_for(self.context), self._scope(target)
        found = []
        for attribute in index.occurrences_of_attribute(_RESEED):
            call = index.parent(attribute)
            if isinstance(call, cst.Call) and call.func is attribute and index.contains(scope, call) and self.context.code_for(attribute.value) == target:
                found.append((call, isinstance(index.parent(call), cst.Expr)))
        return found

    def _assigned_to(self) -> str | None:
        """`g` in `g = torch.Generator()` (or `self.g`)."""
        statement = next((node for node in reversed(self.context.ancestors) if isinstance(node, (cst.Assign, cst.AnnAssign))), None)
        if isinstance(statement, cst.Assign) and len(statement.targets) == 1:
            return self.context.code_for(statement.targets[0].target)
        if isinstance(statement, cst.AnnAssign):
            return self.context.code_for(statement.target)
        return None

    def _seeded_later(self, target: str, methods: list[str]) -> bool:
        pattern = rf"{re.escape(target)}\s*\.\s*(?:{'|'.join(methods)})\s*\("
        return re.search(pattern, self.context.code_for(self._scope(target))) is not None

