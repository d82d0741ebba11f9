"""REP205: a shuffling DistributedSampler whose epoch is never set, so every epoch sees the same order."""

from __future__ import annotations

import itertools

import libcst as cst

from repro_lint.core.findings import Applicability, Finding, FixAvailability
from repro_lint.core.message_text import elide
from repro_lint.facts.context import NodeEdit, PendingFix
from repro_lint.facts.callers_choice import passes_true, taken_for
from repro_lint.facts.dataloader_calls import DISTRIBUTED_SAMPLERS, is_dataloader, loader_argument, module_functions
from repro_lint.facts.edits import argument, has_star_args, literal
from repro_lint.facts.module_index import ModuleIndex, indentation, index_for, is_self_attribute, owning_class, scope_chain
from repro_lint.facts.names import dotted_name
from repro_lint.facts.traversal import calls_in
from repro_lint.rules.base import Rule, register

_DISTRIBUTED_SHORT = frozenset({"DistributedSampler"})
# How a REP205 message says that the loader is handed to another module's function; such findings
# are kept only in programs where nothing calls `set_epoch`.
HANDED_NOTE = "given the loader"


@register
class DistributedSamplerWithoutSetEpoch(Rule):
    """A shuffling DistributedSampler seeds its shuffle with `seed + epoch`; without `set_epoch` the
    epoch stays 0 and every epoch sees the same order."""

    code = "REP205"
    name = "distributed-sampler-without-set-epoch"
    fix_availability = FixAvailability.SOMETIMES
    required_text = ("DistributedSampler",)

    def visit_Call(self, node: cst.Call) -> None:
        qualified = self.context.callee(node, DISTRIBUTED_SAMPLERS, _DISTRIBUTED_SHORT)
        if qualified is None or has_star_args(node):
            return
        index = index_for(self.context)
        shuffle = argument(node, "shuffle", DISTRIBUTED_SAMPLERS[qualified])
        # A sampler a helper of the module returns (`return DistributedSampler(ds, shuffle=shuffle)`)
        # is built where the helper is called, with the caller's choice of its parameters.
        built = _returned_by_calls(index, node, shuffle.value if shuffle is not None else None)
        if shuffle is not None and literal(shuffle.value) is not True and built is None:
            return  # shuffle=False, or a value repro-lint cannot read (silent, as the catalog asks)
        holders, loaders = [], []
        for sampler in built if built is not None else [node]:
            found = _holders(index, sampler)
            holders += found
            loaders += self._loaders(index, sampler, found)
        if not loaders:
            return
        loader_holders = sorted({holder for _, names in loaders for holder in names})
        if self._set_epoch_called(index, holders, loader_holders):
            return
        epoch_loop = self._epoch_loop(index, loaders)
        if epoch_loop is None:
            return
        loop, site, parameter = epoch_loop
        if parameter == _RETURNED:
            fix = None
        elif parameter is None:
            fix = self._fix(index, node, loop, holders, loader_holders)
        else:
            fix = self._fix(index, node, loop, [], [parameter])
        helper = self._imported_helper(index, site)
        where = f" (nor in `{elide(helper, 22)}`, {HANDED_NOTE})" if helper else ""
        self.report(
            node,
            f"DistributedSampler without `set_epoch`{where}: every epoch repeats the same order",
            fix,
        )

    @classmethod
    def program_condition_for(cls, finding: Finding) -> tuple[str, ...]:
        # The loader goes to a function of another module, which may call set_epoch itself.
        return ("epochs_unset",) if HANDED_NOTE in finding.message else ()

    def _imported_helper(self, index: ModuleIndex, site: cst.CSTNode) -> str | None:
        """The imported function the loader is handed to in the epoch loop (`train_one_epoch(loader)`
        with `from engine import train_one_epoch`), as the code names it."""
        arg = index.parent(site)
        call = index.parent(arg) if arg is not None else None
        if not (isinstance(arg, cst.Arg) and isinstance(call, cst.Call)):
            return None
        if any(isinstance(loop, cst.For) and index.contains(loop.iter, call) for loop in index.ancestors(call)):
            return None  # `for batch in tqdm(loader)`: a wrapper the batch loop iterates
        names = self.context.resolver.resolve(call.func, scope_chain(index, call))
        own = (self.context.module_name + ".", "builtins.")
        if names and not any(name.startswith(own) for name in names):
            return dotted_name(call.func)
        return None

    def _loaders(self, index: ModuleIndex, sampler: cst.Call, holders: list[str]) -> list[tuple[cst.Call, list[str]]]:
        """The DataLoaders built with this sampler, and the names each is held in."""
        context = self.context
        found: list[tuple[cst.Call, list[str]]] = []
        candidates: list[cst.Call] = []
        parent = index.parent(sampler)
        if isinstance(parent, cst.Arg):
            call = index.parent(parent)
            if isinstance(call, cst.Call) and is_dataloader(context, call) and loader_argument(call, "sampler") is parent:
                candidates.append(call)
        for holder in holders:
            for occurrence in index.occurrences(holder):
                arg = index.parent(occurrence)
                call = index.parent(arg) if arg is not None else None
                if isinstance(arg, cst.Arg) and isinstance(call, cst.Call) and arg.value is occurrence:
                    if is_dataloader(context, call) and loader_argument(call, "sampler") is arg and call not in candidates:
                        candidates.append(call)
        for call in candidates:
            found.append((call, _holders(index, call)))
        return found

    def _set_epoch_called(self, index: ModuleIndex, holders: list[str], loader_holders: list[str]) -> bool:
        """`set_epoch` on the sampler's name, an attribute of that name, `<loader>.sampler`, or any
        `.sampler` of a loader handed around (a helper's parameter): precision first."""
        lasts = {holder.rpartition(".")[2] for holder in holders}
        others: set[str] | None = None
        for occurrence in index.occurrences_of_attribute("set_epoch"):
            receiver = dotted_name(occurrence.value)
            if receiver is None:
                return True
            if receiver in holders or receiver.rpartition(".")[2] in lasts:
                return True
            if receiver in loader_holders:
                return True
            if receiver.endswith(".sampler") or receiver.endswith("_sampler"):
                # Unless it names another loader or sampler of the module (`train_loader.sampler`
                # beside our `valid_loader`): the same name or attribute, as the catalog says.
                others = self._other_holders(index, loader_holders) if others is None else others
                if receiver.removesuffix(".sampler").rpartition(".")[2] not in others:
                    return True
        return False

    def _other_holders(self, index: ModuleIndex, loader_holders: list[str]) -> set[str]:
        """The names (last parts) that hold this module's other DataLoaders and DistributedSamplers."""
        mine = {holder.rpartition(".")[2] for holder in loader_holders}
        found: set[str] = set()
        for call in calls_in(index.module):
            if is_dataloader(self.context, call) or self.context.callee(call, DISTRIBUTED_SAMPLERS, _DISTRIBUTED_SHORT):
                found.update(holder.rpartition(".")[2] for holder in _holders(index, call))
        return found - mine

    def _epoch_loop(
        self, index: ModuleIndex, loaders: list[tuple[cst.Call, list[str]]]
    ) -> tuple[cst.CSTNode, cst.CSTNode, str | None] | None:
        """A loop around an iteration of the loader (or around a call it is handed to) in the same
        function, or in a function of this module the loader is handed to (then with the parameter
        that holds the loader there)."""
        sites: list[cst.CSTNode] = []
        for call, names in loaders:
            sites.append(call)
            scope = index.scope(call)
            owner = owning_class(index, call)
            for name in names:
                mine = [
                    node
                    for node in index.occurrences(name)
                    if index.scope(node) is scope or (owner is not None and is_self_attribute(index, node, name) and index.contains(owner, node))
                ]
                if sum(index.role(node) == "bind" for node in mine) > 1:
                    continue  # rebound (`loader = accelerator.prepare(loader)`): the loop may iterate another object
                sites.extend(node for node in mine if index.role(node) == "use")
        pending: list[tuple[cst.CSTNode, str | None]] = [(site, None) for site in sorted(sites, key=index.order)]
        visited: set[tuple[cst.FunctionDef, str]] = set()
        while pending:
            handed: list[tuple[cst.CSTNode, str | None]] = []
            for site, parameter in pending:
                loop = _loop_around(index, site)
                if loop is not None:
                    return loop, site, parameter
                callee = self._local_callee(index, site)
                if callee is not None and callee not in visited and len(visited) < 8:
                    visited.add(callee)
                    handed.extend((use, callee[1]) for use in _parameter_uses(index, *callee))
                # Returned (`return train_loader, valset`): the loop may be where the helper's caller
                # iterates what it gets back. No fix there: the sampler's name is the helper's.
                handed.extend((use, _RETURNED) for use in _returned_uses(index, site))
            pending = handed
        return None

    def _local_callee(self, index: ModuleIndex, site: cst.CSTNode) -> tuple[cst.FunctionDef, str] | None:
        """The function of this module that `site` is handed to as an argument (`train(loader)`,
        `self.fit(loader)`), and the parameter that receives it."""
        arg = index.parent(site)
        call = index.parent(arg) if arg is not None else None
        if not (isinstance(arg, cst.Arg) and arg.value is site and isinstance(call, cst.Call)):
            return None
        function: cst.FunctionDef | None = None
        if isinstance(call.func, cst.Name) and not index.binds_locally(index.scope(call), call.func.value):
            function = module_functions(self.context.module).get(call.func.value)
            skip = 0
        elif isinstance(call.func, cst.Attribute) and dotted_name(call.func.value) == "self":
            owner = owning_class(index, call)
            methods = [statement for statement in owner.body.body if isinstance(statement, cst.FunctionDef)] if owner else []
            function = next((method for method in methods if method.name.value == call.func.attr.value), None)
            skip = 1
        if function is None or any(other.star for other in call.args):
            return None
        parameters = list(function.params.params)[skip:]
        if arg.keyword is not None:
            named = [*parameters, *function.params.kwonly_params]
            found = next((param for param in named if param.name.value == arg.keyword.value), None)
        else:
            position = [other for other in call.args if other.keyword is None].index(arg)
            found = parameters[position] if position < len(parameters) else None
        return (function, found.name.value) if found is not None else None

    def _fix(
        self, index: ModuleIndex, sampler: cst.Call, loop: cst.CSTNode, holders: list[str], loader_holders: list[str]
    ) -> PendingFix | None:
        if not (isinstance(loop, cst.For) and isinstance(loop.target, cst.Name) and isinstance(loop.body, cst.IndentedBlock)):
            return None
        scope = index.scope(loop)
        receiver = next((holder for holder in holders if _visible(index, holder, scope, loop)), None)
        optional = receiver is not None and not isinstance(index.parent(sampler), (cst.Assign, cst.AnnAssign))
        if receiver is None:
            # The loader's sampler is certainly a DistributedSampler only when it was built inline or
            # assigned without a condition.
            loader = next((holder for holder in loader_holders if _visible(index, holder, scope, loop)), None)
            if loader is None or not isinstance(index.parent(sampler), (cst.Arg, cst.Assign, cst.AnnAssign)):
                return None
            receiver = f"{loader}.sampler"
        first = loop.body.body[0]
        indent = "".join(indentation(index, first))
        module = self.context.module
        call = f"{receiver}.set_epoch({loop.target.value})"
        if optional:
            # `sampler = DistributedSampler(...) if distributed else None`: only a sampler has set_epoch.
            text = f"{indent}if {receiver} is not None:{module.default_newline}{indent}{module.default_indent}{call}{module.default_newline}"
        else:
            text = f"{indent}{call}{module.default_newline}"
        return PendingFix(Applicability.UNSAFE, f"Call `{call}` at the start of each epoch", (NodeEdit(first, text, "line_before"),))


def _loop_around(index: ModuleIndex, site: cst.CSTNode) -> cst.CSTNode | None:
    """A loop in the site's own function around an iteration of it, or around a call it is handed to."""
    batch_loop: cst.CSTNode | None = None
    consumed = False
    for ancestor in index.ancestors(site):
        if isinstance(ancestor, (cst.FunctionDef, cst.Lambda, cst.ClassDef)):
            return None
        if isinstance(ancestor, (cst.Arg, cst.For)):
            consumed = True
        if isinstance(ancestor, cst.For) and index.contains(ancestor.iter, site):
            batch_loop = ancestor
            continue
        if isinstance(ancestor, (cst.For, cst.While)) and consumed and ancestor is not batch_loop:
            return ancestor
    return None


def _parameter_uses(index: ModuleIndex, function: cst.FunctionDef, parameter: str) -> list[cst.CSTNode]:
    """Where a function reads a parameter, before any rebinding of it takes effect (`loader =
    sample_data(loader)` hands the parameter's object on; later reads see another object)."""
    mine = [node for node in index.occurrences(parameter) if index.scope(node) is function]
    rebinds = [index.effective_order(node) for node in mine if index.role(node) == "bind" and not isinstance(index.parent(node), cst.Param)]
    until = min(rebinds, default=None)
    return [node for node in mine if index.role(node) == "use" and (until is None or index.order(node) < until)]


# The "parameter" of a site reached through a helper's return: the loop is the caller's.
_RETURNED = "<returned>"


def _module_function_of(index: ModuleIndex, node: cst.CSTNode) -> cst.FunctionDef | None:
    """The module-level function whose own code (not a nested function's) holds `node`."""
    scope = index.scope(node)
    return scope if isinstance(scope, cst.FunctionDef) and isinstance(index.parent(scope), cst.Module) else None


def _calls_of(index: ModuleIndex, function: cst.FunctionDef) -> list[cst.Call]:
    """The calls of a module-level function by its name, where nothing local shadows it."""
    found = []
    for occurrence in index.occurrences(function.name.value):
        call = index.parent(occurrence)
        if isinstance(call, cst.Call) and call.func is occurrence and not index.binds_locally(index.scope(call), function.name.value):
            found.append(call)
    return found


def _returned_uses(index: ModuleIndex, site: cst.CSTNode) -> list[cst.CSTNode]:
    """Where the callers of a module function read what it returns at `site` (`return loader` or
    `return loader, valset`): the names each call's result is assigned to, read after that."""
    parent = index.parent(site)
    position = None
    if isinstance(parent, cst.Element) and isinstance(index.parent(parent), cst.Tuple):
        tuple_node = index.parent(parent)
        position = next(at for at, element in enumerate(tuple_node.elements) if element is parent)
        parent = index.parent(tuple_node)
    function = _module_function_of(index, site)
    if not isinstance(parent, cst.Return) or function is None:
        return []
    uses: list[cst.CSTNode] = []
    for call in _calls_of(index, function):
        assign = index.parent(call)
        if not (isinstance(assign, cst.Assign) and assign.value is call and len(assign.targets) == 1):
            continue
        target = assign.targets[0].target
        if position is not None:
            if not isinstance(target, (cst.Tuple, cst.List)) or position >= len(target.elements):
                continue
            target = target.elements[position].value
        if not isinstance(target, cst.Name):
            continue
        scope = index.scope(call)
        mine = [node for node in index.occurrences(target.value) if index.scope(node) is scope]
        if sum(index.role(node) == "bind" for node in mine) > 1:
            continue  # rebound: the loop may iterate another object
        uses += [node for node in mine if index.role(node) == "use" and index.order(node) > index.order(call)]
    return uses


def _returned_by_calls(index: ModuleIndex, sampler: cst.Call, shuffle: cst.BaseExpression | None) -> list[cst.Call] | None:
    """Where a sampler that a module function returns is built (`return DistributedSampler(ds,
    shuffle=shuffle)`): the calls of that function that may reach the return and shuffle, by the
    literals they pass or leave as default. None where the sampler is not returned so."""
    statement = index.parent(sampler)
    function = _module_function_of(index, sampler)
    if not isinstance(statement, cst.Return) or function is None:
        return None
    chain = [function, *reversed(list(itertools.takewhile(lambda node: node is not function, index.ancestors(sampler))))]
    built = []
    for call in _calls_of(index, function):
        if any(arg.star for arg in call.args):
            continue
        caller = index.scope(call)
        caller = caller if isinstance(caller, cst.FunctionDef) else None
        # The sampler's `if distributed:` is taken whenever the program runs distributed: only a
        # literal turns a test away here.
        if not taken_for(call, function, chain, caller, unknown_taken=True):
            continue
        if shuffle is not None and not _shuffles(call, function, shuffle, caller):
            continue
        built.append(call)
    return built


def _shuffles(call: cst.Call, function: cst.FunctionDef, shuffle: cst.BaseExpression, caller: cst.FunctionDef | None) -> bool:
    """Whether the sampler's `shuffle` is true for this call: a literal, or a parameter of the helper
    that the call passes or leaves true."""
    if literal(shuffle) is not ...:
        return literal(shuffle) is True
    return isinstance(shuffle, cst.Name) and passes_true(call, function, shuffle.value, caller)


def _holders(index: ModuleIndex, call: cst.Call) -> list[str]:
    """The names or `self.x` attributes a call's result is assigned to (through `x if c else None`)."""
    node: cst.CSTNode = call
    parent = index.parent(node)
    while isinstance(parent, (cst.IfExp, cst.BooleanOperation)):
        node, parent = parent, index.parent(parent)
    names = []
    if isinstance(parent, cst.Assign) and parent.value is node:
        names = [dotted_name(target.target) for target in parent.targets]
    elif isinstance(parent, (cst.AnnAssign, cst.NamedExpr)) and parent.value is node:
        names = [dotted_name(parent.target)]
    return sorted(name for name in names if name is not None)


def _visible(index: ModuleIndex, holder: str, scope: cst.CSTNode, loop: cst.CSTNode) -> bool:
    """Whether `holder` names the same object at the loop: bound before it in the loop's own function,
    bound at module level (and not in the function), or a `self.x` attribute of the loop's class."""
    if is_self_attribute(index, loop, holder):
        owner = owning_class(index, loop)
        return owner is not None and any(index.contains(owner, node) for node in index.occurrences(holder))
    if "." in holder:
        return False
    bindings = [node for node in index.occurrences(holder) if index.role(node) == "bind"]
    if any(index.scope(node) is scope and index.order(node) < index.order(loop) for node in bindings):
        return True
    return not any(index.scope(node) is scope for node in bindings) and any(isinstance(index.scope(node), cst.Module) for node in bindings)
