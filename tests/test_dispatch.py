"""Calls that choose at run time which code runs (facts/dispatch.py), and how the project pass
judges a program that reaches one: on every function of its modules (the catalog's **trains**)."""

from __future__ import annotations

from pathlib import Path

import libcst as cst
import pytest

from repro_lint.api import lint_paths
from repro_lint.core.settings import Settings
from repro_lint.facts.context import FileContext
from repro_lint.facts.dispatch import dispatch_scopes


def _dispatching(code: str) -> list[frozenset[str]]:
    module = cst.parse_module(code)
    context = FileContext(module, "pkg.run", False, Settings())
    context.scopes.append(module)  # every call here is at module level
    found = []

    class Calls(cst.CSTVisitor):
        def visit_Call(self, node: cst.Call) -> None:
            if node is module.body[-1].body[0].value:  # the last statement's call
                found.append(dispatch_scopes(node, context.qualified_names(node.func), context.qualified_names, "pkg.run"))

    module.visit(Calls())
    return found


def codes(root: Path, select: str) -> list[str]:
    return [finding.code for finding in lint_paths([root], Settings(select=(select,))).findings]


@pytest.mark.parametrize(
    "code, expected",
    [
        ("globals()[task]()\n", {"pkg.run"}),
        ("vars()[name](x)\n", {"pkg.run"}),
        ("import fire\nfire.Fire()\n", {"pkg.run"}),
        ("import models\ngetattr(models, args.arch)()\n", {"models"}),
        ("from hydra.utils import instantiate\ninstantiate(cfg.model)\n", {"*"}),
        ("import dnnlib\ndnnlib.util.construct_class_by_name(**kwargs)\n", {"*"}),
        # what they run is named in the code, or is not the program's code
        ("import fire\nfire.Fire(main)\n", set()),
        ("import models\ngetattr(models, 'resnet50')()\n", set()),
        ("def f(self, name):\n    pass\ngetattr(self, name)()\n", set()),
        ("table = {}\ntable[name]()\n", set()),
        ("print(globals())\n", set()),
    ],
)
def test_dispatch_scopes(code, expected):
    assert _dispatching(code) == [frozenset(expected)]


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


def test_a_member_chosen_by_name_from_a_module_is_followed_into_that_module_only(project):
    root = project({
        "models.py": "import torch\ndef small():\n    return torch.randn(2)\n",
        "other.py": "import torch\ndef unrelated():\n    return torch.rand(2)\n",
        "run.py": "import models\nimport other\nif __name__ == '__main__':\n    getattr(models, arch)()\n",
    })
    [finding] = lint_paths([root], Settings(select=("REP101",))).findings
    assert finding.message.endswith("first draw: models.py:3 (torch.randn)")
    without = project({"run.py": "import models\nimport other\nif __name__ == '__main__':\n    getattr(other, 'x')\n"})
    assert codes(without, "REP101") == []
