"""Reads a module's checkpoint facts (see `checkpoints`) from its LibCST tree.

Saved values are traced through dict literals, `ckpt[k] = ...`, `ckpt.update(...)`, `dict(...)`,
`{**a, ...}` and local variables; restores are followed to the key they read. The values it traces, and how they become facts once
positions are known, are in `checkpoint_values`.

The collector is one visitor, kept whole though it passes 500 lines: saves, restores and what the
code builds are read in the same walk, from the same per-function state, and the walk goes by hand
over statements to skip those that mention no checkpoint word (most of a module).
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Iterable, Sequence
from dataclasses import replace
from itertools import accumulate

import libcst as cst

from repro_lint.facts.checkpoint_values import Body, PendingEntry, PendingSave, TracedDict, function_facts, same_as_referred
from repro_lint.facts.checkpoints import MODULE_CODE, STATE_KINDS, TRAINING_STATE, ModuleCheckpoints, Slot, hinted_kind, knowledge, names_a_data_position, progress_word
from repro_lint.facts.context import FileContext
from repro_lint.facts.edits import argument, keyword, literal
from repro_lint.facts.names import ScopeNode, dotted_name, terminal_name
from repro_lint.facts.positions import Positions
from repro_lint.facts.traversal import names_in, walk


def module_checkpoints(context: FileContext, positions: Positions) -> ModuleCheckpoints:
    """The checkpoint facts of one module (empty when its text cannot hold any)."""
    if knowledge().relevant.search(context.source) is None and knowledge().builds_dict.search(context.source) is None:
        return ModuleCheckpoints()
    lines = context.source.splitlines(keepends=True)
    collector = _Collector(context, positions, lines)
    collector.scopes.append(context.module)
    collector.walk(context.module.body)
    functions = tuple(
        facts
        for body in collector.bodies
        if (facts := function_facts(body, positions, lines)) is not None
    )
    return ModuleCheckpoints(functions)


class _Collector(cst.CSTVisitor):
    def __init__(self, context: FileContext, positions: Positions, lines: list[str]) -> None:
        self.context = context
        self.positions = positions
        self.lines = lines
        self.data = knowledge()
        # How many of the lines before each line mention a checkpoint word: a statement mentions one
        # where its lines do, since no word spans lines (a class is asked, then each of its methods,
        # then each of their statements).
        self.mentions = list(accumulate((self.data.relevant.search(line) is not None for line in lines), initial=0))
        self.scopes: list[ScopeNode] = []
        self.classes: list[str] = []
        self.statements: list[cst.SimpleStatementLine] = []
        self.indents: list[str] = []
        self.module_body = Body(f"{context.module_name}.{MODULE_CODE}", frozenset())
        self.bodies: list[Body] = [self.module_body]
        self.open: list[Body] = []
        # `x = StepLR(...)` anywhere in the module: what `x.state_dict()` holds.
        self.built: dict[str, str] = {}

    # Structure ----------------------------------------------------------------------------------
    # Statements are walked by hand and only those that mention a checkpoint word are visited: most
    # of a module is skipped without the cost of a generic traversal.

    def walk(self, statements: Sequence[cst.BaseStatement]) -> None:
        for statement in statements:
            relevance = self._relevance(statement)
            if relevance is None:
                continue
            if isinstance(statement, cst.SimpleStatementLine) and relevance == "builds_dict" and _only_builds_dicts(statement):
                # `cfg = {...}` with no state in sight: remembered in case it is saved, not visited.
                body = self._body()
                for small in statement.body:
                    if isinstance(small, cst.Assign):
                        for target in small.targets:
                            self._assign(body, target.target, small.value)
            elif isinstance(statement, cst.SimpleStatementLine):
                self.statements.append(statement)
                walk(statement, self)
                self.statements.pop()
            elif isinstance(statement, cst.FunctionDef):
                self._function(statement)
            elif isinstance(statement, cst.ClassDef):
                self.scopes.append(statement)
                self.classes.append(statement.name.value)
                self._suite(statement.body)
                self.classes.pop()
                self.scopes.pop()
            else:
                self._compound(statement)

    def _compound(self, node: cst.CSTNode) -> None:
        """The blocks of `if`/`for`/`while`/`with`/`try`/`match`, their `else`, `except` and `finally`."""
        for child in node.children:
            if isinstance(child, cst.BaseSuite):
                self._suite(child)
            elif isinstance(child, (cst.If, cst.Else, cst.ExceptHandler, cst.ExceptStarHandler, cst.Finally, cst.MatchCase)):
                self._compound(child)

    def _suite(self, suite: cst.BaseSuite) -> None:
        if isinstance(suite, cst.IndentedBlock):
            self.indents.append(suite.indent if suite.indent is not None else self.context.module.default_indent)
            self.walk(suite.body)
            self.indents.pop()
        else:
            walk(suite, self)

    def visit_Lambda(self, node: cst.Lambda) -> None:
        self.scopes.append(node)

    def leave_Lambda(self, original_node: cst.Lambda) -> None:
        self.scopes.pop()

    def _relevance(self, node: cst.CSTNode) -> str | None:
        """"state" when the code mentions a checkpoint word, "builds_dict" when it only builds a dict."""
        start, end = self.positions.range(node)
        if self.mentions[end.line] > self.mentions[start.line - 1]:
            return "state"
        return "builds_dict" if self.data.builds_dict.search("".join(self.lines[start.line - 1 : end.line])) else None

    def _function(self, node: cst.FunctionDef) -> None:
        if self.open:
            qualname = f"{self.open[-1].qualname}.<locals>.{node.name.value}"
        else:
            qualname = ".".join([self.context.module_name, *self.classes, node.name.value])
        params = node.params
        positional = [param.name.value for param in (*params.posonly_params, *params.params)]
        keyword_only = [param.name.value for param in params.kwonly_params]
        names = [*positional, *keyword_only]
        for star in (params.star_arg, params.star_kwarg):
            if isinstance(star, cst.Param):
                names.append(star.name.value)
        if positional and self.classes and not self.open and not _is_static(node):
            positional = positional[1:]  # `self` or `cls`: callers pass it as the receiver
        body = Body(qualname, frozenset(names), tuple(positional), tuple(keyword_only), names=set(names))
        self.bodies.append(body)
        self.open.append(body)
        self.scopes.append(node)
        self._suite(node.body)
        self.scopes.pop()
        self.open.pop()

    def _body(self) -> Body | None:
        if self.open:
            return self.open[-1]
        if self.classes or isinstance(self.scopes[-1], cst.Lambda):
            return None
        return self.module_body

    def _names(self, node: cst.BaseExpression) -> frozenset[str]:
        terminal = terminal_name(node)
        if terminal is None or not self.data.worth_resolving(terminal):
            return frozenset()
        return self.context.resolver.resolve(node, self.scopes)

    # Assignments ------------------------------------------------------------------------------------

    def visit_Assign(self, node: cst.Assign) -> None:
        body = self._body()
        for target in node.targets:
            self._assign(body, target.target, node.value)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        if node.value is not None:
            self._assign(self._body(), node.target, node.value)

    def _assign(self, body: Body | None, target: cst.BaseExpression, value: cst.BaseExpression) -> None:
        name = dotted_name(target)
        if isinstance(value, cst.Call):
            built = self._built(value)
            if built is not None and name:
                self.built[name] = built[0]
        if body is None:
            return
        if isinstance(target, cst.Name):
            body.names.add(target.value)
            body.values[target.value] = self._trace(body, value, target.value)
            body.assigned[target.value] = self.positions.start(target).line
            picked = self._picked(value) if _may_pick(value) else None
            if picked is not None:
                body.picked[target.value] = (*picked, self._source(body, picked[0]))
        elif isinstance(target, cst.Subscript) and isinstance(target.value, cst.Name):
            container = body.values.get(target.value.value)
            key = _subscript_key(target)
            if isinstance(container, TracedDict):
                container.add(key, self._entry(body, key if isinstance(key, str) else None, value, target))
        elif isinstance(target, cst.Attribute) and target.attr.value == "last_epoch":
            body.creations.append((target, "scheduler_position", dotted_name(target.value) or "", "last_epoch", False))
        cast = self._cast(value, name) if name and hinted_kind(name) == "model" else None
        if cast is not None:
            body.creations.append((value, "cast", name or "", cast, False))

    def _cast(self, value: cst.BaseExpression, name: str) -> str | None:
        """`model = model.half()`: the model itself is kept in lower precision."""
        if isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and dotted_name(value.func.value) == name:
            return self._lossy_call(value)
        return None

    def _built(self, call: cst.Call) -> tuple[str, str, bool] | None:
        """(kind, qualified name, stateless) of what `call` builds, for schedulers, scalers,
        optimizers and generators."""
        data = self.data
        for name in sorted(self._names(call.func)):
            if name in data.schedulers or any(fnmatch.fnmatchcase(name, pattern) for pattern in data.scheduler_patterns):
                return "scheduler", name, False
            if name in data.scalers:
                return "scaler", name, False
            if name in data.generator_classes:
                return "generator", name, False
            if (name.startswith(data.optimizer_prefixes) and name.rpartition(".")[2] in data.optimizers) or name in data.optimizer_factories:
                momentum = data.stateless_optimizers.get(name)
                given = argument(call, momentum) if momentum else None
                stateless = momentum is not None and (given is None or literal(given.value) in (0, 0.0))
                return "optimizer", name, stateless
        return None

    # Calls -------------------------------------------------------------------------------------------

    def visit_Call(self, node: cst.Call) -> None:
        body = self._body()
        if body is None:
            return
        targets = tuple(sorted(self._names(node.func)))
        method = node.func.attr.value if isinstance(node.func, cst.Attribute) else None
        receiver = dotted_name(node.func.value) if isinstance(node.func, cst.Attribute) else None
        built = self._built(node)
        statement = self.statements[-1] if self.statements else None
        if built is not None:
            kind, name, stateless = built
            body.creations.append((node, kind, _assigned_name(statement, node), name, stateless))
            position = keyword(node, "last_epoch") if kind == "scheduler" else None
            if position is not None and literal(position.value) is ... and _mentions_progress(position.value):
                # `ExponentialLR(optim, gamma, last_epoch=last_epoch)`: built at the loaded epoch.
                body.creations.append((node, "scheduler_position", _assigned_name(statement, node), "last_epoch=", False))
        self._loader_generator(body, node, targets, _assigned_name(statement, node))
        if not self._exempt(targets, method, receiver):
            self._maybe_save(body, node, targets, method, receiver)
        if any(name in self.data.loaders for name in targets):
            body.loaded_progress.update(_named_progress(node.args))
        restores = len(body.restores)
        self._maybe_restore(body, node, targets, method, receiver)
        if len(body.restores) == restores:
            body.handed.update(arg.value.value for arg in node.args if isinstance(arg.value, cst.Name))
        if method == "step" and len(node.args) == 1 and self._kind_of_receiver(node.func.value) == "scheduler" and _mentions_progress(node.args[0].value):
            body.creations.append((node, "scheduler_position", receiver or "", "step(epoch)", False))
        cast = self._lossy_call(node)
        if cast is not None and receiver and self._is_statement(node) and hinted_kind(receiver) == "model":
            body.creations.append((node, "cast", receiver, cast, False))

    def _loader_generator(self, body: Body, node: cst.Call, targets: tuple[str, ...], assigned: str) -> None:
        """`loader = DataLoader(..., generator=torch.Generator().manual_seed(0))`: the generator has
        no name of its own, but `loader.generator` reaches it."""
        given = keyword(node, "generator")
        if given is None or isinstance(given.value, cst.Name) or not assigned.isidentifier():
            return
        if any(name in self.data.data_loaders for name in targets):
            name = f"{assigned}.generator"
            body.creations.append((node, "generator", name, "DataLoader generator", False))
            self.built[name] = "generator"

    def _is_statement(self, node: cst.Call) -> bool:
        statement = self.statements[-1] if self.statements else None
        return statement is not None and any(isinstance(small, cst.Expr) and small.value is node for small in statement.body)

    def _exempt(self, targets: tuple[str, ...], method: str | None, receiver: str | None) -> bool:
        if any(name in self.data.exempt_names for name in targets):
            return True
        hints = self.data.exempt_methods.get(method or "")
        return bool(hints) and any(hint in (receiver or "").lower() for hint in hints)

    def _maybe_save(self, body: Body, node: cst.Call, targets: tuple[str, ...], method: str | None, receiver: str | None) -> None:
        slot = self.data.saved_slot(targets, method, receiver)
        # A project-local saver wrapper is told by its name (`save_on_master`, `save_checkpoint`),
        # and may take the saved object at any position or keyword: each argument holding state is a
        # candidate, and the project pass keeps the one the wrapper passes on to its saver.
        wrapper = slot is None and self.data.wrapper_hint in (terminal_name(node.func) or "").lower()
        if slot is not None:
            given = argument(node, slot[1] or "", slot[0])
            candidates = [(slot, given)] if given is not None else []
        elif wrapper:
            positional = [arg for arg in node.args if arg.keyword is None and not arg.star]
            candidates = [((index, None), arg) for index, arg in enumerate(positional)]
            candidates += [((None, arg.keyword.value), arg) for arg in node.args if arg.keyword is not None]
        else:
            return
        if not candidates:
            # `save_on_master(*args, **kwargs)` hands its own arguments on.
            star = next((arg for arg in node.args if arg.star == "*"), None)
            if (slot is not None or wrapper) and star is not None and isinstance(star.value, cst.Name) and star.value.value in body.parameters:
                body.saves.append(PendingSave(node, targets, method, receiver, (), star.value.value, slot=slot or (0, None)))
            return
        for at, given in candidates:
            self._save_candidate(body, node, targets, method, receiver, at, given, direct=slot is not None)

    def _save_candidate(
        self, body: Body, node: cst.Call, targets: tuple[str, ...], method: str | None, receiver: str | None, slot: Slot, given: cst.Arg, direct: bool
    ) -> None:
        value = given.value
        passes = value.value if isinstance(value, cst.Name) and value.value in body.parameters and value.value not in body.values else None
        traced = self._trace(body, value, None)
        if isinstance(traced, TracedDict):
            entries = tuple(traced.entries.values())
            keys = traced.keys
            dict_literal = traced.literal
        else:
            # The object saved whole is under no key, whatever variable held it (`state =
            # scaler.state_dict()`); that name still tells what it holds.
            entries = (replace(traced, key=None, refers=traced, classify=same_as_referred),)
            keys = ()
            dict_literal = None
        if direct or passes is not None or any(entry.kind != "other" for entry in entries):
            named = _named_progress(arg for arg in node.args if arg is not given)
            body.saves.append(PendingSave(node, targets, method, receiver, entries, passes, dict_literal, keys, slot, named))

    def _maybe_restore(self, body: Body, node: cst.Call, targets: tuple[str, ...], method: str | None, receiver: str | None) -> None:
        data = self.data
        kind = None
        if method == "load_state_dict" and isinstance(node.func, cst.Attribute):
            kind = self._state_dict_kind(node.func.value)
        elif any(name in data.rng_setters for name in targets) or (method == data.generator_set and self._is_generator(receiver)):
            kind = "rng"
        if kind is None or not node.args:
            return
        source = node.args[0].value
        key, base, opaque, origin = self._read_key(body, source)
        if key is not None and kind == "model":
            kind = hinted_kind(key) if hinted_kind(key) in TRAINING_STATE else kind
        strict = argument(node, "strict", 1) if method == "load_state_dict" else None
        strict_false = strict is not None and literal(strict.value) is False
        body.restores.append((node, key, kind, strict_false, origin))
        body.opaque |= opaque
        if base:
            body.bases.add(base)
        statement = self.statements[-1] if self.statements else None
        if kind == "optimizer" and key is not None and base and body.restore_point is None and statement is not None:
            body.restore_point = (statement, "".join(self.indents), base)

    def _is_generator(self, receiver: str | None) -> bool:
        return receiver is not None and self.built.get(receiver) == "generator"

    def _state_dict_kind(self, receiver: cst.BaseExpression) -> str:
        """What `receiver.state_dict()` holds. No RNG has one (a torch.Generator's state is
        `get_state()`), so a receiver named for one is a network: a GAN's `generator`."""
        kind = self._kind_of_receiver(receiver)
        if kind is not None and kind != "rng":
            return kind
        return "other" if names_a_data_position(dotted_name(receiver)) else "model"

    def _kind_of_receiver(self, node: cst.BaseExpression) -> str | None:
        name = dotted_name(node)
        if name is not None and name in self.built:
            built = self.built[name]
            return "rng" if built == "generator" else built
        return hinted_kind(name)

    def _read_key(self, body: Body, node: cst.BaseExpression) -> tuple[str | None, str | None, bool, int | None]:
        """The literal top-level key a restored value is read from (`ckpt["opt"]`, `ckpt.get("opt")`,
        `ckpt["opt"].float().state_dict()`, a local `sd = ckpt["opt"]`), the name of the dict,
        whether the key cannot be known, and where the dict was assigned."""
        if isinstance(node, cst.Name) and node.value in body.picked:
            base, key, origin = body.picked[node.value]
            return key, base, False, origin
        finder = _KeyFinder()
        walk(node, finder)
        if finder.found is not None:
            base, key = finder.found
            return (key if isinstance(key, str) else None), base, not isinstance(key, str), self._source(body, base)
        return None, None, False, None

    @staticmethod
    def _source(body: Body, name: str) -> int | None:
        return body.assigned.get(name, 0 if name in body.parameters else None)

    def _picked(self, value: cst.BaseExpression) -> tuple[str, str] | None:
        finder = _KeyFinder()
        walk(value, finder)
        if finder.found is not None and isinstance(finder.found[1], str):
            return finder.found[0], finder.found[1]
        return None

    def visit_Subscript(self, node: cst.Subscript) -> None:
        body = self._body()
        key = _subscript_key(node)
        if body is not None and isinstance(node.value, cst.Name) and isinstance(key, str):
            body.reads.add(f"{node.value.value}\0{key}")

    def visit_Expr(self, node: cst.Expr) -> None:
        # `ckpt.update({...})` / `ckpt.update(key=value)` adds to a dict being built.
        body = self._body()
        call = node.value
        if body is None or not isinstance(call, cst.Call) or not isinstance(call.func, cst.Attribute) or call.func.attr.value != "update":
            return
        container = body.values.get(dotted_name(call.func.value) or "")
        if isinstance(container, TracedDict):
            added = self._trace_dict_call(body, call)
            container.entries.update(added.entries)

    # Tracing saved values --------------------------------------------------------------------------

    def _trace(self, body: Body, node: cst.BaseExpression, key: str | None) -> TracedDict | PendingEntry:
        if isinstance(node, cst.Dict):
            traced = TracedDict(literal=node)
            for element in node.elements:
                if isinstance(element, cst.StarredDictElement):
                    inner = self._trace(body, element.value, None)
                    if isinstance(inner, TracedDict):
                        traced.entries.update(inner.entries)
                    continue
                entry_key = literal(element.key)
                named = entry_key if isinstance(entry_key, str) else None
                traced.add(entry_key, self._entry(body, named, element.value, element.key))
            return traced
        if isinstance(node, cst.Call) and self._names(node.func) & {"builtins.dict"}:
            return self._trace_dict_call(body, node)
        if isinstance(node, cst.Name):
            known = body.values.get(node.value)
            if known is not None:
                return known
        return self._entry(body, key, node, node)

    def _trace_dict_call(self, body: Body, call: cst.Call) -> TracedDict:
        traced = TracedDict()
        for arg in call.args:
            if arg.keyword is not None:
                traced.entries[arg.keyword.value] = self._entry(body, arg.keyword.value, arg.value, arg.keyword)
            elif not arg.star:
                inner = self._trace(body, arg.value, None)
                if isinstance(inner, TracedDict):
                    traced.entries.update(inner.entries)
        return traced

    def _entry(self, body: Body, key: str | None, value: cst.BaseExpression, at: cst.CSTNode) -> PendingEntry:
        refers = body.values.get(value.value) if isinstance(value, cst.Name) else None
        return PendingEntry(key, at, value, self._state_of, refers)

    def _state_of(self, entry: PendingEntry) -> tuple[str, str | None]:
        key, value, known = entry.key, entry.value, entry.refers
        if key is not None and key.lower() in self.data.progress_keys:
            return "progress", None
        if literal(value) is not ...:
            return "other", None  # `"optimizer": None`: a placeholder, no state
        if isinstance(known, PendingEntry):
            settled = known.settled or ("other", None)
            if settled[0] == "other" and isinstance(known.value, cst.Call) and isinstance(value, cst.Name):
                # An object saved whole (`"optimizer": optimizer`): `torch.save` pickles its state with
                # it, Fabric's `save` calls its `state_dict()`. What built it, else the key, tells what it is.
                built = self.built.get(value.value)
                kind = ("rng" if built == "generator" else built) or (hinted_kind(key) if key is not None else None)
                return (kind, None) if kind is not None else settled
            return settled
        if isinstance(known, TracedDict) and known.entries:
            kinds = {referred.settled[0] for referred in known.entries.values() if referred.settled is not None}
            return next((kind for kind in STATE_KINDS if kind in kinds), "other"), None
        finder = _StateFinder(self)
        walk(value, finder)
        if finder.rng:
            return "rng", None
        if finder.lossy:
            return "model", finder.lossy
        if finder.state_of is not None:
            return finder.state_of, None
        hinted = hinted_kind(key) if key is not None else None
        if hinted is not None and (isinstance(value, (cst.Name, cst.Attribute, cst.Subscript)) or finder.state_of is not None):
            return hinted, None
        return "other", None

    def _lossy_call(self, node: cst.Call) -> str | None:
        if not isinstance(node.func, cst.Attribute):
            return None
        method = node.func.attr.value
        if method in self.data.cast_methods:
            return f".{method}()"
        if method == "to":
            for arg in node.args:
                names = self._names(arg.value) if isinstance(arg.value, (cst.Name, cst.Attribute)) else frozenset()
                dtype = next((name for name in sorted(names) if name in self.data.cast_dtypes), None)
                if dtype is not None:
                    return f".to({dtype})"
        return None


class _StateFinder(cst.CSTVisitor):
    """Inside a saved value: RNG state getters, `x.state_dict()` and casts to lower precision."""

    def __init__(self, collector: _Collector) -> None:
        self.collector = collector
        self.rng = False
        self.lossy: str | None = None
        self.state_of: str | None = None

    def visit_Call(self, node: cst.Call) -> None:
        data = self.collector.data
        method = node.func.attr.value if isinstance(node.func, cst.Attribute) else None
        names = self.collector._names(node.func)
        if any(name in data.rng_getters for name in names):
            self.rng = True
        elif method == data.generator_get and self.collector._is_generator(dotted_name(node.func.value)):  # type: ignore[union-attr]
            self.rng = True
        elif method == "state_dict" and self.state_of is None:
            receiver = node.func.value  # type: ignore[union-attr]
            self.state_of = self.collector._state_dict_kind(receiver)
        if self.lossy is None:
            self.lossy = self.collector._lossy_call(node)


class _KeyFinder(cst.CSTVisitor):
    """The first subscript or `.get(...)` of a name in an expression: (dict name, key or Ellipsis)."""

    def __init__(self) -> None:
        self.found: tuple[str, object] | None = None

    def visit_Subscript(self, node: cst.Subscript) -> bool:
        if self.found is None and isinstance(node.value, cst.Name):
            self.found = (node.value.value, _subscript_key(node))
            return False
        return True

    def visit_Call(self, node: cst.Call) -> bool:
        func = node.func
        if self.found is None and isinstance(func, cst.Attribute) and func.attr.value == "get" and isinstance(func.value, cst.Name) and node.args:
            self.found = (func.value.value, literal(node.args[0].value))
            return False
        return True


def _is_static(node: cst.FunctionDef) -> bool:
    return any(dotted_name(decorator.decorator) == "staticmethod" for decorator in node.decorators)


def _only_builds_dicts(statement: cst.SimpleStatementLine) -> bool:
    return all(
        isinstance(small, cst.Assign)
        and (isinstance(small.value, cst.Dict) or (isinstance(small.value, cst.Call) and dotted_name(small.value.func) == "dict"))
        for small in statement.body
    )


def _may_pick(value: cst.BaseExpression) -> bool:
    """`ckpt["model"]` or `ckpt.get("model")`: one key of a dict."""
    if isinstance(value, cst.Subscript):
        return True
    return isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and value.func.attr.value == "get"


def _subscript_key(node: cst.Subscript) -> object:
    if len(node.slice) != 1 or not isinstance(node.slice[0].slice, cst.Index):
        return ...
    return literal(node.slice[0].slice.value)


def _mentions_progress(node: cst.BaseExpression) -> bool:
    names = re.findall(r"[A-Za-z_]+", cst.Module([]).code_for_node(node).lower())
    return any(word in knowledge().progress_keys or word.endswith("epoch") for word in names)


def _named_progress(args: Iterable[cst.Arg]) -> tuple[str, ...]:
    """The progress counters that names and attributes in `args` denote (`f"G_{epoch}.pth"`,
    `"%d.pth" % opt.epoch`); words of literal text are not names."""
    names = {name for arg in args for name in names_in(arg.value)}
    return tuple(sorted({word for name in names if (word := progress_word(name)) is not None}))


def _assigned_name(statement: cst.SimpleStatementLine | None, call: cst.Call) -> str:
    if statement is None:
        return ""
    for small in statement.body:
        if isinstance(small, (cst.Assign, cst.AnnAssign)) and small.value is call:
            target = small.targets[0].target if isinstance(small, cst.Assign) else small.target
            return dotted_name(target) or ""
    return ""


