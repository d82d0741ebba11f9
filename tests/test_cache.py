"""The analysis cache: same findings with and without it, survives damaged entries, follows edits."""

from __future__ import annotations

import os
import pickle
import random
import re
import subprocess
import sys
import textwrap
import time
from dataclasses import replace
from functools import partial
from pathlib import Path
from types import SimpleNamespace

import pytest

from repro_lint.analysis.python import analyze
from repro_lint.api import lint_paths
from repro_lint.core.settings import Settings
from repro_lint.core.source import read_source
from repro_lint.engine.cache import CACHE_FOLDER, AnalysisCache
from repro_lint.program.model import ProjectModel

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))

import bench  # noqa: E402

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
TRAIN = "import torch\nfrom torch.utils.data import random_split\nif __name__ == '__main__':\n    random_split(ds, [1, 1])\n    torch.nn.Linear(2, 2)(torch.ones(2)).sum().backward()\n"


def _lint(root, use_cache=True):
    return [(f.path, f.start.line, f.code, f.message) for f in lint_paths([root], Settings(), use_cache=use_cache).findings]


def test_cached_run_gives_the_same_findings(project):
    root = project({"train.py": TRAIN, "models/net.py": "import torch\ndef build():\n    return torch.nn.Linear(2, 2)\n"})
    fresh = _lint(root, use_cache=False)
    assert not (root / CACHE_FOLDER).exists()
    assert _lint(root) == fresh
    entries = list((root / CACHE_FOLDER).rglob("*.pickle"))
    assert len(entries) == 4  # each file's analysis, the run's findings, and what the project pass resolved
    assert (root / CACHE_FOLDER / ".gitignore").read_text().strip().endswith("*")
    assert _lint(root) == fresh  # from the cache


def test_unchanged_project_is_answered_from_the_last_run(project, monkeypatch):
    root = project({"train.py": TRAIN, "models/net.py": "import torch\ndef build():\n    return torch.nn.Linear(2, 2)\n"})
    fresh = _lint(root)

    def analysed(*args, **kwargs):
        raise AssertionError("an unchanged project was analysed again")

    monkeypatch.setattr(AnalysisCache, "load", analysed)
    monkeypatch.setattr("repro_lint.analysis.python.analyze", analysed)
    assert _lint(root) == fresh


HEAVY = ("libcst", "repro_lint.rules.registry", "repro_lint.probe", "multiprocessing", "importlib.metadata", "repro_lint.engine.audit", "repro_lint.engine.scorecard", "repro_lint.output.audit.report")

# Runs `check` in a fresh interpreter and says, after the report, which of the `listed` modules it loaded.
CHECK_AND_LIST_IMPORTS = """
import sys
from repro_lint.cli import main
try:
    main(["check", "--jobs", "1", "."])
except SystemExit:
    pass
print(sorted(name for name in {listed!r} if name in sys.modules))
"""


def _check_in_fresh_interpreter(root, listed: tuple[str, ...] = HEAVY) -> tuple[list[str], str]:
    script = CHECK_AND_LIST_IMPORTS.format(listed=listed)
    run = subprocess.run([sys.executable, "-c", script], cwd=root, capture_output=True, text=True, check=True)
    *report, loaded = run.stdout.splitlines()
    return report, loaded


def test_unchanged_project_is_answered_without_loading_libcst_the_rules_or_a_pool(project):
    root = project({"train.py": TRAIN, "models/net.py": "import torch\ndef build():\n    return torch.nn.Linear(2, 2)\n"})
    cold_report, cold_loaded = _check_in_fresh_interpreter(root)
    assert cold_loaded == "['libcst', 'repro_lint.rules.registry']"
    warm_report, warm_loaded = _check_in_fresh_interpreter(root)
    assert warm_loaded == "[]"
    assert warm_report == cold_report
    assert any("REP203" in line for line in warm_report)


SCANNERS = ("repro_lint.sources.configs", "repro_lint.sources.shell_scan", "repro_lint.sources.shell_syntax", "tree_sitter")


def test_a_python_file_read_again_loads_no_scanner_of_launch_scripts_or_configs(project):
    """Which scanner reads a file is asked of every file read: for a Python file, the answer needs
    none of them (nor the shell parser), which a one-file edit after an audit would load for nothing."""
    root = project({"train.py": TRAIN, "models/net.py": "import torch\ndef build():\n    return torch.nn.Linear(2, 2)\n"})
    _check_in_fresh_interpreter(root, SCANNERS)
    (root / "train.py").write_text(TRAIN + "# edited\n")
    _, loaded = _check_in_fresh_interpreter(root, ("libcst", *SCANNERS))
    assert loaded == "['libcst']"  # the file was analysed again, and no scanner loaded


DETERMINISTIC_ON_CUDA = textwrap.dedent("""
    import torch

    def train():
        torch.manual_seed(0)
        torch.use_deterministic_algorithms(True)
        model = torch.nn.Conv2d(3, 3, 3).cuda()
        model(torch.ones(1, 3, 4, 4).cuda()).sum().backward()

    if __name__ == "__main__":
        train()
""")


def test_last_run_is_not_reused_when_the_declared_torch_version_changes(project):
    root = project({"train.py": DETERMINISTIC_ON_CUDA, "requirements.txt": "torch==2.1.0\n"})
    assert "REP304" in [code for _, _, code, _ in _lint(root)]  # CUBLAS_WORKSPACE_CONFIG is needed before 2.10
    (root / "requirements.txt").write_text("torch==2.12.0\n")
    assert "REP304" not in [code for _, _, code, _ in _lint(root)]
    assert _lint(root) == _lint(root, use_cache=False)


@pytest.mark.parametrize(
    ("before", "after", "reused"),
    [
        ("torch==2.11.0\n", "torch==2.12.0\n", True),  # past every version the rules compare with
        ("torch>=1.10\n", "torch==2.1.0\n", True),  # between 1.9 and 2.10, and no finding shows it
        ("torch==2.1.0\n", "torch==2.12.0\n", False),  # across 2.10 (cuBLAS)
        ("torch==1.8.0\n", "torch==2.1.0\n", False),  # across 1.9 (workers reseed numpy)
        ("torch==2.1.0\n", "torch\n", False),  # none declared
    ],
)
def test_a_declared_torch_version_changed_reuses_the_pass_where_the_rules_read_it_alike(project, monkeypatch, before, after, reused):
    root = project({**TRAIN_ON_HELPERS, "requirements.txt": before})
    _full(root)
    (root / "requirements.txt").write_text(after)
    (_reuses_the_pass if reused else _runs_the_pass_again)(root, monkeypatch)


def test_a_declared_torch_version_a_finding_shows_runs_the_pass_when_it_changes(project, monkeypatch):
    root = project({"train.py": DETERMINISTIC_ON_CUDA, "requirements.txt": "torch==2.1.0\n"})
    assert "torch 2.1.0 raises" in " ".join(message for _, _, _, message in _full(root))  # REP304
    (root / "requirements.txt").write_text("torch==2.2.0\n")
    _runs_the_pass_again(root, monkeypatch)


def _undeclared(monkeypatch):
    def read(path):
        raise AssertionError(f"{path} was read")

    monkeypatch.setattr("repro_lint.program.requirements._read", read)


def _declarations_read(monkeypatch) -> list[Path]:
    from repro_lint.program import requirements

    read_text = requirements._read
    read = []

    def recording(path):
        read.append(path)
        return read_text(path)

    monkeypatch.setattr(requirements, "_read", recording)
    return read


def test_declarations_whose_files_are_unchanged_are_not_read_again(project, old_files, monkeypatch):
    root = project({**TRAIN_ON_HELPERS, "requirements.txt": "torch==2.11.0\n"})
    fresh = _full(root)
    with monkeypatch.context() as patched:
        _undeclared(patched)
        assert _full(root) == fresh


def test_declarations_touched_without_change_are_read_once_then_known_by_their_stamps(project, old_files, monkeypatch):
    root = project({**TRAIN_ON_HELPERS, "requirements.txt": "torch==2.11.0\n"})
    fresh = _full(root)
    later = (root / "requirements.txt").stat().st_mtime_ns + 10**9
    os.utime(root / "requirements.txt", ns=(later, later))  # a checkout rewrites it with the same text
    with monkeypatch.context() as patched:
        read = _declarations_read(patched)
        assert _full(root) == fresh
        assert root / "requirements.txt" in read
    with monkeypatch.context() as patched:
        _undeclared(patched)
        assert _full(root) == fresh


def test_a_pass_run_again_takes_the_declarations_of_the_run_before_where_their_files_are_unchanged(project, old_files, monkeypatch):
    root = project({**TRAIN_ON_HELPERS, "requirements.txt": "torch==2.11.0\n"})
    _full(root)
    _edit(root, "models/net.py", "    return random_split", "    torch.manual_seed(0)\n    return random_split")
    _runs_the_pass_again(root, monkeypatch)
    _edit(root, "models/net.py", "torch.manual_seed(0)", "torch.manual_seed(1)\n    torch.manual_seed(2)")
    expected = _full(root, use_cache=False)
    with monkeypatch.context() as patched:
        _undeclared(patched)
        assert _full(root) == expected


def test_a_pass_run_again_with_its_declarations_changed_reads_them(project, old_files, monkeypatch):
    root = project({"train.py": DETERMINISTIC_ON_CUDA, "requirements.txt": "torch==2.1.0\n"})
    assert "REP304" in [code for _, _, code, _ in _lint(root)]  # CUBLAS_WORKSPACE_CONFIG is needed before 2.10
    _edit(root, "train.py", "    torch.manual_seed(0)", "    helper()\n    torch.manual_seed(0)")
    _edit(root, "train.py", "def train():", "def helper():\n    torch.cuda.manual_seed(1)\n\ndef train():")
    (root / "requirements.txt").write_text("torch==2.12.0\n")
    expected = _lint(root, use_cache=False)
    assert "REP304" not in [code for _, _, code, _ in expected]
    assert _lint(root) == expected  # the pass runs again (the helper seeds), and reads them again


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("requirements-dev.txt", "torch==1.8.0\n"),  # a file added where the folder is listed
        ("requirements.txt", "torch==1.8.0\n"),  # a file changed
        ("pyproject.toml", '[project]\nname = "x"\ndependencies = ["torch==1.8.0"]\n'),  # a file looked for, added
        ("shared/base.txt", "torch==1.8.0\n"),  # a file included, added in a folder added
    ],
)
def test_a_declaration_added_or_changed_after_a_run_is_read(project, old_files, monkeypatch, name, text):
    root = project({**TRAIN_ON_HELPERS, "requirements.txt": "-r shared/base.txt\ntorch==2.11.0\n"})
    _full(root)
    (root / name).parent.mkdir(exist_ok=True)
    (root / name).write_text(text)
    _runs_the_pass_again(root, monkeypatch)  # 1.8 is before 1.9, where workers reseed numpy


@pytest.mark.parametrize(
    ("name", "before"),
    [
        ("configs/train.env", None),  # added in a folder the scan lists
        ("configs/train.env", "OMP_NUM_THREADS=1\n"),  # changed
    ],
)
def test_a_config_setting_the_cublas_variable_after_a_run_is_read(project, old_files, name, before):
    files = {"train.py": DETERMINISTIC_ON_CUDA, "requirements.txt": "torch==2.1.0\n", "configs/README.md": "configs\n"}
    root = project({**files, **({name: before} if before is not None else {})})
    assert "REP304" in [code for _, _, code, _ in _lint(root)]  # before 2.10, CUBLAS_WORKSPACE_CONFIG is needed
    (root / name).write_text("CUBLAS_WORKSPACE_CONFIG=:4096:8\n")
    assert "REP304" not in [code for _, _, code, _ in _lint(root)]
    assert _lint(root) == _lint(root, use_cache=False)


def test_last_run_is_not_reused_with_other_settings(project):
    root = project({"train.py": TRAIN})
    assert "REP203" in [code for _, _, code, _ in _lint(root)]
    ignoring = [f.code for f in lint_paths([root], Settings(ignore=("REP203",)), use_cache=True).findings]
    assert "REP203" not in ignoring


def test_edited_file_is_analysed_again(project):
    root = project({"train.py": TRAIN})
    assert "REP203" in [code for _, _, code, _ in _lint(root)]
    (root / "train.py").write_text(TRAIN.replace("[1, 1])", "[1, 1], generator=g)"))
    assert "REP203" not in [code for _, _, code, _ in _lint(root)]


def test_damaged_entries_are_ignored_and_rebuilt(project):
    root = project({"train.py": TRAIN})
    fresh = _lint(root)
    for entry in (root / CACHE_FOLDER).rglob("*.pickle"):
        entry.write_bytes(entry.read_bytes()[:10])
    assert _lint(root) == fresh
    for entry in (root / CACHE_FOLDER).rglob("*.pickle"):
        entry.write_bytes(b"not a pickle at all")
    assert _lint(root) == fresh


def _clean(*args: str):
    from click.testing import CliRunner

    from repro_lint.cli import main

    return CliRunner().invoke(main, ["clean", *args])


def test_clean_removes_the_cache_of_the_project_of_a_path(project):
    root = project({"train.py": TRAIN, "models/net.py": "x = 1\n"})
    _lint(root)
    assert (root / CACHE_FOLDER).is_dir()
    result = _clean(str(root / "models" / "net.py"))
    assert result.exit_code == 0
    assert result.output == f"removed {root / CACHE_FOLDER}\n"
    assert not (root / CACHE_FOLDER).exists()
    assert (root / "train.py").read_text() == TRAIN  # only the cache goes
    assert _clean(str(root)).output == "no cache to remove\n"


def test_clean_removes_caches_of_projects_inside_a_folder(tmp_path):
    for name in ("one", "two"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "pyproject.toml").write_text("")
        (tmp_path / name / "train.py").write_text(TRAIN)
        _lint(tmp_path / name)
    result = _clean(str(tmp_path))
    assert result.exit_code == 0
    assert result.output.splitlines() == [f"removed {tmp_path / name / CACHE_FOLDER}" for name in ("one", "two")]
    assert not list(tmp_path.rglob(CACHE_FOLDER))


def test_clean_of_a_missing_path_is_a_clear_error(tmp_path):
    result = _clean(str(tmp_path / "nowhere"))
    assert result.exit_code == 2
    assert "nowhere: no such file or folder" in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)


@pytest.fixture
def old_files(monkeypatch):
    """As if every file had last changed long before the run: their times are then trusted."""
    monkeypatch.setattr("repro_lint.core.stamps.CLOCK_TICK_NS", -3600 * 10**9)


def _unreadable(monkeypatch):
    def read(path):
        raise AssertionError(f"{path} was read")

    monkeypatch.setattr("repro_lint.engine.modules.read_source", read)


def test_unchanged_old_files_are_answered_without_reading_them(project, old_files, monkeypatch):
    root = project({"train.py": TRAIN, "models/net.py": "import torch\n"})
    fresh = _lint(root)
    _unreadable(monkeypatch)
    assert _lint(root) == fresh


def test_files_touched_without_change_are_read_once_then_answered_by_their_times(project, old_files, monkeypatch):
    root = project({"train.py": TRAIN})
    fresh = _lint(root)
    later = (root / "train.py").stat().st_mtime_ns + 10**9
    os.utime(root / "train.py", ns=(later, later))  # a checkout rewrites files with the same text
    assert _lint(root) == fresh
    _unreadable(monkeypatch)
    assert _lint(root) == fresh


def test_a_file_changed_within_the_clock_tick_of_its_time_is_read(project, monkeypatch):
    # On a coarse file-system clock a file edited just after a run keeps its size and times: the run
    # must not have trusted times that recent, and reads the text.
    now = time.time_ns()
    recent = SimpleNamespace(st_size=1, st_mtime_ns=now, st_ctime_ns=now, st_ino=1)
    monkeypatch.setattr("repro_lint.core.stamps.os", SimpleNamespace(stat=lambda path: recent))
    root = project({"train.py": TRAIN})
    assert "REP203" in [code for _, _, code, _ in _lint(root)]
    (root / "train.py").write_text(TRAIN.replace("random_split(ds, [1, 1])", "print(ds, [11, 1, 1, 1])"))
    assert "REP203" not in [code for _, _, code, _ in _lint(root)]


def test_fixes_shown_as_a_diff_are_not_recorded_as_the_files_findings(project, old_files):
    root = project({"train.py": TRAIN})
    fresh = _lint(root)
    cached = lint_paths([root], Settings(), diff=True, use_cache=True)
    uncached = lint_paths([root], Settings(), diff=True)
    assert cached.diffs == uncached.diffs != []
    assert cached.findings == uncached.findings
    assert _lint(root) == fresh == _lint(root, use_cache=False)


# An unseeded CUDA training script and its helpers: program findings (REP101, REP302), local ones that
# the program model keeps (REP301 only in training code), an unused `noqa` (REP002).
TRAIN_ON_HELPERS = {
    "train.py": textwrap.dedent("""\
        import torch
        import torch.backends.cudnn as cudnn
        from torch.utils.data import DataLoader

        from models.net import build, split

        cudnn.benchmark = True  # speed


        def main():
            model = build()
            train, val = split(range(10))
            loader = DataLoader(train, shuffle=True, num_workers=2)  # noqa: REP203
            for batch in loader:
                model(batch).sum().backward()


        if __name__ == "__main__":
            main()
    """),
    "models/net.py": textwrap.dedent("""\
        import torch
        from torch.utils.data import random_split


        def build():
            return torch.nn.Linear(2, 2).cuda()


        def split(data):
            return random_split(data, [0.5, 0.5])
    """),
}
WITH_LAYERS = {**TRAIN_ON_HELPERS, "models/layers.py": "import torch\nrelu = torch.nn.ReLU()\n"}  # a module no edit touches
WITH_REP002 = Settings(extend_select=("REP002",))


def _full(root, use_cache=True):
    return [(f.path, f.start.line, f.code, f.message) for f in lint_paths([root], WITH_REP002, use_cache=use_cache).findings]


def _edit(root, name, old, new):
    path = root / name
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new, 1))


class ProjectPassRan(BaseException):
    """Not an Exception: the engine reports those and goes on, and this must end the run."""


def _forbid_project_pass(monkeypatch):
    def build(*args, **kwargs):
        raise ProjectPassRan("the project pass ran")

    monkeypatch.setattr("repro_lint.program.model.ProjectModel.__init__", build)


# A program training at module level (its findings are reported at line 1), and one seeding after a draw
# (REP105, whose fix moves the seeding up: it removes the statement's lines, up to the next line's start).
WITH_MODULE_LEVEL = {
    **TRAIN_ON_HELPERS,
    "scripts/quick.py": "import torch\n\nfrom models.net import build\n\nbuild()(torch.ones(2)).sum().backward()\n",
    "scripts/late.py": (
        "import torch\n\n\ndef main():\n    noise = torch.rand(2)\n    torch.manual_seed(0)\n    return noise\n\n\n"
        "if __name__ == '__main__':\n    main()\n    torch.ones(1).sum().backward()\n"
    ),
}
_EDITS_MOVING_LINES = [
    ("train.py", "import torch\n", "# Moved.\nimport torch\n"),  # above every program finding and fix edit
    ("train.py", "\n\ndef main", "\n\n# Main.\ndef main"),  # between the places of REP101's fix
    ("train.py", "    for batch", "    # Batches.\n    for batch"),
    ("train.py", "if __name__", "# Run.\nif __name__"),
    ("models/net.py", "import torch\n", "# Moved.\nimport torch\n"),  # where REP302's message points
    ("scripts/late.py", "\n\ndef main", "\n\n# Main.\ndef main"),  # the seeding REP105 moves, and where it goes
    ("scripts/late.py", "import torch\n", "import torch  # Moved.\n\n"),
]


@pytest.mark.parametrize(("name", "old", "new"), _EDITS_MOVING_LINES)
def test_lines_moved_where_the_passs_findings_are_move_them_along(project, monkeypatch, name, old, new):
    """The findings of the pass in the file, their fixes' edits, and the lines their messages name
    there move with the lines: as a run without the cache gives them, fixes included."""
    root = project(WITH_MODULE_LEVEL)
    before = lint_paths([root], WITH_REP002, use_cache=True).findings
    _edit(root, name, old, new)
    expected = lint_paths([root], WITH_REP002).findings
    assert {finding.code for finding in expected} >= {"REP101", "REP105", "REP302"}
    assert expected != before
    with monkeypatch.context() as patched:
        _forbid_project_pass(patched)
        assert lint_paths([root], WITH_REP002, use_cache=True).findings == expected
    assert lint_paths([root], WITH_REP002, use_cache=True).findings == expected


@pytest.mark.parametrize("source", ["fixture", "image_classifier", "tabular"])
def test_a_comment_line_added_anywhere_gives_what_the_pass_gives(project, monkeypatch, source):
    """The claim `moved_along` rests on, tried at lines spread over every module of projects whose
    programs the rules judge: each edit gives what a run without the cache gives, fixes included; and
    where the pass's findings are in the file, they are moved along (the pass does not run) mostly."""
    if source == "fixture":
        root = project(WITH_MODULE_LEVEL)
    else:
        root = project({path.relative_to(EXAMPLES / source).as_posix(): path.read_text() for path in (EXAMPLES / source).rglob("*.py")})
    passes = []
    real = ProjectModel.__init__
    monkeypatch.setattr(ProjectModel, "__init__", lambda self, *args, **kwargs: passes.append(1) or real(self, *args, **kwargs))
    moved = tried = 0
    for path in sorted(root.rglob("*.py")):
        original = path.read_text()
        lines = original.splitlines(keepends=True)
        for at in sorted({len(lines) * step // 5 for step in range(5)}):
            indent = lines[at][: len(lines[at]) - len(lines[at].lstrip())] if lines[at].strip() else ""
            edited = "".join([*lines[:at], f"{indent}# A note.\n", *lines[at:]])
            before = lint_paths([root], WITH_REP002, use_cache=True).findings
            path.write_text(edited)
            expected = lint_paths([root], WITH_REP002).findings
            del passes[:]
            assert lint_paths([root], WITH_REP002, use_cache=True).findings == expected, edited
            if any(finding.path == str(path) for finding in before) and expected != before:
                tried += 1
                moved += not passes
            path.write_text(original)
    assert tried and 2 * moved >= tried


def test_line_1_moved_where_a_program_is_reported_for_want_of_a_main_guard_runs_the_pass(project, monkeypatch):
    """`scripts/quick.py` trains at module level: its findings are at line 1 whatever its lines hold."""
    root = project(WITH_MODULE_LEVEL)
    assert any(finding.path.endswith("quick.py") and finding.start.line == 1 for finding in lint_paths([root], WITH_REP002, use_cache=True).findings)
    _edit(root, "scripts/quick.py", "import torch\n", "# Moved.\nimport torch\n")
    _runs_the_pass_again(root, monkeypatch)


@pytest.mark.parametrize(
    ("name", "old", "new"),
    [
        ("train.py", "# speed", "# speed, measured"),  # a comment
        ("train.py", "cudnn.benchmark = True  # speed", "cudnn.benchmark = False"),  # a local finding goes
        ("train.py", "# noqa: REP203", "# noqa: REP202"),  # the noqa now silences a finding
        ("train.py", "range(10)", "range(12)"),
        ("models/net.py", "[0.5, 0.5]", "[0.8, 0.2]"),
    ],
)
def test_changed_files_that_keep_their_facts_reuse_the_project_pass(project, monkeypatch, name, old, new):
    root = project(TRAIN_ON_HELPERS)
    before = _full(root)
    assert {code for _, _, code, _ in before} == {"REP101", "REP202", "REP203", "REP301", "REP302", "REP002"}
    _edit(root, name, old, new)
    expected = _full(root, use_cache=False)
    with monkeypatch.context() as patched:
        _forbid_project_pass(patched)
        assert _full(root) == expected
    assert _full(root) == expected  # the record the reuse stored answers the next run


def test_a_change_to_the_facts_runs_the_project_pass(project, monkeypatch):
    root = project(TRAIN_ON_HELPERS)
    _full(root)
    _edit(root, "train.py", "def main():\n", "def main():\n    torch.manual_seed(0)\n")
    expected = _full(root, use_cache=False)
    assert "REP101" not in [code for _, _, code, _ in expected]
    with monkeypatch.context() as patched:
        _forbid_project_pass(patched)
        with pytest.raises(ProjectPassRan):
            _full(root)
    assert _full(root) == expected


# A module whose one finding asks the program model a question: REP301 fires in training code only.
WITH_TUNING = {**WITH_LAYERS, "models/tuning.py": "import torch\n\n\ndef fast():\n    torch.backends.cudnn.benchmark = True\n"}
# And a module with a class, a function nothing calls, and calls of functions it does not define.
WITH_HELPERS = {
    **WITH_TUNING,
    "models/helpers.py": (
        "import torch\nimport models.helpers\n\n\nclass Tuner:\n    def tune(self):\n        return 1\n\n\ndef unused():\n    return 1\n\n\n"
        "def later():\n    return describe()\n\n\ndef sooner():\n    return models.helpers.ready()\n\n\ndef reseed():\n    torch.manual_seed(0)\n"
    ),
}


@pytest.mark.parametrize(
    ("name", "old", "new"),
    [
        # Lines moved.
        ("models/layers.py", "import torch\n", "# Layers.\nimport torch\n"),
        ("models/tuning.py", "import torch\n", '"""Tuning."""\n\nimport torch\n'),  # REP301 moves
        ("models/tuning.py", "    torch", "    # Faster convolutions.\n\n    torch"),  # within its function
        # Calls the pass cannot see.
        ("models/layers.py", "relu = ", "print('layers')\nrelu = "),  # a builtin
        ("models/tuning.py", "    torch.backends", "    torch.cuda.empty_cache()\n    torch.backends"),  # a library's
        ("models/tuning.py", "\ndef fast", "\nlogger.info('tuning')\n\n\ndef fast"),  # no project function is named `info`
        # Imports of library modules, and the names they bind.
        ("models/layers.py", "import torch\n", "import math\nimport torch\n"),
        ("models/tuning.py", "import torch\n", "import torch\nfrom collections import OrderedDict as Ordered\nfrom math import *\n"),
        ("models/tuning.py", "    torch.backends", "    import math\n    math.sqrt(2)\n    torch.backends"),
        # A class added, imports of project modules and the names they bind, in modules no program
        # reaches (nothing imports models/helpers.py or models/tuning.py).
        ("models/helpers.py", "    def tune", "    class Inner:\n        def step(self):\n            return 1\n\n    def tune"),
        ("models/tuning.py", "import torch\n", "import torch\nimport models.layers\n"),
        ("models/tuning.py", "import torch\n", "import torch\nfrom models.layers import relu\n"),
        # What fixes of findings in the file would reuse (`os` before `torch`, `np`): none is there.
        ("models/tuning.py", "import torch\n", "import os\nimport torch\n"),
        ("models/layers.py", "relu = ", "import numpy as np\nrelu = "),
        # Functions added that nothing names, calling nothing the pass sees.
        ("models/tuning.py", "\n\ndef fast", "\n\ndef summary():\n    return 'tuning'\n\n\ndef fast"),  # lines moved
        ("models/layers.py", "relu = ", "def flush():\n    print('flush')\n    torch.cuda.empty_cache()\n\n\nrelu = "),
        ("models/helpers.py", "def unused", "def outer():\n    def inner():\n        return 2\n\n    return 1\n\n\ndef unused"),
        # Functions removed or renamed that nothing named.
        ("models/helpers.py", "def unused():\n    return 1\n", ""),
        ("models/helpers.py", "def unused():", "def still_unused():"),
        # Such functions added with calls that only run them: they run nothing the pass sees.
        ("models/layers.py", "relu = ", "def flush():\n    print('flush')\n\n\nflush()\nrelu = "),  # at module level
        ("models/tuning.py", "\n\ndef fast():\n", "\n\ndef summary():\n    return 'tuning'\n\n\ndef fast():\n    summary()\n"),
        ("models/helpers.py", "def unused", "def ready():\n    return 2\n\n\ndef unused"),  # called through the module's own name
        ("models/helpers.py", "def unused", "def go():\n    return 1\n\n\ngo(); go()\n\n\ndef unused"),  # twice on a line
        ("models/helpers.py", "def unused", "def describe():\n    return 2\n\n\ndef unused"),  # called above in the file
        # Such functions calling each other: together they run nothing the pass sees.
        ("models/helpers.py", "def unused", "def go():\n    return step()\n\n\ndef step():\n    return 1\n\n\ngo()\n\n\ndef unused"),
        ("models/helpers.py", "def unused", "def ping(n):\n    return pong(n - 1) if n else 0\n\n\ndef pong(n):\n    return ping(n)\n\n\nping(3)\n\n\ndef unused"),
        ("models/helpers.py", "def unused", "def outer():\n    def inner():\n        return 2\n\n    return inner()\n\n\nouter()\n\n\ndef unused"),
        ("models/layers.py", "relu = ", "def flush():\n    sync()\n\n\ndef sync():\n    print('sync')\n\n\nflush()\nrelu = "),
        # Methods: added, nothing naming them; called through `self.` (any method of the name) from one
        # that stays and from each other; called through their class; removed.
        ("models/helpers.py", "    def tune", "    def step(self):\n        return 1\n\n    def tune"),
        ("models/helpers.py", "        return 1\n\n\ndef unused", "        return self.summary()\n\n    def summary(self):\n        return self.detail()\n\n    def detail(self):\n        return 1\n\n\ndef unused"),
        ("models/helpers.py", "    def tune", "    @staticmethod\n    def summary():\n        return 1\n\n    def tune"),
        ("models/helpers.py", "\n\ndef unused", "\n    @staticmethod\n    def summary():\n        return 1\n\n\nTuner.summary()\n\n\ndef unused"),
        ("models/helpers.py", "    def tune(self):\n        return 1\n", "    pass\n"),
        # Calls of project functions that run nothing the pass sees (program/quiet.py): from a method
        # added, from a function added, from one that stays.
        ("models/helpers.py", "    def tune", "    def step(self):\n        return later()\n\n    def tune"),
        ("models/helpers.py", "def unused", "def go():\n    step()\n\n\ndef step():\n    later()\n\n\ngo()\n\n\ndef unused"),
        ("models/helpers.py", "        return 1\n\n\ndef unused", "        return unused() + sooner()\n\n\ndef unused"),
        # Functions added that nothing reaches, calling a project function that seeds: a caller more
        # of a function changes nothing where the pass reads none of that function's callers.
        ("models/helpers.py", "    def tune", "    def step(self):\n        return reseed()\n\n    def tune"),
        ("models/helpers.py", "def unused", "def go():\n    reseed()\n\n\ndef unused"),
        # Arguments of project calls, where no project function takes a setting from its caller.
        ("models/helpers.py", "return models.helpers.ready()", "return (models.helpers.ready())"),  # moved within its line
        ("models/helpers.py", "return describe()", "return describe(dataset=1)"),  # a word dataset facts look for, and none
    ],
)
def test_edits_the_project_pass_cannot_see_reuse_it(project, monkeypatch, name, old, new):
    root = project(WITH_HELPERS)
    _full(root)
    _edit(root, name, old, new)
    expected = _full(root, use_cache=False)
    assert [code for path, _, code, _ in expected if path.endswith("tuning.py")] == ["REP301"]
    with monkeypatch.context() as patched:
        _forbid_project_pass(patched)
        assert _full(root) == expected
    assert _full(root) == expected


@pytest.mark.parametrize(
    ("name", "old", "new"),
    [
        ("models/tuning.py", "    torch.backends", "    fast()\n    torch.backends"),  # a call of a project function
        ("models/tuning.py", "    torch.backends", "    loader.set_epoch(0)\n    torch.backends"),  # what the epoch condition looks for
        # Functions added that the pass may see.
        # Methods added that the pass may see.
        ("models/helpers.py", "    def tune", "    def forward(self, x):\n        return x\n\n    def tune"),  # run by calling the instance
        ("models/helpers.py", "    def tune", "    def __enter__(self):\n        return self\n\n    def tune"),  # run by Python
        ("models/helpers.py", "    def tune", "    def set_epoch(self, epoch):\n        return epoch\n\n    def tune"),  # its calls are read
        ("models/helpers.py", "    def tune", "    def backward(self):\n        return 1\n\n    def tune"),  # any `obj.backward()` in train.py
        ("models/helpers.py", "    def tune", "    def reseed(self):\n        torch.manual_seed(0)\n\n    def tune"),  # an event
        ("models/helpers.py", "        return 1\n\n\ndef unused", "        return self.summary\n\n    def summary(self):\n        return 1\n\n\ndef unused"),  # named, not called
        ("models/net.py", "\n\ndef build", "\n\nclass Inner:\n    def step(self):\n        return 1\n\n\ndef build"),  # in a class added: classes are facts
        ("models/helpers.py", "def unused", "def seed():\n    torch.manual_seed(0)\n\n\ndef unused"),  # an event
        ("models/helpers.py", "def unused", "def go():\n    loss.backward()\n\n\ndef unused"),  # training
        ("models/layers.py", "relu = ", "def main():\n    return 1\n\n\nrelu = "),  # a name train.py uses
        # Functions added with calls, where the pass may see them.
        ("models/helpers.py", "def unused", "def go():\n    reseed()\n\n\ngo()\n\n\ndef unused"),  # it calls a project function that seeds
        ("models/helpers.py", "def unused", "def go():\n    return 1\n\n\ngo()\nhandler = go\n\n\ndef unused"),  # named beside the call
        ("models/helpers.py", "def unused", "def go():\n    return 1\n\n\nregister(go)\n\n\ndef unused"),  # handed over
        ("models/helpers.py", "def unused", "def go():\n    return 1\n\n\ngo(go)\n\n\ndef unused"),  # called and handed over
        ("models/helpers.py", "def unused", "def go():\n    return 1\n\n\nfast = torch.compile(go)\n\n\ndef unused"),  # wrapped
        ("models/helpers.py", "def unused", "def go(name):\n    globals()[name]()\n\n\ngo('x')\n\n\ndef unused"),  # it may run anything
        ("models/tuning.py", "\n\ndef fast():\n", "\n\ndef summary():\n    return 'tuning'\n\n\ndef fast():\n    summary()\n    print(summary)\n"),
        ("models/tuning.py", "\ndef fast():\n", "\ndef fast():\n    def inner():\n        return 2\n\n"),  # within a function that stays
        # Functions added calling each other, where the pass may see one of them.
        ("models/helpers.py", "def unused", "def go():\n    step()\n\n\ndef step():\n    reseed()\n\n\ngo()\n\n\ndef unused"),  # a project function
        ("models/helpers.py", "def unused", "def go():\n    step()\n\n\ndef step():\n    torch.manual_seed(0)\n\n\ngo()\n\n\ndef unused"),  # an event
        ("models/helpers.py", "def unused", "def go():\n    register(step)\n\n\ndef step():\n    return 1\n\n\ngo()\n\n\ndef unused"),  # handed over
        ("models/helpers.py", "def unused", "def go():\n    reseed()\n\n\ndef step():\n    return 1\n\n\ngo()\n\n\ndef unused"),  # one that stays, and seeds
        # A function whose calls the pass reads by its name (`obj.set_epoch(...)`, for the epoch condition).
        ("models/helpers.py", "def unused", "def set_epoch(epoch):\n    return epoch\n\n\nmodels.helpers.set_epoch(0)\n\n\ndef unused"),
    ],
)
def test_edits_the_project_pass_may_see_run_it(project, monkeypatch, name, old, new):
    root = project(WITH_HELPERS)
    _full(root)
    _edit(root, name, old, new)
    _runs_the_pass_again(root, monkeypatch)


# A program loading a chain of modules (train -> top -> stack -> layers, top -> report -> helpers ->
# draws), one calling at module level a name `models.helpers` does not bind (yet), and star imports
# (top -> chain -> star -> helpers), star binding two names itself (to a variable, to a function).
# Binding those names in helpers to `reseed` would seed the program, but where star's binding decides.
WITH_IMPORTS = {
    "train.py": TRAIN_ON_HELPERS["train.py"].replace("from models.net", "import models.top\nfrom models.net"),
    "models/net.py": TRAIN_ON_HELPERS["models/net.py"],
    "models/top.py": "import models.chain\nimport models.layers\nimport models.report\nimport models.stack\n\n\ndef top():\n    return models.stack.stack()\n",
    "models/stack.py": "import torch\nfrom models.layers import relu\n\ntorch.use_deterministic_algorithms(True)\n\n\ndef stack():\n    return relu\n",
    "models/layers.py": "import torch\n\nrelu = torch.nn.ReLU()\n",
    "models/report.py": "from models.helpers import activation\n\nactivation()\n",
    "models/helpers.py": "import models.draws\nfrom models.layers import relu\n",
    "models/draws.py": "import torch\n\n\ndef reseed():\n    torch.manual_seed(0)\n",
    "models/star.py": "from models.helpers import *\nfrom models.layers import relu as shadowed\nfrom models.quiet import hush as decided\n\nstarred()\n",
    "models/quiet.py": "def hush():\n    return 0\n",
    "models/chain.py": "from models.star import *\n\nchained()\nshadowed()\ndecided()\n",
    "models/unused.py": "import torch\n\ntorch.manual_seed(0)\n",
}


@pytest.mark.parametrize(
    ("name", "old", "new"),
    [
        # Modules imported that the importer reached already, through others or directly.
        ("train.py", "import models.top\n", "import models.top\nimport models.stack\n"),
        ("models/top.py", "import models.chain\n", "import models.chain\nimport models.draws\n"),  # through report, helpers
        ("models/top.py", "import models.layers\n", "import models.layers\nfrom models.layers import relu\n"),
        ("models/stack.py", "from models.layers import relu\n", "import models.layers\nfrom models.layers import relu\n"),
        # A module no longer imported that the importer still reaches.
        ("models/top.py", "import models.layers\n", ""),
        # Names bound that no module names through the importer.
        ("models/stack.py", "from models.layers import relu\n", "from models.layers import relu\nfrom models.layers import relu as activation\n"),
        ("models/helpers.py", "import models.draws\n", "import models.draws\nfrom models.draws import reseed as again\n"),
        ("models/top.py", "import models.chain\n", "import models.chain\nimport net.extra\n"),  # no such module: `net` is bound
        ("models/helpers.py", "from models.layers import relu\n", "import models.layers\n"),  # nothing names relu through helpers
        # A name a module star-importing the importer binds to a function itself: its binding comes first.
        ("models/helpers.py", "import models.draws\n", "import models.draws\nfrom models.draws import reseed as decided\n"),
    ],
)
def test_imports_of_project_modules_the_pass_reads_alike_reuse_it(project, monkeypatch, name, old, new):
    root = project(WITH_IMPORTS)
    before = _full(root)
    assert "REP101" in [code for _, _, code, _ in before]  # the program seeds nowhere
    _edit(root, name, old, new)
    _reuses_the_pass(root, monkeypatch)


@pytest.mark.parametrize(
    ("name", "old", "new"),
    [
        # A module the importer did not reach: the program now seeds when it loads it.
        ("models/top.py", "import models.chain\n", "import models.chain\nimport models.unused\n"),
        ("models/stack.py", "from models.layers import relu\n", "from models.layers import relu\nfrom models.unused import torch\n"),
        # A module no longer imported that the importer reached through it alone.
        ("models/top.py", "import models.stack\n", ""),
        # A name another module calls through the importer, bound now to a function that seeds: directly,
        # through a star import, through a star import of a star import.
        ("models/helpers.py", "import models.draws\n", "import models.draws\nfrom models.draws import reseed as activation\n"),
        ("models/helpers.py", "import models.draws\n", "import models.draws\nfrom models.draws import reseed as starred\n"),
        ("models/helpers.py", "import models.draws\n", "import models.draws\nfrom models.draws import reseed as chained\n"),
        # Through a star import where the importer binds the name itself, to what denotes no function.
        ("models/helpers.py", "import models.draws\n", "import models.draws\nfrom models.draws import reseed as shadowed\n"),
    ],
)
def test_imports_of_project_modules_the_pass_may_read_otherwise_run_it(project, monkeypatch, name, old, new):
    root = project(WITH_IMPORTS)
    before = _full(root)
    _edit(root, name, old, new)
    assert _full(root, use_cache=False) != before
    _runs_the_pass_again(root, monkeypatch)


# A package re-exporting a quiet function and a seeding one (`from pkg.impl import quiet, seeds`).
WITH_REEXPORTS = {
    **TRAIN_ON_HELPERS,
    "train.py": TRAIN_ON_HELPERS["train.py"].replace("from models.net", "import pkg\nfrom models.net"),
    "pkg/__init__.py": "from pkg.impl import quiet, seeds\n",
    "pkg/impl.py": "import torch\n\n\ndef quiet():\n    return 1\n\n\ndef seeds():\n    torch.manual_seed(0)\n",
}


def test_a_call_through_a_re_export_of_a_quiet_function_reuses_the_pass(project, monkeypatch):
    root = project(WITH_REEXPORTS)
    _full(root)
    _edit(root, "train.py", "def main():\n", "def main():\n    pkg.quiet()\n")
    _reuses_the_pass(root, monkeypatch)


def test_a_call_through_a_re_export_of_a_seeding_function_runs_the_pass(project, monkeypatch):
    root = project(WITH_REEXPORTS)
    before = _full(root)
    _edit(root, "train.py", "def main():\n", "def main():\n    pkg.seeds()\n")
    assert _full(root, use_cache=False) != before
    _runs_the_pass_again(root, monkeypatch)


# A training program whose DataLoader's dataset draws from numpy in its workers only (`jitter`,
# `Noisy.shift` called through its class, and `noise`, through `Augment.flip` called by an instance's `__call__`), which runs a function of tasks.py chosen by name, and
# imports a module saving checkpoints, one of them from a function nothing calls (`ckpt.save`); and
# tests, with a function nothing calls that seeds numpy.
WITH_WORKERS = {
    "train.py": textwrap.dedent("""\
        import torch
        from torch.utils.data import DataLoader

        import ckpt
        import tasks
        from data import Noisy


        def main():
            torch.manual_seed(0)
            loader = DataLoader(Noisy(), num_workers=2)
            model = torch.nn.Linear(2, 2)
            opt = torch.optim.SGD(model.parameters(), lr=0.1)
            tasks.run("prepare")
            for x in loader:
                loss = model(x).sum()
                loss.backward()
                opt.step()
            ckpt.store(model)


        if __name__ == "__main__":
            main()
        """),
    "data.py": textwrap.dedent("""\
        import numpy as np
        from torch.utils.data import Dataset


        def jitter(x):
            return x + np.random.rand()


        def seed_all():
            np.random.seed(0)


        class Noisy(Dataset):
            def __len__(self):
                return 4

            def __getitem__(self, index):
                return jitter(index) + Noisy.shift(self) + Augment()(index)

            def shift(self):
                return np.random.rand()


        def noise():
            return np.random.rand()


        class Augment:
            def __call__(self, x):
                return Augment.flip(self, x)

            def flip(self, x):
                return x + noise()
        """),
    "ckpt.py": textwrap.dedent("""\
        import torch


        def store(model):
            torch.save(model.state_dict(), "model.pt")


        def save(model, optimizer):
            torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict()}, "last.pt")
        """),
    "tasks.py": "def prepare():\n    return 1\n\n\ndef run(name):\n    return globals()[name]()\n",
    "tests.py": textwrap.dedent("""\
        import ckpt
        from data import Noisy, jitter, seed_all


        class TestNoisy:
            def test_len(self):
                assert len(Noisy()) == 4
        """),
}


def _append(root, name, text):
    path = root / name
    path.write_text(path.read_text() + text)


@pytest.mark.parametrize(
    ("name", "added"),
    [
        # Tests added: building a class whose items run in workers, calling a function that seeds,
        # drawing from torch's RNG, through a helper added with them, as a method of a test class.
        ("tests.py", "\n\ndef test_item():\n    assert Noisy()[0] >= 0\n"),
        ("tests.py", "\n\ndef test_seeded():\n    seed_all()\n    assert len(Noisy()) == 4\n"),
        ("tests.py", "\n\ndef test_draws():\n    import torch\n\n    seed_all()\n    assert torch.rand(2).shape == (2,)\n"),
        ("tests.py", "\n\ndef _make():\n    seed_all()\n    return Noisy()\n\n\ndef test_make():\n    assert len(_make()) == 4\n"),
        ("tests.py", "\n    def test_seeded(self):\n        seed_all()\n        assert len(Noisy()) == 4\n"),
        # Elsewhere: a function added to the dataset's module, calling the one that seeds.
        ("data.py", "\n\ndef reseed_all():\n    seed_all()\n"),
    ],
)
def test_functions_added_that_nothing_reaches_reuse_the_pass(project, monkeypatch, name, added):
    """What a function that no call reaches runs is seen by no program; the pass reads the callers
    of the functions it calls only where they run in workers alone or run a checkpoint."""
    root = project(WITH_WORKERS)
    assert _full(root) == []
    _append(root, name, added)
    _reuses_the_pass(root, monkeypatch)
    assert _full(root) == _full(root, use_cache=False)


# A program starting a process that draws from `random` (the process is the launcher's own where it
# forks), and a module it imports.
WITH_PROCESSES = {
    "train.py": textwrap.dedent("""\
        import multiprocessing as mp
        import random

        import torch

        import helpers


        def work():
            return random.random()


        def main():
            torch.manual_seed(0)
            random.seed(0)
            model = torch.nn.Linear(2, 2)
            model(torch.ones(2)).sum().backward()
            process = mp.Process(target=work)
            process.start()


        if __name__ == "__main__":
            main()
        """),
    "helpers.py": "def unused():\n    return 1\n",
}


@pytest.mark.parametrize(
    ("files", "name", "added"),
    [
        # It calls a function running only in workers, or one of its class's (`self.flip()`): they
        # then run in the main process as well, and their draws count there.
        (WITH_WORKERS, "tests.py", "\n\ndef test_jitter():\n    assert jitter(0) >= 0\n"),
        (WITH_WORKERS, "data.py", "\n    def check(self):\n        return self.flip(0)\n"),
        # It calls a function saving a checkpoint that nothing called: the checkpoint is judged now.
        (WITH_WORKERS, "tests.py", "\n\ndef test_save():\n    ckpt.save(None, None)\n"),
        # Code choosing by name what it runs may run it.
        (WITH_WORKERS, "tasks.py", "\n\ndef noisy():\n    import random\n\n    return random.random()\n"),
        # Events the pass reads in every function: a seed after a draw, a start method.
        (WITH_WORKERS, "data.py", "\n\ndef warm():\n    import torch\n\n    torch.rand(2)\n    torch.manual_seed(0)\n"),
        (WITH_PROCESSES, "helpers.py", '\n\ndef spawn():\n    import multiprocessing\n\n    multiprocessing.set_start_method("spawn")\n'),
        # Called from code that runs, through a function added with it.
        (WITH_WORKERS, "data.py", "\n\ndef _draw():\n    return np.random.rand()\n\n\ndef _outer():\n    return _draw()\n\n\n_outer()\n"),
    ],
)
def test_functions_added_that_the_pass_may_read_run_it(project, monkeypatch, files, name, added):
    root = project(files)
    before = _full(root)
    _append(root, name, added)
    assert _full(root, use_cache=False) != before
    _runs_the_pass_again(root, monkeypatch)


# A training program that imports a module not written yet (an optional speed-up), and a program
# training when it loads, which has no main guard.
WITH_OPTIONAL = {
    **TRAIN_ON_HELPERS,
    "train.py": "try:\n    import fast_test\nexcept ImportError:\n    fast_test = None\n" + TRAIN_ON_HELPERS["train.py"],
    "scripts/quick.py": WITH_MODULE_LEVEL["scripts/quick.py"],
}
_BENCHMARKED = "import torch\n\n\ndef fast():\n    torch.backends.cudnn.benchmark = True\n"


# Modules no program reaches. Tests: REP301 in a test module that no program reaches is dropped; they
# call functions of the programs and build a class of theirs. Elsewhere: REP301 in a module no program
# reaches, kept; the only module of its folder.
_IN_NO_PROGRAM = [
    (
        "test_net.py",
        "import torch\n\nfrom models.net import build, split\n\n\ndef test_build():\n    torch.backends.cudnn.benchmark = True\n"
        "    assert build()(torch.ones(2)).shape == (2,)\n\n\ndef test_split():\n    assert len(split(range(4))) == 2\n",
    ),
    (
        "test_unit.py",
        "import unittest\n\nfrom models.net import build\n\n\nclass TestNet(unittest.TestCase):\n    def setUp(self):\n"
        "        self.model = build()\n\n    def test_forward(self):\n        self.assertEqual(self.model.out_features, 2)\n",
    ),
    ("speedups.py", _BENCHMARKED),
    ("tools/check_net.py", "from models.net import build\n\n\ndef check():\n    return build()\n"),
]


@pytest.mark.parametrize(("name", "text"), [*_IN_NO_PROGRAM, ("models/extra.py", "x = 1\n")])  # and a module without code
def test_modules_added_that_no_program_reaches_reuse_the_pass(project, monkeypatch, name, text):
    """A module nothing imports, which is no entry point, is in no program: the pass reads of it what
    it reads of functions added that nothing reaches. The run after it answers edits to it too."""
    root = project(WITH_OPTIONAL)
    _full(root)
    (root / name).parent.mkdir(exist_ok=True)
    (root / name).write_text(text)
    _reuses_the_pass(root, monkeypatch)
    _append(root, name, "\n\n# more\n")
    _reuses_the_pass(root, monkeypatch)


@pytest.mark.parametrize(
    ("name", "text"),
    [
        # The module the program tries to import: REP301 is in a training program now.
        ("fast_test.py", _BENCHMARKED),
        # It imports the program without a main guard, which is then no entry point.
        ("test_quick.py", "import scripts.quick\n"),
        # It is an entry point of its own.
        ("main_check.py", "import torch\n\nif __name__ == '__main__':\n    torch.nn.Linear(2, 2)(torch.rand(2)).sum().backward()\n"),
    ],
)
def test_modules_added_that_a_program_may_reach_run_it(project, monkeypatch, name, text):
    root = project(WITH_OPTIONAL)
    before = _full(root)
    (root / name).write_text(text)
    assert _full(root, use_cache=False) != before
    _runs_the_pass_again(root, monkeypatch)


# And a test module, which no program reaches.
WITH_TESTS = {**WITH_OPTIONAL, "test_models.py": "from models.net import build\n\n\ndef test_build():\n    assert build() is not None\n"}


@pytest.mark.parametrize(
    "edits",
    [
        # A test class, a name imported from a project module; REP301 in a test (dropped, as in any
        # test module no program reaches); an import of a program with a main guard.
        [
            ("test_models.py", "import build\n", "import build, split\n"),
            ("test_models.py", "None\n", "None\n\n\nclass TestSplit:\n    def test_split(self):\n        assert split(range(4))\n"),
        ],
        [("test_models.py", "None\n", "None\n\n\ndef test_fast():\n    import torch\n\n    torch.backends.cudnn.benchmark = True\n")],
        [("test_models.py", "from models", "import train\nfrom models"), ("test_models.py", "None\n", "None\n\n\ndef test_main():\n    assert train.main\n")],
    ],
)
def test_changes_to_a_module_no_program_reaches_reuse_the_pass(project, monkeypatch, edits):
    """What the pass reads of a module only through its name (its imports, the names it binds, its
    classes) reaches nothing where nothing names the module and no program starts there."""
    root = project(WITH_TESTS)
    _full(root)
    for name, old, new in edits:
        _edit(root, name, old, new)
    _reuses_the_pass(root, monkeypatch)


@pytest.mark.parametrize(
    "edits",
    [
        # It imports the program without a main guard, which is then no entry point.
        [("test_models.py", "from models", "import scripts.quick\nfrom models")],
        # The training program imports it: REP301 there is in a training program.
        [
            ("test_models.py", "None\n", "None\n\n\ndef test_fast():\n    import torch\n\n    torch.backends.cudnn.benchmark = True\n"),
            ("train.py", "import torch\n", "import torch\nimport test_models\n"),
        ],
        # The training program imports a module importing it, which changed as well.
        [
            ("glue.py", "import test_models", "import math\nimport test_models"),
            ("test_models.py", "None\n", "None\n\n\ndef test_fast():\n    import torch\n\n    torch.backends.cudnn.benchmark = True\n"),
        ],
    ],
)
def test_changes_to_a_module_no_program_reached_that_one_may_reach_now_run_the_pass(project, monkeypatch, edits):
    glue = {"train.py": "import glue\n" + WITH_TESTS["train.py"], "glue.py": "import test_models\n"} if edits[0][0] == "glue.py" else {}
    root = project({**WITH_TESTS, **glue})
    before = _full(root)
    for name, old, new in edits:
        _edit(root, name, old, new)
    assert sorted(code for _, _, code, _ in _full(root, use_cache=False)) != sorted(code for _, _, code, _ in before)
    _runs_the_pass_again(root, monkeypatch)


def test_a_module_added_is_known_to_the_runs_after(project, monkeypatch):
    root = project(WITH_OPTIONAL)
    _full(root)
    (root / "test_speed.py").write_text(_BENCHMARKED)
    _reuses_the_pass(root, monkeypatch)
    before = _full(root)
    _edit(root, "train.py", "    model = build()\n", "    model = build()\n    test_speed.fast()\n")
    _edit(root, "train.py", "import torch\n", "import torch\nimport test_speed\n")
    assert _full(root, use_cache=False) != before  # REP301 is in a training program now
    _runs_the_pass_again(root, monkeypatch)


def test_a_module_added_that_the_entry_points_setting_names_runs_the_pass(project, monkeypatch):
    def full(use_cache=True, entry_points=("tools/*.py",)):
        settings = replace(WITH_REP002, entry_points=entry_points)
        return [(f.path, f.start.line, f.code) for f in lint_paths([root], settings, use_cache=use_cache).findings]

    root = project(WITH_OPTIONAL)
    full()
    (root / "tools").mkdir()
    (root / "tools" / "speedups.py").write_text(_BENCHMARKED)
    expected = full(use_cache=False)
    # REP301 there is dropped, in a program that does not train; in no program, it is kept.
    assert expected != full(use_cache=False, entry_points=())
    with monkeypatch.context() as patched:
        _forbid_project_pass(patched)
        with pytest.raises(ProjectPassRan):
            full()
    assert full() == expected



def _recorded(root):
    """The project's last run's record."""
    [record] = (root / CACHE_FOLDER).glob("run-*.pickle")
    return pickle.loads(record.read_bytes())[1]


@pytest.mark.parametrize(("name", "text"), _IN_NO_PROGRAM)
def test_modules_removed_that_no_program_reaches_reuse_the_pass(project, monkeypatch, name, text):
    """A module removed is a change to a module without code: where no program reached it, its
    findings go, and the pass is not run. The record then forgets the file."""
    root = project({**WITH_OPTIONAL, name: text})
    before = _full(root)
    (root / name).unlink()
    if name == "speedups.py":
        assert [code for path, _, code, _ in before if path.endswith(name)] == ["REP301"]
    _reuses_the_pass(root, monkeypatch)
    assert not any(display.endswith(name) for display in _recorded(root).files)
    _edit(root, "train.py", "# speed", "# speed, measured")
    _reuses_the_pass(root, monkeypatch)



def test_a_test_module_renamed_reuses_the_pass(project, monkeypatch):
    """A module removed and one added, each in no program."""
    root = project(WITH_TESTS)
    _full(root)
    (root / "test_models.py").rename(root / "test_build.py")
    _reuses_the_pass(root, monkeypatch)

@pytest.mark.parametrize(
    ("files", "removed"),
    [
        # A test calling a helper that a dataset's item method calls too: with the test gone, the
        # helper runs only in the DataLoader's workers, where its draws are seeded (REP102 goes).
        ({**WITH_WORKERS, "test_jitter.py": "from data import jitter\n\n\ndef test_jitter():\n    assert jitter(0) >= 0\n"}, "test_jitter.py"),
        # An entry point of its own: its training program goes, and REP301 in the test module it
        # imports, then in no program, is dropped.
        (
            {
                **WITH_OPTIONAL,
                "test_speed.py": _BENCHMARKED,
                "main_check.py": "import torch\n\nimport test_speed\n\nif __name__ == '__main__':\n    torch.nn.Linear(2, 2)(torch.rand(2)).sum().backward()\n",
            },
            "main_check.py",
        ),
    ],
)
def test_modules_removed_that_a_program_may_reach_run_it(project, monkeypatch, files, removed):
    root = project(files)
    before = _full(root)
    (root / removed).unlink()
    assert sorted(code for _, _, code, _ in _full(root, use_cache=False)) != sorted(code for path, _, code, _ in before if not path.endswith(removed))
    _runs_the_pass_again(root, monkeypatch)


@pytest.mark.parametrize(
    ("files", "removed", "answered"),
    [
        # A test calling the programs' functions, removed from a test module.
        (WITH_TESTS, ("test_models.py", "def test_build():\n    assert build() is not None\n"), True),
        # A test calling the helper of a dataset's item method (REP102 goes, as above).
        (WITH_WORKERS, ("tests.py", "    def test_len(self):\n        assert len(Noisy()) == 4\n"), True),
        ({**WITH_WORKERS, "tests.py": WITH_WORKERS["tests.py"] + "\n\ndef test_jitter():\n    assert jitter(0) >= 0\n"}, ("tests.py", "def test_jitter():\n    assert jitter(0) >= 0\n"), False),
    ],
)
def test_functions_removed_that_no_program_reaches(project, monkeypatch, files, removed, answered):
    """A function removed that nothing calls is judged as one added: the pass reads nothing of it
    where none of its calls runs a function whose callers the pass reads, or one that a function
    running only in DataLoader workers calls (which its callers outside the workers take out)."""
    root = project(files)
    before = _full(root)
    _edit(root, removed[0], removed[1], "def test_other():\n    pass\n" if removed[1].startswith("def") else "    def test_other(self):\n        pass\n")
    if answered:
        _reuses_the_pass(root, monkeypatch)
    else:
        assert _full(root, use_cache=False) != before
        _runs_the_pass_again(root, monkeypatch)

def _reuses_the_pass(root, monkeypatch):
    """A run now is answered from the record, and gives what a run without the cache gives."""
    expected = _full(root, use_cache=False)
    with monkeypatch.context() as patched:
        _forbid_project_pass(patched)
        assert _full(root) == expected


def _runs_the_pass_again(root, monkeypatch):
    """A run now runs the project pass, and gives what a run without the cache gives."""
    expected = _full(root, use_cache=False)
    with monkeypatch.context() as patched:
        _forbid_project_pass(patched)
        with pytest.raises(ProjectPassRan):
            _full(root)
    assert _full(root) == expected


_LAUNCH = "torchrun --nproc_per_node 8 train.py \\\n    --use-flash-attn\n"


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("scripts/launch.sh", _LAUNCH.replace("8", "4") + "    --deterministic-modes\n"),  # changed
        ("scripts/again.sh", "python train.py --epochs 2\n"),  # added (a finding there asks the programs, which the record cannot answer)
        ("configs/run.yaml", "seed: 1\n"),  # a config added
        ("scripts/launch.sh", None),  # removed
    ],
)
def test_launch_scripts_and_configs_added_changed_or_removed_reuse_the_pass(project, monkeypatch, name, text):
    """They have no facts: the pass cannot see them, and their own findings are judged again."""
    root = project({**WITH_HELPERS, "scripts/launch.sh": _LAUNCH})
    _full(root)
    path = root / name
    if text is None:
        path.unlink()
    else:
        path.parent.mkdir(exist_ok=True)
        path.write_text(text)
    expected = _full(root, use_cache=False)
    assert any(path.endswith("scripts/launch.sh") for path, *_ in expected) == (name != "scripts/launch.sh" or text is not None)
    with monkeypatch.context() as patched:
        _forbid_project_pass(patched)
        assert _full(root) == expected
    assert _full(root) == expected


def test_a_method_added_is_known_by_name_to_the_runs_after(project, monkeypatch):
    """The record answering for a method added learns where methods of its name are: a call
    `obj.summary()` added later may run it, and is judged by what it runs (nothing)."""
    root = project(WITH_HELPERS)
    _full(root)
    _edit(root, "models/helpers.py", "    def tune", "    def summary(self):\n        return 1\n\n    def tune")
    with monkeypatch.context() as patched:
        _forbid_project_pass(patched)
        _full(root)
    recorded = _recorded(root)
    assert "summary" in recorded.function_names and recorded.method_modules["summary"] == {"models.helpers"}
    _edit(root, "train.py", "model = build()", "model = build(); model.summary()")  # no line moves
    _reuses_the_pass(root, monkeypatch)


# A project module's logger, its class, a name it binds to a project class and one star-importing
# another module, which models/tuning.py imports and calls.
WITH_LOG = {
    **WITH_HELPERS,
    "models/log.py": (
        "import logging\nimport random\nfrom logging import getLogger\n\nfrom models.helpers import Tuner as Chosen\n\nLOGGER = logging.getLogger('models')\n\n\n"
        "class Handler:\n    def emit(self):\n        return 1\n\n    def reset(self):\n        random.seed(0)\n"
    ),
    "models/every.py": "from models.helpers import *\n",
    "models/tuning.py": (
        "import torch\nfrom models import every, log\nfrom models.log import LOGGER\n\n\n"
        "def fast():\n    LOGGER.debug('fast')\n    torch.backends.cudnn.benchmark = True\n"
    ),
}


@pytest.mark.parametrize(
    ("old", "new", "reused"),
    [
        # Calls of what a project module's variable holds, or of a library function it imports.
        ("    torch.backends", "    LOGGER.info('tuning')\n    torch.backends", True),
        ("    torch.backends", "    log.LOGGER.warning('tuning')\n    torch.backends", True),
        ("    torch.backends", "    log.getLogger('tuning').info('x')\n    torch.backends", True),
        ("    LOGGER.debug('fast')\n", "", True),  # removed
        # `obj.emit()`: the pass takes it for any project method so named, and Handler.emit runs nothing.
        ("    torch.backends", "    log.getLogger('tuning').emit()\n    torch.backends", True),
        # Calls of what the pass resolves: a class, a name bound to one, a star import's function.
        ("    torch.backends", "    log.Handler().emit()\n    torch.backends", False),
        ("    torch.backends", "    log.Chosen().tune()\n    torch.backends", False),
        ("    torch.backends", "    every.later()\n    torch.backends", False),
        ("    torch.backends", "    log.getLogger('tuning').reset()\n    torch.backends", False),  # Handler.reset seeds
    ],
)
def test_calls_of_names_a_project_module_does_not_define_are_not_seen_by_the_pass(project, monkeypatch, old, new, reused):
    """`LOGGER.info(...)` of a logger a project module builds: the pass resolves nothing there, and
    the facts of the module named tell so."""
    root = project(WITH_LOG)
    _full(root)
    _edit(root, "models/tuning.py", old, new)
    (_reuses_the_pass if reused else _runs_the_pass_again)(root, monkeypatch)


def test_an_obj_method_call_runs_the_pass_where_a_changed_module_defines_a_method_so_named_that_it_sees(project, monkeypatch):
    """The record's methods named `emit` run nothing; one added with the call, in the changed files,
    seeds."""
    root = project(WITH_LOG)
    _full(root)
    _edit(root, "models/log.py", "    def reset", "    def emit_all(self):\n        random.seed(1)\n\n    def reset")
    _edit(root, "models/tuning.py", "    torch.backends", "    log.getLogger('tuning').emit_all()\n    torch.backends")
    _runs_the_pass_again(root, monkeypatch)


def test_a_method_running_nothing_added_and_called_as_obj_method_reuses_the_pass(project, monkeypatch):
    """`Handler.emit` runs nothing, and so does `emit_now`, added with its call: the call is one of a
    function added, which `unseen_functions` follows."""
    root = project(WITH_LOG)
    _full(root)
    _edit(root, "models/log.py", "    def reset", "    def emit_now(self):\n        return 2\n\n    def reset")
    _edit(root, "models/tuning.py", "    torch.backends", "    log.getLogger('tuning').emit_now()\n    torch.backends")
    _reuses_the_pass(root, monkeypatch)


# A library function whose DataLoader takes `shuffle` from its caller, and another function of the
# library that chooses nothing; train.py calls both.
WITH_CHOICE = {
    "data.py": (
        "from torch.utils.data import DataLoader\n\n\ndef get_loader(dataset, shuffle):\n    return DataLoader(dataset, shuffle=shuffle)\n\n\n"
        "def describe(dataset, name):\n    return name\n"
    ),
    "train.py": (
        "import torch\nfrom data import describe, get_loader\n\n\ndef main():\n    torch.manual_seed(0)\n"
        "    loader = get_loader([1, 2], shuffle=False)\n    describe(loader, 'first')\n    torch.ones(2).sum().backward()\n\n\n"
        "if __name__ == '__main__':\n    main()\n"
    ),
}


@pytest.mark.parametrize(
    ("old", "new", "reused"),
    [
        ("describe(loader, 'first')", "describe(loader, 'second')", True),
        ("describe(loader, 'first')", "describe(name='first', dataset=loader)", True),
        ("shuffle=False", "shuffle=True", False),  # REP202 at the call
        ("get_loader([1, 2], shuffle=False)", "get_loader([1, 2], False)", False),
    ],
)
def test_arguments_the_pass_reads_are_those_of_calls_that_may_reach_a_callers_choice(project, monkeypatch, old, new, reused):
    """The pass reads a call's arguments only where it may reach a function taking a setting from its
    caller (program/callers_choice.py): other calls' may change without running it."""
    root = project(WITH_CHOICE)
    _full(root)
    _edit(root, "train.py", old, new)
    (_reuses_the_pass if reused else _runs_the_pass_again)(root, monkeypatch)


@pytest.mark.parametrize("edit", sorted(bench.EDITS))
def test_the_benchmarks_one_file_edits_reuse_the_pass_but_the_one_it_sees(project, monkeypatch, edit):
    """benchmarks/bench.py times each of its one-file edits as one the pass cannot see but "function
    called" and "torch seeded after a call", which must run it."""
    root = project(WITH_HELPERS)
    _full(root)
    path = root / "models/helpers.py"
    path.write_bytes(bench.EDITS[edit](path.read_bytes(), 1))
    expected = _full(root, use_cache=False)
    with monkeypatch.context() as patched:
        _forbid_project_pass(patched)
        if edit in ("function called", "torch seeded after a call"):
            with pytest.raises(ProjectPassRan):
                _full(root)
        else:
            assert _full(root) == expected
    assert _full(root) == expected


# A module calling functions of another that train.py does not import.
WITH_REPORT = {**WITH_HELPERS, "models/report.py": "import models.helpers\nfrom models.helpers import unused\n\n\ndef report():\n    return unused()\n"}
_SUMMARY = ("models/helpers.py", "def unused", "def summary():\n    return 'helpers'\n\n\ndef unused")


def _report_edited(project, edits):
    """WITH_REPORT after an audit and `edits`: its root, and what a run without the cache gives."""
    root = project(WITH_REPORT)
    _full(root)
    for name, old, new in edits:
        _edit(root, name, old, new)
    return root, _full(root, use_cache=False)


@pytest.mark.parametrize(
    "edits",
    [
        # A function that runs nothing added in one module, called from another that imports it.
        [_SUMMARY, ("models/report.py", "import unused", "import summary, unused"), ("models/report.py", "    return", "    summary()\n    return")],
        [_SUMMARY, ("models/report.py", "import unused", "import (\n    summary,\n    unused,\n)")],  # imported, not called
        [_SUMMARY, ("models/report.py", "    return", "    models.helpers.summary()\n    return")],  # through the module's name
        [_SUMMARY, ("models/report.py", "    return", "    x = models.helpers.summary() + models.helpers.summary()\n    return")],
        [_SUMMARY, ("models/report.py", "import unused", "import summary as summary, unused"), ("models/report.py", "    return", "    summary()\n    return")],
        # One calling another added beside it.
        [
            ("models/helpers.py", "def unused", "def summary():\n    return detail()\n\n\ndef detail():\n    return 1\n\n\ndef unused"),
            ("models/report.py", "    return", "    models.helpers.summary()\n    return"),
        ],
        # Removed with its calls.
        [("models/helpers.py", "def unused():\n    return 1\n", ""), ("models/report.py", "from models.helpers import unused\n", ""), ("models/report.py", "return unused()", "return 1")],
    ],
)
def test_a_function_running_nothing_added_in_one_module_and_called_from_another_reuses_the_pass(project, monkeypatch, edits):
    root, expected = _report_edited(project, edits)
    with monkeypatch.context() as patched:
        _forbid_project_pass(patched)
        assert _full(root) == expected
    assert _full(root) == expected


@pytest.mark.parametrize(
    "edits",
    [
        [_SUMMARY, ("models/report.py", "import unused", "import summary as short, unused"), ("models/report.py", "    return", "    short()\n    return")],
        [_SUMMARY, ("train.py", "import torch\n", "import torch\nfrom models.helpers import summary\n")],  # a new import of a project module
        [_SUMMARY, ("models/report.py", "    return", "    handler = models.helpers.summary\n    return")],  # a reference
        [_SUMMARY, ("models/report.py", "    return", "    register(models.helpers.summary)\n    return")],  # handed over
        [_SUMMARY, ("models/report.py", "import unused", "import summary, unused"), ("models/report.py", "    return", "    print(summary(), summary)\n    return")],
        # A name another, unchanged module uses (`relu` in models/layers.py).
        [("models/helpers.py", "def unused", "def relu():\n    return 1\n\n\ndef unused"), ("models/report.py", "    return", "    models.helpers.relu()\n    return")],
        # The function added calls a project function.
        [("models/helpers.py", "def unused", "def summary():\n    return reseed()\n\n\ndef unused"), ("models/report.py", "    return", "    models.helpers.summary()\n    return")],
    ],
)
def test_a_function_added_in_one_module_and_called_from_another_where_the_pass_may_see_it_runs_it(project, monkeypatch, edits):
    root, expected = _report_edited(project, edits)
    with monkeypatch.context() as patched:
        _forbid_project_pass(patched)
        with pytest.raises(ProjectPassRan):
            _full(root)
    assert _full(root) == expected


# Functions that run nothing (one calling the other), appended with a call of the first: from
# module-level code, or from a function the module defines (the call its first statement, which moves
# the lines below it).
_INERT = "\n\ndef inert_edit():\n    return inert_step()\n\n\ndef inert_step():\n    return 1\n"


# Methods that run nothing, one calling the other through `self.`, inserted first in a class.
_INERT_METHODS = "def inert_method_edit(self):\n    return self.inert_method_step()\n\ndef inert_method_step(self):\n    return 1\n\n"


def _inert_edits(text):
    yield text + _INERT + "\n\ninert_edit()\n", False
    lines = text.splitlines(keepends=True)
    for kind, inserted in (("def ", lambda indent: f"{indent}inert_edit()\n"), ("class ", partial(textwrap.indent, _INERT_METHODS))):
        for at, line in enumerate(lines):
            if line.startswith(kind) and line.rstrip().endswith(":") and at + 1 < len(lines):
                body = lines[at + 1]
                indent = body[: len(body) - len(body.lstrip())]
                yield "".join([*lines[: at + 1], inserted(indent), *lines[at + 1 :]]) + ("" if kind == "class " else _INERT), True
                break


@pytest.mark.parametrize("source", ["fixture", "image_classifier", "tabular"])
def test_a_function_running_nothing_added_and_called_anywhere_gives_what_the_pass_gives(project, monkeypatch, source):
    """The claim `without_unseen_functions` rests on, tried in every module of projects whose
    programs the rules judge: each such edit gives what a run without the cache gives, from the last
    run's pass where no line moved (lines moved where a program finding is run it again)."""
    if source == "fixture":
        root = project(WITH_HELPERS)
    else:
        root = project({path.relative_to(EXAMPLES / source).as_posix(): path.read_text() for path in (EXAMPLES / source).rglob("*.py")})
    reused = 0
    for path in sorted(root.rglob("*.py")):
        original = path.read_text()
        for edited, lines_moved in _inert_edits(original):
            lint_paths([root], WITH_REP002, use_cache=True)
            path.write_text(edited)
            expected = lint_paths([root], WITH_REP002).findings
            with monkeypatch.context() as patched:
                if not lines_moved:
                    _forbid_project_pass(patched)
                    reused += 1
                assert lint_paths([root], WITH_REP002, use_cache=True).findings == expected, edited
            path.write_text(original)
    assert reused == len(list(root.rglob("*.py")))


@pytest.mark.parametrize("source", ["fixture", "image_classifier"])
def test_a_function_running_nothing_added_in_one_module_and_called_from_another_gives_what_the_pass_gives(project, monkeypatch, source):
    """The same claim across modules, for every pair of modules of projects whose programs the rules
    judge: each gives what a run without the cache gives, from the last run's pass where the caller
    imported the function's module already (a new import of a project module may change programs),
    and where no program reaches the caller."""
    if source == "fixture":
        root = project(WITH_REPORT)
    else:
        root = project({path.name: path.read_text() for path in (EXAMPLES / source).glob("*.py")})
    files = sorted(root.rglob("*.py"))
    passes = []
    build = ProjectModel.__init__
    monkeypatch.setattr(ProjectModel, "__init__", lambda model, *args: passes.append(1) or build(model, *args))
    reused = importing = 0
    for defining in files:
        module = ".".join(defining.relative_to(root).with_suffix("").parts)
        for calling in files:
            if calling == defining:
                continue
            texts = defining.read_text(), calling.read_text()
            importing += bool(re.search(rf"^(from {re.escape(module)} import|import {re.escape(module)}$)", texts[1], re.MULTILINE))
            lint_paths([root], WITH_REP002, use_cache=True)
            defining.write_text(texts[0] + _INERT)
            calling.write_text(texts[1] + f"\n\nfrom {module} import inert_edit\n\ninert_edit()\n")
            expected = lint_paths([root], WITH_REP002).findings
            passes.clear()
            assert lint_paths([root], WITH_REP002, use_cache=True).findings == expected, (defining, calling)
            reused += not passes
            defining.write_text(texts[0])
            calling.write_text(texts[1])
    assert reused >= importing > 0


# Statements an edit inserts: some the project pass cannot see, some it must (they change findings).
_INSERTED = (
    "# note", "", "x_edit = 1", "print('x')", "import math", "math.sqrt(2)", "import os", "import numpy as np",
    "from typing import Any", "import torch as th", "import models.layers", "from models.net import split",
    "fast()", "build()", "loader.set_epoch(0)", "torch.manual_seed(0)", "import random", "random.random()",
    "import models.tuning", "from models.tuning import fast", "models.tuning.fast()",
    "torch.backends.cudnn.benchmark = True", "torch.save({'model': 1}, 'ckpt.pt')",
    "def helper_edit(): return 1", "def helper_edit(): torch.manual_seed(0)", "def fast(): return 1",
    "def helper_edit(): fast()", "helper_edit()", "x_edit = helper_edit",
)


def test_random_edits_give_what_an_uncached_run_gives(project):
    root = project(WITH_TUNING)
    files = sorted(root.rglob("*.py"))
    lint_paths([root], WITH_REP002, use_cache=True)
    chosen = random.Random(0)
    for _ in range(40):
        path, text = _inserted_somewhere(chosen, files)
        path.write_text(text)
        assert lint_paths([root], WITH_REP002, use_cache=True).findings == lint_paths([root], WITH_REP002).findings, text


# Imports of project modules (reached already or not, binding names other modules call through
# the importer or not, star imports among them), and calls through them.
_IMPORTS_INSERTED = (
    "import models.layers", "from models.layers import relu", "import models.draws", "import models.unused",
    "from models.draws import reseed", "from models.draws import reseed as activation", "from models.draws import reseed as starred",
    "from models.draws import reseed as chained", "from models.helpers import *", "from models.stack import stack", "import net.extra",
    "activation()", "reseed()", "relu = None", "# note",
)  # fmt: skip


def test_random_import_edits_give_what_an_uncached_run_gives(project, monkeypatch):
    root = project(WITH_IMPORTS)
    files = sorted(root.rglob("*.py"))

    def edit(chosen, number):
        path, text = _inserted_somewhere(chosen, files, _IMPORTS_INSERTED)
        path.write_text(text)
        return text

    _cached_runs_agree(root, monkeypatch, edit)


def _cached_runs_agree(root, monkeypatch, edit):
    """After an audit, 40 random edits (`edit` makes one, given the random source and its number, and
    says what it did), each run with the cache giving what a run without it gives; some of them
    answered from the record, some running the pass."""
    lint_paths([root], WITH_REP002, use_cache=True)
    chosen = random.Random(0)
    built = _counting_models(monkeypatch)
    answered = 0
    for number in range(40):
        done = edit(chosen, number)
        expected = lint_paths([root], WITH_REP002).findings
        models = len(built)
        assert lint_paths([root], WITH_REP002, use_cache=True).findings == expected, done
        answered += len(built) == models
    assert 0 < answered < 40


# Functions added (to modules or classes) that hold events, call project functions or build project
# classes, some of them called or calling another added before, among calls and draws the pass sees.
_FUNCTIONS_INSERTED = (
    "def {name}(): return jitter(0)", "def {name}(): seed_all(); return Noisy()", "def {name}(): return Noisy()[0]",
    "def test_{name}(): import torch; torch.rand(2)", "def {name}(): ckpt.save(None, None)", "def {name}(self): return self.flip(0)",
    "def {name}(): import random; return random.random()", "def {name}(): import torch; torch.rand(2); torch.manual_seed(0)",
    "def {name}(): return noise()", "def {name}(): return {before}()", "{before}()", "def {name}(): return seed_all()",
    "np.random.rand()", "# note",
)  # fmt: skip


def test_random_function_edits_give_what_an_uncached_run_gives(project, monkeypatch):
    root = project(WITH_WORKERS)
    files = sorted(root.rglob("*.py"))

    def edit(chosen, number):
        added = chosen.choice(_FUNCTIONS_INSERTED).format(name=f"added_{number}", before=f"added_{number - 1}")
        # At the end of a module, or of the class data.py ends with.
        path = root / "data.py" if "self" in added else chosen.choice(files)
        path.write_text(f"{path.read_text()}\n\n{'    ' if 'self' in added else ''}{added}\n")
        return added

    _cached_runs_agree(root, monkeypatch, edit)


# Modules added, tests and helpers of the programs, edits of a test module and removals of modules
# added before, among edits making one part of a program: findings the model judges, code that runs
# when a module loads, a main guard, an import of the program without one, of the module the program
# tries to import, of a module added before.
_MODULES_ADDED = (
    "from models.net import build\n\n\ndef test_{name}():\n    assert build() is not None\n",
    "import torch\n\n\ndef fast_{name}():\n    torch.backends.cudnn.benchmark = True\n",
    "from models.net import split\n\n\nclass Test{name}:\n    def test_split(self):\n        assert split(range(4))\n",
    "import torch\n\ntorch.manual_seed(0)\n",
    "import torch\n\nif __name__ == '__main__':\n    torch.nn.Linear(2, 2)(torch.rand(2)).sum().backward()\n",
    "import scripts.quick\n",
    "import {before}\n",
    "import train\n",
)
_ADDED_AS = ("test_{number}.py", "helper_{number}.py", "tools/check_{number}.py", "fast_test.py", "test_models.py")


def test_random_modules_added_or_removed_give_what_an_uncached_run_gives(project, monkeypatch):
    root = project(WITH_TESTS)
    (root / "tools").mkdir()
    added: list[str] = ["models.net"]

    def edit(chosen, number):
        text = chosen.choice(_MODULES_ADDED).format(name=number, before=added[-1])
        if chosen.random() < 0.15:  # the program imports the module added last
            _append(root, "train.py", f"\nimport {added[-1]}\n")
            return f"train.py imports {added[-1]}"
        if chosen.random() < 0.2 and len(added) > 1:  # a module added before is removed
            removed = added.pop(chosen.randrange(1, len(added)))
            (root / f"{removed.replace('.', '/')}.py").unlink()
            return f"{removed} removed"
        relative = chosen.choice(_ADDED_AS).format(number=number)
        if relative == "fast_test.py":
            text = _BENCHMARKED  # the speed-up the program tries to import
        if relative == "test_models.py":
            _append(root, relative, f"\n\n{text}")
        elif not (root / relative).exists():
            (root / relative).write_text(text)
            added.append(relative.removesuffix(".py").replace("/", "."))
        return f"{relative}: {text}"

    _cached_runs_agree(root, monkeypatch, edit)


def _counting_models(monkeypatch):
    """A list that grows by one each time a project model is built: each project pass."""
    built: list[None] = []
    build = ProjectModel.__init__

    def counted(self, *args, **kwargs):
        built.append(None)
        return build(self, *args, **kwargs)

    monkeypatch.setattr(ProjectModel, "__init__", counted)
    return built


def _inserted_somewhere(chosen, files, inserted=_INSERTED):
    """One of `inserted` at a random line of a random file, indented as the line below it, where the
    code still compiles (a file that does not parse has no facts, and would stay so)."""
    while True:
        path = chosen.choice(files)
        lines = path.read_text().splitlines(keepends=True)
        at = chosen.randrange(len(lines) + 1)
        following = lines[at] if at < len(lines) else ""
        lines.insert(at, following[: len(following) - len(following.lstrip())] + chosen.choice(inserted) + "\n")
        try:
            compile("".join(lines), path.name, "exec")
        except SyntaxError:
            continue
        return path, "".join(lines)


def test_a_change_to_what_a_fix_in_the_file_reuses_runs_the_project_pass(project, monkeypatch):
    root = project(WITH_TUNING)
    lint_paths([root], WITH_REP002, use_cache=True)
    _edit(root, "train.py", "    main()\n", "    main()\nimport torch as th\n")  # REP101's fix now seeds `th`
    expected = lint_paths([root], WITH_REP002).findings
    [seed_fix] = [finding.fix for finding in expected if finding.code == "REP101"]
    assert "th.manual_seed" in seed_fix.edits[-1].content
    with monkeypatch.context() as patched:
        _forbid_project_pass(patched)
        with pytest.raises(ProjectPassRan):
            lint_paths([root], WITH_REP002, use_cache=True)
    assert lint_paths([root], WITH_REP002, use_cache=True).findings == expected


def test_a_bug_in_judging_the_record_runs_the_project_pass(project, monkeypatch):
    root = project(WITH_HELPERS)
    _full(root)
    _edit(root, "models/helpers.py", "def unused", "def go():\n    return 1\n\n\ngo()\n\n\ndef unused")
    expected = _full(root, use_cache=False)

    def broken(*args, **kwargs):
        raise RuntimeError("a bug")

    monkeypatch.setattr("repro_lint.engine.engine.seen_by_the_pass", broken)
    assert _full(root) == expected


def test_a_file_removed_runs_the_project_pass(project):
    seeded = {"train.py": "import seeding\n" + TRAIN_ON_HELPERS["train.py"], "seeding.py": "import torch\ntorch.manual_seed(0)\n"}
    root = project({**TRAIN_ON_HELPERS, **seeded})
    assert "REP101" not in [code for _, _, code, _ in _full(root)]
    (root / "seeding.py").unlink()
    assert "REP101" in [code for _, _, code, _ in _full(root)]
    assert _full(root) == _full(root, use_cache=False)


def test_a_finding_the_program_model_was_never_asked_about_runs_the_project_pass(project, monkeypatch):
    root = project(TRAIN_ON_HELPERS)
    fresh = _full(root)
    [record] = (root / CACHE_FOLDER).glob("run-*.pickle")
    build, recorded = pickle.loads(record.read_bytes())
    record.write_bytes(pickle.dumps((build, replace(recorded, verdicts={}))))
    _edit(root, "train.py", "# speed", "# speed, measured")
    built = []
    monkeypatch.setattr("repro_lint.program.model.ProjectModel.__init__", _recording(built, ProjectModel.__init__))
    assert _full(root) == fresh
    assert built  # REP301 asks whether training programs reach its line, and no answer was recorded


def _recording(calls, function):
    def recorded(*args, **kwargs):
        calls.append(args)
        return function(*args, **kwargs)

    return recorded


def _one(root, use_cache=True):
    found = lint_paths([root / "train.py"], WITH_REP002, use_cache=use_cache).findings
    return [(f.path, f.start.line, f.code, f.message) for f in found]


def _forbid_parsing(monkeypatch):
    def analysed(*args, **kwargs):
        raise AssertionError("a file was parsed")

    monkeypatch.setattr("repro_lint.analysis.python.analyze", analysed)


def test_a_run_on_one_file_after_an_audit_parses_nothing_and_reports_that_file_alone(project, monkeypatch):
    root = project(TRAIN_ON_HELPERS)
    assert {path for path, *_ in _full(root)} == {str(root / "train.py"), str(root / "models" / "net.py")}
    expected = _one(root, use_cache=False)
    assert {path for path, *_ in expected} == {str(root / "train.py")}
    with monkeypatch.context() as patched:
        _forbid_parsing(patched)
        _forbid_project_pass(patched)
        assert _one(root) == expected
    assert _full(root) == _full(root, use_cache=False)


def test_a_run_on_one_file_edited_after_an_audit_judges_that_file_alone_and_keeps_the_audit(project, monkeypatch):
    root = project(TRAIN_ON_HELPERS)
    _full(root)
    _edit(root, "train.py", "cudnn.benchmark = True  # speed", "cudnn.benchmark = False")
    expected_one, expected_full = _one(root, use_cache=False), _full(root, use_cache=False)
    with monkeypatch.context() as patched:
        _forbid_project_pass(patched)
        assert _one(root) == expected_one
        assert _full(root) == expected_full  # the audit's record still holds models/net.py's findings


def test_a_run_on_one_file_after_an_audit_runs_the_pass_on_the_audits_analyses(project, monkeypatch):
    root = project(WITH_LAYERS)
    _full(root)
    _seed_in_split(root, 0)
    expected = _one(root, use_cache=False)
    parsed = []
    monkeypatch.setattr("repro_lint.analysis.python.analyze", _recording(parsed, analyze))
    assert _one(root) == expected
    assert [display for _, display, *_ in parsed] == [str(root / "models" / "net.py")]


def test_an_audit_after_a_run_on_one_file_does_not_take_its_record(project):
    root = project(TRAIN_ON_HELPERS)
    _one(root)
    assert _full(root) == _full(root, use_cache=False)


def test_a_run_on_one_file_from_the_root_takes_the_record_of_an_audit_from_the_root(project, monkeypatch):
    # As pre-commit and a CI audit run: from the project's root, naming files relative to it.
    root = project({**TRAIN_ON_HELPERS, "scripts/launch.sh": "torchrun --nproc_per_node 2 train.py\n"})
    monkeypatch.chdir(root)
    audit = lint_paths([Path(".")], WITH_REP002, use_cache=True).findings
    assert {finding.path for finding in audit} >= {"train.py", "models/net.py"}
    _edit(root, "train.py", "# speed", "# speed, measured")
    expected = lint_paths([Path("train.py")], WITH_REP002).findings
    assert {finding.path for finding in expected} == {"train.py"}
    with monkeypatch.context() as patched:
        _forbid_project_pass(patched)
        assert lint_paths([Path("train.py")], WITH_REP002, use_cache=True).findings == expected


def _entries(root) -> int:
    return len(list((root / CACHE_FOLDER).glob("??/*.pickle")))


def _seed_in_split(root, seed):
    _edit(root, "models/net.py", "def split(data):\n", f"def split(data):\n    torch.manual_seed({seed})\n")


def test_analyses_of_texts_since_changed_are_pruned(project, monkeypatch):
    monkeypatch.setattr("repro_lint.engine.cache._UNNAMED_ENTRY_KEPT_S", -1)
    root = project(TRAIN_ON_HELPERS)
    _full(root)
    assert _entries(root) == 2
    for seed in range(3):
        _seed_in_split(root, seed)  # new facts: the project pass runs again
        _full(root)
        assert _entries(root) == 2
    assert _full(root) == _full(root, use_cache=False)


def test_analyses_another_settings_record_names_are_kept(project, monkeypatch):
    monkeypatch.setattr("repro_lint.engine.cache._UNNAMED_ENTRY_KEPT_S", -1)
    root = project(TRAIN_ON_HELPERS)
    _full(root)
    lint_paths([root], Settings(), use_cache=True)
    assert _entries(root) == 4
    _seed_in_split(root, 0)
    _full(root)
    assert _entries(root) == 4  # the other record still names models/net.py's analysis before the edit
    unchanged = lint_paths([root], Settings(), use_cache=True).findings
    assert unchanged == lint_paths([root], Settings()).findings
    assert _entries(root) == 4


def test_analyses_no_record_names_yet_are_kept_a_while(project):
    root = project(TRAIN_ON_HELPERS)
    _full(root)
    _seed_in_split(root, 0)
    _full(root)
    assert _entries(root) == 3  # as young as an audit still going on could have stored


def test_a_run_on_one_file_after_an_audit_reads_that_file_alone(project, old_files, monkeypatch):
    root = project(WITH_LAYERS)
    _full(root)
    _edit(root, "train.py", "# speed", "# speed, measured")
    expected = _one(root, use_cache=False)
    read = []
    monkeypatch.setattr("repro_lint.engine.modules.read_source", _recording(read, read_source))
    assert _one(root) == expected
    assert [path for (path,) in read] == [root / "train.py"]


def test_a_project_pass_after_an_edit_reads_no_file_known_unchanged_but_for_its_noqa(project, old_files, monkeypatch):
    root = project(WITH_LAYERS)
    _full(root)
    _seed_in_split(root, 0)  # new facts: the project pass runs again, on the other files' cached analyses
    expected = _full(root, use_cache=False)
    read = []
    monkeypatch.setattr("repro_lint.engine.modules.read_source", _recording(read, read_source))
    assert _full(root) == expected
    # train.py for its `noqa` comment, which REP002 judges on the text.
    assert sorted(path for (path,) in read) == [root / "models" / "net.py", root / "train.py"]


def test_a_change_to_a_module_a_recorded_program_runs_is_judged_without_searching_the_files(project, monkeypatch):
    root = project(WITH_LAYERS)
    _full(root)
    _edit(root, "models/net.py", "\n\ndef build", "\n\nclass Marker:\n    pass\n\n\ndef build")  # a class: read through names
    expected = _full(root, use_cache=False)
    searched = []
    monkeypatch.setattr("repro_lint.engine.modules.SourceModule.raw", lambda module: searched.append(module.display))
    # The pass then searches the files for the class's name, for what it resolves (test_kept_resolutions.py).
    monkeypatch.setattr("repro_lint.engine.engine.resolutions_holding", lambda *args: {})
    assert _full(root) == expected
    assert searched == []
