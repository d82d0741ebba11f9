"""What a call or assignment does to the program's randomness, read from the knowledge data.

Each event is a fact the project pass reasons about: an RNG seeded, an RNG drawn from, work put on
CUDA, deterministic algorithms switched on or off, CUBLAS_WORKSPACE_CONFIG set.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cache

import libcst as cst

from repro_lint.core.records import pickled_by_constructor
from repro_lint.core.source import Line
from repro_lint.facts.dataloader_calls import DATALOADERS, loader_argument
from repro_lint.facts.edits import argument, keyword, literal
from repro_lint.facts.names import dotted_name
from repro_lint.facts.traversal import walk
from repro_lint.knowledge import load

TORCH, NUMPY, RANDOM = "torch", "numpy", "random"
# Events a helper's parameter may switch on and off (see `Event.switch`).
SWITCHABLE = frozenset({"deterministic", "nondeterministic", "cublas"})
# The flag whose assignment is an event (`assignment_events`).
ASSIGNED_FLAG = "torch.backends.cudnn.deterministic"


@pickled_by_constructor(shared=("what",))
@dataclass(frozen=True, slots=True)
class Event:
    """`kind` is seed, consume (a draw), init (a draw that initialises parameters), shuffle (a
    DataLoader built to draw its order from the global RNG when it is iterated, not when it is
    built), cuda, deterministic, nondeterministic, cublas or start_method (`what` is the method);
    `rng` names the RNG of seed, consume, init and shuffle events;
    `what` is how messages show the cause (`nn.Linear`)."""

    kind: str
    line: Line
    what: str
    rng: str = ""
    column: int = 0
    guard: str | None = None
    in_worker: bool = False
    # For a determinism setting under `if <parameter>:` that callers may leave off (a helper's
    # `set_seed(seed, deterministic=False)`): the parameter. Whether a call turns it on is unknown,
    # so such an event counts only where it silences a finding.
    switch: str | None = None

    @property
    def order(self) -> tuple[object, ...]:
        """A total sort key (two events may differ in any field alone): lists of events sorted by
        it never depend on the order of a set, and so on PYTHONHASHSEED."""
        return (self.line, self.kind, self.rng, self.what, self.column, self.guard is not None, self.guard or "", self.in_worker, self.switch is not None, self.switch or "")


@pickled_by_constructor
@dataclass(frozen=True, slots=True)
class _Tables:
    seeders: dict[str, tuple[str, ...]]
    seeding_methods: dict[str, tuple[str, ...]]
    frameworks: dict[str, dict[str, object]]
    determinism: dict[str, dict[str, object]]
    consumers: dict[str, tuple[str, str]]
    consumer_prefixes: tuple[str, ...]
    tensor_methods: frozenset[str]
    initialiser_methods: frozenset[str]
    cuda_calls: frozenset[str]
    cuda_methods: frozenset[str]
    device_strings: frozenset[str]
    device_calls: frozenset[str]
    lightning: frozenset[str]
    cpu_accelerators: frozenset[str]
    device_index_names: frozenset[str]
    remote_calls: frozenset[str]
    start_method_setters: frozenset[str]


@cache
def tables() -> _Tables:
    seeders = load("seeders.json")
    determinism = load("determinism.json")
    randomness = load("randomness.json")
    cuda = load("cuda.json")
    # "init" draws only initialise parameters: they matter in programs that train.
    consumers = {name: (TORCH, "consume") for name in randomness["torch_calls"]}
    for package in randomness["torch_module_packages"]:
        consumers.update({f"{package}.{module}": (TORCH, "init") for module in randomness["torch_modules"]})
    consumers.update({f"numpy.random.{name}": (NUMPY, "consume") for name in randomness["numpy_functions"]})
    consumers.update({f"random.{name}": (RANDOM, "consume") for name in randomness["random_functions"]})
    return _Tables(
        seeders={name: tuple(entry["seeds"]) for entry in seeders["seeders"] for name in entry["names"]},
        seeding_methods={name: tuple(rngs) for name, rngs in seeders["seeding_methods"].items()},
        frameworks={name: entry for entry in seeders["framework_objects"] for name in entry["names"]},
        determinism={name: entry for entry in determinism["calls"] for name in entry["names"]},
        consumers=consumers,
        consumer_prefixes=tuple(randomness["torch_prefixes"]),
        tensor_methods=frozenset(randomness["tensor_methods"]),
        initialiser_methods=frozenset(randomness["initialiser_methods"]),
        cuda_calls=frozenset(cuda["calls"]),
        cuda_methods=frozenset(cuda["methods"]),
        device_strings=frozenset(cuda["device_strings"]),
        device_calls=frozenset(cuda["device_calls"]),
        lightning=frozenset(cuda["lightning"]["names"]),
        cpu_accelerators=frozenset(cuda["lightning"]["cpu_accelerators"]),
        device_index_names=frozenset(cuda["device_index_names"]),
        remote_calls=frozenset(cuda["remote_calls"]),
        start_method_setters=frozenset(load("processes.json")["start_method_setters"]),
    )


_BY_NAME = ".__dict__[...]"


def by_name_targets(func: cst.BaseExpression, qualified_names: Callable[[cst.BaseExpression], frozenset[str]]) -> frozenset[str]:
    """What `models.__dict__[args.arch](...)` calls: a member of `models` chosen by name, shown as
    `torchvision.models.__dict__[...]`."""
    if isinstance(func, cst.Subscript) and isinstance(func.value, cst.Attribute) and func.value.attr.value == "__dict__":
        return frozenset(name + _BY_NAME for name in qualified_names(func.value.value))
    return frozenset()


def short(name: str) -> str:
    """How messages show a qualified name: `torch.nn.Linear` as `nn.Linear`, `numpy.random.rand` as
    `np.random.rand`."""
    for prefix, shown in (("torch.nn.modules.", "nn."), ("torch.nn.", "nn."), ("numpy.", "np.")):
        if name.startswith(prefix):
            return shown + name[len(prefix) :]
    return name


def _is_cuda_string(node: cst.BaseExpression) -> bool:
    """`"cuda"`, `"cuda:1"`, and `f"cuda:{rank}"` (whose text before the first field says the device)."""
    if isinstance(node, cst.FormattedString):
        first = node.parts[0] if node.parts else None
        value: object = first.value if isinstance(first, cst.FormattedStringText) and ":" in first.value else None
    else:
        value = literal(node)
    return isinstance(value, str) and value.split(":")[0].lower() in tables().device_strings


def _is_device_index(node: cst.BaseExpression) -> bool:
    """An accelerator given by its index: `0`, or a variable named like one (`rank`, `args.gpu`)."""
    value = literal(node)
    if isinstance(value, int) and not isinstance(value, bool):
        return True
    name = dotted_name(node)
    return name is not None and name.rpartition(".")[2] in tables().device_index_names


def _is_cuda_device(node: cst.BaseExpression) -> bool:
    return _is_cuda_string(node) or _is_device_index(node)


class _CudaStrings(cst.CSTVisitor):
    def __init__(self) -> None:
        self.found: str | None = None

    def visit_SimpleString(self, node: cst.SimpleString) -> None:
        if self.found is None and _is_cuda_string(node):
            self.found = str(node.evaluated_value)

    def visit_FormattedString(self, node: cst.FormattedString) -> None:
        if self.found is None and _is_cuda_string(node):
            self.found = "cuda"


def call_events(call: cst.Call, targets: frozenset[str], line: int, seed_helpers: frozenset[str], method: str | None = None) -> Iterator[Event]:
    """The events of one call whose callee may denote any of `targets`, made in the method `method` of
    a class (None elsewhere)."""
    data = tables()
    for name in sorted(targets):
        if name in seed_helpers:
            for rng in (NUMPY, RANDOM, TORCH):
                yield Event("seed", line, name, rng)
        for rng in data.seeders.get(name, ()):
            yield Event("seed", line, short(name), rng)
        framework = data.frameworks.get(name)
        if framework is not None and _framework_seeds(call, framework):
            for rng in framework["seeds"]:  # type: ignore[union-attr]
                yield Event("seed", line, short(name), rng)
        consumer = data.consumers.get(name)
        # `torchvision.models.resnet50(...)` and `models.__dict__[args.arch]()` build a model;
        # `torchvision.models.__dict__.keys()` does not.
        if consumer is None and name.startswith(data.consumer_prefixes) and ("__" not in name or name.endswith(_BY_NAME)):
            consumer = (TORCH, "init")
        if consumer is not None and not _draws_from_own_generator(call):
            yield Event(consumer[1], line, short(name), consumer[0])
        shuffled = _global_shuffle(call, name)
        if shuffled is not None:
            yield Event("shuffle", line, shuffled, TORCH)
        if name in data.cuda_calls:
            yield Event("cuda", line, short(name))
        device = next((arg.value for arg in call.args if _is_cuda_string(arg.value)), None) if name in data.device_calls else None
        if device is not None:
            yield Event("cuda", line, f"{short(name)}({_shown(device)})")
        if name in data.lightning and _lightning_on_gpu(call):
            yield Event("cuda", line, short(name))
        if name in data.remote_calls:
            # `rpc.remote(worker, Shard, args=("cuda:0",) + args)` builds the shard on a GPU.
            strings = _CudaStrings()
            for arg in call.args:
                walk(arg.value, strings)
            if strings.found is not None:
                yield Event("cuda", line, f"{short(name)}(..., {strings.found!r})")
        entry = data.determinism.get(name)
        if entry is not None:
            yield from _determinism(call, name, entry, line)
        if name in data.start_method_setters:
            method = argument(call, "method", 0)
            value = literal(method.value) if method is not None else None
            if isinstance(value, str):
                yield Event("start_method", line, value)
    # A function known by name (`nn.init.normal_(w)`) is judged by its name above, not taken for a
    # tensor's in-place sampler.
    if not any(name in data.consumers or name.startswith(data.consumer_prefixes) for name in targets):
        yield from _method_events(call, line, method in data.initialiser_methods)
    for arg in call.args:
        if arg.keyword is None:
            continue
        if (arg.keyword.value == "backend" and _is_cuda_string(arg.value)) or (arg.keyword.value == "device" and _is_cuda_device(arg.value)):
            yield Event("cuda", line, f"{arg.keyword.value}={_shown(arg.value)}")


def _global_shuffle(call: cst.Call, name: str) -> str | None:
    """How messages show a DataLoader that shuffles (`shuffle=True`) given no `generator`: iterating
    it draws its order's seed from torch's global RNG. None for any other call. (Random samplers
    are draws of randomness.json already.)"""
    if name not in DATALOADERS:
        return None
    shuffle = loader_argument(call, "shuffle")
    if shuffle is None or literal(shuffle.value) is not True or loader_argument(call, "generator") is not None:
        return None
    return f"{short(name).rpartition('.')[2]}(shuffle=True)"


def _draws_from_own_generator(call: cst.Call) -> bool:
    """`torch.randn(3, generator=g)` draws from `g`, not from the global RNG (REP103 judges `g`)."""
    given = keyword(call, "generator")
    return given is not None and literal(given.value) is not None


def _shown(node: cst.BaseExpression) -> str:
    value = literal(node)
    if value is not ...:
        return repr(value)
    return dotted_name(node) or (cst.Module([]).code_for_node(node) if isinstance(node, cst.FormattedString) else "...")


def _framework_seeds(call: cst.Call, framework: dict[str, object]) -> bool:
    required = framework.get("requires_keyword")
    if required is not None:
        given = keyword(call, str(required))
        return given is not None and literal(given.value) is not None
    switch = framework.get("unless_keyword_false")
    if switch is not None:
        given = keyword(call, str(switch))
        return given is None or literal(given.value) is not False
    return True


def _lightning_on_gpu(call: cst.Call) -> bool:
    accelerator = keyword(call, "accelerator")
    if accelerator is None:
        return True
    value = literal(accelerator.value)
    return isinstance(value, str) and value.lower() not in tables().cpu_accelerators


def _determinism(call: cst.Call, name: str, entry: dict[str, object], line: int) -> Iterator[Event]:
    if "argument" not in entry:
        yield Event("deterministic", line, short(name))
        if entry.get("sets_cublas"):
            yield Event("cublas", line, short(name))
        return
    given = argument(call, str(entry["argument"]), entry.get("position"))  # type: ignore[arg-type]
    if given is None:
        return
    value = literal(given.value)
    if value is ... or value in entry["enabling_values"]:  # type: ignore[operator]
        yield Event("deterministic", line, short(name))
        if entry.get("sets_cublas") or value in entry.get("sets_cublas_when", ()):  # type: ignore[operator]
            yield Event("cublas", line, short(name))
    elif entry.get("global_flag") and value in (False, 0, "default"):
        yield Event("nondeterministic", line, f"{short(name)}({literal(given.value)!r})")


def _method_events(call: cst.Call, line: int, initialising: bool) -> Iterator[Event]:
    """Events of `obj.method(...)`; `initialising`: in a class's initialiser (`__init__`,
    `reset_parameters`), where a tensor's in-place sampler initialises parameters."""
    if not isinstance(call.func, cst.Attribute):
        return
    data = tables()
    method = call.func.attr.value
    if method in data.cuda_methods:
        yield Event("cuda", line, f".{method}()")
    elif method == "to" and call.args and call.args[0].keyword is None and _is_cuda_device(call.args[0].value):
        yield Event("cuda", line, f".to({_shown(call.args[0].value)})")
    elif method in data.tensor_methods and not _draws_from_own_generator(call):
        yield Event("init" if initialising else "consume", line, f".{method}()", TORCH)
    for rng in data.seeding_methods.get(method, ()):
        yield Event("seed", line, f".{method}()", rng)


def assignment_events(target: cst.BaseExpression, value: cst.BaseExpression, targets: frozenset[str], line: int) -> Iterator[Event]:
    """Events of `target = value`: cudnn.deterministic, and environment variables set in code."""
    if ASSIGNED_FLAG in targets:
        flag = literal(value)
        if flag is ... or flag:
            yield Event("deterministic", line, "cudnn.deterministic = True")
        else:
            yield Event("nondeterministic", line, "cudnn.deterministic = False")
    if type(target) is cst.Subscript and _mentions_cublas(target):  # every assignment: exact types (see names.py)
        yield Event("cublas", line, "os.environ[...]")


class _CublasMention(cst.CSTVisitor):
    def __init__(self) -> None:
        self.found = False
        self.variable = load("determinism.json")["cublas_workspace_variable"]

    def visit_SimpleString(self, node: cst.SimpleString) -> None:
        self.found |= node.evaluated_value == self.variable


def _mentions_cublas(node: cst.CSTNode) -> bool:
    visitor = _CublasMention()
    walk(node, visitor)
    return visitor.found


def environment_call_events(call: cst.Call, line: int) -> Iterator[Event]:
    """`os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ...)`, `os.putenv(...)`, `os.environ.update({...})`."""
    name = dotted_name(call.func) or ""
    if name.rpartition(".")[2] in ("setdefault", "putenv", "update", "__setitem__") and _mentions_cublas(call):
        yield Event("cublas", line, name)
