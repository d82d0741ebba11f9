"""Settings a function's caller decides ("Libraries applying their caller's choice", catalog).

A DataLoader built as `DataLoader(ds, shuffle=shuffle)`, or under `if deterministic: ... else:
DataLoader(ds, shuffle=True)`, inside a function whose parameter decides the setting, applies its
caller's choice: the finding belongs at the project call that passes the offending value (or leaves
the parameter's offending default). This module finds such parameters while a module is parsed, and
records what the project pass needs to judge the call sites of other modules: each function's
deciding parameters (`ChoiceFact`) and the arguments of the module's calls (`ArgumentsFact`).
Values are recorded as the `repr` of their literal (`"True"`, `"0"`, `"None"`), `UNKNOWN` for
anything else, and `FORWARDED` for a parameter of the calling function (a caller's choice again).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass

import libcst as cst

from repro_lint.core.records import pickled_by_constructor
from repro_lint.core.source import Line, Position
from repro_lint.facts.edits import literal
from repro_lint.facts.module_index import target_names
from repro_lint.facts.names import dotted_name
from repro_lint.facts.traversal import calls_in, walk

UNKNOWN = "?"
FORWARDED = "<parameter>"
_FLAG_DEFAULTS = frozenset({"True", "False"})
_CHOOSING_CLASS = "DataLoader"
_DEFINED = re.compile(r"\bdef(?:\s|\\\r?\n)+(\w+)")
# Calls into these never reach a project function: their arguments are not recorded.
_LIBRARY_ROOTS = frozenset({"builtins", "torch", "numpy", "os", "sys", "math", "re", "json", "logging", "random", "time"})


@pickled_by_constructor
@dataclass(frozen=True, slots=True)
class Choice:
    """The parameter deciding a setting: its position among the arguments a call may pass by
    position (None: keyword only), its default (None: none), and `when`: None where the setting takes
    the parameter's value, else whether the setting offends when the parameter is true (the statement
    sits under `if parameter:` or `if not parameter:`)."""

    parameter: str
    position: int | None
    default: str | None
    when: bool | None


@pickled_by_constructor
@dataclass(frozen=True, slots=True)
class ChoiceFact:
    """A DataLoader `setting` ("shuffle", "num_workers") in `function` that its caller decides."""

    function: str
    setting: str
    choice: Choice
    line: Line


@pickled_by_constructor(shared=("targets", "positional", "keywords"))
@dataclass(frozen=True, slots=True)
class ArgumentsFact:
    """A call's arguments as values (see the module's docstring): what the project pass reads to
    know what a call site passes to a parameter."""

    targets: tuple[str, ...]
    start: Position
    end: Position
    positional: tuple[str, ...]
    keywords: tuple[tuple[str, str], ...]
    unpacked: bool  # `*args` or `**kwargs`: any parameter may be given

    def may_reach(self, names: Collection[str]) -> bool:
        """Whether the call may reach a function whose last name is among `names` (see `chosen_names`)."""
        return any(target.rpartition(".")[2] in names for target in self.targets)

    def gives(self, choice: Choice) -> bool:
        """Whether the call names the choice's parameter (by keyword or position)."""
        named = any(keyword == choice.parameter for keyword, _ in self.keywords)
        return named or (choice.position is not None and choice.position < len(self.positional))

    def value_for(self, choice: Choice) -> str | None:
        """What the call passes to the choice's parameter: its value, or the default when it passes
        nothing; None where there is no default or unpacked arguments may give it (`**kwargs`
        silences the rules, catalog)."""
        for keyword, value in self.keywords:
            if keyword == choice.parameter:
                return value
        if choice.position is not None and choice.position < len(self.positional):
            return self.positional[choice.position]
        return None if self.unpacked else choice.default


def may_apply_callers_choice(text: str, names: frozenset[str]) -> bool:
    """Whether a module's code (`text`) may define a function named in `names` whose DataLoader
    applies its caller's choice: only a call of `torch.utils.data.DataLoader` holds one
    (`FactsCollector.visit_Call`), in a function the module defines, and the code names both."""
    return _CHOOSING_CLASS in text and not names.isdisjoint(_DEFINED.findall(text))


def chosen_names(choices: Iterable[ChoiceFact]) -> frozenset[str]:
    """The last names of the functions whose setting a caller decides: the project pass reads the
    arguments of a call only where it may reach one (`ArgumentsFact.may_reach`)."""
    return frozenset(choice.function.rpartition(".")[2] for choice in choices)


def offends(value: str | None, choice: Choice, by_value: Callable[[str], bool]) -> bool:
    """Whether the value a call gives the parameter makes the setting offend: `by_value` judges the
    setting's own value; under a test of the parameter, only a literal whose truth picks the branch."""
    if value is None or value == FORWARDED:
        return False
    if choice.when is None:
        return by_value(value)
    if value == UNKNOWN:
        return False
    return bool(ast.literal_eval(value)) is choice.when


def value_of(expression: cst.BaseExpression, function: cst.FunctionDef | None) -> str:
    found = literal(expression)
    if found is not ...:
        return repr(found)
    if isinstance(expression, cst.Name) and function is not None and _parameter(function, expression.value) is not None:
        return FORWARDED
    return UNKNOWN


def callers_choice(
    node: cst.Call,
    ancestors: list[cst.CSTNode],
    value: cst.BaseExpression | None,
    offending: Callable[[cst.Call], bool],
) -> Choice | None:
    """The parameter of the innermost function that decides whether `node` offends: the setting's
    `value` is that parameter, or `node` sits under `if parameter:` (or `if not parameter:`) and the
    other branch builds nothing that `offending` judges so (where both branches offend, the parameter
    decides nothing). `ancestors` run from the module down to `node`."""
    function_at = next((at for at in range(len(ancestors) - 1, -1, -1) if isinstance(ancestors[at], cst.FunctionDef)), None)
    if function_at is None:
        return None
    function = ancestors[function_at]
    assert isinstance(function, cst.FunctionDef)
    if isinstance(value, cst.Name):
        found = _parameter(function, value.value)
        if found is not None and not _rebinds(function, value.value):
            return Choice(value.value, found[0], found[1], None)
    for at in range(len(ancestors) - 2, function_at, -1):
        branch, inner = ancestors[at], ancestors[at + 1]
        if not isinstance(branch, cst.If):
            continue
        tested, negated = _tested_name(branch.test)
        found = _parameter(function, tested) if tested is not None else None
        # Only a flag (`deterministic=False`) is a choice: `if X:` on data decides nothing of the kind.
        if tested is None or found is None or found[1] not in _FLAG_DEFAULTS or _rebinds(function, tested):
            continue
        in_body = inner is branch.body
        other = branch.orelse if in_body else branch.body
        if other is not None and any(offending(call) for call in calls_in(other)):
            return None
        return Choice(tested, found[0], found[1], in_body != negated)
    return None


def arguments_fact(node: cst.Call, targets: tuple[str, ...], function: cst.FunctionDef | None, start: Position, end: Position) -> ArgumentsFact | None:
    """The call's arguments, for a call that may reach a project function."""
    if not targets or all(target.partition(".")[0] in _LIBRARY_ROOTS for target in targets):
        return None
    if dotted_name(node.func) is None:
        return None
    return ArgumentsFact(targets, start, end, *_arguments(node, function))


def _arguments(node: cst.Call, function: cst.FunctionDef | None) -> tuple[tuple[str, ...], tuple[tuple[str, str], ...], bool]:
    """A call's positional values, keyword values, and whether it unpacks `*args`/`**kwargs`."""
    positional: list[str] = []
    keywords: list[tuple[str, str]] = []
    unpacked = False
    for arg in node.args:
        if arg.star:
            unpacked = True
        elif arg.keyword is not None:
            keywords.append((arg.keyword.value, value_of(arg.value, function)))
        else:
            positional.append(value_of(arg.value, function))
    return tuple(positional), tuple(keywords), unpacked


def taken_for(
    call: cst.Call, function: cst.FunctionDef, ancestors: list[cst.CSTNode], caller: cst.FunctionDef | None, unknown_taken: bool = False
) -> bool:
    """Whether `call` of `function` reaches the statement below `ancestors` (from `function` down)
    as far as its parameters decide: each `if parameter:` (or `if not parameter:`) around it is taken
    for the literal the call passes or leaves as default. A value repro-lint cannot read takes the
    branch only with `unknown_taken` (else precision first: the statement counts as not reached)."""
    arguments = ArgumentsFact((), Position(0, 0), Position(0, 0), *_arguments(call, caller))
    for at in range(len(ancestors) - 1):
        branch, inner = ancestors[at], ancestors[at + 1]
        if not isinstance(branch, cst.If):
            continue
        tested, negated = _tested_name(branch.test)
        found = _parameter(function, tested) if tested is not None else None
        if tested is None or found is None or _rebinds(function, tested):
            continue
        value = arguments.value_for(Choice(tested, found[0], found[1], None))
        if value is None or value in (UNKNOWN, FORWARDED):
            if not unknown_taken:
                return False
        elif bool(ast.literal_eval(value)) is not ((inner is branch.body) != negated):
            return False
    return True


def passes_true(call: cst.Call, function: cst.FunctionDef, parameter: str, caller: cst.FunctionDef | None) -> bool:
    """Whether `call` gives `function`'s `parameter`, never rebound there, a literally true value
    (or leaves a literally true default)."""
    found = _parameter(function, parameter)
    if found is None or _rebinds(function, parameter):
        return False
    value = ArgumentsFact((), Position(0, 0), Position(0, 0), *_arguments(call, caller)).value_for(Choice(parameter, *found, None))
    return value not in (None, UNKNOWN, FORWARDED) and bool(ast.literal_eval(value))


def _parameter(function: cst.FunctionDef, name: str) -> tuple[int | None, str | None] | None:
    """A parameter's position among those a call passes by position (past `self`/`cls` of a
    method), and its default, or None when `function` has no parameter of that name."""
    params = function.params
    positional = [*params.posonly_params, *params.params]
    skip = 1 if positional and positional[0].name.value in ("self", "cls") else 0
    for position, param in enumerate(positional):
        if param.name.value == name:
            return (position - skip if position >= skip else None), _default(param)
    for param in params.kwonly_params:
        if param.name.value == name:
            return None, _default(param)
    return None


def _default(param: cst.Param) -> str | None:
    if param.default is None:
        return None
    found = literal(param.default)
    return repr(found) if found is not ... else UNKNOWN


def _tested_name(test: cst.BaseExpression) -> tuple[str | None, bool]:
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not) and isinstance(test.expression, cst.Name):
        return test.expression.value, True
    if isinstance(test, cst.Name):
        return test.value, False
    return None, False


def _rebinds(function: cst.FunctionDef, name: str) -> bool:
    """Whether the function assigns the parameter (`shuffle = shuffle and not distributed`): its
    value is then no longer only the caller's."""

    class Binds(cst.CSTVisitor):
        found = False

        def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
            self.found |= name in target_names(node.target)

        def visit_AugAssign(self, node: cst.AugAssign) -> None:
            self.found |= isinstance(node.target, cst.Name) and node.target.value == name

    binds = Binds()
    walk(function.body, binds)
    return binds.found
