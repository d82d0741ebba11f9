"""What a rule sees of the file it visits, the one traversal that runs every rule at once, and the
edits that fixes anchor at its nodes."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Collection, Hashable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, TypeVar

import libcst as cst
from libcst._nodes.internal import CodegenState

from repro_lint.core.findings import Applicability, Reporter
from repro_lint.core.records import pickled_by_constructor
from repro_lint.facts.import_block import import_placement
from repro_lint.facts.names import SCOPE_TYPES, NameResolver, ScopeNode
from repro_lint.facts.seed_option import ArgparseSeed
from repro_lint.facts.traversal import LEAVES, SKIPPED, children_fields, walk

if TYPE_CHECKING:
    from repro_lint.core.settings import Settings

_T = TypeVar("_T")


@pickled_by_constructor
@dataclass(frozen=True, slots=True)
class NodeEdit:
    """An edit anchored to a node, turned into text positions once positions are known.

    `replace` swaps the node's text for `content`; `line_before` inserts `content` at the start of the
    node's first line; `line_after` at the start of the line after the node's last line.
    """

    node: cst.CSTNode
    content: str
    where: Literal["replace", "line_before", "line_after"] = "replace"


@pickled_by_constructor
@dataclass(frozen=True, slots=True)
class PendingFix:
    applicability: Applicability
    message: str
    edits: tuple[NodeEdit, ...]


@pickled_by_constructor
@dataclass(frozen=True, slots=True)
class PendingReport:
    rule: Reporter
    node: cst.CSTNode
    message: str
    fix: PendingFix | None


class FileContext:
    """One file under analysis: its tree, names, the current scope, and the findings reported so far."""

    def __init__(self, module: cst.Module, module_name: str, is_package: bool, settings: Settings, source: str = "") -> None:
        self.module = module
        self.source = source or module.code
        self.module_name = module_name
        self.package = module_name if is_package else module_name.rpartition(".")[0]
        self.settings = settings
        self.resolver = NameResolver(module, module_name, self.package)
        self.scopes: list[ScopeNode] = []
        self.ancestors: list[cst.CSTNode] = []
        self.reports: list[PendingReport] = []
        self._argparse_seed: ArgparseSeed | None = None
        self._once: dict[Hashable, object] = {}

    def once(self, key: Hashable, compute: Callable[[], _T]) -> _T:
        """`compute()`, worked out once per file under `key`: for what depends on the whole module
        and is asked at each of many nodes (a long file may ask a thousand times)."""
        if key not in self._once:
            self._once[key] = compute()
        return self._once[key]  # type: ignore[return-value]

    @property
    def argparse_seed(self) -> ArgparseSeed:
        """The module's `--seed` option. Rules asking mid-traversal get one read of the whole module;
        after the traversal the facts collector has already recorded what it saw."""
        if self._argparse_seed is None:
            self._argparse_seed = ArgparseSeed()
            walk(self.module, self._argparse_seed)
        return self._argparse_seed

    def record_argparse_seed(self, seed: ArgparseSeed) -> None:
        if self._argparse_seed is None:
            self._argparse_seed = seed

    def qualified_names(self, node: cst.BaseExpression) -> frozenset[str]:
        return self.resolver.resolve(node, self.scopes)

    def matches(self, node: cst.BaseExpression, names: Collection[str]) -> str | None:
        """The qualified name in `names` that `node` denotes, if any (the smallest, for determinism)."""
        found = self.qualified_names(node) & set(names) if names else frozenset()
        return min(found) if found else None

    def callee(self, call: cst.Call, names: Collection[str], short_names: Collection[str]) -> str | None:
        """The name in `names` that `call` calls. `short_names` (the last components of `names`) is a
        cheap pre-check for attribute calls; a bare name may be an import alias (`tts`), so it is
        always resolved."""
        func = call.func
        if type(func) is cst.Attribute and func.attr.value not in short_names:  # asked of every call: see names.py
            return None
        return self.matches(func, names)

    def module_alias(self, module: str) -> str | None:
        return self.resolver.binding_for_module(module, self.scopes)

    def code_for(self, node: cst.CSTNode) -> str:
        """The code of `node` (or a replacement for a node here) as it would be written at the current
        position: continuation lines get the indentation of the blocks around it."""
        state = CodegenState(default_indent=self.module.default_indent, default_newline=self.module.default_newline)
        state.indent_tokens.extend(
            block.indent if block.indent is not None else self.module.default_indent
            for block in self.ancestors
            if isinstance(block, cst.IndentedBlock)
        )
        node._codegen(state)
        return "".join(state.tokens)

    def report(self, rule: Reporter, node: cst.CSTNode, message: str, fix: PendingFix | None) -> None:
        self.reports.append(PendingReport(rule, node, message, fix))


Handler = Callable[[cst.CSTNode], object]
# What the traversal does at a node of one type: its visitors' visit and leave methods, whether it opens
# a scope, and the fields holding its children.
_Step = tuple[tuple[Handler, ...], tuple[Handler, ...], bool, tuple[str, ...]]


class BatchedVisitor:
    """Runs the `visit_<Node>`/`leave_<Node>` methods of many visitors in a single traversal,
    keeping the context's scope and ancestor stacks current.

    The traversal is `walk`'s, with the dispatch inlined (two calls per node fewer), and the leaves
    that no visitor has a method for passed by: nothing runs at them, and, having no children but
    trivia, they are never an ancestor of a node something runs at."""

    def __init__(self, context: FileContext, visitors: Iterable[object]) -> None:
        self.context = context
        self._visit: dict[str, list[Handler]] = defaultdict(list)
        self._leave: dict[str, list[Handler]] = defaultdict(list)
        for visitor in visitors:
            for attribute in dir(type(visitor)):
                if attribute.startswith("visit_"):
                    self._visit[attribute[6:]].append(getattr(visitor, attribute))
                elif attribute.startswith("leave_"):
                    self._leave[attribute[6:]].append(getattr(visitor, attribute))
        self._skipped = SKIPPED | {leaf for leaf in LEAVES if leaf.__name__ not in self._visit and leaf.__name__ not in self._leave}
        self._steps: dict[type[cst.CSTNode], _Step] = {}

    def _step(self, node_type: type[cst.CSTNode]) -> _Step:
        name = node_type.__name__
        step = self._steps[node_type] = (
            tuple(self._visit.get(name, ())),
            tuple(self._leave.get(name, ())),
            node_type in SCOPE_TYPES,
            children_fields(node_type),
        )
        return step

    def traverse(self, node: cst.CSTNode) -> None:
        """Visit `node` and what lies below it."""
        step = self._steps.get(type(node))
        visits, leaves, scope, fields = self._step(type(node)) if step is None else step
        ancestors = self.context.ancestors
        ancestors.append(node)
        if scope:
            self.context.scopes.append(node)
        for handler in visits:
            handler(node)
        skipped = self._skipped
        for name in fields:
            value = getattr(node, name)
            if type(value) is tuple or type(value) is list:
                for child in value:
                    if type(child) not in skipped:
                        self.traverse(child)
            elif type(value) not in skipped:
                self.traverse(value)
        for handler in leaves:
            handler(node)
        if scope:
            self.context.scopes.pop()
        ancestors.pop()


def replace_node(node: cst.CSTNode, replacement: cst.CSTNode, context: FileContext) -> NodeEdit:
    return NodeEdit(node, context.code_for(replacement))


def import_statement_edit(context: FileContext, module: str) -> tuple[str, NodeEdit | None]:
    """How code inserted here can name `module`, and the `import` to add when nothing binds it yet:
    into the module's opening import block, at its sorted place."""
    alias = context.module_alias(module)
    if alias is not None:
        return alias, None
    placement = import_placement(context.module, f"import {module}", context.module_name.split(".")[0])
    assert placement is not None  # the fix is for a node of this module: it has statements
    return module, NodeEdit(placement.node, placement.text, placement.where)
