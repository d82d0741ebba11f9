"""ARCHITECTURE.md matches the code: every package it describes exists and every package is
described, and its example rule runs as written."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import repro_lint
from repro_lint.analysis.python import analyze
from repro_lint.analysis.result import ModuleIdentity
from repro_lint.core.settings import Settings
from repro_lint.rules.base import REGISTRY

PAGE = (Path(__file__).parent.parent / "ARCHITECTURE.md").read_text(encoding="utf-8")
PACKAGE = Path(repro_lint.__file__).parent


def test_every_package_is_described_and_every_described_package_exists():
    described = set(re.findall(r"^\| `(\w+)/` \|", PAGE, re.MULTILINE))
    packages = {path.parent.name for path in PACKAGE.glob("*/__init__.py")}
    assert described == packages


def test_every_module_the_page_names_exists():
    named = set(re.findall(r"`((?:engine|facts|program|analysis|sources|core|rules)/\w+\.py)`", PAGE))
    assert named and [name for name in sorted(named) if not (PACKAGE / name).is_file()] == []


@pytest.fixture
def example_rule():
    code = re.search(r"```python\n(.*?)```", PAGE, re.DOTALL).group(1)
    namespace: dict[str, object] = {}
    exec(compile(code, "ARCHITECTURE.md", "exec"), namespace)
    try:
        yield REGISTRY["REP399"]
    finally:
        del REGISTRY["REP399"]


def test_the_example_rule_reports_and_fixes(example_rule):
    text = "import torch\n\ntorch.backends.cudnn.deterministic = False\ntorch.backends.cudnn.deterministic = True\n"
    analysis = analyze(text, "train.py", ModuleIdentity.from_relative_path("train.py"), [example_rule], Settings())
    [finding] = analysis.findings
    assert (finding.code, finding.start.line, finding.message) == ("REP399", 3, "`cudnn.deterministic` is switched off")
    [edit] = finding.fix.edits
    assert (edit.start.line, edit.content) == (3, "True")
