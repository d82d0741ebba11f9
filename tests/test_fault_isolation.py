"""One file's internal error, or one rule's, never costs the other files' findings: the file is named
on stderr, the run exits 2, nothing is written to it, and every output format still carries the rest.
Failures are injected into the real code paths: in this process by monkeypatching, and in spawned
workers through a `sitecustomize` module on PYTHONPATH, which every new interpreter imports."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from repro_lint.analysis import python as analysis
from repro_lint.api import lint_paths
from repro_lint.core.settings import Settings
from repro_lint.rules.seeding import MissingTorchSeed

ROOT = Path(__file__).resolve().parent.parent

BENCHMARK = "import torch\ntorch.backends.cudnn.benchmark = True\n"
# REP101 (a program rule: torch's RNG drawn from, never seeded) and REP204 (a local rule).
UNSEEDED = """\
import torch
from sklearn.model_selection import train_test_split

if __name__ == "__main__":
    print(torch.randn(3))
    a, b = train_test_split([1, 2, 3])
"""

SITECUSTOMIZE = """\
import os

import libcst

_parse = libcst.parse_module


def parse_module(text, *args, **kwargs):
    if "BOOM" in text:
        raise ValueError("injected failure")
    if "CRASH" in text:
        os._exit(1)  # a worker that dies as a segfaulting parser would
    return _parse(text, *args, **kwargs)


libcst.parse_module = parse_module
"""


def _project(tmp_path: Path, files: dict[str, str], padding: int = 0) -> Path:
    (tmp_path / ".git").mkdir(parents=True)
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    for index in range(padding):  # enough files for the process pool
        (tmp_path / f"pad_{index}.py").write_text(f"VALUE_{index} = {index}\n")
    return tmp_path


def _cli(root: Path, *args: str, inject: bool = True) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    if inject:
        hooks = root.parent / "hooks"
        hooks.mkdir(exist_ok=True)
        (hooks / "sitecustomize.py").write_text(SITECUSTOMIZE)
        env["PYTHONPATH"] = os.pathsep.join([str(hooks), str(ROOT)])
    return subprocess.run(
        [sys.executable, "-m", "repro_lint", "check", "--no-cache", *args, "."], cwd=root, env=env, capture_output=True, text=True
    )


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_an_injected_parse_failure_names_the_file_and_keeps_the_others(tmp_path, jobs):
    root = _project(tmp_path / "project", {"good.py": BENCHMARK, "bad.py": "# BOOM\n" + BENCHMARK}, padding=60)
    result = _cli(root, "--jobs", jobs)
    assert result.returncode == 2
    assert "good.py:2:1: REP301" in result.stdout
    assert "bad.py" not in result.stdout
    assert "error: repro-lint failed on bad.py: ValueError: injected failure" in result.stderr
    assert "--show-traceback" in result.stderr
    assert "Traceback" not in result.stderr

    shown = _cli(root, "--jobs", jobs, "--show-traceback")
    assert shown.returncode == 2
    assert "Traceback (most recent call last)" in shown.stderr
    assert 'raise ValueError("injected failure")' in shown.stderr


def test_a_worker_that_dies_is_reported_and_its_queue_analysed_again(tmp_path):
    root = _project(tmp_path / "project", {"good.py": BENCHMARK, "crash.py": "# CRASH\n" + BENCHMARK}, padding=60)
    result = _cli(root, "--jobs", "2")
    assert result.returncode == 2
    assert "good.py:2:1: REP301" in result.stdout
    assert "error: repro-lint failed on crash.py: the process analysing it died" in result.stderr
    assert result.stderr.count("error: repro-lint failed") == 1  # its neighbours in the queue were analysed again


def test_fix_writes_nothing_to_the_failing_file_and_fixes_the_others(tmp_path):
    bad = "# BOOM\n" + BENCHMARK
    root = _project(tmp_path / "project", {"good.py": BENCHMARK, "bad.py": bad})
    result = _cli(root, "--fix", "--unsafe-fixes", "--jobs", "1")
    assert result.returncode == 2
    assert (root / "bad.py").read_text() == bad
    assert (root / "good.py").read_text() == BENCHMARK.replace("True", "False")


def test_sarif_says_the_run_was_incomplete_and_still_holds_the_findings(tmp_path):
    root = _project(tmp_path / "project", {"good.py": BENCHMARK, "bad.py": "# BOOM\n" + BENCHMARK})
    result = _cli(root, "--output-format", "sarif", "--jobs", "1")
    assert result.returncode == 2
    run = json.loads(result.stdout)["runs"][0]
    assert [item["ruleId"] for item in run["results"]] == ["REP301"]
    (invocation,) = run["invocations"]
    assert invocation["executionSuccessful"] is False
    (notification,) = invocation["toolExecutionNotifications"]
    assert notification["level"] == "error"
    assert notification["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "bad.py"
    assert "ValueError: injected failure" in notification["message"]["text"]

    clean = _cli(root / "..", "--output-format", "sarif", inject=False)  # the hooks folder, no failure
    assert json.loads(clean.stdout)["runs"][0]["invocations"] == [{"executionSuccessful": True, "toolExecutionNotifications": []}]


def test_a_program_rule_that_raises_costs_only_its_own_findings(tmp_path, monkeypatch):
    root = _project(tmp_path, {"train.py": UNSEEDED})
    before = {finding.code for finding in lint_paths([root], Settings()).findings}
    assert before == {"REP101", "REP204"}

    def broken(self, project):
        raise KeyError("broken rule")

    monkeypatch.setattr(MissingTorchSeed, "check", broken)
    result = lint_paths([root], Settings())
    assert {finding.code for finding in result.findings} == before - {"REP101"}
    (problem,) = result.problems
    assert (problem.kind, problem.summary) == ("error", "REP101: KeyError: 'broken rule'")


def test_a_file_whose_fixed_text_fails_the_analysis_gets_its_text_back(tmp_path, monkeypatch):
    root = _project(tmp_path, {"train.py": BENCHMARK, "other.py": "import torch\ntorch.backends.cudnn.benchmark = True  # other\n"})
    real = analysis._analyze_module

    def failing_after_the_fix(module, text, *args):
        if "benchmark = False\n" in text:  # train.py fixed; other.py's line keeps its comment
            raise ValueError("fixed text fails")
        return real(module, text, *args)

    monkeypatch.setattr(analysis, "_analyze_module", failing_after_the_fix)
    result = lint_paths([root], Settings(), fix=True, unsafe_fixes=True)
    assert (root / "train.py").read_text() == BENCHMARK
    assert (root / "other.py").read_text() == "import torch\ntorch.backends.cudnn.benchmark = False  # other\n"
    assert [(Path(problem.path).name, problem.summary) for problem in result.problems] == [
        ("train.py", "after its fixes: ValueError: fixed text fails")
    ]
    assert [(Path(finding.path).name, finding.code) for finding in result.findings] == [("train.py", "REP301")]


def test_the_flake8_plugin_reports_the_failing_file_and_goes_on(tmp_path):
    pytest.importorskip("flake8")
    root = _project(tmp_path / "project", {"good.py": BENCHMARK, "bad.py": "# BOOM\n" + BENCHMARK})
    env = dict(os.environ)
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    (hooks / "sitecustomize.py").write_text(SITECUSTOMIZE)
    env["PYTHONPATH"] = os.pathsep.join([str(hooks), str(ROOT)])
    result = subprocess.run(
        [sys.executable, "-m", "flake8", "--select", "REP", "good.py", "bad.py"], cwd=root, env=env, capture_output=True, text=True
    )
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    lines = sorted(result.stdout.splitlines())
    assert lines[0].startswith("bad.py:1:1: REP001 repro-lint failed on this file (an internal error; please report it): ValueError")
    assert lines[1].startswith("good.py:2:1: REP301")


NESTED = {
    "plus500.py": "x = " + " + ".join(["a"] * 500) + "\n",
    "elif500.py": "if a == 0:\n    pass\n" + "".join(f"elif a == {i}:\n    pass\n" for i in range(1, 500)),
    "calls400.py": "x = a" + ".b()" * 400 + "\n",
    "attributes500.py": "x = a" + ".b" * 500 + "\n",
    "strings1000.py": "x = (\n" + "\n".join(['    "a"'] * 1000) + "\n)\n",
    "and1000.py": "x = " + " and ".join(["a"] * 1000) + "\n",
    # Beyond what CPython compiles; LibCST's parser overflowed its stack on the last two.
    "plus10000.py": "x = " + " + ".join(["a"] * 10000) + "\n",
    "and10000.py": "x = " + " and ".join(["a"] * 10000) + "\n",
    "parentheses10000.py": "x = " + "(" * 10000 + "1" + ")" * 10000 + "\n",
}


def test_deeply_nested_code_is_a_finding_not_a_crash(tmp_path):
    root = _project(tmp_path / "project", {**NESTED, "train.py": BENCHMARK})
    result = _cli(root, "--jobs", "1", inject=False)
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr and result.stderr == ""
    reported = {line.split(":")[0]: line for line in result.stdout.splitlines() if ": REP" in line}
    assert set(reported) == {*NESTED, "train.py"}
    for name in NESTED:
        assert f"{name}:1:1: REP001 " in reported[name]
        assert "nested too deeply" in reported[name] or "too many nested parentheses" in reported[name]
    before = {name: (root / name).read_text() for name in NESTED}
    _cli(root, "--jobs", "1", "--fix", "--unsafe-fixes", inject=False)
    assert {name: (root / name).read_text() for name in NESTED} == before


def test_a_file_too_large_for_the_memory_budget_is_skipped_with_a_warning(tmp_path, monkeypatch):
    monkeypatch.setattr(analysis, "MAX_TOKENS", 1_000)
    generated = "".join(f"value_{index} = compute({index})\n" for index in range(200))  # 1,200 tokens
    root = _project(tmp_path, {"table.py": generated + BENCHMARK, "train.py": BENCHMARK})
    result = lint_paths([root], Settings(), fix=True, unsafe_fixes=True)
    assert [(Path(problem.path).name, problem.kind) for problem in result.problems] == [("table.py", "skipped")]
    assert "1,211 tokens; the limit is 1,000" in result.problems[0].summary
    assert (root / "table.py").read_text() == generated + BENCHMARK
    assert (root / "train.py").read_text() == BENCHMARK.replace("True", "False")

    small = "".join(f"v{index} = {index}\n" for index in range(300))  # 900 tokens: analysed
    (root / "table.py").write_text(small + BENCHMARK)
    assert [Path(finding.path).name for finding in lint_paths([root], Settings()).findings] == ["table.py"]


def test_a_skipped_file_is_a_warning_that_leaves_the_exit_code_to_the_findings(tmp_path):
    generated = "".join(f"value_{index} = compute({index}, name='x{index}')\n" for index in range(10_000))  # 120,000 tokens
    root = _project(tmp_path / "project", {"table.py": generated, "clean.py": "VALUE = 1\n"})
    result = _cli(root, "--jobs", "1", inject=False)
    assert result.returncode == 0
    assert result.stderr == "warning: repro-lint skipped table.py: too large to analyse within repro-lint's memory budget (120,000 tokens; the limit is 100,000)\n"


def test_github_annotations_carry_the_failing_file(tmp_path):
    root = _project(tmp_path / "project", {"good.py": BENCHMARK, "bad.py": "# BOOM\n" + BENCHMARK})
    result = _cli(root, "--output-format", "github", "--jobs", "1")
    assert result.returncode == 2
    lines = result.stdout.splitlines()
    assert lines[0].startswith("::error file=good.py,line=2,")
    assert lines[1] == "::error file=bad.py,title=repro-lint failed on this file::ValueError: injected failure"


def test_a_recursion_bug_on_shallow_code_is_an_internal_error_not_deep_nesting(tmp_path, monkeypatch):
    def endless(*args):
        return endless(*args)

    monkeypatch.setattr(analysis, "FactsCollector", endless)
    root = _project(tmp_path, {"train.py": BENCHMARK})
    result = lint_paths([root], Settings())
    assert result.findings == []
    (problem,) = result.problems
    assert problem.kind == "error" and problem.summary.startswith("RecursionError: maximum recursion depth exceeded")


def test_the_summary_never_says_all_checks_passed_after_an_internal_error(tmp_path):
    root = _project(tmp_path / "project", {"bad.py": "# BOOM\nVALUE = 1\n"})
    result = _cli(root, "--jobs", "1")
    assert result.returncode == 2
    assert result.stdout == "No findings in what was analysed. 1 internal error: see above.\n"


def test_a_bug_in_the_engine_itself_is_an_error_message_not_a_traceback(tmp_path, monkeypatch):
    from click.testing import CliRunner

    from repro_lint.cli import main
    from repro_lint.engine.engine import Engine

    def broken(self, projects):
        raise KeyError("record")

    monkeypatch.setattr(Engine, "findings", broken)
    (tmp_path / "train.py").write_text(BENCHMARK, encoding="utf-8")
    result = CliRunner().invoke(main, ["check", str(tmp_path), "--no-cache"])
    assert result.exit_code == 2
    assert "error: repro-lint failed: KeyError: 'record'" in result.stderr
    assert "--show-traceback" in result.stderr and "Traceback" not in result.stderr
    shown = CliRunner().invoke(main, ["check", str(tmp_path), "--no-cache", "--show-traceback"])
    assert shown.exit_code == 2 and "Traceback (most recent call last)" in shown.stderr and "in broken" in shown.stderr
