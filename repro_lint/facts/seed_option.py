"""A module's `--seed` command-line option: whether it defines one, and whether its value can be None
(argparse leaves an option without a default None, which `manual_seed` rejects)."""

from __future__ import annotations

import libcst as cst

from repro_lint.facts.edits import argument, literal
from repro_lint.knowledge import load

SEED_FLAGS = frozenset(load("seed_options.json")["flags"])


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
