"""The rule API: findings, fixes, the two kinds of rule, and the registry."""

from __future__ import annotations

import enum
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from repro_lint.source import Position

if TYPE_CHECKING:
    import libcst as cst

    from repro_lint.context import FileContext, PendingFix
    from repro_lint.program import ProjectModel


class Applicability(enum.Enum):
    """Ruff's fix safety: `--fix` applies safe fixes, `--unsafe-fixes` adds the others."""

    SAFE = "safe"
    UNSAFE = "unsafe"


class FixAvailability(enum.Enum):
    NONE = "none"
    SOMETIMES = "sometimes"
    ALWAYS = "always"


@dataclass(frozen=True)
class Edit:
    """Replace the text between two positions of one file with `content` (an insertion when they are equal)."""

    start: Position
    end: Position
    content: str


@dataclass(frozen=True)
class Fix:
    applicability: Applicability
    message: str
    edits: tuple[Edit, ...]


@dataclass(frozen=True)
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


class RuleMeta:
    """What every rule declares about itself; `repro-lint rules`, docs and selection read it."""

    code: ClassVar[str]
    name: ClassVar[str]
    default_enabled: ClassVar[bool] = True
    fix_availability: ClassVar[FixAvailability] = FixAvailability.NONE


class Rule(RuleMeta):
    """A rule that looks at one file: LibCST `visit_<Node>` / `leave_<Node>` methods, all rules batched
    into one traversal. `report()` records a finding at a node."""

    # Substrings of which at least one must occur in a file for the rule to be able to fire there.
    # Checked before parsing, so a file that cannot produce a finding costs no visit.
    required_text: ClassVar[tuple[str, ...]] = ()
    # Silence findings in modules that only programs which never train reach (inference scripts).
    training_only: ClassVar[bool] = False
    # What a program must do for a finding to be true ("trains", "cuda", "nondeterministic"; see
    # ProjectModel.program_satisfies): findings are kept only in modules that a program meeting all of
    # them reaches. For rules whose condition is about the whole program, which one file cannot see.
    program_condition: ClassVar[tuple[str, ...]] = ()

    def __init__(self, context: FileContext) -> None:
        self.context = context

    def report(self, node: cst.CSTNode, message: str, fix: PendingFix | None = None) -> None:
        self.context.report(self, node, message, fix)

    @classmethod
    def program_condition_for(cls, finding: Finding) -> tuple[str, ...]:
        """The program condition of one finding; a rule whose forms differ in it overrides this."""
        return cls.program_condition


class ProgramRule(RuleMeta):
    """A rule about whole programs, run once per project on the modules' facts."""

    def check(self, project: ProjectModel) -> Iterator[Finding]:
        raise NotImplementedError


RuleClass = type[RuleMeta]
REGISTRY: dict[str, RuleClass] = {}


def register(cls: RuleClass) -> RuleClass:
    if cls.code in REGISTRY:
        raise ValueError(f"rule code {cls.code} registered twice")
    REGISTRY[cls.code] = cls
    return cls
