"""A small, per-module data flow: where does a value whose order is arbitrary (a directory listing, a
set) go after the expression that made it?

Several rules need more than one statement to decide: a directory listing is harmless when the list
is sorted two lines later (REP107), a set is harmless when it is only used for membership (REP106).
`OrderFlow` follows such a value through expressions, names, attributes and loops to its first
order-dependent use, if any, over the module's `ModuleIndex` (module_index.py).

The analysis is deliberately simple and errs towards silence: it is flow-insensitive about
conditions (a sort on any path counts as sorting, as the catalog asks), it does not follow values
into other functions' parameters, and a value it cannot follow is treated as harmless.

It is one module although longer than most: the steps through one expression, the following of a
name to its later uses and the reading of a loop body are one recursion (a name leads to expressions,
an expression to a loop, a loop to the collections it fills, which are names again) over one
vocabulary of kinds and outcomes.
"""

from __future__ import annotations

import enum
from collections.abc import Iterator
from dataclasses import dataclass

import libcst as cst

from repro_lint.core.records import pickled_by_constructor
from repro_lint.facts.context import FileContext
from repro_lint.facts.module_index import ModuleIndex, index_for, is_self_attribute, owning_class
from repro_lint.facts.names import dotted_name, terminal_name
from repro_lint.facts.traversal import OwnScopeVisitor, names_in, walk
from repro_lint.knowledge import load


class Kind(enum.Enum):
    SEQUENCE = "sequence"  # a list or iterator in an arbitrary order
    SET = "set"  # a set or dict view: order-free itself, but iterating it gives an arbitrary order
    MAPPING = "mapping"  # a dict whose keys were inserted in an arbitrary order
    HOLDER = "holder"  # a dict holding such a sequence as one of its values (`{"files": glob(...)}`)


@pickled_by_constructor
@dataclass(frozen=True, slots=True)
class Leak:
    """Where an arbitrary order becomes observable, and the expression whose iteration order it is."""

    use: cst.CSTNode
    iterable: cst.CSTNode


class _Stop:
    """The value is sorted here (`files.sort()`): nothing after this point sees the arbitrary order."""


STOP = _Stop()
Outcome = Leak | _Stop | None


@pickled_by_constructor
@dataclass(frozen=True, slots=True)
class _Next:
    node: cst.CSTNode
    kind: Kind
    iterable: cst.CSTNode


class _Vocabulary:
    """What calls and methods do with the order of their argument (`knowledge/order_uses.json`)."""

    def __init__(self) -> None:
        data = load("order_uses.json")
        self.sorting = frozenset(data["sorting"])
        self.order_free = frozenset(data["order_free"]) | self.sorting
        self.order_free_methods = frozenset(data["order_free_methods"])
        self.order_keeping = frozenset(data["order_keeping"])
        self.order_keeping_methods = frozenset(data["order_keeping_methods"])
        self.order_using = frozenset(data["order_using"])
        self.kind_keeping = frozenset(data["kind_keeping"])
        self.order_numbering = frozenset(data["order_numbering"])
        self.set_methods = frozenset(data["set_methods"])
        self.mapping_views = frozenset(data["mapping_views"])
        self.growers = frozenset(data["growers"])
        self.writers = frozenset(load("completion_order.json")["writers"])


VOCABULARY = _Vocabulary()
_MAX_DEPTH = 24


def _is_full_slice(node: cst.Subscript) -> bool:
    return (
        len(node.slice) == 1
        and isinstance(node.slice[0].slice, cst.Slice)
        and node.slice[0].slice.lower is None
        and node.slice[0].slice.upper is None
    )


class OrderFlow:
    """Follows a value in an arbitrary order to its first order-dependent use."""

    def __init__(self, context: FileContext, escapes: bool = True, results: bool = False, listing: bool = False) -> None:
        """`escapes`: whether a sequence returned or yielded to the caller counts as used in order. A
        listing returned by a helper is the caller's file list; a list made from a set and returned
        (`return list(names)`) is more often a collection of names, so REP106 leaves it to the caller.
        `results`: the value is a stream of results in completion order (REP208). A loop over it that
        writes each result out (`f.write(...)`) stores them in that order; one that stores each
        result under its own key (`out[index] = result`) puts them back in input order.
        `listing`: the value is a directory listing, which REP107's row reports "stored, indexed,
        enumerated": numbering its elements (`for i, f in enumerate(files)`) uses their order whatever
        the loop then does with the numbers (otherwise the loop body decides), and a dict holding it
        under a key (`{"files": glob(...)}`) carries it on (otherwise the flow stops there)."""
        self.context = context
        self.index = index_for(context)
        self.words = VOCABULARY
        self.escapes = escapes
        self.results = results
        self.listing = listing
        self._seen: set[tuple[str, cst.CSTNode]] = set()

    def leak(self, source: cst.CSTNode, kind: Kind) -> Leak | None:
        """The first order-dependent use of `source`'s value, or None when every use is order-free,
        sorted first, or cannot be followed."""
        self._seen = set()
        outcome = self._follow(source, kind, source, 0)
        return outcome if isinstance(outcome, Leak) else None

    def leak_of_name(self, dotted: str, anchor: cst.CSTNode, source: cst.CSTNode) -> Leak | None:
        """The first order-dependent use of a sequence bound to `dotted` at `anchor` (a loop target
        such as `os.walk`'s list of files), reported against `source`."""
        self._seen = set()
        outcome = self._bound(dotted, anchor, Kind.SEQUENCE, source, 0)
        return outcome if isinstance(outcome, Leak) else None

    # --- one expression up to its statement --------------------------------------------------

    def _follow(self, node: cst.CSTNode, kind: Kind, iterable: cst.CSTNode, depth: int) -> Outcome:
        step: _Next | Outcome = _Next(node, kind, iterable)
        while isinstance(step, _Next):
            if depth > _MAX_DEPTH:
                return None
            depth += 1
            step = self._step(step.node, step.kind, step.iterable, depth)
        if isinstance(step, Leak) and self.index.enclosing(step.use, (cst.Raise, cst.Assert)) is not None:
            return None  # an error message naming an arbitrary element changes no result
        return step

    def _step(self, child: cst.CSTNode, kind: Kind, iterable: cst.CSTNode, depth: int) -> _Next | Outcome:
        parent = self.index.parent(child)
        # A conversion from a set to a sequence: from here on the set's iteration order is what leaks.
        to_sequence = iterable if kind is Kind.SEQUENCE else child
        if parent is None:
            return None
        if kind is Kind.HOLDER:
            return self._holder(parent, child, iterable, depth)
        if isinstance(parent, (cst.DictElement, cst.DictComp)) and parent.value is child and kind is Kind.SEQUENCE and self.listing:
            # Stored under a key: the dict carries the sequence to wherever it goes.
            return _Next(parent if isinstance(parent, cst.DictComp) else self.index.parent(parent), Kind.HOLDER, iterable)
        if isinstance(parent, cst.Arg):
            call = self.index.parent(parent)
            if not isinstance(call, cst.Call) or parent.keyword is not None and parent.keyword.value == "key":
                return None
            return self._argument(call, parent, child, kind, iterable, depth)
        if isinstance(parent, cst.Comparison):
            return None
        if isinstance(parent, (cst.If, cst.While, cst.Assert, cst.UnaryOperation, cst.FormattedStringExpression)):
            return None
        if isinstance(parent, cst.IfExp):
            return None if parent.test is child else _Next(parent, kind, iterable)
        if isinstance(parent, cst.BooleanOperation):
            return _Next(parent, kind, iterable)
        if isinstance(parent, cst.Subscript):
            return self._subscript(parent, child, kind, iterable)
        if isinstance(parent, cst.Attribute):
            return self._attribute(parent, kind, iterable)
        if isinstance(parent, cst.BinaryOperation):
            return self._binary(parent, kind, iterable)
        if isinstance(parent, cst.CompFor):
            return self._comprehension(parent, child, kind, iterable)
        if isinstance(parent, (cst.ListComp, cst.GeneratorExp)) and parent.elt is child:
            return _Next(parent, kind, iterable) if kind is Kind.SEQUENCE else None
        if isinstance(parent, (cst.Element, cst.StarredElement)):
            return self._element(parent, child, kind, iterable)
        if isinstance(parent, cst.For):
            return self._loop(parent, kind, to_sequence, depth) if parent.iter is child else None
        if isinstance(parent, (cst.Assign, cst.AnnAssign, cst.AugAssign, cst.NamedExpr)):
            return self._assignment(parent, child, kind, iterable, depth)
        if isinstance(parent, cst.Return):
            return Leak(parent, iterable) if kind is Kind.SEQUENCE and self.escapes else None
        if isinstance(parent, cst.Yield):
            if not self.escapes:
                return None
            if kind is Kind.SEQUENCE:
                return Leak(parent, iterable)
            return Leak(parent, child) if isinstance(parent.value, cst.From) else None
        if isinstance(parent, cst.From):
            return _Next(parent, kind, iterable)
        if isinstance(parent, cst.Await):
            return _Next(parent, kind, iterable)
        if isinstance(parent, cst.WithItem) and parent.item is child and parent.asname is not None:
            target = dotted_name(parent.asname.name)
            return self._bound(target, parent, kind, iterable, depth) if target else None
        return None

    def _argument(
        self, call: cst.Call, arg: cst.Arg, child: cst.CSTNode, kind: Kind, iterable: cst.CSTNode, depth: int
    ) -> _Next | Outcome:
        to_sequence = iterable if kind is Kind.SEQUENCE else child
        names = self.context.qualified_names(call.func)
        words = self.words
        if names & {"builtins.set", "builtins.frozenset"}:
            # A set of a listing forgets the listing's order; a set of a set is that set again.
            return _Next(call, Kind.SET, iterable) if kind is Kind.SET else None
        if "builtins.next" in names and kind is Kind.SEQUENCE and self.listing:
            # `next(Path(d).glob("*.xml"))` takes the first entry in directory order (the catalog's
            # **Order**), unless only tested: `next(d.iterdir(), None) is None` asks whether d is
            # empty. `next(iter(s))` of a set stays order-free below.
            return None if _only_tested(self.index, call) else Leak(call, to_sequence)
        if names & words.order_free:
            return None
        if "builtins.dict.fromkeys" in names:
            return _Next(call, Kind.MAPPING, to_sequence)
        if "builtins.dict" in names:
            # `dict(files=listing)` stores it under a key; `dict(pairs)` orders nothing.
            return _Next(call, Kind.HOLDER, to_sequence) if arg.keyword is not None and kind is Kind.SEQUENCE and self.listing else None
        if names & words.kind_keeping:
            return _Next(call, kind, iterable)
        if names & words.order_keeping:
            if names & {"builtins.filter", "builtins.map"} and call.args and call.args[0] is arg:
                return None
            if names & {"builtins.zip", "itertools.zip_longest"} and any(
                isinstance(other.value, cst.Call) and self.context.qualified_names(other.value.func) & words.order_numbering
                for other in call.args
                if other is not arg
            ):
                return Leak(call, to_sequence)  # `zip(names, range(n))` numbers the elements in their order
            return _Next(call, Kind.SEQUENCE, to_sequence)
        loop = self.index.parent(call)
        if "builtins.enumerate" in names and isinstance(loop, cst.For) and loop.iter is call and not self.listing:
            # `for i, x in enumerate(files)`: what the body does with the numbers decides.
            return self._loop(loop, kind, to_sequence, depth, numbered=True)
        if names & words.order_using:
            return Leak(call, to_sequence)
        if isinstance(call.func, cst.Attribute) and not names:
            # A method of some object: `pool.map(f, files)`, `samples.extend(files)`, `log.info(files)`.
            method = call.func.attr.value
            if method in words.growers:
                receiver = dotted_name(call.func.value)
                if receiver is None or (kind is not Kind.SEQUENCE and method != "extend"):
                    return None
                return self._bound(receiver, self.index.statement(call), Kind.SEQUENCE, to_sequence, depth)
            if method in words.order_free_methods:
                return None
            if method in words.order_keeping_methods:
                return _Next(call, Kind.SEQUENCE, to_sequence)
        # Anything else stores or consumes the sequence in its order; a set handed over is still a set.
        return Leak(call, iterable) if kind is Kind.SEQUENCE else None

    def _holder(self, parent: cst.CSTNode, child: cst.CSTNode, iterable: cst.CSTNode, depth: int) -> _Next | Outcome:
        """A step of a dict holding the sequence as a value. Reading a value (`d["files"]`,
        `d.get("files")`) may give the sequence back; handing the dict to other code (`json.dump(d,
        f)`, `Dataset(**d)`), returning it or storing it stores the sequence in its order. What reads
        only its keys (iteration, `list(d)`, `len(d)`) or merges it into another dict is not followed."""
        if isinstance(parent, cst.Arg):
            call = self.index.parent(parent)
            if not isinstance(call, cst.Call):
                return None
            names = self.context.qualified_names(call.func)
            if names & self.words.kind_keeping:
                return _Next(call, Kind.HOLDER, iterable)
            if any(name.startswith("builtins.") for name in names) or names & self.words.order_free:
                return None
            if isinstance(call.func, cst.Attribute) and not names:
                method = call.func.attr.value
                words = self.words
                if method in words.growers or method in words.order_free_methods or method in words.order_keeping_methods:
                    return None
            return Leak(call, iterable)
        if isinstance(parent, cst.Subscript):
            if parent.value is not child or isinstance(self.index.parent(parent), (cst.AssignTarget, cst.Del)):
                return None
            return _Next(parent, Kind.SEQUENCE, iterable)
        if isinstance(parent, cst.Attribute):
            call = self.index.parent(parent)
            if not (isinstance(call, cst.Call) and call.func is parent):
                return None
            if parent.attr.value in ("get", "pop"):
                return _Next(call, Kind.SEQUENCE, iterable)
            return _Next(call, Kind.HOLDER, iterable) if parent.attr.value == "copy" else None
        if isinstance(parent, cst.IfExp):
            return None if parent.test is child else _Next(parent, Kind.HOLDER, iterable)
        if isinstance(parent, (cst.BooleanOperation, cst.Await)):
            return _Next(parent, Kind.HOLDER, iterable)
        if isinstance(parent, (cst.Assign, cst.AnnAssign, cst.NamedExpr)):
            return self._assignment(parent, child, Kind.HOLDER, iterable, depth)
        if isinstance(parent, cst.Return) or isinstance(parent, cst.Yield) and not isinstance(parent.value, cst.From):
            return Leak(parent, iterable) if self.escapes else None
        return None

    def _subscript(self, parent: cst.Subscript, child: cst.CSTNode, kind: Kind, iterable: cst.CSTNode) -> _Next | Outcome:
        if parent.value is not child or kind is not Kind.SEQUENCE:
            return None
        container = self.index.parent(parent)
        if isinstance(container, cst.AssignTarget):
            # `files[:] = sorted(files)` sorts in place; any other store into the list reads no order.
            assign = self.index.parent(container)
            if (
                _is_full_slice(parent)
                and isinstance(assign, cst.Assign)
                and isinstance(assign.value, cst.Call)
                and self.context.qualified_names(assign.value.func) & self.words.sorting
            ):
                return STOP
            return None
        if isinstance(container, cst.Del):
            return None
        return Leak(parent, iterable)

    def _attribute(self, parent: cst.Attribute, kind: Kind, iterable: cst.CSTNode) -> _Next | Outcome:
        call = self.index.parent(parent)
        if not (isinstance(call, cst.Call) and call.func is parent):
            return None
        method = parent.attr.value
        if kind is Kind.SEQUENCE:
            if method == "sort":
                return STOP
            if method in ("index", "pop"):
                return Leak(call, iterable)
            return _Next(call, kind, iterable) if method == "copy" else None
        if kind is Kind.SET:
            return _Next(call, Kind.SET, iterable) if method in self.words.set_methods else None
        if method in self.words.mapping_views:
            return _Next(call, Kind.SET, iterable)
        return _Next(call, Kind.MAPPING, iterable) if method == "copy" else None

    def _binary(self, parent: cst.BinaryOperation, kind: Kind, iterable: cst.CSTNode) -> _Next | Outcome:
        operator = parent.operator
        if kind is Kind.SEQUENCE and isinstance(operator, (cst.Add, cst.Multiply)):
            return _Next(parent, kind, iterable)
        if kind is Kind.SET and isinstance(operator, (cst.BitOr, cst.BitAnd, cst.Subtract, cst.BitXor)):
            return _Next(parent, kind, iterable)
        if kind is Kind.MAPPING and isinstance(operator, cst.BitOr):
            return _Next(parent, kind, iterable)
        return None

    def _comprehension(self, parent: cst.CompFor, child: cst.CSTNode, kind: Kind, iterable: cst.CSTNode) -> _Next | Outcome:
        if parent.iter is not child:
            return None
        to_sequence = iterable if kind is Kind.SEQUENCE else child
        comprehension = next(
            (node for node in self.index.ancestors(parent) if not isinstance(node, (cst.CompFor, cst.CompIf))), None
        )
        if isinstance(comprehension, (cst.ListComp, cst.GeneratorExp)):
            return _Next(comprehension, Kind.SEQUENCE, to_sequence)
        if isinstance(comprehension, cst.SetComp):
            return _Next(comprehension, Kind.SET, iterable) if kind is Kind.SET else None
        if isinstance(comprehension, cst.DictComp):
            return _Next(comprehension, Kind.MAPPING, to_sequence)
        return None

    def _element(self, parent: cst.Element | cst.StarredElement, child: cst.CSTNode, kind: Kind, iterable: cst.CSTNode) -> _Next | Outcome:
        container = self.index.parent(parent)
        if not isinstance(container, (cst.List, cst.Tuple)) or self.index.role(container) != "use":
            return None
        if isinstance(parent, cst.StarredElement):
            return _Next(container, Kind.SEQUENCE, iterable if kind is Kind.SEQUENCE else child)
        return _Next(container, Kind.SEQUENCE, iterable) if kind is Kind.SEQUENCE else None

    def _assignment(
        self,
        parent: cst.Assign | cst.AnnAssign | cst.AugAssign | cst.NamedExpr,
        child: cst.CSTNode,
        kind: Kind,
        iterable: cst.CSTNode,
        depth: int,
    ) -> _Next | Outcome:
        if parent.value is not child:
            return None
        to_sequence = iterable if kind is Kind.SEQUENCE else child
        if isinstance(parent, cst.AugAssign):
            updated = dotted_name(parent.target)
            if updated is None:
                return None
            if isinstance(parent.operator, cst.AddAssign):
                return self._bound(updated, parent, Kind.SEQUENCE, to_sequence, depth)
            if kind is Kind.SET and isinstance(parent.operator, (cst.BitOrAssign, cst.BitAndAssign, cst.SubtractAssign)):
                return self._bound(updated, parent, Kind.SET, iterable, depth)
            return None
        targets = [element.target for element in parent.targets] if isinstance(parent, cst.Assign) else [parent.target]
        for target in targets:
            if isinstance(target, (cst.Tuple, cst.List)):
                outcome: Outcome = Leak(parent, to_sequence) if kind is not Kind.HOLDER else None  # a dict unpacks its keys
            elif isinstance(target, cst.Subscript):
                outcome = Leak(parent, iterable) if kind in (Kind.SEQUENCE, Kind.HOLDER) else None
            else:
                bound = dotted_name(target)
                outcome = self._bound(bound, parent, kind, iterable, depth) if bound else None
            if isinstance(outcome, Leak):
                return outcome
        if isinstance(parent, cst.NamedExpr):
            return _Next(parent, kind, iterable)
        return None

    # --- names ------------------------------------------------------------------------------

    def _bound(self, dotted: str, anchor: cst.CSTNode, kind: Kind, iterable: cst.CSTNode, depth: int) -> Outcome:
        """`dotted` holds the value from after `anchor` on: follow its later occurrences in order
        until it is sorted or rebound, then its uses in other functions (closures, other methods)."""
        key = (dotted, anchor)
        if key in self._seen or depth > _MAX_DEPTH:
            return None
        self._seen.add(key)
        linear, deferred = self._region(dotted, anchor)
        for node in linear:
            role = self.index.role(node)
            if role == "bind":
                return None
            if role == "augment":
                continue
            outcome = self._follow(node, kind, iterable, depth + 1)
            if isinstance(outcome, Leak) and not self._unique_index(outcome, node, dotted):
                return outcome
            if outcome is STOP:
                return None
        if any(self._sorts(node) for node in deferred):
            return None
        for node in deferred:
            if self.index.role(node) != "use":
                continue
            outcome = self._follow(node, kind, iterable, depth + 1)
            if isinstance(outcome, Leak):
                return outcome
        return None

    def _unique_index(self, leak: Leak, node: cst.CSTNode, dotted: str) -> bool:
        """`files[0]` where the code made sure there is exactly one element: inside
        `if len(files) == 1:`, or after `assert len(files) == 1`, `self.assertEqual(1, len(files))`,
        `if len(files) > 1: raise ...` or `if len(files) != 1: continue`."""
        if not (isinstance(leak.use, cst.Subscript) and self.index.contains(leak.use.value, node)):
            return False
        index = self.index
        for other in index.occurrences(dotted):
            if index.scope(other) is not index.scope(node) or index.order(other) >= index.order(node):
                continue
            if _asserted_single(index, other):
                return True
            comparison = _length_test(index, other)
            if comparison is None:
                continue
            for ancestor in index.ancestors(comparison):
                if isinstance(ancestor, cst.Assert):
                    return True
                if isinstance(ancestor, cst.If):
                    if index.contains(ancestor.body, node) and any(isinstance(op.operator, cst.Equal) for op in comparison.comparisons):
                        return True
                    if not index.contains(ancestor, node) and _leaves_one(comparison) and any(isinstance(n, _EXITS) for n in _walk_nodes(ancestor.body)):
                        return True
                    break
                if isinstance(ancestor, (cst.BaseSmallStatement, cst.BaseCompoundStatement)):
                    break
        return False

    def _sorts(self, node: cst.CSTNode) -> bool:
        """Whether this occurrence sorts the value (`x.sort()`, `x = sorted(x)`) wherever it is."""
        if self.index.role(node) == "bind":
            value = self.index.assigned_value(node)
            return bool(
                value and isinstance(value[0], cst.Call) and self.context.qualified_names(value[0].func) & self.words.sorting
            )
        parent = self.index.parent(node)
        call = self.index.parent(parent) if parent is not None else None
        return isinstance(parent, cst.Attribute) and parent.attr.value == "sort" and isinstance(call, cst.Call)

    def _region(self, dotted: str, anchor: cst.CSTNode) -> tuple[list[cst.CSTNode], list[cst.CSTNode]]:
        """Occurrences of `dotted` that see the value bound at `anchor`: those after it in the same
        scope (in execution order), and those in functions that run later (closures of that scope,
        other methods of the class for `self.x`, functions of the module for a module variable)."""
        index = self.index
        scope = index.scope(anchor)
        after = index.end(anchor)
        occurrences = [node for node in index.occurrences(dotted) if not index.shadowed_by_comprehension(node, dotted)]
        if is_self_attribute(index, anchor, dotted):
            owner = owning_class(index, anchor)
            method = scope
            while index.method_class(method) is None and not isinstance(method, cst.Module):
                method = index.scope(method)
            linear = [node for node in occurrences if index.contains(method, node) and index.effective_order(node) > after]
            deferred = [
                node for node in occurrences if owner is not None and index.contains(owner, node) and not index.contains(method, node)
            ]
        else:
            linear = [node for node in occurrences if index.scope(node) is scope and index.effective_order(node) > after]
            deferred = []
            if "." not in dotted:
                for node in occurrences:
                    inner = index.scope(node)
                    if inner is not scope and index.contains(scope, node) and not index.binds_locally(inner, dotted):
                        deferred.append(node)
        linear.sort(key=index.effective_order)
        return linear, deferred

    # --- loops ------------------------------------------------------------------------------

    def _loop(self, loop: cst.For, kind: Kind, iterable: cst.CSTNode, depth: int, numbered: bool = False) -> Outcome:
        """A `for` over the value: its order shows when the body yields, returns or picks an element,
        builds an index (`index[x] = len(index)`, `index[x] = i` under `enumerate`), or appends to a
        collection used in order later."""
        counters: set[str] = set()
        target = loop.target
        if numbered and isinstance(target, (cst.Tuple, cst.List)) and len(target.elements) == 2:
            counters = names_in(target.elements[0].value)
            derived = names_in(target.elements[1].value)
        else:
            derived = names_in(target)
        body = _LoopBody(loop, derived, counters, self.results)
        if body.leak is not None:
            return Leak(body.leak, iterable)
        for collection, collection_kind in body.collections:
            outcome = self._bound(collection, loop, collection_kind, iterable, depth)
            if isinstance(outcome, Leak):
                return outcome
        return None


class _LoopBody(OwnScopeVisitor):
    """What a loop body does with the loop's elements (not entering nested functions)."""

    def __init__(self, loop: cst.For, derived: set[str], counters: set[str], results: bool) -> None:
        self.loop = loop
        self.results = results
        self.derived = set(derived)
        self.counters: set[str] = set(counters)
        self.collections: list[tuple[str, Kind]] = []
        self.leak: cst.CSTNode | None = None
        self.selects = False
        # Names computed from the loop variable count as the element too (`path = join(root, f)`).
        for _ in range(2):
            walk(loop.body, _Derive(self.derived, self.counters))
        walk(loop.body, self)

    def _uses_element(self, node: cst.CSTNode | None) -> bool:
        return node is not None and bool(names_in(node) & self.derived)

    def visit_Yield(self, node: cst.Yield) -> None:
        self.leak = self.leak or node

    def visit_Return(self, node: cst.Return) -> None:
        if self._uses_element(node.value):
            self.leak = self.leak or node

    def visit_Break(self, node: cst.Break) -> None:
        # `for f in files: if cond(f): chosen = f; break` picks whichever matching element comes first.
        if self.selects:
            self.leak = self.leak or node

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            if isinstance(target.target, cst.Name) and self._uses_element(node.value):
                self.selects = True
            if not isinstance(target.target, cst.Subscript) or not target.target.slice:
                continue
            key = target.target.slice[0]
            container = dotted_name(target.target.value)
            if self._uses_element(key):
                if _counts(node.value, self.counters, container):
                    self.leak = self.leak or node  # an index mapping: each element gets the next number
                elif container is not None and not self.results:
                    self.collections.append((container, Kind.MAPPING))
            elif self.counters and self._uses_element(node.value) and _counts(key, self.counters, None):
                self.leak = self.leak or node  # `table[i] = x`: each element stored at its number

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        target = dotted_name(node.target)
        if target is not None and isinstance(node.operator, cst.AddAssign) and self._uses_element(node.value):
            self.collections.append((target, Kind.SEQUENCE))

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if not isinstance(func, cst.Attribute):
            return
        if self.results and func.attr.value in VOCABULARY.writers and any(self._uses_element(arg.value) for arg in node.args):
            self.leak = self.leak or node  # each result written out as it comes
            return
        if func.attr.value not in VOCABULARY.growers:
            return
        receiver = dotted_name(func.value)
        if receiver is not None and any(self._uses_element(arg.value) for arg in node.args):
            self.collections.append((receiver, Kind.SEQUENCE))


class _Derive(cst.CSTVisitor):
    """Names assigned from the loop element, and counters (`n += 1`) that number the elements."""

    def __init__(self, derived: set[str], counters: set[str]) -> None:
        self.derived = derived
        self.counters = counters

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return False

    def visit_Assign(self, node: cst.Assign) -> None:
        if names_in(node.value) & self.derived:
            for target in node.targets:
                if isinstance(target.target, (cst.Name, cst.Tuple, cst.List)):
                    self.derived |= names_in(target.target)

    def visit_For(self, node: cst.For) -> None:
        if names_in(node.iter) & self.derived:
            self.derived |= names_in(node.target)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        if isinstance(node.target, cst.Name) and not (names_in(node.value) & self.derived):
            self.counters.add(node.target.value)


def _length_test(index: ModuleIndex, node: cst.CSTNode) -> cst.Comparison | None:
    """The comparison when `node` appears as `len(node) <op> 1` (or `2`): a test of uniqueness."""
    arg = index.parent(node)
    call = index.parent(arg) if arg is not None else None
    comparison = index.parent(call) if call is not None else None
    if not (
        isinstance(arg, cst.Arg)
        and isinstance(call, cst.Call)
        and isinstance(call.func, cst.Name)
        and call.func.value == "len"
        and isinstance(comparison, cst.Comparison)
        and comparison.left is call
        and len(comparison.comparisons) == 1
    ):
        return None
    target = comparison.comparisons[0].comparator
    return comparison if isinstance(target, cst.Integer) and target.value in ("1", "2") else None


# Statements that leave the code after an `if`: past `if len(x) != 1: continue`, x has one element.
_EXITS = (cst.Raise, cst.Continue, cst.Return, cst.Break)
# Test assertions of equality: `self.assertEqual(1, len(x))` asserts as `assert len(x) == 1` does.
_EQUALITY_ASSERTIONS = frozenset({"assertEqual", "assertEquals", "assert_equal"})


def _only_tested(index: ModuleIndex, node: cst.CSTNode) -> bool:
    """Whether a value is only compared or tested for truth (`x is None`, `if x:`, `not x`)."""
    parent = index.parent(node)
    if isinstance(parent, (cst.Comparison, cst.UnaryOperation)):
        return True
    return isinstance(parent, (cst.If, cst.While, cst.IfExp, cst.Assert)) and parent.test is node


def _leaves_one(comparison: cst.Comparison) -> bool:
    """Whether leaving when `len(x) <op> n` holds leaves at most one element: `!= 1`, `> 1`, `>= 2`."""
    target = comparison.comparisons[0]
    operator, value = type(target.operator), getattr(target.comparator, "value", None)
    return (operator, value) in {(cst.NotEqual, "1"), (cst.GreaterThan, "1"), (cst.GreaterThanEqual, "2")}


def _asserted_single(index: ModuleIndex, node: cst.CSTNode) -> bool:
    """Whether `node` appears as `assertEqual(len(node), 1)` (either order)."""
    arg = index.parent(node)
    call = index.parent(arg) if arg is not None else None
    outer_arg = index.parent(call) if call is not None else None
    assertion = index.parent(outer_arg) if outer_arg is not None else None
    if not (
        isinstance(call, cst.Call)
        and isinstance(call.func, cst.Name)
        and call.func.value == "len"
        and isinstance(outer_arg, cst.Arg)
        and isinstance(assertion, cst.Call)
        and terminal_name(assertion.func) in _EQUALITY_ASSERTIONS
    ):
        return False
    others = [candidate.value for candidate in assertion.args[:2] if candidate is not outer_arg]
    return any(isinstance(other, cst.Integer) and other.value == "1" for other in others)


def _walk_nodes(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(current.children)


def _counts(value: cst.BaseExpression, counters: set[str], container: str | None) -> bool:
    """`len(index)` of the mapping being filled, or a counter: the value numbers elements in the
    order they come."""
    if (
        isinstance(value, cst.Call)
        and isinstance(value.func, cst.Name)
        and value.func.value == "len"
        and len(value.args) == 1
        and container is not None
        and dotted_name(value.args[0].value) == container
    ):
        return True
    return bool(names_in(value) & counters)
