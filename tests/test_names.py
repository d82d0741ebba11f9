"""Qualified names through imports, aliases and scopes."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from repro_lint.facts.names import NameResolver, absolute_module


class _Collect(cst.CSTVisitor):
    """Resolves every call's callee, with the scope chain at that call."""

    def __init__(self, resolver: NameResolver) -> None:
        self.resolver = resolver
        self.scopes: list = [resolver.module]
        self.found: list[tuple[str, ...]] = []

    def visit_FunctionDef(self, node):
        self.scopes.append(node)

    def leave_FunctionDef(self, node):
        self.scopes.pop()

    def visit_ClassDef(self, node):
        self.scopes.append(node)

    def leave_ClassDef(self, node):
        self.scopes.pop()

    def visit_Call(self, node):
        self.found.append(tuple(sorted(self.resolver.resolve(node.func, self.scopes))))


def callees(code: str, module: str = "pkg.train") -> list[tuple[str, ...]]:
    tree = cst.parse_module(textwrap.dedent(code))
    collector = _Collect(NameResolver(tree, module, module.rpartition(".")[0]))
    tree.visit(collector)
    return collector.found


@pytest.mark.parametrize(
    "code, expected",
    [
        ("import torch\ntorch.manual_seed(0)\n", ("torch.manual_seed",)),
        ("import numpy as np\nnp.random.seed(0)\n", ("numpy.random.seed",)),
        ("import torch.nn.functional as F\nF.dropout(x)\n", ("torch.nn.functional.dropout",)),
        ("from random import seed\nseed(1)\n", ("random.seed",)),
        ("from torch.utils.data import DataLoader as DL\nDL(ds)\n", ("torch.utils.data.DataLoader",)),
        ("import torch.backends.cudnn\ntorch.backends.cudnn.flags()\n", ("torch.backends.cudnn.flags",)),
        ("from .utils import set_seed\nset_seed(0)\n", ("pkg.utils.set_seed",)),
        ("from . import utils\nutils.set_seed(0)\n", ("pkg.utils.set_seed",)),
        ("def set_seed(s): pass\nset_seed(0)\n", ("pkg.train.set_seed",)),
        ("print(1)\n", ("builtins.print",)),
        ("undefined_thing(1)\n", ()),
        ("import torch\nseed_fn = torch.manual_seed\nseed_fn(0)\n", ("torch.manual_seed",)),
        # A name no statement binds may come from a star import: each such module's member.
        ("from models import *\nResNet18()\n", ("models.ResNet18",)),
        ("from .models import *\nfrom torch.nn import *\nConv2d(1, 1, 1)\n", ("pkg.models.Conv2d", "torch.nn.Conv2d")),
        ("from torch.nn import *\nnn_thing = Linear\nnn_thing(2, 2)\n", ("torch.nn.Linear",)),
        ("from numpy import *\nprint(1)\n", ("builtins.print",)),  # builtins keep their meaning
        ("from models import *\ndef ResNet18(): pass\nResNet18()\n", ("pkg.train.ResNet18",)),
    ],
)
def test_module_level_resolution(code, expected):
    assert callees(code)[-1] == expected


def test_conditional_imports_give_every_candidate_sorted():
    code = "try:\n    import simplejson as json\nexcept ImportError:\n    import json\njson.loads('1')\n"
    assert callees(code) == [("json.loads", "simplejson.loads")]


def test_function_scope_shadows_module_import():
    code = """
        import numpy as np
        def f(np):
            np.random.seed(0)
        def g():
            import torch as np
            np.manual_seed(0)
        def h():
            np.random.seed(0)
    """
    assert callees(code) == [(), ("torch.manual_seed",), ("numpy.random.seed",)]


def test_class_body_names_are_invisible_to_methods():
    code = """
        import random
        class A:
            random = None
            def f(self):
                random.seed(0)
    """
    assert callees(code) == [("random.seed",)]


def test_global_declaration_reads_module_scope():
    code = """
        import random
        def f():
            global random
            random.seed(0)
    """
    assert callees(code) == [("random.seed",)]


def test_alias_cycle_terminates():
    assert callees("a = b\nb = a\na()\n") == [()]


def test_absolute_module():
    assert absolute_module("utils", 1, "pkg.sub") == "pkg.sub.utils"
    assert absolute_module("", 2, "pkg.sub") == "pkg"
    assert absolute_module("x", 3, "pkg") is None


def test_nested_definitions_are_named_like_the_facts_name_them():
    code = """
        def outer():
            def step():
                pass
            step()
        class Trainer:
            def run(self):
                def inner():
                    pass
                inner()
    """
    assert callees(code) == [("pkg.train.outer.<locals>.step",), ("pkg.train.Trainer.run.<locals>.inner",)]


def test_a_name_resolved_again_from_the_same_scopes_is_not_looked_up_again(monkeypatch):
    code = """
        import torch
        def build():
            torch.nn.Linear(2, 2)
            torch.nn.Linear(2, 2)
        def shadowing(torch):
            torch.nn.Linear(2, 2)
        torch.nn.Linear(2, 2)
    """
    looked_up: list[str] = []
    find = NameResolver._find

    def counting(self, name, chain, suffix):
        looked_up.append(name + suffix)
        return find(self, name, chain, suffix)

    monkeypatch.setattr(NameResolver, "_find", counting)
    # Each scope answers for itself: the parameter shadows the import, the module sees the import.
    assert callees(code) == [("torch.nn.Linear",), ("torch.nn.Linear",), (), ("torch.nn.Linear",)]
    assert looked_up == ["torch.nn.Linear"] * 3  # the function's second call is answered from the first
