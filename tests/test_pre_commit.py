"""The pre-commit hooks, through the real `pre-commit`: the hook fails on a bad file, the fix hook
applies the safe fix, and the hook then passes.

pre-commit installs the hook repository into a fresh virtualenv (pip, from the package index), so this
one test takes tens of seconds. The hook repository is a snapshot of this checkout's working tree,
committed into a temporary repository: `pre-commit try-repo` on the checkout itself would snapshot only
the files git already tracks, so a module not yet committed would be missing from the installed hook.
The project uses the hooks through a `.pre-commit-config.yaml`, as users do, rather than `try-repo`:
`try-repo` installs into a throwaway store on every call (it ignores PRE_COMMIT_HOME), which would
triple the install time.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from repro_lint.engine.discovery import LINTED_SUFFIXES

ROOT = Path(__file__).resolve().parent.parent

needs_pre_commit = pytest.mark.skipif(
    importlib.util.find_spec("pre_commit") is None, reason="pre-commit is not installed (it is in the `test` extra)"
)
needs_git_checkout = pytest.mark.skipif(
    shutil.which("git") is None or not (ROOT / ".git").exists(), reason="needs git and a git checkout of repro-lint"
)

TRAIN = textwrap.dedent(
    """\
    import torch
    from torch.utils.data import random_split


    def main():
        torch.manual_seed(0)
        dataset = torch.arange(10)
        train, val = random_split(dataset, [8, 2])
        print(len(train), len(val))


    if __name__ == "__main__":
        main()
    """
)
# A throwaway identity and no signing, whatever the user's git configuration says.
GIT = ["git", "-c", "user.name=repro-lint tests", "-c", "user.email=tests@example.invalid", "-c", "commit.gpgsign=false"]


def git(cwd: Path, *args: str) -> str:
    return subprocess.run([*GIT, *args], cwd=cwd, check=True, capture_output=True, text=True).stdout


def snapshot(destination: Path) -> Path:
    """This checkout's working tree (tracked files and new files git does not ignore), committed."""
    listed = git(ROOT, "ls-files", "-z", "--cached", "--others", "--exclude-standard").split("\0")
    for name in filter(None, listed):
        source, target = ROOT / name, destination / name
        if not source.is_file():  # a tracked file deleted in the working tree is left out
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        try:
            shutil.copy2(source, target)
        except FileNotFoundError:
            pass  # gone since it was listed: another process's temporary file (an atomic write)
    git(destination, "init", "-q")
    git(destination, "add", "-A")
    git(destination, "commit", "-q", "-m", "snapshot")
    return destination


def pre_commit(hook: str, cwd: Path, home: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pre_commit", "run", hook, "--files", "train.py", "--color", "never"],
        cwd=cwd, capture_output=True, text=True, env={**os.environ, "PRE_COMMIT_HOME": str(home)},
    )  # fmt: skip


@needs_pre_commit
def test_manifest_declares_both_hooks():
    from identify.identify import tags_from_filename  # pre-commit's own file typing
    from pre_commit.clientlib import load_manifest  # pre-commit's own validation of the file

    hooks = {hook["id"]: hook for hook in load_manifest(str(ROOT / ".pre-commit-hooks.yaml"))}
    assert sorted(hooks) == ["repro-lint", "repro-lint-fix"]
    assert hooks["repro-lint"]["entry"] == "repro-lint check"
    assert hooks["repro-lint-fix"]["entry"] == "repro-lint check --fix"
    for hook in hooks.values():
        assert hook["language"] == "python" and hook["require_serial"] is True
        # pre-commit passes a file when one of its tags is in types_or: every kind `check` lints.
        for suffix in LINTED_SUFFIXES:
            assert set(tags_from_filename(f"file{suffix}")) & set(hook["types_or"]), suffix


@needs_pre_commit
@needs_git_checkout
def test_hooks_fail_then_fix_then_pass(tmp_path):
    hooks_repo = snapshot(tmp_path / "repro-lint")
    project = tmp_path / "project"
    project.mkdir()
    git(project, "init", "-q")
    (project / "train.py").write_text(TRAIN)
    (project / ".pre-commit-config.yaml").write_text(
        f"repos:\n- repo: {json.dumps(hooks_repo.as_posix())}\n  rev: {git(hooks_repo, 'rev-parse', 'HEAD').strip()}\n"
        "  hooks:\n  - id: repro-lint\n  - id: repro-lint-fix\n"
    )
    # Committed, as files pre-commit checks are: it sees a hook's changes through `git diff`.
    git(project, "add", "-A")
    git(project, "commit", "-q", "-m", "train")
    home = tmp_path / "pre-commit-home"

    failed = pre_commit("repro-lint", project, home)
    assert failed.returncode == 1, failed.stdout + failed.stderr
    assert "train.py:8:18: REP203 `random_split` without `generator`" in failed.stdout
    assert (project / "train.py").read_text() == TRAIN

    fixed = pre_commit("repro-lint-fix", project, home)
    # pre-commit fails a hook that changed files, so the user sees and stages the fix.
    assert fixed.returncode == 1 and "files were modified by this hook" in fixed.stdout, fixed.stdout
    assert (project / "train.py").read_text() == TRAIN.replace(
        # The seed `main` already uses; the call wrapped to the line length, as Black wraps it.
        "random_split(dataset, [8, 2])",
        "random_split(\n        dataset, [8, 2], generator=torch.Generator().manual_seed(0)\n    )",
    )

    passed = pre_commit("repro-lint", project, home)
    assert passed.returncode == 0, passed.stdout + passed.stderr
    assert "Passed" in passed.stdout
