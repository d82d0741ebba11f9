"""A fix reuses the user's seed only where that name is bound when the fixed code runs: never a
name assigned further down (UnboundLocalError), only under a condition, or after the function that
uses it is defined. Fixed code must not give pyflakes a new undefined name."""

from __future__ import annotations

import re
import textwrap

import pytest
from pyflakes.api import check
from pyflakes.reporter import Reporter

from repro_lint.api import fix_source, lint_paths, lint_source
from repro_lint.core.settings import Settings
from tests.conftest import assert_fix

_RULES = ("REP202", "REP203", "REP204")


def _unbound_names(code: str) -> list[str]:
    """pyflakes' "undefined name" and "referenced before assignment" messages for `code`."""

    class Collect(Reporter):
        def __init__(self) -> None:
            self.messages: list[str] = []

        def flake(self, message: object) -> None:
            self.messages.append(str(message))

        def unexpectedError(self, filename: str, message: str) -> None:
            self.messages.append(message)

        def syntaxError(self, filename: str, message: str, lineno: int, offset: int, text: str) -> None:
            self.messages.append(message)

    reporter = Collect()
    check(code, "train.py", reporter)
    return [message for message in reporter.messages if "undefined name" in message or "before assignment" in message]


def _fixed(code: str) -> str:
    source = textwrap.dedent(code)
    settings = Settings(select=_RULES)
    assert lint_source(source, "train.py", settings)
    fixed = fix_source(source, "train.py", settings, unsafe=True)
    compile(fixed, "train.py", "exec")
    assert fix_source(fixed, "train.py", settings, unsafe=True) == fixed
    assert lint_source(fixed, "train.py", settings) == []
    # The same names, wherever the fix moved their lines.
    assert _without_positions(_unbound_names(fixed)) == _without_positions(_unbound_names(source))
    return fixed


def _without_positions(messages: list[str]) -> list[str]:
    return [re.sub(r"^train\.py:\d+:\d+:? ", "", message) for message in messages]


IMPORTS = """\
import torch
from sklearn.model_selection import train_test_split
from torch.utils.data import DataLoader, random_split
"""
DRAWS = """\
    a, b = train_test_split(X)
    parts = random_split(ds, [1, 1])
    loader = DataLoader(ds, shuffle=True)
"""


@pytest.mark.parametrize(
    ("before", "indent", "seed"),
    [
        # accelerate's data_loader.py: the name is assigned only after the calls.
        ("def split(X, ds):\n{draws}    seed = 1\n    return a, b, parts, loader, seed\n", "", "SEED"),
        # Assigned before them, but only on one branch.
        ("def split(X, ds, fixed):\n    if fixed:\n        seed = 1\n{draws}    return a, b, parts, loader\n", "", "SEED"),
        # Assigned in a loop that may not run.
        ("def split(X, ds):\n    for seed in ():\n        pass\n{draws}    return a, b, parts, loader\n", "", "SEED"),
        # A module constant assigned after the function (so no new one either); `args` bound only
        # in the `__main__` block. Without a seed in scope, the fixes add one constant.
        ("def split(X, ds):\n{draws}    return a, b, parts, loader\nSEED = 3\n", "", "0"),
        ("def split(X, ds):\n{draws}    return a, b, parts, loader\nif __name__ == '__main__':\n    args = f()\n    print(args.seed)\n", "", "SEED"),
        # Bound on every way to the calls: earlier in the block or an enclosing one, a parameter, a
        # loop target in its body, a module constant assigned before the function.
        ("def split(X, ds):\n    seed = 1\n    if X:\n{draws}        return a, b, parts, loader\n", "    ", "seed"),
        ("def split(X, ds, seed):\n{draws}    return a, b, parts, loader\n", "", "seed"),
        ("def split(X, ds):\n    for seed in range(3):\n{draws}        print(a, b, parts, loader)\n", "    ", "seed"),
        ("SEED = 3\ndef split(X, ds):\n{draws}    return a, b, parts, loader\n", "", "SEED"),
        ("def split(X, ds, args):\n{draws}    return a, b, parts, loader, args.seed\n", "", "args.seed"),
    ],
)
def test_fixes_use_a_seed_only_where_it_is_bound(before, indent, seed):
    code = IMPORTS + before.format(draws=textwrap.indent(DRAWS, indent))
    fixed = _fixed(code)
    assert re.search(rf"random_state={re.escape(seed)}\b", fixed)
    assert len(re.findall(rf"manual_seed\({re.escape(seed)}\)", fixed)) == 2
    # One constant at most, added only where the fixes use it and the module had none.
    assert fixed.count("SEED = ") - code.count("SEED = ") == (seed == "SEED" and "SEED = " not in code)


def test_rep103_seeds_a_generator_with_a_name_bound_only_later_with_the_seed_constant():
    assert_fix(
        "import torch\ndef make():\n    g = torch.Generator()\n    seed = 1\n    return g, seed\n",
        "import torch\n\nSEED = 0\ndef make():\n    g = torch.Generator().manual_seed(SEED)\n    seed = 1\n    return g, seed\n",
        "REP103",
        unsafe=True,
    )


def _program_fix(project, code: str) -> str:
    root = project({"train.py": code})
    settings = Settings(select=("REP101",))
    assert [finding.code for finding in lint_paths([root], settings).findings] == ["REP101"]
    lint_paths([root], settings, fix=True, unsafe_fixes=True)
    fixed = (root / "train.py").read_text()
    compile(fixed, "train.py", "exec")
    lint_paths([root], settings, fix=True, unsafe_fixes=True)
    assert (root / "train.py").read_text() == fixed
    assert lint_paths([root], settings).findings == []
    assert _unbound_names(fixed) == []
    return fixed


TRAINS = "model = torch.nn.Linear(2, 2)\nmodel(torch.ones(2)).sum().backward()\n"


@pytest.mark.parametrize(
    "code",
    [
        # A script training at module level whose only `seed` is a loop variable, or a constant set
        # under a condition.
        f"import torch\n{TRAINS}for seed in range(3):\n    print(seed)\n",
        f"import torch\nif torch.cuda.is_available():\n    SEED = 1\n{TRAINS}",
        # A `__main__` block that sets the constant after the call the seed goes before.
        f"import torch\ndef main():\n{textwrap.indent(TRAINS, '    ')}if __name__ == '__main__':\n    main()\n    SEED = 3\n",
    ],
)
def test_program_fix_seeds_with_a_new_constant_where_the_users_is_not_bound(project, code):
    fixed = _program_fix(project, code)
    assert "\nSEED = 0\n" in fixed and "torch.manual_seed(SEED)" in fixed


def test_program_fix_reuses_a_constant_set_before_the_main_block(project):
    fixed = _program_fix(
        project, f"import torch\nSEED = 3\ndef main():\n{textwrap.indent(TRAINS, '    ')}if __name__ == '__main__':\n    main()\n"
    )
    assert "SEED = 0" not in fixed and "    torch.manual_seed(SEED)\n    main()" in fixed


@pytest.mark.parametrize(
    "code",
    [
        # An import below the `__main__` block runs only after it: the constant and the seeding's
        # import go above the block, not after that import.
        f"import numpy as np\ndef main():\n{textwrap.indent(TRAINS, '    ')}if __name__ == '__main__':\n    main()\nimport torch\n",
    ],
)
def test_program_fix_goes_above_imports_that_follow_the_main_block(project, code):
    fixed = _program_fix(project, code)
    guard = fixed.index("if __name__")
    assert fixed.index("SEED = 0") < guard and fixed.index("import torch") < guard
