"""REP201, REP202, REP206: DataLoaders whose order or worker randomness is not under the user's seed
(REP205, the distributed sampler's epoch, is in sampler_epochs.py)."""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator
from typing import ClassVar

import libcst as cst

from repro_lint.core.findings import Applicability, Edit, Finding, Fix, FixAvailability
from repro_lint.core.message_text import elide, place
from repro_lint.core.source import Position
from repro_lint.facts.context import NodeEdit, PendingFix, import_statement_edit
from repro_lint.facts.dataloader_calls import (
    BATCH_SAMPLERS,
    RANDOM_SAMPLERS,
    RNG_CONSTRUCTORS,
    WorkerFunction,
    given,
    import_edits,
    is_dataloader,
    loader_argument,
    loader_choice,
    may_be_on,
    merge,
    module_functions,
    shuffles_without_generator,
    snake,
    workers_without_init,
)
from repro_lint.facts.callers_choice import UNKNOWN, Choice, taken_for
from repro_lint.facts.dataset_records import WORKER_NAME, Insertion, LoaderSite, WorkerFixPoint, WorkerFunctionPoint
from repro_lint.facts.edits import argument, has_star_args, literal, with_keyword
from repro_lint.facts.module_facts import ARGUMENTS, LOADERS, ModuleFacts
from repro_lint.facts.module_index import ModuleIndex, bound_values, index_for, replace_in_place, scope_chain
from repro_lint.facts.names import terminal_name
from repro_lint.facts.seed_values import SeedValues
from repro_lint.program.callers_choice import choosing_calls
from repro_lint.program.model import ProjectModel
from repro_lint.program.worker_hazards import Hazard, WorkerHazards
from repro_lint.rules.base import ProgramRule, Rule, register

_SAMPLER_SHORT = frozenset(name.rpartition(".")[2] for name in (*RANDOM_SAMPLERS, *BATCH_SAMPLERS))
# How a REP202/REP206 message says that a parameter of the enclosing function decides the setting.
# Such a finding is kept only where its module is a program's entry; elsewhere the finding goes to
# the project call that chooses the offending value ("Libraries applying their caller's choice").
CALLERS_NOTE = "its caller's choice"
_CHOSEN_CONDITION = ("entry",)


def _chosen(choice: Choice | None) -> str:
    return f" (`{choice.parameter}` is {CALLERS_NOTE})" if choice is not None else ""


class _AppliesCallersChoice(Rule):
    """A DataLoader rule whose setting a library function may take from its callers: the finding at
    such a loader is kept only where its module is a program's entry, and the project calls choosing
    the offending value are reported instead."""

    checks_project = True
    # A call is judged against the functions it runs, whichever program makes it.
    sites = frozenset()
    imported_sites = frozenset({ARGUMENTS})
    # The DataLoader setting, and what the loader then does wrong (the end of the message).
    choice_setting: ClassVar[str]
    choice_offence: ClassVar[str]

    @classmethod
    def program_condition_for(cls, finding: Finding) -> tuple[str, ...]:
        return _CHOSEN_CONDITION if CALLERS_NOTE in finding.message else ()

    @classmethod
    def check_project(cls, project: ProjectModel) -> Iterator[Finding]:
        for found in choosing_calls(project, cls.choice_setting, may_be_on):
            choice = found.choice.choice
            function = found.choice.function.rpartition(".")[2]
            here = found.caller.path
            loader = place(found.library.path, found.choice.line, here)
            if found.value == UNKNOWN:
                how = f"passes `{choice.parameter}` a value that may be on"
            elif found.passed:
                how = f"passes `{choice.parameter}={elide(found.value or '')}`"
            else:
                how = f"leaves `{choice.parameter}` at its default `{elide(choice.default or '')}`"
            yield Finding(cls.code, cls.name, f"`{elide(function)}(...)` {how}: its DataLoader ({loader}) {cls.choice_offence}", here, found.call.start, found.call.end)


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
    sites = frozenset({LOADERS})
    imported_sites = frozenset()
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
class DataLoaderMissingWorkerInit(_AppliesCallersChoice):
    """The PyTorch reproducibility notes' recipe to the letter: a DataLoader with workers gets a
    `worker_init_fn` that seeds numpy and `random` in each worker."""

    code = "REP206"
    name = "dataloader-missing-worker-init"
    default_enabled = False
    fix_availability = FixAvailability.ALWAYS
    required_text = ("DataLoader",)
    choice_setting = "num_workers"
    choice_offence = "runs worker processes without `worker_init_fn`"

    def visit_Call(self, node: cst.Call) -> None:
        if not workers_without_init(self.context, node):
            return
        choice = loader_choice(self.context, node, "num_workers")
        self.report(
            node,
            f"DataLoader with worker processes and no `worker_init_fn` to seed numpy and `random` in each worker{_chosen(choice)}",
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
class DataLoaderMissingGenerator(_AppliesCallersChoice):
    """A DataLoader that shuffles without a `generator` of its own draws the order from torch's global
    RNG: the order changes whenever earlier code draws a different amount."""

    code = "REP202"
    name = "dataloader-missing-generator"
    fix_availability = FixAvailability.ALWAYS
    required_text = ("DataLoader",)
    choice_setting = "shuffle"
    choice_offence = "shuffles without `generator`: earlier torch draws change its order"

    def visit_Call(self, node: cst.Call) -> None:
        if not is_dataloader(self.context, node) or has_star_args(node) or given(loader_argument(node, "generator")):
            return
        shuffle = loader_argument(node, "shuffle")
        if shuffle is not None and shuffles_without_generator(self.context, node):
            self._report_shuffle(node, shuffle, loader_choice(self.context, node, "shuffle"))
            return
        samplers = self._random_samplers(node)
        if samplers:
            self._report_samplers(node, samplers)

    def _generator(self) -> tuple[str, list[NodeEdit]]:
        """A seeded generator, and the edits adding the `import torch` and seed constant it needs."""
        torch, import_edit = import_statement_edit(self.context, "torch")
        seed, constant = SeedValues(self.context).for_fix()
        return f"{torch}.Generator().manual_seed({seed})", [edit for edit in (import_edit, constant) if edit is not None]

    def _report_shuffle(self, node: cst.Call, shuffle: cst.Arg, choice: Choice | None) -> None:
        generator, added = self._generator()
        edits = [replace_in_place(self.context, node, with_keyword(node, "generator", generator)), *added]
        value = self.context.code_for(shuffle.value)
        how = "shuffles" if literal(shuffle.value) is True else f"may shuffle (`shuffle={elide(value)}`)"
        self.report(
            node,
            f"DataLoader {how} without `generator`: earlier torch draws change its order{_chosen(choice)}",
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
                if qualified is None:
                    pending.extend(self._returned(index, value))
                elif qualified in RANDOM_SAMPLERS:
                    if not has_star_args(value) and argument(value, "generator", RANDOM_SAMPLERS[qualified]) is None and value not in found:
                        found.append(value)
                elif qualified in BATCH_SAMPLERS:
                    inner = argument(value, "sampler", BATCH_SAMPLERS[qualified])
                    if inner is not None:
                        pending.append(inner.value)
        return found

    def _returned(self, index: ModuleIndex, call: cst.Call) -> list[cst.BaseExpression]:
        """What a function of this module returns to this call (`data_sampler(ds, shuffle=True)`),
        leaving out returns under a test of a parameter that the call's literal or default does not
        take (`if shuffle: return RandomSampler(ds)`)."""
        if not isinstance(call.func, cst.Name):
            return []
        function = module_functions(self.context.module).get(call.func.value)
        names = self.context.resolver.resolve(call.func, scope_chain(index, call))
        if function is None or f"{self.context.module_name}.{function.name.value}" not in names:
            return []
        caller = index.scope(call)
        caller = caller if isinstance(caller, cst.FunctionDef) else None
        found = []
        for returned in _returns(function):
            chain = list(itertools.takewhile(lambda node: node is not function, index.ancestors(returned)))
            if returned.value is not None and taken_for(call, function, [function, *reversed(chain)], caller):
                found.append(returned.value)
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


def _returns(function: cst.FunctionDef) -> list[cst.Return]:
    """The function's own return statements (not those of functions or lambdas nested in it)."""
    found: list[cst.Return] = []

    class Collect(cst.CSTVisitor):
        def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
            return node is function

        def visit_Return(self, node: cst.Return) -> None:
            found.append(node)

    function.visit(Collect())
    return found
