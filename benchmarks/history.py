"""Replay a repository's recent commits on a tree audited at the commit before each, and compare each
cached run with an uncached one: a differential test of the last run's record on real edits, and how
many of them it answers without running the project pass.

    python benchmarks/history.py REPO [--commits 25] [--jobs 2] [--repro-lint PYTHON] [--only GLOB]

REPO is a git repository (a clone, or a bare git folder). The last --commits first-parent commits of
HEAD that change Python files are applied one by one (each changed file written or removed) to a copy
of the tree at the commit before the first, in a temporary folder: REPO is never written. After an
audit of that tree, each commit is followed by `check --output-format json` with the cache and with
`--no-cache`. Prints a Markdown row per commit (files it changes, Python among them, whether the two
reports are identical, whether the project pass ran) and a totals row; exits 1 when two reports differ.
With --only GLOB, only the commits whose Python files all match GLOB are replayed (`tests/*`: the
commits changing tests alone); the commits between them are applied, and audited before the next.
Blobs a partial clone lacks are left out (their count is printed): the tree is then not quite REPO's.
"""

from __future__ import annotations

import argparse
import fnmatch
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

_PASS_RAN = "history: the project pass ran"
# `check`, telling on stderr when the project pass builds its model (the record did not answer).
_CHECK = f"""
import sys
from repro_lint.cli import run
from repro_lint.program import model

built = model.ProjectModel.__init__


def told(self, *args, **kwargs):
    print({_PASS_RAN!r}, file=sys.stderr, flush=True)
    built(self, *args, **kwargs)


model.ProjectModel.__init__ = told
sys.argv = ["repro-lint", *sys.argv[1:]]
run()
"""


@dataclass(frozen=True)
class Row:
    commit: str
    files: int
    python: int
    identical: bool
    pass_ran: bool


class Git:
    def __init__(self, repo: Path) -> None:
        self.folder = repo / ".git" if (repo / ".git").exists() else repo
        self._cat = subprocess.Popen(["git", "--git-dir", str(self.folder), "cat-file", "--batch"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        self.missing = 0

    def __call__(self, *args: str) -> str:
        return subprocess.run(["git", "--git-dir", str(self.folder), *args], capture_output=True, check=True, text=True).stdout

    def blob(self, name: str) -> bytes | None:
        """The blob `name` (an object id, or `commit:path`); None where the clone lacks it."""
        assert self._cat.stdin is not None and self._cat.stdout is not None
        self._cat.stdin.write(name.encode() + b"\n")
        self._cat.stdin.flush()
        header = self._cat.stdout.readline().split()
        if header[-1] == b"missing":
            self.missing += 1
            return None
        data = self._cat.stdout.read(int(header[2]))
        self._cat.stdout.read(1)
        return data

    def check_out(self, commit: str, tree: Path) -> None:
        for entry in self("ls-tree", "-r", "-z", commit).split("\0"):
            if not entry:
                continue
            meta, path = entry.split("\t", 1)
            mode, kind, name = meta.split()
            if kind == "blob" and mode != "120000":  # links are left out, as the cache would follow them
                self._write(tree / path, self.blob(name))

    def apply(self, commit: str, tree: Path) -> list[str]:
        """Write the files `commit` changes into `tree` as they are after it; the paths changed."""
        fields = iter(self("diff", "--name-status", "-z", "--no-renames", f"{commit}^", commit).split("\0"))
        changed = []
        for status in fields:
            if not status:
                continue
            path = next(fields)
            changed.append(path)
            if status == "D":
                (tree / path).unlink(missing_ok=True)
            else:
                self._write(tree / path, self.blob(f"{commit}:{path}"))
        return changed

    @staticmethod
    def _write(target: Path, data: bytes | None) -> None:
        if data is not None:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)


def _check(python: str, tree: Path, jobs: int, *extra: str) -> tuple[str, bool]:
    """The JSON report of `check` on `tree`, and whether the project pass ran."""
    result = subprocess.run(
        [python, "-c", _CHECK, "check", ".", "--jobs", str(jobs), "--output-format", "json", *extra], cwd=tree, capture_output=True, text=True
    )
    if result.returncode not in (0, 1):
        sys.exit(f"history: check failed in {tree} (exit {result.returncode}):\n{result.stderr[-2000:]}")
    return result.stdout, _PASS_RAN in result.stderr


def replay(repo: Path, commits: int, jobs: int, python: str, only: str | None = None) -> tuple[list[Row], int]:
    git = Git(repo)
    # A root commit has nothing before it to audit.
    logged = [line.split() for line in git("log", "--first-parent", "--format=%H %P", "HEAD", "--", "*.py").splitlines()]
    every = [commit for commit, *parents in logged if parents][::-1]
    chosen = [commit for commit in every if only is None or _changes_only(git, commit, only)][-commits:]
    if not chosen:
        sys.exit(f"history: {repo} has no commit changing Python files after its first" + (f" only under {only}" if only else ""))
    replayed = set(chosen)
    rows = []
    with tempfile.TemporaryDirectory(prefix="history-") as folder:
        tree = Path(folder) / repo.resolve().name
        tree.mkdir()
        git.check_out(f"{chosen[0]}^", tree)
        subprocess.run(["git", "init", "-q", str(tree)], check=True)  # the project's root, as a clone's
        audited = False
        for commit in every[every.index(chosen[0]) : every.index(chosen[-1]) + 1]:
            if commit not in replayed:  # applied, then audited before the next commit replayed
                git.apply(commit, tree)
                audited = False
                continue
            if not audited:
                _check(python, tree, jobs)  # the audit the commit follows
            changed = git.apply(commit, tree)
            cached, pass_ran = _check(python, tree, jobs)
            fresh, _ = _check(python, tree, jobs, "--no-cache")
            rows.append(Row(commit[:10], len(changed), sum(path.endswith(".py") for path in changed), cached == fresh, pass_ran))
            audited = True  # the cached run was one
    return rows, git.missing


def _changes_only(git: Git, commit: str, pattern: str) -> bool:
    """Whether every Python file `commit` changes matches `pattern` (fnmatch: `*` crosses folders)."""
    return all(fnmatch.fnmatch(path, pattern) for path in git("diff", "--name-only", f"{commit}^", commit, "--", "*.py").splitlines())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("repo", type=Path)
    parser.add_argument("--commits", type=int, default=25)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--repro-lint", default=sys.executable, help="the Python that runs repro-lint (default: this one)")
    parser.add_argument("--only", metavar="GLOB", help="replay only the commits whose Python files all match GLOB (`tests/*`); the others are applied")
    args = parser.parse_args()
    rows, missing = replay(args.repo, args.commits, args.jobs, args.repro_lint, args.only)
    print("| commit | files changed | Python | identical to --no-cache | project pass ran |")
    print("|---|---|---|---|---|")
    for row in rows:
        print(f"| {row.commit} | {row.files} | {row.python} | {'yes' if row.identical else 'NO'} | {'yes' if row.pass_ran else 'no'} |")
    identical, ran = sum(row.identical for row in rows), sum(row.pass_ran for row in rows)
    print(f"| **{len(rows)} commits** | | | {identical} | {ran} (answered from the record: {len(rows) - ran}) |")
    if missing:
        print(f"\n{missing} blobs missing from the clone were left out", file=sys.stderr)
    return 0 if identical == len(rows) else 1


if __name__ == "__main__":
    sys.exit(main())
