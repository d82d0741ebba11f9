"""Every rule, registered by importing its module: the one list selection, docs and CLI read.

`python -m repro_lint.rules.registry` writes the catalog (`core/catalog.json`) again."""

import os
import tempfile
from pathlib import Path

from repro_lint.core import catalog
from repro_lint.core.catalog import RuleInfo, to_json
from repro_lint.rules import attention, backends, checkpoints, data_loading, determinism, estimators, generators, kernels, ordering, sampler_epochs, sampler_rng, seed_options, seeding, splits, syntax, unused_noqa  # noqa: F401  (imported to register the rules)
from repro_lint.rules.base import REGISTRY, RuleMeta

__all__ = ["REGISTRY"]


def describe(rule: type[RuleMeta]) -> RuleInfo:
    return RuleInfo(rule.code, rule.name, rule.default_enabled, rule.fix_availability)


def write_catalog() -> Path:
    """Write the catalog in place of the one this import read: through a file beside it, because a
    shell redirection onto it would empty it before the import reads it."""
    target = Path(catalog.__file__).with_name("catalog.json")
    handle, temporary = tempfile.mkstemp(dir=target.parent, suffix=".json")
    with os.fdopen(handle, "w", encoding="utf-8") as out:
        out.write(to_json({code: describe(rule) for code, rule in REGISTRY.items()}))
    os.chmod(temporary, 0o644)
    os.replace(temporary, target)
    return target


if __name__ == "__main__":
    print(f"wrote {write_catalog()}")
