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
_CONFIG_OBJECTS = ("args", "opt", "opts", "cfg", "config", "hparams", "params", "conf")
DEFAULT_SEED = "0"


class _ArgparseSeed(cst.CSTVisitor):
    """Finds `parser.add_argument("--seed", ...)` and whether its default can be None."""

    def __init__(self) -> None:
        self.defined = False
        self.may_be_none = False

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if not (isinstance(func, cst.Attribute) and func.attr.value == "add_argument"):
            return
        flags = [literal(arg.value) for arg in node.args if arg.keyword is None]
        if not any(flag in ("--seed", "--random-seed", "--random_seed") for flag in flags):
            return
        self.defined = True
        default = argument(node, "default")
        required = argument(node, "required")
        if (default is None or literal(default.value) is None) and not (required and literal(required.value) is True):
            self.may_be_none = True


class SeedValues:
    def __init__(self, context: FileContext) -> None:
        self.context = context
        self._argparse: _ArgparseSeed | None = None
        self._source: str | None = None

    def _argparse_seed(self) -> _ArgparseSeed:
        if self._argparse is None:
            self._argparse = _ArgparseSeed()
            self.context.module.visit(self._argparse)
        return self._argparse

    def _text(self) -> str:
        if self._source is None:
            self._source = self.context.module.code
        return self._source

    def expression(self) -> str:
        """A seed expression valid at the context's current scope."""
        resolver, scopes = self.context.resolver, self.context.scopes
        for name in SEED_NAMES:
            if resolver.is_bound(name, scopes):
                return name
        for name in _CONFIG_OBJECTS:
            if not resolver.is_bound(name, scopes) or not re.search(rf"\b{name}\.seed\b", self._text()):
                continue
            if name in ("args", "opt", "opts") and self._argparse_seed().defined and self._argparse_seed().may_be_none:
                continue
            return f"{name}.seed"
        return DEFAULT_SEED
