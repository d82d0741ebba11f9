"""One module's tree as an index: parent links, pre-order positions, scopes and the occurrences of
every name and attribute chain (`files`, `self.samples`), built in one traversal and cached per file.

Several rules and facts need more than the node in front of them: a `DistributedSampler` is fine
when `set_epoch` is called on its name anywhere (REP205), a DataLoader's dataset is a variable
assigned elsewhere (REP201), an arbitrary order shows later in the code (dataflow.py). The index gives
them one shared view of the module instead of ad-hoc loops in each: where a name is bound and to
what (`bound_values`), which class a method belongs to, and how a replacement reads where the node
it replaces stands (`code_in_place`).
"""

from __future__ import annotations

import weakref
from collections import defaultdict
from collections.abc import Iterator
from typing import Literal

import libcst as cst
from libcst._nodes.internal import CodegenState

from repro_lint.facts.context import FileContext, NodeEdit
from repro_lint.facts.names import SCOPE_TYPES, ScopeNode, dotted_name
from repro_lint.facts.traversal import walk

_TARGET_WRAPPERS = (cst.Tuple, cst.List, cst.Element, cst.StarredElement)
_IMPORTS = frozenset({cst.ImportAlias, cst.ImportFrom, cst.Import})

Role = Literal["use", "bind", "augment"]


class ModuleIndex(cst.CSTVisitor):
    """Parent links, pre-order positions and name occurrences of one module. Keyed by `id(node)`: a
    node's own `__hash__` is Python code, and the index holds the module, so identities stay unique."""

    def __init__(self, module: cst.Module) -> None:
        self._parent: dict[int, cst.CSTNode] = {}
        self._order: dict[int, int] = {}
        self._end: dict[int, int] = {}
        self._scope: dict[int, ScopeNode] = {}
        self._occurrences: dict[str, list[cst.CSTNode]] = defaultdict(list)
        self._attributes: dict[str, list[cst.Attribute]] = defaultdict(list)
        # By name, then by the id of their scope (or of each class they are in): the occurrences
        # binding it, in order. Worked out on the first ask: each read of a name asks, and a long
        # module may read a name hundreds of times.
        self._bindings: dict[tuple[str, bool], dict[int, list[cst.CSTNode]]] = {}
        self._roles: dict[int, Role] = {}
        # `bound_values` of names and `self.x` attributes, by `values_key`: a long method may read
        # one attribute rebound hundreds of times in hundreds of places.
        self._values: dict[tuple[str, int], list[tuple[cst.BaseExpression, int | None]]] = {}
        self._stack: list[cst.CSTNode] = []
        self._scopes: list[ScopeNode] = []
        self._counter = 0
        self.module = module
        walk(module, self)

    def on_visit(self, node: cst.CSTNode) -> bool:
        if self._stack:
            self._parent[id(node)] = self._stack[-1]
        self._order[id(node)] = self._counter
        self._counter += 1
        self._stack.append(node)
        # Exact types, for every node: see names.py.
        if type(node) is cst.Attribute:
            self._attributes[node.attr.value].append(node)
        if (type(node) is cst.Name or type(node) is cst.Attribute) and self._is_reference(node):
            dotted = dotted_name(node)
            if dotted is not None:
                self._occurrences[dotted].append(node)
                self._scope[id(node)] = self._scopes[-1]
        if type(node) in SCOPE_TYPES:
            self._scopes.append(node)
        return True

    def on_leave(self, original_node: cst.CSTNode) -> None:
        # A tick of its own: a node ends after everything in it, also where its last child is its last
        # token (a binding takes effect after every read in its value).
        self._end[id(original_node)] = self._counter
        self._counter += 1
        self._stack.pop()
        if type(original_node) in SCOPE_TYPES:
            self._scopes.pop()

    def _is_reference(self, node: cst.Name | cst.Attribute) -> bool:
        """Whether the node names a variable or attribute chain (not `attr` of `x.attr`, a keyword
        argument's name, or the name of a def, class or import)."""
        parent = self._stack[-2] if len(self._stack) > 1 else None
        if type(parent) is cst.Attribute and parent.attr is node:
            return False
        if type(parent) is cst.Arg and parent.keyword is node:
            return False
        if (type(parent) is cst.FunctionDef or type(parent) is cst.ClassDef) and parent.name is node:
            return False
        return type(parent) not in _IMPORTS

    # --- navigation -------------------------------------------------------------------------

    def parent(self, node: cst.CSTNode) -> cst.CSTNode | None:
        return self._parent.get(id(node))

    def ancestors(self, node: cst.CSTNode) -> Iterator[cst.CSTNode]:
        current = self._parent.get(id(node))
        while current is not None:
            yield current
            current = self._parent.get(id(current))

    def order(self, node: cst.CSTNode) -> int:
        return self._order[id(node)]

    def end(self, node: cst.CSTNode) -> int:
        return self._end[id(node)]

    def contains(self, outer: cst.CSTNode, inner: cst.CSTNode) -> bool:
        return self._order[id(outer)] <= self._order[id(inner)] <= self._end[id(outer)]

    def scope(self, node: cst.CSTNode) -> ScopeNode:
        """The function, lambda, class body or module a node belongs to (comprehensions are not scopes here)."""
        scope = self._scope.get(id(node))
        if scope is not None:
            return scope
        for ancestor in self.ancestors(node):
            if type(ancestor) in SCOPE_TYPES and ancestor is not node:
                return ancestor
        return self.module

    def enclosing(self, node: cst.CSTNode, kinds: type | tuple[type, ...]) -> cst.CSTNode | None:
        return next((ancestor for ancestor in self.ancestors(node) if isinstance(ancestor, kinds)), None)

    def statement(self, node: cst.CSTNode) -> cst.CSTNode:
        """The simple or compound statement a node belongs to."""
        for ancestor in self.ancestors(node):
            if isinstance(ancestor, (cst.BaseSmallStatement, cst.BaseCompoundStatement)):
                return ancestor
        return node

    def never_runs(self, node: cst.CSTNode) -> bool:
        """Whether `node` sits where code switched off by hand puts it: past the body of `if True:`
        (`if True:  # args.distributed:`, then an `else` that is dead), or in the body of `if False:`."""
        for ancestor in self.ancestors(node):
            if isinstance(ancestor, cst.If) and isinstance(ancestor.test, cst.Name) and ancestor.test.value in ("True", "False"):
                if self.contains(ancestor.body, node) == (ancestor.test.value == "False"):
                    return True
        return False

    def occurrences(self, dotted: str) -> list[cst.CSTNode]:
        return self._occurrences.get(dotted, [])

    def occurrences_of_attribute(self, attribute: str) -> list[cst.Attribute]:
        """Every `<anything>.attribute`, whatever the receiver."""
        return self._attributes.get(attribute, [])

    # --- bindings ---------------------------------------------------------------------------

    def bindings(self, dotted: str, scope: cst.CSTNode, in_class: bool = False) -> list[cst.CSTNode]:
        """The occurrences binding `dotted` whose scope is `scope`, or, `in_class`, anywhere in the
        class `scope` (`self.x = ...` in its methods), in the order they are written."""
        grouped = self._bindings.get((dotted, in_class))
        if grouped is None:
            grouped = self._bindings[dotted, in_class] = {}
            for node in self.occurrences(dotted):
                if self.role(node) == "bind":
                    holders = [ancestor for ancestor in self.ancestors(node) if type(ancestor) is cst.ClassDef] if in_class else [self.scope(node)]
                    for holder in holders:
                        grouped.setdefault(id(holder), []).append(node)
        return grouped.get(id(scope), [])

    def role(self, node: cst.CSTNode) -> Role:
        """Whether an occurrence reads the name, binds it (assignment, loop or `with` target, parameter,
        `del`), or updates it in place (`x += ...`). Kept: rules ask of every occurrence of a name
        at each of its reads."""
        role = self._roles.get(id(node))
        if role is None:
            role = self._roles[id(node)] = self._role(node)
        return role

    def _role(self, node: cst.CSTNode) -> Role:
        child = node
        for parent in self.ancestors(node):
            if isinstance(parent, _TARGET_WRAPPERS):
                child = parent
                continue
            if isinstance(parent, cst.AssignTarget):
                return "bind"
            if isinstance(parent, (cst.AnnAssign, cst.NamedExpr)) and parent.target is child:
                return "bind"
            if isinstance(parent, cst.AugAssign) and parent.target is child:
                return "augment"
            if isinstance(parent, (cst.For, cst.CompFor)) and parent.target is child:
                return "bind"
            if isinstance(parent, cst.AsName) or isinstance(parent, cst.Del):
                return "bind"
            if isinstance(parent, cst.Param) and parent.name is child:
                return "bind"
            return "use"
        return "use"

    def effective_order(self, node: cst.CSTNode) -> int:
        """When an occurrence takes effect: a target is bound after its statement's value is computed,
        so `files = sorted(files)` reads the old `files` before binding the new one."""
        if self.role(node) == "use":
            return self._order[id(node)]
        for parent in self.ancestors(node):
            if isinstance(parent, (cst.Assign, cst.AnnAssign, cst.AugAssign, cst.NamedExpr)) and parent.value is not None:
                return self._end[id(parent.value)]
            if isinstance(parent, (cst.For, cst.CompFor)):
                return self._end[id(parent.iter)]
            if isinstance(parent, cst.WithItem):
                return self._end[id(parent.item)]
            if isinstance(parent, (cst.BaseSmallStatement, cst.BaseCompoundStatement, cst.Param)):
                break
        return self._order[id(node)]

    def assigned_value(self, target: cst.CSTNode) -> tuple[cst.BaseExpression, int | None] | None:
        """For a binding occurrence: the value assigned, and the position inside a tuple target
        (`train, val = random_split(...)` binds `val` to element 1), or None when not an assignment."""
        child, position = target, None
        for parent in self.ancestors(target):
            if isinstance(parent, cst.Element):
                child = parent
                continue
            if isinstance(parent, (cst.Tuple, cst.List)):
                if position is not None:
                    return None
                position = next((index for index, element in enumerate(parent.elements) if element is child), None)
                child = parent
                continue
            if isinstance(parent, cst.AssignTarget):
                child = parent
                continue
            if isinstance(parent, cst.Assign):
                return parent.value, position
            if isinstance(parent, (cst.AnnAssign, cst.NamedExpr)) and parent.value is not None and parent.target is child:
                return parent.value, position
            return None
        return None

    def shadowed_by_comprehension(self, node: cst.CSTNode, dotted: str) -> bool:
        """Whether `node` names a comprehension's own variable (`f` in `[g(f) for f in files]`), which
        is not the variable of the same name outside it."""
        head = dotted.partition(".")[0]
        for ancestor in self.ancestors(node):
            if type(ancestor) in SCOPE_TYPES:
                return False
            if isinstance(ancestor, (cst.ListComp, cst.SetComp, cst.GeneratorExp, cst.DictComp)):
                clause: cst.CompFor | None = ancestor.for_in
                first = True
                while clause is not None:
                    # The first clause's iterable is evaluated outside the comprehension.
                    inside = not (first and self.contains(clause.iter, node))
                    if inside and head in target_names(clause.target):
                        return True
                    clause, first = clause.inner_for_in, False
        return False

    def binds_locally(self, scope: ScopeNode, dotted: str) -> bool:
        return any(self.scope(node) is scope and self.role(node) != "use" for node in self.occurrences(dotted))

    def method_class(self, scope: ScopeNode) -> cst.ClassDef | None:
        """The class whose method `scope` is (`def f(self)` directly in a class body)."""
        if not isinstance(scope, cst.FunctionDef):
            return None
        block = self.parent(scope)
        owner = self.parent(block) if block is not None else None
        return owner if isinstance(owner, cst.ClassDef) else None


def target_names(target: cst.BaseExpression) -> set[str]:
    """The names an assignment target binds (through tuples, lists and starred elements)."""
    if isinstance(target, cst.Name):
        return {target.value}
    if isinstance(target, (cst.Tuple, cst.List)):
        return {name for element in target.elements for name in target_names(element.value)}
    if isinstance(target, cst.StarredElement):
        return target_names(target.value)
    return set()


def indentation(index: ModuleIndex, node: cst.CSTNode) -> list[str]:
    """The indent tokens in effect at `node`: one per enclosing indented block, outermost first."""
    module = index.module
    return [
        block.indent if block.indent is not None else module.default_indent
        for block in reversed(list(index.ancestors(node)))
        if isinstance(block, cst.IndentedBlock)
    ]


def code_in_place(index: ModuleIndex, original: cst.CSTNode, replacement: cst.CSTNode) -> str:
    """The code of `replacement` as it will read where `original` stands.

    `Module.code_for_node` generates a node as if it stood at the module's top level, so the
    continuation lines of a multi-line call inside a function lose the function's indentation;
    generating with the enclosing blocks' indent tokens keeps them."""
    module = index.module
    state = CodegenState(default_indent=module.default_indent, default_newline=module.default_newline)
    state.indent_tokens.extend(indentation(index, original))
    replacement._codegen(state)
    return "".join(state.tokens)


_INDEXES: weakref.WeakKeyDictionary[FileContext, ModuleIndex] = weakref.WeakKeyDictionary()


def index_for(context: FileContext) -> ModuleIndex:
    """The index of the context's module, built on first use and shared by every rule."""
    index = _INDEXES.get(context)
    if index is None:
        index = _INDEXES[context] = ModuleIndex(context.module)
    return index


def replace_in_place(context: FileContext, original: cst.CSTNode, replacement: cst.CSTNode) -> NodeEdit:
    """`edits.replace_node`, keeping the indentation of multi-line nodes inside blocks."""
    return NodeEdit(original, code_in_place(index_for(context), original, replacement))


def is_self_attribute(index: ModuleIndex, node: cst.CSTNode, dotted: str) -> bool:
    """Whether `dotted` is `self.x` (or `cls.x`) written inside a method of a class."""
    head, _, rest = dotted.partition(".")
    if not rest or "." in rest or head not in ("self", "cls"):
        return False
    scope = index.scope(node)
    while isinstance(scope, (cst.FunctionDef, cst.Lambda)) and index.method_class(scope) is None:
        scope = index.scope(scope)
    return isinstance(scope, cst.FunctionDef) and index.method_class(scope) is not None


def scope_chain(index: ModuleIndex, node: cst.CSTNode) -> list[ScopeNode]:
    """The scopes around `node`, module first: what name resolution needs for a node found outside
    the traversal (the context's own scope stack only describes where the traversal is)."""
    inner = [ancestor for ancestor in index.ancestors(node) if isinstance(ancestor, (cst.FunctionDef, cst.ClassDef, cst.Lambda))]
    return [index.module, *reversed(inner)]


def owning_class(index: ModuleIndex, node: cst.CSTNode) -> cst.ClassDef | None:
    """The class whose method (possibly through nested functions) contains `node`."""
    scope = index.scope(node)
    while not isinstance(scope, cst.Module):
        owner = index.method_class(scope)
        if owner is not None:
            return owner
        scope = index.scope(scope)
    return None


def bound_values(index: ModuleIndex, expr: cst.BaseExpression) -> list[tuple[cst.BaseExpression, int | None]]:
    """The expressions `expr` may stand for, with the tuple position for unpacked assignments.

    A call or literal stands for itself; a name for every value assigned to it in the innermost scope
    that binds it (but in a branch that never runs); `self.x` for every value assigned to it in any
    method of its class; `a if c else b` and `a or b` for both sides. A name bound by a parameter or
    loop stands for nothing known. Chains of assignments are followed to their end, each assignment
    once (`x = x if c else x` repeated would otherwise double the work at every line). The same
    list is given to every read of the same name in the same scope (of `self.x` in the same class):
    it is not to be changed."""
    key = values_key(index, expr)
    if key is not None and key in index._values:
        return index._values[key]
    found: list[tuple[cst.BaseExpression, int | None]] = []
    followed: set[int] = set()
    pending = [expr]  # a stack, in reverse: values come out in the order they are written
    while pending:
        current = pending.pop()
        if isinstance(current, cst.IfExp):
            pending += (current.orelse, current.body)
            continue
        if isinstance(current, cst.BooleanOperation):
            pending += (current.right, current.left)
            continue
        dotted = dotted_name(current) if isinstance(current, (cst.Name, cst.Attribute)) else None
        if dotted is None:
            found.append((current, None))
            continue
        values: list[cst.BaseExpression] = []
        for node in _bindings_of(index, current, dotted):
            if id(node) in followed or index.never_runs(node):
                continue
            followed.add(id(node))
            assigned = index.assigned_value(node)
            if assigned is None:
                continue
            value, position = assigned
            if position is None:
                values.append(value)
            else:
                found.append((value, position))
        pending.extend(reversed(values))
    if key is not None:
        index._values[key] = found
    return found


def values_key(index: ModuleIndex, expr: cst.BaseExpression) -> tuple[str, int] | None:
    """What `bound_values` of a name or `self.x` attribute depends on: the dotted name, and where
    its bindings are looked for (the scope it is read in; the class, for `self.x`). None for other
    expressions."""
    dotted = dotted_name(expr) if isinstance(expr, (cst.Name, cst.Attribute)) else None
    if dotted is None:
        return None
    if is_self_attribute(index, expr, dotted):
        owner = owning_class(index, expr)
        return (dotted, id(owner)) if owner is not None else None
    return (dotted, id(index.scope(expr))) if "." not in dotted else None


def _bindings_of(index: ModuleIndex, expr: cst.BaseExpression, dotted: str) -> list[cst.CSTNode]:
    """The occurrences binding the name or `self.x` attribute `expr` reads (see `bound_values`)."""
    if is_self_attribute(index, expr, dotted):
        owner = owning_class(index, expr)
        return index.bindings(dotted, owner, in_class=True) if owner is not None else []
    if "." in dotted:
        return []
    scope: ScopeNode = index.scope(expr)
    while True:
        bindings = index.bindings(dotted, scope)
        if bindings or isinstance(scope, cst.Module):
            return bindings
        scope = index.scope(scope)
        while isinstance(scope, cst.ClassDef):
            scope = index.scope(scope)
