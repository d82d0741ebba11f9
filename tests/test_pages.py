"""Every rule has a page with Ruff's sections, and its examples are checked by the linter itself."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from repro_lint.api import lint_source
from repro_lint.core import catalog
from repro_lint.core.settings import Settings
from repro_lint.rules.registry import REGISTRY, describe

PAGES = Path(__file__).resolve().parent.parent / "rules"
SECTIONS = ["What it does", "Why is this bad?", "Example", "Use instead", "Fix safety", "References"]


def _page(code: str) -> str:
    return (PAGES / f"{code}.md").read_text(encoding="utf-8")


def _block(page: str, section: str) -> str:
    match = re.search(rf"^## {re.escape(section)}\n+```python\n(.*?)^```", page, re.MULTILINE | re.DOTALL)
    assert match, f"no python block under '## {section}'"
    return match.group(1)


def test_catalog_matches_the_registered_rules():
    # The catalog lets selection and reports skip importing the rules; it must say what they say.
    written = (Path(catalog.__file__).parent / "catalog.json").read_text(encoding="utf-8")
    assert written == catalog.to_json({code: describe(rule) for code, rule in REGISTRY.items()}), (
        "run `python -m repro_lint.rules.registry`"
    )
    assert catalog.CATALOG == {code: describe(rule) for code, rule in REGISTRY.items()}


def test_every_page_belongs_to_a_rule():
    assert sorted(path.stem for path in PAGES.glob("*.md")) == sorted(REGISTRY)


@pytest.mark.parametrize("code", sorted(REGISTRY))
def test_page_has_ruff_sections_in_order(code):
    page = _page(code)
    rule = REGISTRY[code]
    assert page.startswith(f"# {code} {rule.name}\n")
    headings = re.findall(r"^## (.+)$", page, re.MULTILINE)
    assert [heading for heading in headings if heading in SECTIONS] == SECTIONS
    default = "on" if rule.default_enabled else "off"
    assert f"Default: {default} · Fix: {rule.fix_availability.value}" in page


@pytest.mark.parametrize("code", sorted(REGISTRY))
def test_example_fires_and_use_instead_does_not(code):
    page = _page(code)
    # Version-gated rules (REP304) need a target torch version that still has the old behaviour.
    settings = Settings(select=(code,), target_torch_version="2.1")
    assert code in [finding.code for finding in lint_source(_block(page, "Example"), "train.py", settings)]
    assert code not in [finding.code for finding in lint_source(_block(page, "Use instead"), "train.py", settings)]
