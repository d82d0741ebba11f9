"""Every rule's code, name, default and fix availability, as data: selecting codes, listing rules and
describing them in reports read it without importing the rules, and so without LibCST, which a run
answered from the cache never needs.

`catalog.json` mirrors the registered rule classes; a test keeps the two equal. After adding a rule,
write it again with `python -m repro_lint.rules.registry`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from importlib import resources

from repro_lint.core.findings import FixAvailability


@dataclass(frozen=True)
class RuleInfo:
    code: str
    name: str
    default_enabled: bool
    fix_availability: FixAvailability


def _load() -> dict[str, RuleInfo]:
    entries = json.loads(resources.files(__package__).joinpath("catalog.json").read_text(encoding="utf-8"))
    return {
        entry["code"]: RuleInfo(entry["code"], entry["name"], entry["default_enabled"], FixAvailability(entry["fix_availability"]))
        for entry in entries
    }


def to_json(rules: Mapping[str, RuleInfo]) -> str:
    entries = [{**asdict(info), "fix_availability": info.fix_availability.value} for _, info in sorted(rules.items())]
    return json.dumps(entries, indent=2) + "\n"


CATALOG: dict[str, RuleInfo] = _load()
