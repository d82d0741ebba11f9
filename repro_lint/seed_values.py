"""The seed value a fix should use at a given place: one the user already has, else `0`.

Reusing the user's seed (`args.seed`, `cfg.seed`, `SEED`, a `seed` parameter) keeps one knob for the
whole run. A value is only reused when it is certainly bound there and cannot be None by default:
`torch.Generator().manual_seed(None)` would raise.
"""

from __future__ import annotations

import re

import libcst as cst

from repro_lint.context import FileContext
from repro_lint.edits import argument, literal

SEED_NAMES = ("seed", "random_seed", "SEED", "RANDOM_SEED", "GLOBAL_SEED")
CONFIG_OBJECTS = ("args", "opt", "opts", "cfg", "config", "hparams", "params", "conf")
# Objects argparse fills: their `.seed` is None when a `--seed` option has no default.
PARSED_OBJECTS = ("args", "opt", "opts")
SEED_FLAGS = frozenset({"--seed", "--random-seed", "--random_seed", "--manual-seed", "--manual_seed"})
DEFAULT_SEED = "0"


def seed_option(node: cst.Call) -> tuple[str, bool] | None:
    """For `parser.add_argument("--seed", ...)`: the flag, and whether its value can be None."""
    func = node.func
    if not (isinstance(func, cst.Attribute) and func.attr.value == "add_argument"):
        return None
    flags = [literal(arg.value) for arg in node.args if arg.keyword is None]
    flag = next((flag for flag in flags if flag in SEED_FLAGS), None)
    if flag is None:
        return None
    default = argument(node, "default")
    required = argument(node, "required")
    may_be_none = (default is None or literal(default.value) is None) and not (required and literal(required.value) is True)
    return str(flag), may_be_none


class ArgparseSeed(cst.CSTVisitor):
    """Whether a module defines a `--seed` option, and whether its value can be None."""

    def __init__(self) -> None:
        self.defined = False
        self.may_be_none = False

    def visit_Call(self, node: cst.Call) -> None:
        option = seed_option(node)
        if option is not None:
            self.defined = True
            self.may_be_none |= option[1]


class SeedValues:
    def __init__(self, context: FileContext) -> None:
        self.context = context

    def expression(self) -> str:
        """A seed expression valid at the context's current scope."""
        resolver, scopes = self.context.resolver, self.context.scopes
        for name in SEED_NAMES:
            if resolver.usable_as_value(name, scopes):
                return name
        for name in CONFIG_OBJECTS:
            if not resolver.is_bound(name, scopes) or not re.search(rf"\b{name}\.seed\b", self.context.source):
                continue
            if name in PARSED_OBJECTS and self.context.argparse_seed.may_be_none:
                continue
            return f"{name}.seed"
        return DEFAULT_SEED
