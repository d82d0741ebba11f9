"""The `test` extra installs what the test suite needs: a test that skips for want of a package the
extra leaves out is skipped in CI too, where nobody sees it."""

from __future__ import annotations

import re
import sys
from importlib import metadata
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

if sys.version_info >= (3, 11):
    import tomllib
else:  # the `tomli` dependency
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent


def _name(requirement: str) -> str:
    return canonicalize_name(Requirement(requirement).name)


def test_every_package_a_test_may_skip_for_is_in_an_extra():
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["optional-dependencies"]
    declared = {_name(requirement) for requirements in extras.values() for requirement in requirements}
    skipped_for = {
        module
        for path in (ROOT / "tests").rglob("*.py")
        for module in re.findall(r"""importorskip\(\s*["']([\w.]+)["']""", path.read_text(encoding="utf-8"))
    }
    distributions = metadata.packages_distributions()
    assert "sklearn" in skipped_for  # the scan finds the skips
    for module in sorted(skipped_for):
        top = module.partition(".")[0]
        assert top in distributions, f"{module} is not installed: install the `test` extra"
        assert {name.lower() for name in distributions[top]} & declared, f"{module} is in no extra of pyproject.toml"
