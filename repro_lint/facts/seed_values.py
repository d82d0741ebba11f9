"""The seed value a fix should use at a given place: one the user already has, else `0`.

Reusing the user's seed (`args.seed`, `cfg.seed`, `SEED`, a `seed` parameter) keeps one knob for the
whole run. A value is only reused when it is certainly bound there and cannot be None by default:
`torch.Generator().manual_seed(None)` would raise, and a name assigned only further down would raise
UnboundLocalError (or NameError) where the fix puts it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence

import libcst as cst

from repro_lint.facts.context import FileContext, NodeEdit
from repro_lint.facts.events import tables
from repro_lint.facts.import_block import opening_block
from repro_lint.facts.names import SCOPE_TYPES, ScopeNode, dotted_name

SEED_NAMES = ("seed", "random_seed", "SEED", "RANDOM_SEED", "GLOBAL_SEED")
CONFIG_OBJECTS = ("args", "opt", "opts", "cfg", "config", "hparams", "params", "conf")
# Objects argparse fills: their `.seed` is None when a `--seed` option has no default.
PARSED_OBJECTS = ("args", "opt", "opts")
DEFAULT_SEED = "0"
SEED_CONSTANT = "SEED"


def seed_constant(newline: str) -> str:
    """The module constant a fix adds after the opening imports where no seed is in scope, so that
    every fix of the file (and a later one) uses the same seed."""
    return f"{newline}{SEED_CONSTANT} = {DEFAULT_SEED}{newline}"


class SeedValues:
    def __init__(self, context: FileContext) -> None:
        self.context = context

    def expression(self) -> str:
        """A seed expression bound where the node the traversal is at runs, else `0`."""
        return self._in_scope() or DEFAULT_SEED

    def for_fix(self) -> tuple[str, NodeEdit | None]:
        """The seed a fix here uses, and the edit adding the module constant `SEED = 0` when no seed is
        in scope. Two fixes adding the constant insert at one place, so the engine applies one of
        them per round and the next round finds the constant bound."""
        found = self._in_scope()
        if found is not None:
            return found, None
        module = self.context.module
        if self.context.once("binds SEED", lambda: any(binds(statement, SEED_CONSTANT) for statement in module.body)):
            return DEFAULT_SEED, None  # the name holds something else here (or is bound too late)
        newline = module.default_newline
        block = opening_block(module)
        ancestors = self.context.ancestors
        if len(ancestors) > 1 and any(statement is ancestors[1] for statement in block):
            return DEFAULT_SEED, None  # code among the opening imports runs before the constant is bound
        if not block:
            return SEED_CONSTANT, NodeEdit(module.body[0], f"{SEED_CONSTANT} = {DEFAULT_SEED}{newline}{newline}", "line_before")
        return SEED_CONSTANT, NodeEdit(block[-1], seed_constant(newline), "line_after")

    def _in_scope(self) -> str | None:
        for name in SEED_NAMES:
            if self.context.resolver.usable_as_value(name, self.context.scopes) and self._bound(name):
                return name
        for name in CONFIG_OBJECTS:
            if not self._bound(name) or not re.search(rf"\b{name}\.seed\b", self.context.source):
                continue
            if name in PARSED_OBJECTS and self.context.argparse_seed.may_be_none:
                continue
            return f"{name}.seed"
        blocks = [scope.body.body for scope in reversed(self.context.scopes) if isinstance(scope, cst.FunctionDef) and isinstance(scope.body, cst.IndentedBlock)]
        return seeding_argument(map(self._given_seeds, [*blocks, self.context.module.body]), self._bound_root)

    def _given_seeds(self, block: Sequence[cst.BaseStatement]) -> list[tuple[str, bool]]:
        # A body of the tree (a node's own tuple, alive as long as the tree), read once per file for
        # the names it resolves in the scopes here: every fix asks.
        key = ("given seeds", id(block), *map(id, self.context.scopes))
        return self.context.once(key, lambda: given_seeds(self.context, block))

    def _bound_root(self, expression: str) -> bool:
        root = expression.split(".")[0]
        return self.context.resolver.usable_as_value(root, self.context.scopes) and self._bound(root)

    def _bound(self, name: str) -> bool:
        owner = self.context.resolver.binding_scope(name, self.context.scopes)
        return owner is not None and bound_before(name, owner, self.context.ancestors)


def seeding_argument(seeds: Iterable[list[tuple[str, bool]]], usable: Callable[[str], bool]) -> str | None:
    """The seed the program already gives a global seeding call (`torch.manual_seed(opt.manualSeed)`,
    `set_seed(0)`) that is a statement of a block, so it runs whenever the block does: the first of
    `seeds` (each block's `given_seeds`) that is a number, or a name or attribute `usable` says is
    bound where the fix goes. Reusing it keeps one seed for the whole program."""
    return next((seed for given in seeds for seed, number in given if number or usable(seed)), None)


def given_seeds(context: FileContext, block: Sequence[cst.BaseStatement]) -> list[tuple[str, bool]]:
    """The seeds the global seeding calls among `block`'s statements give, in order, each with
    whether it is a number."""
    seeders = tables().seeders
    short = {name.rpartition(".")[2] for name in seeders}
    scopes = context.scopes or [context.module]  # after the traversal: names as the module binds them
    found = []
    for statement in block:
        if not (isinstance(statement, cst.SimpleStatementLine) and isinstance(statement.body[0], cst.Expr)):
            continue
        call = statement.body[0].value
        if not isinstance(call, cst.Call) or not call.args or call.args[0].keyword is not None or call.args[0].star:
            continue
        name = dotted_name(call.func) or ""
        if name.rpartition(".")[2] not in short or not context.resolver.resolve(call.func, scopes) & seeders.keys():
            continue
        value = call.args[0].value
        if isinstance(value, cst.Integer):
            found.append((value.value, True))
            continue
        dotted = dotted_name(value)
        if dotted is None or (dotted.split(".")[0] in PARSED_OBJECTS and context.argparse_seed.may_be_none):
            continue
        found.append((dotted, False))
    return found


def bound_before(name: str, owner: ScopeNode, path: Sequence[cst.CSTNode]) -> bool:
    """Whether `name`, bound in scope `owner`, holds a value whenever the last node of `path` (the
    nodes from the module down to it) runs: a parameter of `owner`, or bound by a statement of
    `owner` that runs before that node on every way to it. Code in a function nested in `owner` may
    run as soon as the function is defined, so there the binding must come before the definition."""
    if isinstance(owner, (cst.FunctionDef, cst.Lambda)) and name in _parameters(owner.params):
        return True
    below = next((path[index:] for index, node in enumerate(path) if node is owner), ())
    for parent, child in zip(below, below[1:]):
        if any(binds(statement, name) for statement in _earlier_statements(parent, child)) or _binds_for(parent, child, name):
            return True
        if type(child) in SCOPE_TYPES:
            return False
    return False


def _parameters(params: cst.Parameters) -> set[str]:
    stars = [star for star in (params.star_arg, params.star_kwarg) if isinstance(star, cst.Param)]
    return {param.name.value for param in (*params.posonly_params, *params.params, *params.kwonly_params, *stars)}


def _earlier_statements(parent: cst.CSTNode, child: cst.CSTNode) -> Sequence[cst.CSTNode]:
    """The statements of `parent` that run before `child`, one of them."""
    if isinstance(parent, (cst.Module, cst.IndentedBlock, cst.SimpleStatementSuite, cst.SimpleStatementLine)):
        body: Sequence[cst.CSTNode] = parent.body
        return next((body[:index] for index, statement in enumerate(body) if statement is child), ())
    return ()


def _binds_for(parent: cst.CSTNode, child: cst.CSTNode, name: str) -> bool:
    """Whether entering `child`, the body of `parent`, binds `name`: a loop's target, a `with`'s or an
    `except`'s name."""
    if isinstance(parent, cst.For) and child is parent.body:
        return _target_binds(parent.target, name)
    if isinstance(parent, cst.With) and child is parent.body:
        return binds(parent, name)
    if isinstance(parent, cst.ExceptHandler) and child is parent.body and parent.name is not None:
        return _target_binds(parent.name.name, name)
    return False


def binds(statement: cst.CSTNode, name: str) -> bool:
    """Whether `statement`, once run, has bound `name` whichever way it went."""
    # Asked of the statements before every seeding call: exact types (see names.py).
    if type(statement) is cst.SimpleStatementLine:
        return any(binds(small, name) for small in statement.body)
    if type(statement) is cst.Assign:
        return any(_target_binds(target.target, name) for target in statement.targets)
    if type(statement) is cst.AnnAssign:
        return statement.value is not None and _target_binds(statement.target, name)
    if type(statement) is cst.AugAssign:
        return _target_binds(statement.target, name)
    if type(statement) is cst.With:
        return any(item.asname is not None and _target_binds(item.asname.name, name) for item in statement.items)
    return False


def _target_binds(target: cst.BaseExpression, name: str) -> bool:
    if type(target) is cst.Name:
        return target.value == name
    if type(target) is cst.Tuple or type(target) is cst.List:
        return any(_target_binds(element.value, name) for element in target.elements)
    if type(target) is cst.StarredElement:
        return _target_binds(target.value, name)
    return False

