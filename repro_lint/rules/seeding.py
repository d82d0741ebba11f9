"""REP1xx: is the program seeded, and with a value that is the same in every run?"""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from repro_lint.context import NodeEdit, PendingFix
from repro_lint.edits import argument, has_star_args, literal, replace_node
from repro_lint.events import NUMPY, RANDOM, TORCH, short, tables
from repro_lint.knowledge import load
from repro_lint.names import dotted_name
from repro_lint.program import Located, Program, ProjectModel
from repro_lint.program_fixes import insert_on_main_path, program_finding
from repro_lint.rules.base import Applicability, Finding, Fix, FixAvailability, ProgramRule, Rule, register
from repro_lint.seed_values import SeedValues
from repro_lint.source import Position

_RNG_NAMES = {TORCH: "torch", NUMPY: "numpy's global RNG", RANDOM: "Python's global `random`"}


def _seeded(events: list[Located], rng: str) -> bool:
    return any(located.event.kind == "seed" and located.event.rng == rng for located in events)


def _uses(project: ProjectModel, program: Program, events: list[Located], rng: str) -> list[Located]:
    """Draws from `rng` that make a run differ. In a program that never trains (inference, export,
    evaluation) only draws its own entry module makes count: parameter initialisation is replaced by
    loaded weights, and draws deep in shared code (augmentation, profiling helpers) usually sit on
    paths such a program does not take. Draws inside a Dataset's `__getitem__` are reseeded by
    PyTorch in each DataLoader worker."""
    workers = project.spawns_workers(program)
    return [
        located
        for located in events
        if located.event.rng == rng
        and (located.event.kind in ("consume", "init") if program.trains else located.event.kind == "consume" and located.module is program.entry)
        and not (rng != TORCH and workers and located.event.in_worker)
    ]


@register
class MissingTorchSeed(ProgramRule):
    """A program that draws from torch's RNG (builds layers, samples, shuffles) and never seeds it."""

    code = "REP101"
    name = "missing-torch-seed"
    fix_availability = FixAvailability.SOMETIMES

    def check(self, project: ProjectModel) -> Iterator[Finding]:
        for program in project.programs:
            events = project.events(program)
            uses = _uses(project, program, events, TORCH)
            if not uses or _seeded(events, TORCH):
                continue
            fix = insert_on_main_path(
                program.entry, ["torch"], lambda names, seed: [f"{names['torch']}.manual_seed({seed})"], "Seed torch at the start of the program"
            )
            yield program_finding(
                self,
                program.entry,
                f"{program.entry.path} is never seeded for torch; first use of torch randomness: {uses[0].where}; "
                "call `torch.manual_seed(seed)` at the start of the program",
                fix,
            )


@register
class MissingLibrarySeed(ProgramRule):
    """A program that draws from `random` or `numpy.random` global functions and never seeds them."""

    code = "REP102"
    name = "missing-library-seed"
    fix_availability = FixAvailability.SOMETIMES

    _CALLS = {NUMPY: ("numpy", "{}.random.seed({})"), RANDOM: ("random", "{}.seed({})")}

    def check(self, project: ProjectModel) -> Iterator[Finding]:
        for program in project.programs:
            events = project.events(program)
            for rng in (NUMPY, RANDOM):
                uses = _uses(project, program, events, rng)
                if not uses or _seeded(events, rng):
                    continue
                module, template = self._CALLS[rng]
                call = template.format("np" if rng == NUMPY else "random", "seed")
                fix = insert_on_main_path(
                    program.entry,
                    [module],
                    lambda names, seed, module=module, template=template: [template.format(names[module], seed)],
                    f"Seed {_RNG_NAMES[rng]} at the start of the program",
                )
                yield program_finding(
                    self,
                    program.entry,
                    f"{program.entry.path} never seeds {_RNG_NAMES[rng]}; first use: {uses[0].where}; call `{call}` "
                    "next to the torch seed",
                    fix,
                )


@register
class OptionalSeedDefaultNone(ProgramRule):
    """Every seeding call is skipped when the seed option keeps its default, None."""

    code = "REP108"
    name = "optional-seed-default-none"
    fix_availability = FixAvailability.SOMETIMES

    def check(self, project: ProjectModel) -> Iterator[Finding]:
        reported = set()
        for program in project.programs:
            seeds = [located for located in project.events(program) if located.event.kind == "seed" and located.event.rng == TORCH]
            if not seeds or not all(located.event.guard for located in seeds):
                continue
            guards = {located.event.guard.rpartition(".")[2].lstrip("-").replace("-", "_") for located in seeds}  # type: ignore[union-attr]
            for name in program.modules:
                module = project.modules[name]
                for option in module.seed_options:
                    if not option.default_is_none or option.name.lstrip("-").replace("-", "_") not in guards:
                        continue
                    if (module.path, option.start) in reported:
                        continue
                    reported.add((module.path, option.start))
                    fix = Fix(Applicability.UNSAFE, "Give the seed option a default of 0", (option.fix,)) if option.fix else None
                    yield Finding(
                        self.code,
                        self.name,
                        f"the seed option `{option.name}` defaults to None and every seeding call is skipped then "
                        f"({seeds[0].where}): a run with default options is not reproducible; give it a default such as 0",
                        module.path,
                        option.start,
                        option.end,
                        fix,
                    )



_SOURCES = load("nondeterministic_sources.json")
_SOURCE_CALLS: dict[str, str] = _SOURCES["calls"]
_SOURCE_MODULES: dict[str, str] = _SOURCES["modules"]
_WORKER_SOURCES = frozenset(_SOURCES["fine_in_worker_init"])


class _SourceFinder(cst.CSTVisitor):
    """The first call in an expression whose value differs in every run."""

    def __init__(self, rule: NondeterministicSeedValue, in_worker_init: bool) -> None:
        self.rule = rule
        self.in_worker_init = in_worker_init
        self.found: tuple[str, str] | None = None

    def visit_Call(self, node: cst.Call) -> None:
        if self.found is not None:
            return
        for name in sorted(self.rule.context.qualified_names(node.func)):
            source = _SOURCE_CALLS.get(name) or _SOURCE_MODULES.get(name.partition(".")[0])
            if source is None or (self.in_worker_init and name in _WORKER_SOURCES):
                continue
            if name == "numpy.random.SeedSequence" and node.args:
                continue
            self.found = (f"{name}()", source)
            return


@register
class NondeterministicSeedValue(Rule):
    """A seed taken from the clock, OS entropy or an unseeded RNG, or no seed where that means "random"."""

    code = "REP104"
    name = "nondeterministic-seed-value"
    required_text = ("seed", "Trainer")

    def visit_Call(self, node: cst.Call) -> None:
        data = tables()
        targets = self.context.qualified_names(node.func)
        seeder = next((name for name in sorted(targets) if name in data.seeders or name in data.frameworks), None)
        method = node.func.attr.value if isinstance(node.func, cst.Attribute) else None
        if seeder is None and method != "manual_seed":
            return
        if has_star_args(node):
            return
        shown = short(seeder) if seeder else ".manual_seed"
        value = self._seed_argument(node, seeder)
        if value is None or literal(value) is None:
            if seeder in _NONE_IS_RANDOM or (seeder in data.frameworks and value is not None):
                self.report(
                    node,
                    f"`{shown}` without a seed (or with None) picks a random seed, so every run differs; pass a fixed seed",
                )
            return
        source = self._source(value)
        if source is not None:
            call, kind = source
            self.report(
                node,
                f"the seed passed to `{shown}` comes from {kind} (`{call}`), so every run gets a different seed; use a "
                "fixed seed from an argument or config",
            )

    @staticmethod
    def _seed_argument(node: cst.Call, seeder: str | None) -> cst.BaseExpression | None:
        for name in ("seed", "a", "random_seed"):
            given = argument(node, name)
            if given is not None:
                return given.value
        if seeder in tables().frameworks:
            return None
        given = argument(node, "seed", 0)
        return given.value if given is not None else None

    def _source(self, value: cst.BaseExpression) -> tuple[str, str] | None:
        finder = _SourceFinder(self, self._in_worker_init())
        value.visit(finder)
        if finder.found is None and isinstance(value, cst.Name):
            # One step of data flow: `seed = int(time.time()); torch.manual_seed(seed)`.
            for assigned in _assignments(self.context.scopes[-1], value.value):
                assigned.visit(finder)
        return finder.found

    def _in_worker_init(self) -> bool:
        function = next((scope for scope in reversed(self.context.scopes) if isinstance(scope, cst.FunctionDef)), None)
        if function is None:
            return False
        params = [param.name.value for param in function.params.params]
        return "worker" in function.name.value or "worker_id" in params


_NONE_IS_RANDOM = frozenset(
    name for entry in load("seeders.json")["seeders"] if entry["none_is_random"] for name in entry["names"]
)


class _Assignments(cst.CSTVisitor):
    def __init__(self, name: str) -> None:
        self.name = name
        self.values: list[cst.BaseExpression] = []

    def visit_Assign(self, node: cst.Assign) -> None:
        if any(isinstance(target.target, cst.Name) and target.target.value == self.name for target in node.targets):
            self.values.append(node.value)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return False


def _assignments(scope: cst.CSTNode, name: str) -> list[cst.BaseExpression]:
    """Values assigned to `name` directly in `scope` (not in nested functions)."""
    if isinstance(scope, cst.FunctionDef):
        statements = scope.body.body if isinstance(scope.body, cst.IndentedBlock) else []
    else:
        statements = scope.body if isinstance(scope, cst.Module) else []
    visitor = _Assignments(name)
    for statement in statements:
        statement.visit(visitor)
    return visitor.values


@register
class SeedAfterRandomness(ProgramRule):
    """A torch seed placed after code in the same body that already drew from torch's RNG."""

    code = "REP105"
    name = "seed-after-randomness"

    def check(self, project: ProjectModel) -> Iterator[Finding]:
        consuming = project.functions_drawing(TORCH)
        for facts in project.modules.values():
            bodies = [(facts.module_events + facts.main_events, facts.module_calls + facts.main_calls)]
            bodies += [(function.events, function.calls) for function in facts.functions]
            for events, calls in bodies:
                seeds = [event for event in events if event.kind == "seed" and event.rng == TORCH]
                if not seeds:
                    continue
                seed = seeds[0]
                earlier = [
                    (event.line, f"{facts.path}:{event.line} ({event.what})")
                    for event in events
                    if event.kind in ("consume", "init") and event.rng == TORCH and event.line < seed.line
                ]
                earlier += [
                    (call.line, f"{facts.path}:{call.line} (calls {callee.rpartition('.')[2]}, which draws from it)")
                    for call in calls
                    if call.line < seed.line
                    for callee in project.callees(call, facts.module)
                    if callee in consuming
                ]
                if earlier:
                    at = Position(seed.line, seed.column)
                    yield Finding(
                        self.code,
                        self.name,
                        f"`{seed.what}` runs after code that already drew from torch's RNG ({min(earlier)[1]}), so what "
                        "was drawn before it is not seeded; seed before the first draw",
                        facts.path,
                        at,
                        at,
                    )
