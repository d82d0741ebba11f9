"""REP106, REP107, REP208: orders that come from hash values, the file system or thread scheduling
instead of the data."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

import libcst as cst

from repro_lint.core.findings import Applicability, FixAvailability
from repro_lint.core.message_text import QUOTE_LIMIT, elide
from repro_lint.facts.context import FileContext, NodeEdit, PendingFix, import_statement_edit
from repro_lint.facts.dataflow import Kind, Leak, OrderFlow
from repro_lint.facts.module_index import index_for
from repro_lint.facts.names import dotted_name, terminal_name
from repro_lint.facts.traversal import walk
from repro_lint.knowledge import load
from repro_lint.rules.base import Rule, register

_SET_BUILDERS = frozenset({"builtins.set", "builtins.frozenset"})
_HASH = frozenset({"builtins.hash"})
_NUMBER_CALLS = frozenset({"builtins.range", "builtins.int", "builtins.float", "builtins.len", "builtins.ord", "builtins.round"})


def describe_use(leak: Leak, code_for: Callable[[cst.CSTNode], str]) -> str:
    """A few words on how the order is used, for the message."""
    use = leak.use
    if isinstance(use, cst.Subscript):
        return "it is indexed"
    if isinstance(use, cst.Call):
        return f"it is passed to `{elide(code_for(use.func), 20)}`"
    if isinstance(use, cst.Return):
        return "it is returned"
    if isinstance(use, cst.Yield):
        return "it is yielded"
    if isinstance(use, cst.Assign):
        if any(isinstance(target.target, (cst.Tuple, cst.List)) for target in use.targets):
            return "it is unpacked by position"
        if not _contains(use.value, leak.iterable):
            return "elements are numbered in that order"
        return "it is stored"
    if isinstance(use, cst.Break):
        return "a loop picks the first match"
    return "the loop's result depends on the order"


def _contains(outer: cst.CSTNode, inner: cst.CSTNode) -> bool:
    stack = [outer]
    while stack:
        node = stack.pop()
        if node is inner:
            return True
        stack.extend(node.children)
    return False


def _is_number_literal(node: cst.BaseExpression) -> bool:
    if isinstance(node, (cst.Integer, cst.Float, cst.Imaginary)):
        return True
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
        return _is_number_literal(node.expression)
    if isinstance(node, cst.Tuple):
        return all(_is_number_literal(element.value) for element in node.elements)
    return False


class _Elements:
    """Whether a set may hold strings: sets of numbers iterate in the same order in every run."""

    def __init__(self, context: FileContext) -> None:
        self.context = context

    def _numeric(self, node: cst.BaseExpression) -> bool:
        if _is_number_literal(node):
            return True
        if isinstance(node, cst.Call):
            names = self.context.qualified_names(node.func)
            if names & _NUMBER_CALLS:
                return True
            if "builtins.map" in names and node.args:
                return bool(self.context.qualified_names(node.args[0].value) & _NUMBER_CALLS)
        if isinstance(node, (cst.List, cst.Tuple, cst.Set)):
            return bool(node.elements) and all(
                not isinstance(element, cst.StarredElement) and self._numeric(element.value) for element in node.elements
            )
        if isinstance(node, (cst.ListComp, cst.GeneratorExp, cst.SetComp)):
            return self._numeric(node.elt)
        if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Add):
            return self._numeric(node.left) and self._numeric(node.right)
        if isinstance(node, cst.Name):
            return self._annotated_numbers(node.value)
        return False

    def _annotated_numbers(self, name: str) -> bool:
        """A parameter of the enclosing function annotated as a collection of numbers (`List[int]`)."""
        for scope in reversed(self.context.scopes):
            if isinstance(scope, cst.FunctionDef):
                params = scope.params
                for param in (*params.posonly_params, *params.params, *params.kwonly_params):
                    if param.name.value == name:
                        return param.annotation is not None and _numbers_annotation(self.context.code_for(param.annotation.annotation))
        return False

    def may_hold_strings(self, source: cst.CSTNode) -> bool:
        """Whether `source`, the node being visited, may hold strings."""
        ancestors = self.context.ancestors
        annotated = ancestors[-2] if len(ancestors) > 1 else None
        if isinstance(annotated, cst.AnnAssign) and annotated.value is source:
            # `visited: set[int] = set()` says what the set holds.
            return not _numbers_annotation(self.context.code_for(annotated.annotation.annotation))
        if isinstance(source, cst.Set):
            return not self._numeric(source)
        if isinstance(source, cst.SetComp):
            return not self._numeric(source.elt)
        if isinstance(source, cst.Call) and source.args and not source.args[0].star:
            return not self._numeric(source.args[0].value)
        return True


_NUMBER_COLLECTION = re.compile(
    r"^(typing\.)?(List|list|Sequence|Set|set|FrozenSet|frozenset|Iterable|Collection|Tuple|tuple)\[(int|float)(, \.\.\.)?\]$"
)


def _numbers_annotation(text: str) -> bool:
    return _NUMBER_COLLECTION.match(text.replace(" ", "").replace(",...", ", ...")) is not None


def _text_kind(context: FileContext, node: cst.BaseExpression, data: dict[str, list[str]], depth: int = 0) -> str | None:
    """'str' or 'bytes' when `node` evidently holds one, 'hint' when only its name suggests a string,
    None when it may be a number or cannot be told."""
    if isinstance(node, cst.SimpleString):
        return "bytes" if "b" in node.prefix.lower() else "str"
    if isinstance(node, (cst.FormattedString, cst.ConcatenatedString)):
        return "str"
    if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Add):
        left = _text_kind(context, node.left, data, depth + 1)
        return left if left in ("str", "bytes") else _text_kind(context, node.right, data, depth + 1)
    if isinstance(node, cst.Call):
        names = context.qualified_names(node.func)
        if names & frozenset(data["bytes_functions"]):
            return "bytes"
        if names & frozenset(data["str_functions"]):
            return "str"
        if isinstance(node.func, cst.Attribute) and not names:
            method = node.func.attr.value
            if method in data["bytes_methods"]:
                return "bytes"
            if method in data["str_methods"]:
                return "str"
        return None
    if isinstance(node, (cst.Name, cst.Attribute)) and depth < 3:
        dotted = dotted_name(node)
        if dotted is not None and isinstance(node, cst.Name):
            index = index_for(context)
            scope = index.scope(node)
            values = [index.assigned_value(occurrence) for occurrence in index.bindings(dotted, scope)]
            kinds = {_text_kind(context, value[0], data, depth + 1) for value in values if value and value[1] is None}
            if kinds & {"str", "bytes"} and None not in kinds:
                return "bytes" if kinds == {"bytes"} else "str"
        last = terminal_name(node)
        if last is not None and last.lower() in data["name_hints"]:
            return "hint"
    return None


@register
class HashOrderDependence(Rule):
    """An order or index built by iterating a set of strings, or a decision taken on `hash()` of a
    string: both change from run to run because Python salts string hashes per process."""

    code = "REP106"
    name = "hash-order-dependence"
    fix_availability = FixAvailability.ALWAYS
    required_text = ("set", "hash", "{")

    def __init__(self, context: FileContext) -> None:
        super().__init__(context)
        self._elements = _Elements(context)
        self._reported: set[cst.CSTNode] = set()
        self._hashing = load("hashing.json")

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if not isinstance(func, cst.Name) and not (isinstance(func, cst.Attribute) and func.attr.value in ("set", "frozenset")):
            return
        names = self.context.qualified_names(func)
        if names & _SET_BUILDERS:
            self._source(node)
        elif names & _HASH:
            self._hash(node)

    def visit_Set(self, node: cst.Set) -> None:
        self._source(node)

    def visit_SetComp(self, node: cst.SetComp) -> None:
        self._source(node)

    # --- sets -------------------------------------------------------------------------------

    def _source(self, node: cst.CSTNode) -> None:
        if not self._elements.may_hold_strings(node):
            return
        leak = OrderFlow(self.context, escapes=False).leak(node, Kind.SET)
        if leak is None or leak.iterable in self._reported:
            return
        self._reported.add(leak.iterable)
        iterable = leak.iterable
        text = self.context.code_for(iterable)
        shown = f"`{text}`" if len(text) <= QUOTE_LIMIT and "\n" not in text else "this set"
        how = describe_use(leak, self.context.code_for)
        self.report(
            iterable,
            f"{shown} iterates in a per-run order (string hashes are salted), and {how}",
            PendingFix(Applicability.SAFE, "Wrap the set in `sorted(...)`", (self._sorted_edit(iterable, text),)),
        )

    def _sorted_edit(self, iterable: cst.CSTNode, text: str) -> NodeEdit:
        """`list(s)` becomes `sorted(s)`; anything else is wrapped: `enumerate(sorted(s))`."""
        index = index_for(self.context)
        arg = index.parent(iterable)
        call = index.parent(arg) if arg is not None else None
        if (
            isinstance(arg, cst.Arg)
            and arg.keyword is None
            and not arg.star
            and isinstance(call, cst.Call)
            and len(call.args) == 1
            and isinstance(call.func, cst.Name)
            and "builtins.list" in self.context.qualified_names(call.func)
        ):
            return NodeEdit(call.func, "sorted")
        return NodeEdit(iterable, f"sorted({text})")

    # --- hash() -----------------------------------------------------------------------------

    def _hash(self, node: cst.Call) -> None:
        if len(node.args) != 1 or node.args[0].star or node.args[0].keyword is not None:
            return
        value = node.args[0].value
        kind = _text_kind(self.context, value, self._hashing)
        decision = self._decision(node)
        if kind is None or decision is None:
            return
        zlib, import_edit = import_statement_edit(self.context, "zlib")
        text = self.context.code_for(value)
        if kind == "bytes":
            data = text
        elif kind == "str":
            atomic = isinstance(value, (cst.Name, cst.Attribute, cst.Call, cst.Subscript, cst.SimpleString, cst.FormattedString))
            data = f"{text}.encode()" if atomic else f"({text}).encode()"
        else:
            data = f"str({text}).encode()"
        replacement = f"{zlib}.crc32({data})"
        edits = (NodeEdit(node, replacement),) + ((import_edit,) if import_edit is not None else ())
        self.report(
            node,
            f"`hash()` of text {decision}, but str and bytes hashes are salted per process (PYTHONHASHSEED)",
            PendingFix(Applicability.UNSAFE, f"Use `{replacement}`", edits),
        )

    def _decision(self, node: cst.Call) -> str | None:
        """What the hash decides, when it decides membership, order or a seed."""
        index = index_for(self.context)
        child: cst.CSTNode = node
        for parent in index.ancestors(node):
            if isinstance(parent, cst.BinaryOperation) and isinstance(
                parent.operator, (cst.Modulo, cst.BitAnd, cst.FloorDivide, cst.RightShift)
            ):
                return "picks a bucket"
            if isinstance(parent, cst.Comparison):
                return "is compared to pick a side"
            if isinstance(parent, cst.Lambda):
                arg = index.parent(parent)
                if isinstance(arg, cst.Arg) and arg.keyword is not None and arg.keyword.value == "key":
                    return "orders the elements"
                return None
            if isinstance(parent, cst.Arg):
                call = index.parent(parent)
                if not isinstance(call, cst.Call):
                    return None
                names = self.context.qualified_names(call.func)
                if names & frozenset(self._hashing["seeding"]) or (
                    isinstance(call.func, cst.Attribute) and call.func.attr.value == "manual_seed"
                ):
                    return "seeds a random generator"
                if names & {"builtins.abs", "builtins.int"}:
                    child = call
                    continue
                return None
            if parent is child:
                continue
            if isinstance(parent, cst.UnaryOperation):
                child = parent
                continue
            return None
        return None


def _listings() -> tuple[dict[str, dict[str, object]], dict[str, dict[str, object]], frozenset[str], frozenset[str]]:
    data = load("file_listing.json")
    return data["functions"], data["path_methods"], frozenset(data["non_path_receivers"]), frozenset(data["build_script_calls"])


LISTING_FUNCTIONS, PATH_METHODS, NON_PATH_RECEIVERS, BUILD_SCRIPT_CALLS = _listings()
_LISTING_SHORT = frozenset(name.rpartition(".")[2] for name in LISTING_FUNCTIONS)


@register
class UnsortedFileListing(Rule):
    """A directory listing used in the order the file system returns: that order differs between
    file systems and machines, so the dataset, its split or its class indices differ too."""

    code = "REP107"
    name = "unsorted-file-listing"
    fix_availability = FixAvailability.SOMETIMES
    required_text = ("listdir", "scandir", "walk", "glob", "iterdir")

    def visit_Module(self, node: cst.Module) -> None:
        self._build_script = self._calls_setup(node.body)

    def _calls_setup(self, statements: Sequence[cst.BaseStatement]) -> bool:
        """A build script (`setup(...)` at module level, also under an `if` there, such as its main
        guard): the order of the sources and data files it lists changes no result."""
        for statement in statements:
            if isinstance(statement, cst.If) and self._calls_setup(statement.body.body):
                return True
            if isinstance(statement, cst.SimpleStatementLine) and any(
                isinstance(small, cst.Expr) and isinstance(small.value, cst.Call) and self.context.matches(small.value.func, BUILD_SCRIPT_CALLS)
                for small in statement.body
            ):
                return True
        return False

    def visit_Call(self, node: cst.Call) -> None:
        if self._build_script:
            return
        entry, label = self._listing(node)
        if entry is None:
            return
        flow = OrderFlow(self.context, listing=True)
        leak = self._walk_leak(node, flow) if entry["walk"] else flow.leak(node, Kind.SEQUENCE)
        if leak is None:
            return
        how = describe_use(leak, self.context.code_for)
        fix = self._fix(node, entry)
        self.report(
            node,
            f"`{elide(label)}` lists files in file-system order, which varies by machine, and {how}",
            fix,
        )

    def _listing(self, node: cst.Call) -> tuple[dict[str, object] | None, str]:
        func = node.func
        short = terminal_name(func)
        # A bare name may be an import alias (`from os import listdir as ls`), so it is always resolved.
        if short in _LISTING_SHORT or isinstance(func, cst.Name):
            qualified = self.context.matches(func, LISTING_FUNCTIONS)
            if qualified is not None:
                return LISTING_FUNCTIONS[qualified], qualified
        if isinstance(func, cst.Attribute) and short in PATH_METHODS:
            receiver = func.value
            names = self.context.qualified_names(receiver)
            if names and not any(name.startswith("pathlib.") for name in names):
                return None, ""  # a module function (`glob.glob`, `tf.io.gfile.glob`), not a Path method
            last = terminal_name(receiver)
            if last is not None and last in NON_PATH_RECEIVERS:
                return None, ""
            return PATH_METHODS[short], f"Path.{short}"
        return None, ""

    def _walk_leak(self, node: cst.Call, flow: OrderFlow) -> Leak | None:
        """`os.walk` yields (folder, subfolders, files): the folder order follows `subfolders` unless it
        is sorted in place, and each `files` list is unsorted."""
        index = index_for(self.context)
        parent = index.parent(node)
        if isinstance(parent, cst.For) and parent.iter is node and isinstance(parent.target, (cst.Tuple, cst.List)):
            names = [dotted_name(element.value) for element in parent.target.elements]
            folders_sorted = len(names) > 1 and names[1] is not None and _sorts_in_place(parent.body, names[1])
            if not folders_sorted:
                leak = flow.leak(node, Kind.SEQUENCE)
                if leak is not None:
                    return leak
            for name in names[1:3]:
                if name is not None:
                    leak = flow.leak_of_name(name, parent.iter, node)
                    if leak is not None:
                        return leak
            return None
        if isinstance(parent, cst.Arg):
            call = index.parent(parent)
            if isinstance(call, cst.Call) and "builtins.next" in self.context.qualified_names(call.func):
                # `next(os.walk(d))` is the top folder itself; its lists of subfolders and files are unsorted.
                return self._first_walk_step(call, flow)
        return flow.leak(node, Kind.SEQUENCE)

    def _first_walk_step(self, call: cst.Call, flow: OrderFlow) -> Leak | None:
        index = index_for(self.context)
        parent = index.parent(call)
        if isinstance(parent, cst.Subscript) and parent.value is call and len(parent.slice) == 1:
            position = parent.slice[0].slice
            if isinstance(position, cst.Index) and isinstance(position.value, cst.Integer) and position.value.value in ("1", "2"):
                return flow.leak(parent, Kind.SEQUENCE)
            return None
        if isinstance(parent, cst.Assign) and len(parent.targets) == 1 and isinstance(parent.targets[0].target, cst.Tuple):
            elements = parent.targets[0].target.elements
            for element in elements[1:3]:
                name = dotted_name(element.value)
                if name is not None:
                    leak = flow.leak_of_name(name, parent, call)
                    if leak is not None:
                        return leak
        return None

    def _fix(self, node: cst.Call, entry: dict[str, object]) -> PendingFix | None:
        index = index_for(self.context)
        parent = index.parent(node)
        if entry["fix"] is None or isinstance(parent, cst.WithItem):
            return None
        if isinstance(parent, cst.Arg):
            call = index.parent(parent)
            if isinstance(call, cst.Call) and "builtins.next" in self.context.qualified_names(call.func):
                return None  # `next(sorted(...))` would raise: a list is not an iterator
        text = self.context.code_for(node)
        replacement = f"sorted({text}, key=lambda entry: entry.name)" if entry["fix"] == "by_name" else f"sorted({text})"
        return PendingFix(Applicability.SAFE, "Sort the listing", (NodeEdit(node, replacement),))


def _sorts_in_place(body: cst.CSTNode, name: str) -> bool:
    """`dirs.sort()` or `dirs[:] = sorted(dirs)` in a walk loop's body."""
    found = False

    class Find(cst.CSTVisitor):
        def visit_Call(self, node: cst.Call) -> None:
            nonlocal found
            func = node.func
            if isinstance(func, cst.Attribute) and func.attr.value == "sort" and dotted_name(func.value) == name:
                found = True

        def visit_Assign(self, node: cst.Assign) -> None:
            nonlocal found
            for target in node.targets:
                if isinstance(target.target, cst.Subscript) and dotted_name(target.target.value) == name:
                    found = True

    walk(body, Find())
    return found


def _completion_order() -> tuple[dict[str, str], dict[str, str | None], dict[str, str]]:
    data = load("completion_order.json")
    return data["functions"], data["methods"], data["pairs"]


COMPLETION_FUNCTIONS, COMPLETION_METHODS, COMPLETION_PAIRS = _completion_order()
_COMPLETION_SHORT = frozenset(name.rpartition(".")[2] for name in (*COMPLETION_FUNCTIONS, *COMPLETION_PAIRS))


@register
class CompletionOrderResults(Rule):
    """Results gathered as they finish (`as_completed`, `imap_unordered`, `ray.wait` in a loop) and
    then used in that order: it follows thread and process scheduling, so it changes from run to run."""

    code = "REP208"
    name = "completion-order-results"
    fix_availability = FixAvailability.SOMETIMES
    required_text = ("as_completed", "imap_unordered", "wait")

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        short = terminal_name(func)
        if isinstance(func, cst.Attribute) and short in COMPLETION_METHODS:
            self._check(node, f".{short}(...)", self._flow().leak(node, Kind.SEQUENCE), COMPLETION_METHODS[short])
            return
        if short not in _COMPLETION_SHORT and not isinstance(func, cst.Name):
            return
        function = self.context.matches(func, COMPLETION_FUNCTIONS)
        if function is not None:
            self._check(node, f"{COMPLETION_FUNCTIONS[function]}(...)", self._flow().leak(node, Kind.SEQUENCE), None)
            return
        pair = self.context.matches(func, COMPLETION_PAIRS)
        if pair is not None:
            finished = self._finished_in_loop(node)
            if finished is not None:
                self._check(node, f"{COMPLETION_PAIRS[pair]}(...)", self._flow().leak_of_name(finished, index_for(self.context).parent(node), node), None)

    def _flow(self) -> OrderFlow:
        # Results handed back to the caller are the caller's to order: often only error messages
        # or names, reduced or logged there.
        return OrderFlow(self.context, escapes=False, results=True)

    def _finished_in_loop(self, node: cst.Call) -> str | None:
        """The name of the finished list in `done, pending = ray.wait(pending)` inside a loop: one call
        gives the finished refs in input order, a loop of them gathers results as they finish."""
        index = index_for(self.context)
        assign = index.parent(node)
        if not (isinstance(assign, cst.Assign) and len(assign.targets) == 1 and isinstance(assign.targets[0].target, (cst.Tuple, cst.List))):
            return None
        elements = assign.targets[0].target.elements
        loop = index.enclosing(node, (cst.For, cst.While, cst.FunctionDef, cst.ClassDef))
        if not elements or not isinstance(loop, (cst.For, cst.While)):
            return None
        return dotted_name(elements[0].value)

    def _check(self, node: cst.Call, label: str, leak: Leak | None, in_order: str | None) -> None:
        if leak is None or index_for(self.context).never_runs(node):
            return
        fix = None
        if in_order is not None and isinstance(node.func, cst.Attribute):
            fix = PendingFix(
                Applicability.UNSAFE,
                f"Use `{in_order}`, which yields results in input order (it may be slower)",
                (NodeEdit(node.func.attr, in_order),),
            )
        how = describe_use(leak, self.context.code_for)
        self.report(node, f"`{elide(label)}` gives results in a per-run completion order, and {how}", fix)
