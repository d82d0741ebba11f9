"""Analysing a program parses each file once, whatever the number of rules and programs."""

from __future__ import annotations

from collections import Counter

import libcst as cst
import pytest

import repro_lint.analysis.python as analysis
from repro_lint.api import lint_paths
from repro_lint.core.settings import Settings


def test_each_file_is_parsed_once(project, monkeypatch):
    root = project({
        "train.py": "import torch\nfrom utils.seed import seed_all\nif __name__ == '__main__':\n    seed_all()\n    torch.nn.Linear(2, 2)(torch.ones(2)).sum().backward()\n",
        "eval.py": "import torch\nfrom utils.seed import seed_all\nif __name__ == '__main__':\n    seed_all()\n    torch.rand(2)\n",
        "utils/__init__.py": "",
        "utils/seed.py": "import torch\ndef seed_all():\n    torch.manual_seed(0)\n",
    })
    parsed: Counter[str] = Counter()
    real_parse = analysis.parse

    def counting_parse(text: str):
        parsed[text] += 1
        return real_parse(text)

    monkeypatch.setattr(analysis, "parse", counting_parse)
    lint_paths([root / "train.py"], Settings(select=("REP",)))
    # eval.py, a program train.py's findings do not depend on, is not read at all (closure.py).
    assert sorted(parsed) == sorted(["", *(text for name, text in _texts(root).items() if name != "eval.py" and text)])
    assert set(parsed.values()) == {1}
    parsed.clear()
    lint_paths([root], Settings(select=("REP",)))
    assert len(parsed) == 4 and set(parsed.values()) == {1}


def _texts(root) -> dict[str, str]:
    return {path.relative_to(root).as_posix(): path.read_text() for path in root.rglob("*.py")}


def _builds_invalid_nodes() -> bool:
    try:
        cst.Name("x", lpar=[cst.LeftParen()])
    except cst.CSTValidationError:
        return False
    return True


def test_parsing_skips_node_checks_only_while_it_parses():
    source = "def f(a, /, *, b=(1,)):\n    return [x async for x in a if (x)]\n"
    module = analysis.parse(source)
    assert module.code == source
    assert module.deep_equals(cst.parse_module(source))
    assert not _builds_invalid_nodes()  # the nodes a fix builds are checked again
    with pytest.raises(cst.ParserSyntaxError):
        analysis.parse("def broken(:\n")
    assert not _builds_invalid_nodes()
