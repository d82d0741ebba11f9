"""The rule documentation pages (`rules/REPxxx.md`), shipped in the wheel as `repro_lint/rule_pages`,
and the address they are published at, when there is one."""

from __future__ import annotations

import string
from functools import cache
from importlib import resources
from pathlib import Path
from urllib.parse import urlsplit

# In a source checkout or an editable install the pages sit beside the package, not inside it.
_CHECKOUT_PAGES = Path(__file__).resolve().parents[2] / "rules"
# The `[project.urls]` label, normalized as PEP 753 does, under which a release of repro-lint names the
# folder its rule pages are published in. None is declared today, so links are left out, never guessed.
PAGES_URL_LABEL = "rules"
_LABEL_NOISE = str.maketrans("", "", string.punctuation + string.whitespace)


def page_text(code: str) -> str | None:
    installed = resources.files("repro_lint").joinpath("rule_pages", f"{code}.md")
    if installed.is_file():
        return installed.read_text(encoding="utf-8")
    in_checkout = _CHECKOUT_PAGES / f"{code}.md"
    return in_checkout.read_text(encoding="utf-8") if in_checkout.is_file() else None


def is_web_url(text: str) -> bool:
    """An absolute http(s) address, as SARIF's `helpUri` must be and a browser can open."""
    parts = urlsplit(text)
    return parts.scheme in ("http", "https") and bool(parts.netloc)


@cache
def published_pages_url() -> str | None:
    """The folder of rule pages the installed package's metadata names, if it names one."""
    from importlib import metadata  # here: a report that links no page never loads it

    try:
        entries = metadata.metadata("repro-lint").get_all("Project-URL") or []
    except metadata.PackageNotFoundError:
        return None
    for entry in entries:
        label, _, url = entry.partition(",")
        if label.translate(_LABEL_NOISE).lower() == PAGES_URL_LABEL and is_web_url(url.strip()):
            return url.strip()
    return None


def page_url(code: str, docs_url: str | None) -> str | None:
    """The rule's page as an absolute address: under the configured `docs-url`, else under the folder
    the package's metadata names; None when neither exists."""
    base = docs_url or published_pages_url()
    return None if base is None else f"{base.rstrip('/')}/{code}.md"
