"""Qualified names through imports and aliases, resolved scope by scope.

LibCST's QualifiedNameProvider builds full scope metadata for every file, which costs several times
the parse itself. Rules only ever ask about a handful of names, so bindings are collected lazily, one
scope at a time, the first time a rule asks about a name in that scope.

Results are frozensets: a name bound in two branches (`try: import a as x / except: import b as x`)
has two candidates, and rules check whether any candidate is the one they look for. Never pick "the
first" candidate of a set: that would make the output depend on PYTHONHASHSEED.

Node classes are compared by exact type where every file asks often: LibCST's node classes have
ABCMeta for metaclass, so an `isinstance` check that fails costs a Python call, and the concrete
classes compared have no subclasses.
"""

from __future__ import annotations

import builtins
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import libcst as cst

from repro_lint.core.imports import BUILTINS, absolute_module
from repro_lint.core.stack_memo import StackMemo, Steps

ScopeNode = cst.Module | cst.FunctionDef | cst.ClassDef | cst.Lambda
# Compared by exact type (`type(node) in SCOPE_TYPES`): `isinstance` against LibCST's abstract node
# classes is slow, and traversals ask it of every node.
SCOPE_TYPES = frozenset((cst.Module, cst.FunctionDef, cst.ClassDef, cst.Lambda))

_BUILTINS = frozenset(dir(builtins))
# A name bound in a scope: (id of the scope's node, name).
_Binding = tuple[int, str]


def dotted_name(node: cst.BaseExpression) -> str | None:
    """`a.b.c` for a chain of attributes over a name, else None."""
    if type(node) is cst.Name:
        return node.value
    if type(node) is cst.Attribute:
        base = dotted_name(node.value)
        return None if base is None else f"{base}.{node.attr.value}"
    return None


def terminal_name(node: cst.BaseExpression) -> str | None:
    """The last identifier of a name or attribute (`c` in `a.b.c`): a cheap pre-check before resolving."""
    if type(node) is cst.Name:
        return node.value
    if type(node) is cst.Attribute:
        return node.attr.value
    return None


def import_from_module(node: cst.ImportFrom, package: str) -> str | None:
    module = dotted_name(node.module) if node.module is not None else ""
    return absolute_module(module or "", len(node.relative), package)


@dataclass
class _Scope:
    imports: dict[str, set[str]] = field(default_factory=dict)
    aliases: dict[str, list[cst.BaseExpression]] = field(default_factory=dict)
    opaque: set[str] = field(default_factory=set)
    global_names: set[str] = field(default_factory=set)
    # Functions and classes defined here; their qualified names depend on where the scope sits.
    definitions: set[str] = field(default_factory=set)
    # Parameters whose default is None: not usable where a value is required.
    none_defaults: set[str] = field(default_factory=set)
    # Modules imported with `from m import *`, in order: a name bound nowhere else may be theirs.
    star_modules: list[str] = field(default_factory=list)

    def binds(self, name: str) -> bool:
        return name in self.imports or name in self.aliases or name in self.opaque or name in self.definitions


class _BindingCollector:
    """Collects the names one scope binds by walking its statements only: binding forms are
    statements, so expressions are never visited (walrus targets are the exception, and are left
    out). This is several times cheaper than a LibCST visitor over the whole scope."""

    def __init__(self, package: str) -> None:
        self.package = package
        self.scope = _Scope()

    def collect(self, owner: ScopeNode) -> _Scope:
        if isinstance(owner, (cst.FunctionDef, cst.Lambda)):
            self._parameters(owner.params)
        if isinstance(owner, cst.Lambda):
            return self.scope
        self._statements(owner.body.body if not isinstance(owner, cst.Module) else owner.body)
        return self.scope

    def _parameters(self, params: cst.Parameters) -> None:
        for param in (*params.posonly_params, *params.params, *params.kwonly_params):
            self.scope.opaque.add(param.name.value)
            if param.default is not None and isinstance(param.default, cst.Name) and param.default.value == "None":
                self.scope.none_defaults.add(param.name.value)
        for star in (params.star_arg, params.star_kwarg):
            if isinstance(star, cst.Param):
                self.scope.opaque.add(star.name.value)

    def _statements(self, statements: Sequence[cst.CSTNode]) -> None:
        for statement in statements:
            self._statement(statement)

    def _block(self, block: cst.BaseSuite | None) -> None:
        if isinstance(block, cst.IndentedBlock):
            self._statements(block.body)
        elif isinstance(block, cst.SimpleStatementSuite):
            self._statements(block.body)

    def _statement(self, node: cst.CSTNode) -> None:
        # By exact type (see the module's note): most statements (calls, returns) bind nothing, which
        # a chain of `isinstance` checks would learn only at its end.
        collect = _BY_STATEMENT.get(type(node))
        if collect is not None:
            collect(self, node)

    def _simple_line(self, node: cst.SimpleStatementLine) -> None:
        self._statements(node.body)

    def _definition(self, node: cst.FunctionDef | cst.ClassDef) -> None:
        self.scope.definitions.add(node.name.value)

    def _assignment(self, node: cst.Assign) -> None:
        for target in node.targets:
            self._assign(target.target, node.value)

    def _annotated(self, node: cst.AnnAssign) -> None:
        self._assign(node.target, node.value)

    def _augmented(self, node: cst.AugAssign) -> None:
        self._opaque(node.target)

    def _global(self, node: cst.Global) -> None:
        self.scope.global_names.update(item.name.value for item in node.names)

    def _nonlocal(self, node: cst.Nonlocal) -> None:
        self.scope.global_names.difference_update(item.name.value for item in node.names)

    def _if(self, node: cst.If) -> None:
        self._block(node.body)
        if node.orelse is not None:
            self._statement(node.orelse)

    def _else(self, node: cst.Else) -> None:
        self._block(node.body)

    def _for(self, node: cst.For) -> None:
        self._opaque(node.target)
        self._loop(node)

    def _loop(self, node: cst.For | cst.While) -> None:
        self._block(node.body)
        if node.orelse is not None:
            self._block(node.orelse.body)

    def _try(self, node: cst.Try | cst.TryStar) -> None:
        self._block(node.body)
        for handler in node.handlers:
            if handler.name is not None:
                self._opaque(handler.name.name)
            self._block(handler.body)
        for tail in (node.orelse, node.finalbody):
            if tail is not None:
                self._block(tail.body)

    def _with(self, node: cst.With) -> None:
        for item in node.items:
            if item.asname is not None:
                self._opaque(item.asname.name)
        self._block(node.body)

    def _match(self, node: cst.Match) -> None:
        for case in node.cases:
            self._block(case.body)

    def _opaque(self, target: cst.BaseExpression) -> None:
        if type(target) is cst.Name:
            self.scope.opaque.add(target.value)
        elif type(target) is cst.Tuple or type(target) is cst.List:
            for element in target.elements:
                self._opaque(element.value)
        elif type(target) is cst.StarredElement:
            self._opaque(target.value)

    def _import(self, node: cst.Import) -> None:
        for alias in node.names:
            full = dotted_name(alias.name)
            if full is None:
                continue
            if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                self.scope.imports.setdefault(alias.asname.name.value, set()).add(full)
            else:
                head = full.split(".")[0]
                self.scope.imports.setdefault(head, set()).add(head)

    def _import_from(self, node: cst.ImportFrom) -> None:
        module = import_from_module(node, self.package)
        if module is None:
            return
        if isinstance(node.names, cst.ImportStar):
            self.scope.star_modules.append(module)
            return
        for alias in node.names:
            name = alias.name.value if isinstance(alias.name, cst.Name) else dotted_name(alias.name)
            if name is None:
                continue
            bound = alias.asname.name.value if alias.asname and isinstance(alias.asname.name, cst.Name) else name
            self.scope.imports.setdefault(bound, set()).add(f"{module}.{name}")

    def _assign(self, target: cst.BaseExpression, value: cst.BaseExpression | None) -> None:
        if type(target) is cst.Name and (type(value) is cst.Name or type(value) is cst.Attribute):
            self.scope.aliases.setdefault(target.value, []).append(value)
        else:
            self._opaque(target)


_BY_STATEMENT: dict[type[cst.CSTNode], Callable[[_BindingCollector, Any], None]] = {
    cst.SimpleStatementLine: _BindingCollector._simple_line,
    cst.FunctionDef: _BindingCollector._definition,
    cst.ClassDef: _BindingCollector._definition,
    cst.Import: _BindingCollector._import,
    cst.ImportFrom: _BindingCollector._import_from,
    cst.Assign: _BindingCollector._assignment,
    cst.AnnAssign: _BindingCollector._annotated,
    cst.AugAssign: _BindingCollector._augmented,
    cst.Global: _BindingCollector._global,
    cst.Nonlocal: _BindingCollector._nonlocal,
    cst.If: _BindingCollector._if,
    cst.Else: _BindingCollector._else,
    cst.For: _BindingCollector._for,
    cst.While: _BindingCollector._loop,
    cst.Try: _BindingCollector._try,
    cst.TryStar: _BindingCollector._try,
    cst.With: _BindingCollector._with,
    cst.Match: _BindingCollector._match,
}

class NameResolver:
    """Resolves names and attribute chains of one module to the qualified names they may denote."""

    def __init__(self, module: cst.Module, module_name: str, package: str) -> None:
        self.module = module
        self.module_name = module_name
        self.package = package
        self._scopes: dict[int, _Scope] = {}
        # What names defined in a scope are called: `mod.f`, `mod.Class.method`, `mod.f.<locals>.g`
        # (the scheme the facts collector uses for functions).
        self._prefixes: dict[int, str] = {id(module): module_name + "."}
        # Aliases of aliases (`a2 = a1`, `a1 = a0`) are followed on a stack of our own, each
        # binding once: the scopes searched from each binding scope, and what each binding denotes.
        self._outward: dict[int, tuple[ScopeNode, ...]] = {}
        self._bindings = StackMemo(self._bound, frozenset())
        # Each dotted name resolved, by the scopes it was resolved from (their nodes' ids, from the
        # module in): a function names the same few callees over and over (`nn.Linear`, `self.x`),
        # and the rules and the facts ask about the same calls. Over half of the resolutions on
        # transformers' files repeat one already made, and each costs a walk of the scope chain.
        self._resolved: dict[tuple[object, ...], frozenset[str]] = {}

    def _register(self, scopes: Sequence[ScopeNode]) -> None:
        for parent, node in zip(scopes, scopes[1:]):
            if id(node) in self._prefixes:
                continue
            parent_prefix = self._prefixes[id(parent)]
            if isinstance(node, cst.ClassDef):
                self._prefixes[id(node)] = f"{parent_prefix}{node.name.value}."
            elif isinstance(node, cst.FunctionDef):
                self._prefixes[id(node)] = f"{parent_prefix}{node.name.value}.<locals>."
            else:
                self._prefixes[id(node)] = f"{parent_prefix}<lambda>.<locals>."

    def _scope(self, node: ScopeNode) -> _Scope:
        scope = self._scopes.get(id(node))
        if scope is None:
            scope = self._scopes[id(node)] = _BindingCollector(self.package).collect(node)
        return scope

    def _chain(self, scopes: Sequence[ScopeNode]) -> list[ScopeNode]:
        """Scopes searched for a name, innermost first: class bodies are invisible to nested functions."""
        chain = [scope for index, scope in enumerate(scopes) if type(scope) is not cst.ClassDef or index == len(scopes) - 1]
        return list(reversed(chain))

    def lookup(self, name: str, scopes: Sequence[ScopeNode]) -> frozenset[str]:
        self._register(scopes)
        return self._lookup(name, self._chain(scopes))

    def _lookup(self, name: str, chain: list[ScopeNode]) -> frozenset[str]:
        return self._bindings.run(self._find(name, chain, ""))

    def _find(self, name: str, chain: Sequence[ScopeNode], suffix: str) -> Steps[_Binding, frozenset[str]]:
        """What `name` followed by `suffix` (`.b.c`) may denote, seen from `chain`: what the
        innermost scope binding it binds it to (a `_Binding`, worked out once)."""
        for index, node in enumerate(chain):
            scope = self._scope(node)
            if name in scope.global_names and node is not chain[-1]:
                return (yield from self._find(name, chain[-1:], suffix))
            if not scope.binds(name):
                continue
            self._outward.setdefault(id(node), tuple(chain[index:]))
            found = yield (id(node), name)
            return frozenset(f"{qualified}{suffix}" for qualified in found) if suffix else found
        if name in _BUILTINS:
            return frozenset({f"{BUILTINS}.{name}{suffix}"})
        # Bound by no statement of the module: a member of a module it star-imports, if any
        # (`from models import *` then `ResNet18()`), which the project pass resolves further.
        return frozenset(f"{module}.{name}{suffix}" for module in self._scope(chain[-1]).star_modules)

    def _bound(self, binding: _Binding) -> Steps[_Binding, frozenset[str]]:
        """What a scope binds a name to: its imports, its definition, and what its aliases (`x = y`,
        `x = y.z`) denote from there."""
        node_id, name = binding
        chain = self._outward[node_id]
        scope = self._scope(chain[0])
        found = set(scope.imports.get(name, ()))
        if name in scope.definitions:
            found.add(self._prefixes.get(node_id, "<unknown>.") + name)
        for value in scope.aliases.get(name, ()):
            dotted = dotted_name(value)
            if dotted is not None:
                head, dot, rest = dotted.partition(".")
                found |= yield from self._find(head, chain, dot + rest)
        return frozenset(found)

    def is_bound(self, name: str, scopes: Sequence[ScopeNode]) -> bool:
        """Whether `name` is bound by the user's code in a scope visible from here (not a builtin)."""
        chain = self._chain(scopes)
        for node in chain:
            scope = self._scope(node)
            if name in scope.global_names and node is not chain[-1]:
                return self._scope(chain[-1]).binds(name)
            if scope.binds(name):
                return True
        return False

    def resolve(self, node: cst.BaseExpression, scopes: Sequence[ScopeNode]) -> frozenset[str]:
        """Every qualified name `node` may denote here; empty when it cannot be known."""
        dotted = dotted_name(node)
        if dotted is None:
            return frozenset()
        key = (dotted, *map(id, scopes))
        found = self._resolved.get(key)
        if found is None:
            self._register(scopes)
            head, dot, rest = dotted.partition(".")
            found = self._resolved[key] = self._bindings.run(self._find(head, self._chain(scopes), dot + rest))
        return found

    def module_bindings(self) -> dict[str, frozenset[str]]:
        """What the module's own imports and definitions bind, for following re-exports across modules."""
        scope = self._scope(self.module)
        bindings = {name: frozenset(targets) for name, targets in scope.imports.items()}
        for name in scope.definitions:
            bindings[name] = bindings.get(name, frozenset()) | {f"{self.module_name}.{name}"}
        return bindings

    def binding_scope(self, name: str, scopes: Sequence[ScopeNode]) -> ScopeNode | None:
        """The scope whose binding of `name` code here sees (the module for a `global` name), or None
        when the user's code binds it in no scope visible from here."""
        for node in self._chain(scopes):
            scope = self._scope(node)
            if name in scope.global_names and node is not self.module:
                return self.module if self._scope(self.module).binds(name) else None
            if scope.binds(name):
                return node
        return None

    def usable_as_value(self, name: str, scopes: Sequence[ScopeNode]) -> bool:
        """Bound here to a value the code computed (not an import or a def, not a parameter that
        defaults to None): safe to pass where a number is expected, once bound (seed_values.py)."""
        owner = self.binding_scope(name, scopes)
        if owner is None:
            return False
        scope = self._scope(owner)
        return not (name in scope.imports or name in scope.definitions or name in scope.none_defaults)

    def binding_for_module(self, module: str, scopes: Sequence[ScopeNode]) -> str | None:
        """A name or dotted path that denotes `module` here (`torch`, `th`), for code a fix inserts."""
        chain = self._chain(scopes)
        candidates: set[str] = set()
        for node in chain:
            scope = self._scope(node)
            for name, targets in scope.imports.items():
                if module in targets and self._lookup(name, chain) == {module}:
                    candidates.add(name)
        return min(candidates, key=lambda name: (len(name), name)) if candidates else None


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
