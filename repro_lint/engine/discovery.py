"""Which files to lint: walking folders, `.gitignore`, excludes, and each file's project root."""

from __future__ import annotations

import ast
import errno
import fnmatch
import os
import re
import warnings
from collections.abc import Collection, Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache
from itertools import chain
from pathlib import Path
from typing import TYPE_CHECKING

from repro_lint.core.settings import Settings
from repro_lint.knowledge import load

if TYPE_CHECKING:
    from pathspec import GitIgnoreSpec

# Launch scripts and configs are scanned for the settings the rules name (repro_lint/sources/).
SCANNED_SUFFIXES = (".sh", ".yaml", ".yml", ".json")
LINTED_SUFFIXES = (".py", ".ipynb", *SCANNED_SUFFIXES)
PROJECT_MARKERS = ("pyproject.toml", "setup.cfg", ".git")
# A `setup.py` marks a project root only when it is a build script: a module may be named so too.
BUILD_SCRIPT = "setup.py"
_SETUP_CALLS = frozenset(load("file_listing.json")["build_script_calls"])
# Ruff's default excludes, plus our cache and notebook checkpoints.
DEFAULT_EXCLUDE = (
    ".bzr", ".direnv", ".eggs", ".git", ".git-rewrite", ".hg", ".ipynb_checkpoints", ".mypy_cache", ".nox",
    ".pants.d", ".pytype", ".repro_lint_cache", ".ruff_cache", ".svn", ".tox", ".venv", "__pypackages__",
    "_build", "buck-out", "build", "dist", "node_modules", "site-packages", "venv",
)  # fmt: skip


class MissingPath(Exception):
    """A path given on the command line that cannot be linted: missing, a symlink loop, unreadable."""


@dataclass(frozen=True)
class SourcePath:
    path: Path  # absolute
    display: str  # as the user gave it, or relative to the current folder


@dataclass(frozen=True)
class _GitIgnore:
    """One file of ignore patterns (a `.gitignore`, or `.git/info/exclude`), matched as git matches
    them against paths relative to `folder`: the folder of the `.gitignore`, the repository's top for
    `info/exclude`."""

    folder: Path
    spec: GitIgnoreSpec

    def verdict(self, path: Path, is_dir: bool) -> bool | None:
        """True: ignored, False: re-included by a `!` pattern, None: not mentioned."""
        relative = path.relative_to(self.folder).as_posix()
        return self.spec.check_file(relative + "/" if is_dir else relative).include


def _read_ignore_file(path: Path, folder: Path) -> _GitIgnore | None:
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return None
    from pathspec import GitIgnoreSpec  # here: pre-commit's runs name their files and read no ignore file

    return _GitIgnore(folder, GitIgnoreSpec.from_lines(lines))


def _read_gitignore(folder: Path) -> _GitIgnore | None:
    return _read_ignore_file(folder / ".gitignore", folder)


def _ignored(path: Path, is_dir: bool, ignores: Sequence[_GitIgnore]) -> bool:
    """Whether git ignores the path: the deepest file that mentions it decides, as in git, where a
    `.gitignore` overrides those of the folders above it, and all of them override `info/exclude`."""
    result = False
    for ignore in ignores:
        verdict = ignore.verdict(path, is_dir)
        if verdict is not None:
            result = verdict
    return result


class Excluder:
    """A path is excluded when its name or its path relative to the config's folder matches a
    pattern, or lies under a folder that does. The patterns are compiled into one expression per
    question: asking every pattern with `fnmatch` took a second per walk of a large tree."""

    def __init__(self, settings: Settings) -> None:
        base = settings.exclude if settings.exclude is not None else DEFAULT_EXCLUDE
        patterns = (*base, *settings.extend_exclude)
        root = settings.config_dir or Path.cwd().resolve()
        self._root_prefix = root.as_posix().rstrip("/") + "/"
        self._names = _any_of(patterns)
        self._paths = _any_of((*patterns, *(pattern.rstrip("/") + "/*" for pattern in patterns)))

    def excluded(self, path: str, name: str) -> bool:
        """Whether the file or folder named `name`, at `path` (absolute, with `/` for separator), is."""
        relative = path[len(self._root_prefix) :] if path.startswith(self._root_prefix) else path
        return bool(self._names.match(name) or self._paths.match(relative))


def _any_of(patterns: Sequence[str]) -> re.Pattern[str]:
    return re.compile("|".join(fnmatch.translate(pattern) for pattern in patterns) or "(?!)")


def display_path(path: Path, cwd: Path) -> str:
    try:
        return relative_posix(path, cwd)
    except ValueError:
        return path.as_posix()


def relative_posix(path: Path, folder: Path) -> str:
    """`path.relative_to(folder).as_posix()`, cut from the text where `folder`'s is a prefix of it.
    Asked of every file of a run, pathlib's parsing was most of the time to list and group a
    project's files (on transformers, 0.35 s of the 0.8 s of a run its record answered)."""
    text, prefix = str(path), os.path.join(folder, "")
    if text.startswith(prefix):
        return text[len(prefix) :].replace(os.sep, "/")
    return path.relative_to(folder).as_posix()


def walk(folder: Path, excluder: Excluder) -> Iterator[Path]:
    """Lintable files under `folder`, sorted, honouring git's ignore files and excludes. A stack of
    open folders, not recursion: a tree may nest deeper than Python's recursion limit."""
    pending = [_listing(folder, _inherited_ignores(folder))]
    while pending:
        entries, ignores = pending[-1]
        entry = next(entries, None)
        if entry is None:
            pending.pop()
            continue
        # A Path is made only of a folder or a linted file that no exclude matches: one made of every
        # entry was most of the walk's time.
        is_dir = entry.is_dir(follow_symlinks=False)
        if excluder.excluded(entry.path.replace(os.sep, "/"), entry.name):
            continue
        if not is_dir and os.path.splitext(entry.name)[1] not in LINTED_SUFFIXES:
            continue
        path = Path(entry.path)
        if _ignored(path, is_dir, ignores):
            continue
        if is_dir:
            pending.append(_listing(path, ignores))
        elif _is_file(entry):
            yield path


def _listing(folder: Path, ignores: tuple[_GitIgnore, ...]) -> tuple[Iterator[os.DirEntry[str]], tuple[_GitIgnore, ...]]:
    """A folder's entries sorted by name, and the `.gitignore` files that apply to them."""
    own = _read_gitignore(folder)
    if own is not None:
        ignores = (*ignores, own)
    try:
        entries = sorted(os.scandir(folder), key=lambda entry: entry.name)
    except OSError:
        entries = []
    return iter(entries), ignores


def _is_file(entry: os.DirEntry[str]) -> bool:
    """A file, or a link to one. A link in a loop leads to no file: it is passed over, as git and Ruff do."""
    try:
        return entry.is_file()
    except OSError:
        return False


def _inherited_ignores(folder: Path) -> tuple[_GitIgnore, ...]:
    """The ignore files that apply above `folder`: the repository's `info/exclude` and the
    `.gitignore` files of the folders from the repository's top down to `folder`'s parent. Outside a
    git repository, those from its project root down, as Ruff reads them there too."""
    top = _repository_top(folder)
    root = top if top is not None else project_root(folder)
    if root is None:
        return ()
    chain = [root / above for above in folder.relative_to(root).parents]
    found = [ignore for parent in reversed(chain) if (ignore := _read_gitignore(parent)) is not None]
    exclude = _info_exclude(top) if top is not None else None
    return (exclude, *found) if exclude is not None else tuple(found)


def _repository_top(folder: Path) -> Path | None:
    """The top folder of the git work tree `folder` lies in: the nearest holding `.git`."""
    return next((candidate for candidate in (folder, *folder.parents) if (candidate / ".git").exists()), None)


def _info_exclude(top: Path) -> _GitIgnore | None:
    """The repository's `info/exclude`, read from its git folder: `.git` itself, or where a `.git`
    file points (a linked work tree or a submodule), whose `commondir` holds the shared `info`."""
    git = top / ".git"
    if git.is_file():
        try:
            pointer = git.read_text(encoding="utf-8", errors="replace").strip()
        except OSError:
            return None
        if not pointer.startswith("gitdir:"):
            return None
        git = top / pointer.removeprefix("gitdir:").strip()
        try:
            git = git / (git / "commondir").read_text(encoding="utf-8", errors="replace").strip()
        except OSError:
            pass  # a submodule's git folder holds its own `info`
    return _read_ignore_file(git / "info" / "exclude", top)


def discover(paths: Sequence[Path], settings: Settings, unsaved: Collection[Path] = ()) -> list[SourcePath]:
    """The files to lint, each once. `unsaved` are resolved paths whose text the caller gives, which
    need not exist on disk (standard input, an editor's new buffer)."""
    excluder = Excluder(settings)
    cwd = Path.cwd().resolve()
    found: dict[Path, SourcePath] = {}
    for given in paths:
        if not (unsaved and given.resolve() in unsaved):
            _check_given(given)  # before resolving: a symlink loop is an error of its own
        absolute = given.resolve()
        if absolute.is_dir():
            for path in walk(absolute, excluder):
                found.setdefault(path, SourcePath(path, display_path(path, cwd)))
        else:
            # Explicit files are linted even when excluded: pre-commit passes file names.
            found.setdefault(absolute, SourcePath(absolute, given.as_posix() if not given.is_absolute() else display_path(absolute, cwd)))
    return sorted(found.values(), key=lambda source: source.display)


def _check_given(given: Path) -> None:
    reason = unlintable(given)
    if reason is not None:
        raise MissingPath(reason)


def unlintable(given: Path) -> str | None:
    """Why a path given on the command line cannot be linted ("PATH: no such file or folder"); None
    when it can."""
    try:
        given.stat()
    except OSError as error:
        if error.errno == errno.ELOOP:
            return f"{given}: symlink loop"
        if error.errno in (errno.ENOENT, errno.ENOTDIR):
            return f"{given}: no such file or folder"
        return f"{given}: {(error.strerror or str(error)).lower()}"
    return None


@lru_cache(maxsize=4096)
def project_root(folder: Path) -> Path | None:
    """The nearest folder holding pyproject.toml, setup.cfg, .git or a build script's setup.py; None
    outside any project."""
    return next((candidate for candidate in chain((folder,), folder.parents) if _marks_root(candidate)), None)


@lru_cache(maxsize=4096)
def _marks_root(folder: Path) -> bool:  # each folder of a tree asked once
    return any(os.path.exists(os.path.join(folder, marker)) for marker in PROJECT_MARKERS) or _is_build_script(folder / BUILD_SCRIPT)


def _is_build_script(path: Path) -> bool:
    """A `setup.py` that calls setuptools' or distutils' `setup()`, anywhere in it (fairseq calls it
    from a `do_setup()` function; pytorch-lightning's trainer/setup.py, a module, calls none). Read with
    `ast`, which resolves the imports' aliases and passes over comments and strings as a text search
    would not; a file Python 3 cannot parse (an old build script's `print "..."`) keeps the name's
    meaning."""
    try:
        with warnings.catch_warnings():  # an invalid escape in its strings is not ours to report
            warnings.simplefilter("ignore")
            tree = ast.parse(path.read_bytes())
    except OSError:
        return False
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return True
    imported: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                bound = alias.asname or alias.name.partition(".")[0]  # `import a.b` binds `a`
                imported[bound] = alias.name if alias.asname else bound
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            imported.update((alias.asname or alias.name, f"{node.module}.{alias.name}") for alias in node.names)
    return any(isinstance(node, ast.Call) and _qualified(node.func, imported) in _SETUP_CALLS for node in ast.walk(tree))


def _qualified(func: ast.expr, imported: dict[str, str]) -> str | None:
    """`st.setup` after `import setuptools as st` -> `setuptools.setup`; None for other callees."""
    parts: list[str] = []
    while isinstance(func, ast.Attribute):
        parts.append(func.attr)
        func = func.value
    if not isinstance(func, ast.Name) or func.id not in imported:
        return None
    return ".".join([imported[func.id], *reversed(parts)])


def project_files(root: Path, settings: Settings) -> list[Path]:
    """The project's modules, read for their facts; launch scripts and configs have none."""
    return [path for path in walk(root, Excluder(settings)) if path.suffix not in SCANNED_SUFFIXES]
