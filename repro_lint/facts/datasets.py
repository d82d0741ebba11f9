"""Reading a module's dataset facts (dataset_records.py) from its tree: its classes and the
generators they hold, the functions that return datasets, its DataLoaders with the edit each needs,
and its Lightning worker seeding. Names are followed to their values through the module index, and
a module whose text speaks of no dataset, loader or seeding is not read at all.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import TypeVar

import libcst as cst

from repro_lint.core.findings import Edit
from repro_lint.core.source import LineIndex, Position
from repro_lint.facts.context import FileContext, NodeEdit
from repro_lint.facts.dataloader_calls import (
    CALL_METHODS,
    ITEM_METHODS,
    NUMPY_NON_DRAWING,
    WRAPPERS,
    WorkerFunction,
    given,
    import_edits,
    is_dataloader,
    loader_argument,
    module_functions,
    rng_constructor,
    seeds_workers,
    simple_assignments,
    workers_may_run,
)
from repro_lint.facts.dataset_records import (
    MAIN_BLOCK,
    MODULE_LEVEL,
    WORKER_NAME,
    DatasetFacts,
    DatasetRef,
    Insertion,
    LoaderSite,
    Member,
    MethodUse,
    RandomClass,
    RngAttribute,
    WorkerFixPoint,
    WorkerFunctionPoint,
)
from repro_lint.facts.edits import argument, has_star_args, with_keyword
from repro_lint.facts.module_index import ModuleIndex, bound_values, code_in_place, index_for, scope_chain, values_key
from repro_lint.facts.names import ScopeNode, dotted_name, is_main_guard
from repro_lint.facts.positions import Positions
from repro_lint.facts.traversal import OwnScopeVisitor, walk

_T = TypeVar("_T")
_Node = TypeVar("_Node", bound=cst.CSTNode)
_METHODS_OF_INTEREST = frozenset({"__init__", *ITEM_METHODS, *CALL_METHODS})
# Texts without these hold no dataset, loader or Lightning seeding; classes without an item method
# matter only when their code speaks of random generators.
_WORDS = ("DataLoader", "Dataset", "dataset", "__getitem__", "__iter__", "__call__", "seed_everything")
_RNG_WORDS = ("rng", "random", "generator")


def dataset_facts(context: FileContext, positions: Positions) -> DatasetFacts | None:
    """The module's dataset facts, or None when it has none: one state, whether or not its text has a
    word that may name one, so that a word added or removed (`dataset=` in a call) changes no fact."""
    text = context.source
    if not any(word in text for word in _WORDS):
        return None
    facts = _Collector(context, positions).facts()
    return facts if facts != DatasetFacts() else None


class _Collector:
    def __init__(self, context: FileContext, positions: Positions) -> None:
        self.context = context
        self.positions = positions
        self.lines = LineIndex(context.source)
        self._index: ModuleIndex | None = None
        self._function: WorkerFunctionPoint | None = None
        # `_refs` of names and `self.x` attributes, by `values_key`: loaders in many methods may
        # take one attribute bound in many places.
        self._refs_of: dict[tuple[str, int], list[DatasetRef]] = {}
        self.module_generators = self._module_generators()

    @property
    def index(self) -> ModuleIndex:
        """Built on first need: most modules hold no class or loader that needs it."""
        if self._index is None:
            self._index = index_for(self.context)
        return self._index

    def facts(self) -> DatasetFacts:
        classes, factories = [], []
        for node, qualname, scopes in _definitions(self.context.module.body, self.context.module_name, [self.context.module]):
            if isinstance(node, cst.ClassDef):
                found = self._class(node, qualname, scopes)
                if found is not None:
                    classes.append(found)
            else:
                refs = self._returned(node, [*scopes, node])
                if refs:
                    factories.append((qualname, refs))
        loaders, seeding = [], []
        text = self.context.source
        if "DataLoader" in text or "seed_everything" in text:
            for node, scopes, scope_name in _CallScanner(self.context).calls:
                if self._within(node, is_dataloader, scopes):
                    site = self._loader(node, scopes)
                    if site is not None:
                        loaders.append(site)
                elif self._within(node, seeds_workers, scopes):
                    seeding.append(scope_name)
        return DatasetFacts(
            tuple(self.module_generators),
            tuple(classes),
            tuple(sorted(factories)),
            tuple(loaders),
            tuple(sorted(set(seeding))),
        )

    def _text(self, node: cst.CSTNode) -> str:
        start, end = self.positions.range(node)
        return self.lines.text[self.lines.offset(start) : self.lines.offset(end)]

    # names, resolved in the scope where they are written

    def _scopes(self, node: cst.CSTNode) -> list[ScopeNode]:
        return scope_chain(self.index, node)

    def _names(self, node: cst.BaseExpression, scopes: list[ScopeNode] | None = None) -> tuple[str, ...]:
        return tuple(sorted(self.context.resolver.resolve(node, scopes if scopes is not None else self._scopes(node))))

    def _within(self, node: _Node, read: Callable[[FileContext, _Node], _T], scopes: list[ScopeNode] | None = None) -> _T:
        """Run a reader written for the traversal (it resolves names in `context.scopes`) on a node
        found after it, in the node's own scopes (given, or found through the module index)."""
        saved = self.context.scopes
        self.context.scopes = scopes if scopes is not None else self._scopes(node)
        try:
            return read(self.context, node)
        finally:
            self.context.scopes = saved

    # generators and classes

    def _module_generators(self) -> list[RngAttribute]:
        found: dict[str, RngAttribute] = {}
        for statement in self.context.module.body:
            for name, value in simple_assignments(statement):
                constructor = self._constructor(value, [self.context.module])
                if constructor is not None:
                    found.setdefault(name, RngAttribute(name, "module", constructor))
        return [found[name] for name in sorted(found)]

    def _constructor(self, value: cst.BaseExpression, scopes: list[ScopeNode] | None = None) -> str | None:
        return self._within(value, rng_constructor, scopes)

    def _class(self, node: cst.ClassDef, qualname: str, outer: list[ScopeNode]) -> RandomClass | None:
        """Facts of a dataset (it has item methods) or of a class that may hold a generator."""
        methods = [statement for statement in node.body.body if isinstance(statement, cst.FunctionDef)]
        names = {method.name.value for method in methods}
        if not names & _METHODS_OF_INTEREST:
            return None
        text = self._text(node)
        if not names & set(ITEM_METHODS) and not any(word in text.lower() for word in _RNG_WORDS):
            return None
        scopes: list[ScopeNode] = [*outer, node]
        generators: dict[str, RngAttribute] = {}
        for statement in node.body.body:
            for name, value in simple_assignments(statement):
                constructor = self._constructor(value, scopes)
                if constructor is not None:
                    generators.setdefault(name, RngAttribute(name, "class", constructor))
        module_names = frozenset(generator.name for generator in self.module_generators)
        readers = {method: _MethodReader(method, module_names) for method in methods}
        parameters: list[tuple[str, str, int]] = []
        members: list[Member] = []
        init = next((method for method in methods if method.name.value == "__init__"), None)
        if init is not None:
            arguments = [param.name.value for param in init.params.params][1:]
            for attribute, value in readers[init].assignments:
                constructor = self._constructor(value, [*scopes, init])
                if constructor is not None:
                    generators[attribute] = RngAttribute(attribute, "instance", constructor)
                elif isinstance(value, cst.Name) and value.value in arguments:
                    parameters.append((attribute, value.value, arguments.index(value.value)))
                elif isinstance(value, cst.Call):
                    member = self._member(attribute, value, [*scopes, init])
                    if member is not None:
                        members.append(member)
        return RandomClass(
            qualname=qualname,
            bases=tuple(sorted({name for base in node.bases for name in self._names(base.value, outer)})),
            generators=tuple(generators[name] for name in sorted(generators)),
            parameters=tuple(sorted(parameters)),
            members=tuple(members),
            methods=tuple(self._method(method, readers[method], [*scopes, method]) for method in methods),
            handles_workers="get_worker_info" in text,
        )

    def _member(self, attribute: str, value: cst.Call, scopes: list[ScopeNode]) -> Member | None:
        targets = self._names(value.func, scopes)
        if not targets:
            return None
        handed: list[tuple[str, int, str]] = []
        position = 0
        for arg in value.args:
            if arg.star:
                return None
            # A generator built in the call, or (through the module index) in a variable.
            values = [arg.value] if isinstance(arg.value, cst.Call) else [bound for bound, _ in bound_values(self.index, arg.value)]
            constructor = next((found for bound in values if (found := self._constructor(bound, scopes))), None)
            if constructor is not None:
                handed.append((arg.keyword.value if arg.keyword else "", -1 if arg.keyword else position, constructor))
            if arg.keyword is None:
                position += 1
        return Member(attribute, targets, tuple(handed))

    def _method(self, method: cst.FunctionDef, reader: _MethodReader, scopes: list[ScopeNode]) -> MethodUse:
        numpy_global = [
            name
            for func in reader.functions
            for name in self._names(func, scopes)
            if name.startswith("numpy.random.") and name.count(".") == 2 and name.rpartition(".")[2] not in NUMPY_NON_DRAWING
        ]
        reads = {name for name, node in reader.occurrences if node not in reader.targets}
        binds = {name for name, node in reader.occurrences if node in reader.targets}
        return MethodUse(
            method.name.value,
            tuple(sorted(reader.calls)),
            tuple(sorted(reads)),
            tuple(sorted(binds)),
            min(numpy_global) if numpy_global else None,
        )

    # datasets

    def _refs(self, expr: cst.BaseExpression, scopes: list[ScopeNode]) -> list[DatasetRef]:
        """What `expr` (written in `scopes`) may be built by, through variables, attributes, and
        wrappers such as Subset, however many (each wrapper call once: `ds = Subset(ds, idx)` wraps
        itself). Not to be changed: a name's refs are given to each of its reads alike."""
        key = values_key(self.index, expr)
        if key is not None and key in self._refs_of:
            return self._refs_of[key]
        found: list[DatasetRef] = []
        unwrapped: set[int] = set()
        # A stack of what is found and what is left to follow, in reverse: refs come out in the
        # order the code writes them.
        pending: list[DatasetRef | tuple[cst.BaseExpression, list[ScopeNode], bool]] = [(expr, scopes, True)]
        while pending:
            item = pending.pop()
            if isinstance(item, DatasetRef):
                found.append(item)
            else:
                pending.extend(reversed(self._ref_steps(*item, unwrapped)))
        refs = list(dict.fromkeys(found))
        if key is not None:
            self._refs_of[key] = refs
        return refs

    def _ref_steps(
        self, expr: cst.BaseExpression, scopes: list[ScopeNode], fixable: bool, unwrapped: set[int]
    ) -> list[DatasetRef | tuple[cst.BaseExpression, list[ScopeNode], bool]]:
        """What `expr` is built by directly, and the datasets inside the wrappers it may be."""
        steps: list[DatasetRef | tuple[cst.BaseExpression, list[ScopeNode], bool]] = []
        # Only names need the module index, to be followed to their values (written elsewhere).
        direct = not isinstance(expr, (cst.Name, cst.Attribute, cst.IfExp, cst.BooleanOperation))
        for value, position in [(expr, None)] if direct else bound_values(self.index, expr):
            if isinstance(value, cst.Subscript) and isinstance(value.value, cst.Call):
                value, position = value.value, 0
            if not isinstance(value, cst.Call):
                continue
            where = scopes if direct else self._scopes(value)
            targets = self._names(value.func, where)
            wrapper = min(set(targets) & set(WRAPPERS), default=None)
            if wrapper is not None:
                entry = WRAPPERS[wrapper]
                inner = argument(value, str(entry["keyword"]), int(str(entry["position"])))
                if inner is None or id(value) in unwrapped:
                    continue
                unwrapped.add(id(value))
                if entry["many"]:
                    elements = inner.value.elements if isinstance(inner.value, (cst.List, cst.Tuple)) else []
                    steps.extend((element.value, where, False) for element in elements)
                else:
                    steps.append((inner.value, where, fixable))
            elif position is None and targets:
                steps.append(DatasetRef(targets, fixable))
        return steps

    def _returned(self, function: cst.FunctionDef, scopes: list[ScopeNode]) -> tuple[DatasetRef, ...]:
        """What a function returns that may be a dataset it builds (a factory); only for modules
        and functions that speak of datasets, to keep the facts small."""
        if "dataset" not in function.name.value.lower() and "Dataset" not in self._text(function):
            return ()
        refs: list[DatasetRef] = []
        for value in _Returns(function).values:
            refs.extend(ref for ref in self._refs(value, scopes) if ref not in refs)
        return tuple(refs)

    def _loader(self, node: cst.Call, scopes: list[ScopeNode]) -> LoaderSite | None:
        if has_star_args(node) or not workers_may_run(node) or given(loader_argument(node, "worker_init_fn")):
            return None
        dataset = loader_argument(node, "dataset")
        refs = tuple(self._refs(dataset.value, scopes)) if dataset is not None else ()
        if not refs:
            return None
        start, end = self.positions.range(node)
        return LoaderSite(start, end, refs, self._fix_point(node, start, end))

    def _fix_point(self, node: cst.Call, start: Position, end: Position) -> WorkerFixPoint:
        old = self.lines.text[self.lines.offset(start) : self.lines.offset(end)]
        new = code_in_place(self.index, node, with_keyword(node, "worker_init_fn", WORKER_NAME))
        return WorkerFixPoint(_shrunk(self.lines, start, old, new), self._function_point())

    def _function_point(self) -> WorkerFunctionPoint:
        """Where the worker function goes in this module: the same for all its loaders."""
        if self._function is None:
            context, lines = self.context, self.lines
            # The worker function is module-level code: torch and numpy are named as the module names them.
            names, edits = self._within(context.module, lambda context, _: import_edits(context, ("torch", "numpy")))
            imports = []
            for module in ("torch", "numpy"):
                edit = next((edit for edit in edits if edit.content.strip() == f"import {module}"), None)
                imports.append((module, names[module], self._insertion(edit) if edit else None, edit.content if edit else ""))
            placement = WorkerFunction(context)
            existing = {name: context.code_for(function) for name, function in module_functions(context.module).items() if name.startswith("seed_")}
            self._function = WorkerFunctionPoint(
                imports=tuple(imports),
                at=self._insertion(placement.insertion("")),
                after_anchor=placement.where == "line_after",
                end=lines.position(len(lines.text)),
                newline=context.module.default_newline,
                indent=context.module.default_indent,
                existing=tuple(sorted(existing.items())),
                bound=tuple(sorted(name for name in _top_level_names(context.module) if name.startswith("seed_") and name not in existing)),
            )
        return self._function

    def _insertion(self, edit: NodeEdit) -> Insertion:
        start, end = self.positions.range(edit.node)
        if edit.where == "line_before":
            return Insertion(start.line)
        if end.line < self.lines.line_count:
            return Insertion(end.line + 1)
        return Insertion(0, at_end=True)


class _MethodReader(cst.CSTVisitor):
    """One method's `self.x` occurrences and the module generator globals it names, the nodes that
    bind something (assignment, loop, `with`, parameter, `del`), `self.x(...)` calls, called
    functions, and `self.x = value` assignments."""

    def __init__(self, method: cst.FunctionDef, module_names: frozenset[str]) -> None:
        self.module_names = module_names
        self.occurrences: list[tuple[str, cst.CSTNode]] = []
        self.targets: set[cst.CSTNode] = set()
        self.calls: set[str] = set()
        self.functions: list[cst.BaseExpression] = []
        self.assignments: list[tuple[str, cst.BaseExpression]] = []
        self._not_names: set[cst.CSTNode] = set()  # attribute and keyword names
        walk(method.body, self)

    def _bind(self, target: cst.CSTNode) -> None:
        if isinstance(target, (cst.Tuple, cst.List)):
            for element in target.elements:
                self._bind(element.value)
        elif isinstance(target, cst.StarredElement):
            self._bind(target.value)
        else:
            self.targets.add(target)

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            self._bind(target.target)
            self._assigned(target.target, node.value)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self._bind(node.target)
        if node.value is not None:
            self._assigned(node.target, node.value)

    def _assigned(self, target: cst.BaseExpression, value: cst.BaseExpression) -> None:
        dotted = dotted_name(target)
        if dotted is not None and dotted.startswith("self.") and dotted.count(".") == 1:
            self.assignments.append((dotted[5:], value))

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._bind(node.target)

    def visit_For(self, node: cst.For) -> None:
        self._bind(node.target)

    def visit_CompFor(self, node: cst.CompFor) -> None:
        self._bind(node.target)

    def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
        self._bind(node.target)

    def visit_AsName(self, node: cst.AsName) -> None:
        self._bind(node.name)

    def visit_Del(self, node: cst.Del) -> None:
        self._bind(node.target)

    def visit_Param(self, node: cst.Param) -> None:
        self._bind(node.name)

    def visit_Arg(self, node: cst.Arg) -> None:
        if node.keyword is not None:
            self._not_names.add(node.keyword)

    def visit_Attribute(self, node: cst.Attribute) -> None:
        self._not_names.add(node.attr)
        if isinstance(node.value, cst.Name) and node.value.value == "self":
            self.occurrences.append((node.attr.value, node))

    def visit_Name(self, node: cst.Name) -> None:
        if node.value in self.module_names and node not in self._not_names:
            self.occurrences.append((node.value, node))

    def visit_Call(self, node: cst.Call) -> None:
        self.functions.append(node.func)
        if isinstance(node.func, cst.Attribute) and isinstance(node.func.value, cst.Name) and node.func.value.value == "self":
            self.calls.add(node.func.attr.value)


class _CallScanner(cst.CSTVisitor):
    """Calls that may be a DataLoader or Lightning's `seed_everything` (a bare name may be an alias),
    with the scopes they are written in and the name of the code they belong to: a function's
    qualname as the facts collector gives it, MODULE_LEVEL or MAIN_BLOCK."""

    _SHORT = frozenset({"DataLoader", "seed_everything"})

    def __init__(self, context: FileContext) -> None:
        self.module = context.module
        self.scopes: list[ScopeNode] = [context.module]
        self.names: list[str] = [MODULE_LEVEL]
        self.classes: list[str] = [context.module_name]
        self.calls: list[tuple[cst.Call, list[ScopeNode], str]] = []
        walk(context.module, self)

    def visit_If(self, node: cst.If) -> None:
        if len(self.scopes) == 1 and self.names[-1] == MODULE_LEVEL and is_main_guard(node):
            self.names.append(MAIN_BLOCK)

    def leave_If(self, original_node: cst.If) -> None:
        if self.names[-1] == MAIN_BLOCK and len(self.scopes) == 1 and is_main_guard(original_node):
            self.names.pop()

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self.scopes.append(node)
        self.classes.append(node.name.value)

    def leave_ClassDef(self, original_node: cst.ClassDef) -> None:
        self.scopes.pop()
        self.classes.pop()

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        outer = self.names[-1]
        inside_function = outer not in (MODULE_LEVEL, MAIN_BLOCK)
        self.names.append(f"{outer}.<locals>.{node.name.value}" if inside_function else ".".join([*self.classes, node.name.value]))
        self.scopes.append(node)

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self.names.pop()
        self.scopes.pop()

    def visit_Lambda(self, node: cst.Lambda) -> None:
        self.scopes.append(node)

    def leave_Lambda(self, original_node: cst.Lambda) -> None:
        self.scopes.pop()

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if isinstance(func, cst.Name) or isinstance(func, cst.Attribute) and func.attr.value in self._SHORT:
            self.calls.append((node, list(self.scopes), self.names[-1]))


class _Returns(OwnScopeVisitor):
    """The values a function returns (not those of functions nested in it)."""

    def __init__(self, function: cst.FunctionDef) -> None:
        self.values: list[cst.BaseExpression] = []
        walk(function.body, self)

    def visit_Return(self, node: cst.Return) -> None:
        if node.value is not None:
            self.values.append(node.value)


def _definitions(
    body: Sequence[cst.CSTNode], prefix: str, scopes: list[ScopeNode]
) -> Iterator[tuple[cst.ClassDef | cst.FunctionDef, str, list[ScopeNode]]]:
    """Classes (nested ones too) and the functions of the module and class bodies, with the
    qualnames the facts collector gives them and the scopes around them."""
    for statement in body:
        if isinstance(statement, (cst.ClassDef, cst.FunctionDef)):
            qualname = f"{prefix}.{statement.name.value}"
            yield statement, qualname, scopes
            if isinstance(statement, cst.ClassDef) and isinstance(statement.body, cst.IndentedBlock):
                yield from _definitions(statement.body.body, qualname, [*scopes, statement])


def _top_level_names(module: cst.Module) -> set[str]:
    names: set[str] = set()
    for statement in module.body:
        if isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
            names.add(statement.name.value)
        for name, _ in simple_assignments(statement):
            names.add(name)
        if isinstance(statement, cst.SimpleStatementLine):
            for small in statement.body:
                if isinstance(small, (cst.Import, cst.ImportFrom)) and not isinstance(small.names, cst.ImportStar):
                    for alias in small.names:
                        bound = alias.asname.name if alias.asname else alias.name
                        name = dotted_name(bound)  # type: ignore[arg-type]
                        if name:
                            names.add(name.partition(".")[0])
    return names


def _shrunk(lines: LineIndex, start: Position, old: str, new: str) -> Edit:
    """Replace `old` (the text at `start`) by `new`, as the smallest edit that still holds the whole
    worker name, so other fixes of the same call rarely overlap."""
    keep_before = new.index(WORKER_NAME)
    keep_after = len(new) - keep_before - len(WORKER_NAME)
    prefix = 0
    while prefix < min(len(old), keep_before) and old[prefix] == new[prefix]:
        prefix += 1
    suffix = 0
    while suffix < min(len(old) - prefix, keep_after) and old[-1 - suffix] == new[-1 - suffix]:
        suffix += 1
    begin = lines.offset(start)
    return Edit(lines.position(begin + prefix), lines.position(begin + len(old) - suffix), new[prefix : len(new) - suffix])
