"""What a project declares outside its Python code: the torch version its requirements admit, and
environment variables its launch scripts and configs set.

The target torch version is the lowest version any declaration admits (`>=1.8` targets 1.8,
`==2.1.0` targets 2.1); an unpinned `torch` says nothing, and version-gated rules stay silent.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib

from repro_lint.knowledge import load

CUBLAS_VARIABLE: str = load("determinism.json")["cublas_workspace_variable"]
# PyTorch PR #161749 removed the check; 2.10 is the first release without it.
CUBLAS_REQUIRED_BEFORE = (2, 10)

_REQUIREMENT = re.compile(
    r"""(?:^|["'\s,\[])(?:torch|pytorch)\s*(?:\[[^\]]*\])?\s*(?P<specs>(?:[<>=!~]=?\s*[0-9][0-9a-zA-Z.*+]*\s*,?\s*)+)""",
    re.MULTILINE,
)
_SPEC = re.compile(r"(?P<op>[<>=!~]=?)\s*(?P<version>[0-9][0-9a-zA-Z.*+]*)")
_REQUIREMENT_FILES = ("requirements*.txt", "setup.cfg", "setup.py", "environment.yml", "environment.yaml")
_CONFIG_SUFFIXES = (".sh", ".bash", ".yaml", ".yml", ".json", ".env", ".cfg", ".toml", ".ini")
_SKIP_FOLDERS = frozenset({".git", ".venv", "venv", "node_modules", "__pycache__", ".repro_lint_cache", "build", "dist"})


@dataclass(frozen=True)
class Declared:
    """What the project declares outside its Python code, as the rules read it."""

    torch_versions: tuple[tuple[str, tuple[int, ...]], ...] = ()
    cublas_in_configs: bool = False

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


def parse_version(text: str) -> tuple[int, ...]:
    numbers = []
    for part in text.split("+")[0].split("."):
        digits = re.match(r"\d+", part)
        if digits is None:
            break
        numbers.append(int(digits.group()))
    return tuple(numbers)


def lowest_admitted(text: str) -> tuple[int, ...] | None:
    """The lowest torch version a requirements text admits, or None when it does not pin one."""
    lowest: tuple[int, ...] | None = None
    for requirement in _REQUIREMENT.finditer(text):
        for spec in _SPEC.finditer(requirement.group("specs")):
            if spec.group("op") in ("=", "==", ">=", "~=", ">", "==="):  # "=" is conda's pin
                version = parse_version(spec.group("version").rstrip(".*"))
                if version and (lowest is None or version < lowest):
                    lowest = version
    return lowest


def _pyproject_requirements(path: Path) -> str:
    try:
        project = tomllib.loads(path.read_text(encoding="utf-8")).get("project", {})
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return ""
    lines = list(project.get("dependencies", []))
    for extra in project.get("optional-dependencies", {}).values():
        lines.extend(extra)
    return "\n".join(line for line in lines if isinstance(line, str))


def _declared_in(folder: Path) -> tuple[int, ...] | None:
    texts = []
    pyproject = folder / "pyproject.toml"
    if pyproject.is_file():
        texts.append(_pyproject_requirements(pyproject))
    for pattern in _REQUIREMENT_FILES:
        for path in sorted(folder.glob(pattern)):
            try:
                texts.append(path.read_text(encoding="utf-8", errors="replace"))
            except OSError:
                continue
    versions = [version for text in texts if (version := lowest_admitted(text)) is not None]
    return min(versions) if versions else None


def _folders(root: Path, entry_paths: Iterable[str]) -> set[Path]:
    """Folders from each entry module's up to the project root."""
    folders = {root}
    for entry in entry_paths:
        folder = (root / entry).parent
        while folder != root and root in folder.parents:
            folders.add(folder)
            folder = folder.parent
    return folders


def _mentions_in_configs(root: Path, variable: str) -> bool:
    for folder, subfolders, files in os.walk(root):
        subfolders[:] = sorted(name for name in subfolders if name not in _SKIP_FOLDERS)
        for name in sorted(files):
            if not name.endswith(_CONFIG_SUFFIXES):
                continue
            try:
                if variable in (Path(folder) / name).read_text(encoding="utf-8", errors="replace"):
                    return True
            except OSError:
                continue
    return False


def declared(root: Path | None, entry_paths: Iterable[str], target_torch_version: str | None) -> Declared:
    if target_torch_version is not None:
        versions: tuple[tuple[str, tuple[int, ...]], ...] = (("", parse_version(target_torch_version)),)
    elif root is None:
        versions = ()
    else:
        found = []
        for folder in sorted(_folders(root, entry_paths)):
            version = _declared_in(folder)
            if version is not None:
                relative = folder.relative_to(root).as_posix()
                found.append(("" if relative == "." else relative, version))
        versions = tuple(found)
    # Scanning configs only matters where a version that needs the variable is targeted.
    needs_cublas = any(version < CUBLAS_REQUIRED_BEFORE for _, version in versions)
    cublas = needs_cublas and root is not None and _mentions_in_configs(root, CUBLAS_VARIABLE)
    return Declared(versions, cublas)
