"""All the fixes of one program use one seed: the program's own where one is in scope, else one
module constant `SEED = 0` that the first fix needing it adds and every later fix reuses."""

from __future__ import annotations

import re
import textwrap

from repro_lint.api import fix_source, lint_paths, lint_source
from repro_lint.core.settings import Settings


def _fix_program(project, code: str) -> str:
    """The program fixed with --fix --unsafe-fixes; checks that it compiles, that a second run
    changes nothing and that nothing fixable is left."""
    root = project({"train.py": code})
    settings = Settings()
    lint_paths([root], settings, fix=True, unsafe_fixes=True)
    fixed = (root / "train.py").read_text(encoding="utf-8")
    compile(fixed, "train.py", "exec")
    lint_paths([root], settings, fix=True, unsafe_fixes=True)
    assert (root / "train.py").read_text(encoding="utf-8") == fixed
    assert [finding for finding in lint_paths([root], settings).findings if finding.fix is not None] == []
    return fixed


def _seeds(code: str) -> set[str]:
    """The seed expressions the code passes to seeding calls and `random_state=`."""
    found = re.findall(r"(?:manual_seed|random\.seed|default_rng)\(([^()]*)\)", code)
    found += re.findall(r"random_state=([\w.]+)", code)
    return set(found)


UNSEEDED = """\
    import numpy as np
    import torch
    from sklearn.model_selection import train_test_split
    from torch.utils.data import DataLoader, random_split


    def main():
        data = list(range(100))
        train, val = random_split(data, [80, 20])
        loader = DataLoader(train, batch_size=32, shuffle=True)
        a, b = train_test_split(data)
        x = np.random.rand(3)
        for batch in loader:
            print(torch.randn(3), batch, x, a, b)


    if __name__ == "__main__":
        main()
    """


def test_safe_and_unsafe_fixes_share_one_seed_constant(project):
    fixed = _fix_program(project, UNSEEDED)
    assert fixed.count("SEED = 0") == 1
    assert _seeds(fixed) == {"SEED"}
    # The program-level seeds go on the main path, with the same constant.
    assert '    np.random.seed(SEED)\n    torch.manual_seed(SEED)\n    main()' in fixed


def test_safe_fixes_alone_add_the_constant_once(project):
    root = project({"train.py": UNSEEDED})
    lint_paths([root], Settings(), fix=True)
    fixed = (root / "train.py").read_text(encoding="utf-8")
    assert fixed.count("SEED = 0") == 1 and _seeds(fixed) == {"SEED"}
    lint_paths([root], Settings(), fix=True, unsafe_fixes=True)
    assert _seeds((root / "train.py").read_text(encoding="utf-8")) == {"SEED"}


def test_fixes_reuse_the_seed_an_existing_seeding_call_uses(project):
    # dcgan's layout: the seed is an option with another name, seeded at module level.
    fixed = _fix_program(project, """\
        import argparse
        import random

        import torch
        from torch.utils.data import DataLoader

        parser = argparse.ArgumentParser()
        parser.add_argument("--manualSeed", type=int, default=1)
        opt = parser.parse_args()
        random.seed(opt.manualSeed)
        torch.manual_seed(opt.manualSeed)

        loader = DataLoader(list(range(10)), shuffle=True)
        for batch in loader:
            print(batch, torch.randn(2))
        """)
    assert "SEED" not in fixed
    assert _seeds(fixed) == {"opt.manualSeed"}


def test_a_seeding_call_under_a_condition_is_not_reused():
    code = textwrap.dedent("""\
        import torch
        from torch.utils.data import random_split

        def split(ds, seed_value):
            if seed_value is not None:
                torch.manual_seed(seed_value)
            return random_split(ds, [1, 1])
        """)
    fixed = fix_source(code, "train.py", Settings(select=("REP203",)))
    assert "manual_seed(SEED)" in fixed and "SEED = 0" in fixed


def test_the_fix_title_names_the_seed_it_uses():
    code = "import torch\nfrom torch.utils.data import random_split\nparts = random_split(ds, [1, 1])\n"
    [finding] = lint_source(code, "train.py", Settings(select=("REP203",)))
    assert finding.fix is not None and "manual_seed(SEED)" in finding.fix.message
    code = "import torch\nSEED = 3\nfrom torch.utils.data import random_split\nparts = random_split(ds, [1, 1])\n"
    [finding] = lint_source(code, "train.py", Settings(select=("REP203",)))
    assert finding.fix is not None and "manual_seed(SEED)" in finding.fix.message
    assert all("SEED = 0" not in edit.content for edit in finding.fix.edits)


def test_a_name_seed_bound_for_something_else_is_not_redefined():
    # `SEED` assigned below the code: no second definition; the literal seed instead.
    code = "import torch\nfrom torch.utils.data import random_split\nparts = random_split(ds, [1, 1])\nSEED = 'x'\n"
    fixed = fix_source(code, "train.py", Settings(select=("REP203",)))
    assert fixed.count("SEED = ") == 1 and "manual_seed(0)" in fixed


OPTIONAL_SEED = """\
    import argparse

    import torch
    from torch.utils.data import DataLoader


    def main(args):
        if args.seed is not None:
            torch.manual_seed(args.seed)
        loader = DataLoader(list(range(10)), batch_size=2, shuffle=True)
        model = torch.nn.Linear(2, 2)
        for batch in loader:
            model(torch.ones(2)).sum().backward()


    if __name__ == "__main__":
        parser = argparse.ArgumentParser()
        parser.add_argument("--seed", type=int, default=None)
        main(parser.parse_args())
    """


def test_a_seed_option_given_a_default_first_is_the_seed_every_fix_uses(project):
    # REP108's fix gives `--seed` the default 0; applied in a round before the others, it lets the
    # DataLoader's generator use `args.seed` instead of a second seed, a constant.
    fixed = _fix_program(project, textwrap.dedent(OPTIONAL_SEED))
    assert 'parser.add_argument("--seed", type=int, default=0)' in fixed
    assert "SEED = 0" not in fixed
    assert _seeds(fixed) == {"args.seed"}
