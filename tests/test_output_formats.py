"""The machine formats (SARIF for code scanning, GitHub workflow commands) and `--output-file`."""

from __future__ import annotations

import json
import os
import stat
import sys
from importlib import metadata
from pathlib import Path

import jsonschema
import pytest

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib

from click.testing import CliRunner
from conftest import SEEDED_PROGRAM_WITH_TWO_FINDINGS

from repro_lint.api import fix_source
from repro_lint.cli import main
from repro_lint.core import pages
from repro_lint.core.findings import Finding
from repro_lint.core.pages import page_text
from repro_lint.core.problems import Problem
from repro_lint.core.settings import Settings
from repro_lint.core.source import Position
from repro_lint.output import github, sarif
from repro_lint.output.context import ReportContext, repository_root
from repro_lint.rules.registry import REGISTRY

SCHEMA = json.loads((Path(__file__).resolve().parent / "sarif-schema-2.1.0.json").read_text(encoding="utf-8"))

BAD = SEEDED_PROGRAM_WITH_TWO_FINDINGS
SUMMARY = "Found 2 findings (1 fixable with --fix, 1 more with --fix --unsafe-fixes).\n"


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'demo'\n")
    (tmp_path / "train.py").write_text(BAD)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def check(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, ["check", *args])
    assert not isinstance(result.exception, Exception) or isinstance(result.exception, SystemExit), result.exception
    return result.exit_code, result.stdout, result.stderr


def validate(log: dict[str, object]) -> None:
    jsonschema.Draft4Validator(SCHEMA, format_checker=jsonschema.Draft4Validator.FORMAT_CHECKER).validate(log)


def apply_replacements(text: str, replacements: list[dict]) -> str:
    """Apply SARIF replacements the way a SARIF viewer would: 1-based lines and columns counting code
    points (the run says `unicodeCodePoints`), end column just past the region."""
    lines = text.splitlines(keepends=True)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))

    def offset(line: int, column: int) -> int:
        return starts[line - 1] + column - 1

    spans = [
        (offset(r["deletedRegion"]["startLine"], r["deletedRegion"]["startColumn"]),
         offset(r["deletedRegion"]["endLine"], r["deletedRegion"]["endColumn"]),
         r["insertedContent"]["text"])
        for r in replacements
    ]  # fmt: skip
    for start, end, content in sorted(spans, reverse=True):
        text = text[:start] + content + text[end:]
    return text


# --- SARIF -------------------------------------------------------------------------------------------


def test_sarif_is_valid_and_matches_the_json_findings(repo):
    code, out, _ = check("--output-format", "sarif", ".")
    assert code == 1
    log = json.loads(out)
    validate(log)
    assert log["version"] == "2.1.0" and len(log["runs"]) == 1
    run = log["runs"][0]
    driver = run["tool"]["driver"]
    assert driver["name"] == "repro-lint" and driver["version"] == metadata.version("repro-lint")
    assert run["columnKind"] == "unicodeCodePoints"

    _, json_out, _ = check("--output-format", "json", ".")
    findings = json.loads(json_out)
    assert [result["ruleId"] for result in run["results"]] == [finding["code"] for finding in findings] == ["REP301", "REP203"]
    for result, finding in zip(run["results"], findings):
        assert driver["rules"][result["ruleIndex"]]["id"] == result["ruleId"]
        assert result["level"] == "error" and result["message"]["text"] == finding["message"]
        location = result["locations"][0]["physicalLocation"]
        assert location["artifactLocation"]["uri"] == "train.py"
        region = location["region"]
        assert (region["startLine"], region["startColumn"], region["endLine"], region["endColumn"]) == (
            finding["line"], finding["column"], finding["end_line"], finding["end_column"]
        )
    assert run["results"][0]["locations"][0]["physicalLocation"]["region"] == {
        "startLine": 5, "startColumn": 1, "endLine": 5, "endColumn": 23
    }  # fmt: skip


def test_sarif_rules_come_from_the_rule_pages(repo):
    _, out, _ = check("--output-format", "sarif", ".")
    rules = json.loads(out)["runs"][0]["tool"]["driver"]["rules"]
    assert [rule["id"] for rule in rules] == ["REP203", "REP301"]  # the reported rules, sorted
    rule = rules[1]
    assert rule["name"] == REGISTRY["REP301"].name == "cudnn-benchmark-enabled"
    assert rule["shortDescription"]["text"] == (
        "Checks for `torch.backends.cudnn.benchmark` being set to anything that is not provably `False`, "
        "through any alias (`import torch.backends.cudnn as cudnn`, `from torch.backends import cudnn`)."
    )
    assert rule["fullDescription"]["text"].startswith(rule["shortDescription"]["text"] + " A value that is not a literal")
    assert rule["help"]["markdown"] == rule["help"]["text"] == page_text("REP301")
    # The pages are published nowhere yet (no `docs-url`, no project URL): no link, rather than a made-up one.
    assert pages.published_pages_url() is None
    assert "helpUri" not in rule
    _, out, _ = check("--output-format", "json", ".")
    assert [finding["url"] for finding in json.loads(out)] == [None, None]


def test_configured_docs_url_links_every_rule_page(repo):
    (repo / "pyproject.toml").write_text("[tool.repro-lint]\ndocs-url = 'https://docs.example.org/repro-lint/rules/'\n")
    _, out, _ = check("--output-format", "sarif", ".")
    log = json.loads(out)
    validate(log)
    rules = log["runs"][0]["tool"]["driver"]["rules"]
    assert [rule["helpUri"] for rule in rules] == [
        "https://docs.example.org/repro-lint/rules/REP203.md",
        "https://docs.example.org/repro-lint/rules/REP301.md",
    ]
    assert all(rule["help"]["markdown"] == page_text(rule["id"]) for rule in rules)  # the page stays inline
    _, out, _ = check("--output-format", "json", ".")
    assert [finding["url"] for finding in json.loads(out)] == [
        "https://docs.example.org/repro-lint/rules/REP301.md",
        "https://docs.example.org/repro-lint/rules/REP203.md",
    ]


class _Metadata:
    def __init__(self, urls: list[str]) -> None:
        self.urls = urls

    def get_all(self, name: str) -> list[str] | None:
        return self.urls if name == "Project-URL" else None


@pytest.mark.parametrize(
    "urls, expected",
    [
        (["Rules, https://example.org/rl/rules"], "https://example.org/rl/rules/REP301.md"),
        (["Source, https://example.org/rl", "rules, https://example.org/rl/pages/"], "https://example.org/rl/pages/REP301.md"),
        (["Source, https://example.org/rl", "Documentation, https://example.org/rl/docs"], None),
        (["Rules, rules/"], None),  # not an absolute address: no link
        ([], None),
    ],
)
def test_page_url_falls_back_to_the_package_metadata(monkeypatch, urls, expected):
    pages.published_pages_url.cache_clear()
    monkeypatch.setattr("importlib.metadata.metadata", lambda name: _Metadata(urls))
    try:
        assert pages.page_url("REP301", None) == expected
        # A configured `docs-url` wins over the metadata.
        assert pages.page_url("REP301", "https://mine.example/rules") == "https://mine.example/rules/REP301.md"
    finally:
        pages.published_pages_url.cache_clear()


def test_the_package_declares_no_rule_pages_url_unless_its_metadata_says_so():
    declared = tomllib.loads((Path(__file__).resolve().parent.parent / "pyproject.toml").read_text(encoding="utf-8"))
    urls = declared["project"].get("urls", {})
    labelled = [url for label, url in urls.items() if label.replace(" ", "").replace("-", "").lower() == pages.PAGES_URL_LABEL]
    assert pages.published_pages_url() == (labelled[0] if labelled else None)


def test_sarif_rule_without_a_page_falls_back_to_its_name(monkeypatch):
    monkeypatch.setattr(sarif, "page_text", lambda code: None)
    descriptor = sarif.rule_descriptor("REP301", None)
    assert descriptor["shortDescription"] == descriptor["fullDescription"] == {"text": "cudnn benchmark enabled"}
    assert "help" not in descriptor


@pytest.mark.parametrize("rule, unsafe", [("REP301", True), ("REP203", False)])
def test_sarif_fix_replacements_reproduce_the_fix(repo, rule, unsafe):
    _, out, _ = check("--output-format", "sarif", "--select", rule, ".")
    log = json.loads(out)
    validate(log)
    (result,) = log["runs"][0]["results"]
    (fix,) = result["fixes"]
    assert fix["properties"]["applicability"] == ("unsafe" if unsafe else "safe")
    (change,) = fix["artifactChanges"]
    assert change["artifactLocation"]["uri"] == "train.py"
    expected = fix_source(BAD, "train.py", Settings(select=(rule,)), unsafe=unsafe)
    assert expected != BAD
    assert apply_replacements(BAD, change["replacements"]) == expected


def test_sarif_program_level_fix_is_valid(tmp_path, monkeypatch):
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "train.py").write_text(
        "import torch\n\n\ndef main():\n    model = torch.nn.Linear(4, 2)\n    model(torch.randn(1, 4)).sum().backward()\n\n\n"
        'if __name__ == "__main__":\n    main()\n'
    )
    monkeypatch.chdir(tmp_path)
    _, out, _ = check("--output-format", "sarif", "--select", "REP101", ".")
    log = json.loads(out)
    validate(log)
    (result,) = log["runs"][0]["results"]
    assert result["ruleId"] == "REP101" and result["fixes"][0]["artifactChanges"][0]["replacements"]


def test_sarif_without_findings_is_valid(tmp_path, monkeypatch):
    (tmp_path / "clean.py").write_text("print('hello')\n")
    monkeypatch.chdir(tmp_path)
    code, out, _ = check("--output-format", "sarif", ".")
    log = json.loads(out)
    validate(log)
    assert code == 0
    assert log["runs"][0]["results"] == [] and log["runs"][0]["tool"]["driver"]["rules"] == []


def test_sarif_artifact_locations(tmp_path, monkeypatch):
    root = tmp_path.resolve()
    (root / "src").mkdir()
    monkeypatch.chdir(root / "src")
    assert sarif.artifact_location("my model.py", root) == {"uri": "src/my%20model.py", "uriBaseId": "%SRCROOT%"}
    assert sarif.artifact_location(str(root / "src" / "a.py"), root) == {"uri": "src/a.py", "uriBaseId": "%SRCROOT%"}
    assert sarif.artifact_location("../../a b/train.py", root) == {"uri": (root.parent / "a b" / "train.py").as_uri()}
    assert (root.parent / "a b" / "train.py").as_uri().endswith("/a%20b/train.py")


def _sub_repository(tmp_path: Path, git_marker: str) -> Path:
    """A repository whose code sits in `pkg/`, with its own pyproject.toml (a monorepo's package)."""
    if git_marker == "folder":
        (tmp_path / ".git").mkdir()
    else:  # a worktree or a submodule: `.git` is a file naming the git folder
        (tmp_path / ".git").write_text("gitdir: /elsewhere/.git/worktrees/x\n")
    (tmp_path / "pkg" / "deep").mkdir(parents=True)
    (tmp_path / "pkg" / "pyproject.toml").write_text("[project]\nname = 'pkg'\n")
    (tmp_path / "pkg" / "train.py").write_text(BAD)
    (tmp_path / "pkg" / "deep" / "bad.py").write_text("def broken(:\n")
    return tmp_path.resolve()


@pytest.mark.parametrize("git_marker", ["folder", "file"])
def test_sarif_names_files_from_the_repository_root_whatever_the_current_folder(tmp_path, monkeypatch, git_marker):
    root = _sub_repository(tmp_path, git_marker)
    logs = []
    for cwd, target in [(root, "pkg"), (root / "pkg", "."), (root / "pkg" / "deep", ".."), (root.parent, str(root / "pkg"))]:
        monkeypatch.chdir(cwd)
        code, out, _ = check("--output-format", "sarif", "--no-cache", target)
        assert code == 1
        log = json.loads(out)
        validate(log)
        # Results come in the order of the paths as given (`../train.py` sorts apart from `bad.py`).
        log["runs"][0]["results"].sort(key=lambda result: json.dumps(result, sort_keys=True))
        logs.append(log)
    assert all(log == logs[0] for log in logs)
    run = logs[0]["runs"][0]
    assert run["originalUriBaseIds"] == {"%SRCROOT%": {"uri": root.as_uri() + "/"}}
    locations = [result["locations"][0]["physicalLocation"]["artifactLocation"] for result in run["results"]]
    assert sorted(locations, key=lambda location: location["uri"]) == [
        {"uri": "pkg/deep/bad.py", "uriBaseId": "%SRCROOT%"},  # REP001: it does not parse
        {"uri": "pkg/train.py", "uriBaseId": "%SRCROOT%"},
        {"uri": "pkg/train.py", "uriBaseId": "%SRCROOT%"},
    ]
    fix_locations = [result["fixes"][0]["artifactChanges"][0]["artifactLocation"] for result in run["results"] if "fixes" in result]
    assert fix_locations == [{"uri": "pkg/train.py", "uriBaseId": "%SRCROOT%"}] * 2


def test_files_repro_lint_failed_on_are_named_from_the_repository_root(tmp_path, monkeypatch):
    root = _sub_repository(tmp_path, "folder")
    monkeypatch.chdir(root / "pkg")
    problems = [Problem("deep/bad.py", "error", "ValueError: x"), Problem("train.py", "skipped", "too large")]
    context = ReportContext(repository_root(Path(".")), None, problems)
    assert context.root == root
    log = sarif.sarif_log([], context)
    validate(log)
    notifications = log["runs"][0]["invocations"][0]["toolExecutionNotifications"]
    assert [notification["locations"][0]["physicalLocation"]["artifactLocation"] for notification in notifications] == [
        {"uri": "pkg/deep/bad.py", "uriBaseId": "%SRCROOT%"},
        {"uri": "pkg/train.py", "uriBaseId": "%SRCROOT%"},
    ]
    assert [line.split(",")[0] for line in github.render([], context).splitlines()] == [
        "::error file=pkg/deep/bad.py", "::warning file=pkg/train.py"
    ]  # fmt: skip


def test_sarif_without_a_repository_names_files_from_the_project_root(tmp_path, monkeypatch):
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "train.py").write_text(BAD)
    monkeypatch.chdir(tmp_path / "sub")
    log = json.loads(check("--output-format", "sarif", "--select", "REP301", ".")[1])
    validate(log)
    run = log["runs"][0]
    assert run["originalUriBaseIds"]["%SRCROOT%"]["uri"] == tmp_path.resolve().as_uri() + "/"
    assert run["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "sub/train.py"


# --- GitHub workflow commands ------------------------------------------------------------------------


def test_github_annotations(repo):
    code, out, _ = check("--output-format", "github", ".")
    assert code == 1
    assert out.splitlines() == [
        "::error file=train.py,line=5,col=1,endLine=5,endColumn=23,title=REP301 cudnn-benchmark-enabled::"
        "`cudnn.benchmark` is enabled: cuDNN picks kernels by timing them, so runs can differ",
        "::error file=train.py,line=9,col=18,endLine=9,endColumn=46,title=REP203 random-split-missing-generator::"
        "`random_split` without `generator` draws from torch's global RNG: earlier draws change the split",
    ]


def test_github_annotations_name_files_from_the_repository_root(tmp_path, monkeypatch):
    root = _sub_repository(tmp_path, "folder")
    outputs = []
    for cwd in (root, root / "pkg", root / "pkg" / "deep"):
        monkeypatch.chdir(cwd)
        outputs.append(sorted(check("--output-format", "github", "--no-cache", str(root / "pkg"))[1].splitlines()))
    assert outputs[0] == outputs[1] == outputs[2]
    assert [line.split(",")[0] for line in outputs[0]] == [
        "::error file=pkg/deep/bad.py", "::error file=pkg/train.py", "::error file=pkg/train.py"
    ]  # fmt: skip


def test_github_escaping():
    finding = Finding(
        "REP301", "cudnn-benchmark-enabled", "100% slower,\r\nmaybe: yes", "dir,a/b:c%.py", Position(3, 4), Position(3, 9)
    )
    assert github.annotation(finding, Path.cwd()) == (
        "::error file=dir%2Ca/b%3Ac%25.py,line=3,col=5,endLine=3,endColumn=10,"
        "title=REP301 cudnn-benchmark-enabled::100%25 slower,%0D%0Amaybe: yes"
    )


def test_github_without_findings_prints_nothing(tmp_path, monkeypatch):
    (tmp_path / "clean.py").write_text("print('hello')\n")
    monkeypatch.chdir(tmp_path)
    assert check("--output-format", "github", ".") == (0, "", "")


# --- --output-file -----------------------------------------------------------------------------------


@pytest.mark.parametrize("output_format", ["sarif", "json", "github", "text"])
def test_output_file_holds_the_report_and_the_terminal_the_summary(repo, output_format):
    _, printed, _ = check("--output-format", output_format, ".")
    code, out, _ = check("--output-format", output_format, "--output-file", "report.out", ".")
    assert code == 1
    assert out == SUMMARY
    assert (repo / "report.out").read_text(encoding="utf-8") == printed
    if output_format == "text":
        assert printed.endswith(SUMMARY)  # the text report keeps its summary line in the file too


def test_output_file_quiet_prints_nothing(repo):
    code, out, _ = check("--output-format", "sarif", "--output-file", "report.sarif", "--quiet", ".")
    assert (code, out) == (1, "")
    validate(json.loads((repo / "report.sarif").read_text(encoding="utf-8")))


def test_output_file_is_replaced_atomically_keeping_permissions(repo):
    report = repo / "report.sarif"
    report.write_text("stale")
    report.chmod(0o640)
    check("--output-format", "sarif", "--output-file", str(report), ".")
    assert json.loads(report.read_text(encoding="utf-8"))["version"] == "2.1.0"
    assert stat.S_IMODE(report.stat().st_mode) == 0o640
    # No temporary file is left behind (the analysis cache folder is expected).
    assert sorted(path.name for path in repo.iterdir() if path.name != ".repro_lint_cache") == [
        "pyproject.toml",
        "report.sarif",
        "train.py",
    ]


def test_new_output_file_gets_the_usual_permissions(repo):
    mask = os.umask(0o022)
    try:
        check("--output-format", "json", "--output-file", "report.json", ".")
    finally:
        os.umask(mask)
    assert stat.S_IMODE((repo / "report.json").stat().st_mode) == 0o644


def test_unwritable_output_file_exits_2(repo):
    code, out, err = check("--output-format", "sarif", "--output-file", "missing/report.sarif", ".")
    assert code == 2
    assert "cannot write missing/report.sarif" in err and "Traceback" not in err


def test_diff_goes_to_the_output_file(repo):
    code, out, _ = check("--diff", "--output-file", "fixes.diff", ".")
    assert (code, out) == (1, "")
    assert (repo / "fixes.diff").read_text().startswith("--- a/train.py\n+++ b/train.py\n")
    assert (repo / "train.py").read_text() == BAD
