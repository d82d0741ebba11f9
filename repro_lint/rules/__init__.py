"""Every rule, registered by importing its module."""

from repro_lint.rules import determinism, splits, syntax  # noqa: F401  (imported to register the rules)
from repro_lint.rules.base import REGISTRY, ProgramRule, Rule

__all__ = ["REGISTRY", "ProgramRule", "Rule"]
