"""REP1xx: is the program seeded, and with a value that is the same in every run?"""

from __future__ import annotations

from collections.abc import Iterator
from functools import partial

import libcst as cst

from repro_lint.core.findings import Applicability, Edit, Finding, Fix, FixAvailability
from repro_lint.core.message_text import elide
from repro_lint.core.source import Position
from repro_lint.facts.context import FileContext
from repro_lint.facts.edits import argument, has_star_args, literal
from repro_lint.facts.events import NUMPY, RANDOM, TORCH, short, tables
from repro_lint.facts.module_facts import ModuleFacts, seeds_after_calls
from repro_lint.facts.module_index import index_for
from repro_lint.facts.names import dotted_name
from repro_lint.facts.traversal import walk
from repro_lint.knowledge import load
from repro_lint.program.fixes import insert_in_worker, insert_on_main_path, program_finding
from repro_lint.program.model import ProjectModel
from repro_lint.program.programs import Located, Program
from repro_lint.rules.base import ProgramRule, Rule, register

_RNG_NAMES = {TORCH: "torch", NUMPY: "numpy's global RNG", RANDOM: "Python's global `random`"}
# How messages name them, shorter.
_RNG_SHORT = {NUMPY: "numpy", RANDOM: "`random`"}


def _torch_seed(names: dict[str, str], seed: str) -> list[str]:
    return [f"{names['torch']}.manual_seed({seed})"]


def _library_seed(module: str, template: str, names: dict[str, str], seed: str) -> list[str]:
    return [template.format(names[module], seed)]


def _with_workers(project: ProjectModel) -> Iterator[Program]:
    """Every program, each followed by the programs of the workers it starts in fresh processes."""
    for program in project.programs:
        yield program
        yield from project.processes.workers(program)


def _seeded(events: list[Located], rng: str) -> bool:
    return any(located.event.kind == "seed" and located.event.rng == rng for located in events)


# What makes a run differ: every draw in a program that trains; in one that does not (sampling,
# evaluation, export), the draws that are not parameter initialisation, which loaded weights replace.
_DRAWS = frozenset({"consume", "init", "shuffle"})
_RUN_DRAWS = frozenset({"consume", "shuffle"})


def _uses(project: ProjectModel, program: Program, events: list[Located], rng: str) -> list[Located]:
    """Draws from `rng` that make a run differ, anywhere the program reaches: a sampling program's
    noise is drawn in the sampler's module, not the script's. Two exceptions keep the rule true:
    - In a program that never trains, `random` and numpy draws count only in its own entry module.
      Elsewhere they are data augmentation or visualisation helpers (yolov5's `augmentations.py`
      reached from `val.py` and `export.py`, detectron2's random colours) on paths such a program
      does not take, and the call graph cannot tell those paths apart.
    - Draws inside a Dataset's `__getitem__` are reseeded by PyTorch in each DataLoader worker."""
    workers = project.spawns_workers(program)
    return [
        located
        for located in events
        if located.event.rng == rng
        and located.event.kind in (_DRAWS if program.trains else _RUN_DRAWS)
        and (program.trains or rng == TORCH or located.module is program.entry)
        and not (rng != TORCH and workers and located.event.in_worker)
    ]


@register
class MissingTorchSeed(ProgramRule):
    """A program that draws from torch's RNG (builds layers, samples, shuffles) and never seeds it."""

    code = "REP101"
    name = "missing-torch-seed"
    sites = frozenset()
    imported_sites = frozenset()
    fix_availability = FixAvailability.SOMETIMES

    def check(self, project: ProjectModel) -> Iterator[Finding]:
        for program in _with_workers(project):
            events = project.events(program)
            uses = _uses(project, program, events, TORCH)
            if not uses or _seeded(events, TORCH):
                continue
            worker = program.worker
            here = program.entry.path
            if worker is None:
                fix = insert_on_main_path(program.entry, ["torch"], _torch_seed, "Seed torch at the start of the program")
                message = f"this program never seeds torch; first draw: {uses[0].seen_from(here)}"
            else:
                fix = insert_in_worker(program.entry, worker, ["torch"], _torch_seed, f"Seed torch at the start of `{worker.name}`")
                message = f"{worker.started(here)} never seeds torch; first draw: {uses[0].seen_from(here)}"
            yield program_finding(self, program.entry, message, fix)


@register
class MissingLibrarySeed(ProgramRule):
    """A program that draws from `random` or `numpy.random` global functions and never seeds them."""

    code = "REP102"
    name = "missing-library-seed"
    sites = frozenset()
    imported_sites = frozenset()
    fix_availability = FixAvailability.SOMETIMES

    _CALLS = {NUMPY: ("numpy", "{}.random.seed({})"), RANDOM: ("random", "{}.seed({})")}

    def check(self, project: ProjectModel) -> Iterator[Finding]:
        for program in _with_workers(project):
            events = project.events(program)
            for rng in (NUMPY, RANDOM):
                uses = _uses(project, program, events, rng)
                if not uses or _seeded(events, rng):
                    continue
                module, template = self._CALLS[rng]
                statements = partial(_library_seed, module, template)
                worker = program.worker
                here = program.entry.path
                if worker is None:
                    fix = insert_on_main_path(program.entry, [module], statements, f"Seed {_RNG_NAMES[rng]} at the start of the program")
                    message = f"this program never seeds {_RNG_SHORT[rng]}; first draw: {uses[0].seen_from(here)}"
                else:
                    fix = insert_in_worker(program.entry, worker, [module], statements, f"Seed {_RNG_NAMES[rng]} at the start of `{worker.name}`")
                    message = f"{worker.started(here)} never seeds {_RNG_SHORT[rng]}; first draw: {uses[0].seen_from(here)}"
                yield program_finding(self, program.entry, message, fix)


_SOURCES = load("nondeterministic_sources.json")
_SOURCE_CALLS: dict[str, str] = _SOURCES["calls"]
_SOURCE_MODULES: dict[str, str] = _SOURCES["modules"]
_WORKER_SOURCES = frozenset(_SOURCES["fine_in_worker_init"])
_DRAWS_BEFORE_SEED: dict[str, str] = _SOURCES["draws_before_seed"]


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
            source = _SOURCE_CALLS.get(name) or _SOURCE_MODULES.get(name.partition(".")[0]) or self._unseeded_draw(node, name)
            if source is None or (self.in_worker_init and name in _WORKER_SOURCES):
                continue
            if name == "numpy.random.SeedSequence" and node.args:
                continue
            self.found = (f"{name}()", source)
            return

    def _unseeded_draw(self, node: cst.Call, name: str) -> str | None:
        """`random.randint(1, 10000)` with no seeding of `random` before it in the same body. In a
        DataLoader's worker_init_fn the global RNGs are already seeded per worker by PyTorch."""
        consumer = tables().consumers.get(name)
        if consumer is None or consumer[1] != "consume" or self.in_worker_init:
            return None
        rng = consumer[0]
        return None if self.rule.seeded_before(node, rng) else _DRAWS_BEFORE_SEED[rng]


@register
class NondeterministicSeedValue(Rule):
    """A seed taken from the clock, OS entropy or an unseeded RNG, or no seed where that means "random"."""

    code = "REP104"
    name = "nondeterministic-seed-value"
    required_text = ("seed", "Trainer")

    def __init__(self, context: FileContext) -> None:
        super().__init__(context)
        # A bad value is reported once, at the first seeding call that takes it (catalog, REP104).
        self._reported: set[int] = set()
        # By scope: the values assigned to each name there, found in one walk of its body.
        self._assigned: dict[int, dict[str, list[cst.BaseExpression]]] = {}

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
                    f"`{shown}` without a seed (or with None) picks a random seed, so every run differs",
                )
            return
        source = self._source(value)
        if source is not None:
            call, kind, origin = source
            if id(origin) in self._reported:
                return
            self._reported.add(id(origin))
            self.report(
                node,
                f"`{shown}` gets its seed from {kind} (`{elide(call)}`)",
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

    def _source(self, value: cst.BaseExpression) -> tuple[str, str, cst.CSTNode] | None:
        """The bad source in `value`, and the expression it sits in (to report each value once)."""
        finder = _SourceFinder(self, self._in_worker_init())
        walk(value, finder)
        if finder.found is not None:
            return (*finder.found, value)
        assigned_to = dotted_name(value)
        if assigned_to is not None:
            # One step of data flow: `seed = int(time.time()); torch.manual_seed(seed)`, or
            # `opt.manualSeed = random.randint(1, 10000)` when no seed was given.
            scope = self.context.scopes[-1]
            if id(scope) not in self._assigned:
                self._assigned[id(scope)] = _assignments(scope)
            for assigned in self._assigned[id(scope)].get(assigned_to, ()):
                walk(assigned, finder)
                if finder.found is not None:
                    return (*finder.found, assigned)
        return None

    def seeded_before(self, draw: cst.Call, rng: str) -> bool:
        """Whether a call seeding `rng` comes before `draw` in the body of the current scope."""
        index = index_for(self.context)
        seeds = _SeedingCalls(self, rng)
        walk(self.context.scopes[-1], seeds)
        return any(index.order(call) < index.order(draw) for call in seeds.found)

    def _in_worker_init(self) -> bool:
        function = next((scope for scope in reversed(self.context.scopes) if isinstance(scope, cst.FunctionDef)), None)
        if function is None:
            return False
        params = [param.name.value for param in function.params.params]
        return "worker" in function.name.value or "worker_id" in params


_NONE_IS_RANDOM = frozenset(
    name for entry in load("seeders.json")["seeders"] if entry["none_is_random"] for name in entry["names"]
)


class _SeedingCalls(cst.CSTVisitor):
    """Calls that seed one RNG, in a body (not in nested functions)."""

    def __init__(self, rule: NondeterministicSeedValue, rng: str) -> None:
        self.rule = rule
        self.rng = rng
        self.found: list[cst.Call] = []

    def visit_Call(self, node: cst.Call) -> None:
        names = self.rule.context.qualified_names(node.func)
        seeds = {rng for name in names for rng in tables().seeders.get(name, ())}
        if names & frozenset(self.rule.context.settings.seed_helpers):
            seeds |= {NUMPY, RANDOM, TORCH}
        if isinstance(node.func, cst.Attribute) and node.func.attr.value == "manual_seed":
            seeds.add(TORCH)
        if self.rng in seeds:
            self.found.append(node)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return False


class _Assignments(cst.CSTVisitor):
    """Values assigned to each name or attribute chain (`seed`, `opt.manualSeed`)."""

    def __init__(self) -> None:
        self.values: dict[str, list[cst.BaseExpression]] = {}

    def visit_Assign(self, node: cst.Assign) -> None:
        for name in dict.fromkeys(dotted_name(target.target) for target in node.targets):
            if name is not None:
                self.values.setdefault(name, []).append(node.value)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return False


def _assignments(scope: cst.CSTNode) -> dict[str, list[cst.BaseExpression]]:
    """Values assigned to each name in `scope` (not in nested functions), in order."""
    if isinstance(scope, cst.FunctionDef):
        statements = scope.body.body if isinstance(scope.body, cst.IndentedBlock) else []
    else:
        statements = scope.body if isinstance(scope, cst.Module) else []
    visitor = _Assignments()
    for statement in statements:
        walk(statement, visitor)
    return visitor.values


@register
class SeedAfterRandomness(ProgramRule):
    """A torch seed placed after code in the same body that already drew from torch's RNG."""

    code = "REP105"
    name = "seed-after-randomness"
    # A seed is judged by what runs before it in its body, whichever program runs that: the draws
    # of the functions it calls too.
    sites = frozenset()
    imported_sites = frozenset({seeds_after_calls(TORCH)})
    fix_availability = FixAvailability.SOMETIMES

    def check(self, project: ProjectModel) -> Iterator[Finding]:
        consuming = project.calls.functions_drawing(TORCH)
        # A call made where modules are built without initialising their weights draws only what
        # is not initialisation.
        consuming_without_init = project.calls.functions_drawing(TORCH, initialising=False)
        for facts in project.modules.values():
            for events, calls in facts.bodies():
                seeds = [event for event in events if event.kind == "seed" and event.rng == TORCH]
                if not seeds:
                    continue
                seed = seeds[0]
                earlier = [
                    (event.line, f"line {event.line} ({elide(event.what)})")
                    for event in events
                    if event.kind in ("consume", "init") and event.rng == TORCH and event.line < seed.line
                ]
                earlier += [
                    (call.line, f"line {call.line} (`{elide(callee.rpartition('.')[2])}` draws)")
                    for call in calls
                    if call.line < seed.line
                    for callee in project.calls.callees_run_now(call, facts.module)
                    if callee in (consuming_without_init if call.no_init else consuming)
                ]
                if earlier:
                    first_line, first = min(earlier)
                    at = Position(seed.line, seed.column)
                    yield Finding(
                        self.code,
                        self.name,
                        f"`{elide(seed.what)}` runs after code that already drew from torch's RNG ({first})",
                        facts.path,
                        at,
                        at,
                        _move_before(facts, seed.line, first_line),
                    )


def _move_before(facts: ModuleFacts, seed_line: int, line: int) -> Fix | None:
    """Move the seeding statement at `seed_line` up its block, before the statement holding `line`,
    when it is a statement of its own in the same block and reads nothing computed in between."""
    move = facts.fix.seed_move(seed_line) if facts.fix is not None else None
    target = move.target(line) if move is not None else None
    if move is None or target is None:
        return None
    removed = Edit(Position(move.start, 0), Position(move.stop, 0), "")
    inserted = Edit(Position(target, 0), Position(target, 0), move.text)
    return Fix(Applicability.UNSAFE, "Move the seeding before the first draw", (inserted, removed))
