"""What a project declares outside its Python code: the torch version its requirements admit, and
environment variables its launch scripts and configs set.

The target torch version is the lowest version any declaration admits (`>=1.8` targets 1.8,
`==2.1.0` targets 2.1; requirements.py reads them); an unpinned `torch` says nothing, and
version-gated rules stay silent.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from packaging.version import Version

from repro_lint.core.stamps import Stamp, stamp
from repro_lint.knowledge import load

CUBLAS_VARIABLE: str = load("determinism.json")["cublas_workspace_variable"]
# The versions the rules compare a target torch version with: which side of each a version lies on
# decides their findings, but for the message of the one rule that shows the version.
OLD_TORCH_BEFORE = (1, 9)  # workers reseed numpy's global RNG since torch 1.9 (PR #56488)
# PyTorch PR #161749 removed the check; 2.10 is the first release without it.
CUBLAS_REQUIRED_BEFORE = (2, 10)
_COMPARED_WITH = ((0,), OLD_TORCH_BEFORE, CUBLAS_REQUIRED_BEFORE)
VERSION_SHOWN_BY = "REP304"

_CONFIG_SUFFIXES = (".sh", ".bash", ".yaml", ".yml", ".json", ".env", ".cfg", ".toml", ".ini")
_SKIP_FOLDERS = frozenset({".git", ".venv", "venv", "node_modules", "__pycache__", ".repro_lint_cache", "build", "dist"})


@dataclass(frozen=True)
class Declared:
    """What the project declares outside its Python code, as the rules read it."""

    torch_versions: tuple[tuple[str, tuple[int, ...]], ...] = ()
    cublas_in_configs: bool = False
    # The stamps of the files read and looked for, and of the folders holding them, as they were
    # read; None where one changed too recently to tell.
    read_from: tuple[tuple[str, Stamp], ...] | None = field(default=None, compare=False)

    def unchanged(self) -> bool:
        """Whether what it was read from is as it was, so that reading it again would give it."""
        now = time.time_ns()
        return self.read_from is not None and all(stamp(path, now) == then for path, then in self.read_from)

    def torch_version(self, entry_path: str) -> tuple[int, ...] | None:
        """The lowest torch version admitted by the declarations from the entry module's folder up
        to the project root."""
        folder = entry_path.rpartition("/")[0]
        versions = [
            version
            for declared_in, version in self.torch_versions
            if not declared_in or folder == declared_in or folder.startswith(declared_in + "/")
        ]
        return min(versions) if versions else None

    def read_alike(self, other: Declared, shown: bool) -> bool:
        """Whether the rules read `other` as this: the same folders declare versions on the same
        sides of the versions the rules compare with (the same versions where `shown`: a finding of
        VERSION_SHOWN_BY shows one), and configs set the cuBLAS variable alike. The lowest of several
        versions lies on the lowest of their sides, so each entry's target does too."""
        if shown:
            return self == other
        return self.cublas_in_configs == other.cublas_in_configs and _sides(self) == _sides(other)


def _sides(declared: Declared) -> tuple[tuple[str, tuple[int, ...]], ...]:
    """Each version replaced by the highest compared-with version it is not below."""
    return tuple((folder, max(bound for bound in _COMPARED_WITH if version >= bound)) for folder, version in declared.torch_versions)


def _folders(root: Path, entry_paths: Iterable[str]) -> set[Path]:
    """Folders from each entry module's up to the project root."""
    folders = {root}
    for entry in entry_paths:
        folder = (root / entry).parent
        while folder != root and root in folder.parents:
            folders.add(folder)
            folder = folder.parent
    return folders


def _mentions_in_configs(root: Path, variable: str, read: set[Path]) -> bool:
    """Whether a launch script or config file of the project names `variable`. `read` gains the
    folders listed and the files read."""
    for folder, subfolders, files in os.walk(root):
        read.add(Path(folder))
        subfolders[:] = sorted(name for name in subfolders if name not in _SKIP_FOLDERS)
        for name in sorted(files):
            if not name.endswith(_CONFIG_SUFFIXES):
                continue
            path = Path(folder) / name
            read.add(path)
            try:
                if variable in path.read_text(encoding="utf-8", errors="replace"):
                    return True
            except OSError:
                continue
    return False


def declared(root: Path | None, entry_paths: Iterable[str], target_torch_version: str | None) -> Declared:
    taken = time.time_ns()
    read: set[Path] = set()
    if target_torch_version is not None:
        versions: tuple[tuple[str, tuple[int, ...]], ...] = (("", Version(target_torch_version).release),)
    elif root is None:
        versions = ()
    else:
        # Here: `packaging`'s requirement parser is for the project pass only, not for every run.
        from repro_lint.program.requirements import lowest_torch_version

        found = []
        for folder in sorted(_folders(root, entry_paths)):
            version = lowest_torch_version(folder, read)
            if version is not None:
                relative = folder.relative_to(root).as_posix()
                found.append(("" if relative == "." else relative, version))
        versions = tuple(found)
    # Scanning configs only matters where a version that needs the variable is targeted.
    needs_cublas = any(version < CUBLAS_REQUIRED_BEFORE for _, version in versions)
    cublas = needs_cublas and root is not None and _mentions_in_configs(root, CUBLAS_VARIABLE, read)
    return Declared(versions, cublas, _stamps(read, taken))


def _stamps(read: set[Path], taken: int) -> tuple[tuple[str, Stamp], ...] | None:
    """The stamps of the files read that exist, and of the folders holding each file read or looked
    for (the nearest that exists): a file added to one changes its stamp. None where one changed too
    recently to be trusted."""
    places = set()
    for path in read:
        if os.path.isdir(path):  # listed
            places.add(path)
            continue
        if os.path.lexists(path):
            places.add(path)
        folder = path.parent
        while not os.path.isdir(folder) and folder != folder.parent:
            folder = folder.parent
        places.add(folder)
    stamps = []
    for place in sorted(places):
        found = stamp(place, taken)
        if found is None:
            return None
        stamps.append((str(place), found))
    return tuple(stamps)
