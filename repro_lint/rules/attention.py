"""REP305: flash attention switched on. Its forward pass is deterministic; its backward pass adds
partial gradients with atomics in whatever order the GPU schedules them, so training changes from run
to run. Launch scripts and configs are scanned by repro_lint/sources/ under the same code."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import libcst as cst

from repro_lint.core.findings import Applicability, Finding, FixAvailability
from repro_lint.core.message_text import elide
from repro_lint.facts.context import FileContext, NodeEdit, PendingFix
from repro_lint.facts.edits import argument, has_star_args, keyword, literal, with_keyword
from repro_lint.facts.names import terminal_name
from repro_lint.knowledge import load
from repro_lint.rules.base import Rule, register

# PyTorch's own flash kernel has a deterministic backward under `use_deterministic_algorithms(True)`,
# so its forms hold only in programs that never switch that on. Messages of those forms carry this
# sentence, which is how `program_condition_for` tells them apart.
SDPA_NOTE = "without deterministic algorithms"


@dataclass(frozen=True)
class _Tables:
    flags: frozenset[str]
    implementation_keywords: frozenset[str]
    implementations: frozenset[str]
    hf_variable: str
    hf_full_determinism: frozenset[str]
    enable_flash_sdp: frozenset[str]
    sdpa_kernel: frozenset[str]
    sdp_kernel: frozenset[str]
    flash_backends: frozenset[str]
    flash_attn: dict[str, int]  # qualified name -> position of `deterministic`
    no_grad: frozenset[str]

    @property
    def calls(self) -> frozenset[str]:
        return self.enable_flash_sdp | self.sdpa_kernel | self.sdp_kernel | frozenset(self.flash_attn) | self.hf_full_determinism


@cache
def tables() -> _Tables:
    data = load("attention.json")
    flash_attn = {
        f"{module}.{function}": position
        for module, generation in data["flash_attn_modules"].items()
        for function, position in data["flash_attn_functions"][generation].items()
    }
    return _Tables(
        flags=frozenset(data["flag_keywords"]),
        implementation_keywords=frozenset(data["implementation_keywords"]),
        implementations=frozenset(data["flash_implementations"]),
        hf_variable=data["hf_deterministic_variable"],
        hf_full_determinism=frozenset(data["hf_full_determinism"]),
        enable_flash_sdp=frozenset(data["enable_flash_sdp"]),
        sdpa_kernel=frozenset(data["sdpa_kernel"]),
        sdp_kernel=frozenset(data["sdp_kernel"]),
        flash_backends=frozenset(data["flash_backends"]),
        flash_attn=flash_attn,
        no_grad=frozenset(data["no_grad_contexts"]),
    )


def _short(names: frozenset[str]) -> frozenset[str]:
    return frozenset(name.rpartition(".")[2] for name in names)


def _option_name(text: object) -> str | None:
    """`--use-flash-attn` as the keyword it becomes (`use_flash_attn`)."""
    return text.lstrip("-").replace("-", "_") if isinstance(text, str) and text.startswith("--") else None


@register
class FlashAttentionEnabled(Rule):
    """Flash attention switched on by a flag, an implementation name, PyTorch's SDPA backend
    settings, or a direct flash-attn call without `deterministic=True`."""

    code = "REP305"
    name = "flash-attention-enabled"
    fix_availability = FixAvailability.SOMETIMES
    required_text = ("flash", "FLASH")
    training_only = True

    def __init__(self, context: FileContext) -> None:
        super().__init__(context)
        data = tables()
        self._calls = data.calls
        self._short_calls = _short(data.calls)
        # Hugging Face reads FLASH_ATTENTION_DETERMINISTIC (set by enable_full_determinism) and then
        # runs flash-attn's deterministic backward; implementation names wait for the module's end.
        self._implementations: list[tuple[cst.CSTNode, str]] = []
        self._hf_deterministic = False
        # pytest modules test kernels and models; nothing they compute is a training result.
        last = context.module_name.rpartition(".")[2]
        self._test_module = last.startswith("test_") or last.endswith("_test") or last == "conftest"

    @classmethod
    def program_condition_for(cls, finding: Finding) -> tuple[str, ...]:
        return ("nondeterministic",) if SDPA_NOTE in finding.message else ()

    def report(self, node: cst.CSTNode, message: str, fix: PendingFix | None = None) -> None:
        if not self._test_module:
            super().report(node, message, fix)

    # Calls -------------------------------------------------------------------------------------

    def visit_Call(self, node: cst.Call) -> None:
        callee = self.context.callee(node, self._calls, self._short_calls)
        data = tables()
        if callee in data.hf_full_determinism:
            self._hf_deterministic = True
        elif callee in data.enable_flash_sdp:
            self._enable_flash_sdp(node)
        elif callee in data.sdpa_kernel:
            self._sdpa_kernel(node)
        elif callee in data.sdp_kernel:
            self._sdp_kernel(node)
        elif callee is not None and callee in data.flash_attn:
            self._flash_attn_call(node, callee, data.flash_attn[callee])
        elif callee is None and (loaded := self._loaded_flash_module(node)) is not None:
            self._flash_attn_call(node, loaded, data.flash_attn[loaded])
        if terminal_name(node.func) == "add_argument":
            self._argparse_option(node)
        for arg in node.args:
            if arg.keyword is not None:
                self._setting(arg.value, arg.keyword.value, arg)

    def _loaded_flash_module(self, node: cst.Call) -> str | None:
        """`flash_attn_interface.flash_attn_varlen_func(...)` where `flash_attn_interface` is a variable
        holding a module loaded at run time (`get_kernel("kernels-community/flash-attn3")`): the
        variable's name says which module it is. Names that resolve to anything else are left alone."""
        func = node.func
        if not isinstance(func, cst.Attribute) or not isinstance(func.value, cst.Name):
            return None
        qualified = f"{func.value.value}.{func.attr.value}"
        if qualified not in tables().flash_attn or self.context.qualified_names(func.value):
            return None
        return qualified

    def _enable_flash_sdp(self, node: cst.Call) -> None:
        enabled = argument(node, "enabled", 0)
        if enabled is None or literal(enabled.value) is not True or self._without_grad():
            return
        self.report(
            node,
            f"`enable_flash_sdp(True)` allows the flash kernel, whose backward is nondeterministic {SDPA_NOTE}",
            PendingFix(Applicability.UNSAFE, "Disable the flash SDPA backend", (NodeEdit(enabled.value, "False"),)),
        )

    def _sdpa_kernel(self, node: cst.Call) -> None:
        backends = argument(node, "backends", 0)
        if backends is None or self._without_grad():
            return
        elements = [item.value for item in backends.value.elements] if isinstance(backends.value, (cst.List, cst.Tuple)) else [backends.value]
        if any(self.context.matches(element, tables().flash_backends) for element in elements):
            self.report(
                node,
                f"`sdpa_kernel(SDPBackend.FLASH_ATTENTION)` picks the flash kernel, whose backward is nondeterministic {SDPA_NOTE}",
            )

    def _sdp_kernel(self, node: cst.Call) -> None:
        flash = keyword(node, "enable_flash")
        if flash is None or literal(flash.value) is not True or self._without_grad():
            return
        self.report(
            node,
            f"`sdp_kernel(enable_flash=True)` allows the flash kernel, whose backward is nondeterministic {SDPA_NOTE}",
        )

    def _flash_attn_call(self, node: cst.Call, callee: str, position: int) -> None:
        if has_star_args(node) or self._without_grad():
            return
        given = argument(node, "deterministic", position)
        if given is not None and literal(given.value) is not False:
            return  # True, or a value that cannot be known
        function = callee.rpartition(".")[2]
        if given is not None:
            edit = NodeEdit(given.value, "True")
        else:
            edit = NodeEdit(node, self.context.code_for(with_keyword(node, "deterministic", "True")))
        self.report(
            node,
            f"`{elide(function)}` without `deterministic=True` runs flash attention's nondeterministic backward pass",
            PendingFix(Applicability.SAFE, "Pass `deterministic=True`", (edit,)),
        )

    def _argparse_option(self, node: cst.Call) -> None:
        """`add_argument("--use-flash-attn", default=True)`, or a `store_false` switch (default True)."""
        names = {_option_name(literal(arg.value)) for arg in node.args if arg.keyword is None}
        dest = keyword(node, "dest")
        if dest is not None and isinstance(literal(dest.value), str):
            names.add(str(literal(dest.value)))
        data = tables()
        names.discard(None)
        if not names & (data.flags | data.implementation_keywords):
            return
        default = keyword(node, "default")
        action = keyword(node, "action")
        value = literal(default.value) if default is not None else ...
        if default is None and action is not None and literal(action.value) == "store_false":
            value = True
        if value is True and names & data.flags or isinstance(value, str) and value in data.implementations:
            option = next((str(literal(arg.value)) for arg in node.args if isinstance(literal(arg.value), str)), min(names))
            self.report(
                node,
                f"option `{elide(option)}` turns flash attention on by default; its backward pass is nondeterministic",
            )

    # Settings in keywords, dicts and assignments -------------------------------------------------

    def visit_DictElement(self, node: cst.DictElement) -> None:
        key = literal(node.key)
        if isinstance(key, str):
            self._setting(node.value, key, node)

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            name = target.target
            if isinstance(name, cst.Attribute):
                self._setting(node.value, name.attr.value, node)
            elif isinstance(name, cst.Subscript) and len(name.slice) == 1 and isinstance(name.slice[0].slice, cst.Index):
                key = literal(name.slice[0].slice.value)
                if isinstance(key, str):
                    self._setting(node.value, key, node)

    def visit_SimpleString(self, node: cst.SimpleString) -> None:
        # Any mention of FLASH_ATTENTION_DETERMINISTIC: the module takes care of flash determinism.
        if node.evaluated_value == tables().hf_variable:
            self._hf_deterministic = True

    def _setting(self, value: cst.BaseExpression, key: str, node: cst.CSTNode) -> None:
        data = tables()
        setting = literal(value)
        flag = key in data.flags and setting is True
        implementation = key in data.implementation_keywords and setting in data.implementations
        if not (flag or implementation) or self._without_grad() or self._follows_flash_choice():
            return
        if flag:
            self.report(node, f"`{elide(key)}=True` turns flash attention on; its backward pass is nondeterministic")
        else:
            self._implementations.append((node, f"{key}={setting!r}"))

    def leave_Module(self, node: cst.Module) -> None:
        if self._hf_deterministic:
            return
        for where, setting in self._implementations:
            self.report(
                where,
                f"`{elide(setting, 48)}` runs flash attention, whose backward pass is nondeterministic",
            )

    # Context -----------------------------------------------------------------------------------

    def _follows_flash_choice(self) -> bool:
        """Inside `if config.attn_implementation == "flash_attention_2":`: the setting only passes on
        a choice made elsewhere (converting one config into another), which is where it is reported."""
        return any(
            isinstance(ancestor, cst.If) and "flash" in self.context.code_for(ancestor.test).lower()
            for ancestor in self.context.ancestors
        )

    def _without_grad(self) -> bool:
        """Inside `with torch.no_grad():` / `inference_mode()`, a function decorated with them, or one
        that asserts it never runs in training mode: no backward pass runs there, and the flash
        forward pass is deterministic."""
        no_grad = tables().no_grad
        for ancestor in self.context.ancestors:
            if isinstance(ancestor, cst.With):
                if any(self._is_no_grad(item.item, no_grad) for item in ancestor.items):
                    return True
            elif isinstance(ancestor, cst.FunctionDef):
                if any(self._is_no_grad(decorator.decorator, no_grad) for decorator in ancestor.decorators):
                    return True
                if _asserts_not_training(ancestor):
                    return True
        return False

    def _is_no_grad(self, node: cst.BaseExpression, no_grad: frozenset[str]) -> bool:
        target = node.func if isinstance(node, cst.Call) else node
        return self.context.matches(target, no_grad) is not None


def _asserts_not_training(function: cst.FunctionDef) -> bool:
    """`assert not self.training` among the function's own statements (inference-only code paths)."""
    body = function.body.body if isinstance(function.body, cst.IndentedBlock) else ()
    for statement in body:
        if not isinstance(statement, cst.SimpleStatementLine):
            continue
        for small in statement.body:
            if (
                isinstance(small, cst.Assert)
                and isinstance(small.test, cst.UnaryOperation)
                and isinstance(small.test.operator, cst.Not)
                and terminal_name(small.test.expression) == "training"
            ):
                return True
    return False
