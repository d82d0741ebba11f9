"""Per-module facts: the small, picklable record of a module that the project pass works from.

The project pass never re-reads or re-parses a module: what program-level rules need to know about
other modules (imports, functions, calls, entry-point signs) is collected here, in the same traversal
that runs the local rules.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import libcst as cst

from repro_lint.context import FileContext
from repro_lint.names import dotted_name, import_from_module

# Method calls that mean "this code trains": `loss.backward()`, `optimizer.step()`,
# `trainer.fit(model)`. Receivers are matched on their name, since their types are unknown statically.
_ANY_RECEIVER_TRAINING_METHODS = frozenset({"backward"})
_NAMED_RECEIVER_TRAINING_METHODS = {"step": "optim", "fit": "trainer", "train": "trainer"}

LineOf = Callable[[cst.CSTNode], int]


@dataclass(frozen=True)
class CallFact:
    """One call: the qualified names its callee may denote, or the method name of `obj.method()`."""

    targets: tuple[str, ...]
    method: str | None
    line: int


@dataclass(frozen=True)
class FunctionFacts:
    qualname: str
    line: int
    calls: tuple[CallFact, ...]
    trains: bool


@dataclass(frozen=True)
class ModuleFacts:
    module: str
    path: str
    is_package: bool
    imports: tuple[str, ...]
    bindings: tuple[tuple[str, tuple[str, ...]], ...]
    star_imports: tuple[str, ...]
    main_guard_line: int | None
    module_calls: tuple[CallFact, ...]
    trains_at_module_level: bool
    functions: tuple[FunctionFacts, ...]

    def binding(self, name: str) -> tuple[str, ...]:
        return dict(self.bindings).get(name, ())


def is_main_guard(node: cst.If) -> bool:
    test = node.test
    if not isinstance(test, cst.Comparison) or len(test.comparisons) != 1:
        return False
    target = test.comparisons[0]
    if not isinstance(target.operator, cst.Equal):
        return False
    sides = {_name_or_string(test.left), _name_or_string(target.comparator)}
    return sides == {"__name__", "'__main__'"}


def _name_or_string(node: cst.BaseExpression) -> str | None:
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.SimpleString):
        return "'" + node.evaluated_value + "'" if isinstance(node.evaluated_value, str) else None
    return None


def is_training_call(node: cst.Call) -> bool:
    if not isinstance(node.func, cst.Attribute):
        return False
    method = node.func.attr.value
    if method in _ANY_RECEIVER_TRAINING_METHODS:
        return True
    hint = _NAMED_RECEIVER_TRAINING_METHODS.get(method)
    if hint is None:
        return False
    receivers = [node.func.value, *(arg.value for arg in node.args)]
    return any(hint in (dotted_name(receiver) or "").lower() for receiver in receivers)


@dataclass
class _FunctionState:
    qualname: str
    node: cst.FunctionDef
    calls: list[tuple[cst.Call, tuple[str, ...], str | None]] = field(default_factory=list)
    trains: bool = False


class FactsCollector:
    """Batched-visitor part that records a module's facts while the rules run."""

    def __init__(self, context: FileContext, path: str, is_package: bool) -> None:
        self.context = context
        self.path = path
        self.is_package = is_package
        self._imports: set[str] = set()
        self._stars: set[str] = set()
        self._main_guard: cst.If | None = None
        self._module_calls: list[tuple[cst.Call, tuple[str, ...], str | None]] = []
        self._trains_at_module_level = False
        self._functions: list[_FunctionState] = []
        self._open: list[_FunctionState] = []
        self._class_names: list[str] = []

    def visit_Import(self, node: cst.Import) -> None:
        for alias in node.names:
            name = dotted_name(alias.name)
            if name:
                self._imports.add(name)

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        module = import_from_module(node, self.context.package)
        if module is None:
            return
        self._imports.add(module)
        if isinstance(node.names, cst.ImportStar):
            self._stars.add(module)
            return
        # `from pkg import name` may import the submodule pkg.name.
        for alias in node.names:
            name = dotted_name(alias.name)
            if name:
                self._imports.add(f"{module}.{name}")

    def visit_If(self, node: cst.If) -> None:
        if self._main_guard is None and len(self.context.scopes) == 1 and is_main_guard(node):
            self._main_guard = node

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self._class_names.append(node.name.value)

    def leave_ClassDef(self, original_node: cst.ClassDef) -> None:
        self._class_names.pop()

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        if self._open:
            qualname = f"{self._open[-1].qualname}.<locals>.{node.name.value}"
        else:
            qualname = ".".join([self.context.module_name, *self._class_names, node.name.value])
        state = _FunctionState(qualname, node)
        self._functions.append(state)
        self._open.append(state)

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self._open.pop()

    def visit_Call(self, node: cst.Call) -> None:
        targets = tuple(sorted(self.context.qualified_names(node.func)))
        method = node.func.attr.value if isinstance(node.func, cst.Attribute) else None
        trains = is_training_call(node)
        if self._open:
            self._open[-1].calls.append((node, targets, method))
            self._open[-1].trains |= trains
        elif not any(isinstance(scope, (cst.ClassDef, cst.Lambda)) for scope in self.context.scopes):
            self._module_calls.append((node, targets, method))
            self._trains_at_module_level |= trains

    def facts(self, line_of: LineOf) -> ModuleFacts:
        def calls(raw: list[tuple[cst.Call, tuple[str, ...], str | None]]) -> tuple[CallFact, ...]:
            return tuple(CallFact(targets, method, line_of(node)) for node, targets, method in raw)

        bindings = self.context.resolver.module_bindings()
        return ModuleFacts(
            module=self.context.module_name,
            path=self.path,
            is_package=self.is_package,
            imports=tuple(sorted(self._imports)),
            bindings=tuple(sorted((name, tuple(sorted(targets))) for name, targets in bindings.items())),
            star_imports=tuple(sorted(self._stars)),
            main_guard_line=line_of(self._main_guard) if self._main_guard is not None else None,
            module_calls=calls(self._module_calls),
            trains_at_module_level=self._trains_at_module_level,
            functions=tuple(
                FunctionFacts(state.qualname, line_of(state.node), calls(state.calls), state.trains)
                for state in self._functions
            ),
        )

