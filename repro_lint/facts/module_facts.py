"""Per-module facts: the small, picklable record of a module that the project pass works from.

The project pass never re-reads or re-parses a module: what program-level rules need to know about
other modules (imports, functions, calls, events, entry-point signs, where a fix could insert code)
is collected here, in the same traversal that runs the local rules.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Collection, Hashable, Iterator
from dataclasses import dataclass, field, replace
from typing import Any, TypeVar

import libcst as cst

from repro_lint.core.findings import Edit
from repro_lint.core.imports import is_builtin
from repro_lint.core.records import pickled_by_constructor
from repro_lint.core.source import Line, Position
from repro_lint.facts.checkpoint_collector import module_checkpoints
from repro_lint.facts.callers_choice import ArgumentsFact, Choice, ChoiceFact, arguments_fact
from repro_lint.facts.checkpoints import ModuleCheckpoints
from repro_lint.facts.context import FileContext
from repro_lint.facts.dataset_records import DatasetFacts
from repro_lint.facts.dataloader_calls import CHOSEN_SETTINGS, loader_choice
from repro_lint.facts.datasets import dataset_facts
from repro_lint.facts.edits import argument, literal, off_unless_passed, with_keyword
from repro_lint.facts.dispatch import dispatch_scopes
from repro_lint.facts.events import ASSIGNED_FLAG, SWITCHABLE, Event, assignment_events, by_name_targets, call_events, environment_call_events
from repro_lint.facts.fix_points import EntryFixFacts, SeedStatements, entry_fix_facts
from repro_lint.facts.init_contexts import initialises_nothing
from repro_lint.facts.launches import Launch, LaunchFinder
from repro_lint.facts.names import dotted_name, import_from_module, is_main_guard
from repro_lint.facts.positions import Positions
from repro_lint.facts.seed_option import ArgparseSeed, seed_option
from repro_lint.facts.seed_reads import MAIN_BLOCK, SeedReadsCollector
from repro_lint.facts.training_context import does_not_train
from repro_lint.facts.traversal import walk
from repro_lint.knowledge import load

# Method calls that mean "this code trains": `loss.backward()`, `optimizer.step()`,
# `trainer.fit(model)`. Receivers are matched on their name, since their types are unknown statically.
_ANY_RECEIVER_TRAINING_METHODS = frozenset({"backward"})
_NAMED_RECEIVER_TRAINING_METHODS = {"step": "optim", "fit": "trainer", "train": "trainer"}
_WRAPPERS = frozenset(load("function_wrappers.json")["calls"])
# Library objects that run a training step when called (timm's `NativeScaler`): building one trains,
# as building a project class whose `__call__` trains does.
_STEP_OBJECTS = frozenset(load("training_steps.json")["step_objects"])
# What a DataLoader worker runs: a dataset's item methods, and transforms it calls (`self.transform(x)`);
# global `random`/numpy draws there are reseeded per worker.
WORKER_METHODS = frozenset({"__getitem__", "__getitems__", "__iter__", "__call__"})
# The branching nodes whose test may guard a seeding call (`_guard`).
_BRANCHES = frozenset({cst.If, cst.IfExp})

_Shared = TypeVar("_Shared", bound=Hashable | None)


@pickled_by_constructor(shared=("targets", "method"))
@dataclass(frozen=True, slots=True)
class CallFact:
    """One call: the qualified names its callee may denote, or the method name of `obj.method()`."""

    targets: tuple[str, ...]
    method: str | None
    line: Line
    guard: str | None = None
    # A function handed over by name (`callbacks=[seed_all]`): it may run, but naming a class
    # does not build one.
    reference: bool = False
    # For a function started in other processes (`mp.spawn(main_worker)`): the launching call as
    # messages show it, and the start method (see launches.py).
    launcher: str | None = None
    start: str = ""
    # Made in a `with` block that builds modules without initialising their weights
    # (`with torch.device("meta"):`, facts/init_contexts.py): what it initialises before it returns
    # draws nothing from torch's RNG.
    no_init: bool = False
    # Handed to a call that wraps it without running it (`torch.compile(f)`,
    # knowledge/function_wrappers.json): it runs later, when the wrapper is called.
    wrapped: bool = False


@pickled_by_constructor
@dataclass(frozen=True, slots=True)
class FunctionFacts:
    qualname: str
    line: Line
    calls: tuple[CallFact, ...]
    trains: bool
    events: tuple[Event, ...] = ()
    end_line: Line = 0
    # Where the code it chooses at run time may live (`globals()[name](...)`: its own module;
    # `hydra.utils.instantiate(cfg)`: anywhere, facts/dispatch.py), sorted.
    dispatches: tuple[str, ...] = ()


@pickled_by_constructor(shared=("bases",))
@dataclass(frozen=True, slots=True)
class ClassFacts:
    qualname: str
    bases: tuple[str, ...]


@pickled_by_constructor
@dataclass(frozen=True, slots=True)
class SeedOption:
    """A seed setting the user can leave at its default: an argparse option or a config field, and
    the edit that gives it the default 0."""

    start: Position
    end: Position
    name: str
    default_is_none: bool
    fix: Edit | None = None


@pickled_by_constructor
@dataclass(frozen=True, slots=True)
class SeedReads:
    """What REP109 needs of a module (facts/seed_reads.py), each with the function it happens in
    (None: module-level code; MAIN_BLOCK: under the main guard): the seed-like names it reads for their value, the calls it hands a
    whole options object to, and where it turns one into a mapping that may reach any code
    (`vars(args)`)."""

    names: tuple[tuple[str, str | None], ...] = ()
    # With the name holding the object (`args`), which `parsed` narrows (see rules/seed_options.py).
    handed_over: tuple[tuple[CallFact, str, str | None], ...] = ()
    converting: tuple[tuple[str, str | None], ...] = ()
    parsed: tuple[str, ...] = ()  # the names a parse result is bound to (`args = parser.parse_args()`)


# The kinds of place in a module where project checks report what the programs running it, or the
# functions it calls, decide (ModuleFacts.sites): its events of one kind (`events_of_kind`), its
# first seeding of one generator in a body after calls made there (`seeds_after_calls`), its seed
# options, its DataLoaders, its checkpoint saves and restores, its calls passing arguments to a
# function that may be the project's (`arguments`).
SEED_OPTIONS, LOADERS, CHECKPOINTS, ARGUMENTS = "seed options", "loaders", "checkpoints", "arguments"


def events_of_kind(kind: str) -> str:
    """The kind of place that a module's events of `kind` (Event.kind) are."""
    return f"{kind} events"


def _inert(targets: Collection[str]) -> bool:
    """Whether a call of no method (or a function handed over) naming `targets` is one the project
    pass follows in no project (`program.model.is_inert`): it names nothing (`handlers[kind](x)`), or
    only builtins, which the interpreter itself defines (`ModuleNames` resolves no project module
    for them). Such calls are left out of the facts: the main process holds every module's calls,
    and a quarter of transformers' were these (`len`, `isinstance`, `getattr`)."""
    return all(map(is_builtin, targets))


def seeds_after_calls(rng: str) -> str:
    """The kind of place that the first seeding of the generator `rng` (Event.rng) in a body (a
    function's, or the module's with its main block) is, where calls made in that body come before
    it, on earlier lines: what those calls run may draw first."""
    return f"{rng} seeds after calls"


@pickled_by_constructor(shared_items=("imports", "bindings"))
@dataclass(frozen=True, slots=True)
class ModuleFacts:
    module: str
    path: str
    is_package: bool
    imports: tuple[str, ...]
    bindings: tuple[tuple[str, tuple[str, ...]], ...]  # sorted by name
    star_imports: tuple[str, ...]
    main_guard_line: Line | None
    module_calls: tuple[CallFact, ...]
    trains_at_module_level: bool
    functions: tuple[FunctionFacts, ...]
    module_events: tuple[Event, ...] = ()
    # As `FunctionFacts.dispatches`, for its module-level code and main block (`fire.Fire()`).
    dispatches_on_load: tuple[str, ...] = ()
    # The `if __name__ == "__main__":` block runs only when this module is the program's entry.
    main_calls: tuple[CallFact, ...] = ()
    main_events: tuple[Event, ...] = ()
    classes: tuple[ClassFacts, ...] = ()
    seed_options: tuple[SeedOption, ...] = ()
    seed_reads: SeedReads = SeedReads()
    spawns_workers: bool = False
    fix: EntryFixFacts | None = None
    datasets: DatasetFacts | None = None
    checkpoints: ModuleCheckpoints = ModuleCheckpoints()
    # DataLoader settings that a function's caller decides, and the arguments of the module's calls
    # that may reach a project function (facts/callers_choice.py).
    choices: tuple[ChoiceFact, ...] = ()
    arguments: tuple[ArgumentsFact, ...] = ()

    def every_call(self) -> Iterator[CallFact]:
        """The module's calls wherever they are made: at module level, in its main block, in its functions."""
        yield from self.module_calls
        yield from self.main_calls
        for function in self.functions:
            yield from function.calls

    def bodies(self) -> list[tuple[tuple[Event, ...], tuple[CallFact, ...]]]:
        """The events and calls of each body the module runs in order: the module's with its main
        block, and each function's."""
        return [(self.module_events + self.main_events, self.module_calls + self.main_calls)] + [
            (function.events, function.calls) for function in self.functions
        ]

    def sites(self, outside: Callable[[str], bool] | None = None) -> frozenset[str]:
        """The kinds of place the module holds where a project check may report what the programs
        running it, or the functions it calls, decide (`RuleMeta.sites` and `imported_sites` name
        those of each rule). `outside`: as `calls_before_seeds` takes it."""
        held = {
            SEED_OPTIONS: bool(self.seed_options),
            LOADERS: self.datasets is not None and bool(self.datasets.loaders),
            CHECKPOINTS: bool(self.checkpoints.functions),
            ARGUMENTS: bool(self.arguments),
        }
        kinds = {events_of_kind(event.kind) for events, _ in self.bodies() for event in events}
        return frozenset({kind for kind, here in held.items() if here} | kinds | self.calls_before_seeds(outside).keys())

    def calls_before_seeds(self, outside: Callable[[str], bool] | None = None) -> dict[str, frozenset[str]]:
        """The kinds of place `seeds_after_calls(rng)` the module holds, each with the targets of the
        calls made before those seeds in their bodies: what they run decides there. `outside`, where
        given, tells a target that denotes nothing the project defines (`ModuleNames.outside`: a
        library's function): such targets are left out, and a seed after calls with no other target
        (`obj.method()` has none), which resolve to none of the project's functions, is no such
        place."""
        found: dict[str, set[str]] = {}
        for events, calls in self.bodies():
            first: dict[str, int] = {}
            for event in events:
                if event.kind == "seed":
                    first.setdefault(event.rng, event.line)
            for rng, line in first.items():
                targets = [[target for target in call.targets if outside is None or not outside(target)] for call in calls if call.line < line]
                if outside is not None:
                    targets = [kept for kept in targets if kept]
                if targets:
                    found.setdefault(seeds_after_calls(rng), set()).update(target for kept in targets for target in kept)
        return {kind: frozenset(targets) for kind, targets in found.items()}

    def binding(self, name: str) -> tuple[str, ...]:
        # `bindings` is sorted by name: a look-up needs no dict (the project pass makes 60,000 of them
        # on transformers).
        at = bisect_left(self.bindings, (name,))
        return self.bindings[at][1] if at < len(self.bindings) and self.bindings[at][0] == name else ()

    def function_at(self, line: int) -> str | None:
        """The innermost function holding `line`, by qualified name."""
        holding = [function for function in self.functions if function.line <= line <= function.end_line]
        return max(holding, key=lambda function: function.line).qualname if holding else None


def is_training_call(node: cst.Call, targets: frozenset[str] = frozenset()) -> bool:
    """Whether a call is a training step; `targets` are the qualified names its callee may denote."""
    if not targets.isdisjoint(_STEP_OBJECTS):
        return True
    if not isinstance(node.func, cst.Attribute):
        return False
    method = node.func.attr.value
    if method in _ANY_RECEIVER_TRAINING_METHODS:
        return True
    hint = _NAMED_RECEIVER_TRAINING_METHODS.get(method)
    if hint is None:
        return False
    receivers = [node.func.value, *(arg.value for arg in node.args)]
    # `L.Trainer(...).fit(model)`: a receiver built in place is named by what builds it.
    receivers = [receiver.func if isinstance(receiver, cst.Call) else receiver for receiver in receivers]
    return any(hint in (dotted_name(receiver) or "").lower() for receiver in receivers)


def _is_super_call(node: cst.BaseExpression) -> bool:
    return type(node) is cst.Call and type(node.func) is cst.Name and node.func.value == "super"  # every call: see names.py


def _tests_unset(test: cst.BaseExpression) -> bool:
    """`x is None`, `x == None` or `not x`: a test true where the option is left unset."""
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        return True
    if isinstance(test, cst.Comparison) and len(test.comparisons) == 1:
        comparison = test.comparisons[0]
        return isinstance(comparison.operator, (cst.Is, cst.Equal)) and literal(comparison.comparator) is None
    return False


class _SeedMention(cst.CSTVisitor):
    """The first `x.seed` / `seed` name in an `if` test: the option that guards a seeding call."""

    def __init__(self) -> None:
        self.found: str | None = None

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        if self.found is None and "seed" in node.attr.value.lower():
            self.found = dotted_name(node)
        return self.found is None

    def visit_Name(self, node: cst.Name) -> None:
        if self.found is None and "seed" in node.value.lower():
            self.found = node.value


@dataclass
class _Body:
    """Calls and events of one function body, or of the module-level code."""

    calls: list[tuple[cst.Call, tuple[str, ...], str | None, str | None, bool, Launch | None, bool, bool]] = field(default_factory=list)
    events: list[tuple[cst.CSTNode, Event]] = field(default_factory=list)
    trains: bool = False
    dispatches: set[str] = field(default_factory=set)


@dataclass
class _FunctionState:
    qualname: str
    node: cst.FunctionDef
    body: _Body = field(default_factory=_Body)


class FactsCollector:
    """Batched-visitor part that records a module's facts while the rules run."""

    def __init__(self, context: FileContext, path: str, is_package: bool) -> None:
        self.context = context
        self.path = path
        self.is_package = is_package
        self._imports: set[str] = set()
        self._stars: set[str] = set()
        self._main_guard: cst.If | None = None
        self._module = _Body()
        self._main = _Body()
        self._functions: list[_FunctionState] = []
        self._open: list[_FunctionState] = []
        self._class_names: list[str] = []
        self._class_bases: list[tuple[str, ...]] = []
        self._classes: list[ClassFacts] = []
        # (reported node, name, default is None, node to replace, replacement code)
        self._options: list[tuple[cst.CSTNode, str, bool, cst.CSTNode, str]] = []
        self._spawns_workers = False
        self._argparse_seeds: list[bool] = []  # whether each `--seed` option may be None
        self._seed_helpers = frozenset(context.settings.seed_helpers)
        self._seed_statements = SeedStatements()
        self._launches = LaunchFinder(context)
        self._seed_reads = SeedReadsCollector(context, self._reads_scope)
        self._choices: list[tuple[cst.Call, str, str, Choice]] = []
        self._arguments: list[tuple[cst.Call, tuple[str, ...], cst.FunctionDef | None]] = []
        # The `with` statements that build modules without initialising their weights.
        self._no_init_blocks: set[cst.With] = set()
        # The seed option each `if` test mentions first, by the `if`'s id: asked by every call in its branches.
        self._seed_mentions: dict[int, str | None] = {}
        # An assignment's target denotes the flag assignment events are about only where the text
        # names it: imports, aliases and star-imported names are all text. Most modules do not, and
        # resolving every target (`hidden_states = ...`) took 7% of the traversal (150 transformers files).
        self._names_assigned_flag = ASSIGNED_FLAG.rpartition(".")[2] in context.source

    # Imports -----------------------------------------------------------------------------------

    def visit_Import(self, node: cst.Import) -> None:
        for alias in node.names:
            name = dotted_name(alias.name)
            if name:
                self._imports.add(name)

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        module = import_from_module(node, self.context.package)
        if module is None:
            return
        self._imports.add(module)
        if isinstance(node.names, cst.ImportStar):
            self._stars.add(module)
            return
        # `from pkg import name` may import the submodule pkg.name.
        for alias in node.names:
            name = dotted_name(alias.name)
            if name:
                self._imports.add(f"{module}.{name}")

    # Structure ---------------------------------------------------------------------------------

    def visit_If(self, node: cst.If) -> None:
        if self._main_guard is None and len(self.context.scopes) == 1 and is_main_guard(node):
            self._main_guard = node

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        qualname = ".".join([self.context.module_name, *self._class_names, node.name.value])
        bases = sorted({name for base in node.bases for name in self.context.qualified_names(base.value)})
        self._classes.append(ClassFacts(qualname, tuple(bases)))
        self._class_names.append(node.name.value)
        self._class_bases.append(tuple(bases))

    def leave_ClassDef(self, original_node: cst.ClassDef) -> None:
        self._class_names.pop()
        self._class_bases.pop()

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        if self._open:
            qualname = f"{self._open[-1].qualname}.<locals>.{node.name.value}"
        else:
            qualname = ".".join([self.context.module_name, *self._class_names, node.name.value])
        state = _FunctionState(qualname, node)
        self._functions.append(state)
        self._open.append(state)

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self._open.pop()

    def _body(self) -> _Body | None:
        """The body code here belongs to: the innermost function, or the module-level code (class
        bodies and lambdas are not followed)."""
        if self._open:
            return self._open[-1].body
        if any(isinstance(scope, (cst.ClassDef, cst.Lambda)) for scope in self.context.scopes):
            return None
        if self._main_guard is not None and self._main_guard in self.context.ancestors:
            return self._main
        return self._module

    def _reads_scope(self) -> str | None:
        """Where a seed read happens, for REP109: the innermost function, the main block, or None
        for other module-level code."""
        if self._open:
            return self._open[-1].qualname
        return MAIN_BLOCK if self._body() is self._main else None

    def _in_worker(self) -> bool:
        return bool(self._open) and self._open[-1].node.name.value in WORKER_METHODS and bool(self._class_names)

    def _guard(self) -> str | None:
        """The seed option an `if` around the current node tests, where the node runs only when that
        option is set: in the body of `if args.seed is not None:`, or in the `else` of
        `if args.seed is None:` (whose body runs when it is not)."""
        ancestors = self.context.ancestors
        # Asked for every call, up through its ancestors: exact types, see names.py.
        for depth in range(len(ancestors) - 1, -1, -1):
            ancestor = ancestors[depth]
            if type(ancestor) is cst.FunctionDef:
                return None
            if type(ancestor) in _BRANCHES and depth + 1 < len(ancestors):
                found = self._seed_mentions.get(id(ancestor), False)
                if found is False:
                    mention = _SeedMention()
                    walk(ancestor.test, mention)
                    found = self._seed_mentions[id(ancestor)] = mention.found
                in_orelse = ancestors[depth + 1] is ancestor.orelse
                if found and in_orelse == _tests_unset(ancestor.test):
                    return found
        return None

    def _builds_without_init(self) -> bool:
        """Whether the current node runs in the body of a `with` that builds modules without
        initialising their weights, in the same function: a function defined there runs when it is
        called, outside the block."""
        if not self._no_init_blocks:
            return False
        ancestors = self.context.ancestors
        for depth in range(len(ancestors) - 2, -1, -1):
            ancestor = ancestors[depth]
            if type(ancestor) in (cst.FunctionDef, cst.Lambda):
                return False
            if isinstance(ancestor, cst.With) and ancestor in self._no_init_blocks and ancestors[depth + 1] is ancestor.body:
                return True
        return False

    def _record(self, node: cst.CSTNode, events: list[Event]) -> None:
        body = self._body()
        if body is not None and events and self._builds_without_init():
            # Initialisation there draws nothing; other draws (`torch.randn`) still do under
            # Fabric's and accelerate's contexts.
            events = [event for event in events if event.kind != "init"]
        if body is None or not events:
            return
        seeds = any(event.kind == "seed" for event in events)
        guard = self._guard() if seeds else None
        if seeds and isinstance(node, cst.Call):
            self._seed_statements.record(self.context, node)
        switch = self._switch() if any(event.kind in SWITCHABLE for event in events) else None
        in_worker = self._in_worker()
        body.events.extend(
            (node, replace(event, guard=guard, in_worker=in_worker, switch=switch if event.kind in SWITCHABLE else None))
            for event in events
        )

    def _switch(self) -> str | None:
        """The parameter of the innermost function that an `if <parameter>:` around this code tests,
        where the parameter is off unless a caller turns it on (no default, or a false one)."""
        if not self._open:
            return None
        function = self._open[-1].node
        ancestors = self.context.ancestors
        for at in range(len(ancestors) - 1, 0, -1):
            ancestor = ancestors[at]
            if ancestor is function:
                return None
            if isinstance(ancestor, cst.If) and isinstance(ancestor.test, cst.Name) and at + 1 < len(ancestors) and ancestors[at + 1] is ancestor.body:
                if off_unless_passed(function, ancestor.test.value):
                    return ancestor.test.value
        return None

    # Calls and assignments ---------------------------------------------------------------------

    def visit_Call(self, node: cst.Call) -> None:
        targets = self.context.qualified_names(node.func) or by_name_targets(node.func, self.context.qualified_names)
        method = node.func.attr.value if type(node.func) is cst.Attribute else None
        if method is not None and _is_super_call(node.func.value):
            # `super().__init__()` runs the method of the class's bases, not any method of that name.
            targets = frozenset(f"{base}.{method}" for base in (self._class_bases[-1] if self._class_bases else ()))
            method = None
        body = self._body()
        if body is not None:
            guard = self._guard()
            no_init = self._builds_without_init()
            if method is not None or not _inert(targets):
                body.calls.append((node, tuple(sorted(targets)), method, guard, False, None, no_init, False))
            body.trains |= is_training_call(node, targets) and not does_not_train(self.context, self.path)
            body.dispatches |= dispatch_scopes(node, targets, self.context.qualified_names, self.context.module_name)
            # Functions handed over by name (`callbacks=[seed_all]`) may run too; a worker_init_fn
            # runs in DataLoader workers, not in the program's own process; a function started in
            # other processes (`mp.spawn(main_worker)`) is recorded with its launch.
            launch = self._launches.launch(node, targets)
            if not _is_super_call(node):
                for arg in node.args:
                    if arg.keyword is not None and arg.keyword.value == "worker_init_fn":
                        continue
                    if launch is not None and arg.value is launch.arg:
                        body.calls.append((node, launch.targets, None, guard, True, launch, no_init, False))
                    elif isinstance(arg.value, (cst.Name, cst.Attribute)):
                        referenced = self.context.qualified_names(arg.value)
                        if not _inert(referenced):  # naming nothing is inert too
                            body.calls.append((node, tuple(sorted(referenced)), None, guard, True, None, no_init, bool(targets & _WRAPPERS)))
        method = self._open[-1].node.name.value if self._open and self._class_names else None
        self._record(node, [*call_events(node, targets, 0, self._seed_helpers, method), *environment_call_events(node, 0)])
        self._seed_reads.visit_Call(node, targets)
        self._argparse_option(node)
        if "torch.utils.data.DataLoader" in targets or "torch.utils.data.dataloader.DataLoader" in targets:
            workers = argument(node, "num_workers", 5)
            self._spawns_workers |= workers is not None and literal(workers.value) != 0
            self._loader_choices(node)
        if body is not None:
            self._arguments.append((node, tuple(sorted(targets)), self._open[-1].node if self._open else None))

    def _loader_choices(self, node: cst.Call) -> None:
        if not self._open:
            return
        for setting, offends in CHOSEN_SETTINGS.items():
            if offends(self.context, node):
                choice = loader_choice(self.context, node, setting)
                if choice is not None:
                    self._choices.append((node, self._open[-1].qualname, setting, choice))

    def _argparse_option(self, node: cst.Call) -> None:
        option = seed_option(node)
        if option is None:
            return
        flag, is_none = option
        self._argparse_seeds.append(is_none)
        default = argument(node, "default")
        if default is None:
            self._options.append((node, str(flag), is_none, node, self.context.code_for(with_keyword(node, "default", "0"))))
        else:
            self._options.append((node, str(flag), is_none, default.value, "0"))

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            self._launches.bind(target.target, node.value)
            targets = self.context.qualified_names(target.target) if self._names_assigned_flag else frozenset()
            self._record(node, list(assignment_events(target.target, node.value, targets, 0)))
            self._config_field(node, target.target, node.value)
        self._seed_reads.visit_Assign(node)

    def visit_Attribute(self, node: cst.Attribute) -> None:
        self._seed_reads.visit_Attribute(node)

    def visit_Subscript(self, node: cst.Subscript) -> None:
        self._seed_reads.visit_Subscript(node)

    def visit_With(self, node: cst.With) -> None:
        for item in node.items:
            if item.asname is not None:
                self._launches.bind(item.asname.name, item.item)  # type: ignore[arg-type]
        if any(initialises_nothing(item.item, self.context.qualified_names) for item in node.items):
            self._no_init_blocks.add(node)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        if node.value is not None:
            self._config_field(node, node.target, node.value)

    def _config_field(self, node: cst.CSTNode, target: cst.BaseExpression, value: cst.BaseExpression) -> None:
        """`seed: Optional[int] = None` in a dataclass or config class body."""
        # Asked of every assignment: exact types (see names.py).
        in_class_body = bool(self.context.scopes) and type(self.context.scopes[-1]) is cst.ClassDef
        if in_class_body and type(target) is cst.Name and target.value.lower() in ("seed", "random_seed"):
            field_default: cst.BaseExpression | None = value
            if isinstance(value, cst.Call) and (dotted_name(value.func) or "").endswith("field"):
                given = argument(value, "default")
                field_default = given.value if given is not None else None
            if field_default is not None:
                self._options.append((node, target.value, literal(field_default) is None, field_default, "0"))

    # Result ------------------------------------------------------------------------------------

    def facts(self, positions: Positions) -> ModuleFacts:
        def line_of(node: cst.CSTNode) -> int:
            return positions.start(node).line

        # Equal names are made one object, which pickling keeps: a module's calls name the same few
        # functions and methods over and over, and the main process holds every module's calls.
        shared: dict[Hashable, Any] = {}

        def one(value: _Shared) -> _Shared:
            return shared.setdefault(value, value)  # type: ignore[no-any-return]

        def calls(body: _Body) -> tuple[CallFact, ...]:
            return tuple(
                CallFact(
                    one(tuple(map(one, targets))),
                    one(method),
                    line_of(node),
                    one(guard),
                    reference,
                    *((launch.launcher, launch.start) if launch else ()),
                    no_init=no_init,
                    wrapped=wrapped,
                )
                for node, targets, method, guard, reference, launch, no_init, wrapped in body.calls
            )

        def events(body: _Body) -> tuple[Event, ...]:
            return tuple(
                replace(event, line=start.line, column=start.column)
                for node, event in body.events
                for start in (positions.start(node),)
            )

        bindings = self.context.resolver.module_bindings()
        argparse_seed = ArgparseSeed()
        argparse_seed.defined = bool(self._argparse_seeds)
        argparse_seed.may_be_none = any(self._argparse_seeds)
        self.context.record_argparse_seed(argparse_seed)
        return ModuleFacts(
            module=self.context.module_name,
            path=self.path,
            is_package=self.is_package,
            imports=tuple(sorted(self._imports)),
            bindings=tuple(sorted((name, tuple(sorted(targets))) for name, targets in bindings.items())),
            star_imports=tuple(sorted(self._stars)),
            main_guard_line=line_of(self._main_guard) if self._main_guard is not None else None,
            module_calls=calls(self._module),
            trains_at_module_level=self._module.trains or self._main.trains,
            dispatches_on_load=tuple(sorted(self._module.dispatches | self._main.dispatches)),
            functions=tuple(
                FunctionFacts(
                    state.qualname,
                    line_of(state.node),
                    calls(state.body),
                    state.body.trains,
                    events(state.body),
                    positions.range(state.node)[1].line,
                    tuple(sorted(state.body.dispatches)),
                )
                for state in self._functions
            ),
            module_events=events(self._module),
            main_calls=calls(self._main),
            main_events=events(self._main),
            classes=tuple(self._classes),
            seed_options=tuple(
                SeedOption(*positions.range(node), name, is_none, Edit(*positions.range(replaced), code))
                for node, name, is_none, replaced, code in self._options
            ),
            seed_reads=SeedReads(
                tuple(sorted(self._seed_reads.names, key=str)),
                tuple(
                    (CallFact(one(handed.targets), one(handed.method), line_of(handed.node)), handed.holder, handed.function)
                    for handed in self._seed_reads.handed_over_options()
                ),
                tuple(sorted(self._seed_reads.converting_options(), key=str)),
                tuple(sorted(self._seed_reads.parsed)),
            ),
            spawns_workers=self._spawns_workers,
            fix=entry_fix_facts(self.context, self._main_guard, positions, self._seed_statements, self._launches.launched),
            datasets=dataset_facts(self.context, positions),
            checkpoints=module_checkpoints(self.context, positions),
            choices=tuple(ChoiceFact(function, setting, choice, line_of(node)) for node, function, setting, choice in self._choices),
            arguments=tuple(
                found
                for node, targets, function in self._arguments
                if (found := arguments_fact(node, targets, function, *positions.range(node))) is not None
            ),
        )
