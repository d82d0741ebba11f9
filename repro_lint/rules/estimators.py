"""REP207: scikit-learn estimators whose fit is random, built without `random_state`."""

from __future__ import annotations

from typing import Any

import libcst as cst

from repro_lint.core.findings import Applicability, FixAvailability
from repro_lint.core.message_text import elide
from repro_lint.facts.context import PendingFix
from repro_lint.facts.edits import argument, has_star_args, keyword, literal
from repro_lint.facts.module_index import ModuleIndex, index_for
from repro_lint.facts.random_state import missing_random_state
from repro_lint.knowledge import load
from repro_lint.rules.base import Rule, register


def _estimators() -> dict[str, dict[str, Any] | None]:
    data = load("sklearn_estimators.json")["estimators"]
    return {f"{module}.{name}": condition for module, entries in data.items() for name, condition in entries.items()}


ESTIMATORS = _estimators()
_SHORT_NAMES = frozenset(name.rpartition(".")[2] for name in ESTIMATORS)
SEEDING_ENSEMBLES = frozenset(
    f"{module}.{name}" for module, names in load("sklearn_estimators.json")["seeding_ensembles"].items() for name in names
)
_ESTIMATOR_PARAMETERS = frozenset(load("sklearn_estimators.json")["estimator_parameters"])


def _deterministic(call: cst.Call, condition: dict[str, Any]) -> bool:
    """Whether `call` builds the estimator in one of the configurations its table entry says draw
    nothing (`LogisticRegression(solver="liblinear")`: the primal L2 solver). A value that cannot
    be read matches no configuration: the fit may then be random."""
    return any(
        all(_value(call, parameter, condition) in values for parameter, values in configuration.items())
        for configuration in condition.get("deterministic_when", ())
    )


def _value(call: cst.Call, parameter: str, condition: dict[str, Any]) -> object:
    """The literal value `call` gives `parameter`, its default when not given, `...` when unknown."""
    given = argument(call, parameter, condition.get("positions", {}).get(parameter))
    if given is None:
        return condition.get("defaults", {}).get(parameter, ...)
    return literal(given.value)


@register
class EstimatorMissingRandomState(Rule):
    """An estimator whose fit draws random numbers takes them from numpy's global RNG unless given
    `random_state`: the fitted model changes whenever other code draws from numpy first."""

    code = "REP207"
    name = "estimator-missing-random-state"
    fix_availability = FixAvailability.ALWAYS
    required_text = tuple(sorted(_SHORT_NAMES))

    def visit_Call(self, node: cst.Call) -> None:
        qualified = self.context.callee(node, ESTIMATORS, _SHORT_NAMES)
        if qualified is None or has_star_args(node) or self._seeded_by_an_ensemble(node):
            return
        condition = ESTIMATORS[qualified]
        short = qualified.rpartition(".")[2]
        why = ""
        if condition is not None:
            if _deterministic(node, condition):
                return
            if "parameter" in condition:
                parameter = condition["parameter"]
                given = keyword(node, parameter)
                # Only a literal value in the table makes the fit random; defaults and unreadable values do not.
                if given is None or literal(given.value) not in condition["values"]:
                    return
                why = f" with `{parameter}={elide(self.context.code_for(given.value))}`"
        missing = missing_random_state(self.context, node, keyword(node, "random_state"))
        if missing is None:
            return
        edits, problem, seed = missing
        self.report(
            node,
            f"`{short}`{why} is built {problem}: its fit draws from numpy's global RNG",
            PendingFix(Applicability.SAFE, f"Pass `random_state={seed}`", edits),
        )

    def _seeded_by_an_ensemble(self, node: cst.Call) -> bool:
        """Built as the estimator of an ensemble that seeds each copy of it (`BaggingClassifier(
        DecisionTreeClassifier(), ...)`), or bound to a name whose every use is that."""
        index = index_for(self.context)
        holder = index.parent(node)
        if isinstance(holder, cst.Arg):
            return self._ensemble_estimator(index, holder)
        if not (isinstance(holder, cst.Assign) and len(holder.targets) == 1 and isinstance(holder.targets[0].target, cst.Name)):
            return False
        name = holder.targets[0].target.value
        scope = index.scope(holder)
        uses = [use for use in index.occurrences(name) if index.role(use) == "use" and index.scope(use) is scope]
        return bool(uses) and all(isinstance(arg := index.parent(use), cst.Arg) and self._ensemble_estimator(index, arg) for use in uses)

    def _ensemble_estimator(self, index: ModuleIndex, arg: cst.Arg) -> bool:
        call = index.parent(arg)
        if not (isinstance(call, cst.Call) and self.context.matches(call.func, SEEDING_ENSEMBLES)):
            return False
        if arg.keyword is not None:
            return arg.keyword.value in _ESTIMATOR_PARAMETERS
        return not arg.star and call.args[0] is arg
