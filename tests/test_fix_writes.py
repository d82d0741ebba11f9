"""Writing fixed files: a file that cannot or must not be written is left as it was and reported,
and every other file is still fixed and reported."""

from __future__ import annotations

import errno
import os
import stat
import tempfile
from pathlib import Path

import pytest

from repro_lint.api import lint_paths
from repro_lint.core.problems import Problem
from repro_lint.core.settings import Settings
from repro_lint.engine.engine import Engine
from repro_lint.engine.fixes import NotWritten, write_atomically

SPLIT = "from torch.utils.data import random_split\nparts = random_split(ds, [1, 1])\n"
FIXED = (
    "import torch\nfrom torch.utils.data import random_split\n\nSEED = 0\n"
    "parts = random_split(ds, [1, 1], generator=torch.Generator().manual_seed(SEED))\n"
)
SETTINGS = Settings(select=("REP203",))
ROOT = os.geteuid() == 0


@pytest.fixture
def two_files(project):
    root = project({"a/train.py": SPLIT, "b/train.py": SPLIT})
    return root, root / "a" / "train.py", root / "b" / "train.py"


def _fix(root: Path, **options: bool) -> tuple[list[Problem], list[str]]:
    result = lint_paths([root], SETTINGS, fix=True, **options)
    return result.problems, [finding.path for finding in result.findings]


def _one_problem(problems: list[Problem], path: Path, reason: str) -> None:
    [problem] = problems
    assert Path(problem.path).resolve() == path.resolve()
    assert problem.kind == "skipped" and problem.summary.startswith("not fixed: ") and reason in problem.summary


def test_a_read_only_folder_is_reported_and_the_other_files_are_fixed(two_files, monkeypatch):
    root, stuck, other = two_files
    os.chmod(stuck.parent, 0o555)
    if ROOT:
        # Root may create files in any folder: fail as the system does for every other user.
        create = tempfile.mkstemp

        def denied(*args, **kwargs):
            if Path(kwargs["dir"]) == stuck.parent:
                raise PermissionError(errno.EACCES, os.strerror(errno.EACCES))
            return create(*args, **kwargs)

        monkeypatch.setattr(tempfile, "mkstemp", denied)
    try:
        problems, _ = _fix(root)
    finally:
        os.chmod(stuck.parent, 0o755)
    _one_problem(problems, stuck, "cannot create a file in its folder: Permission denied")
    assert stuck.read_text() == SPLIT and sorted(path.name for path in stuck.parent.iterdir()) == ["train.py"]
    assert other.read_text() == FIXED


def test_a_file_edited_while_the_fix_runs_keeps_the_edit(two_files, monkeypatch):
    root, edited, other = two_files
    fix = Engine.fix

    def fix_then_edit(self, projects, unsafe):
        answer = fix(self, projects, unsafe)
        edited.write_text(SPLIT + "seed = 1  # typed meanwhile\n")
        return answer

    monkeypatch.setattr(Engine, "fix", fix_then_edit)
    problems, _ = _fix(root)
    _one_problem(problems, edited, "changed after it was read")
    assert edited.read_text() == SPLIT + "seed = 1  # typed meanwhile\n"
    assert other.read_text() == FIXED
    # A second run fixes the new text.
    monkeypatch.setattr(Engine, "fix", fix)
    assert _fix(root) == ([], [])
    assert edited.read_text() == FIXED + "seed = 1  # typed meanwhile\n"


def test_a_read_only_file_is_not_rewritten(two_files):
    root, stuck, other = two_files
    os.chmod(stuck, 0o444)
    result = lint_paths([root], SETTINGS, fix=True)
    _one_problem(result.problems, stuck, "read-only")
    assert stuck.read_text() == SPLIT and stat.S_IMODE(stuck.stat().st_mode) == 0o444
    assert other.read_text() == FIXED
    # The file keeps its finding, and only the other file's fix is counted.
    assert [Path(finding.path).resolve() for finding in result.findings] == [stuck.resolve()]
    assert result.fixed == 1


def test_add_noqa_reports_a_read_only_file_and_writes_the_others(two_files):
    root, stuck, other = two_files
    os.chmod(stuck, 0o444)
    result = lint_paths([root], SETTINGS, add_noqa=True)
    [problem] = result.problems
    assert Path(problem.path).resolve() == stuck.resolve() and problem.summary == "not written: the file is read-only"
    assert stuck.read_text() == SPLIT
    assert other.read_text().endswith("  # noqa: REP203\n")
    assert [Path(finding.path).resolve() for finding in result.findings] == [stuck.resolve()]
    assert result.noqa_added == 1


@pytest.mark.skipif(not ROOT, reason="only root can make a file that another user owns")
def test_a_file_of_another_user_keeps_its_owner(two_files):
    root, owned, other = two_files
    os.chown(owned, 65534, 65534)
    assert _fix(root) == ([], [])
    assert owned.read_text() == FIXED
    assert (owned.stat().st_uid, owned.stat().st_gid) == (65534, 65534)


@pytest.mark.skipif(not ROOT, reason="only root can make a file that another user owns")
def test_a_file_whose_owner_cannot_be_kept_is_not_rewritten(two_files, monkeypatch):
    root, owned, other = two_files
    os.chown(owned, 65534, 65534)

    def denied(*args):
        raise PermissionError(errno.EPERM, os.strerror(errno.EPERM))

    monkeypatch.setattr(os, "chown", denied)  # as for any user but root
    problems, _ = _fix(root)
    _one_problem(problems, owned, "belongs to another user")
    assert owned.read_text() == SPLIT and sorted(path.name for path in owned.parent.iterdir()) == ["train.py"]
    assert other.read_text() == FIXED


def test_a_symbolic_link_stays_a_link_to_the_fixed_file(tmp_path):
    target = tmp_path / "real.py"
    target.write_text("old\n")
    link = tmp_path / "train.py"
    link.symlink_to(target)
    write_atomically(link, "new\n", "utf-8", "old\n")
    assert link.is_symlink() and target.read_text() == "new\n"


def test_the_bytes_read_decide_whether_the_file_changed(tmp_path):
    # A file read as UTF-8 with a BOM holds the BOM; one that lost it was changed.
    path = tmp_path / "train.py"
    path.write_bytes(b"\xef\xbb\xbfold\n")
    write_atomically(path, "new\n", "utf-8-sig", "old\n")
    assert path.read_bytes() == b"\xef\xbb\xbfnew\n"
    path.write_bytes(b"new\n")
    with pytest.raises(NotWritten, match="changed after it was read"):
        write_atomically(path, "newer\n", "utf-8-sig", "new\n")
    assert path.read_bytes() == b"new\n"
