"""The README's rule table is generated from the registry; this keeps the two in sync."""

from __future__ import annotations

import re
from pathlib import Path

from repro_lint.registry import REGISTRY

README = Path(__file__).resolve().parent.parent / "README.md"


def expected_table() -> str:
    rows = ["| Code | Name | Default | Fix |", "|---|---|---|---|"]
    for code, rule in sorted(REGISTRY.items()):
        default = "on" if rule.default_enabled else "off"
        rows.append(f"| [{code}](rules/{code}.md) | {rule.name} | {default} | {rule.fix_availability.value} |")
    return "\n".join(rows)


def test_rules_table_matches_registry():
    text = README.read_text(encoding="utf-8")
    match = re.search(r"<!-- rules-table:.*?-->\n(.*?)\n<!-- end rules-table -->", text, re.DOTALL)
    assert match, "README has no rules-table markers"
    assert match.group(1) == expected_table(), "README rules table is stale; replace it with:\n" + expected_table()


def test_readme_commands_match_ci():
    ci = (README.parent / ".ci" / "run").read_text(encoding="utf-8")
    test_command = re.search(r"```bash\n(python3 -m venv .venv && .venv/bin/pip install torch.*?)\n```", README.read_text()).group(1)
    assert test_command in ci
