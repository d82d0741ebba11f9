"""Reading `torch.utils.data` calls and the code around them: DataLoader arguments, random generator
objects, and where a module-level worker function goes. Shared by the REP2xx rules and the dataset
facts the project pass joins."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator

import libcst as cst

from repro_lint.facts.callers_choice import UNKNOWN, Choice, callers_choice
from repro_lint.facts.context import FileContext, NodeEdit, import_statement_edit
from repro_lint.facts.edits import argument, has_star_args, literal
from repro_lint.facts.import_block import is_import_line
from repro_lint.knowledge import load

_DATA = load("dataloader.json")
DATALOADERS = frozenset(_DATA["dataloaders"])
POSITIONS: dict[str, int] = _DATA["parameters"]
RANDOM_SAMPLERS: dict[str, int] = _DATA["random_samplers"]
BATCH_SAMPLERS: dict[str, int] = _DATA["batch_samplers"]
DISTRIBUTED_SAMPLERS: dict[str, int] = _DATA["distributed_samplers"]
WRAPPERS: dict[str, dict[str, object]] = _DATA["wrappers"]
ITEM_METHODS: tuple[str, ...] = tuple(_DATA["item_methods"])
# What a transform object held by a dataset runs when the dataset calls it.
CALL_METHODS: tuple[str, ...] = tuple(_DATA["call_methods"])
WORKER_SEEDERS = frozenset(_DATA["worker_seeding_helpers"]["names"])
_RNG = load("rng_objects.json")
RNG_CONSTRUCTORS: dict[str, dict[str, str]] = _RNG["constructors"]
NUMPY_NON_DRAWING = frozenset(_RNG["numpy_global_non_drawing"])

LOADER_SHORT = frozenset({"DataLoader"})
SEEDER_SHORT = frozenset({"seed_everything"})


def loader_argument(call: cst.Call, name: str) -> cst.Arg | None:
    """A DataLoader argument given by keyword or by position."""
    return argument(call, name, POSITIONS[name])


def is_dataloader(context: FileContext, call: cst.Call) -> bool:
    """torch's DataLoader (through any alias); a user's or another library's class of that name is not."""
    return context.callee(call, DATALOADERS, LOADER_SHORT) is not None


def workers_may_run(call: cst.Call) -> bool:
    """`num_workers` given and not a literal 0: a value repro-lint cannot read may be on (catalog)."""
    workers = loader_argument(call, "num_workers")
    return workers is not None and literal(workers.value) not in (0, None, False)


def given(arg: cst.Arg | None) -> bool:
    return arg is not None and literal(arg.value) is not None


def shuffles_without_generator(context: FileContext, call: cst.Call) -> bool:
    """REP202's first row: a DataLoader whose `shuffle` is given and not literally off, without
    `generator` (nor `**kwargs` that may carry one)."""
    if not is_dataloader(context, call) or has_star_args(call) or given(loader_argument(call, "generator")):
        return False
    shuffle = loader_argument(call, "shuffle")
    return shuffle is not None and literal(shuffle.value) not in (False, None, 0)


def workers_without_init(context: FileContext, call: cst.Call) -> bool:
    """REP206's row: a DataLoader whose workers may run, without `worker_init_fn`."""
    return is_dataloader(context, call) and not has_star_args(call) and workers_may_run(call) and not given(loader_argument(call, "worker_init_fn"))


# The DataLoader settings whose offending value a caller may choose, with the test of a loader that
# offends through that setting.
CHOSEN_SETTINGS = {"shuffle": shuffles_without_generator, "num_workers": workers_without_init}


def may_be_on(value: str) -> bool:
    """A recorded `shuffle` or `num_workers` value (facts/callers_choice.py) that is not literally
    off: a value repro-lint cannot read may be on (catalog)."""
    return value == UNKNOWN or ast.literal_eval(value) not in (False, None, 0)


def loader_choice(context: FileContext, call: cst.Call, setting: str) -> Choice | None:
    """The parameter of the enclosing function that decides whether this offending DataLoader
    offends through `setting` (see facts/callers_choice.py)."""
    offending = CHOSEN_SETTINGS[setting]
    given_value = loader_argument(call, setting)
    return callers_choice(call, context.ancestors, given_value.value if given_value else None, lambda other: offending(context, other))


def seeds_workers(context: FileContext, call: cst.Call) -> bool:
    """Lightning's `seed_everything(..., workers=True)`: Lightning then installs its own worker seeding."""
    if context.callee(call, WORKER_SEEDERS, SEEDER_SHORT) is None:
        return False
    workers = argument(call, "workers", 1)
    return workers is not None and literal(workers.value) is True


# --- random generator objects -------------------------------------------------------------------------


def rng_constructor(context: FileContext, value: cst.BaseExpression) -> str | None:
    """The generator constructor `value` calls, looking through `torch.Generator().manual_seed(0)`."""
    while isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and value.func.attr.value == "manual_seed":
        value = value.func.value
    if not isinstance(value, cst.Call):
        return None
    return context.matches(value.func, RNG_CONSTRUCTORS)


def simple_assignments(statement: cst.CSTNode) -> Iterator[tuple[str, cst.BaseExpression]]:
    """`name = value` statements at one level (module or class body)."""
    if not isinstance(statement, cst.SimpleStatementLine):
        return
    for small in statement.body:
        if isinstance(small, cst.Assign):
            for target in small.targets:
                if isinstance(target.target, cst.Name):
                    yield target.target.value, small.value
        elif isinstance(small, cst.AnnAssign) and isinstance(small.target, cst.Name) and small.value is not None:
            yield small.target.value, small.value


def snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


# --- the module-level worker function the worker fixes insert -------------------------------------------


def module_functions(module: cst.Module) -> dict[str, cst.FunctionDef]:
    return {statement.name.value: statement for statement in module.body if isinstance(statement, cst.FunctionDef)}


def merge(edits: list[NodeEdit]) -> tuple[NodeEdit, ...]:
    """Insertions at the same place (an added import and the new function after the last import)
    become one edit, so their order is fixed."""
    merged: dict[tuple[int, str], NodeEdit] = {}
    ordered: list[tuple[int, str]] = []
    for edit in edits:
        key = (id(edit.node), edit.where)
        if key in merged and edit.where != "replace":
            merged[key] = NodeEdit(edit.node, merged[key].content + edit.content, edit.where)
        else:
            merged[key] = edit
            ordered.append(key)
    return tuple(merged[key] for key in ordered)


class WorkerFunction:
    """Where a new module-level worker function goes, and which name it gets.

    It goes after the module's last top-level import that precedes the first DataLoader, so that it
    exists before any loader is built and every fix in a module anchors at the same place (the fix
    engine then applies them one per round, and a later round sees the function already there)."""

    def __init__(self, context: FileContext) -> None:
        self.context = context
        module = context.module
        body = list(module.body)
        first_loader = next(
            (
                position
                for position, statement in enumerate(body)
                if not is_import_line(statement) and "DataLoader" in module.code_for_node(statement)
            ),
            len(body),
        )
        imports = [statement for statement in body[:first_loader] if is_import_line(statement)]
        if imports:
            self.anchor: cst.CSTNode = imports[-1]
            self.where = "line_after"
        else:
            self.anchor = body[min(first_loader, len(body) - 1)]
            self.where = "line_before"

    def name_for(self, code: str, preferred: tuple[str, ...]) -> tuple[str, bool] | None:
        """A function name for `code` (a def named `{name}`): an existing identical function is reused
        (True), else the first name nothing binds yet (False)."""
        functions = module_functions(self.context.module)
        resolver, scopes = self.context.resolver, [self.context.module]
        for name in preferred:
            existing = functions.get(name)
            if existing is not None:
                if self.context.code_for(existing).strip() == code.format(name=name).strip():
                    return name, True
                continue
            if not resolver.is_bound(name, scopes):
                return name, False
        return None

    def insertion(self, code: str) -> NodeEdit:
        newline = self.context.module.default_newline
        if self.where == "line_after":
            return NodeEdit(self.anchor, f"{newline}{newline}{code}", "line_after")
        return NodeEdit(self.anchor, f"{code}{newline}{newline}", "line_before")


def import_edits(context: FileContext, modules: tuple[str, ...]) -> tuple[dict[str, str], list[NodeEdit]]:
    """The names that denote `modules` in the module, and the imports to add for those not imported."""
    names: dict[str, str] = {}
    edits: list[NodeEdit] = []
    for module in modules:
        name, edit = import_statement_edit(context, module)
        names[module] = name
        if edit is not None:
            edits.append(edit)
    return names, edits
