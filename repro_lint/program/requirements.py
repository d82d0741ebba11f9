"""The lowest torch version a folder's requirement files admit, read with `packaging` (PEP 508
requirements, PEP 440 versions and specifiers).

Each file is read as its tool reads it: `pyproject.toml` dependencies and optional dependencies,
`requirements*.txt` as pip reads them (comments, continued lines, per-line options, `-r` includes),
`setup.cfg`'s `install_requires` and `extras_require`, the strings of `setup.py`, and conda's
`environment.yml`, whose specs (`pytorch=1.8`, `pytorch::pytorch>=1.9`) name PyTorch `pytorch` and
whose `pip:` entries are pip's. A requirement's markers are not evaluated: the environment that
trains is not the one that lints, and a declaration admits its versions wherever it applies.
"""

from __future__ import annotations

import configparser
import io
import sys
import tokenize
from ast import literal_eval
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

import yaml
from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib

TORCH_NAMES = frozenset({"torch", "pytorch"})  # `pytorch` is conda's name for it
# The operators that bound a version from below; `<`, `<=` and `!=` leave the lowest version open.
_LOWER_BOUNDS = frozenset({"==", "===", ">=", "~=", ">"})
_CONDA_OPERATORS = "=<>!~ "


def lowest_torch_version(folder: Path, read: set[Path]) -> tuple[int, ...] | None:
    """The lowest torch release the folder's requirement files admit (`>=1.8.0` gives (1, 8, 0)), or
    None where none of them bounds it from below. `read` gains the files it reads or looks for (one
    added later would be seen in its folder's stamp), and the folders it lists."""
    versions = [version for text in _requirements(folder, read) if (version := lowest_admitted(text)) is not None]
    return min(versions) if versions else None


def lowest_admitted(requirement: str) -> tuple[int, ...] | None:
    """The lowest torch release one PEP 508 requirement admits; None for another package, an unpinned
    torch, or text that is no requirement."""
    try:
        parsed = Requirement(requirement)
    except InvalidRequirement:
        return None
    if canonicalize_name(parsed.name) not in TORCH_NAMES:
        return None
    bound = _lower_bound(parsed.specifier)
    return bound.release if bound is not None else None


def _lower_bound(specifier: SpecifierSet) -> Version | None:
    """The highest of the set's lower bounds: all of them must hold (`>=1.8,>=1.9` is 1.9)."""
    bounds = []
    for clause in specifier:
        if clause.operator not in _LOWER_BOUNDS:
            continue
        try:
            bounds.append(Version(clause.version.removesuffix(".*")))
        except InvalidVersion:  # `===` compares strings, which need not be versions
            continue
    return max(bounds) if bounds else None


def _requirements(folder: Path, read: set[Path]) -> Iterator[str]:
    read.add(folder)  # listed for its requirements*.txt
    for name, reader in _READERS:
        read.add(folder / name)
        yield from reader(folder / name)
    for path in sorted(folder.glob("requirements*.txt")):
        seen: set[Path] = set()
        yield from _pip_file(path, seen)
        read.update(seen)


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:  # missing, a folder, unreadable: it declares nothing
        return None


def _pyproject(path: Path) -> list[str]:
    text = _read(path)
    try:
        project = tomllib.loads(text).get("project", {}) if text is not None else {}
    except (tomllib.TOMLDecodeError, RecursionError):
        return []
    if not isinstance(project, dict):
        return []
    groups = [project.get("dependencies", [])]
    extras = project.get("optional-dependencies", {})
    groups.extend(extras.values() if isinstance(extras, dict) else ())
    return [line for group in groups if isinstance(group, list) for line in group if isinstance(line, str)]


def _pip_file(path: Path, seen: set[Path]) -> Iterator[str]:
    """A pip requirements file's requirements, with those of the files it includes by `-r`."""
    resolved = path.resolve()
    if resolved in seen:
        return
    seen.add(resolved)  # missing too: it may be added later
    text = _read(path)
    if text is None:
        return
    for line in _pip_lines(text):
        option, _, value = line.partition(" ")
        if option in ("-r", "--requirement"):
            yield from _pip_file(path.parent / value.strip(), seen)
        elif option.startswith("--requirement="):
            yield from _pip_file(path.parent / option.partition("=")[2], seen)
        elif not line.startswith("-"):  # `-e`, `-c`, `--index-url`: no version of a package
            yield line


def _pip_lines(text: str) -> Iterator[str]:
    """Logical lines as pip reads them: continued lines joined, comments dropped (`#` opening a line
    or after a space), and a requirement's options (`--hash=...`) cut off."""
    logical = text.replace("\\\r\n", "").replace("\\\n", "")
    for raw in logical.splitlines():
        words = []
        for word in raw.split():
            if word.startswith("#"):
                break
            words.append(word)
        if words and not words[0].startswith("-"):
            cut = next((index for index, word in enumerate(words) if word.startswith("-")), len(words))
            words = words[:cut]
        if words:
            yield " ".join(words)


def _setup_cfg(path: Path) -> list[str]:
    """`[options] install_requires` and every `[options.extras_require]` entry: one requirement a
    line, or several on one line separated by `;` (setuptools' two spellings)."""
    text = _read(path)
    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read_string(text or "")
    except configparser.Error:
        return []
    values = [parser.get("options", "install_requires", fallback="")]
    if parser.has_section("options.extras_require"):
        values.extend(value for _, value in parser.items("options.extras_require"))
    found = []
    for value in values:
        lines = value.splitlines() if "\n" in value.strip() else value.split(";")
        found.extend(line for raw in lines for line in _pip_lines(raw))
    return found


def _setup_py(path: Path) -> list[str]:
    """Every string of the build script, wherever its requirements are listed (`install_requires=`,
    a module-level list, a helper). Read as tokens, not parsed: an old script in Python 2 counts too."""
    text = _read(path)
    if text is None:
        return []
    found = []
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type == tokenize.STRING:
                try:
                    value = literal_eval(token.string)
                except (ValueError, SyntaxError):
                    continue
                if isinstance(value, str):
                    found.append(value)
    except (tokenize.TokenError, SyntaxError):
        pass  # a file cut short: the strings before the break still count
    return found


def _conda_file(path: Path) -> list[str]:
    text = _read(path)
    try:
        document = yaml.safe_load(text) if text is not None else None
    except yaml.YAMLError:
        return []
    entries = document.get("dependencies") if isinstance(document, dict) else None
    found: list[str] = []
    for entry in entries if isinstance(entries, list) else ():
        if isinstance(entry, str):
            found.extend(_conda_requirements(entry))
        elif isinstance(entry, dict) and isinstance(entry.get("pip"), list):
            found.extend(line for item in entry["pip"] if isinstance(item, str) for line in _pip_lines(item))
    return found


def _conda_requirements(spec: str) -> list[str]:
    """A conda match spec as PEP 508 requirements: `pytorch=1.8` (1.8.*) -> `pytorch==1.8.*`,
    `pytorch 1.8.0 py3.8_0` -> `pytorch==1.8.0.*`, `pytorch >= 1.13` -> `pytorch>=1.13`,
    `conda-forge::pytorch>=1.9|<1.5` -> one per alternative; a build string (after a space, or after
    the version's own `=`) is dropped."""
    spec = spec.rpartition("::")[2].strip()
    end = next((index for index, char in enumerate(spec) if char in _CONDA_OPERATORS), len(spec))
    name, rest = spec[:end], spec[end:].strip()
    if not rest:
        return [name]
    operator = rest[: len(rest) - len(rest.lstrip("=<>!~"))]
    version = rest[len(operator) :].strip().split()[0]
    if operator in ("", "="):  # fuzzy: `=1.8` and `1.8` admit 1.8 and every 1.8.x
        return [f"{name}=={version.split('=')[0].removesuffix('*').removesuffix('.')}.*"]
    if operator == "==":
        version = version.split("=")[0]
    return [f"{name}{alternative}" for alternative in f"{operator}{version}".split("|")]


# The files of a folder that declare requirements, each with its reader; and its requirements*.txt.
_READERS: tuple[tuple[str, Callable[[Path], Iterable[str]]], ...] = (
    ("pyproject.toml", _pyproject),
    ("setup.cfg", _setup_cfg),
    ("setup.py", _setup_py),
    ("environment.yml", _conda_file),
    ("environment.yaml", _conda_file),
)
