"""`[tool.repro-lint]` configuration: finding it, reading it and validating it with clear errors."""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib

from packaging.version import InvalidVersion, Version

from repro_lint.core.pages import is_web_url
from repro_lint.core.settings import ConfigError, Settings, check_codes
from repro_lint.engine.line_length import project_line_length

CONFIG_FILES = ("repro-lint.toml", "pyproject.toml")
_TABLE_NAME = "repro-lint"  # of pyproject.toml's `tool` table


def _is_version(value: object) -> bool:
    """A PEP 440 version, as requirement files spell torch's (`2.1`, `1.13.1`)."""
    if not isinstance(value, str):
        return False
    try:
        Version(value)
    except InvalidVersion:
        return False
    return True


def _string_list(table: Mapping[str, object], key: str, where: str) -> tuple[str, ...] | None:
    if key not in table:
        return None
    value = table[key]
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise ConfigError(f"{where}: `{key}` must be a list of strings")
    return tuple(value)


_LIST_KEYS = ("select", "extend-select", "ignore", "exclude", "extend-exclude", "seed-helpers", "entry-points")
_KNOWN_KEYS = frozenset({*_LIST_KEYS, "per-file-ignores", "target-torch-version", "docs-url"})


def settings_from_table(table: Mapping[str, object], where: str, config_dir: Path | None) -> Settings:
    unknown = sorted(set(table) - _KNOWN_KEYS)
    if unknown:
        raise ConfigError(f"{where}: unknown key `{unknown[0]}` (known keys: {', '.join(sorted(_KNOWN_KEYS))})")
    lists = {key: _string_list(table, key, where) for key in _LIST_KEYS}
    for key in ("select", "extend-select", "ignore"):
        check_codes(lists[key] or (), f"{where}: `{key}`")

    per_file: list[tuple[str, tuple[str, ...]]] = []
    raw_per_file = table.get("per-file-ignores", {})
    if not isinstance(raw_per_file, dict):
        raise ConfigError(f"{where}: `per-file-ignores` must be a table of glob = [codes]")
    for pattern, codes in sorted(raw_per_file.items()):
        listed = _string_list({pattern: codes}, pattern, f"{where}: `per-file-ignores`")
        check_codes(listed or (), f"{where}: `per-file-ignores.{pattern}`")
        per_file.append((pattern, listed or ()))

    version = table.get("target-torch-version")
    if version is not None and not _is_version(version):
        raise ConfigError(f"{where}: `target-torch-version` must be a version string such as \"2.1\"")

    docs_url = table.get("docs-url")
    if docs_url is not None and (not isinstance(docs_url, str) or not is_web_url(docs_url)):
        raise ConfigError(
            f"{where}: `docs-url` must be an absolute http(s) URL of the folder holding the rule pages, "
            "such as \"https://example.org/repro-lint/rules/\""
        )

    return Settings(
        select=lists["select"],
        extend_select=lists["extend-select"] or (),
        ignore=lists["ignore"] or (),
        per_file_ignores=tuple(per_file),
        exclude=lists["exclude"],
        extend_exclude=lists["extend-exclude"] or (),
        seed_helpers=lists["seed-helpers"] or (),
        entry_points=lists["entry-points"] or (),
        target_torch_version=version,
        docs_url=docs_url,
        config_dir=config_dir,
    )


def _read_toml(path: Path) -> dict[str, object]:
    """The document, read as `tomllib.load` reads a file: its bytes must be UTF-8, as TOML requires."""
    try:
        raw = path.read_bytes()
    except OSError as error:
        raise ConfigError(f"cannot read config file {path}: {error.strerror or error}") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        line = raw.count(b"\n", 0, error.start) + 1
        raise ConfigError(f"{path}: invalid TOML: not valid UTF-8 (byte 0x{raw[error.start]:02x} on line {line})") from None
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"{path}: invalid TOML: {error}") from None
    except RecursionError:  # tomllib recurses once per level of nested arrays and inline tables
        raise ConfigError(f"{path}: cannot read: arrays or inline tables nested too deeply") from None


def load_config_file(path: Path) -> Settings:
    document = _read_toml(path)
    if path.name == "pyproject.toml":
        tool = document.get("tool", {})
        if not isinstance(tool, dict):
            raise ConfigError(f"{path}: `tool` must be a table")
        table = tool.get(_TABLE_NAME, {})
        where = f"{path}: [tool.repro-lint]"
    else:
        table = document
        where = str(path)
    if not isinstance(table, dict):
        raise ConfigError(f"{where} must be a table")
    return settings_from_table(table, where, path.parent.resolve())


def find_config_file(start: Path) -> Path | None:
    """The nearest `repro-lint.toml`, or `pyproject.toml` with a `[tool.repro-lint]` table."""
    folder = Path(os.path.realpath(start))  # Path.resolve raises on a symlink loop; discovery reports it
    if not folder.is_dir():
        folder = folder.parent
    for candidate_folder in (folder, *folder.parents):
        for name in CONFIG_FILES:
            candidate = candidate_folder / name
            if not candidate.is_file():
                continue
            if name == "repro-lint.toml" or _has_tool_table(candidate):
                return candidate
    return None


def _has_tool_table(pyproject: Path) -> bool:
    """Whether the file configures repro-lint. A valid document answers by its parsed
    `tool.repro-lint` table, however spelt (`[ tool."repro-lint" ]`, `tool = {repro-lint = {...}}`,
    dotted keys). A broken one (not TOML, a byte that is not UTF-8, unreadable) cannot say where its
    tables are: it is taken as ours when it names repro-lint anywhere, or cannot be read at all, so
    that loading it says what is wrong instead of dropping its settings (Ruff stops there too); other
    broken pyproject files are not ours to judge."""
    try:
        document = _read_toml(pyproject)
    except ConfigError:
        try:
            return _TABLE_NAME in pyproject.read_bytes().decode("utf-8", errors="replace")
        except OSError:
            return True
    tool = document.get("tool")
    return isinstance(tool, dict) and _TABLE_NAME in tool


def load_settings(config: Path | None, start: Path) -> Settings:
    path = config if config is not None else find_config_file(start)
    settings = load_config_file(path) if path is not None else Settings()
    return replace(settings, line_length=project_line_length(start))
