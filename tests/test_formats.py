"""The report formats for people (concise, full, colour, `--show-fixes`) and for the machines that read
them (JSON Lines, JUnit XML, GitLab Code Quality, pylint's lines), each checked the way its consumer
reads it; and the Ruff options that choose what is linted (`--exclude`, `--extend-exclude`,
`--per-file-ignores`)."""

from __future__ import annotations

import io
import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import jsonschema
import pytest
from click.testing import CliRunner
from conftest import SEEDED_PROGRAM_WITH_TWO_FINDINGS

from repro_lint.cli import _colored, main
from repro_lint.core.findings import Finding
from repro_lint.core.problems import Problem
from repro_lint.core.source import Position
from repro_lint.output import junit
from repro_lint.output.context import ReportContext

BAD = SEEDED_PROGRAM_WITH_TWO_FINDINGS
ANSI = re.compile(r"\x1b\[[0-9;]*m")

# GitLab's Code Quality report: the fields its documentation marks required (a Code Climate subset).
GITLAB_SCHEMA = {
    "type": "array",
    "items": {
        "type": "object",
        "required": ["description", "check_name", "fingerprint", "severity", "location"],
        "properties": {
            "description": {"type": "string", "minLength": 1},
            "check_name": {"type": "string", "minLength": 1},
            "fingerprint": {"type": "string", "minLength": 1},
            "severity": {"enum": ["info", "minor", "major", "critical", "blocker"]},
            "location": {
                "type": "object",
                "required": ["path", "lines"],
                "properties": {
                    "path": {"type": "string", "minLength": 1},
                    "lines": {"type": "object", "required": ["begin"], "properties": {"begin": {"type": "integer", "minimum": 1}}},
                },
            },
        },
    },
}


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / ".git").mkdir()
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'demo'\n")
    (tmp_path / "train.py").write_text(BAD)
    (tmp_path / "clean.py").write_text("x = 1\n")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def check(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, ["check", "--no-cache", *args])
    assert not isinstance(result.exception, Exception) or isinstance(result.exception, SystemExit), result.exception
    return result.exit_code, result.stdout, result.stderr


def test_help_lists_every_format():
    help_text = " ".join(check("--help")[1].split())
    assert "[concise|full|text|json|json-lines|junit|gitlab|pylint|sarif|github]" in help_text


# --- for people ------------------------------------------------------------------------------------


def test_concise_is_the_default_and_text_its_alias(repo):
    default = check(".")
    assert default == check("--output-format", "concise", ".") == check("--output-format", "text", ".")
    assert default[1].splitlines()[0] == "train.py:5:1: REP301 `cudnn.benchmark` is enabled: cuDNN picks kernels by timing them, so runs can differ"


def test_full_shows_the_source_a_caret_under_the_span_and_the_fix(repo):
    status, out, _ = check("--output-format", "full", ".")
    assert status == 1
    block = out.split("\n\n")[1].splitlines()  # the REP203 finding's
    assert block[0].startswith("train.py:9:18: REP203 ")
    assert block[1:6] == [
        "   |",
        " 8 |     torch.manual_seed(0)",
        " 9 |     train, val = random_split(ds, [0.9, 0.1])",
        "   |                  " + "^" * len("random_split(ds, [0.9, 0.1])") + " REP203",
        "10 |     loss.backward()",
    ]
    assert block[7] == "  = help: Add `generator=torch.Generator().manual_seed(0)` (safe fix)"
    assert block[8:] == [  # the lengthened call is wrapped, as the fix writes it
        "   9 -     train, val = random_split(ds, [0.9, 0.1])",
        "   9 +     train, val = random_split(",
        "  10 +         ds, [0.9, 0.1], generator=torch.Generator().manual_seed(0)",
        "  11 +     )",
    ]
    assert "(unsafe fix, with --unsafe-fixes)" in out
    assert out.endswith("Found 2 findings (1 fixable with --fix, 1 more with --fix --unsafe-fixes).\n")


def test_full_underlines_every_line_of_a_long_span_and_expands_tabs(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "t.py").write_text(
        "import torch\nfrom torch.utils.data import random_split\ntorch.manual_seed(0)\n"
        "if True:\n\ttrain, val = random_split(\n\t\tds,\n\t\t[0.9, 0.1])\nloss.backward()\n"
    )
    out = check("--output-format", "full", "t.py")[1].splitlines()
    assert out[3:9] == [
        "5 |     train, val = random_split(",
        "  |                  ^^^^^^^^^^^^^ REP203",
        "6 |         ds,",
        "  |         ^^^",
        "7 |         [0.9, 0.1])",
        "  |         ^^^^^^^^^^^",
    ]


def test_full_shows_a_notebook_cells_lines(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    cell = {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": []}
    document = {
        "cells": [{**cell, "source": ["%matplotlib inline\n", "import torch\n"]}, {**cell, "source": ["torch.backends.cudnn.benchmark = True\n", "loss.backward()"]}],
        "metadata": {},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    (tmp_path / "nb.ipynb").write_text(json.dumps(document))
    out = check("--output-format", "full", "nb.ipynb")[1].splitlines()
    assert out[0].startswith("nb.ipynb:cell 2:1:1: REP301 ")
    assert out[2:4] == ["1 | torch.backends.cudnn.benchmark = True", "  | ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^ REP301"]
    assert out[6:8] == ["  = help: Change `cudnn.benchmark` from `True` to `False` (unsafe fix, with --unsafe-fixes)", ""]


def test_full_without_a_readable_source_gives_the_line_only(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "bad.py").write_bytes(b"x = '\xff'\n")
    out = check("--output-format", "full", "bad.py")[1].splitlines()
    assert out[0].startswith("bad.py:1:1: REP001 ") and out[1] == ""


def test_colour_is_chosen_by_the_option_and_no_color(repo, monkeypatch):
    always = check("--color", "always", "--output-format", "full", ".")[1]
    assert "\x1b[" in always
    assert ANSI.sub("", always) == check("--output-format", "full", ".")[1] == check("--color", "never", "--output-format", "full", ".")[1]
    assert "\x1b[" not in check(".")[1]  # auto, and the report goes to a pipe
    assert "\x1b[" not in check("--color", "always", "--output-format", "json", ".")[1]

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    monkeypatch.delenv("NO_COLOR", raising=False)
    assert _colored("auto", Terminal()) and not _colored("auto", io.StringIO())
    monkeypatch.setenv("NO_COLOR", "1")
    assert not _colored("auto", Terminal())
    assert _colored("always", io.StringIO())  # the option says more than the variable
    monkeypatch.setenv("NO_COLOR", "")  # set but empty: no-color.org says it means nothing
    assert _colored("auto", Terminal())


def test_show_fixes_marks_what_fix_would_fix_and_lists_what_it_fixed(repo):
    lines = check("--show-fixes", ".")[1].splitlines()
    assert [" [*] " in line for line in lines[:2]] == [False, True]  # REP301's fix is unsafe
    assert [" [*] " in line for line in check("--show-fixes", "--unsafe-fixes", ".")[1].splitlines()[:2]] == [True, True]
    status, out, _ = check("--show-fixes", "--fix", "--unsafe-fixes", ".")
    assert (status, out) == (
        0,
        "Fixed 2 findings:\n- train.py:\n    1 × REP203 (random-split-missing-generator)\n    1 × REP301 (cudnn-benchmark-enabled)\n\n"
        "Found 2 findings (2 fixed, 0 remaining).\n",
    )
    assert check("--show-fixes", "--fix", ".")[1] == "All checks passed!\n"  # nothing left to fix


# --- for machines ----------------------------------------------------------------------------------


def test_json_lines_are_the_json_findings_one_a_line(repo):
    status, out, _ = check("--output-format", "json-lines", ".")
    assert status == 1
    assert [json.loads(line) for line in out.splitlines()] == json.loads(check("--output-format", "json", ".")[1])
    assert check("--output-format", "json-lines", "clean.py")[1] == ""


def test_pylint_lines(repo):
    lines = check("--output-format", "pylint", ".")[1].splitlines()
    assert lines == [
        "train.py:5: [REP301] `cudnn.benchmark` is enabled: cuDNN picks kernels by timing them, so runs can differ",
        "train.py:9: [REP203] `random_split` without `generator` draws from torch's global RNG: earlier draws change the split",
    ]
    assert all(re.fullmatch(r"(?P<path>[^:]+):(?P<line>\d+): \[(?P<code>REP\d{3})\] (?P<message>.+)", line) for line in lines)


def test_junit_is_xml_with_a_test_case_per_file_and_a_failure_per_finding(repo):
    status, out, _ = check("--output-format", "junit", ".")
    assert status == 1 and out.startswith('<?xml version="1.0" encoding="UTF-8"?>')
    suites = ET.fromstring(out)
    assert suites.tag == "testsuites" and suites.get("tests") == "2" and suites.get("failures") == "1"
    [suite] = suites.findall("testsuite")
    cases = {case.get("name"): case for case in suite.findall("testcase")}
    assert sorted(cases) == ["clean.py", "train.py"]
    assert list(cases["clean.py"]) == []  # a test that passed
    failures = cases["train.py"].findall("failure")
    assert [failure.get("type") for failure in failures] == ["REP301", "REP203"]
    assert failures[1].get("message").startswith("REP203 `random_split` without `generator`")
    assert failures[1].text.startswith("train.py:9:18: REP203 ")
    assert (suite.get("tests"), suite.get("failures"), suite.get("errors"), suite.get("skipped")) == ("2", "1", "0", "0")


def test_junit_reports_files_repro_lint_failed_on_and_escapes_what_xml_cannot_hold(tmp_path):
    here = Position(1, 0)
    finding = Finding("REP301", "cudnn-benchmark-enabled", "quotes `a\x0cb` & <c>", "a.py", here, here)
    problems = [Problem("b.py", "error", "KeyError: 'x'", "Traceback ..."), Problem("c.yaml", "skipped", "too large")]
    suites = ET.fromstring(junit.render([finding], ReportContext(tmp_path, None, problems)))
    cases = {case.get("name"): case for case in suites.iter("testcase")}
    assert cases["a.py"].find("failure").get("message") == "REP301 quotes `a\N{REPLACEMENT CHARACTER}b` & <c>"
    assert cases["b.py"].find("error").get("message") == "KeyError: 'x'"
    assert cases["c.yaml"].find("skipped").get("message") == "too large"
    assert (suites.get("tests"), suites.get("failures"), suites.get("errors")) == ("3", "1", "1")


def _gitlab(*args: str) -> list[dict]:
    issues = json.loads(check("--output-format", "gitlab", *args)[1])
    jsonschema.validate(issues, GITLAB_SCHEMA)
    return issues


def test_gitlab_code_quality_has_the_required_fields(repo):
    issues = _gitlab(".")
    assert [(issue["check_name"], issue["location"]["path"], issue["location"]["lines"]["begin"]) for issue in issues] == [
        ("REP301", "train.py", 5),
        ("REP203", "train.py", 9),
    ]
    assert issues[1]["description"].startswith("REP203 `random_split` without `generator`")
    assert len({issue["fingerprint"] for issue in issues}) == 2
    assert _gitlab("clean.py") == []


def test_gitlab_fingerprints_are_stable_across_runs_and_line_moves(repo):
    before = [issue["fingerprint"] for issue in _gitlab(".")]
    assert [issue["fingerprint"] for issue in _gitlab(".")] == before
    (repo / "train.py").write_text("# a comment\n\n" + BAD.replace("torch.manual_seed(0)", "torch.manual_seed(0)\n    print('more')"))
    moved = _gitlab(".")
    assert [issue["location"]["lines"]["begin"] for issue in moved] == [7, 12]
    assert [issue["fingerprint"] for issue in moved] == before


def test_gitlab_fingerprints_tell_alike_findings_apart(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "t.py").write_text("import torch\ntorch.backends.cudnn.benchmark = True\ntorch.backends.cudnn.benchmark = True\nloss.backward()\n")
    assert len({issue["fingerprint"] for issue in _gitlab("t.py")}) == 2


def test_gitlab_names_files_from_the_repository_root(repo, monkeypatch):
    (repo / "pkg").mkdir()
    (repo / "pkg" / "pyproject.toml").write_text("")
    (repo / "pkg" / "train.py").write_text(BAD)
    monkeypatch.chdir(repo / "pkg")
    assert {issue["location"]["path"] for issue in _gitlab(".")} == {"pkg/train.py"}


# --- what is linted --------------------------------------------------------------------------------


def test_exclude_and_extend_exclude_on_the_command_line(repo):
    (repo / "old").mkdir()
    (repo / "old" / "train.py").write_text(BAD)
    (repo / "build").mkdir()
    (repo / "build" / "train.py").write_text(BAD)

    def paths(*args: str) -> set[str]:
        return {line.split(":")[0] for line in check("-q", *args, ".")[1].splitlines()}

    assert paths() == {"train.py", "old/train.py"}  # build/ is a default exclude
    assert paths("--extend-exclude", "old") == {"train.py"}
    assert paths("--exclude", "old") == {"train.py", "build/train.py"}  # replaces the defaults too
    assert paths("--exclude", "old,build", "--extend-exclude", "train.py") == set()
    (repo / "pyproject.toml").write_text("[project]\nname = 'demo'\n[tool.repro-lint]\nextend-exclude = ['old']\n")
    assert paths() == {"train.py"}
    assert paths("--extend-exclude", "build") == {"train.py"}  # adds to the configured ones
    assert paths("--exclude", "nothing") == {"train.py", "build/train.py"}  # the configured extension stays


def test_per_file_ignores_on_the_command_line(repo):
    (repo / "scripts").mkdir()
    (repo / "scripts" / "run.py").write_text(BAD)

    def found(*args: str) -> list[str]:
        return [line.split(": ")[0] + " " + line.split()[1] for line in check("-q", *args, ".")[1].splitlines()]

    assert len(found()) == 4
    assert found("--per-file-ignores", "scripts/*:REP2,REP3") == ["train.py:5:1 REP301", "train.py:9:18 REP203"]
    assert found("--per-file-ignores", "scripts/*:REP2,train.py:REP3") == ["scripts/run.py:5:1 REP301", "train.py:9:18 REP203"]
    (repo / "pyproject.toml").write_text("[project]\nname = 'demo'\n[tool.repro-lint.per-file-ignores]\n'train.py' = ['REP']\n")
    assert len(found()) == 2
    assert len(found("--per-file-ignores", "scripts/*:REP301")) == 3  # replaces the configured table, as Ruff's


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--per-file-ignores", "REP301"], "--per-file-ignores takes PATTERN:CODES"),
        (["--per-file-ignores", "tests/*:REP999"], "unknown rule code or prefix 'REP999' in --per-file-ignores tests/*"),
    ],
)
def test_bad_per_file_ignores_are_clear_errors(repo, args, message):
    status, _, err = check(*args, ".")
    assert status == 2 and message in err
