"""The rule documentation pages (`rules/REPxxx.md`), shipped in the wheel as `repro_lint/rule_pages`."""

from __future__ import annotations

from functools import cache
from importlib import metadata, resources
from pathlib import Path

# The repository the project is published from: rule page links (JSON `url`, SARIF `helpUri`) and the
# README's pre-commit snippet name it. No public address exists yet; this is the one place to set it.
REPOSITORY_URL = "https://github.com/your-org/repro-lint"

# In a source checkout or an editable install the pages sit beside the package, not inside it.
_CHECKOUT_PAGES = Path(__file__).resolve().parent.parent / "rules"


def page_text(code: str) -> str | None:
    installed = resources.files("repro_lint").joinpath("rule_pages", f"{code}.md")
    if installed.is_file():
        return installed.read_text(encoding="utf-8")
    in_checkout = _CHECKOUT_PAGES / f"{code}.md"
    return in_checkout.read_text(encoding="utf-8") if in_checkout.is_file() else None


@cache
def _release_tag() -> str:
    """The tag of the installed version (pre-commit's `rev: v0.1.0`), so a link shows the rule as this
    version implements it."""
    try:
        return "v" + metadata.version("repro-lint")
    except metadata.PackageNotFoundError:
        return "main"


def page_url(code: str) -> str:
    """The rule's page as an absolute address, as SARIF's `helpUri` requires."""
    return f"{REPOSITORY_URL}/blob/{_release_tag()}/rules/{code}.md"
