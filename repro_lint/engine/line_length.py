"""The project's line length, as its formatter and linters are configured: what a fix's lines must fit.

The nearest folder (from where the run starts, upwards) with a setting answers: Ruff's `line-length`
(`ruff.toml`, `.ruff.toml`, `[tool.ruff]` of `pyproject.toml`), Black's `[tool.black] line-length`,
or flake8's `max-line-length` (`setup.cfg`, `tox.ini`, `.flake8`); else Black's and Ruff's 88.
"""

from __future__ import annotations

import configparser
import os
import sys
from pathlib import Path

from repro_lint.core.settings import DEFAULT_LINE_LENGTH

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib

_FLAKE8_FILES = ("setup.cfg", "tox.ini", ".flake8")


def project_line_length(start: Path) -> int:
    folder = Path(os.path.realpath(start))
    if not folder.is_dir():
        folder = folder.parent
    for candidate in (folder, *folder.parents):
        found = _configured(candidate)
        if found is not None:
            return found
    return DEFAULT_LINE_LENGTH


def _configured(folder: Path) -> int | None:
    for name in ("ruff.toml", ".ruff.toml"):
        found = _positive(_toml(folder / name).get("line-length"))
        if found is not None:
            return found
    tool = _toml(folder / "pyproject.toml").get("tool")
    if isinstance(tool, dict):
        for table in (tool.get("ruff"), tool.get("black")):
            found = _positive(table.get("line-length")) if isinstance(table, dict) else None
            if found is not None:
                return found
    for name in _FLAKE8_FILES:
        parser = configparser.ConfigParser(interpolation=None)
        try:
            parser.read(folder / name, encoding="utf-8")
        except (configparser.Error, UnicodeDecodeError):
            continue  # a broken file of another tool is that tool's to report
        value = parser.get("flake8", "max-line-length", fallback=None) or parser.get("flake8", "max_line_length", fallback=None)
        found = _positive(value.strip()) if value is not None and value.strip().isdigit() else None
        if found is not None:
            return found
    return None


def _toml(path: Path) -> dict[str, object]:
    """The document, or an empty one when the file is missing or not valid TOML: a broken file of
    another tool is that tool's to report."""
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError, RecursionError):
        return {}


def _positive(value: object) -> int | None:
    if isinstance(value, str) and value.isdigit():
        value = int(value)
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None
