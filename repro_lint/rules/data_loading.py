"""REP201, REP202, REP205, REP206: DataLoaders whose order or worker randomness is not under the
user's seed."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

import libcst as cst

from repro_lint.context import FileContext, NodeEdit, PendingFix
from repro_lint.dataflow import ModuleIndex, bound_values, index_for, indentation, is_self_attribute, owning_class, replace_in_place
from repro_lint.edits import argument, has_star_args, import_statement_edit, literal, with_keyword
from repro_lint.knowledge import load
from repro_lint.names import dotted_name, terminal_name
from repro_lint.rules.base import Applicability, FixAvailability, Rule, register
from repro_lint.seed_values import SeedValues

_DATA = load("dataloader.json")
DATALOADERS = frozenset(_DATA["dataloaders"])
POSITIONS: dict[str, int] = _DATA["parameters"]
RANDOM_SAMPLERS: dict[str, int] = _DATA["random_samplers"]
BATCH_SAMPLERS: dict[str, int] = _DATA["batch_samplers"]
DISTRIBUTED_SAMPLERS: dict[str, int] = _DATA["distributed_samplers"]
WRAPPERS: dict[str, dict[str, object]] = _DATA["wrappers"]
ITEM_METHODS: tuple[str, ...] = tuple(_DATA["item_methods"])
WORKER_SEEDERS = frozenset(_DATA["worker_seeding_helpers"]["names"])
_RNG = load("rng_objects.json")
RNG_CONSTRUCTORS: dict[str, dict[str, str]] = _RNG["constructors"]
NUMPY_NON_DRAWING = frozenset(_RNG["numpy_global_non_drawing"])

_LOADER_SHORT = frozenset({"DataLoader"})
_SAMPLER_SHORT = frozenset(name.rpartition(".")[2] for name in (*RANDOM_SAMPLERS, *BATCH_SAMPLERS))
_DISTRIBUTED_SHORT = frozenset({"DistributedSampler"})
_SEEDER_SHORT = frozenset({"seed_everything"})


def loader_argument(call: cst.Call, name: str) -> cst.Arg | None:
    """A DataLoader argument given by keyword or by position."""
    return argument(call, name, POSITIONS[name])


def is_dataloader(context: FileContext, call: cst.Call) -> bool:
    """torch's DataLoader (through any alias); a user's or another library's class of that name is not."""
    return context.callee(call, DATALOADERS, _LOADER_SHORT) is not None


def workers_may_run(call: cst.Call) -> bool:
    """`num_workers` given and not a literal 0: a value repro-lint cannot read may be on (catalog)."""
    workers = loader_argument(call, "num_workers")
    return workers is not None and literal(workers.value) not in (0, None, False)


def _given(arg: cst.Arg | None) -> bool:
    return arg is not None and literal(arg.value) is not None


# --- the module-level `seed_worker` function the worker fixes insert ---------------------------------


def _is_import_line(statement: cst.CSTNode) -> bool:
    return isinstance(statement, cst.SimpleStatementLine) and all(
        isinstance(small, (cst.Import, cst.ImportFrom)) for small in statement.body
    )


def _module_functions(module: cst.Module) -> dict[str, cst.FunctionDef]:
    return {statement.name.value: statement for statement in module.body if isinstance(statement, cst.FunctionDef)}


def _merge(edits: list[NodeEdit]) -> tuple[NodeEdit, ...]:
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
                if not _is_import_line(statement) and "DataLoader" in module.code_for_node(statement)
            ),
            len(body),
        )
        imports = [statement for statement in body[:first_loader] if _is_import_line(statement)]
        if imports:
            self.anchor: cst.CSTNode = imports[-1]
            self.where = "line_after"
        else:
            self.anchor = body[min(first_loader, len(body) - 1)]
            self.where = "line_before"

    def name_for(self, code: str, preferred: tuple[str, ...]) -> tuple[str, bool] | None:
        """A function name for `code` (a def named `{name}`): an existing identical function is reused
        (True), else the first name nothing binds yet (False)."""
        functions = _module_functions(self.context.module)
        resolver, scopes = self.context.resolver, self.context.scopes[:1]
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


def _import_edits(context: FileContext, modules: tuple[str, ...]) -> tuple[dict[str, str], list[NodeEdit]]:
    names: dict[str, str] = {}
    edits: list[NodeEdit] = []
    for module in modules:
        name, edit = import_statement_edit(context, module)
        names[module] = name
        if edit is not None:
            edits.append(edit)
    return names, edits


# --- REP201: datasets whose random generators every worker copies -----------------------------------


@dataclass(frozen=True)
class _Generator:
    """A random generator object a dataset draws from in `__getitem__`/`__iter__`."""

    name: str
    where: str  # "instance" (self.name), "class" (class attribute) or "module" (module global)
    constructor: str


@dataclass(frozen=True)
class _Hazard:
    cls: cst.ClassDef
    generators: tuple[_Generator, ...]
    numpy_global: str | None  # a numpy.random function drawn from in a worker (torch < 1.9 only)


def _rng_constructor(context: FileContext, value: cst.BaseExpression) -> str | None:
    """The generator constructor `value` calls, looking through `torch.Generator().manual_seed(0)`."""
    while isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and value.func.attr.value == "manual_seed":
        value = value.func.value
    if not isinstance(value, cst.Call):
        return None
    return context.matches(value.func, RNG_CONSTRUCTORS)


class _Datasets:
    """Resolves a DataLoader's dataset argument to classes of this module and finds which of them draw
    from generator objects that workers copy. Classes in other modules wait for the program model."""

    def __init__(self, context: FileContext) -> None:
        self.context = context
        self.index = index_for(context)
        self.classes = {statement.name.value: statement for statement in context.module.body if isinstance(statement, cst.ClassDef)}
        self._hazards: dict[str, _Hazard | None] = {}

    # resolving the dataset expression

    def resolve(self, expr: cst.BaseExpression, depth: int = 0) -> list[tuple[cst.ClassDef, bool]]:
        """(class, fixable) pairs: fixable is False behind a ConcatDataset, whose parts a generated
        worker function cannot reach by unwrapping `.dataset`."""
        if depth > 6:
            return []
        found: list[tuple[cst.ClassDef, bool]] = []
        for value, position in bound_values(self.index, expr):
            if isinstance(value, cst.Subscript) and isinstance(value.value, cst.Call):
                value, position = value.value, 0
            if not isinstance(value, cst.Call):
                continue
            wrapper = self.context.matches(value.func, WRAPPERS)
            if wrapper is not None:
                entry = WRAPPERS[wrapper]
                inner = argument(value, str(entry["keyword"]), int(str(entry["position"])))
                if inner is None:
                    continue
                if entry["many"]:
                    elements = inner.value.elements if isinstance(inner.value, (cst.List, cst.Tuple)) else []
                    for element in elements:
                        found.extend((cls, False) for cls, _ in self.resolve(element.value, depth + 1))
                else:
                    found.extend(self.resolve(inner.value, depth + 1))
                continue
            if position is not None:
                continue
            cls = self._class_of(value.func)
            if cls is not None:
                found.append((cls, True))
        return found

    def _class_of(self, func: cst.BaseExpression) -> cst.ClassDef | None:
        if not isinstance(func, cst.Name) or func.value not in self.classes:
            return None
        qualified = f"{self.context.module_name}.{func.value}"
        return self.classes[func.value] if qualified in self.context.qualified_names(func) else None

    # what a class draws from

    def _lineage(self, cls: cst.ClassDef) -> list[cst.ClassDef]:
        lineage: list[cst.ClassDef] = []
        pending = [cls]
        while pending:
            current = pending.pop(0)
            if current in lineage:
                continue
            lineage.append(current)
            for base in current.bases:
                if isinstance(base.value, cst.Name) and base.value.value in self.classes:
                    pending.append(self.classes[base.value.value])
        return lineage

    def hazard(self, cls: cst.ClassDef, old_torch: bool) -> _Hazard | None:
        key = f"{cls.name.value}:{old_torch}"
        if key not in self._hazards:
            self._hazards[key] = self._hazard(cls, old_torch)
        return self._hazards[key]

    def _hazard(self, cls: cst.ClassDef, old_torch: bool) -> _Hazard | None:
        lineage = self._lineage(cls)
        if any("get_worker_info" in self.context.code_for(member) for member in lineage):
            return None  # the dataset handles its workers itself
        methods: dict[str, cst.FunctionDef] = {}
        for member in lineage:
            for statement in member.body.body:
                if isinstance(statement, cst.FunctionDef):
                    methods.setdefault(statement.name.value, statement)
        item_methods = self._reachable(methods)
        if not item_methods:
            return None
        created = self._created(lineage, methods)
        generators = []
        for generator in sorted(created, key=lambda generator: generator.name):
            if self._drawn_from(generator, item_methods):
                generators.append(generator)
        numpy_global = self._numpy_global(item_methods) if old_torch else None
        if not generators and numpy_global is None:
            return None
        return _Hazard(cls, tuple(generators), numpy_global)

    def _reachable(self, methods: dict[str, cst.FunctionDef]) -> list[cst.FunctionDef]:
        """`__getitem__`/`__iter__` and the methods of the class they call through `self.`."""
        reached = [methods[name] for name in ITEM_METHODS if name in methods]
        position = 0
        while position < len(reached) and len(reached) < 32:
            for name in sorted(_self_calls(reached[position])):
                if name in methods and methods[name] not in reached:
                    reached.append(methods[name])
            position += 1
        return reached

    def _created(self, lineage: list[cst.ClassDef], methods: dict[str, cst.FunctionDef]) -> list[_Generator]:
        created: dict[str, _Generator] = {}
        for line in self.context.module.body:
            for name, value in _simple_assignments(line):
                constructor = _rng_constructor(self.context, value)
                if constructor is not None:
                    created.setdefault(f"module:{name}", _Generator(name, "module", constructor))
        for member in lineage:
            for member_line in member.body.body:
                for name, value in _simple_assignments(member_line):
                    constructor = _rng_constructor(self.context, value)
                    if constructor is not None:
                        created.setdefault(f"attr:{name}", _Generator(name, "class", constructor))
            for statement in member.body.body:
                if isinstance(statement, cst.FunctionDef) and statement.name.value == "__init__":
                    for name, value in _self_assignments(statement):
                        constructor = _rng_constructor(self.context, value)
                        if constructor is not None:
                            created[f"attr:{name}"] = _Generator(name, "instance", constructor)
        return list(created.values())

    def _drawn_from(self, generator: _Generator, item_methods: list[cst.FunctionDef]) -> bool:
        """Used in the item methods and not recreated there (a generator built per item or lazily per
        worker is not a copy)."""
        dotted = generator.name if generator.where == "module" else f"self.{generator.name}"
        used = False
        for method in item_methods:
            for node in self.index.occurrences(dotted):
                if not self.index.contains(method, node):
                    continue
                if self.index.role(node) != "use":
                    return False
                used = True
        return used

    def _numpy_global(self, item_methods: list[cst.FunctionDef]) -> str | None:
        for method in item_methods:
            for node in _walk(method):
                if isinstance(node, cst.Call):
                    names = self.context.qualified_names(node.func)
                    drawing = sorted(
                        name
                        for name in names
                        if name.startswith("numpy.random.") and name.count(".") == 2 and name.rpartition(".")[2] not in NUMPY_NON_DRAWING
                    )
                    if drawing:
                        return drawing[0]
        return None


def _walk(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(reversed(current.children))


def _simple_assignments(statement: cst.CSTNode) -> Iterator[tuple[str, cst.BaseExpression]]:
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


def _self_assignments(function: cst.FunctionDef) -> Iterator[tuple[str, cst.BaseExpression]]:
    for node in _walk(function.body):
        if isinstance(node, cst.Assign):
            for target in node.targets:
                dotted = dotted_name(target.target)
                if dotted is not None and dotted.startswith("self.") and dotted.count(".") == 1:
                    yield dotted[5:], node.value
        elif isinstance(node, cst.AnnAssign) and node.value is not None:
            dotted = dotted_name(node.target)
            if dotted is not None and dotted.startswith("self.") and dotted.count(".") == 1:
                yield dotted[5:], node.value


def _self_calls(function: cst.FunctionDef) -> set[str]:
    return {
        node.func.attr.value
        for node in _walk(function.body)
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and dotted_name(node.func.value) == "self"
    }


def _target_version(context: FileContext) -> tuple[int, ...] | None:
    version = context.settings.target_torch_version
    if not version or not re.match(r"^\d+(\.\d+)*$", version):
        return None
    return tuple(int(part) for part in version.split("."))


def _lightning_seeds_workers(context: FileContext) -> bool:
    """`seed_everything(..., workers=True)` in this module: Lightning then installs its own worker
    seeding for the loaders it runs. (The program-wide check waits for the program model.)"""
    code = context.source
    if "seed_everything" not in code or "workers" not in code:
        return False
    for node in _walk(context.module):
        if isinstance(node, cst.Call) and context.callee(node, WORKER_SEEDERS, _SEEDER_SHORT) is not None:
            workers = argument(node, "workers", 1)
            if workers is not None and literal(workers.value) is True:
                return True
    return False


def _snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


@register
class DataLoaderSharedWorkerRng(Rule):
    """A DataLoader with worker processes over a dataset that draws from a generator object created
    once: every worker starts from a copy of the same state, so workers produce the same random numbers
    and results change with `num_workers`."""

    code = "REP201"
    name = "dataloader-shared-worker-rng"
    fix_availability = FixAvailability.SOMETIMES
    required_text = ("DataLoader",)

    def __init__(self, context: FileContext) -> None:
        super().__init__(context)
        self._datasets: _Datasets | None = None
        self._lightning: bool | None = None

    def visit_Call(self, node: cst.Call) -> None:
        if not is_dataloader(self.context, node) or has_star_args(node) or not workers_may_run(node):
            return
        if self._lightning is None:
            self._lightning = _lightning_seeds_workers(self.context)
        if _given(loader_argument(node, "worker_init_fn")) or self._lightning:
            return
        dataset = loader_argument(node, "dataset")
        if dataset is None:
            return
        if self._datasets is None:
            self._datasets = _Datasets(self.context)
        version = _target_version(self.context)
        old_torch = version is not None and version < (1, 9)
        resolved = self._datasets.resolve(dataset.value)
        hazards: dict[str, tuple[_Hazard, bool]] = {}
        for cls, fixable in resolved:
            hazard = self._datasets.hazard(cls, old_torch)
            if hazard is not None:
                previous = hazards.get(cls.name.value)
                hazards[cls.name.value] = (hazard, fixable and (previous is None or previous[1]))
        if not hazards:
            return
        name = min(hazards)
        hazard, fixable = hazards[name]
        if hazard.generators:
            generator = hazard.generators[0]
            label = RNG_CONSTRUCTORS[generator.constructor]["label"]
            owner = generator.name if generator.where == "module" else f"{name}.{generator.name}"
            what = f"a copy of `{owner}` ({label}) in the same state, so the workers draw the same random numbers"
        else:
            what = (
                f"numpy's global RNG in the same state (before torch 1.9 workers did not reseed numpy; "
                f"`{name}` calls `{hazard.numpy_global}`), so the workers draw the same random numbers"
            )
        fix = self._fix(node, hazard) if fixable and len(hazards) == 1 else None
        self.report(
            node,
            f"DataLoader with worker processes and no `worker_init_fn` over `{name}`: every worker gets {what} "
            "and results change with `num_workers`; pass a `worker_init_fn` that reseeds it from "
            "`torch.utils.data.get_worker_info().seed`",
            fix,
        )

    def _fix(self, node: cst.Call, hazard: _Hazard) -> PendingFix | None:
        context = self.context
        newline, indent = context.module.default_newline, context.module.default_indent
        modules = ["torch"]
        if hazard.numpy_global or any(RNG_CONSTRUCTORS[g.constructor].get("module") == "numpy" for g in hazard.generators):
            modules.append("numpy")
        names, import_edits = _import_edits(context, tuple(modules))
        lines = [
            "# Added by repro-lint (REP201): each DataLoader worker starts with a copy of the dataset's random",
            "# generators in the same state; reseed them from the seed PyTorch gives each worker.",
            f"info = {names['torch']}.utils.data.get_worker_info()",
        ]
        attributes = [g for g in hazard.generators if g.where != "module"]
        if attributes:
            lines += [
                "dataset = info.dataset",
                'while hasattr(dataset, "dataset"):  # Subset and random_split wrap the dataset',
                f"{indent}dataset = dataset.dataset",
            ]
        for generator in hazard.generators:
            entry = RNG_CONSTRUCTORS[generator.constructor]
            target = generator.name if generator.where == "module" else f"dataset.{generator.name}"
            seed = "info.seed"
            if entry["reseed"] == "rebind":
                if generator.where == "module":
                    lines.append(f"global {generator.name}")
                value = entry["code"].format(module=names.get("numpy", "numpy"), seed=seed)
                lines.append(f"{target} = {value}")
            else:
                lines.append(entry["code"].format(target=target, seed=seed))
        if hazard.numpy_global:
            lines.append(f"{names['numpy']}.random.seed(info.seed % 2**32)")
        body = newline.join(f"{indent}{line}" for line in lines)
        code = "def {name}(worker_id):" + newline + body.replace("{", "{{").replace("}", "}}") + newline
        placement = WorkerFunction(context)
        chosen = placement.name_for(code, ("seed_worker", f"seed_{_snake(hazard.cls.name.value)}_worker"))
        if chosen is None:
            return None
        function, exists = chosen
        edits = [replace_in_place(context, node, with_keyword(node, "worker_init_fn", function))]
        if not exists:
            edits += [edit for edit in import_edits]
            edits.append(placement.insertion(code.format(name=function)))
        return PendingFix(Applicability.UNSAFE, f"Add `worker_init_fn={function}` reseeding the dataset's generators", _merge(edits))


# --- REP206: the PyTorch notes' worker recipe (opt-in) -----------------------------------------------


@register
class DataLoaderMissingWorkerInit(Rule):
    """The PyTorch reproducibility notes' recipe to the letter: a DataLoader with workers gets a
    `worker_init_fn` that seeds numpy and `random` in each worker."""

    code = "REP206"
    name = "dataloader-missing-worker-init"
    default_enabled = False
    fix_availability = FixAvailability.ALWAYS
    required_text = ("DataLoader",)

    def visit_Call(self, node: cst.Call) -> None:
        if not is_dataloader(self.context, node) or has_star_args(node) or not workers_may_run(node):
            return
        if _given(loader_argument(node, "worker_init_fn")):
            return
        self.report(
            node,
            "DataLoader with worker processes and no `worker_init_fn`: the PyTorch reproducibility notes seed "
            "numpy and `random` in each worker from `torch.initial_seed()`; pass `worker_init_fn=seed_worker`",
            self._fix(node),
        )

    def _fix(self, node: cst.Call) -> PendingFix | None:
        context = self.context
        newline, indent = context.module.default_newline, context.module.default_indent
        # numpy is seeded only where the module already uses it: importing it could fail elsewhere.
        uses_numpy = context.module_alias("numpy") is not None or re.search(r"^\s*(import|from)\s+numpy\b", context.source, re.MULTILINE)
        modules = ("torch", "numpy", "random") if uses_numpy else ("torch", "random")
        names, import_edits = _import_edits(context, modules)
        seeded = "numpy and random" if uses_numpy else "random module"
        lines = [
            "# Added by repro-lint (REP206): the PyTorch reproducibility recipe, seeding each worker's",
            f"# {seeded} from the seed PyTorch gave it.",
            f"worker_seed = {names['torch']}.initial_seed() % 2**32",
        ]
        if uses_numpy:
            lines.append(f"{names['numpy']}.random.seed(worker_seed)")
        lines.append(f"{names['random']}.seed(worker_seed)")
        code = "def {name}(worker_id):" + newline + newline.join(f"{indent}{line}" for line in lines) + newline
        placement = WorkerFunction(context)
        functions = _module_functions(context.module)
        if "seed_worker" in functions:
            function, exists = "seed_worker", True  # the user's own recipe, or one added earlier
        else:
            chosen = placement.name_for(code, ("seed_worker", "seed_dataloader_worker"))
            if chosen is None:
                return None
            function, exists = chosen
        edits = [replace_in_place(context, node, with_keyword(node, "worker_init_fn", function))]
        if not exists:
            edits += import_edits
            edits.append(placement.insertion(code.format(name=function)))
        return PendingFix(Applicability.UNSAFE, f"Add `worker_init_fn={function}` (PyTorch's recipe)", _merge(edits))


# --- REP202: shuffling from torch's global RNG ------------------------------------------------------


@register
class DataLoaderMissingGenerator(Rule):
    """A DataLoader that shuffles without a `generator` of its own draws the order from torch's global
    RNG: the order changes whenever earlier code draws a different amount."""

    code = "REP202"
    name = "dataloader-missing-generator"
    fix_availability = FixAvailability.ALWAYS
    required_text = ("DataLoader",)

    def visit_Call(self, node: cst.Call) -> None:
        if not is_dataloader(self.context, node) or has_star_args(node) or _given(loader_argument(node, "generator")):
            return
        shuffle = loader_argument(node, "shuffle")
        if shuffle is not None and literal(shuffle.value) not in (False, None, 0):
            self._report_shuffle(node, shuffle)
            return
        samplers = self._random_samplers(node)
        if samplers:
            self._report_samplers(node, samplers)

    def _generator(self) -> tuple[str, NodeEdit | None]:
        torch, import_edit = import_statement_edit(self.context, "torch")
        return f"{torch}.Generator().manual_seed({SeedValues(self.context).expression()})", import_edit

    def _report_shuffle(self, node: cst.Call, shuffle: cst.Arg) -> None:
        generator, import_edit = self._generator()
        edits = [replace_in_place(self.context, node, with_keyword(node, "generator", generator))]
        if import_edit is not None:
            edits.append(import_edit)
        value = self.context.code_for(shuffle.value)
        how = "shuffles" if literal(shuffle.value) is True else f"may shuffle (`shuffle={value}`)"
        self.report(
            node,
            f"DataLoader {how} without `generator`: the order is drawn from torch's global RNG, so it changes "
            "whenever code before it draws a different amount (another model, another augmentation); pass "
            "`generator=torch.Generator().manual_seed(seed)`",
            PendingFix(Applicability.SAFE, f"Add `generator={generator}`", tuple(edits)),
        )

    def _random_samplers(self, node: cst.Call) -> list[cst.Call]:
        """Random samplers without their own generator that this loader draws from (directly, or inside
        a BatchSampler)."""
        index = index_for(self.context)
        found: list[cst.Call] = []
        pending = [arg.value for arg in (loader_argument(node, "sampler"), loader_argument(node, "batch_sampler")) if arg is not None]
        depth = 0
        while pending and depth < 8:
            depth += 1
            expr = pending.pop(0)
            for value, position in bound_values(index, expr):
                if position is not None or not isinstance(value, cst.Call):
                    continue
                qualified = self.context.callee(value, (*RANDOM_SAMPLERS, *BATCH_SAMPLERS), _SAMPLER_SHORT)
                if qualified in RANDOM_SAMPLERS:
                    if not has_star_args(value) and argument(value, "generator", RANDOM_SAMPLERS[qualified]) is None and value not in found:
                        found.append(value)
                elif qualified in BATCH_SAMPLERS:
                    inner = argument(value, "sampler", BATCH_SAMPLERS[qualified])
                    if inner is not None:
                        pending.append(inner.value)
        return found

    def _report_samplers(self, node: cst.Call, samplers: list[cst.Call]) -> None:
        generator, import_edit = self._generator()
        edits = [replace_in_place(self.context, sampler, with_keyword(sampler, "generator", generator)) for sampler in samplers]
        if import_edit is not None:
            edits.append(import_edit)
        name = terminal_name(samplers[0].func) or "sampler"
        self.report(
            node,
            f"DataLoader draws its order from a `{name}` without `generator`: the sampler takes its seed from "
            "torch's global RNG, so the order changes whenever code before it draws a different amount; pass "
            f"`generator=torch.Generator().manual_seed(seed)` to the `{name}`",
            PendingFix(Applicability.SAFE, f"Add `generator={generator}` to the sampler", tuple(edits)),
        )


# --- REP205: DistributedSampler without set_epoch -----------------------------------------------------


@register
class DistributedSamplerWithoutSetEpoch(Rule):
    """A shuffling DistributedSampler seeds its shuffle with `seed + epoch`; without `set_epoch` the
    epoch stays 0 and every epoch sees the same order."""

    code = "REP205"
    name = "distributed-sampler-without-set-epoch"
    fix_availability = FixAvailability.SOMETIMES
    required_text = ("DistributedSampler",)

    def visit_Call(self, node: cst.Call) -> None:
        qualified = self.context.callee(node, DISTRIBUTED_SAMPLERS, _DISTRIBUTED_SHORT)
        if qualified is None or has_star_args(node):
            return
        shuffle = argument(node, "shuffle", DISTRIBUTED_SAMPLERS[qualified])
        if shuffle is not None and literal(shuffle.value) is not True:
            return  # shuffle=False, or a value repro-lint cannot read (silent, as the catalog asks)
        index = index_for(self.context)
        holders = _holders(index, node)
        loaders = self._loaders(index, node, holders)
        if not loaders:
            return
        loader_holders = sorted({holder for _, names in loaders for holder in names})
        if self._set_epoch_called(index, holders, loader_holders):
            return
        epoch_loop = self._epoch_loop(index, loaders)
        if epoch_loop is None:
            return
        loop, _ = epoch_loop
        fix = self._fix(index, node, loop, holders, loader_holders)
        self.report(
            node,
            "DistributedSampler shuffles with `seed + epoch`, but `set_epoch` is never called on it: every epoch "
            "sees the same order; call `sampler.set_epoch(epoch)` at the start of each epoch",
            fix,
        )

    def _loaders(self, index: ModuleIndex, sampler: cst.Call, holders: list[str]) -> list[tuple[cst.Call, list[str]]]:
        """The DataLoaders built with this sampler, and the names each is held in."""
        context = self.context
        found: list[tuple[cst.Call, list[str]]] = []
        candidates: list[cst.Call] = []
        parent = index.parent(sampler)
        if isinstance(parent, cst.Arg):
            call = index.parent(parent)
            if isinstance(call, cst.Call) and is_dataloader(context, call) and loader_argument(call, "sampler") is parent:
                candidates.append(call)
        for holder in holders:
            for occurrence in index.occurrences(holder):
                arg = index.parent(occurrence)
                call = index.parent(arg) if arg is not None else None
                if isinstance(arg, cst.Arg) and isinstance(call, cst.Call) and arg.value is occurrence:
                    if is_dataloader(context, call) and loader_argument(call, "sampler") is arg and call not in candidates:
                        candidates.append(call)
        for call in candidates:
            found.append((call, _holders(index, call)))
        return found

    def _set_epoch_called(self, index: ModuleIndex, holders: list[str], loader_holders: list[str]) -> bool:
        """`set_epoch` on the sampler's name, an attribute of that name, `<loader>.sampler`, or any
        `.sampler` of a loader handed around (a helper's parameter): precision first."""
        lasts = {holder.rpartition(".")[2] for holder in holders}
        for occurrence in index.occurrences_of_attribute("set_epoch"):
            receiver = dotted_name(occurrence.value)
            if receiver is None:
                return True
            if receiver in holders or receiver.rpartition(".")[2] in lasts:
                return True
            if receiver in loader_holders or receiver.endswith(".sampler") or receiver.endswith("_sampler"):
                return True
        return False

    def _epoch_loop(self, index: ModuleIndex, loaders: list[tuple[cst.Call, list[str]]]) -> tuple[cst.CSTNode, cst.CSTNode] | None:
        """A loop around an iteration of the loader (or around a call it is handed to), in the same function."""
        sites: list[cst.CSTNode] = []
        for call, names in loaders:
            sites.append(call)
            scope = index.scope(call)
            owner = owning_class(index, call)
            for name in names:
                mine = [
                    node
                    for node in index.occurrences(name)
                    if index.scope(node) is scope or (owner is not None and is_self_attribute(index, node, name) and index.contains(owner, node))
                ]
                if sum(index.role(node) == "bind" for node in mine) > 1:
                    continue  # rebound (`loader = accelerator.prepare(loader)`): the loop may iterate another object
                sites.extend(node for node in mine if index.role(node) == "use")
        for site in sorted(sites, key=index.order):
            batch_loop: cst.CSTNode | None = None
            consumed = False
            for ancestor in index.ancestors(site):
                if isinstance(ancestor, (cst.FunctionDef, cst.Lambda, cst.ClassDef)):
                    break
                if isinstance(ancestor, (cst.Arg, cst.For)):
                    consumed = True
                if isinstance(ancestor, cst.For) and index.contains(ancestor.iter, site):
                    batch_loop = ancestor
                    continue
                if isinstance(ancestor, (cst.For, cst.While)) and consumed and ancestor is not batch_loop:
                    return ancestor, site
        return None

    def _fix(
        self, index: ModuleIndex, sampler: cst.Call, loop: cst.CSTNode, holders: list[str], loader_holders: list[str]
    ) -> PendingFix | None:
        if not (isinstance(loop, cst.For) and isinstance(loop.target, cst.Name) and isinstance(loop.body, cst.IndentedBlock)):
            return None
        scope = index.scope(loop)
        receiver = next((holder for holder in holders if _visible(index, holder, scope, loop)), None)
        optional = receiver is not None and not isinstance(index.parent(sampler), (cst.Assign, cst.AnnAssign))
        if receiver is None:
            # The loader's sampler is only certainly a DistributedSampler when it was built inline.
            loader = next((holder for holder in loader_holders if _visible(index, holder, scope, loop)), None)
            if loader is None or not isinstance(index.parent(sampler), cst.Arg):
                return None
            receiver = f"{loader}.sampler"
        first = loop.body.body[0]
        indent = "".join(indentation(index, first))
        module = self.context.module
        call = f"{receiver}.set_epoch({loop.target.value})"
        if optional:
            # `sampler = DistributedSampler(...) if distributed else None`: only a sampler has set_epoch.
            text = f"{indent}if {receiver} is not None:{module.default_newline}{indent}{module.default_indent}{call}{module.default_newline}"
        else:
            text = f"{indent}{call}{module.default_newline}"
        return PendingFix(Applicability.UNSAFE, f"Call `{call}` at the start of each epoch", (NodeEdit(first, text, "line_before"),))


def _holders(index: ModuleIndex, call: cst.Call) -> list[str]:
    """The names or `self.x` attributes a call's result is assigned to (through `x if c else None`)."""
    node: cst.CSTNode = call
    parent = index.parent(node)
    while isinstance(parent, (cst.IfExp, cst.BooleanOperation)):
        node, parent = parent, index.parent(parent)
    names = []
    if isinstance(parent, cst.Assign) and parent.value is node:
        names = [dotted_name(target.target) for target in parent.targets]
    elif isinstance(parent, (cst.AnnAssign, cst.NamedExpr)) and parent.value is node:
        names = [dotted_name(parent.target)]
    return sorted(name for name in names if name is not None)


def _visible(index: ModuleIndex, holder: str, scope: cst.CSTNode, loop: cst.CSTNode) -> bool:
    """Whether `holder` names the same object at the loop: bound before it in the loop's own function,
    bound at module level (and not in the function), or a `self.x` attribute of the loop's class."""
    if is_self_attribute(index, loop, holder):
        owner = owning_class(index, loop)
        return owner is not None and any(index.contains(owner, node) for node in index.occurrences(holder))
    if "." in holder:
        return False
    bindings = [node for node in index.occurrences(holder) if index.role(node) == "bind"]
    if any(index.scope(node) is scope and index.order(node) < index.order(loop) for node in bindings):
        return True
    return not any(index.scope(node) is scope for node in bindings) and any(isinstance(index.scope(node), cst.Module) for node in bindings)
