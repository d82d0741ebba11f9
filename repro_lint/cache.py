"""A per-file cache of analyses (findings, facts, suppressions), so an unchanged file is never parsed
again. Entries are keyed by the file's text, where it sits, the settings and the tool's own build;
the project pass always runs again, from the cached facts."""

from __future__ import annotations

import hashlib
import os
import pickle
import shutil
import tempfile
from collections.abc import Iterable
from dataclasses import replace
from functools import cache
from pathlib import Path

from repro_lint.analysis import FileAnalysis
from repro_lint.discovery import project_root

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
        path = self._path(display, identity, text)
        try:
            self._prepare()
            path.parent.mkdir(exist_ok=True)
            handle, temporary = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
            with os.fdopen(handle, "wb") as stream:
                pickle.dump(replace(analysis, text=""), stream, protocol=pickle.HIGHEST_PROTOCOL)  # the key holds it
            os.replace(temporary, path)
        except OSError:
            pass  # a read-only project is linted without a cache

    def _prepare(self) -> None:
        if not self.folder.is_dir():
            self.folder.mkdir(parents=True, exist_ok=True)
            (self.folder / ".gitignore").write_text("# Created by repro-lint.\n*\n", encoding="utf-8")


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
