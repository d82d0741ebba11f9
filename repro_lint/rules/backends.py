"""REP308 and REP309: settings that silently break or miss reproducibility: Transformer Engine's
switch for nondeterministic algorithms set in Python (launch scripts and configs are scanned by
repro_lint/sources/), and assignments to backend flags that do not exist."""

from __future__ import annotations

import difflib
from functools import cache

import libcst as cst

from repro_lint.core.findings import Applicability, FixAvailability
from repro_lint.core.message_text import elide
from repro_lint.facts.context import NodeEdit, PendingFix
from repro_lint.facts.edits import argument, literal
from repro_lint.facts.names import terminal_name
from repro_lint.knowledge import load
from repro_lint.rules.base import Rule, register

# Calls that set one environment variable from their first two arguments.
_ENVIRONMENT_SETTERS = frozenset({"setdefault", "putenv"})


@cache
def _algo_variable() -> tuple[str, frozenset[str]]:
    entry = load("launch.json")["environment"]["nondeterministic_algo"]
    return entry["variable"], frozenset(entry["deterministic_values"])


def _zero_like(node: cst.BaseExpression) -> str:
    """`0` written as the value was: a string in its quotes, or a number."""
    if isinstance(node, cst.SimpleString):
        return f"{node.prefix}{node.quote}0{node.quote}"
    return "0"


@register
class NondeterministicDistributedEnv(Rule):
    """`NVTE_ALLOW_NONDETERMINISTIC_ALGO` set to anything but 0 in Python (`os.environ[...] = "1"`,
    `setdefault`, `putenv`, an environment dict)."""

    code = "REP308"
    name = "nondeterministic-distributed-env"
    fix_availability = FixAvailability.SOMETIMES
    required_text = ("NVTE_ALLOW_NONDETERMINISTIC_ALGO",)

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            subscript = target.target
            if isinstance(subscript, cst.Subscript) and len(subscript.slice) == 1 and isinstance(subscript.slice[0].slice, cst.Index):
                self._check(literal(subscript.slice[0].slice.value), node.value, node)

    def visit_Call(self, node: cst.Call) -> None:
        if terminal_name(node.func) in _ENVIRONMENT_SETTERS:
            name, value = argument(node, "key", 0), argument(node, "value", 1)
            if name is not None and value is not None:
                self._check(literal(name.value), value.value, node)
        for arg in node.args:
            if arg.keyword is not None and arg.keyword.value == _algo_variable()[0]:
                self._check(arg.keyword.value, arg.value, arg)

    def visit_DictElement(self, node: cst.DictElement) -> None:
        self._check(literal(node.key), node.value, node)

    def _check(self, key: object, value: cst.BaseExpression, node: cst.CSTNode) -> None:
        variable, deterministic = _algo_variable()
        setting = literal(value)
        if key != variable or setting is ... or setting is None or isinstance(setting, bool) or str(setting) in deterministic:
            return
        self.report(
            node,
            f"`{variable}={elide(str(setting))}` lets Transformer Engine pick nondeterministic attention kernels",
            PendingFix(Applicability.UNSAFE, f"Set `{variable}` to 0", (NodeEdit(value, _zero_like(value)),)),
        )


@cache
def backend_attributes() -> dict[str, frozenset[str]]:
    return {module: frozenset(names) for module, names in load("backend_flags.json")["modules"].items()}


@cache
def _moved() -> dict[str, dict[str, str]]:
    return load("backend_flags.json")["moved"]


@register
class UnknownBackendFlag(Rule):
    """An assignment to an attribute that `torch.backends.cudnn` / `.cuda` / `.mkldnn` / `.mps` does
    not have (`cudnn.benchmarks = False`): Python creates it, and the setting never takes effect."""

    code = "REP309"
    name = "unknown-backend-flag"
    fix_availability = FixAvailability.SOMETIMES
    required_text = ("backends",)

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            if isinstance(target.target, cst.Attribute):
                self._check(target.target)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        if isinstance(node.target, cst.Attribute):
            self._check(node.target)

    def _check(self, target: cst.Attribute) -> None:
        attribute = target.attr.value
        if attribute.startswith("_"):
            return
        modules = backend_attributes()
        owners = sorted(
            owner for owner in (name.rpartition(".")[0] for name in self.context.qualified_names(target)) if owner in modules
        )
        if not owners or any(attribute in modules[owner] for owner in owners):
            return
        owner = owners[0]
        moved = _moved().get(owner, {}).get(attribute)
        closest = [moved] if moved else difflib.get_close_matches(attribute, sorted(modules[owner]), n=1, cutoff=0.7)
        shown = owner.removeprefix("torch.backends.")
        message = f"`{shown}` has no attribute `{elide(attribute)}`: this assignment creates one and changes nothing"
        if closest:
            self.report(target, message, PendingFix(Applicability.UNSAFE, f"Rename to `{closest[0]}`", (NodeEdit(target.attr, closest[0]),)))
        else:
            self.report(target, message)
