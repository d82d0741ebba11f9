"""Which project module a dotted name refers to, from the project's module names alone: the project
pass resolves imports and calls with it, and a run reusing the last pass asks it whether a new call
or import could reach the project at all, without loading any module's facts."""

from __future__ import annotations

from collections.abc import Iterable
from functools import cached_property

from repro_lint.core.imports import is_builtin


class ModuleNames:
    def __init__(self, modules: Iterable[str]) -> None:
        self.modules = frozenset(modules)
        self._cache: dict[tuple[str, str | None], str | None] = {}

    def resolve(self, name: str, importer: str | None = None) -> str | None:
        """The project module `name` refers to, trying the importer's own folder first (where
        `python train.py` puts it on sys.path), then the project root, then a unique suffix match
        (src/ layouts, scripts run from a subfolder)."""
        key = (name, importer)
        if key not in self._cache:
            self._cache[key] = self._resolve(name, importer)
        return self._cache[key]

    def _resolve(self, name: str, importer: str | None) -> str | None:
        if is_builtin(name):  # found before any project file
            return None
        if importer is not None:
            folder = importer.rpartition(".")[0]
            if folder and f"{folder}.{name}" in self.modules:
                return f"{folder}.{name}"
        if name in self.modules:
            return name
        matches = self._by_suffix.get(name, ())
        return matches[0] if len(matches) == 1 else None

    def candidates(self, name: str, importer: str | None = None) -> tuple[str, ...]:
        """Every module `name` may refer to from `importer`, in this project or in any part of it:
        what `resolve` returns with these modules or any subset of them (a suffix that matches
        several modules here matches one where the others are missing)."""
        if self.outside(name):
            return ()
        found = []
        folder = importer.rpartition(".")[0] if importer is not None else ""
        if folder and f"{folder}.{name}" in self.modules:
            found.append(f"{folder}.{name}")
        if name in self.modules:
            found.append(name)
        return (*found, *self._by_suffix.get(name, ()))

    def split(self, qualified: str, importer: str | None) -> tuple[str, list[str]] | None:
        """The project module the longest prefix of `qualified` names, and the rest of the name; None
        where no prefix names one: the name denotes nothing the project defines (a library's
        function, a builtin)."""
        parts = qualified.split(".")
        for cut in range(len(parts) - 1, 0, -1):
            module = self.resolve(".".join(parts[:cut]), importer)
            if module is not None:
                return module, parts[cut:]
        return None

    def outside(self, name: str) -> bool:
        """Whether neither `name` nor any name under it (`name.x.y`) can denote a project module, or
        anything in one: its first part is no part of any project module's name (which any of the
        ways `resolve` matches would need). An import of such a module adds nothing the project pass
        can follow."""
        return name.partition(".")[0] not in self._parts

    @cached_property
    def _parts(self) -> frozenset[str]:
        return frozenset(part for module in self.modules for part in module.split("."))

    @cached_property
    def _by_suffix(self) -> dict[str, list[str]]:
        """Modules by each dotted tail of their name (`a.b.c` under `b.c` and `c`): a suffix match in
        one look-up, where scanning every module for every unresolved import took minutes on
        thousands of modules."""
        index: dict[str, list[str]] = {}
        for module in sorted(self.modules):
            parts = module.split(".")
            for start in range(1, len(parts)):
                index.setdefault(".".join(parts[start:]), []).append(module)
        return index
