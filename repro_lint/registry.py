"""Every rule, registered by importing its module: the one list selection, docs and CLI read."""

from repro_lint.rules import attention, backends, checkpoints, data_loading, determinism, estimators, generators, kernels, ordering, seeding, splits, syntax, unused_noqa  # noqa: F401  (imported to register the rules)
from repro_lint.rules.base import REGISTRY

__all__ = ["REGISTRY"]
