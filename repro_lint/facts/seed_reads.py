"""Where a module reads seed settings for their value, and where it hands a whole options object
to other code (REP109).

A seed option is used when its value is read anywhere but in what only shows it (`print`, a logger,
an experiment tracker's config record), tests it (`if args.seed is not None:`) or writes it into
text that names something (a run or a repository: `f"{env}-seed{args.seed}"`); text holding a
command-line option (`f"python split.py --seed {args.seed}"`) hands it to the program it runs.
Which use then reaches a seeding call is not followed: any read counts, so the rule stays silent
wherever the value may reach one. An options object handed whole to code the analysis may not see
(`vars(args)`, `Trainer(args)` from a library) may be read there; the project pass decides which
callees it can see.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

import libcst as cst

from repro_lint.facts.context import FileContext
from repro_lint.facts.edits import literal
from repro_lint.facts.seed_values import CONFIG_OBJECTS
from repro_lint.facts.traversal import node_types
from repro_lint.knowledge import load

_DATA = load("seed_options.json")
_PARSE_METHODS = frozenset(_DATA["parse_methods"])
_SINK_CALLS = frozenset(_DATA["sink_calls"])
_SINK_METHODS = frozenset(_DATA["sink_methods"])
_WHOLE_CONVERTERS = frozenset(_DATA["whole_converters"])
_INERT_CALLS = frozenset(_DATA["inert_calls"])
# `d.get("seed")`, `d.pop("seed", 0)`: a read by key.
_GETATTR = "builtins.getattr"
_KEY_METHODS = frozenset({"get", "pop", "setdefault"})
# Where a read only decides whether code runs.
_TESTS = frozenset((cst.If, cst.While, cst.IfExp, cst.Assert))
_STATEMENTS = node_types(cst.BaseSmallStatement, cst.BaseCompoundStatement)
# A command-line option in text (`python split.py --seed {}`): the text is a command another program runs.
_COMMAND_OPTION = re.compile(r"(?:^|\s)--?[A-Za-z]")


# The "function" of code under a module's main guard: it runs only when that module is the program.
MAIN_BLOCK = "<main>"


def option_attribute(name: str) -> str:
    """The attribute an option or field is read by: `--random-seed` is `args.random_seed`."""
    return name.lstrip("-").replace("-", "_")


def _seed_like(name: str) -> bool:
    return "seed" in name.lower()


@dataclass
class HandedOver:
    """A call given a whole options object: the names its callee may denote, or its method."""

    node: cst.Call
    targets: tuple[str, ...]
    method: str | None
    holder: str  # the name holding the object (`args`)
    function: str | None  # the function it is made in, None at module level


@dataclass
class SeedReadsCollector:
    """Batched-visitor part (driven by the facts collector) recording seed reads and hand-overs."""

    context: FileContext
    function: Callable[[], str | None]  # the function being visited, None at module level, MAIN_BLOCK under the main guard
    names: set[tuple[str, str | None]] = field(default_factory=set)  # read names, with their function
    handed_over: list[HandedOver] = field(default_factory=list)
    converted: set[tuple[str, str | None]] = field(default_factory=set)  # holders turned into mappings (`vars(args)`)
    _parsed: set[str] = field(default_factory=set)  # names bound to a parse result in this module
    _called: set[int] = field(default_factory=set)  # callee nodes: `np.random.seed` is no read
    # Where the module binds no parse result (none of the parse methods is in its text), only the usual
    # names hold an options object: a call handing over nothing under those keeps nothing.
    _any_holder: bool = field(init=False)

    def __post_init__(self) -> None:
        self._any_holder = any(method in self.context.source for method in _PARSE_METHODS)

    def handed_over_options(self) -> list[HandedOver]:
        """The hand-overs of an options object: held under a usual name, or a parse result's."""
        holders = frozenset(CONFIG_OBJECTS) | self._parsed
        return [handed for handed in self.handed_over if handed.holder in holders]

    def converting_options(self) -> frozenset[tuple[str, str | None]]:
        """The holders turned into a mapping, with their functions (None: module level)."""
        holders = frozenset(CONFIG_OBJECTS) | self._parsed
        return frozenset((holder, function) for holder, function in self.converted if holder in holders)

    @property
    def parsed(self) -> frozenset[str]:
        return frozenset(self._parsed)

    def visit_Assign(self, node: cst.Assign) -> None:
        value = node.value
        if isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and value.func.attr.value in _PARSE_METHODS:
            for target in node.targets:
                bound = target.target
                names = [element.value for element in bound.elements] if isinstance(bound, (cst.Tuple, cst.List)) else [bound]
                self._parsed.update(name.value for name in names if isinstance(name, cst.Name))

    def visit_Attribute(self, node: cst.Attribute) -> None:
        name = node.attr.value
        if id(node) in self._called:
            return
        if name == "__dict__":
            holder = _holder(node.value)
            if holder is not None and self._uses_value():
                self.converted.add((holder, self.function()))
        elif _seed_like(name) and self._uses_value():
            self.names.add((name, self.function()))

    def visit_Subscript(self, node: cst.Subscript) -> None:
        if len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Index):
            key = literal(node.slice[0].slice.value)
            if isinstance(key, str) and _seed_like(key) and self._uses_value():
                self.names.add((key, self.function()))

    def visit_Call(self, node: cst.Call, targets: frozenset[str]) -> None:
        func = node.func
        self._called.add(id(func))
        method = func.attr.value if isinstance(func, cst.Attribute) else None
        if (targets & _SINK_CALLS) or method in _SINK_METHODS:
            return
        keyed = method in _KEY_METHODS or _GETATTR in targets
        if not keyed and not targets & _WHOLE_CONVERTERS and (targets & _INERT_CALLS or not self._hands_over(node)):
            return  # asked first: whether the call's value is used walks up its ancestors
        if not self._uses_value():
            return
        positional = [arg for arg in node.args if arg.keyword is None and not arg.star]
        if keyed:
            at = 1 if _GETATTR in targets else 0
            key = literal(positional[at].value) if len(positional) > at else None
            if isinstance(key, str):
                if _seed_like(key):
                    self.names.add((key, self.function()))
            elif _GETATTR in targets and positional and (holder := _holder(positional[0].value)) is not None:
                self.converted.add((holder, self.function()))  # `getattr(args, name)`: any attribute
            return
        if targets & _WHOLE_CONVERTERS:
            holders = {_holder(arg.value) for arg in node.args}
            self.converted.update((holder, self.function()) for holder in holders if holder is not None)
            return
        if targets & _INERT_CALLS:
            return
        for arg in node.args:
            holder = _holder(arg.value)
            if holder is not None:
                self.handed_over.append(HandedOver(node, tuple(sorted(targets)), method, holder, self.function()))

    def _hands_over(self, call: cst.Call) -> bool:
        """Whether an argument of `call` may be an options object that `handed_over_options` keeps."""
        holders = (_holder(arg.value) for arg in call.args)
        return any(holders) if self._any_holder else any(holder in CONFIG_OBJECTS for holder in holders)

    def _uses_value(self) -> bool:
        """Whether the node being visited is read for its value: not an assignment's target, and not
        only shown (printed, logged) or tested."""
        ancestors = self.context.ancestors
        for depth in range(len(ancestors) - 2, -1, -1):
            ancestor, child = ancestors[depth], ancestors[depth + 1]
            kind = type(ancestor)
            if kind is cst.Comparison:
                return False
            if kind in (cst.AssignTarget, cst.Del) or (kind in (cst.AugAssign, cst.AnnAssign) and child is ancestor.target):
                return False
            if kind in _TESTS and child is ancestor.test:
                return False
            if kind is cst.Call and child is not ancestor.func and _shows(ancestor, self.context):
                return False
            template = _template(ancestor, child)
            if template is not None:
                return _COMMAND_OPTION.search(template) is not None
            if kind in _STATEMENTS:
                return True
        return True


def _shows(call: cst.Call, context: FileContext) -> bool:
    func = call.func
    if isinstance(func, cst.Attribute) and func.attr.value in _SINK_METHODS:
        return True
    return bool(context.qualified_names(func) & _SINK_CALLS)


def _template(node: cst.CSTNode, child: cst.CSTNode) -> str | None:
    """The text that `node` writes `child` into (an f-string, `"..." % x`, `"...".format(x)`),
    with `{}` for each value; None when `node` builds no text from it."""
    # Asked of every ancestor of most calls: exact types (see names.py).
    if type(node) is cst.FormattedString:
        return "".join(part.value if isinstance(part, cst.FormattedStringText) else "{}" for part in node.parts)
    if type(node) is cst.BinaryOperation and isinstance(node.operator, cst.Modulo) and child is node.right:
        text = node.left.evaluated_value if isinstance(node.left, cst.SimpleString) else None
        return text if isinstance(text, str) else None
    if type(node) is cst.Call and child is not node.func:
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value == "format" and isinstance(func.value, cst.SimpleString):
            text = func.value.evaluated_value
            return text if isinstance(text, str) else None
    return None


def _holder(node: cst.BaseExpression) -> str | None:
    """The name an expression holding an options object goes by: `args`, or `cfg` in `self.cfg`."""
    # Asked of every argument of most calls: exact types (see names.py).
    if type(node) is cst.Name:
        return node.value
    if type(node) is cst.Attribute:
        return node.attr.value
    return None
