"""The flake8 extension (`REP`): a thin adapter over the engine in api.py, so `flake8 --select REP PATHS`
reports the same rules, codes, messages and positions as `repro-lint check PATHS`.

flake8 hands a plugin one file at a time, but program-level rules (REP101, REP302, ...) need the whole
project. So the plugin runs `repro-lint check PATHS` on the paths flake8 was given, once, and each file
reads its findings from that run: the same projects (a folder without a project marker is one project,
as `check` makes it), and repro-lint's cache, so a run after `repro-lint check` (or after an earlier
flake8 run) analyses only what changed. That run happens in `parse_options`, which flake8 calls in its
main process before it starts its workers: forked workers inherit the findings, and workers started
afresh (spawn) call it again and find the cache filled.

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
import multiprocessing
from collections.abc import Iterator, Sequence
from functools import lru_cache
from importlib import metadata
from pathlib import Path
from typing import Any

from repro_lint.api import LintResult, lint_paths, lint_text
from repro_lint.core.catalog import CATALOG
from repro_lint.core.findings import Finding
from repro_lint.core.settings import ConfigError, Settings
from repro_lint.core.source import Position
from repro_lint.engine.config import load_settings
from repro_lint.engine.discovery import discover
from repro_lint.engine.workers import default_jobs
from repro_lint.rules.syntax import SyntaxErrorRule

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
def _run_findings(
    given: tuple[Path, ...], settings: Settings, config_dir: Path | None, honour_noqa: bool, jobs: int
) -> tuple[frozenset[Path], dict[Path, tuple[Finding, ...]]]:
    """`repro-lint check GIVEN`, once per flake8 run: (the files it linted, their findings by file).
    `config_dir` is part of the cache key because Settings leave it out of their equality."""
    covered = frozenset(source.path for source in discover(given, settings))
    by_file: dict[Path, list[Finding]] = {}
    for finding in _with_problems(lint_paths(given, settings, use_cache=True, jobs=jobs, honour_noqa=honour_noqa)):
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


def findings_for(path: Path, given: Sequence[Path], settings: Settings, honour_noqa: bool = True, jobs: int = 1) -> list[Finding]:
    """The findings `repro-lint check GIVEN` reports for PATH (absolute)."""
    covered, by_file = _run_findings(tuple(given), settings, settings.config_dir, honour_noqa, jobs)
    if path in covered:
        return list(by_file.get(path, ()))
    # A file flake8 visits and `check`'s walk skips (excluded, git-ignored): as `check` lints a file
    # named on its command line.
    found = _with_problems(lint_paths([path], settings, use_cache=True, honour_noqa=honour_noqa))
    return [finding for finding in found if _absolute(finding.path) == path]


def _settings(path: Path, opt_in: Sequence[str]) -> Settings:
    try:
        return load_settings(None, path).with_overrides(None, opt_in, ())
    except ConfigError as error:
        # flake8 stops with this message (exit 1) instead of a traceback, as the CLI exits 2.
        from flake8.exceptions import ExecutionError

        raise ExecutionError(f"repro-lint: {error}") from None


def _jobs(options: argparse.Namespace) -> int:
    """flake8's `--jobs` for repro-lint's own workers; 1 inside a flake8 worker, a daemon process,
    which may start none."""
    if multiprocessing.current_process().daemon:
        return 1
    jobs = getattr(options, "jobs", None)
    return default_jobs() if jobs is None or jobs.is_auto else jobs.n_jobs


class Plugin:
    name = "repro-lint"
    version = _VERSION
    opt_in: tuple[str, ...] = ()
    honour_noqa = True
    # What parse_options read: the paths flake8 was given, and the settings `check` takes for them.
    given: tuple[Path, ...] = ()
    settings = Settings()
    jobs = 1

    def __init__(self, tree: ast.AST, filename: str, lines: Sequence[str]) -> None:
        # `tree` is unused (the engine parses with LibCST), but flake8 only runs plugins that ask for
        # a tree, a logical line or a physical line; a tree plugin is the one that runs once per file.
        self.filename = filename
        self.lines = lines

    @classmethod
    def parse_options(cls, options: argparse.Namespace) -> None:
        """Called once per flake8 run (and per worker process it spawns): a new run must not see the
        findings of files as an earlier run in the same process (flake8's legacy API, an editor)
        found them. Lints flake8's paths here, before flake8 forks its workers (see the module's
        docstring)."""
        cls.opt_in = opt_in_codes_selected([*(options.select or ()), *(options.extend_select or ())])
        cls.honour_noqa = not options.disable_noqa
        _run_findings.cache_clear()
        # flake8 reports a missing path itself (E902); `check` would lint the others, as here.
        cls.given = tuple(path for name in options.filenames or ["."] if name != "-" and (path := Path(name)).exists())
        cls.jobs = _jobs(options)
        if cls.given:
            cls.settings = _settings(cls.given[0], cls.opt_in)
            _run_findings(cls.given, cls.settings, cls.settings.config_dir, cls.honour_noqa, cls.jobs)

    def run(self) -> Iterator[tuple[int, int, str, type[Any]]]:
        path = Path(self.filename)
        if path.is_file():
            # Without paths from parse_options (flake8's legacy API), the file is the one given.
            given, settings = (self.given, self.settings) if self.given else ((path,), _settings(path, self.opt_in))
            findings = findings_for(path.resolve(), given, settings, self.honour_noqa, self.jobs)
        else:
            # Standard input (`flake8 -`): lint the text flake8 read, as a program of its own.
            findings = _with_problems(lint_text("".join(self.lines), self.filename, _settings(Path.cwd(), self.opt_in), honour_noqa=self.honour_noqa))
        for finding in findings:
            # flake8 wants 0-based columns from plugins (it prints column + 1), as Position has them.
            yield finding.start.line, finding.start.column, f"{finding.code} {finding.message}", type(self)
