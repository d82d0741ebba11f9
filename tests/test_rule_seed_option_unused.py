"""REP109 seed-option-unused: a seed option whose value no seeding call receives."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from repro_lint.api import lint_paths
from repro_lint.core.settings import Settings

TRAIN = """
    import argparse
    import torch
    {imports}

    def main(args):
        {body}
        model = torch.nn.Linear(2, 2)
        model(torch.ones(2)).sum().backward()

    if __name__ == "__main__":
        parser = argparse.ArgumentParser()
        parser.add_argument("--seed", type=int, default=1)
        parser.add_argument("--lr", type=float, default=0.1)
        main(parser.parse_args())
"""


def _findings(root: Path) -> list[tuple[str, int, str]]:
    result = lint_paths([root], Settings(select=("REP109",)))
    return [(Path(f.path).name, f.start.line, f.message) for f in result.findings]


def _line(root: Path, name: str, text: str) -> int:
    """The line of `name` holding `text`."""
    lines = (root / name).read_text(encoding="utf-8").splitlines()
    return next(number for number, line in enumerate(lines, 1) if text in line)


def _train(project, body: str, imports: str = "", **files: str) -> Path:
    # The template is dedented after formatting: lines after the first need its indentation too.
    indented = "\n        ".join(body.splitlines())
    return project({"train.py": TRAIN.format(imports=imports, body=indented), **files})


@pytest.mark.parametrize(
    ("body", "seeding"),
    [
        # Seeded with a constant: --seed 3 and --seed 7 give the same run.
        ("torch.manual_seed(42)", "the program seeds at line {} (torch.manual_seed) without it"),
        # Never seeded at all.
        ("pass", "the program never seeds"),
        # Only shown: printed, logged, formatted, tested.
        ("print(f'seed={args.seed}')\ntorch.manual_seed(0)", "seeds at line {} "),
        ("logging.info('seed %d', args.seed)\ntorch.manual_seed(0)", "seeds at line {} "),
        ("if args.seed is not None:\n    print('seeded run')\ntorch.manual_seed(0)", "seeds at line {} "),
        ("print('run-%d' % args.seed)\ntorch.manual_seed(0)", "seeds at line {} "),
        # Only written into names (cleanrl's enjoy.py: the hub repository to download from).
        ("repo = f'{args.env}-seed{args.seed}'\ntorch.manual_seed(0)", "seeds at line {} "),
        ("run_name = 'run_{}_{}'.format(args.env, args.seed)\ntorch.manual_seed(0)", "seeds at line {} "),
        ("out = 'runs/seed-%d' % args.seed\ntorch.manual_seed(0)", "seeds at line {} "),
        # The options object only looked at, or saved beside the weights.
        ("print(vars(args))\ntorch.manual_seed(0)", "seeds at line {} "),
        ("torch.save(args, 'args.bin')\ntorch.manual_seed(0)", "seeds at line {} "),
    ],
)
def test_fires_when_no_seeding_call_receives_the_option(project, body, seeding):
    root = _train(project, body, imports="import logging")
    found = _findings(root)
    assert [(name, line) for name, line, _ in found] == [("train.py", _line(root, "train.py", '"--seed"'))]
    message = found[0][2]
    assert message.startswith("the seed option `--seed` reaches no seeding call: ")
    assert seeding.format(_line(root, "train.py", "manual_seed") if "manual_seed" in body else None) in message


@pytest.mark.parametrize(
    "body",
    [
        "torch.manual_seed(args.seed)",
        # Through a variable, arithmetic, a helper's parameter.
        "seed = args.seed + 1\ntorch.manual_seed(seed)",
        "set_seed(args.seed)",
        # A framework object that seeds from it, a generator built from it.
        "trainer = Trainer(seed=args.seed)",
        "rng = np.random.default_rng(args.seed)",
        # Read by key or by name.
        "torch.manual_seed(vars(args)['seed'])",
        "torch.manual_seed(getattr(args, 'seed'))",
        # The object handed whole to code the analysis cannot see, or turned into a mapping.
        "run_library_training(args)",
        "config = OmegaConf.create(vars(args))",
        "for key, value in vars(args).items():\n    setattr(config, key, value)",
        "value = getattr(args, name)",
        # Text built from it may be another program's command line.
        "os.system(f'python split.py --seed {args.seed}')",
        "command = 'python split.py --seed %d' % args.seed",
        "command = 'python split.py -s {}'.format(args.seed)",
    ],
)
def test_silent_where_the_value_may_reach_a_seeding_call(project, body):
    imports = "import os\nimport numpy as np\nfrom helpers import set_seed\nfrom composer import Trainer\nfrom lib import run_library_training\nfrom omegaconf import OmegaConf"
    helpers = "import random\n\ndef set_seed(seed):\n    random.seed(seed)\n"
    assert _findings(_train(project, body, imports=imports, **{"helpers.py": helpers})) == []


def test_a_project_function_given_the_options_is_followed(project):
    # `setup(args)` is project code: it reads only the learning rate, so the seed goes nowhere.
    helpers = "def setup(args):\n    return args.lr\n"
    root = _train(project, "setup(args)\ntorch.manual_seed(0)", imports="from helpers import setup", **{"helpers.py": helpers})
    assert [(name, line) for name, line, _ in _findings(root)] == [("train.py", _line(root, "train.py", '"--seed"'))]
    helpers = "import torch\n\ndef setup(args):\n    torch.manual_seed(args.seed)\n"
    root = _train(project, "setup(args)", imports="from helpers import setup", **{"helpers.py": helpers})
    assert _findings(root) == []


def test_an_option_in_a_parser_the_program_never_builds_is_not_its_own(project):
    options = """
        import argparse

        def eval_parser():
            parser = argparse.ArgumentParser()
            parser.add_argument("--seed", type=int, default=0)
            return parser

        LEARNING_RATE = 0.1
    """
    train = """
        import torch
        from options import LEARNING_RATE

        if __name__ == "__main__":
            torch.manual_seed(0)
            torch.nn.Linear(2, 2)(torch.ones(2)).sum().backward()
    """
    assert _findings(project({"options.py": options, "train.py": train})) == []


def test_config_field(project):
    config = """
        from dataclasses import dataclass

        @dataclass
        class Config:
            seed: int = 0
            lr: float = 0.1
    """
    train = """
        import torch
        from config import Config

        if __name__ == "__main__":
            cfg = Config()
            torch.manual_seed(1234)
            torch.nn.Linear(2, 2)(torch.ones(2)).sum().backward()
    """
    root = project({"config.py": config, "train.py": train})
    assert [(name, line) for name, line, _ in _findings(root)] == [("config.py", _line(root, "config.py", "seed: int"))]
    root = project({"config.py": config, "train.py": train.replace("1234", "cfg.seed")})
    assert _findings(root) == []


def test_random_seed_flag_is_read_as_random_seed(project):
    root = _train(project, "torch.manual_seed(args.random_seed)")
    (root / "train.py").write_text((root / "train.py").read_text().replace('"--seed"', '"--random-seed"'))
    assert _findings(root) == []
    (root / "train.py").write_text((root / "train.py").read_text().replace("args.random_seed", "args.seed"))
    assert [line for _, line, _ in _findings(root)] == [_line(root, "train.py", '"--random-seed"')]


def test_an_option_used_by_one_program_and_not_another_is_not_reported(project):
    options = """
        import argparse

        def parse():
            parser = argparse.ArgumentParser()
            parser.add_argument("--seed", type=int, default=0)
            return parser.parse_args()
    """
    seeded = """
        import torch
        from options import parse

        if __name__ == "__main__":
            args = parse()
            torch.manual_seed(args.seed)
            torch.nn.Linear(2, 2)(torch.ones(2)).sum().backward()
    """
    unseeded = seeded.replace("torch.manual_seed(args.seed)", "torch.manual_seed(0)")
    root = project({"options.py": options, "train.py": seeded, "finetune.py": unseeded})
    assert _findings(root) == []
    root = project({"options.py": options, "train.py": unseeded, "finetune.py": unseeded})
    assert [(name, line) for name, line, _ in _findings(root)] == [("options.py", _line(root, "options.py", '"--seed"'))]


def test_reads_in_code_the_program_never_runs_do_not_count(project):
    # A module of the program reads `.seed` in a function the program never calls (a vendored
    # library's own trainer): the option still reaches nothing.
    helpers = "import torch\n\ndef setup(args):\n    return args.lr\n\ndef other_trainer(args):\n    torch.manual_seed(args.seed)\n"
    root = _train(project, "setup(args)\ntorch.manual_seed(0)", imports="from helpers import setup", **{"helpers.py": helpers})
    assert [(name, line) for name, line, _ in _findings(root)] == [("train.py", _line(root, "train.py", '"--seed"'))]


def test_a_library_handing_over_its_own_config_is_not_the_programs_options(project):
    # The program parses into `args`; a module it runs hands its own `config` to a library call.
    # That object is not the program's options, so the seed still reaches nothing (LoRA's vendored
    # transformers, whose functions pass `config` objects everywhere, silenced the rule).
    helpers = "import json\n\ndef build(config):\n    return json.loads(config)\n"
    root = _train(project, "build('{}')\ntorch.manual_seed(0)", imports="from helpers import build", **{"helpers.py": helpers})
    (root / "train.py").write_text((root / "train.py").read_text().replace("main(parser.parse_args())", "args = parser.parse_args()\n    main(args)"))
    assert [(name, line) for name, line, _ in _findings(root)] == [("train.py", _line(root, "train.py", '"--seed"'))]


def test_an_imported_scripts_main_block_reads_nothing_for_the_importer(project):
    # cleanrl: enjoy.py imports dqn.py for its network; dqn.py seeds from its own options under its
    # main guard, which does not run when enjoy.py imports it.
    dqn = "import random\nimport argparse\n\nclass QNetwork:\n    pass\n\nif __name__ == '__main__':\n    args = argparse.ArgumentParser().parse_args()\n    random.seed(args.seed)\n"
    root = _train(project, "net = QNetwork()\nname = f'{args.env}-seed{args.seed}'", imports="from dqn import QNetwork", **{"dqn.py": dqn})
    assert [(name, line) for name, line, _ in _findings(root)] == [("train.py", _line(root, "train.py", '"--seed"'))]



def _handed_over(code: str) -> list[tuple[str, str, str | None]]:
    from repro_lint.analysis.python import analyze
    from repro_lint.analysis.result import ModuleIdentity

    analysis = analyze(textwrap.dedent(code), "train.py", ModuleIdentity.from_relative_path("train.py"), [], Settings())
    assert analysis.facts is not None
    return [(call.targets[0], holder, function) for call, holder, function in analysis.facts.seed_reads.handed_over]


def test_an_options_object_is_known_handed_over_where_the_parse_result_is_bound_after_the_call():
    # `settings` is no usual name for options: the call handing it over comes before the
    # assignment that tells it holds a parse result, and is kept all the same.
    code = """
        def main():
            train(settings)
            train(other)

        def train(options):
            pass

        settings = parser.parse_args()
    """
    assert _handed_over(code) == [("train.train", "settings", "train.main")]
    # Without a parse result in the module, only the usual names (`args`, `cfg`...) hold options.
    unparsed = code.replace("parser.parse_args()", "load()").replace("train(other)", "train(cfg)")
    assert _handed_over(unparsed) == [("train.train", "cfg", "train.main")]
