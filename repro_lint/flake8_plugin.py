"""The flake8 extension (`REP`): a thin adapter over the engine in api.py, so `flake8 --select REP`
reports the same rules, codes, messages and positions as `repro-lint check`.

flake8 hands a plugin one file at a time, but program-level rules (REP101, REP302, ...) need the whole
project. The first file of a project lints the whole project once, the way `repro-lint check ROOT`
would, and later files of that project read their findings from that run: linting each file separately
would parse every project module once per file (measured: one file of a 120-module project costs as
much as the whole project). With `--jobs`, each flake8 worker process lints the project once.

Which rules run:
- the project's `[tool.repro-lint]` configuration decides, as for the CLI;
- an opt-in rule (off by default, e.g. REP206) also runs when flake8's `--select` or `--extend-select`
  names it by its code or by a prefix longer than `REP` (`REP2`, `REP20`, `REP206`). A bare `REP` only
  means "repro-lint's codes", as flake8 users write it to pick a plugin, so it keeps opt-in rules off.
flake8 then applies its own `--select`/`--ignore` and `# noqa` to what the plugin reports. The engine
still honours repro-lint's own `# noqa` and `# repro-lint: noqa` comments (same `# noqa: REP301` and
prefix syntax as flake8's), so a comment either tool honours silences the finding; with flake8's
`--disable-noqa` the engine honours none of them either, so every finding comes back.
"""

from __future__ import annotations

import argparse
import ast
from collections.abc import Iterator, Sequence
from functools import lru_cache
from importlib import metadata
from pathlib import Path
from typing import Any

from repro_lint.api import LintResult, lint_paths, lint_text
from repro_lint.config import ConfigError, Settings, load_settings
from repro_lint.discovery import discover, project_root
from repro_lint.rules.catalog import CATALOG
from repro_lint.rules.base import Finding
from repro_lint.rules.syntax import SyntaxErrorRule
from repro_lint.source import Position

PREFIX = "REP"
_START = Position(1, 0)
_PROBLEM = {
    "error": "repro-lint failed on this file (an internal error; please report it): {}",
    "skipped": "repro-lint skipped this file: {}",
}

try:
    _VERSION = metadata.version("repro-lint")
except metadata.PackageNotFoundError:  # pragma: no cover - only in an uninstalled checkout
    _VERSION = "unknown"


def opt_in_codes_selected(selectors: Sequence[str]) -> tuple[str, ...]:
    """The opt-in rules that flake8 selectors name more precisely than the bare plugin prefix."""
    specific = tuple(selector.strip().upper() for selector in selectors if len(selector.strip()) > len(PREFIX))
    return tuple(
        code
        for code, rule in sorted(CATALOG.items())
        if not rule.default_enabled and any(code.startswith(selector) for selector in specific)
    )


def _absolute(display: str) -> Path:
    # The engine reports paths relative to the (resolved) current folder, or absolute outside it.
    path = Path(display)
    return path if path.is_absolute() else Path.cwd().resolve() / path


@lru_cache(maxsize=8)
def _project_findings(
    root: Path, settings: Settings, config_dir: Path | None, honour_noqa: bool
) -> tuple[frozenset[Path], dict[Path, tuple[Finding, ...]]]:
    """Lint a whole project once per flake8 process: (the files it covered, their findings by file).
    `config_dir` is part of the cache key because Settings leave it out of their equality."""
    covered = frozenset(source.path for source in discover([root], settings))
    by_file: dict[Path, list[Finding]] = {}
    for finding in _with_problems(lint_paths([root], settings, honour_noqa=honour_noqa)):
        by_file.setdefault(_absolute(finding.path), []).append(finding)
    return covered, {path: tuple(findings) for path, findings in by_file.items()}


def _with_problems(result: LintResult) -> list[Finding]:
    """The findings, and one REP001 for each file repro-lint failed on or skipped: flake8 has no
    other channel, and a plugin that raises stops flake8's whole run."""
    told = [
        Finding(SyntaxErrorRule.code, SyntaxErrorRule.name, _PROBLEM[problem.kind].format(problem.summary), problem.path, _START, _START)
        for problem in result.problems
    ]
    return [*result.findings, *told]


def findings_for(path: Path, settings: Settings, honour_noqa: bool = True) -> list[Finding]:
    """The findings `repro-lint check PATH` reports for one file, PATH absolute."""
    root = project_root(path.parent)
    if root is not None:
        covered, by_file = _project_findings(root, settings, settings.config_dir, honour_noqa)
        if path in covered:
            return list(by_file.get(path, ()))
    # Outside a project, or a file the project walk skips (excluded, git-ignored): as the CLI does
    # for a file named on its command line.
    found = _with_problems(lint_paths([path], settings, honour_noqa=honour_noqa))
    return [finding for finding in found if _absolute(finding.path) == path]


class Plugin:
    name = "repro-lint"
    version = _VERSION
    opt_in: tuple[str, ...] = ()
    honour_noqa = True

    def __init__(self, tree: ast.AST, filename: str, lines: Sequence[str]) -> None:
        # `tree` is unused (the engine parses with LibCST), but flake8 only runs plugins that ask for
        # a tree, a logical line or a physical line; a tree plugin is the one that runs once per file.
        self.filename = filename
        self.lines = lines

    @classmethod
    def parse_options(cls, options: argparse.Namespace) -> None:
        """Called once per flake8 run (and per worker process): a new run must not see the findings of
        files as an earlier run in the same process (flake8's legacy API, an editor) found them."""
        cls.opt_in = opt_in_codes_selected([*(options.select or ()), *(options.extend_select or ())])
        cls.honour_noqa = not options.disable_noqa
        _project_findings.cache_clear()

    def _settings(self, path: Path) -> Settings:
        try:
            return load_settings(None, path).with_overrides(None, self.opt_in, ())
        except ConfigError as error:
            # flake8 stops with this message (exit 1) instead of a traceback, as the CLI exits 2.
            from flake8.exceptions import ExecutionError

            raise ExecutionError(f"repro-lint: {error}") from None

    def run(self) -> Iterator[tuple[int, int, str, type[Any]]]:
        path = Path(self.filename)
        if path.is_file():
            absolute = path.resolve()
            findings = findings_for(absolute, self._settings(absolute), self.honour_noqa)
        else:
            # Standard input (`flake8 -`): lint the text flake8 read, as a program of its own.
            findings = _with_problems(lint_text("".join(self.lines), self.filename, self._settings(Path.cwd()), honour_noqa=self.honour_noqa))
        for finding in findings:
            # flake8 wants 0-based columns from plugins (it prints column + 1), as Position has them.
            yield finding.start.line, finding.start.column, f"{finding.code} {finding.message}", type(self)
