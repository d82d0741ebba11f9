"""Every message any rule emits is one short line: at most 120 characters (Ruff's style: what is
wrong; the fix title and the rule page say what to do). The corpus is everything the rule tests
make fire: each rule page's example, every source fixture of the rule test modules (run alone and as
a project with its helper modules), and the examples/ folder; plus worst cases for quoted names."""

from __future__ import annotations

import importlib
import textwrap
from pathlib import Path

import pytest

from repro_lint.api import lint_paths, lint_source
from repro_lint.core.message_text import elide
from repro_lint.core.settings import Settings
from repro_lint.rules.registry import REGISTRY

LIMIT = 120
ROOT = Path(__file__).resolve().parent.parent
EVERY_RULE = Settings(select=("REP",), target_torch_version="1.8")
RULE_TESTS = sorted(path.stem for path in (ROOT / "tests").glob("test_rules_*.py"))


def _sources(value: object) -> list[str]:
    """The Python sources a test module's constant holds (a string, or strings in lists and tuples)."""
    if isinstance(value, str):
        return [textwrap.dedent(value)] if "\n" in value else []
    if isinstance(value, (list, tuple)):
        return [source for item in value for source in _sources(item)]
    return []


def _fixtures(module_name: str) -> list[str]:
    pytest.importorskip("torch")
    module = importlib.import_module(module_name)
    return [source for name, value in vars(module).items() if name.isupper() for source in _sources(value)]


def _too_long(findings) -> list[str]:
    return [f"{finding.code} ({len(finding.message)}): {finding.message}" for finding in findings if len(finding.message) > LIMIT]


def _page_example(code: str) -> str:
    page = (ROOT / "rules" / f"{code}.md").read_text(encoding="utf-8")
    return page.split("## Example\n```python\n", 1)[1].split("```", 1)[0]


@pytest.mark.parametrize("code", sorted(REGISTRY))
def test_page_examples_give_short_messages(code):
    findings = lint_source(_page_example(code), "train.py", Settings(select=(code,), target_torch_version="2.1"))
    assert code in [finding.code for finding in findings]
    assert _too_long(findings) == []


@pytest.mark.parametrize("module_name", RULE_TESTS)
def test_rule_test_fixtures_give_short_messages(module_name, tmp_path):
    sources = _fixtures(module_name)
    findings = [finding for source in sources for finding in lint_source(source, "train.py", EVERY_RULE)]
    # As one project too: fixtures that define helpers (datasets, workers) meet the programs using them.
    for number, source in enumerate(sources):
        (tmp_path / f"module_{number}.py").write_text(source, encoding="utf-8")
    findings += lint_paths([tmp_path], EVERY_RULE).findings
    assert _too_long(findings) == []


def test_examples_and_program_level_worst_cases_give_short_messages(tmp_path):
    findings = lint_paths([ROOT / "examples"], EVERY_RULE).findings
    # A worker started in a fresh process that draws, runs on CUDA and never seeds anything: the
    # longest program messages (REP101, REP102, REP302), with names longer than usual. Places in
    # other files keep their whole path (the cache matches it), so the paths here are ordinary.
    (tmp_path / "server").mkdir()
    (tmp_path / "server" / "models.py").write_text(
        "import random\nimport numpy as np\nimport torch.nn as nn\n\n\ndef build_the_parameter_server_model():\n"
        "    random.random()\n    np.random.rand()\n    return nn.Conv2d(1, 1, 3).cuda()\n",
        encoding="utf-8",
    )
    (tmp_path / "server" / "launch_training.py").write_text(
        "import torch.multiprocessing as mp\nfrom models import build_the_parameter_server_model\n\n\n"
        "def run_the_parameter_server_worker(rank):\n    model = build_the_parameter_server_model()\n"
        "    model(x).sum().backward()\n\n\nif __name__ == '__main__':\n"
        "    mp.spawn(run_the_parameter_server_worker, nprocs=2)\n",
        encoding="utf-8",
    )
    findings += lint_paths([tmp_path], EVERY_RULE).findings
    assert {"REP101", "REP102", "REP302"} <= {finding.code for finding in findings}
    assert _too_long(findings) == []


def test_kernel_and_cuda_messages_stay_short(tmp_path):
    # REP306's longest forms (a backward-only op with a long reason), and REP302 whose CUDA evidence
    # is in another module with a long path and a long call name (pytorch/examples, trl, diffusers).
    folder = tmp_path / "src" / "library" / "modular_pipelines"
    folder.mkdir(parents=True)
    (folder / "components_manager.py").write_text(
        "import torch\n\n\ndef device():\n    return torch.accelerator.current_accelerator()\n", encoding="utf-8"
    )
    (tmp_path / "train.py").write_text(
        "import torch\nimport torch.nn as nn\nfrom src.library.modular_pipelines.components_manager import device\n\n\n"
        "def main():\n    torch.manual_seed(0)\n    model = nn.Sequential(nn.ReflectionPad2d(1), nn.AdaptiveAvgPool2d(1)).to(device())\n"
        "    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)\n    model(x).sum().backward()\n    optimizer.step()\n\n\n"
        "if __name__ == '__main__':\n    main()\n",
        encoding="utf-8",
    )
    findings = lint_paths([tmp_path], EVERY_RULE).findings
    assert {"REP302", "REP306"} <= {finding.code for finding in findings}
    assert _too_long(findings) == []


def test_long_names_are_elided():
    name = "AVeryLongDatasetClassNameThatSomeoneWroteForTheirOwnProject"
    code = f"import torch\nfrom torch.utils.data import DataLoader\nloader = DataLoader(ds, shuffle={name}.shuffled_by_default_in_this_project)\n"
    [finding] = [finding for finding in lint_source(code, "train.py", Settings(select=("REP202",)))]
    assert len(finding.message) <= LIMIT and "`shuffle=AVeryLongDatasetClassNa…`" in finding.message
    assert elide("a  b\n c") == "a b c" and elide("x" * 40, 10) == "x" * 9 + "…"
