"""REP306 and REP307: kernels whose results change between runs: CUDA operations that are
nondeterministic unless deterministic algorithms are on, and kernels chosen by timing them.

Both are about whole programs ("on CUDA without deterministic algorithms", "in a training
program"): the rules report every candidate call, and the engine keeps those in modules that a
program meeting the rule's `program_condition` reaches (see ProjectModel.program_satisfies).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import libcst as cst

from repro_lint.core.findings import Finding
from repro_lint.core.message_text import elide
from repro_lint.facts.edits import argument, keyword, literal
from repro_lint.facts.names import terminal_name
from repro_lint.knowledge import load
from repro_lint.rules.base import Rule, register

# Messages of ops that matter only in training programs say so with this phrase; it is how
# `program_condition_for` tells them from ops whose forward pass is nondeterministic too.
TRAINING_NOTE = "when the program trains"


def _argument(call: cst.Call, spec: dict, method: bool) -> cst.Arg | None:
    return argument(call, spec["name"], spec.get("method_position") if method else spec.get("position"))


@dataclass(frozen=True)
class _Op:
    when: str
    why: str
    argument: dict | None
    values: dict | None

    def selected(self, call: cst.Call, method: bool) -> bool:
        """Whether the call's arguments make it the nondeterministic form of the op."""
        spec = self.argument
        if spec is None:
            return True
        given = _argument(call, spec, method)
        if given is None:
            return False
        if spec.get("given"):
            return literal(given.value) is not None
        return literal(given.value) in spec["values"]


@dataclass(frozen=True)
class _OpTables:
    functions: dict[str, _Op]
    methods: dict[str, _Op]
    integer_dtypes: frozenset[str]
    integer_casts: frozenset[str]
    deterministic_checks: frozenset[str]

    @property
    def short_names(self) -> frozenset[str]:
        return frozenset(name.rpartition(".")[2] for name in self.functions) | frozenset(self.methods)


@cache
def op_tables() -> _OpTables:
    data = load("nondeterministic_cuda_ops.json")
    functions: dict[str, _Op] = {}
    methods: dict[str, _Op] = {}
    for entry in data["ops"]:
        op = _Op(entry["when"], entry["why"], entry.get("argument"), entry.get("values"))
        functions.update(dict.fromkeys(entry["names"], op))
        methods.update(dict.fromkeys(entry.get("methods", ()), op))
    return _OpTables(
        functions,
        methods,
        frozenset(data["integer_dtypes"]),
        frozenset(data["integer_casts"]),
        frozenset(data["deterministic_checks"]),
    )


def _canonical(name: str) -> str:
    """`torch.nn.modules.pooling.AdaptiveAvgPool2d` as the public `torch.nn.AdaptiveAvgPool2d`."""
    if name.startswith("torch.nn.modules."):
        return "torch.nn." + name.rpartition(".")[2]
    return name


@register
class NondeterministicCudaOp(Rule):
    """A call of an operation PyTorch documents as nondeterministic on CUDA, in a program on CUDA that
    never enables deterministic algorithms."""

    code = "REP306"
    name = "nondeterministic-cuda-op"
    default_enabled = False
    required_text = tuple(sorted(op_tables().short_names))

    @classmethod
    def program_condition_for(cls, finding: Finding) -> tuple[str, ...]:
        if TRAINING_NOTE in finding.message:
            return ("trains", "cuda", "nondeterministic")
        return ("cuda", "nondeterministic")

    def visit_Call(self, node: cst.Call) -> None:
        tables = op_tables()
        last = terminal_name(node.func)
        # An attribute is checked by its name first; a bare name may be an import alias (`AMP(1)`).
        if last is None or isinstance(node.func, cst.Attribute) and last not in tables.short_names:
            return
        names = self.context.qualified_names(node.func)
        if names:
            matched = [name for name in sorted(map(_canonical, names)) if name in tables.functions]
            found_name = matched[0] if matched else None
            op, method = (tables.functions[found_name] if found_name else None), False
        elif isinstance(node.func, cst.Attribute):
            found_name = None
            # A method of a value (`x.index_add_(...)`): its type is unknown, but these names are
            # Tensor methods; attributes of imported modules (`np.bincount`) resolve and never get here.
            op, method = tables.methods.get(last), True
        else:
            return
        if op is None or not op.selected(node, method) or self._adds_integers(node, op, method) or self._deterministic_branch():
            return
        name = f"x.{last}" if method else (found_name or last).rpartition(".")[2]
        shown = f"`{elide(name)}()`"
        if op.when == "cuda":
            self.report(node, f"{shown} is nondeterministic on CUDA ({op.why})")
        else:
            part = "has a nondeterministic backward" if op.when == "backward" else "is nondeterministic"
            self.report(node, f"{shown} {part} on CUDA {TRAINING_NOTE} ({op.why})")


    def _adds_integers(self, call: cst.Call, op: _Op, method: bool) -> bool:
        """The values the op adds up are integers (`torch.ones(n, dtype=torch.int64)`, `x.long()`):
        integer sums are exact in any order."""
        if op.values is None:
            return False
        given = _argument(call, op.values, method)
        if given is None or not isinstance(given.value, cst.Call):
            return False
        made = given.value
        tables = op_tables()
        if isinstance(made.func, cst.Attribute) and made.func.attr.value in tables.integer_casts and not made.args:
            return True
        dtype = keyword(made, "dtype")
        return dtype is not None and self.context.matches(dtype.value, tables.integer_dtypes) is not None

    def _deterministic_branch(self) -> bool:
        """In the branch of `if torch.are_deterministic_algorithms_enabled():` (or the `else` of its
        negation), where the op runs with deterministic algorithms on."""
        ancestors = self.context.ancestors
        checks = op_tables().deterministic_checks
        for index, ancestor in enumerate(ancestors[:-1]):
            if not isinstance(ancestor, cst.If):
                continue
            test, negated = ancestor.test, False
            if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
                test, negated = test.expression, True
            if not (isinstance(test, cst.Call) and self.context.matches(test.func, checks)):
                continue
            in_body = ancestors[index + 1] is ancestor.body
            if in_body != negated:
                return True
        return False


@dataclass(frozen=True)
class _Autotuning:
    compile: frozenset[str]
    modes: frozenset[str]
    config_module: str
    flags: frozenset[str]
    triton: frozenset[str]


@cache
def autotuning() -> _Autotuning:
    data = load("autotuning.json")
    return _Autotuning(
        frozenset(data["compile"]),
        frozenset(data["compile_modes"]),
        data["config_module"],
        frozenset(data["config_flags"]),
        frozenset(data["triton_autotune"]),
    )


_AUTOTUNE_WHY = "picks kernels by timing them, so results can change between runs and machines"


@register
class AutotunedKernelSelection(Rule):
    """Kernel choice by on-line benchmarking (Inductor max-autotune, coordinate-descent tuning,
    Triton autotuning) in code that training programs run."""

    code = "REP307"
    name = "autotuned-kernel-selection"
    default_enabled = False
    required_text = ("autotune", "coordinate_descent_tuning")
    program_condition = ("trains",)

    def visit_Call(self, node: cst.Call) -> None:
        data = autotuning()
        last = terminal_name(node.func)
        if last == "compile" and self.context.matches(node.func, data.compile):
            self._compile(node)
        elif last == "patch" and self.context.matches(node.func, {f"{data.config_module}.patch"}):
            self._patch(node)

    def _compile(self, node: cst.Call) -> None:
        data = autotuning()
        mode = keyword(node, "mode")
        if mode is not None and literal(mode.value) in data.modes:
            self.report(node, f"`torch.compile(mode={elide(repr(literal(mode.value)))})` {_AUTOTUNE_WHY}")
            return
        options = keyword(node, "options")
        if options is not None and isinstance(options.value, cst.Dict):
            flag = self._enabled_flag(options.value)
            if flag is not None:
                self.report(node, f"`torch.compile(options={{{flag!r}: True}})` {_AUTOTUNE_WHY}")

    def _patch(self, node: cst.Call) -> None:
        data = autotuning()
        for arg in node.args:
            if arg.keyword is not None and arg.keyword.value in data.flags and literal(arg.value) is True:
                self.report(node, f"`config.patch({elide(arg.keyword.value)}=True)` {_AUTOTUNE_WHY}")
                return
        first = argument(node, "config_patches", 0)
        if first is not None and isinstance(first.value, cst.Dict):
            flag = self._enabled_flag(first.value)
            if flag is not None:
                self.report(node, f"`config.patch({{{flag!r}: True}})` {_AUTOTUNE_WHY}")

    def _enabled_flag(self, options: cst.Dict) -> str | None:
        for element in options.elements:
            if isinstance(element, cst.DictElement):
                key = literal(element.key)
                if key in autotuning().flags and literal(element.value) is True:
                    return str(key)
        return None

    def visit_Assign(self, node: cst.Assign) -> None:
        data = autotuning()
        for target in node.targets:
            setting = target.target
            if not (isinstance(setting, cst.Attribute) and setting.attr.value in data.flags):
                continue
            if literal(node.value) is True and self.context.matches(setting, {f"{data.config_module}.{setting.attr.value}"}):
                self.report(node, f"`{elide(setting.attr.value)} = True` {_AUTOTUNE_WHY}")

    def visit_Decorator(self, node: cst.Decorator) -> None:
        decorator = node.decorator
        call = decorator if isinstance(decorator, cst.Call) else None
        target = call.func if call is not None else decorator
        if terminal_name(target) != "autotune" or not self.context.matches(target, autotuning().triton):
            return
        configs = argument(call, "configs", 0) if call is not None else None
        if configs is not None and isinstance(configs.value, (cst.List, cst.Tuple)) and len(configs.value.elements) <= 1:
            return  # one config: nothing to choose between
        if configs is not None and isinstance(configs.value, cst.Call):
            return  # chosen by a function, which may pin one (Megatron's `autotune_configs` does in deterministic mode)
        self.report(node, f"`@triton.autotune` {_AUTOTUNE_WHY}")
