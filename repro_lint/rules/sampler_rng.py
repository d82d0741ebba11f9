"""REP209: a project's own sampler that draws its order from a global RNG, where the DataLoader's
`generator` never reaches it."""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from repro_lint.core.message_text import elide
from repro_lint.facts.context import FileContext
from repro_lint.facts.dataloader_calls import is_dataloader, loader_argument
from repro_lint.facts.edits import argument, keyword, literal
from repro_lint.facts.events import short, tables
from repro_lint.facts.module_index import ModuleIndex, index_for, scope_chain
from repro_lint.facts.names import dotted_name, terminal_name
from repro_lint.facts.traversal import calls_in, walk
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


@register
class SamplerGlobalRng(Rule):
    """A sampler of the project's own whose `__iter__` shuffles with `torch.randperm`,
    `random.shuffle` or `np.random.permutation` (itself, or in a method or module function it
    calls): the order then moves whenever earlier code draws a different amount, and a `generator`
    given to the DataLoader cannot fix it."""

    code = "REP209"
    name = "sampler-global-rng"
    required_text = (_ORDER_METHOD,)

    def __init__(self, context: FileContext) -> None:
        super().__init__(context)
        self._loader_samplers: frozenset[str] | None = None
        self._reported: set[cst.CSTNode] = set()

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        index = index_for(self.context)
        if not self._is_sampler(index, node, set()):
            return
        for method in _reached_from_iter(node):
            self._check(index, node, method, method, None, None, {method})

    def _check(
        self,
        index: ModuleIndex,
        cls: cst.ClassDef,
        function: cst.FunctionDef,
        method: cst.FunctionDef,
        site: cst.Call | None,
        direct: cst.Call | None,
        seen: set[cst.FunctionDef],
    ) -> None:
        """Report the global draws in `function`, which `method` of the sampler reaches: `site` is
        the call in `method` that leads here, `direct` the call of `function` itself (both None in
        the method itself)."""
        for call in calls_in(function):
            if index.never_runs(call) or _after_exit(index, call, function):
                continue
            names = self.context.resolver.resolve(call.func, scope_chain(index, call))
            draw = min(names & DRAWS.keys(), default=None)
            if draw is None:
                helper = self._module_function(index, names)
                if helper is not None and helper not in seen:
                    seen.add(helper)
                    self._check(index, cls, helper, method, site or call, call, seen)
                continue
            rng = DRAWS[draw]
            if self._reseeded(index, function, call, rng) or (site is not None and self._reseeded(index, method, site, rng)):
                continue
            generator = keyword(call, "generator")
            if generator is not None and literal(generator.value) is not None:
                # `generator=generator`, a parameter defaulting to None: the caller's choice decides.
                parameter = _none_default_parameter(function, generator.value)
                if parameter is None or direct is None or _passes(direct, parameter):
                    continue
                where = direct
            else:
                where = call
            if where in self._reported:
                continue
            self._reported.add(where)
            self.report(
                where,
                f"`{short(draw)}` in sampler `{elide(cls.name.value, 20)}` uses {_RNG_NAMES[rng]} global RNG, not the DataLoader's `generator`",
            )

    def _module_function(self, index: ModuleIndex, names: frozenset[str]) -> cst.FunctionDef | None:
        """The function of this module that a call calls (`sortish_indices(...)`)."""
        prefix = self.context.module_name + "."
        for name in sorted(names):
            if name.startswith(prefix):
                local = name[len(prefix) :]
                found = next(
                    (statement for statement in index.module.body if isinstance(statement, cst.FunctionDef) and statement.name.value == local),
                    None,
                )
                if found is not None:
                    return found
        return None

    # --- which classes are samplers ---------------------------------------------------------------

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

    def _reseeded(self, index: ModuleIndex, function: cst.FunctionDef, before: cst.Call, rng: str) -> bool:
        """`np.random.seed(self.seed + self.epoch)` earlier in the same function: the sampler sets the
        global RNG's state itself before drawing, so earlier draws cannot move its order."""
        seeders = tables().seeders
        for call in calls_in(function):
            if index.order(call) >= index.order(before):
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


def _none_default_parameter(function: cst.FunctionDef, value: cst.BaseExpression) -> tuple[str, int | None] | None:
    """The parameter `value` names when it defaults to None (`generator=None`), with its position."""
    if not isinstance(value, cst.Name):
        return None
    params = function.params
    positional = [*params.posonly_params, *params.params]
    for position, param in enumerate([*positional, *params.kwonly_params]):
        if param.name.value == value.value and param.default is not None and literal(param.default) is None:
            return param.name.value, position if position < len(positional) else None
    return None


def _passes(site: cst.Call, parameter: tuple[str, int | None]) -> bool:
    """Whether the call gives the parameter a value other than None (`**kwargs` may)."""
    name, position = parameter
    if any(arg.star == "**" for arg in site.args):
        return True
    given = argument(site, name, position)
    return given is not None and literal(given.value) is not None


def _module_class(index: ModuleIndex, name: str) -> cst.ClassDef | None:
    return next(
        (statement for statement in index.module.body if isinstance(statement, cst.ClassDef) and statement.name.value == name), None
    )


def _reached_from_iter(cls: cst.ClassDef) -> list[cst.FunctionDef]:
    """`__iter__` and the methods of the class it calls through `self.`, transitively."""
    methods = {statement.name.value: statement for statement in cls.body.body if isinstance(statement, cst.FunctionDef)}
    if _ORDER_METHOD not in methods:
        return []
    reached = [methods[_ORDER_METHOD]]
    for method in reached:
        for call in calls_in(method):
            func = call.func
            if isinstance(func, cst.Attribute) and dotted_name(func.value) == "self" and func.attr.value in methods:
                if methods[func.attr.value] not in reached:
                    reached.append(methods[func.attr.value])
    return reached



def _after_exit(index: ModuleIndex, node: cst.CSTNode, function: cst.FunctionDef) -> bool:
    """Whether `node` follows a `return` or `raise` in one of the blocks that hold it (dead code)."""
    for ancestor in index.ancestors(node):
        if ancestor is function:
            return False
        block = index.parent(ancestor)
        if isinstance(block, cst.IndentedBlock) and isinstance(ancestor, cst.BaseStatement):
            for statement in block.body:
                if statement is ancestor:
                    break
                if isinstance(statement, cst.SimpleStatementLine) and any(isinstance(small, (cst.Return, cst.Raise)) for small in statement.body):
                    return True
    return False
