"""Every rule, registered by importing its module: the one list selection, docs and CLI read.

`python -m repro_lint.rules.registry > repro_lint/core/catalog.json` writes the catalog again."""

from repro_lint.core.catalog import RuleInfo, to_json
from repro_lint.rules import attention, backends, checkpoints, data_loading, determinism, estimators, generators, kernels, ordering, sampler_epochs, sampler_rng, seeding, splits, syntax, unused_noqa  # noqa: F401  (imported to register the rules)
from repro_lint.rules.base import REGISTRY, RuleMeta

__all__ = ["REGISTRY"]


def describe(rule: type[RuleMeta]) -> RuleInfo:
    return RuleInfo(rule.code, rule.name, rule.default_enabled, rule.fix_availability)


if __name__ == "__main__":  # writes core/catalog.json
    print(to_json({code: describe(rule) for code, rule in REGISTRY.items()}), end="")
