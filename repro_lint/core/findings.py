"""What a finding is: the plain data every layer passes around, from the rules that report findings to
the caches, workers and reports that carry them."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Protocol

from repro_lint.core.records import pickled_by_constructor
from repro_lint.core.source import Position


class Applicability(enum.Enum):
    """Ruff's fix safety: `--fix` applies safe fixes, `--unsafe-fixes` adds the others."""

    SAFE = "safe"
    UNSAFE = "unsafe"


class FixAvailability(enum.Enum):
    NONE = "none"
    SOMETIMES = "sometimes"
    ALWAYS = "always"


@pickled_by_constructor
@dataclass(frozen=True, slots=True)
class Edit:
    """Replace the text between two positions of one file with `content` (an insertion when they are equal)."""

    start: Position
    end: Position
    content: str


@pickled_by_constructor
@dataclass(frozen=True, slots=True)
class Fix:
    applicability: Applicability
    message: str
    edits: tuple[Edit, ...]


@pickled_by_constructor
@dataclass(frozen=True, slots=True)
class Finding:
    code: str
    name: str
    message: str
    path: str
    start: Position
    end: Position
    fix: Fix | None = None
    # In a notebook, the cell (1-based among all its cells) that `start` and `end` count lines in.
    cell: int | None = None

    @property
    def sort_key(self) -> tuple[str, int, int, str, str]:
        return (self.path, self.start.line, self.start.column, self.code, self.message)


class Reporter(Protocol):
    """What reports a finding (a rule class or instance): its code and name."""

    @property
    def code(self) -> str: ...

    @property
    def name(self) -> str: ...
