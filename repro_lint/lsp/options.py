"""The client's rule selection (`initializationOptions`, `workspace/didChangeConfiguration`) and the
settings of a document: its project's configuration with that selection over it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from repro_lint.core.settings import ConfigError, Settings, check_codes
from repro_lint.engine.config import load_settings

# Clients put a server's options at the top level, or under its name (VS Code's settings.json style).
_SECTIONS = ("repro-lint", "repro_lint")


@dataclass(frozen=True)
class Selection:
    """`select` replaces the configured selection, `ignore` adds to it, as on the command line."""

    select: tuple[str, ...] | None = None
    ignore: tuple[str, ...] = ()


def _codes(options: Mapping[str, object], key: str) -> tuple[str, ...] | None:
    value = options.get(key)
    if value is None:
        return None
    if not isinstance(value, list) or not all(isinstance(code, str) for code in value):
        raise ConfigError(f"the editor's settings: `{key}` must be a list of rule codes")
    check_codes(value, f"the editor's settings: `{key}`")
    return tuple(value)


def client_selection(options: object) -> Selection | None:
    """The selection the client's options give, or None when they hold no repro-lint settings (another
    server's section of a configuration change, say). Raises ConfigError for a malformed one."""
    if not isinstance(options, Mapping):
        return None
    for section in _SECTIONS:
        if isinstance(options.get(section), Mapping):
            options = options[section]
            break
    else:
        if not {"select", "ignore"} & options.keys():
            return None
    return Selection(_codes(options, "select"), _codes(options, "ignore") or ())


def document_settings(path: Path, selection: Selection) -> Settings:
    """The settings of the project holding `path` (its nearest repro-lint.toml or pyproject.toml),
    with the client's selection over them. Raises ConfigError as `check` would."""
    return load_settings(None, path).with_overrides(selection.select, (), selection.ignore)
