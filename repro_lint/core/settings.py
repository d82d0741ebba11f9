"""The settings a run is made with, and rule selection: plain data that the rules' file context, the
workers and the caches' keys all read. Reading them from a configuration file is the engine's job
(engine/config.py)."""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path

from repro_lint.core.catalog import CATALOG

DEFAULT_LINE_LENGTH = 88  # Black's and Ruff's


class ConfigError(Exception):
    """The configuration or a command-line option is invalid; the message says which and why."""


@dataclass(frozen=True)
class Settings:
    select: tuple[str, ...] | None = None
    extend_select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] = ()
    exclude: tuple[str, ...] | None = None
    extend_exclude: tuple[str, ...] = ()
    seed_helpers: tuple[str, ...] = ()
    entry_points: tuple[str, ...] = ()
    target_torch_version: str | None = None
    # Only the reports' links depend on it, not the analysis: left out of the repr the cache is keyed by.
    docs_url: str | None = field(default=None, repr=False)
    line_length: int = DEFAULT_LINE_LENGTH  # the project's, from its Ruff, Black or flake8 config
    config_dir: Path | None = field(default=None, compare=False)

    @property
    def enabled_codes(self) -> frozenset[str]:
        if self.select is None:
            chosen = {code for code, rule in CATALOG.items() if rule.default_enabled}
        else:
            chosen = set(expand_codes(self.select))
        chosen |= expand_codes(self.extend_select)
        chosen -= expand_codes(self.ignore)
        return frozenset(chosen)

    def ignored_for(self, relative_path: str) -> frozenset[str]:
        """Codes that `per-file-ignores` turns off for a path relative to the config's folder."""
        codes: set[str] = set()
        name = relative_path.rsplit("/", 1)[-1]
        for pattern, patterns_codes in self.per_file_ignores:
            if fnmatch.fnmatch(relative_path, pattern) or fnmatch.fnmatch(name, pattern):
                codes |= expand_codes(patterns_codes)
        return frozenset(codes)

    def with_overrides(
        self,
        select: Iterable[str] | None,
        extend_select: Iterable[str],
        ignore: Iterable[str],
        *,
        exclude: Iterable[str] | None = None,
        extend_exclude: Iterable[str] = (),
        per_file_ignores: Iterable[tuple[str, tuple[str, ...]]] | None = None,
    ) -> Settings:
        """Command-line options, as Ruff's: `--select`, `--exclude` and `--per-file-ignores` replace
        what is configured, the others add to it."""
        per_file = tuple(per_file_ignores) if per_file_ignores is not None else None
        for option, codes in (("--select", select or ()), ("--extend-select", extend_select), ("--ignore", ignore)):
            check_codes(codes, option)
        for pattern, codes in per_file or ():
            check_codes(codes, f"--per-file-ignores {pattern}")
        return replace(
            self,
            select=tuple(select) if select is not None else self.select,
            extend_select=self.extend_select + tuple(extend_select),
            ignore=self.ignore + tuple(ignore),
            exclude=tuple(exclude) if exclude is not None else self.exclude,
            extend_exclude=self.extend_exclude + tuple(extend_exclude),
            per_file_ignores=per_file if per_file is not None else self.per_file_ignores,
        )


def expand_codes(selectors: Iterable[str]) -> set[str]:
    """Codes named by codes or prefixes (`REP2` is every REP2xx rule, `REP` every rule)."""
    return {code for selector in selectors for code in CATALOG if code.startswith(selector.upper())}


def check_codes(selectors: Iterable[str], where: str) -> None:
    for selector in selectors:
        if not selector:  # a prefix of every code: it would select or ignore them all
            raise ConfigError(f"empty rule code in {where}; `repro-lint rules` lists the codes")
        if not expand_codes([selector]):
            raise ConfigError(f"unknown rule code or prefix {selector!r} in {where}; `repro-lint rules` lists them")
