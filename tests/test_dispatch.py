"""Calls that choose at run time which code runs (facts/dispatch.py), and how the project pass
judges a program that reaches one: on every function of its modules (the catalog's **trains**)."""

from __future__ import annotations

from pathlib import Path

import libcst as cst
import pytest

from repro_lint.api import lint_paths
from repro_lint.core.settings import Settings
from repro_lint.facts.context import FileContext
from repro_lint.facts.dispatch import dispatches


def _dispatching(code: str) -> list[bool]:
    module = cst.parse_module(code)
    context = FileContext(module, "pkg.run", False, Settings())
    context.scopes.append(module)  # every call here is at module level
    found = []

    class Calls(cst.CSTVisitor):
        def visit_Call(self, node: cst.Call) -> None:
            if node is module.body[-1].body[0].value:  # the last statement's call
                found.append(dispatches(node, context.qualified_names(node.func), context.qualified_names))

    module.visit(Calls())
    return found


def codes(root: Path, select: str) -> list[str]:
    return [finding.code for finding in lint_paths([root], Settings(select=(select,))).findings]


@pytest.mark.parametrize(
    "code, expected",
    [
        ("globals()[task]()\n", True),
        ("vars()[name](x)\n", True),
        ("import fire\nfire.Fire(main)\n", True),
        ("from hydra.utils import instantiate\ninstantiate(cfg.model)\n", True),
        ("import dnnlib\ndnnlib.util.construct_class_by_name(**kwargs)\n", True),
        ("import models\ngetattr(models, args.arch)()\n", True),
        # not a choice made at run time among the program's code
        ("import models\ngetattr(models, 'resnet50')()\n", False),
        ("def f(self, name):\n    pass\ngetattr(self, name)()\n", False),
        ("table = {}\ntable[name]()\n", False),
        ("print(globals())\n", False),
    ],
)
def test_dispatches(code, expected):
    assert _dispatching(code) == [expected]


GENERATE = """\
import random
import fire

def generate(n=3):
    return random.sample(range(10), n)

def main(task="generate"):
    {dispatch}

if __name__ == "__main__":
    fire.Fire(main)
"""


def test_draws_behind_a_dispatch_are_followed(project):
    # stanford_alpaca's generate_instruction.py: fire.Fire(main), then globals()[task]()
    root = project({"gen.py": GENERATE.format(dispatch="globals()[task]()")})
    assert codes(root, "REP102") == ["REP102"]


def test_a_program_that_dispatches_trains_when_one_of_its_modules_holds_a_training_step(project):
    # StyleGAN2-ADA: the training loop is built by name (construct_class_by_name), out of the call graph's sight
    root = project({
        "loop.py": "import torch\ndef training_loop(G, opt):\n    G(torch.ones(2)).sum().backward()\n    opt.step()\n",
        "train.py": (
            "import torch\nimport dnnlib\nimport loop\n\ndef main():\n    torch.backends.cudnn.benchmark = True\n"
            "    dnnlib.util.construct_class_by_name(class_name='loop.training_loop')\n\nif __name__ == '__main__':\n    main()\n"
        ),
    })
    assert codes(root, "REP301") == ["REP301"]


def test_without_a_dispatch_an_unreached_training_step_does_not_make_a_program_train(project):
    root = project({
        "loop.py": "import torch\ndef training_loop(G, opt):\n    G(torch.ones(2)).sum().backward()\n    opt.step()\n",
        "export.py": (
            "import torch\nimport loop\n\ndef main(self, name):\n    torch.backends.cudnn.benchmark = True\n    getattr(self, name)()\n\n"
            "if __name__ == '__main__':\n    main(None, 'x')\n"
        ),
    })
    assert codes(root, "REP301") == []
