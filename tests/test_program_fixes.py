"""Fixes of program-level rules, each checked for output, idempotence and re-lint."""

from __future__ import annotations

import textwrap

from repro_lint.api import lint_paths
from repro_lint.core.settings import Settings


def assert_project_fix(project, before: str, after: str, rule: str, extra: dict[str, str] | None = None, **settings) -> None:
    root = project({"train.py": before, **(extra or {})})
    chosen = Settings(select=(rule,), **settings)
    assert rule in [finding.code for finding in lint_paths([root], chosen).findings]
    lint_paths([root], chosen, fix=True, unsafe_fixes=True)
    fixed = (root / "train.py").read_text()
    assert fixed == textwrap.dedent(after)
    lint_paths([root], chosen, fix=True, unsafe_fixes=True)
    assert (root / "train.py").read_text() == fixed
    assert rule not in [finding.code for finding in lint_paths([root], chosen).findings]


def test_rep101_inserts_into_main_block_with_a_new_seed_constant(project):
    assert_project_fix(
        project,
        """\
        import torch


        def main():
            model = torch.nn.Linear(2, 2)
            model(torch.ones(2)).sum().backward()


        if __name__ == "__main__":
            main()  # run
        """,
        """\
        import torch

        SEED = 0


        def main():
            model = torch.nn.Linear(2, 2)
            model(torch.ones(2)).sum().backward()


        if __name__ == "__main__":
            torch.manual_seed(SEED)
            main()  # run
        """,
        "REP101",
    )


def test_rep101_inserts_into_main_function_after_parse_args(project):
    assert_project_fix(
        project,
        """\
        import argparse
        import torch


        def main():
            parser = argparse.ArgumentParser()
            parser.add_argument("--seed", type=int, default=7)
            args = parser.parse_args()
            model = torch.nn.Linear(2, 2)
            model(torch.ones(2)).sum().backward()


        if __name__ == "__main__":
            main()
        """,
        """\
        import argparse
        import torch


        def main():
            parser = argparse.ArgumentParser()
            parser.add_argument("--seed", type=int, default=7)
            args = parser.parse_args()
            torch.manual_seed(args.seed)
            model = torch.nn.Linear(2, 2)
            model(torch.ones(2)).sum().backward()


        if __name__ == "__main__":
            main()
        """,
        "REP101",
    )


def test_rep101_uses_existing_seed_constant_and_torch_alias(project):
    assert_project_fix(
        project,
        """\
        import torch as th

        SEED = 3

        if __name__ == "__main__":
            net = th.nn.Linear(2, 2)
            net(th.ones(2)).sum().backward()
        """,
        """\
        import torch as th

        SEED = 3

        if __name__ == "__main__":
            th.manual_seed(SEED)
            net = th.nn.Linear(2, 2)
            net(th.ones(2)).sum().backward()
        """,
        "REP101",
    )


def test_rep101_module_level_script(project):
    assert_project_fix(
        project,
        """\
        import torch
        model = torch.nn.Linear(2, 2)
        for step in range(3):
            model(torch.ones(2)).sum().backward()
        """,
        """\
        import torch

        SEED = 0
        torch.manual_seed(SEED)
        model = torch.nn.Linear(2, 2)
        for step in range(3):
            model(torch.ones(2)).sum().backward()
        """,
        "REP101",
    )


def test_rep102_adds_numpy_import_and_seed_after_torch_seed(project):
    assert_project_fix(
        project,
        """\
        import torch
        from numpy.random import rand

        if __name__ == "__main__":
            torch.manual_seed(0)
            x = rand(3)
        """,
        """\
        import numpy as np
        import torch
        from numpy.random import rand

        if __name__ == "__main__":
            torch.manual_seed(0)
            np.random.seed(0)
            x = rand(3)
        """,
        "REP102",
    )


def test_rep108_gives_the_option_a_default(project):
    assert_project_fix(
        project,
        """\
        import argparse
        import torch

        if __name__ == "__main__":
            parser = argparse.ArgumentParser()
            parser.add_argument("--seed", type=int, help="seed")  # optional
            args = parser.parse_args()
            if args.seed is not None:
                torch.manual_seed(args.seed)
            torch.nn.Linear(2, 2)(torch.ones(2)).sum().backward()
        """,
        """\
        import argparse
        import torch

        if __name__ == "__main__":
            parser = argparse.ArgumentParser()
            parser.add_argument("--seed", type=int, help="seed", default=0)  # optional
            args = parser.parse_args()
            if args.seed is not None:
                torch.manual_seed(args.seed)
            torch.nn.Linear(2, 2)(torch.ones(2)).sum().backward()
        """,
        "REP108",
    )


def test_rep302_inserts_after_the_seed(project):
    assert_project_fix(
        project,
        """\
        import torch

        if __name__ == "__main__":
            torch.manual_seed(0)
            model = torch.nn.Linear(2, 2).cuda()
            model(torch.ones(2).cuda()).sum().backward()
        """,
        """\
        import os

        os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
        import torch

        if __name__ == "__main__":
            torch.manual_seed(0)
            torch.use_deterministic_algorithms(True)
            torch.backends.cudnn.deterministic = True
            model = torch.nn.Linear(2, 2).cuda()
            model(torch.ones(2).cuda()).sum().backward()
        """,
        "REP302",
    )


def test_rep302_fix_leaves_cublas_alone_for_new_torch(project):
    assert_project_fix(
        project,
        """\
        import torch

        if __name__ == "__main__":
            torch.nn.Linear(2, 2).cuda()(torch.ones(2).cuda()).sum().backward()
        """,
        """\
        import torch

        if __name__ == "__main__":
            torch.use_deterministic_algorithms(True)
            torch.backends.cudnn.deterministic = True
            torch.nn.Linear(2, 2).cuda()(torch.ones(2).cuda()).sum().backward()
        """,
        "REP302",
        target_torch_version="2.12",
    )


def test_rep304_reuses_an_earlier_import_os(project):
    assert_project_fix(
        project,
        """\
        import os
        import torch

        if __name__ == "__main__":
            torch.manual_seed(0)
            torch.use_deterministic_algorithms(True)
            torch.nn.Linear(2, 2).cuda()(torch.ones(2).cuda()).sum().backward()
        """,
        """\
        import os

        os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
        import torch

        if __name__ == "__main__":
            torch.manual_seed(0)
            torch.use_deterministic_algorithms(True)
            torch.nn.Linear(2, 2).cuda()(torch.ones(2).cuda()).sum().backward()
        """,
        "REP304",
        target_torch_version="2.1",
    )


def test_rep101_after_the_last_assignment_and_before_leading_comments(project):
    assert_project_fix(
        project,
        """\
        import torch


        def get_args_parser():
            return parser


        if __name__ == "__main__":
            # Parse the options first.
            args = get_args_parser()
            args = args.parse_args()
            torch.nn.Linear(2, 2)(torch.ones(2)).sum().backward()
            print(args.seed)
        """,
        """\
        import torch


        def get_args_parser():
            return parser


        if __name__ == "__main__":
            # Parse the options first.
            args = get_args_parser()
            args = args.parse_args()
            torch.manual_seed(args.seed)
            torch.nn.Linear(2, 2)(torch.ones(2)).sum().backward()
            print(args.seed)
        """,
        "REP101",
    )


def test_rep101_main_block_insertion_goes_above_the_first_comment(project):
    assert_project_fix(
        project,
        """\
        import torch

        SEED = 1

        if __name__ == "__main__":

            # two workers
            world = 2
            torch.nn.Linear(2, 2)(torch.ones(world)).sum().backward()
        """,
        """\
        import torch

        SEED = 1

        if __name__ == "__main__":

            torch.manual_seed(SEED)
            # two workers
            world = 2
            torch.nn.Linear(2, 2)(torch.ones(world)).sum().backward()
        """,
        "REP101",
    )


def test_rep304_sets_the_variable_before_importing_torch(project):
    assert_project_fix(
        project,
        """\
        \"\"\"Train.\"\"\"
        import torch

        if __name__ == "__main__":
            torch.manual_seed(0)
            torch.use_deterministic_algorithms(True)
            torch.nn.Linear(2, 2).cuda()(torch.ones(2).cuda()).sum().backward()
        """,
        """\
        \"\"\"Train.\"\"\"
        import os

        os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
        import torch

        if __name__ == "__main__":
            torch.manual_seed(0)
            torch.use_deterministic_algorithms(True)
            torch.nn.Linear(2, 2).cuda()(torch.ones(2).cuda()).sum().backward()
        """,
        "REP304",
        target_torch_version="2.1",
    )


def test_all_program_fixes_together_reach_a_clean_fixed_point(project):
    root = project({
        "train.py": """\
            import random
            import torch

            def main():
                model = torch.nn.Linear(2, 2).cuda()
                random.shuffle([1, 2, 3])
                model(torch.ones(2).cuda()).sum().backward()

            if __name__ == "__main__":
                main()
        """
    })
    settings = Settings(target_torch_version="2.1")
    lint_paths([root], settings, fix=True, unsafe_fixes=True)
    assert lint_paths([root], settings).findings == []
    compile((root / "train.py").read_text(), "train.py", "exec")


def test_rep101_uses_parsed_options_passed_to_the_main_function(project):
    assert_project_fix(
        project,
        """\
        import argparse
        import torch


        def train(args):
            \"\"\"Train.\"\"\"
            model = torch.nn.Linear(2, 2)
            model(torch.ones(2)).sum().backward()


        if __name__ == "__main__":
            parser = argparse.ArgumentParser()
            parser.add_argument("--seed", type=int, default=0)
            train(parser.parse_args())
        """,
        """\
        import argparse
        import torch


        def train(args):
            \"\"\"Train.\"\"\"
            torch.manual_seed(args.seed)
            model = torch.nn.Linear(2, 2)
            model(torch.ones(2)).sum().backward()


        if __name__ == "__main__":
            parser = argparse.ArgumentParser()
            parser.add_argument("--seed", type=int, default=0)
            train(parser.parse_args())
        """,
        "REP101",
    )


def test_rep101_module_level_script_seeds_before_draws_that_precede_later_imports(project):
    # After the last import the seed would come after `torch.randn`: it goes after the opening ones.
    assert_project_fix(
        project,
        """\
        import torch

        x = torch.randn(3)
        import numpy as np
        model = torch.nn.Linear(3, 3)
        model(x).sum().backward()
        """,
        """\
        import torch

        SEED = 0
        torch.manual_seed(SEED)

        x = torch.randn(3)
        import numpy as np
        model = torch.nn.Linear(3, 3)
        model(x).sum().backward()
        """,
        "REP101",
    )


def test_rep101_module_level_script_imports_torch_itself_when_torch_comes_later(project):
    assert_project_fix(
        project,
        """\
        import os
        print("starting")
        import torch

        model = torch.nn.Linear(3, 3)
        model(torch.ones(3)).sum().backward()
        """,
        """\
        import os

        import torch

        SEED = 0
        torch.manual_seed(SEED)
        print("starting")
        import torch

        model = torch.nn.Linear(3, 3)
        model(torch.ones(3)).sum().backward()
        """,
        "REP101",
    )


def test_rep101_fix_is_not_placed_after_a_generator_seed_or_a_distant_seed(project):
    # `torch.Generator().manual_seed(1)` seeds its own generator; `random.seed` further down comes
    # after draws: neither may pull the inserted seed below `torch.rand`.
    assert_project_fix(
        project,
        """\
        import random
        import torch

        g = torch.Generator().manual_seed(1)
        x = torch.rand(3)
        random.seed(0)
        model = torch.nn.Linear(3, 3)
        model(x).sum().backward()
        """,
        """\
        import random
        import torch

        SEED = 0
        torch.manual_seed(SEED)

        g = torch.Generator().manual_seed(1)
        x = torch.rand(3)
        random.seed(0)
        model = torch.nn.Linear(3, 3)
        model(x).sum().backward()
        """,
        "REP101",
    )
