"""Linting an open document in its project, and the texts its code actions would leave: one fix
applied, a `noqa` comment added, every safe fix applied. Plain text in and out, no LSP types."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from repro_lint.analysis.suppression import NOT_SILENCED_BY_ADD_NOQA, add_noqa, python_suppressions
from repro_lint.api import lint_paths
from repro_lint.core.findings import Finding
from repro_lint.core.problems import Problem
from repro_lint.core.settings import Settings
from repro_lint.engine.fixes import apply_fixes
from repro_lint.sources import validator_for


@dataclass(frozen=True)
class Linted:
    """A document's findings, and the text they were found in: its code actions edit that text."""

    text: str
    findings: tuple[Finding, ...]
    settings: Settings
    problems: tuple[Problem, ...] = ()


def lint_document(path: Path, text: str, settings: Settings, open_texts: Mapping[Path, str]) -> Linted:
    """`text` linted as the file `path` of its project. The project's other files come from the cache
    or the disk, except the other open documents, whose unsaved texts count instead."""
    result = lint_paths([path], settings, use_cache=True, overrides={**open_texts, path: text})
    return Linted(text, tuple(result.findings), settings, tuple(result.problems))


def with_every_safe_fix(path: Path, linted: Linted, open_texts: Mapping[Path, str]) -> str | None:
    """The text with every safe fix applied (round after round, as `check --fix` does), or None when
    none applies."""
    result = lint_paths([path], linted.settings, fix=True, use_cache=True, overrides={**open_texts, path: linted.text})
    fixed = result.fixed_sources.get(path.resolve())
    # An override given as text is held, and handed back, as UTF-8.
    return None if fixed is None else fixed.decode("utf-8")


def with_fix(path: Path, linted: Linted, finding: Finding) -> str | None:
    """The text with the finding's fix alone applied, checked to parse as `--fix` checks it; None when
    it cannot be."""
    if finding.fix is None:
        return None
    line_length = linted.settings.line_length if path.suffix == ".py" else None
    text, applied = apply_fixes(linted.text, [finding.fix], validator_for(path.name), line_length)
    return text if applied else None


def silenceable(finding: Finding) -> bool:
    """Whether a `# noqa` comment can silence the finding (not a syntax error, nor an unused `noqa`)."""
    return finding.code not in NOT_SILENCED_BY_ADD_NOQA


def with_noqa(linted: Linted, finding: Finding) -> str | None:
    """The text with `# noqa: CODE` for the finding (merged into the line's `noqa` comment, or where its
    statement can take one, as `--add-noqa` puts it); None when the text needs no change."""
    text, placed = add_noqa(linted.text, {finding.start.line: [finding.code]}, python_suppressions(linted.text), python=True)
    return text if placed else None
