"""A project's files as the engine holds them, and how the files to lint are grouped into projects.

A module is read when its text is first needed and then held compressed; its analysis, once made,
travels with it. A project is a root folder and its modules: those reported, and the others, read
only for the facts the project pass needs of them."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from repro_lint.analysis.result import FileAnalysis, ModuleIdentity, syntax_error
from repro_lint.core.problems import internal_error
from repro_lint.core.settings import Settings
from repro_lint.core.source import LineIndex, UnreadableSource, decode, encoded, packed, read_source, unpacked
from repro_lint.engine.cache import AnalysisCache
from repro_lint.engine.discovery import SCANNED_SUFFIXES, SourcePath, display_path, project_files, project_root, relative_posix
from repro_lint.sources import notebook


class SourceModule:
    """One file of a project: `report` is False for files read only for their facts. The file is read
    when its text is first needed, so a project that the last run's record answers reads none.

    Once read, the text is held compressed (`pack`), and the workers get it so: a big project's texts
    take more memory than all its facts (123 MB of `str` on transformers, 16 MB compressed), and
    after the analysis only REP002, fixes, diffs and `--add-noqa` read them again.

    An `override` is the file's text for this run instead of what is on disk (standard input, an
    editor's unsaved buffer): read as the file would be, bytes decoded as a file's are, but never
    taken for the file's own by the caches, and never written."""

    def __init__(
        self,
        identity: ModuleIdentity,
        display: str,
        report: bool,
        path: Path | None = None,
        text: str | None = None,
        override: str | bytes | None = None,
    ) -> None:
        self.identity = identity
        self.display = display
        self.report = report
        self.path = path
        self.analysis: FileAnalysis | None = None
        self.encoding = "utf-8"
        self._notebook: notebook.Notebook | None = None  # `text` is then its cells joined into one module
        self._text = text
        self._packed: bytes | None = None
        self._digest: bytes | None = None
        self._override = override
        self.overridden = override is not None
        # By a fix or a noqa comment in memory, or overridden: the file's times do not describe the text.
        self.edited = self.overridden

    @property
    def text(self) -> str:
        return self.load()

    @text.setter
    def text(self, text: str) -> None:
        self._text, self._packed, self._digest = text, None, None
        self.edited = True

    @property
    def digest(self) -> bytes:
        """The text's hash, for the cache's keys: computed once, however many keys it enters. The
        text is packed then: hashing every file of a project for the last run's record must not hold
        them all whole."""
        if self._digest is None:
            self._digest = text_digest(self.text)
            self.pack()
        return self._digest

    @property
    def unread_but_known(self) -> bool:
        """The file's text is not held, and its hash is known (from the last run's record, or from
        the scan of a run on some files, which read it and let it go)."""
        return self._digest is not None and self._text is None and self._packed is None

    @property
    def known_digest(self) -> bytes | None:
        """The text's hash where it is known already (computed, or known from the last run's record)."""
        return self._digest

    def assume_digest(self, digest: bytes) -> None:
        """The text's hash, known without holding the text: the file's times are those the last run
        saw, or the text was read and hashed, and not kept."""
        if self._text is None and self._packed is None:
            self._digest = digest

    def pack(self) -> bytes:
        """The text compressed, as the module holds it from now on."""
        if self._packed is None:
            self._packed, self._text = packed(self.text), None
        return self._packed

    @property
    def notebook(self) -> notebook.Notebook | None:
        """The notebook's cells; None for any other file, which is not read for the answer."""
        if not notebook.is_notebook(self.display):
            return None
        if self._text is None and self._packed is None:
            self.load()  # the cells are read with the file; a text read already is not unpacked for them
        return self._notebook

    def raw(self) -> bytes | None:
        """The file's bytes as they are now, without keeping them; the text where there is no file
        or it was edited in this run. None where the file cannot be read."""
        if self.path is None or self.edited:
            return self.text.encode()
        try:
            return self.path.read_bytes()
        except OSError:
            return None

    def load(self) -> str:
        """The text, read now if not yet. A file that cannot be read gets its analysis here: REP001
        where it is reported, no facts where it is read only for them."""
        if self._text is not None:
            return self._text
        if self._packed is not None:
            return unpacked(self._packed)
        assert self.path is not None or self._override is not None, "a module without a file is made with its text"
        try:
            if self._override is None:
                text, self.encoding = read_source(self.path)  # type: ignore[arg-type]
            else:
                text, self.encoding = (self._override, "utf-8") if isinstance(self._override, str) else decode(self._override)
                self._override = None  # held from now on as every text is
            cells = notebook.read(text) if notebook.is_notebook(self.display) else None
        except (UnreadableSource, notebook.NotebookError) as error:
            self._text = ""
            where = (error.line, error.column) if isinstance(error, notebook.NotebookError) else (1, 0)
            self.analysis = syntax_error(self.display, str(error), *where) if self.report else FileAnalysis(self.display, [], None)
            return ""
        except Exception as error:
            self._text = ""
            self.analysis = failure(self, error)
            return ""
        self._notebook = cells
        self._text = cells.code if cells is not None else text
        return self._text


def text_digest(text: str) -> bytes:
    """The hash a module's text is known by in the caches."""
    return hashlib.sha256(encoded(text)).digest()


@dataclass
class Project:
    root: Path | None
    modules: list[SourceModule]
    # Where `modules` holds only the modules a run on some files needs (closure.py): the names of
    # all the project's modules, which decide whether an edit could reach the ones left out.
    universe: frozenset[str] | None = None
    # Reported modules read on their own (closure.py) that modules left out may import: whether one
    # of them that trains when loaded is a program's entry depends on those.
    importers_left_out: frozenset[str] = frozenset()
    # Reported modules read without what they import (closure.py), with the modules that may import
    # them: one that none of those imports may be an entry, by what it runs when loaded, which what it
    # imports decides.
    by_itself: frozenset[str] = frozenset()


def project_display(project: Project) -> str:
    """The project's folder as paths are shown: relative to the current folder where it is inside."""
    if project.root is None:
        return "."
    return display_path(project.root, Path.cwd().resolve())


def failure(module: SourceModule, error: Exception) -> FileAnalysis:
    return FileAnalysis(module.display, [], None, problem=internal_error(module.display, error))


def has_failed(analysis: FileAnalysis | None) -> bool:
    return analysis is not None and analysis.problem is not None and analysis.problem.kind == "error"


def cache_identity(module: SourceModule, report: bool | None = None) -> str:
    return f"{module.identity}:{module.report if report is None else report}"


def identities(module: SourceModule) -> tuple[str, ...]:
    """The analyses that give what a run needs of the module: a file read only for its facts takes
    them from its reported analysis too (the rules do not change the facts)."""
    return (cache_identity(module),) if module.report else (cache_identity(module), cache_identity(module, report=True))


def cache_entries(project: Project, cache: AnalysisCache) -> frozenset[str]:
    """The cache entries that may hold the project's analyses."""
    return frozenset(cache.name(module.display, identity, module.digest) for module in project.modules for identity in identities(module))


def cached(cache: AnalysisCache, module: SourceModule) -> FileAnalysis | None:
    """The module's analysis from the cache: after an audit of the whole project, a run on one file
    parses none of the others."""
    for identity in identities(module):
        if (found := cache.load(module.display, identity, module.digest)) is not None:
            return found
    return None


def _module_for(path: Path, display: str, root: Path, report: bool, overrides: Mapping[Path, str | bytes]) -> SourceModule:
    relative = relative_posix(path, root)
    identity = notebook.identity(relative) if notebook.is_notebook(relative) else ModuleIdentity.from_relative_path(relative)
    return SourceModule(identity, display, report, path, override=overrides.get(path))


def group_projects(
    sources: Sequence[SourcePath], given: Sequence[Path], settings: Settings, overrides: Mapping[Path, str | bytes] | None = None
) -> list[Project]:
    """Group the files to lint by project, adding the project's other modules for their facts.
    `overrides` (by resolved path) give files' texts instead of what is on disk, reported or not."""
    overrides = overrides or {}
    roots: dict[Path | None, list[SourcePath]] = {}
    discovered = [source.path for source in sources]
    by_folder: dict[str, Path | None] = {}  # by the folder's text: a Path made per file cost more than the look-up
    for source in sources:
        folder = os.path.dirname(source.path)
        if folder not in by_folder:
            by_folder[folder] = project_root(source.path.parent)
        roots.setdefault(by_folder[folder], []).append(source)
    projects = []
    for root, members in sorted(roots.items(), key=lambda item: str(item[0])):
        if root is None:
            # Outside any project (a downloaded archive): each folder given on the command line is
            # one project, so an entry script still sees its sibling modules.
            folders: dict[Path, list[SourceModule]] = {}
            for source in members:
                base = _given_folder(source.path, given)
                folders.setdefault(base, []).append(_module_for(source.path, source.display, base, True, overrides))
            projects.extend(Project(base, modules) for base, modules in sorted(folders.items()))
            continue
        reported = {source.path for source in members}
        modules = [_module_for(source.path, source.display, root, True, overrides) for source in members]
        if any(source.path.suffix not in SCANNED_SUFFIXES for source in members):
            # Python modules need the project's other modules for their facts; scripts and configs do not.
            if any(folder.is_dir() and folder.resolve() == root for folder in given):
                # The walk of the root found them all already (some under a nested project's marker).
                inside = os.path.join(root, "")  # a prefix test: Path.parents builds a Path per level
                files = [path for path in discovered if path.suffix not in SCANNED_SUFFIXES and str(path).startswith(inside)]
            else:
                files = project_files(root, settings)
            # Shown nowhere, but the cache and the last run's record know files by it: as an audit of
            # the project names them, so that a run on some files takes the audit's analyses.
            cwd = Path.cwd().resolve()
            modules += [_module_for(path, display_path(path, cwd), root, False, overrides) for path in files if path not in reported]
        projects.append(Project(root, modules))
    return projects


def _given_folder(path: Path, given: Sequence[Path]) -> Path:
    folders = [folder.resolve() for folder in given if folder.is_dir() and folder.resolve() in path.parents]
    return max(folders, key=lambda folder: len(folder.parts)) if folders else path.parent


def single_project(text: str, path: str) -> list[Project]:
    identity = ModuleIdentity.from_relative_path(Path(path).name if path.endswith(".py") else "module.py")
    return [Project(None, [SourceModule(identity, path, True, text=text)])]


class ReportedTexts:
    """The texts the reported findings point into, as the run left them (fixed, or overridden), for
    reports that show source lines: a file is read only when one asks for it, and indexed once."""

    def __init__(self, projects: Sequence[Project]) -> None:
        self._modules = {module.display: module for project in projects for module in project.modules if module.report}
        self._indexed: dict[tuple[str, int | None], LineIndex | None] = {}

    @property
    def paths(self) -> list[str]:
        """The files the run reported on, as it names them."""
        return sorted(self._modules)

    def lines(self, path: str, cell: int | None = None) -> LineIndex | None:
        """The file's text, or one cell's source in a notebook; None where there is none to show."""
        if (path, cell) not in self._indexed:
            text = self._text(path, cell)
            self._indexed[path, cell] = LineIndex(text) if text is not None else None
        return self._indexed[path, cell]

    def _text(self, path: str, cell: int | None) -> str | None:
        module = self._modules.get(path)
        if module is None:
            return None
        cells = module.notebook
        if cells is None:
            return module.text if cell is None else None
        try:
            sources = cells.cell_sources(module.text)
        except ValueError:  # its cell markers lost: nothing to show rather than the wrong lines
            return None
        return next((source for linted, source in zip(cells.cells, sources) if linted.number == cell), None)
