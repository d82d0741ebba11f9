"""REP209: a project's own sampler that draws its order from a global RNG, where the DataLoader's
`generator` never reaches it."""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from repro_lint.core.message_text import elide
from repro_lint.facts.context import FileContext
from repro_lint.facts.dataloader_calls import is_dataloader, loader_argument
from repro_lint.facts.edits import keyword, literal
from repro_lint.facts.events import short, tables
from repro_lint.facts.module_index import ModuleIndex, index_for, scope_chain
from repro_lint.facts.names import dotted_name, terminal_name
from repro_lint.facts.traversal import walk
from repro_lint.knowledge import load
from repro_lint.rules.base import Rule, register

SAMPLER_BASES = frozenset(load("dataloader.json")["sampler_bases"])
# A base named so is a sampler too: a project's own base sampler in another module, another library's.
_SAMPLER_SUFFIX = "Sampler"
_ORDER_METHOD = "__iter__"
_RNG_NAMES = {"torch": "torch's", "numpy": "numpy's", "random": "`random`'s"}


def _draws() -> dict[str, str]:
    """Global draws (randomness.json, through the events' table) and the RNG each draws from."""
    return {name: rng for name, (rng, kind) in tables().consumers.items() if kind == "consume"}


DRAWS = _draws()
_DRAW_SHORT = frozenset(name.rpartition(".")[2] for name in DRAWS)


@register
class SamplerGlobalRng(Rule):
    """A sampler of the project's own whose `__iter__` shuffles with `torch.randperm`,
    `random.shuffle` or `np.random.permutation`: the order then moves whenever earlier code draws a
    different amount, and a `generator` given to the DataLoader cannot fix it."""

    code = "REP209"
    name = "sampler-global-rng"
    required_text = (_ORDER_METHOD,)

    def __init__(self, context: FileContext) -> None:
        super().__init__(context)
        self._orders: dict[cst.ClassDef, frozenset[str]] = {}
        self._loader_samplers: frozenset[str] | None = None

    def visit_Call(self, node: cst.Call) -> None:
        if isinstance(node.func, cst.Attribute) and node.func.attr.value not in _DRAW_SHORT:
            return
        draw = self.context.matches(node.func, DRAWS)
        if draw is None or _own_generator(node):
            return
        index = index_for(self.context)
        method = _method(index, node)
        if method is None:
            return
        cls = index.method_class(method)
        if cls is None or method.name.value not in self._ordering_methods(index, cls):
            return
        rng = DRAWS[draw]
        if index.never_runs(node) or _after_exit(index, node, method) or self._reseeded(index, method, node, rng):
            return
        self.report(
            node,
            f"`{short(draw)}` in sampler `{elide(cls.name.value, 20)}` uses {_RNG_NAMES[rng]} global RNG, not the DataLoader's `generator`",
        )

    # --- which classes are samplers, and which of their methods pick the order ----------------------

    def _ordering_methods(self, index: ModuleIndex, cls: cst.ClassDef) -> frozenset[str]:
        """`__iter__` and the methods of the class it calls through `self.`, when `cls` is a sampler."""
        cached = self._orders.get(cls)
        if cached is None:
            cached = self._orders[cls] = _reached_from_iter(cls) if self._is_sampler(index, cls, set()) else frozenset()
        return cached

    def _is_sampler(self, index: ModuleIndex, cls: cst.ClassDef, seen: set[str]) -> bool:
        seen.add(cls.name.value)
        if cls.name.value in self._samplers_given_to_loaders():
            return True
        for base in cls.bases:
            names = self.context.resolver.resolve(base.value, scope_chain(index, cls))
            last = terminal_name(base.value)
            if names & SAMPLER_BASES or (last is not None and last.endswith(_SAMPLER_SUFFIX)):
                return True
            local = _module_class(index, last) if last is not None and last not in seen else None
            if local is not None and self._is_sampler(index, local, seen):
                return True
        return False

    def _samplers_given_to_loaders(self) -> frozenset[str]:
        """Names of the classes whose instances this module passes to a DataLoader as `sampler=` or
        `batch_sampler=`, directly or through a variable."""
        if self._loader_samplers is None:
            finder = _LoaderSamplers(self)
            walk(self.context.module, finder)
            self._loader_samplers = frozenset(finder.found)
        return self._loader_samplers

    def _reseeded(self, index: ModuleIndex, method: cst.FunctionDef, draw: cst.Call, rng: str) -> bool:
        """`np.random.seed(self.seed + self.epoch)` earlier in the same method: the sampler sets the
        global RNG's state itself before drawing, so earlier draws cannot move its order."""
        seeders = tables().seeders
        for call in _calls(method):
            if index.order(call) >= index.order(draw):
                continue
            names = self.context.resolver.resolve(call.func, scope_chain(index, call))
            if any(rng in seeders.get(name, ()) for name in names):
                return True
        return False


class _LoaderSamplers(cst.CSTVisitor):
    def __init__(self, rule: SamplerGlobalRng) -> None:
        self.rule = rule
        self.index = index_for(rule.context)
        self.found: set[str] = set()

    def visit_Call(self, node: cst.Call) -> None:
        if not (isinstance(node.func, (cst.Name, cst.Attribute)) and terminal_name(node.func) == "DataLoader"):
            return
        if not is_dataloader(self.rule.context, node):
            return
        for parameter in ("sampler", "batch_sampler"):
            given = loader_argument(node, parameter)
            if given is not None:
                self.found.update(self._classes(given.value))

    def _classes(self, value: cst.BaseExpression) -> Iterator[str]:
        values = [value]
        name = dotted_name(value)
        if name is not None:
            bound = (self.index.assigned_value(node) for node in self.index.occurrences(name) if self.index.role(node) == "bind")
            values.extend(found[0] for found in bound if found is not None and found[1] is None)
        for candidate in values:
            if isinstance(candidate, cst.Call):
                called = terminal_name(candidate.func)
                if called is not None:
                    yield called


def _own_generator(call: cst.Call) -> bool:
    """`torch.randperm(n, generator=self.generator)` draws from a generator the sampler holds."""
    given = keyword(call, "generator")
    return given is not None and literal(given.value) is not None


def _method(index: ModuleIndex, node: cst.CSTNode) -> cst.FunctionDef | None:
    """The method (a function directly in a class body) whose code, nested functions included, holds `node`."""
    for ancestor in index.ancestors(node):
        if isinstance(ancestor, cst.FunctionDef) and index.method_class(ancestor) is not None:
            return ancestor
    return None


def _module_class(index: ModuleIndex, name: str) -> cst.ClassDef | None:
    return next(
        (statement for statement in index.module.body if isinstance(statement, cst.ClassDef) and statement.name.value == name), None
    )


def _reached_from_iter(cls: cst.ClassDef) -> frozenset[str]:
    methods = {statement.name.value: statement for statement in cls.body.body if isinstance(statement, cst.FunctionDef)}
    if _ORDER_METHOD not in methods:
        return frozenset()
    reached = {_ORDER_METHOD}
    stack = [methods[_ORDER_METHOD]]
    while stack:
        for call in _calls(stack.pop()):
            func = call.func
            if isinstance(func, cst.Attribute) and dotted_name(func.value) == "self" and func.attr.value in methods:
                if func.attr.value not in reached:
                    reached.add(func.attr.value)
                    stack.append(methods[func.attr.value])
    return frozenset(reached)


def _calls(node: cst.CSTNode) -> list[cst.Call]:
    calls: list[cst.Call] = []

    class Collect(cst.CSTVisitor):
        def visit_Call(self, call: cst.Call) -> None:
            calls.append(call)

    walk(node, Collect())
    return calls


def _after_exit(index: ModuleIndex, node: cst.CSTNode, method: cst.FunctionDef) -> bool:
    """Whether `node` follows a `return` or `raise` in one of the blocks that hold it (dead code)."""
    for ancestor in index.ancestors(node):
        if ancestor is method:
            return False
        block = index.parent(ancestor)
        if isinstance(block, cst.IndentedBlock) and isinstance(ancestor, cst.BaseStatement):
            for statement in block.body:
                if statement is ancestor:
                    break
                if isinstance(statement, cst.SimpleStatementLine) and any(isinstance(small, (cst.Return, cst.Raise)) for small in statement.body):
                    return True
    return False
