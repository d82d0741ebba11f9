"""The cache at a project's root: per file, its analysis (findings, facts, suppressions), so an
unchanged file is never parsed again; per project, the record of the last run, so an unchanged
project is answered without loading one analysis or running the project pass, and a project whose
changed files kept their facts without running the pass. Entries are keyed by the files' texts (the
last run's record first by their times), where they sit, the settings and the tool's own build."""

from __future__ import annotations

import hashlib
import os
import pickle
import shutil
import tempfile
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

from repro_lint.analysis.result import FileAnalysis
from repro_lint.core.findings import Finding
from repro_lint.core.program_outline import ProgramOutline
from repro_lint.core.stamps import Stamp, stamp
from repro_lint.engine.discovery import project_root
from repro_lint.program.declared import Declared

if TYPE_CHECKING:  # the call graph loads LibCST, which a run answered from its record never does
    from repro_lint.program.call_graph import Resolutions

CACHE_FOLDER = ".repro_lint_cache"


@cache
def _tool_build() -> str:
    """Changes whenever a source or data file of repro-lint changes, also in an editable install
    where the version number stays the same."""
    package = Path(__file__).resolve().parents[1]  # all of repro_lint, not only the engine
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

    def name(self, display: str, identity: str, text_digest: bytes) -> str:
        """The entry's name: what a run's record lists to keep it from `prune`."""
        key = hashlib.sha256("\0".join((_tool_build(), self.settings_key, display, identity, "")).encode())
        key.update(text_digest)
        return key.hexdigest()

    def _path(self, display: str, identity: str, text_digest: bytes) -> Path:
        name = self.name(display, identity, text_digest)
        return self.folder / name[:2] / f"{name}.pickle"

    def load(self, display: str, identity: str, text_digest: bytes) -> FileAnalysis | None:
        """The analysis of the text whose SHA-256 is `text_digest`, analysed under this name."""
        found = _loaded(self._path(display, identity, text_digest))
        return found if isinstance(found, FileAnalysis) else None

    def store(self, display: str, identity: str, text_digest: bytes, analysis: FileAnalysis) -> None:
        _store(self.folder, self._path(display, identity, text_digest), analysis)


@dataclass(frozen=True)
class RecordedFile:
    """A file as the last run saw it: its identity in the cache, its size and times (None where they
    were too recent to be trusted), and its text's SHA-256."""

    identity: str
    times: Stamp | None
    digest: bytes


@dataclass(frozen=True)
class RecordedRun:
    """A project's findings, and the entry modules whose folders' declarations (requirements, configs)
    decided them: None where no program rule ran and no declaration was read.

    The project pass's own results come with them, by file: a run where the changed files kept their
    facts (up to moved lines and calls the pass cannot see) gets the same results from the pass, and
    judges only those files' findings again."""

    findings: list[Finding]
    entries: tuple[str, ...] | None
    declared: Declared | None
    files: dict[str, RecordedFile]  # by display path
    program_findings: list[Finding]  # before suppressions
    verdicts: dict[tuple[object, ...], bool]  # the program model's answer to each local finding's question
    analyses: frozenset[str]  # the names of the entries holding its files' analyses, which `prune` keeps
    # The model's modules, and the last names of its functions: what tells a call the pass cannot see
    # (program.is_inert) without loading any module's facts; of those whose setting a caller decides:
    # what tells a call whose arguments the pass reads (ArgumentsFact.may_reach); and the modules
    # defining methods of each name: where an `obj.method()` may lead (program/quiet.py).
    modules: frozenset[str]
    function_names: frozenset[str]
    chosen_names: frozenset[str]
    method_modules: dict[str, frozenset[str]]
    # The functions whose callers the pass reads beyond its walks from programs, and where it may
    # reach a function no call names: what tells a function added that nothing reaches from one the
    # pass may read (`CallGraph.worker_only`, `ProjectModel.checkpointing`, `ProjectModel.dispatch_scopes`;
    # engine/last_run.py); and the functions the first call, which a function removed may not call
    # (`CallGraph.worker_links`).
    worker_only: frozenset[str]
    worker_links: frozenset[str]
    checkpointing: frozenset[str]
    dispatch_scopes: frozenset[str]
    # The modules whose importers the pass reads: what tells a module added that nothing imports from
    # one that may be in a program (`ProjectModel.importers_read`).
    importers_read: frozenset[str]
    programs: tuple[ProgramOutline, ...]  # for the audit, the files named as displayed


class LastRun:
    """The record of the last run over one project with one set of settings and one build.

    A file whose stamp (core/stamps.py: its size and times) is the one recorded is taken as unchanged
    without reading it, as git's index and Ruff's cache do.
    """

    def __init__(self, root: Path, settings_key: str, files: Sequence[tuple[str, str, Path | None]], writable: bool = True) -> None:
        """`files`: each file's display path, identity and path (None where its text is not the file's
        own, as after a fix in memory). A record that is not `writable` is read and never replaced:
        a run where some text overrides a file's (an editor's unsaved buffer) describes no state of
        the files on disk, which the next run reads, and must not take the place of one that does."""
        self.writable = writable
        self.folder = root / CACHE_FOLDER
        self._name = hashlib.sha256(settings_key.encode()).hexdigest()[:16]
        self.path = self.folder / f"run-{self._name}.pickle"
        self._build = f"{_tool_build()}\0{settings_key}"
        self._files = files
        taken = time.time_ns()
        self._times: list[Stamp | None] = [stamp(path, taken) for _, _, path in files]
        # The record as first read, or as this run stored it: read before the files are analysed,
        # and again by the pass, which takes its declarations only where their files are unchanged.
        self._recorded: RecordedRun | None = None
        self._read = False

    def load(self) -> RecordedRun | None:
        if not self._read:
            loaded = _load_record(self.path)
            self._recorded = loaded[1] if loaded is not None and loaded[0] == self._build else None
            self._read = True
        return self._recorded

    def known_digests(self, recorded: RecordedRun) -> list[bytes | None]:
        """Each file's text's hash where its size and times are the recorded ones, without reading it;
        None for the others. The text is the file's, however the run reads it (reported or for its
        facts)."""
        known: list[bytes | None] = []
        for (display, _, _), times in zip(self._files, self._times):
            file = recorded.files.get(display)
            same = file is not None and times is not None and file.times == times
            known.append(file.digest if same else None)  # type: ignore[union-attr]
        return known

    def files(self, digests: Iterable[bytes]) -> dict[str, RecordedFile]:
        """The files as this run sees them, given their texts' hashes in the order of `files`."""
        return {
            display: RecordedFile(identity, times, digest)
            for (display, identity, _), times, digest in zip(self._files, self._times, digests)
        }

    def store(self, recorded: RecordedRun) -> None:
        if self.writable:
            _store(self.folder, self.path, (self._build, recorded))
            self._recorded, self._read = recorded, True

    def resolutions(self) -> ResolutionsRecord:
        """The record of what the last pass resolved, kept beside this one."""
        return ResolutionsRecord(self.folder, self._name, self._build, self.writable)


def _load_record(path: Path) -> tuple[str, RecordedRun] | None:
    """A run's record and the build and settings it was made with."""
    match _loaded(path):
        case (str() as build, RecordedRun() as recorded):
            return build, recorded
    return None


@dataclass(frozen=True)
class RecordedResolutions:
    """What the last project pass resolved, by module (`CallGraph.resolutions`), and the files it
    was resolved over, as its run's record has them (a run on some files may replace that record
    since, not this one)."""

    files: dict[str, RecordedFile]  # by display path
    resolutions: dict[str, Resolutions]


class ResolutionsRecord:
    """What the last project pass resolved, beside the run's record (with the same settings and
    build): read only where the pass runs again, which then resolves again only the calls a change
    may lead elsewhere (program/kept_resolutions.py). Apart from the record, which every run reads:
    the links of transformers' 38,600 functions would slow the run answered from it."""

    def __init__(self, folder: Path, name: str, build: str, writable: bool) -> None:
        self.writable = writable
        self.folder = folder
        self.path = folder / f"resolved-{name}.pickle"
        self._build = build

    def load(self) -> RecordedResolutions | None:
        match _loaded(self.path):
            case (self._build, RecordedResolutions() as recorded):
                return recorded
        return None

    def store(self, recorded: RecordedResolutions) -> None:
        if self.writable:
            _store(self.folder, self.path, (self._build, recorded))


class ScannedReferences:
    """Per file, by its text's hash, the project modules its text may refer to, as the scan of a run
    on some files finds them (closure.py), with the module names they were matched against: after
    an audit, a run on the files of each commit reads no other file for them (on transformers, 1 s
    a run, reading and scanning 2,883 files)."""

    def __init__(self, root: Path, universe: Iterable[str]) -> None:
        self.folder = root / CACHE_FOLDER
        self.path = self.folder / "references.pickle"
        key = hashlib.sha256(_tool_build().encode())
        for name in sorted(universe):
            key.update(f"\0{name}".encode())
        self._key = key.hexdigest()
        match _loaded(self.path):
            case (self._key, dict() as entries):
                self._entries: dict[str, tuple[bytes, frozenset[str]]] = entries
            case _:
                self._entries = {}
        self._added = False

    def get(self, display: str, text_digest: bytes) -> frozenset[str] | None:
        entry = self._entries.get(display)
        return entry[1] if entry is not None and entry[0] == text_digest else None

    def add(self, display: str, text_digest: bytes, references: frozenset[str]) -> None:
        self._entries[display] = (text_digest, references)
        self._added = True

    def store(self) -> None:
        if self._added:
            _store(self.folder, self.path, (self._key, self._entries))


# An entry that no record names yet may belong to a run still going on: an audit stores each file's
# analysis as soon as it is done, and its record at the end.
_UNNAMED_ENTRY_KEPT_S = 3600


def prune(folder: Path) -> None:
    """Remove the analyses no run's record names: of texts since changed, of files since removed, of
    an older build. Each edit of a file adds an entry, and the cache would grow without end."""
    named: set[str] = set()
    for path in folder.glob("run-*.pickle"):
        if (loaded := _load_record(path)) is not None:
            named |= loaded[1].analyses
    deadline = time.time() - _UNNAMED_ENTRY_KEPT_S
    for entry in folder.glob("??/*.pickle"):
        try:
            if entry.stem not in named and entry.stat().st_mtime < deadline:
                entry.unlink()
        except OSError:
            pass  # removed by another run, or a read-only cache


def _loaded(path: Path) -> object:
    """What the cache file holds; None where it is missing, truncated or from an incompatible build."""
    try:
        with path.open("rb") as stream:
            return pickle.load(stream)
    except (OSError, EOFError, pickle.UnpicklingError, AttributeError, ImportError, IndexError, TypeError, ValueError):
        return None


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
