"""Qualified names through imports and aliases, resolved scope by scope.

LibCST's QualifiedNameProvider builds full scope metadata for every file, which costs several times
the parse itself. Rules only ever ask about a handful of names, so bindings are collected lazily, one
scope at a time, the first time a rule asks about a name in that scope.

Results are frozensets: a name bound in two branches (`try: import a as x / except: import b as x`)
has two candidates, and rules check whether any candidate is the one they look for. Never pick "the
first" candidate of a set: that would make the output depend on PYTHONHASHSEED.
"""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from dataclasses import dataclass, field

import libcst as cst

ScopeNode = cst.Module | cst.FunctionDef | cst.ClassDef | cst.Lambda

_BUILTINS = frozenset(dir(builtins))


def dotted_name(node: cst.BaseExpression) -> str | None:
    """`a.b.c` for a chain of attributes over a name, else None."""
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        base = dotted_name(node.value)
        return None if base is None else f"{base}.{node.attr.value}"
    return None


def terminal_name(node: cst.BaseExpression) -> str | None:
    """The last identifier of a name or attribute (`c` in `a.b.c`): a cheap pre-check before resolving."""
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        return node.attr.value
    return None


def absolute_module(module: str, level: int, package: str) -> str | None:
    """The absolute name of `from <level dots><module> import ...` inside `package`."""
    if level == 0:
        return module
    parts = package.split(".") if package else []
    if level - 1 > len(parts):
        return None
    base = parts[: len(parts) - (level - 1)]
    return ".".join([*base, module] if module else base) or None


def import_from_module(node: cst.ImportFrom, package: str) -> str | None:
    module = dotted_name(node.module) if node.module is not None else ""
    return absolute_module(module or "", len(node.relative), package)


@dataclass
class _Scope:
    imports: dict[str, set[str]] = field(default_factory=dict)
    aliases: dict[str, list[cst.BaseExpression]] = field(default_factory=dict)
    opaque: set[str] = field(default_factory=set)
    global_names: set[str] = field(default_factory=set)

    def binds(self, name: str) -> bool:
        return name in self.imports or name in self.aliases or name in self.opaque


class _BindingCollector(cst.CSTVisitor):
    """Collects the names one scope binds, without entering nested scopes."""

    def __init__(self, owner: ScopeNode, module_name: str, package: str) -> None:
        self.owner = owner
        self.module_name = module_name
        self.package = package
        self.scope = _Scope()

    def _opaque(self, target: cst.BaseExpression) -> None:
        if isinstance(target, cst.Name):
            self.scope.opaque.add(target.value)
        elif isinstance(target, (cst.Tuple, cst.List)):
            for element in target.elements:
                self._opaque(element.value)
        elif isinstance(target, cst.StarredElement):
            self._opaque(target.value)

    def _enter_nested(self, node: ScopeNode) -> bool:
        if node is self.owner:
            return True
        if isinstance(node, (cst.FunctionDef, cst.ClassDef)):
            prefix = self.module_name if isinstance(self.owner, cst.Module) else f"{self.module_name}.<locals>"
            self.scope.imports.setdefault(node.name.value, set()).add(f"{prefix}.{node.name.value}")
        return False

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        if node is self.owner:
            for param in (*node.params.posonly_params, *node.params.params, *node.params.kwonly_params):
                self.scope.opaque.add(param.name.value)
            for star in (node.params.star_arg, node.params.star_kwarg):
                if isinstance(star, cst.Param):
                    self.scope.opaque.add(star.name.value)
        return self._enter_nested(node)

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        return self._enter_nested(node)

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        if node is self.owner:
            for param in node.params.params:
                self.scope.opaque.add(param.name.value)
            return True
        return False

    def visit_Import(self, node: cst.Import) -> None:
        for alias in node.names:
            full = dotted_name(alias.name)
            if full is None:
                continue
            if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                self.scope.imports.setdefault(alias.asname.name.value, set()).add(full)
            else:
                head = full.split(".")[0]
                self.scope.imports.setdefault(head, set()).add(head)

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        if isinstance(node.names, cst.ImportStar):
            return
        module = import_from_module(node, self.package)
        if module is None:
            return
        for alias in node.names:
            name = alias.name.value if isinstance(alias.name, cst.Name) else dotted_name(alias.name)
            if name is None:
                continue
            bound = alias.asname.name.value if alias.asname and isinstance(alias.asname.name, cst.Name) else name
            self.scope.imports.setdefault(bound, set()).add(f"{module}.{name}")

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            self._assign(target.target, node.value)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self._assign(node.target, node.value)

    def _assign(self, target: cst.BaseExpression, value: cst.BaseExpression | None) -> None:
        if isinstance(target, cst.Name) and isinstance(value, (cst.Name, cst.Attribute)):
            self.scope.aliases.setdefault(target.value, []).append(value)
        else:
            self._opaque(target)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._opaque(node.target)

    def visit_For(self, node: cst.For) -> None:
        self._opaque(node.target)

    def visit_WithItem(self, node: cst.WithItem) -> None:
        if node.asname is not None:
            self._opaque(node.asname.name)

    def visit_ExceptHandler(self, node: cst.ExceptHandler) -> None:
        if node.name is not None:
            self._opaque(node.name.name)

    def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
        self._opaque(node.target)

    def visit_Global(self, node: cst.Global) -> None:
        self.scope.global_names.update(item.name.value for item in node.names)

    def visit_Nonlocal(self, node: cst.Nonlocal) -> None:
        self.scope.global_names.difference_update(item.name.value for item in node.names)

    # Comprehension variables live in their own scope in Python 3: they never shadow outer names.
    def visit_CompFor(self, node: cst.CompFor) -> bool:
        return True


class NameResolver:
    """Resolves names and attribute chains of one module to the qualified names they may denote."""

    def __init__(self, module: cst.Module, module_name: str, package: str) -> None:
        self.module = module
        self.module_name = module_name
        self.package = package
        self._scopes: dict[int, _Scope] = {}

    def _scope(self, node: ScopeNode) -> _Scope:
        scope = self._scopes.get(id(node))
        if scope is None:
            collector = _BindingCollector(node, self.module_name, self.package)
            node.visit(collector)
            scope = self._scopes[id(node)] = collector.scope
        return scope

    def _chain(self, scopes: Sequence[ScopeNode]) -> list[ScopeNode]:
        """Scopes searched for a name, innermost first: class bodies are invisible to nested functions."""
        chain = [scope for index, scope in enumerate(scopes) if not isinstance(scope, cst.ClassDef) or index == len(scopes) - 1]
        return list(reversed(chain))

    def lookup(self, name: str, scopes: Sequence[ScopeNode]) -> frozenset[str]:
        return self._lookup(name, self._chain(scopes), frozenset())

    def _lookup(self, name: str, chain: list[ScopeNode], seen: frozenset[tuple[int, str]]) -> frozenset[str]:
        for index, node in enumerate(chain):
            scope = self._scope(node)
            if name in scope.global_names:
                return self._lookup(name, chain[-1:], seen)
            if not scope.binds(name):
                continue
            key = (id(node), name)
            if key in seen:
                return frozenset()
            found = set(scope.imports.get(name, ()))
            for value in scope.aliases.get(name, ()):
                found |= self._resolve(value, chain[index:], seen | {key})
            return frozenset(found)
        if name in _BUILTINS:
            return frozenset({f"builtins.{name}"})
        return frozenset()

    def is_bound(self, name: str, scopes: Sequence[ScopeNode]) -> bool:
        """Whether `name` is bound by the user's code in a scope visible from here (not a builtin)."""
        chain = self._chain(scopes)
        for node in chain:
            scope = self._scope(node)
            if name in scope.global_names:
                return self._scope(chain[-1]).binds(name)
            if scope.binds(name):
                return True
        return False

    def resolve(self, node: cst.BaseExpression, scopes: Sequence[ScopeNode]) -> frozenset[str]:
        """Every qualified name `node` may denote here; empty when it cannot be known."""
        return self._resolve(node, self._chain(scopes), frozenset())

    def _resolve(self, node: cst.BaseExpression, chain: list[ScopeNode], seen: frozenset[tuple[int, str]]) -> frozenset[str]:
        if isinstance(node, cst.Name):
            return self._lookup(node.value, chain, seen)
        if isinstance(node, cst.Attribute):
            return frozenset(f"{base}.{node.attr.value}" for base in self._resolve(node.value, chain, seen))
        return frozenset()

    def module_bindings(self) -> dict[str, frozenset[str]]:
        """What the module's own imports bind, for following re-exports across modules."""
        return {name: frozenset(targets) for name, targets in self._scope(self.module).imports.items()}

    def binding_for_module(self, module: str, scopes: Sequence[ScopeNode]) -> str | None:
        """A name or dotted path that denotes `module` here (`torch`, `th`), for code a fix inserts."""
        chain = self._chain(scopes)
        candidates: set[str] = set()
        for node in chain:
            scope = self._scope(node)
            for name, targets in scope.imports.items():
                if module in targets and self._lookup(name, chain, frozenset()) == {module}:
                    candidates.add(name)
        return min(candidates, key=lambda name: (len(name), name)) if candidates else None
