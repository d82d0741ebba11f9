"""REP201, REP202, REP205, REP206: DataLoaders whose order or worker randomness is not under the
user's seed."""

from __future__ import annotations

import re
from collections.abc import Iterator

import libcst as cst

from repro_lint.facts.context import NodeEdit, PendingFix
from repro_lint.facts.module_index import ModuleIndex, bound_values, index_for, indentation, is_self_attribute, owning_class, replace_in_place, scope_chain
from repro_lint.facts.dataloader_calls import BATCH_SAMPLERS, DISTRIBUTED_SAMPLERS, RANDOM_SAMPLERS, RNG_CONSTRUCTORS, WorkerFunction, given, import_edits, is_dataloader, loader_argument, merge, module_functions, snake, workers_may_run
from repro_lint.facts.dataset_records import WORKER_NAME, Insertion, LoaderSite, WorkerFixPoint, WorkerFunctionPoint
from repro_lint.facts.edits import argument, has_star_args, literal, with_keyword
from repro_lint.facts.context import import_statement_edit
from repro_lint.facts.module_facts import ModuleFacts
from repro_lint.core.message_text import elide
from repro_lint.facts.names import dotted_name, terminal_name
from repro_lint.program.model import ProjectModel
from repro_lint.core.findings import Applicability, Edit, Finding, Fix, FixAvailability
from repro_lint.rules.base import ProgramRule, Rule, register
from repro_lint.facts.seed_values import SeedValues
from repro_lint.core.source import Position
from repro_lint.program.worker_hazards import Hazard, WorkerHazards

_SAMPLER_SHORT = frozenset(name.rpartition(".")[2] for name in (*RANDOM_SAMPLERS, *BATCH_SAMPLERS))
_DISTRIBUTED_SHORT = frozenset({"DistributedSampler"})
# How a REP205 message says that the loader is handed to another module's function; such findings
# are kept only in programs where nothing calls `set_epoch`.
HANDED_NOTE = "given the loader"


# --- REP201: datasets whose random generators every worker copies -----------------------------------


@register
class DataLoaderSharedWorkerRng(ProgramRule):
    """A DataLoader with worker processes over a dataset that draws from a generator object created
    once: every worker starts from a copy of the same state, so workers produce the same random numbers
    and results change with `num_workers`.

    A program rule: the dataset class is often defined, or built by a factory, in another module, so
    the finding and its fix (in the DataLoader's module) come from the modules' dataset facts joined
    through the program model."""

    code = "REP201"
    name = "dataloader-shared-worker-rng"
    fix_availability = FixAvailability.SOMETIMES

    def check(self, project: ProjectModel) -> Iterator[Finding]:
        hazards = WorkerHazards(project)
        for facts in project.modules.values():
            datasets = facts.datasets
            if datasets is None or not datasets.loaders or hazards.workers_seeded(facts.module):
                continue
            old_torch = hazards.old_torch(facts)
            for site in datasets.loaders:
                found = hazards.hazards(site, facts.module, old_torch)
                if found:
                    yield self._finding(project, facts, site, found)

    def _finding(self, project: ProjectModel, facts: ModuleFacts, site: LoaderSite, found: dict[str, tuple[Hazard, bool]]) -> Finding:
        qualname = min(found, key=lambda name: (name.rpartition(".")[2], name))
        hazard, fixable = found[qualname]
        name = hazard.class_name
        if hazard.generators:
            generator = hazard.generators[0]
            label = RNG_CONSTRUCTORS[generator.constructor]["label"]
            elsewhere = "" if hazard.module == facts.module else f" in {project.modules[hazard.module].path}"
            what = f"`{elide(generator.owner(name), 32)}` ({label}{elsewhere})"
        else:
            what = f"numpy's global RNG (torch < 1.9, via `{elide(name)}`)"
        fix = None
        if fixable and len(found) == 1 and site.fix is not None:
            fix = _worker_fix(site.fix, hazard, facts.module)
        return Finding(
            self.code,
            self.name,
            f"DataLoader workers copy {what} and draw the same numbers",
            facts.path,
            site.start,
            site.end,
            fix,
        )


def _worker_fix(fix: WorkerFixPoint, hazard: Hazard, module: str) -> Fix | None:
    """Add `worker_init_fn=seed_worker` and a module-level `seed_worker` reseeding each generator the
    workers copy. A global of another module cannot be rebound from here: no fix then."""
    if any(generator.where == "module" and generator.module != module for generator in hazard.generators):
        return None
    point = fix.function
    newline, indent = point.newline, point.indent
    names = {name: alias for name, alias, _, _ in point.imports}
    needed = ["torch"]
    if hazard.numpy_global or any(RNG_CONSTRUCTORS[g.constructor].get("module") == "numpy" for g in hazard.generators):
        needed.append("numpy")
    lines = [
        "# Added by repro-lint (REP201): each DataLoader worker starts with a copy of the dataset's random",
        "# generators in the same state; reseed them from the seed PyTorch gives each worker.",
        f"info = {names['torch']}.utils.data.get_worker_info()",
    ]
    if any(generator.where != "module" for generator in hazard.generators):
        lines += [
            "dataset = info.dataset",
            'while hasattr(dataset, "dataset"):  # Subset and random_split wrap the dataset',
            f"{indent}dataset = dataset.dataset",
        ]
    for generator in hazard.generators:
        entry = RNG_CONSTRUCTORS[generator.constructor]
        target = generator.path if generator.where == "module" else f"dataset.{generator.path}"
        if entry["reseed"] == "rebind":
            if generator.where == "module":
                lines.append(f"global {generator.path}")
            lines.append(f"{target} = {entry['code'].format(module=names['numpy'], seed='info.seed')}")
        else:
            lines.append(entry["code"].format(target=target, seed="info.seed"))
    if hazard.numpy_global:
        lines.append(f"{names['numpy']}.random.seed(info.seed % 2**32)")
    body = "".join(f"{indent}{line}{newline}" for line in lines)
    chosen = _worker_name(point, body, ("seed_worker", f"seed_{snake(hazard.class_name)}_worker"))
    if chosen is None:
        return None
    function, exists = chosen
    call = Edit(fix.call.start, fix.call.end, fix.call.content.replace(WORKER_NAME, function))
    inserted: dict[Insertion, str] = {}
    if not exists:
        for module_name, _, at, line in point.imports:
            if module_name in needed and at is not None:
                inserted[at] = inserted.get(at, "") + line
        code = f"def {function}(worker_id):{newline}{body}"
        text = f"{newline}{newline}{code}" if point.after_anchor else f"{code}{newline}{newline}"
        inserted[point.at] = inserted.get(point.at, "") + text
    edits = [call, *(_inserted(point, at, text) for at, text in inserted.items())]
    return Fix(Applicability.UNSAFE, f"Add `worker_init_fn={function}` reseeding the dataset's generators", tuple(edits))


def _worker_name(point: WorkerFunctionPoint, body: str, preferred: tuple[str, ...]) -> tuple[str, bool] | None:
    """A name for the worker function: an existing identical function is reused (True), else the
    first name nothing binds yet (False)."""
    existing = dict(point.existing)
    for name in preferred:
        if name in existing:
            if existing[name].strip() == f"def {name}(worker_id):{point.newline}{body}".strip():
                return name, True
            continue
        if name not in point.bound:
            return name, False
    return None


def _inserted(point: WorkerFunctionPoint, at: Insertion, text: str) -> Edit:
    if at.at_end:
        return Edit(point.end, point.end, point.newline + text.removesuffix(point.newline))
    position = Position(at.line, 0)
    return Edit(position, position, text)


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
        if given(loader_argument(node, "worker_init_fn")):
            return
        self.report(
            node,
            "DataLoader with worker processes and no `worker_init_fn` to seed numpy and `random` in each worker",
            self._fix(node),
        )

    def _fix(self, node: cst.Call) -> PendingFix | None:
        context = self.context
        newline, indent = context.module.default_newline, context.module.default_indent
        # numpy is seeded only where the module already uses it: importing it could fail elsewhere.
        uses_numpy = context.module_alias("numpy") is not None or re.search(r"^\s*(import|from)\s+numpy\b", context.source, re.MULTILINE)
        modules = ("torch", "numpy", "random") if uses_numpy else ("torch", "random")
        names, imports = import_edits(context, modules)
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
        functions = module_functions(context.module)
        if "seed_worker" in functions:
            function, exists = "seed_worker", True  # the user's own recipe, or one added earlier
        else:
            chosen = placement.name_for(code, ("seed_worker", "seed_dataloader_worker"))
            if chosen is None:
                return None
            function, exists = chosen
        edits = [replace_in_place(context, node, with_keyword(node, "worker_init_fn", function))]
        if not exists:
            edits += imports
            edits.append(placement.insertion(code.format(name=function)))
        return PendingFix(Applicability.UNSAFE, f"Add `worker_init_fn={function}` (PyTorch's recipe)", merge(edits))


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
        if not is_dataloader(self.context, node) or has_star_args(node) or given(loader_argument(node, "generator")):
            return
        shuffle = loader_argument(node, "shuffle")
        if shuffle is not None and literal(shuffle.value) not in (False, None, 0):
            self._report_shuffle(node, shuffle)
            return
        samplers = self._random_samplers(node)
        if samplers:
            self._report_samplers(node, samplers)

    def _generator(self) -> tuple[str, list[NodeEdit]]:
        """A seeded generator, and the edits adding the `import torch` and seed constant it needs."""
        torch, import_edit = import_statement_edit(self.context, "torch")
        seed, constant = SeedValues(self.context).for_fix()
        return f"{torch}.Generator().manual_seed({seed})", [edit for edit in (import_edit, constant) if edit is not None]

    def _report_shuffle(self, node: cst.Call, shuffle: cst.Arg) -> None:
        generator, added = self._generator()
        edits = [replace_in_place(self.context, node, with_keyword(node, "generator", generator)), *added]
        value = self.context.code_for(shuffle.value)
        how = "shuffles" if literal(shuffle.value) is True else f"may shuffle (`shuffle={elide(value)}`)"
        self.report(
            node,
            f"DataLoader {how} without `generator`: earlier torch draws change its order",
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
        generator, added = self._generator()
        edits = [replace_in_place(self.context, sampler, with_keyword(sampler, "generator", generator)) for sampler in samplers]
        edits.extend(added)
        name = terminal_name(samplers[0].func) or "sampler"
        self.report(
            node,
            f"DataLoader's `{elide(name)}` has no `generator`: earlier torch draws change its order",
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
        loop, site, parameter = epoch_loop
        fix = self._fix(index, node, loop, holders, loader_holders) if parameter is None else self._fix(index, node, loop, [], [parameter])
        helper = self._imported_helper(index, site)
        where = f" (nor in `{elide(helper, 22)}`, {HANDED_NOTE})" if helper else ""
        self.report(
            node,
            f"DistributedSampler without `set_epoch`{where}: every epoch repeats the same order",
            fix,
        )

    @classmethod
    def program_condition_for(cls, finding: Finding) -> tuple[str, ...]:
        # The loader goes to a function of another module, which may call set_epoch itself.
        return ("epochs_unset",) if HANDED_NOTE in finding.message else ()

    def _imported_helper(self, index: ModuleIndex, site: cst.CSTNode) -> str | None:
        """The imported function the loader is handed to in the epoch loop (`train_one_epoch(loader)`
        with `from engine import train_one_epoch`), as the code names it."""
        arg = index.parent(site)
        call = index.parent(arg) if arg is not None else None
        if not (isinstance(arg, cst.Arg) and isinstance(call, cst.Call)):
            return None
        if any(isinstance(loop, cst.For) and index.contains(loop.iter, call) for loop in index.ancestors(call)):
            return None  # `for batch in tqdm(loader)`: a wrapper the batch loop iterates
        names = self.context.resolver.resolve(call.func, scope_chain(index, call))
        own = (self.context.module_name + ".", "builtins.")
        if names and not any(name.startswith(own) for name in names):
            return dotted_name(call.func)
        return None

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

    def _epoch_loop(
        self, index: ModuleIndex, loaders: list[tuple[cst.Call, list[str]]]
    ) -> tuple[cst.CSTNode, cst.CSTNode, str | None] | None:
        """A loop around an iteration of the loader (or around a call it is handed to) in the same
        function, or in a function of this module the loader is handed to (then with the parameter
        that holds the loader there)."""
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
        pending: list[tuple[cst.CSTNode, str | None]] = [(site, None) for site in sorted(sites, key=index.order)]
        visited: set[tuple[cst.FunctionDef, str]] = set()
        while pending:
            handed: list[tuple[cst.CSTNode, str | None]] = []
            for site, parameter in pending:
                loop = _loop_around(index, site)
                if loop is not None:
                    return loop, site, parameter
                callee = self._local_callee(index, site)
                if callee is not None and callee not in visited and len(visited) < 8:
                    visited.add(callee)
                    handed.extend((use, callee[1]) for use in _parameter_uses(index, *callee))
            pending = handed
        return None

    def _local_callee(self, index: ModuleIndex, site: cst.CSTNode) -> tuple[cst.FunctionDef, str] | None:
        """The function of this module that `site` is handed to as an argument (`train(loader)`,
        `self.fit(loader)`), and the parameter that receives it."""
        arg = index.parent(site)
        call = index.parent(arg) if arg is not None else None
        if not (isinstance(arg, cst.Arg) and arg.value is site and isinstance(call, cst.Call)):
            return None
        function: cst.FunctionDef | None = None
        if isinstance(call.func, cst.Name) and not index.binds_locally(index.scope(call), call.func.value):
            function = module_functions(self.context.module).get(call.func.value)
            skip = 0
        elif isinstance(call.func, cst.Attribute) and dotted_name(call.func.value) == "self":
            owner = owning_class(index, call)
            methods = [statement for statement in owner.body.body if isinstance(statement, cst.FunctionDef)] if owner else []
            function = next((method for method in methods if method.name.value == call.func.attr.value), None)
            skip = 1
        if function is None or any(other.star for other in call.args):
            return None
        parameters = list(function.params.params)[skip:]
        if arg.keyword is not None:
            named = [*parameters, *function.params.kwonly_params]
            found = next((param for param in named if param.name.value == arg.keyword.value), None)
        else:
            position = [other for other in call.args if other.keyword is None].index(arg)
            found = parameters[position] if position < len(parameters) else None
        return (function, found.name.value) if found is not None else None

    def _fix(
        self, index: ModuleIndex, sampler: cst.Call, loop: cst.CSTNode, holders: list[str], loader_holders: list[str]
    ) -> PendingFix | None:
        if not (isinstance(loop, cst.For) and isinstance(loop.target, cst.Name) and isinstance(loop.body, cst.IndentedBlock)):
            return None
        scope = index.scope(loop)
        receiver = next((holder for holder in holders if _visible(index, holder, scope, loop)), None)
        optional = receiver is not None and not isinstance(index.parent(sampler), (cst.Assign, cst.AnnAssign))
        if receiver is None:
            # The loader's sampler is certainly a DistributedSampler only when it was built inline or
            # assigned without a condition.
            loader = next((holder for holder in loader_holders if _visible(index, holder, scope, loop)), None)
            if loader is None or not isinstance(index.parent(sampler), (cst.Arg, cst.Assign, cst.AnnAssign)):
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


def _loop_around(index: ModuleIndex, site: cst.CSTNode) -> cst.CSTNode | None:
    """A loop in the site's own function around an iteration of it, or around a call it is handed to."""
    batch_loop: cst.CSTNode | None = None
    consumed = False
    for ancestor in index.ancestors(site):
        if isinstance(ancestor, (cst.FunctionDef, cst.Lambda, cst.ClassDef)):
            return None
        if isinstance(ancestor, (cst.Arg, cst.For)):
            consumed = True
        if isinstance(ancestor, cst.For) and index.contains(ancestor.iter, site):
            batch_loop = ancestor
            continue
        if isinstance(ancestor, (cst.For, cst.While)) and consumed and ancestor is not batch_loop:
            return ancestor
    return None


def _parameter_uses(index: ModuleIndex, function: cst.FunctionDef, parameter: str) -> list[cst.CSTNode]:
    """Where a function reads a parameter it never rebinds."""
    mine = [node for node in index.occurrences(parameter) if index.scope(node) is function]
    if sum(index.role(node) == "bind" for node in mine) > 1:
        return []
    return [node for node in mine if index.role(node) == "use"]


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
