"""Program-level rules on multi-file projects: REP101, REP102, REP108, REP302, REP304."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from repro_lint.api import lint_paths
from repro_lint.core.settings import Settings

UNSEEDED_MAIN = """
    import torch
    from models.net import build

    def main():
        model = build()
        model(torch.ones(1, 4)).sum().backward()

    if __name__ == "__main__":
        {seed}main()
"""
NET = """
    import torch.nn as nn

    def build():
        return nn.Linear(4, 2)
"""


def findings(root: Path, select: str, paths: list[Path] | None = None, **settings: object) -> list[tuple[str, int, str]]:
    chosen = Settings(select=tuple(select.split(",")), **settings)  # type: ignore[arg-type]
    result = lint_paths(paths or [root], chosen)
    return [(Path(f.path).relative_to(root).as_posix() if Path(f.path).is_absolute() else f.path.rsplit(str(root.name) + "/", 1)[-1], f.start.line, f.code) for f in result.findings]


def codes(root: Path, select: str, **settings: object) -> list[str]:
    return [code for _, _, code in findings(root, select, **settings)]


# --- REP101: where the seed may come from ---------------------------------------------------------


def test_unseeded_program_reports_entry_and_first_use(project):
    root = project({"train.py": UNSEEDED_MAIN.replace("{seed}", ""), "models/net.py": NET})
    result = lint_paths([root], Settings(select=("REP101",)))
    [finding] = result.findings
    assert finding.path.endswith("train.py") and finding.start.line == 9
    assert finding.message == "this program never seeds torch; first draw: models/net.py:5 (nn.Linear)"


@pytest.mark.parametrize(
    "helper, entry_import, call",
    [
        # absolute import, called through two levels of functions
        ("import torch\ndef _inner(s):\n    torch.manual_seed(s)\ndef seed_all(s):\n    _inner(s)\n", "from utils.seeding import seed_all", "seed_all(0)"),
        # re-export through the package __init__
        ("import torch\ndef seed_all(s):\n    torch.manual_seed(s)\n", "from utils import seed_all", "seed_all(0)"),
        # module import and attribute call
        ("import torch\ndef seed_all(s):\n    torch.manual_seed(s)\n", "import utils.seeding as seeding", "seeding.seed_all(0)"),
    ],
)
def test_seed_in_helper_module(project, helper, entry_import, call):
    entry = UNSEEDED_MAIN.replace("{seed}", f"{call}\n        ").replace("import torch\n", f"import torch\n    {entry_import}\n", 1)
    root = project({
        "train.py": entry,
        "models/net.py": NET,
        "utils/__init__.py": "from .seeding import seed_all\n",
        "utils/seeding.py": helper,
    })
    assert codes(root, "REP101") == []


def test_relative_import_inside_a_package(project):
    root = project({
        "pkg/__init__.py": "",
        "pkg/seeding.py": "import torch\ndef seed_all():\n    torch.manual_seed(0)\n",
        "pkg/train.py": "import torch\nfrom .seeding import seed_all\n\nif __name__ == '__main__':\n    seed_all()\n    torch.nn.Linear(2, 2)(torch.ones(2)).sum().backward()\n",
    })
    assert codes(root, "REP101") == []


def test_helper_defined_but_never_called_does_not_seed(project):
    root = project({
        "train.py": UNSEEDED_MAIN.replace("{seed}", "").replace("import torch\n", "import torch\n    from utils.seeding import seed_all\n", 1),
        "models/net.py": NET,
        "utils/seeding.py": "import torch\ndef seed_all(s):\n    torch.manual_seed(s)\n",
    })
    assert codes(root, "REP101") == ["REP101"]


def test_a_project_file_named_builtins_is_not_what_builtins_call(project):
    """Python finds the builtins module before any file on its path: the `print` a program calls is
    never a project's `builtins.py`, however that file seeds."""
    root = project({
        "builtins.py": "import torch\n\n\ndef print(*args):\n    torch.manual_seed(0)\n",
        "train.py": 'import torch\n\nif __name__ == "__main__":\n    print("start")\n    torch.nn.Linear(2, 2)(torch.ones(2)).sum().backward()\n',
    })
    assert findings(root, "REP101") == [("train.py", 3, "REP101")]


LOADER_MAIN = "import torch\nfrom torch.utils.data import DataLoader, RandomSampler\n\nif __name__ == '__main__':\n    {seed}loader = {loader}\n    {late}for batch in loader:\n        print(batch)\n"


@pytest.mark.parametrize(
    "loader, expected",
    [
        ("DataLoader(range(8), batch_size=2, shuffle=True)", ["REP101"]),
        ("DataLoader(range(8), 2, True)", ["REP101"]),
        ("DataLoader(range(8), sampler=RandomSampler(range(8)))", ["REP101"]),
        ("DataLoader(range(8), batch_size=2, shuffle=True, generator=torch.Generator().manual_seed(0))", []),
        ("DataLoader(range(8), sampler=RandomSampler(range(8), generator=g))", []),
        ("DataLoader(range(8), batch_size=2, shuffle=False)", []),
        ("DataLoader(range(8), batch_size=2, shuffle=args.shuffle)", []),
    ],
)
def test_rep101_a_shuffling_loader_uses_torch_randomness(project, loader, expected):
    code = LOADER_MAIN.format(seed="", loader=loader, late="")
    assert codes(project({"train.py": code}), "REP101") == expected


def test_rep101_names_the_shuffling_loader(project):
    code = LOADER_MAIN.format(seed="", loader="DataLoader(range(8), shuffle=True)", late="")
    assert findings(project({"train.py": code}), "REP101") == [("train.py", 4, "REP101")]
    [finding] = lint_paths([project({"train.py": code})], Settings(select=("REP101",))).findings
    assert finding.message.endswith("first draw: line 5 (DataLoader(shuffle=True))")


def test_a_loader_built_before_the_seed_draws_only_when_iterated(project):
    # The shuffle's seed is drawn when the loop starts, after the seed: not a late seed, and seeded.
    code = LOADER_MAIN.format(seed="", loader="DataLoader(range(8), shuffle=True)", late="torch.manual_seed(0)\n    ")
    assert codes(project({"train.py": code}), "REP105") == []
    assert codes(project({"train.py": code}), "REP101") == []


def test_rep101_follows_a_model_class_from_a_star_import(project):
    root = project({
        "models/__init__.py": "from .net import *\n",
        "models/net.py": NET,
        "main.py": "import torch\nfrom models import *\nnet = build()\nnet(torch.ones(2)).sum().backward()\n",
    })
    assert codes(root, "REP101") == ["REP101"]


@pytest.mark.parametrize(
    "imports, seeding",
    [
        ("import lightning as L", "L.seed_everything(42)"),
        ("from pytorch_lightning import seed_everything", "seed_everything(42, workers=True)"),
        ("import transformers", "transformers.set_seed(42)"),
        ("from accelerate.utils import set_seed", "set_seed(1)"),
        ("from transformers import Trainer", "Trainer(model=model).train()"),
        ("from lightning.pytorch.cli import LightningCLI", "LightningCLI(model)"),
        ("import colossalai", "colossalai.launch_from_torch(config={}, seed=0)"),
        ("import colossalai", "colossalai.launch_from_torch()"),  # seeds 1024 by default
        ("from colossalai.utils import set_seed", "set_seed(0)"),
        ("from detectron2.engine import default_setup", "default_setup(cfg, args)"),
        ("from stable_baselines3.common.utils import set_random_seed", "set_random_seed(args.seed)"),
    ],
)
def test_ecosystem_seeding(project, imports, seeding):
    code = f"import torch\n{imports}\n\nif __name__ == '__main__':\n    model = torch.nn.Linear(2, 2)\n    {seeding}\n    model(torch.ones(2)).sum().backward()\n"
    assert codes(project({"train.py": code}), "REP101") == []


def test_hf_trainer_subclass_in_another_module_seeds(project):
    root = project({
        "trainers.py": "from transformers import Trainer\nclass MyTrainer(Trainer):\n    pass\n",
        "train.py": "import torch\nfrom trainers import MyTrainer\nif __name__ == '__main__':\n    m = torch.nn.Linear(2, 2)\n    MyTrainer(model=m).train()\n    m(torch.ones(2)).sum().backward()\n",
    })
    assert codes(root, "REP101") == []


def test_colossalai_booster_does_not_seed(project):
    code = "import torch\nimport colossalai\nif __name__ == '__main__':\n    m = torch.nn.Linear(2, 2)\n    colossalai.booster.Booster()\n    m(torch.ones(2)).sum().backward()\n"
    assert codes(project({"train.py": code}), "REP101") == ["REP101"]


def test_lightning_trainer_does_not_seed(project):
    code = "import torch\nimport lightning as L\nif __name__ == '__main__':\n    m = torch.nn.Linear(2, 2)\n    L.Trainer().fit(m)\n"
    assert codes(project({"train.py": code}), "REP101") == ["REP101"]


def test_user_declared_seed_helper(project):
    code = "import torch\nfrom mylab.repro import fix_everything\nif __name__ == '__main__':\n    fix_everything()\n    torch.nn.Linear(2, 2)(torch.ones(2)).sum().backward()\n"
    root = project({"train.py": code})
    assert codes(root, "REP101") == ["REP101"]
    assert codes(root, "REP101", seed_helpers=("mylab.repro.fix_everything",)) == []


def test_library_module_without_entry_point_is_silent(project):
    root = project({"models/net.py": NET, "models/blocks.py": "import torch\ndef noise():\n    return torch.randn(3)\n"})
    assert codes(root, "REP101,REP102,REP302") == []


def test_inference_program_that_only_builds_layers_is_silent(project):
    code = "import torch\nif __name__ == '__main__':\n    m = torch.nn.Linear(2, 2)\n    m.load_state_dict(torch.load('w.pt'))\n    print(m(torch.ones(2)))\n"
    assert codes(project({"predict.py": code}), "REP101") == []


# A training program that builds its model where no weights are allocated, then loads them.
META_MAIN = """
    import torch
    from models.gpt import GPT

    def main():
        with {context}:
            model = GPT()
        model.load_state_dict(torch.load("model.pt"), assign=True)
        {extra}model(torch.ones(1, 4)).sum().backward()

    if __name__ == "__main__":
        main()
"""
GPT = """
    import torch.nn as nn

    class GPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 2)

        def forward(self, x):
            return self.fc(x)
"""


@pytest.mark.parametrize(
    "context, extra, expected",
    [
        ('torch.device("meta")', "", []),
        ("fabric.init_module(empty_init=True)", "", []),
        # Built on a real device, or also built outside the block: the initialisation draws.
        ('torch.device("cuda")', "", ["REP101"]),
        ("fabric.init_module()", "", ["REP101"]),
        ('torch.device("meta")', "other = GPT()\n        ", ["REP101"]),
        # A draw outside the block is a use whatever was built in it.
        ('torch.device("meta")', "torch.randn(3)\n        ", ["REP101"]),
    ],
)
def test_rep101_building_where_no_weights_are_initialised_is_no_use(project, context, extra, expected):
    main = META_MAIN.replace("{context}", context).replace("{extra}", extra)
    assert codes(project({"train.py": main, "models/gpt.py": GPT}), "REP101") == expected


@pytest.mark.parametrize(
    "inside, outside, expected",
    [
        # A helper called in the block builds there; called outside it too, it initialises.
        ("model = build()", "", []),
        ("model = build()", "other = build()\n        ", ["REP101"]),
        ("model = GPT()", "other = build()\n        ", ["REP101"]),
    ],
)
def test_rep101_a_helper_builds_where_it_is_called(project, inside, outside, expected):
    main = (
        META_MAIN.replace("{context}", 'torch.device("meta")')
        .replace("model = GPT()", inside)
        .replace("{extra}", outside)
        .replace("from models.gpt import GPT", "from models.gpt import GPT, build")
    )
    helper = GPT + "\n\n    def build():\n        return GPT()\n"
    assert codes(project({"train.py": main, "models/gpt.py": helper}), "REP101") == expected


def test_rep101_layers_built_in_a_meta_block_of_the_entry_are_no_use(project):
    code = "import torch\nwith torch.device('meta'):\n    m = torch.nn.Linear(4, 2)\nm.load_state_dict(torch.load('m.pt'), assign=True)\nm(torch.ones(4)).sum().backward()\n"
    assert codes(project({"train.py": code}), "REP101") == []
    assert codes(project({"train.py": code.replace("'meta'", "'cuda'")}), "REP101") == ["REP101"]


def test_one_file_at_a_time_gives_the_same_answer(project):
    root = project({
        "train.py": UNSEEDED_MAIN.replace("{seed}", "").replace("import torch\n", "import torch\n    from utils.seeding import seed_all\n", 1).replace("model = build()", "seed_all(0)\n        model = build()"),
        "models/net.py": NET,
        "utils/seeding.py": "import torch\ndef seed_all(s):\n    torch.manual_seed(s)\n",
        "eval_noise.py": "import torch\nif __name__ == '__main__':\n    torch.rand(3)\n",
    })
    whole = findings(root, "REP101")
    single = [finding for path in ("train.py", "eval_noise.py") for finding in findings(root, "REP101", [root / path])]
    assert whole == single == [("eval_noise.py", 2, "REP101")]
    # Linting one file reports nothing in the modules it only reads.
    assert findings(root, "REP101", [root / "models" / "net.py"]) == []


# --- REP102 -----------------------------------------------------------------------------------------


def test_numpy_and_random_each_need_a_seed(project):
    code = "import random\nimport numpy as np\nimport torch\nif __name__ == '__main__':\n    torch.manual_seed(0)\n    np.random.seed(0)\n    x = np.random.rand(3)\n    random.shuffle([1, 2])\n"
    [finding] = lint_paths([project({"prep.py": code})], Settings(select=("REP102",))).findings
    assert "never seeds `random`; first draw: line 8 (random.shuffle)" in finding.message


def test_generator_objects_need_no_global_seed(project):
    code = "import numpy as np\nif __name__ == '__main__':\n    rng = np.random.default_rng(0)\n    rng.random(3)\n"
    assert codes(project({"prep.py": code}), "REP102") == []


def test_dataset_getitem_draws_are_reseeded_in_workers(project):
    dataset = "import random\nimport torch\nclass Crops(torch.utils.data.Dataset):\n    def __getitem__(self, i):\n        return random.random()\n"
    entry = (
        "import torch\nfrom data import Crops\nif __name__ == '__main__':\n    torch.manual_seed(0)\n"
        "    for x in torch.utils.data.DataLoader(Crops(), num_workers={n}):\n        model(x).sum().backward()\n"
    )
    assert codes(project({"data.py": dataset, "train.py": entry.replace("{n}", "4")}), "REP102") == []
    assert codes(project({"data.py": dataset, "train.py": entry.replace("{n}", "0")}), "REP102") == ["REP102"]


HELPED_DATASET = (
    "import torch\nfrom augment import jitter\nclass Crops(torch.utils.data.Dataset):\n"
    "    def __getitem__(self, i):\n        return jitter(i)\n"
)
WORKER_ENTRY = (
    "import torch\nfrom data import Crops\n{imports}if __name__ == '__main__':\n    torch.manual_seed(0)\n{before}"
    "    for x in torch.utils.data.DataLoader(Crops(), num_workers=4):\n        model(x).sum().backward()\n"
)


@pytest.mark.parametrize(
    "augment, imports, before, expected",
    [
        # a helper only item methods call runs in the workers too, through any depth of helpers
        ("import random\ndef jitter(x):\n    return x + noise()\ndef noise():\n    return random.random()\n", "", "", []),
        # called from the main process as well: its draws happen there
        ("import random\ndef jitter(x):\n    return x + random.random()\n", "from augment import jitter\n", "    jitter(0)\n", ["REP102"]),
        # called by a function that is not the workers' too
        ("import random\ndef jitter(x):\n    return x + random.random()\ndef warm():\n    return jitter(1)\n",
         "from augment import warm\n", "    warm()\n", ["REP102"]),
    ],
)
def test_draws_in_helpers_of_dataset_item_methods_are_in_the_workers(project, augment, imports, before, expected):
    entry = WORKER_ENTRY.format(imports=imports, before=before)
    assert codes(project({"augment.py": augment, "data.py": HELPED_DATASET, "train.py": entry}), "REP102") == expected


# --- REP108 -----------------------------------------------------------------------------------------

GUARDED = """
    import argparse
    import torch

    def main(args):
        if args.seed is not None:
            torch.manual_seed(args.seed)
        torch.nn.Linear(2, 2)(torch.ones(2)).sum().backward()

    if __name__ == "__main__":
        parser = argparse.ArgumentParser()
        parser.add_argument("--seed", type=int{default})
        main(parser.parse_args())
"""


def test_seed_guarded_by_none_default_option_is_rep108_not_rep101(project):
    root = project({"train.py": GUARDED.replace("{default}", "")})
    assert findings(root, "REP101,REP108") == [("train.py", 12, "REP108")]


GUARD = "        if args.seed is not None:\n            torch.manual_seed(args.seed)\n"


@pytest.mark.parametrize(
    ("seeding", "expected"),
    [
        # A seeding call in the branch taken without a seed: the default run is seeded.
        ("        if args.seed is None:\n            torch.manual_seed(0)\n        else:\n            torch.manual_seed(args.seed)\n", []),
        ("        if args.seed is not None:\n            torch.manual_seed(args.seed)\n        else:\n            torch.manual_seed(0)\n", []),
        ("        if not args.seed:\n            torch.manual_seed(1024)\n        else:\n            torch.manual_seed(args.seed)\n", []),
        # Every seeding call in the branch taken only with a seed.
        ("        if args.seed is None:\n            pass\n        else:\n            torch.manual_seed(args.seed)\n", ["REP108"]),
        ("        if not args.seed:\n            print('unseeded')\n        else:\n            torch.manual_seed(args.seed)\n", ["REP108"]),
        ("        if args.seed is not None:\n            torch.manual_seed(args.seed)\n        else:\n            print('unseeded')\n", ["REP108"]),
    ],
)
def test_rep108_follows_the_branch_a_seeding_call_is_in(project, seeding, expected):
    root = project({"train.py": GUARDED.replace("{default}", "").replace(GUARD, seeding)})
    assert codes(root, "REP101,REP108") == expected


SEEDING_METHOD = """
    import argparse
    import torch

    class Seeder:
        def seed_all(self, seed):
            torch.manual_seed(seed)

    def main(args, seeder):
        if args.seed is not None:
            Seeder.seed_all(seeder, args.seed)
{other}
        torch.nn.Linear(2, 2)(torch.ones(2)).sum().backward()

    if __name__ == "__main__":
        parser = argparse.ArgumentParser()
        parser.add_argument("--seed", type=int)
        main(parser.parse_args(), Seeder())
"""


@pytest.mark.parametrize(
    ("other", "expected"),
    [
        # Called by its name on an unknown object, unguarded: the default run is seeded.
        ("        else:\n            seeder.seed_all(0)", []),
        ("", ["REP108"]),
    ],
)
def test_a_seeding_methods_calls_by_name_count_for_its_guard(project, other, expected):
    root = project({"train.py": SEEDING_METHOD.replace("{other}\n", other + "\n" if other else "")})
    assert codes(root, "REP101,REP108") == expected


@pytest.mark.parametrize("default", [", default=0", ", required=True"])
def test_seed_option_with_a_value_is_fine(project, default):
    assert codes(project({"train.py": GUARDED.replace("{default}", default)}), "REP101,REP108") == []


VENDORED = """
    import torch

    def set_seed(seed):
        torch.manual_seed(seed)

    class Trainer:
        def train(self):
            set_seed(0)
"""

VENDORED_USER = """
    import argparse
    import torch
    import lib

    def main(args):
        if args.seed is not None:
            lib.set_seed(args.seed)
        model = torch.nn.Linear(2, 2)
        model.train(){build}
        model(torch.ones(2)).sum().backward()

    if __name__ == "__main__":
        parser = argparse.ArgumentParser()
        parser.add_argument("--seed", type=int)
        main(parser.parse_args())
"""


@pytest.mark.parametrize(("build", "expected"), [("", [("train.py", 15, "REP108")]), ("\n        lib.Trainer().train()", [])])
def test_rep108_counts_seeding_calls_the_program_is_known_to_run(project, build, expected):
    # LoRA's run_glue_no_trainer.py: `model.train()` matches the vendored Trainer's `train` by name
    # only, and Trainer seeds unguarded; a program that never builds a Trainer never runs that seed.
    # The guarded call to the seeding helper is then the only one, and a default run is unseeded.
    root = project({"lib.py": VENDORED, "train.py": VENDORED_USER.replace("{build}", build)})
    assert findings(root, "REP108") == expected


def test_dataclass_seed_field(project):
    code = (
        "from dataclasses import dataclass\nfrom typing import Optional\nimport torch\n"
        "@dataclass\nclass Config:\n    seed: Optional[int] = None\n"
        "if __name__ == '__main__':\n    cfg = Config()\n    if cfg.seed is not None:\n        torch.manual_seed(cfg.seed)\n"
        "    torch.nn.Linear(2, 2)(torch.ones(2)).sum().backward()\n"
    )
    assert findings(project({"train.py": code}), "REP108") == [("train.py", 6, "REP108")]


# --- REP302 -----------------------------------------------------------------------------------------

CUDA_TRAIN = """
    import torch

    def train():
        torch.manual_seed(0)
        {det}model = torch.nn.Conv2d(3, 3, 3).{device}
        model(torch.ones(1, 3, 4, 4).{device}).sum().backward()

    if __name__ == "__main__":
        train()
"""


@pytest.mark.parametrize("device", ["cuda()", "to('cuda')", "to(torch.device('cuda:0'))"])
def test_cuda_program_without_determinism(project, device):
    root = project({"train.py": CUDA_TRAIN.replace("{det}", "").replace("{device}", device)})
    assert findings(root, "REP302") == [("train.py", 9, "REP302")]


@pytest.mark.parametrize(
    "det",
    [
        "torch.use_deterministic_algorithms(True)\n        ",
        "torch.backends.cudnn.deterministic = True\n        ",
        "torch.use_deterministic_algorithms(True, warn_only=True)\n        ",
    ],
)
def test_cuda_program_with_determinism(project, det):
    assert codes(project({"train.py": CUDA_TRAIN.replace("{det}", det).replace("{device}", "cuda()")}), "REP302") == []


def test_cpu_program_is_not_reported(project):
    assert codes(project({"train.py": CUDA_TRAIN.replace("{det}", "").replace("{device}", "to('cpu')")}), "REP302") == []


def test_device_chosen_by_is_available_counts_as_cuda(project):
    code = CUDA_TRAIN.replace("{det}", "dev = 'cuda' if torch.cuda.is_available() else 'cpu'\n        ").replace("{device}", "to(dev)")
    assert codes(project({"train.py": code}), "REP302") == ["REP302"]


def test_explicit_off_is_reported_once_at_the_assignment(project):
    det = "torch.use_deterministic_algorithms(False)\n        "
    assert findings(project({"train.py": CUDA_TRAIN.replace("{det}", det).replace("{device}", "cuda()")}), "REP302") == [("train.py", 6, "REP302")]


def test_lightning_deterministic_trainer(project):
    code = "import torch\nimport lightning as L\nif __name__ == '__main__':\n    torch.manual_seed(0)\n    L.Trainer(accelerator='gpu', deterministic=True).fit(torch.nn.Linear(2, 2))\n"
    assert codes(project({"train.py": code}), "REP302") == []
    assert codes(project({"train.py": code.replace(", deterministic=True", "")}), "REP302") == ["REP302"]


@pytest.mark.parametrize("passed, expected", [("", ["REP302"]), (", deterministic=True", [])])
def test_a_lightning_trainer_built_from_argparse_args(project, passed, expected):
    # latent-diffusion: the accelerator comes from the command line (left at its default: CUDA when there is one)
    code = (
        "import torch\nfrom pytorch_lightning.trainer import Trainer\nif __name__ == '__main__':\n    torch.manual_seed(0)\n"
        f"    trainer = Trainer.from_argparse_args(opt{passed})\n    trainer.fit(torch.nn.Linear(2, 2))\n"
    )
    assert codes(project({"train.py": code}), "REP302") == expected


@pytest.mark.parametrize("using_cuda, expected", [("True", []), ("False", ["REP302"]), ("args.cuda", [])])
def test_stable_baselines3_seeding_with_cuda_sets_cudnn_deterministic(project, using_cuda, expected):
    code = (
        "import torch\nfrom stable_baselines3.common.utils import set_random_seed\nif __name__ == '__main__':\n"
        f"    set_random_seed(0, using_cuda={using_cuda})\n    model = torch.nn.Linear(2, 2).cuda()\n    model(torch.ones(2)).sum().backward()\n"
    )
    assert codes(project({"train.py": code}), "REP302") == expected


# --- REP304 -----------------------------------------------------------------------------------------

DET_CUDA = CUDA_TRAIN.replace("{det}", "torch.use_deterministic_algorithms(True)\n        ").replace("{device}", "cuda()")


def test_rep304_silent_without_declared_version(project):
    assert codes(project({"train.py": DET_CUDA}), "REP304") == []


def test_rep304_fires_for_declared_old_torch(project):
    root = project({"train.py": DET_CUDA, "requirements.txt": "numpy\ntorch==2.1.0\n"})
    assert findings(root, "REP304") == [("train.py", 10, "REP304")]


@pytest.mark.parametrize(
    "extra",
    [
        {"requirements.txt": "torch>=2.10\n"},
        {"requirements.txt": "torch\n"},
        {"requirements.txt": "torch==2.1.0\n", "scripts/run.sh": "export CUBLAS_WORKSPACE_CONFIG=:4096:8\npython train.py\n"},
    ],
)
def test_rep304_silent_for_new_torch_or_config_set(project, extra):
    assert codes(project({"train.py": DET_CUDA, **extra}), "REP304") == []


def test_rep304_set_in_code(project):
    code = "import os\nos.environ['CUBLAS_WORKSPACE_CONFIG'] = ':4096:8'\n" + DET_CUDA
    assert codes(project({"train.py": code, "requirements.txt": "torch==2.1.0\n"}), "REP304") == []


def test_rep304_pyproject_and_setting(project):
    root = project({"train.py": DET_CUDA}, '[project]\nname = "x"\ndependencies = ["torch>=1.13,<3"]\n')
    assert codes(root, "REP304") == ["REP304"]
    assert codes(project({"train.py": DET_CUDA}), "REP304", target_torch_version="2.4") == ["REP304"]


# A project's own seeding helper with a determinism switch, as accelerate's and transformers'
# `set_seed(seed, deterministic=False)` are: `set_seed(0)` leaves determinism off.
SWITCHED_HELPER = """
    import torch

    def set_seed(seed, deterministic{default}):
        torch.manual_seed(seed)
        if deterministic:
            torch.use_deterministic_algorithms(True)
"""
SWITCHED_TRAIN = """
    import torch
    from seeding import set_seed

    def train():
        set_seed(0{passed})
        model = torch.nn.Conv2d(3, 3, 3).cuda()
        model(torch.ones(1, 3, 4, 4).cuda()).sum().backward()

    if __name__ == "__main__":
        train()
"""


@pytest.mark.parametrize("default", ["=False", "=None", ""])
@pytest.mark.parametrize("passed", ["", ", deterministic=True"])
def test_rep304_helper_switch_that_may_stay_off_is_not_determinism(project, default, passed):
    # Whether a call turns the switch on is not followed: REP304 stays silent, and REP302 too.
    root = project({
        "train.py": SWITCHED_TRAIN.replace("{passed}", passed),
        "seeding.py": SWITCHED_HELPER.replace("{default}", default),
        "requirements.txt": "torch==2.1.0\n",
    })
    assert codes(root, "REP304,REP302") == []


def test_rep304_helper_switch_on_by_default_is_determinism(project):
    root = project({
        "train.py": SWITCHED_TRAIN.replace("{passed}", ""),
        "seeding.py": SWITCHED_HELPER.replace("{default}", "=True"),
        "requirements.txt": "torch==2.1.0\n",
    })
    assert codes(root, "REP304") == ["REP304"]


@pytest.mark.parametrize(
    "helper",
    [
        # the setting is not under the switch
        "def set_seed(seed, deterministic=False):\n    torch.manual_seed(seed)\n    torch.use_deterministic_algorithms(True)\n",
        # the `else` of the switch runs when it is off
        "def set_seed(seed, deterministic=False):\n    if deterministic:\n        pass\n    else:\n        torch.use_deterministic_algorithms(True)\n",
        # the test is no parameter of the function
        "DETERMINISTIC = False\ndef set_seed(seed):\n    if DETERMINISTIC:\n        torch.use_deterministic_algorithms(True)\n",
    ],
)
def test_rep304_determinism_not_under_a_helper_switch(project, helper):
    root = project({"train.py": SWITCHED_TRAIN.replace("{passed}", ""), "seeding.py": "import torch\n" + helper, "requirements.txt": "torch==2.1.0\n"})
    assert codes(root, "REP304") == ["REP304"]


def test_rep302_switch_that_turns_determinism_off_may_stay_off(project):
    helper = "import torch\ndef set_seed(seed, fast=False):\n    torch.manual_seed(seed)\n    if fast:\n        torch.use_deterministic_algorithms(False)\n"
    root = project({"train.py": SWITCHED_TRAIN.replace("{passed}", ""), "seeding.py": helper})
    [finding] = lint_paths([root], Settings(select=("REP302",))).findings
    # Reported for what the program lacks, not at the switched-off setting.
    assert Path(finding.path).name == "train.py" and "without deterministic algorithms" in finding.message


def test_program_that_never_trains_counts_the_torch_draws_it_reaches_and_its_own_library_draws(project):
    # evaluate.py's output changes with jitter's torch draw (REP101); `random` and numpy draws in
    # shared code are counted only in programs that train (see seeding._uses).
    root = project({
        "augment.py": "import random\nimport torch\ndef jitter(x):\n    return x + torch.rand(1) * random.random()\n",
        "evaluate.py": "import torch\nfrom augment import jitter\nif __name__ == '__main__':\n    print(jitter(torch.ones(1)))\n",
        "sample.py": "import torch\nif __name__ == '__main__':\n    print(torch.multinomial(torch.ones(3), 1))\n",
    })
    assert findings(root, "REP101,REP102") == [("evaluate.py", 3, "REP101"), ("sample.py", 2, "REP101")]


CONV1D = (
    "import torch\nfrom torch import nn\nclass Conv1D(nn.Module):\n    def __init__(self, nf, nx):\n"
    "        super().__init__()\n        w = torch.empty(nx, nf)\n        nn.init.normal_(w, std=0.02)\n"
    "        self.weight = nn.Parameter(w)\n        self.reset_parameters()\n"
    "    def reset_parameters(self):\n        self.weight.data.uniform_(-0.1, 0.1)\n"
)


@pytest.mark.parametrize(
    "entry, expected",
    [
        # A converter builds the model and loads its weights over the initial draws: it never trains.
        ("import torch\nfrom layers import Conv1D\nif __name__ == '__main__':\n"
         "    model = Conv1D(2, 2)\n    model.load_state_dict(torch.load('w.pt'))\n    torch.save(model, 'out.pt')\n", []),
        # The same layer in a program that trains: its initial weights are drawn from torch's RNG.
        ("import torch\nfrom layers import Conv1D\nif __name__ == '__main__':\n"
         "    model = Conv1D(2, 2)\n    model.weight.sum().backward()\n", ["REP101"]),
        # A sampler in a never-training program, outside an initialiser, is a draw that changes its output.
        ("import torch\nfrom layers import Conv1D\nif __name__ == '__main__':\n"
         "    model = Conv1D(2, 2)\n    print(torch.empty(3).normal_())\n", ["REP101"]),
    ],
)
def test_in_place_samplers_in_a_layers_initialisers_initialise_weights(project, entry, expected):
    # LoRA's vendored transformers: `nn.init.normal_(w)` in Conv1D.__init__ was taken for a tensor's
    # sampler, and every checkpoint converter (never training) was reported.
    assert codes(project({"layers.py": CONV1D, "convert.py": entry}), "REP101") == expected


def test_super_init_reaches_only_the_base_class(project):
    root = project({
        "noise.py": "import random\nclass Noise:\n    def __init__(self):\n        self.x = random.random()\n",
        "net.py": "import torch\nclass Base(torch.nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "class Net(Base):\n    def __init__(self):\n        super(Net, self).__init__()\n        self.fc = torch.nn.Linear(2, 2)\n",
        "train.py": "import torch\nimport noise\nfrom net import Net\nif __name__ == '__main__':\n    torch.manual_seed(0)\n"
        "    Net()(torch.ones(2)).sum().backward()\n",
    })
    assert codes(root, "REP101,REP102") == []


def test_imported_modules_main_block_does_not_run_in_importers(project):
    root = project({
        "lib.py": "import random\nimport torch\ndef f():\n    return 1\nif __name__ == '__main__':\n    random.shuffle([1])\n    torch.nn.Linear(2, 2).cuda()(torch.ones(2)).sum().backward()\n",
        "main.py": "import torch\nfrom lib import f\nif __name__ == '__main__':\n    torch.manual_seed(0)\n    torch.nn.Linear(2, 2)(torch.ones(f())).sum().backward()\n",
    })
    assert [(path, code) for path, _, code in findings(root, "REP101,REP102,REP302")] == [("lib.py", "REP101"), ("lib.py", "REP102"), ("lib.py", "REP302")]


def test_worker_init_fn_does_not_seed_the_main_process(project):
    code = (
        "import random\nimport torch\ndef seed_worker(worker_id):\n    random.seed(torch.initial_seed() % 2**32)\n"
        "if __name__ == '__main__':\n    torch.manual_seed(0)\n    loader = torch.utils.data.DataLoader(range(4), worker_init_fn=seed_worker)\n"
        "    random.shuffle([1, 2])\n    torch.nn.Linear(2, 2)(torch.ones(2)).sum().backward()\n"
    )
    assert codes(project({"train.py": code}), "REP102") == ["REP102"]


def test_method_fallback_stays_inside_the_program(project):
    root = project({
        "bench.py": "import torch\nclass Runner:\n    def run(self):\n        loss.backward()\n        opt.step()\n",
        "validate.py": "import torch\nif __name__ == '__main__':\n    sess = make_session()\n    sess.run(torch.ones(2).cuda())\n",
    })
    assert codes(root, "REP302") == []


# --- REP302: devices given by index, f-string or RPC construction ----------------------------------


@pytest.mark.parametrize(
    "device",
    ["to(0)", "to(rank)", "to(args.gpu)", "to(self_rank.local_rank)", "to(f'cuda:{rank}')", "cuda(rank)", "to(device=0)", "to(device=f'cuda:{rank}')"],
)
def test_device_index_and_formatted_cuda_device(project, device):
    code = CUDA_TRAIN.replace("{det}", "").replace("{device}", device).replace("def train():", "def train(rank=0):")
    assert codes(project({"train.py": code}), "REP302") == ["REP302"]


@pytest.mark.parametrize("device", ["to(dtype)", "to(torch.float16)", "to(True)", "to(f'{backend}:0')", "to(other_rank)", "to('cpu')"])
def test_values_that_are_not_an_accelerator_index(project, device):
    assert codes(project({"train.py": CUDA_TRAIN.replace("{det}", "").replace("{device}", device)}), "REP302") == []


def test_torch_device_with_formatted_cuda_string(project):
    code = CUDA_TRAIN.replace("{det}", "dev = torch.device(f'cuda:{rank}')\n        ").replace("{device}", "to(dev)").replace("def train():", "def train(rank=0):")
    [finding] = lint_paths([project({"train.py": code})], Settings(select=("REP302",))).findings
    assert "torch.device(f'cuda:{rank}')" in finding.message


RPC_TRAIN = """
    import torch
    import torch.distributed.rpc as rpc

    class Shard(torch.nn.Module):
        def __init__(self, device):
            super().__init__()
            self.net = torch.nn.Linear(2, 2).to(device)

    def run(workers):
        torch.manual_seed(0)
        shard = rpc.remote(workers[0], Shard, args=({device},) + extra)
        loss = shard.rpc_sync().forward(torch.ones(2)).sum()
        loss.backward()

    if __name__ == "__main__":
        run(["w0"])
"""


def test_rpc_remote_construction_on_cuda(project):
    [finding] = lint_paths([project({"train.py": RPC_TRAIN.replace("{device}", '"cuda:0"')})], Settings(select=("REP302",))).findings
    assert "runs on CUDA (line 12 (torch.distributed.rpc.remote(..., 'cuda:0')))" in finding.message
    assert codes(project({"train.py": RPC_TRAIN.replace("{device}", '"cpu"')}), "REP302") == []


# --- Benchmarks and profilers do not train -----------------------------------------------------------

BENCH_PROGRAM = """
    import torch
    {helper}
    if __name__ == "__main__":
        torch.manual_seed(0)
        model = torch.nn.Linear(2, 2).cuda()
        {call}
"""


@pytest.mark.parametrize(
    "helper, call",
    [
        # timm benchmark.py: the training step is a closure inside a benchmark runner's method.
        ("class TrainBenchmarkRunner:\n        def run(self, m):\n            def _step():\n                m(torch.ones(2)).sum().backward()\n            _step()\n", "TrainBenchmarkRunner().run(model)"),
        # yolov5 utils/torch_utils.py: profile(input, ops) times forward and backward.
        ("def profile(x, ops):\n        for m in ops:\n            m(x).sum().backward()\n", "profile(torch.ones(2), [model])"),
        ("def benchmark_step(m):\n        m(torch.ones(2)).sum().backward()\n", "benchmark_step(model)"),
        ("@timeit\n    def step(m):\n        m(torch.ones(2)).sum().backward()\n", "step(model)"),
        # nanoGPT bench.py's profiled loop.
        ("def run(m, opt):\n        with torch.profiler.profile() as prof:\n            m(torch.ones(2)).sum().backward()\n            opt.step()\n", "run(model, None)"),
    ],
)
def test_training_steps_in_benchmarks_do_not_make_a_training_program(project, helper, call):
    code = BENCH_PROGRAM.replace("{helper}", helper).replace("{call}", call)
    assert codes(project({"tools.py": code}), "REP302") == []


@pytest.mark.parametrize(
    "helper, call",
    [
        ("def train_step(m):\n        m(torch.ones(2)).sum().backward()\n", "train_step(model)"),
        # A context that is not a profiler.
        ("def run(m):\n        with torch.autocast('cuda'):\n            loss = m(torch.ones(2)).sum()\n        loss.backward()\n", "run(model)"),
        # A profiler around part of the step only: the backward outside it trains.
        ("def run(m):\n        with torch.profiler.record_function('fwd'):\n            loss = m(torch.ones(2)).sum()\n        loss.backward()\n", "run(model)"),
    ],
)
def test_training_steps_outside_benchmarks_still_train(project, helper, call):
    code = BENCH_PROGRAM.replace("{helper}", helper).replace("{call}", call)
    assert codes(project({"tools.py": code}), "REP302") == ["REP302"]


def test_a_benchmark_script_does_not_train(project):
    code = "import torch\ntorch.manual_seed(0)\nm = torch.nn.Linear(2, 2).cuda()\nfor _ in range(10):\n    m(torch.ones(2)).sum().backward()\n"
    assert codes(project({"bench.py": code}), "REP302") == []
    assert codes(project({"train.py": code}), "REP302") == ["REP302"]


def test_an_optimizer_wrappers_step_does_not_make_a_program_train(project):
    root = project({
        "optim.py": "import torch\nclass Lookahead(torch.optim.Optimizer):\n    def step(self, closure=None):\n        return self.base_optimizer.step(closure)\n",
        "evaluate.py": "import torch\nimport optim\nif __name__ == '__main__':\n    torch.manual_seed(0)\n    sched = make()\n    sched.step()\n    torch.nn.Linear(2, 2).cuda()(torch.ones(2))\n",
    })
    assert codes(root, "REP302") == []
    # The same call in a training loop trains.
    assert codes(project({"loop.py": "import torch\nif __name__ == '__main__':\n    model = torch.nn.Linear(2, 2).cuda()\n    optimizer.step()\n"}), "REP302") == ["REP302"]


# --- A library object that runs the training step when called ----------------------------------------

# deit: main.py builds timm's loss scaler and hands it to the loop in engine.py, which calls it with
# the loss and the optimizer; the scaler's `__call__` runs backward and the optimizer step.
SCALER_MAIN = """
    import torch
    {import_line}
    from engine import train_one_epoch

    def main():
        torch.manual_seed(0)
        model = torch.nn.Linear(2, 2).cuda()
        {build}
        train_one_epoch(model, loss_scaler)

    if __name__ == "__main__":
        main()
"""
SCALER_ENGINE = """
    def train_one_epoch(model, loss_scaler):
        loss = model(torch.ones(2)).sum()
        loss_scaler(loss, opt, clip_grad=None, parameters=model.parameters())
"""


@pytest.mark.parametrize(
    "import_line, build",
    [
        ("from timm.utils import NativeScaler", "loss_scaler = NativeScaler()"),
        ("from timm.utils.cuda import ApexScaler", "loss_scaler = ApexScaler()"),
        ("import timm.utils", "loss_scaler = timm.utils.NativeScaler()"),
    ],
)
def test_building_a_library_loss_scaler_trains(project, import_line, build):
    code = SCALER_MAIN.replace("{import_line}", import_line).replace("{build}", build)
    assert codes(project({"main.py": code, "engine.py": SCALER_ENGINE}), "REP302") == ["REP302"]


@pytest.mark.parametrize(
    "import_line, build",
    [
        # torch's GradScaler only scales: the step is the program's own `scaler.step(optimizer)`.
        ("from torch.cuda.amp import GradScaler", "loss_scaler = GradScaler()"),
        # Another timm helper that is not a training step.
        ("from timm.utils import ModelEma", "loss_scaler = ModelEma(model)"),
        # Imported but never built on the program's path.
        ("from timm.utils import NativeScaler", "loss_scaler = None"),
    ],
)
def test_objects_that_do_not_run_a_training_step_do_not_train(project, import_line, build):
    code = SCALER_MAIN.replace("{import_line}", import_line).replace("{build}", build)
    assert codes(project({"main.py": code, "engine.py": SCALER_ENGINE}), "REP302") == []


def test_a_loss_scaler_built_in_a_benchmark_does_not_train(project):
    code = SCALER_MAIN.replace("{import_line}", "from timm.utils import NativeScaler").replace("{build}", "loss_scaler = NativeScaler()")
    assert codes(project({"benchmark.py": code, "engine.py": SCALER_ENGINE}), "REP302") == []


# --- REP101/REP102: draws from a generator of the program's own are not global draws ----------------

OWN_GENERATOR = """
    import torch

    g = torch.Generator().manual_seed(1)

    if __name__ == "__main__":
        x = torch.randn(3, generator={generator})
        torch.empty(3).uniform_(generator={generator})
        print(x)
"""


@pytest.mark.parametrize("generator", ["g", "torch.Generator().manual_seed(2)"])
def test_draws_through_an_explicit_generator_do_not_need_the_global_seed(tmp_path, generator):
    (tmp_path / "train.py").write_text(textwrap.dedent(OWN_GENERATOR.replace("{generator}", generator)))
    assert codes(tmp_path, "REP101,REP102") == []


def test_generator_none_draws_from_the_global_rng(tmp_path):
    (tmp_path / "train.py").write_text(textwrap.dedent(OWN_GENERATOR.replace("{generator}", "None")))
    [finding] = findings(tmp_path, "REP101,REP102")
    assert finding[2] == "REP101"
