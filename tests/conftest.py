"""Helpers shared by the rule tests: lint a snippet, and check a fix three ways."""

from __future__ import annotations

import os
import textwrap

import pytest
from hypothesis import HealthCheck, settings

from repro_lint.api import fix_source, lint_source
from repro_lint.core.findings import Finding
from repro_lint.core.settings import Settings

# Property-based tests (tests/test_properties.py): `ci`, the default, is bounded and derandomized so
# that the suite stays quick and every run tries the same examples; `long` (HYPOTHESIS_PROFILE=long)
# explores thousands of new ones, and prints how to replay a failure (`@reproduce_failure`) rather
# than keeping a database in the checkout. Generated programs vary in size, hence no deadline.
settings.register_profile(
    "ci", max_examples=25, derandomize=True, database=None, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile(
    "long", max_examples=2000, database=None, print_blob=True, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


# A seeded training script with one REP301 (unsafe fix) and one REP203 (safe fix).
SEEDED_PROGRAM_WITH_TWO_FINDINGS = textwrap.dedent(
    """\
    import torch
    import torch.backends.cudnn as cudnn
    from torch.utils.data import random_split

    cudnn.benchmark = True  # speed

    def main():
        torch.manual_seed(0)
        train, val = random_split(ds, [0.9, 0.1])
        loss.backward()

    if __name__ == "__main__":
        main()
    """
)


def lint(code: str, select: str | None = None, **settings: object) -> list[Finding]:
    chosen = Settings(select=(select,) if select else None, **settings)  # type: ignore[arg-type]
    return lint_source(textwrap.dedent(code), "train.py", chosen)


def codes(code: str, select: str | None = None) -> list[str]:
    return [finding.code for finding in lint(code, select)]


def assert_fix(code: str, expected: str, rule: str, unsafe: bool = False) -> None:
    """The fix gives `expected`; fixing again changes nothing; re-linting no longer raises `rule`."""
    source, wanted = textwrap.dedent(code), textwrap.dedent(expected)
    settings = Settings(select=(rule,))
    assert rule in [finding.code for finding in lint_source(source, "train.py", settings)]
    fixed = fix_source(source, "train.py", settings, unsafe=unsafe)
    assert fixed == wanted
    assert fix_source(fixed, "train.py", settings, unsafe=unsafe) == fixed
    assert rule not in [finding.code for finding in lint_source(fixed, "train.py", settings)]


@pytest.fixture
def project(tmp_path):
    """Write files into a temporary project (it has a pyproject.toml) and return its root."""

    def write(files: dict[str, str], pyproject: str = "") -> object:
        (tmp_path / "pyproject.toml").write_text(pyproject, encoding="utf-8")
        for name, text in files.items():
            path = tmp_path / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(textwrap.dedent(text), encoding="utf-8")
        return tmp_path

    return write
