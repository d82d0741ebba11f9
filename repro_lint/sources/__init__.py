"""Files other than Python that the rules read: launch scripts (`.sh`) and configs (`.yaml`, `.yml`,
`.json`). Each scanner turns a file's text into a `FileAnalysis` like the Python analysis does, with
findings under the same codes, positions and `noqa` comments, so the engine treats them alike."""

from __future__ import annotations

from collections.abc import Callable

from repro_lint.analysis import FileAnalysis
from repro_lint.sources.reports import empty

_SHELL, _YAML, _JSON = (".sh",), (".yaml", ".yml"), (".json",)

Scanner = Callable[[str, str], FileAnalysis]


def _suffix(path: str) -> str:
    name = path.rpartition("/")[2]
    return "." + name.rpartition(".")[2].lower() if "." in name else ""


def scanner_for(path: str) -> Scanner | None:
    """The scanner for a file of this name; None for Python (and anything else)."""
    from repro_lint.sources import configs, shell_scan  # imported late: they load the rules' data

    suffix = _suffix(path)
    if suffix in _SHELL:
        return shell_scan.scan
    if suffix in _YAML:
        return configs.scan_yaml
    if suffix in _JSON:
        return configs.scan_json
    return None


def validator_for(path: str) -> Callable[[str], bool] | None:
    """What a fixed text must pass before the fix is kept (the file still parses)."""
    from repro_lint.sources import configs, shell_scan

    suffix = _suffix(path)
    if suffix in _SHELL:
        return shell_scan.parses
    if suffix in _YAML:
        return configs.parses_yaml
    if suffix in _JSON:
        return configs.parses_json
    return None


__all__ = ["empty", "scanner_for", "validator_for"]
