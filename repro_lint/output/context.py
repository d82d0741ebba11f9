"""What a report needs besides the findings: the folder it names files from, where the rule pages
are published, and the texts the findings point into."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from repro_lint.core.findings import Finding
from repro_lint.core.problems import Problem
from repro_lint.core.source import LineIndex
from repro_lint.engine.discovery import project_root
from repro_lint.engine.modules import ReportedTexts


@dataclass(frozen=True)
class ReportContext:
    root: Path  # absolute; see repository_root
    docs_url: str | None  # `[tool.repro-lint] docs-url`
    problems: Sequence[Problem] = ()
    texts: ReportedTexts | None = None  # the reported files' texts, for formats that show them


def source_of(finding: Finding, context: ReportContext) -> LineIndex | None:
    """The text the finding's positions count in (its cell's in a notebook); None where it is unknown."""
    return context.texts.lines(finding.path, finding.cell) if context.texts is not None else None


def repository_root(start: Path) -> Path:
    """The folder GitHub matches a SARIF location or an annotation's `file=` against: the nearest
    folder holding `.git` (a folder, or a file in a worktree or a submodule), as `git rev-parse
    --show-toplevel` answers, whatever folder repro-lint runs in. Found by looking, not by running git:
    an image may have no git, and git refuses to answer in a checkout another user owns
    (`safe.directory`, as in GitHub's container jobs). Without a `.git`, the project root; without
    one, the folder of `start`."""
    folder = Path(os.path.realpath(start))
    if not folder.is_dir():
        folder = folder.parent
    git_root = next((candidate for candidate in (folder, *folder.parents) if (candidate / ".git").exists()), None)
    return git_root or project_root(folder) or folder


def path_under_root(reported: str, root: Path) -> str | None:
    """A reported path (relative to the current folder, or absolute) as a POSIX path relative to
    `root`; None for a file outside it."""
    absolute = Path(os.path.abspath(reported))
    for candidate in (absolute, absolute.resolve()):  # as named first: a symlink inside the root stays there
        if candidate.is_relative_to(root):
            return candidate.relative_to(root).as_posix()
    return None
