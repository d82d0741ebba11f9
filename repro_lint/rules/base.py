"""The rule API: the two kinds of rule, and the registry."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, ClassVar

from repro_lint.core.findings import Finding, FixAvailability

if TYPE_CHECKING:
    import libcst as cst

    from repro_lint.facts.context import FileContext, PendingFix
    from repro_lint.program.model import ProjectModel


class RuleMeta:
    """What every rule declares about itself; `repro-lint rules`, docs and selection read it."""

    code: ClassVar[str]
    name: ClassVar[str]
    default_enabled: ClassVar[bool] = True
    fix_availability: ClassVar[FixAvailability] = FixAvailability.NONE
    # Its fixes set a value that other fixes read (a seed option's default, which decides whether a
    # fix can use `args.seed`): they are applied in a fix round of their own, before the others.
    fixes_first: ClassVar[bool] = False
    # Where in a module its project check (a program rule's, a local rule's `check_project`) may
    # report what the programs running that module decide: kinds of place a module's facts hold
    # (ModuleFacts.sites). Not counted: a program entry's main guard, where a rule reports on that
    # entry's own program. None, undeclared, where it may report so anywhere. A run on some files
    # needs the programs around a file only where some rule may report so in it (engine/closure.py).
    sites: ClassVar[frozenset[str] | None] = None
    # Where, beside `sites`, its project check may report in a module what the modules that module
    # imports decide: a torch seed after calls of functions that may draw, a call giving a function
    # the value its DataLoader applies. Not counted, as for `sites`: an entry's main guard. None,
    # undeclared, where it may report so anywhere. A run on some files reads a module on its own
    # alone where no rule may report so in it (engine/closure.py).
    imported_sites: ClassVar[frozenset[str] | None] = None


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

    # Whether the rule also reports from the program model (`check_project`).
    checks_project: ClassVar[bool] = False

    @classmethod
    def check_project(cls, project: ProjectModel) -> Iterator[Finding]:
        """Findings that only the whole project shows, beside those of the rule's visits: a call in
        one module passing the value a function of another applies (facts/callers_choice.py)."""
        return iter(())


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
