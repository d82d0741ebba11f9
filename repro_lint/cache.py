"""The cache at a project's root: per file, its analysis (findings, facts, suppressions), so an
unchanged file is never parsed again; per project, the findings of the last run, so an unchanged
project is answered without loading one analysis or running the project pass. Entries are keyed by
the files' texts, where they sit, the settings and the tool's own build."""

from __future__ import annotations

import hashlib
import os
import pickle
import shutil
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass, replace
from functools import cache
from pathlib import Path

from repro_lint.file_analysis import FileAnalysis
from repro_lint.discovery import project_root
from repro_lint.declared import Declared
from repro_lint.rules.base import Finding

CACHE_FOLDER = ".repro_lint_cache"


@cache
def _tool_build() -> str:
    """Changes whenever a source or data file of repro-lint changes, also in an editable install
    where the version number stays the same."""
    package = Path(__file__).resolve().parent
    digest = hashlib.sha256()
    for path in sorted(package.rglob("*")):
        if path.suffix in (".py", ".json") and "probe" not in path.parts:
            stat = path.stat()
            digest.update(f"{path.relative_to(package)}:{stat.st_size}:{stat.st_mtime_ns}".encode())
    return digest.hexdigest()


class AnalysisCache:
    def __init__(self, root: Path, settings_key: str) -> None:
        self.folder = root / CACHE_FOLDER
        self.settings_key = settings_key

    def _path(self, display: str, identity: str, text: str) -> Path:
        digest = hashlib.sha256("\0".join((_tool_build(), self.settings_key, display, identity, text)).encode()).hexdigest()
        return self.folder / digest[:2] / f"{digest}.pickle"

    def load(self, display: str, identity: str, text: str) -> FileAnalysis | None:
        try:
            with self._path(display, identity, text).open("rb") as stream:
                found = pickle.load(stream)
        except (OSError, EOFError, pickle.UnpicklingError, AttributeError, ImportError, IndexError, TypeError, ValueError):
            return None  # missing, truncated or from an incompatible build: analysed again
        return replace(found, text=text) if isinstance(found, FileAnalysis) else None

    def store(self, display: str, identity: str, text: str, analysis: FileAnalysis) -> None:
        _store(self.folder, self._path(display, identity, text), replace(analysis, text=""))  # the key holds the text


@dataclass(frozen=True)
class RecordedRun:
    """A project's findings, and the entry modules whose folders' declarations (requirements, configs)
    decided them: None where no program rule ran and no declaration was read."""

    findings: list[Finding]
    entries: tuple[str, ...] | None
    declared: Declared | None


class LastRun:
    """The findings of the last run over one project with one set of settings."""

    def __init__(self, root: Path, settings_key: str, modules: Iterable[tuple[str, str, str]]) -> None:
        self.folder = root / CACHE_FOLDER
        self.path = self.folder / f"run-{hashlib.sha256(settings_key.encode()).hexdigest()[:16]}.pickle"
        digest = hashlib.sha256(f"{_tool_build()}\0{settings_key}".encode())
        for display, identity, text in modules:
            digest.update(f"\0{display}\0{identity}\0{len(text)}\0".encode())
            digest.update(text.encode("utf-8", "surrogatepass"))
        self.key = digest.hexdigest()

    def load(self) -> RecordedRun | None:
        try:
            with self.path.open("rb") as stream:
                key, recorded = pickle.load(stream)
        except (OSError, EOFError, pickle.UnpicklingError, AttributeError, ImportError, IndexError, TypeError, ValueError):
            return None
        return recorded if key == self.key and isinstance(recorded, RecordedRun) else None

    def store(self, recorded: RecordedRun) -> None:
        _store(self.folder, self.path, (self.key, recorded))


def _store(folder: Path, path: Path, value: object) -> None:
    """Write atomically: a reader sees the old entry or the new one, never half of one."""
    try:
        if not folder.is_dir():
            folder.mkdir(parents=True, exist_ok=True)
            (folder / ".gitignore").write_text("# Created by repro-lint.\n*\n", encoding="utf-8")
        path.parent.mkdir(exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
        with os.fdopen(handle, "wb") as stream:
            pickle.dump(value, stream, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(temporary, path)
    except OSError:
        pass  # a read-only project is linted without a cache


def cache_folders(paths: Iterable[Path]) -> list[Path]:
    """The caches of the projects the paths belong to or contain: at each one's project root, or at a
    folder given outside any project (where `check` keeps it too)."""
    found: set[Path] = set()
    for given in paths:
        folder = given.resolve() if given.is_dir() else given.resolve().parent
        found.add((project_root(folder) or folder) / CACHE_FOLDER)
        found.update(folder.rglob(CACHE_FOLDER))
    return sorted(folder for folder in found if folder.is_dir())


def remove_caches(folders: Iterable[Path]) -> None:
    for folder in folders:
        shutil.rmtree(folder)
