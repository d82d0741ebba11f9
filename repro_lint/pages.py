"""The rule documentation pages (`rules/REPxxx.md`), shipped in the wheel as `repro_lint/rule_pages`."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

# In a source checkout or an editable install the pages sit beside the package, not inside it.
_CHECKOUT_PAGES = Path(__file__).resolve().parent.parent / "rules"


def page_text(code: str) -> str | None:
    installed = resources.files("repro_lint").joinpath("rule_pages", f"{code}.md")
    if installed.is_file():
        return installed.read_text(encoding="utf-8")
    in_checkout = _CHECKOUT_PAGES / f"{code}.md"
    return in_checkout.read_text(encoding="utf-8") if in_checkout.is_file() else None


def page_url(code: str) -> str:
    return f"rules/{code}.md"
