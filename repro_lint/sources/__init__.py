"""Files other than Python that the rules read: launch scripts (`.sh`) and configs (`.yaml`, `.yml`,
`.json`). Each scanner turns a file's text into a `FileAnalysis` like the Python analysis does, with
findings under the same codes, positions and `noqa` comments, so the engine treats them alike.

May import `analysis` (notebooks run the Python analysis on their cells) and everything below it;
only the engine imports the sources."""

from __future__ import annotations

from collections.abc import Callable

from repro_lint.analysis.result import FileAnalysis
from repro_lint.sources.reports import empty

_SHELL, _YAML, _JSON = (".sh",), (".yaml", ".yml"), (".json",)
_SCANNED = (*_SHELL, *_YAML, *_JSON)

Scanner = Callable[[str, str], FileAnalysis]


def _suffix(path: str) -> str:
    name = path.rpartition("/")[2]
    return "." + name.rpartition(".")[2].lower() if "." in name else ""


def _handlers(path: str) -> tuple[Scanner, Callable[[str], bool]] | None:
    """The scanner for a file of this name and the parse check its fixed text must pass; None for
    Python (and anything else)."""
    suffix = _suffix(path)
    if suffix not in _SCANNED:
        return None  # asked of every file read: a run reading only Python loads no scanner
    from repro_lint.sources import configs, shell_scan, shell_syntax  # imported late: they load the rules' data

    by_kind = (
        (_SHELL, shell_scan.scan, shell_syntax.parses),
        (_YAML, configs.scan_yaml, configs.parses_yaml),
        (_JSON, configs.scan_json, configs.parses_json),
    )
    return next(((scan, parses) for suffixes, scan, parses in by_kind if suffix in suffixes), None)


def scanner_for(path: str) -> Scanner | None:
    handlers = _handlers(path)
    return handlers[0] if handlers else None


def validator_for(path: str) -> Callable[[str], bool]:
    """What a fixed text must pass before the fix is kept (the file still parses)."""
    from repro_lint.analysis.python import parses
    from repro_lint.sources import notebook

    if notebook.is_notebook(path):
        return notebook.parses
    handlers = _handlers(path)
    return handlers[1] if handlers else parses


__all__ = ["empty", "scanner_for", "validator_for"]
