import pytest
from conftest import assert_fix, codes, lint

# --- REP103 unseeded-generator ---------------------------------------------------------------------

REP103_FIRES = [
    "import numpy as np\nrng = np.random.default_rng()\n",
    "from numpy.random import default_rng\nrng = default_rng(None)\n",
    "import numpy as np\nrs = np.random.RandomState()\n",
    "import numpy as np\ng = np.random.Generator(np.random.PCG64())\n",
    "import random\nr = random.Random()\n",
    "import torch\ng = torch.Generator()\nloader = torch.utils.data.DataLoader(ds, generator=g)\n",
    "import torch\nloader = torch.utils.data.DataLoader(ds, shuffle=True, generator=torch.Generator(device='cpu'))\n",
    # `.seed()` seeds from a nondeterministic source.
    "import torch\ng = torch.Generator()\ng.seed()\n",
    "import torch\nseed = torch.Generator().seed()\n",
    "import torch\nclass D:\n    def __init__(self):\n        self.g = torch.Generator()\n    def reset(self):\n        self.g.seed()\n",
]

REP103_SILENT = [
    "import numpy as np\nrng = np.random.default_rng(0)\n",
    "import numpy as np\nrng = np.random.default_rng(seed=args.seed)\n",
    "import random\nr = random.Random(cfg.seed)\n",
    "import torch\ng = torch.Generator().manual_seed(0)\n",
    "import torch\ng = torch.Generator()\ng.manual_seed(args.seed)\n",
    "import torch\nclass D:\n    def __init__(self):\n        self.g = torch.Generator()\n    def reset(self, s):\n        self.g.manual_seed(s)\n",
    "import numpy as np\nrng = np.random.default_rng(**rng_kwargs)\n",
    # A user's own class of the same name.
    "class Random:\n    pass\nr = Random()\n",
    "class Generator:\n    def seed(self):\n        pass\ng = Generator()\ng.seed()\n",
    # Seeded by its own seed after `.seed()`; another object's `.seed()`.
    "import torch\ng = torch.Generator()\ng.seed()\ng.manual_seed(args.seed)\n",
    "import torch\ng = torch.Generator().manual_seed(0)\nh.seed()\n",
]


@pytest.mark.parametrize("code", REP103_FIRES)
def test_rep103_fires(code):
    assert codes(code, "REP103") == ["REP103"]


@pytest.mark.parametrize("code", REP103_SILENT)
def test_rep103_silent(code):
    assert codes(code, "REP103") == []


@pytest.mark.parametrize(
    "before, after",
    [
        ("import numpy as np\nrng = np.random.default_rng()  # data\n", "import numpy as np\n\nSEED = 0\nrng = np.random.default_rng(SEED)  # data\n"),
        ("import numpy as np\nSEED = 5\nrng = np.random.default_rng(None)\n", "import numpy as np\nSEED = 5\nrng = np.random.default_rng(SEED)\n"),
        ("import random\nr = random.Random()\n", "import random\n\nSEED = 0\nr = random.Random(SEED)\n"),
        ("import torch\ng = torch.Generator(device='cpu')\n", "import torch\n\nSEED = 0\ng = torch.Generator(device='cpu').manual_seed(SEED)\n"),
        ("import torch\ng = torch.Generator()\ng.seed()  # fresh\n", "import torch\n\nSEED = 0\ng = torch.Generator()\ng.manual_seed(SEED)  # fresh\n"),
        (
            "import torch\ndef make(seed):\n    g = torch.Generator()\n    g.seed()\n    return g\n",
            "import torch\ndef make(seed):\n    g = torch.Generator()\n    g.manual_seed(seed)\n    return g\n",
        ),
        # The seed name of `__init__` is not bound in `reset`.
        (
            "import torch\nclass D:\n    def __init__(self, seed):\n        self.g = torch.Generator()\n    def reset(self):\n        self.g.seed()\n",
            "import torch\nclass D:\n    def __init__(self, seed):\n        self.g = torch.Generator()\n    def reset(self):\n        self.g.manual_seed(0)\n",
        ),
    ],
)
def test_rep103_fix(before, after):
    assert_fix(before, after, "REP103", unsafe=True)


def test_rep103_names_seed_as_the_nondeterministic_source():
    [finding] = lint("import torch\ng = torch.Generator()\ng.seed()\n", "REP103")
    assert "`g.seed()`" in finding.message and "nondeterministic" in finding.message
    assert "default seed" not in finding.message
    # Another object's `.seed()` leaves this generator never seeded.
    [finding] = lint("import torch\ng = torch.Generator()\nh.seed()\n", "REP103")
    assert "never seeded" in finding.message


@pytest.mark.parametrize(
    "code",
    [
        "import torch\ng = torch.Generator()\nused = g.seed()\n",  # `manual_seed` returns the generator, not the seed
        "import torch\nseed = torch.Generator().seed()\n",
    ],
)
def test_rep103_offers_no_fix_where_the_seed_seed_returns_is_used(code):
    [finding] = lint(code, "REP103")
    assert finding.fix is None


# --- REP104 nondeterministic-seed-value -------------------------------------------------------------

REP104_FIRES = [
    "import time, torch\ntorch.manual_seed(int(time.time()))\n",
    "import time, torch\nseed = int(time.time() * 1000) % 2**31\ntorch.manual_seed(seed)\n",
    "import time, random\nrandom.seed(args.seed or int(time.time()))\n",
    "import os\nimport numpy as np\nnp.random.seed(int.from_bytes(os.urandom(4), 'little'))\n",
    "import secrets, torch\ntorch.manual_seed(secrets.randbits(32))\n",
    "from datetime import datetime\nimport torch\ntorch.manual_seed(int(datetime.now().timestamp()))\n",
    "import torch\ntorch.manual_seed(torch.initial_seed())\n",
    "import random\nrandom.seed()\n",
    "import numpy as np\nnp.random.seed(None)\n",
    "from detectron2.utils.env import seed_all_rng\nseed_all_rng(None)\n",
    "import uuid, torch\ng = torch.Generator()\ng.manual_seed(uuid.uuid4().int % 2**32)\n",
]

REP104_SILENT = [
    "import torch\ntorch.manual_seed(0)\n",
    "import torch\ntorch.manual_seed(args.seed)\n",
    "import random\nrandom.seed(cfg.seed)\n",
    # Lightning 2.x seeds with 0 when given nothing.
    "import lightning as L\nL.seed_everything()\n",
    # A worker_init_fn deriving per-worker seeds from torch.initial_seed().
    "import random, torch\ndef seed_worker(worker_id):\n    random.seed(torch.initial_seed() % 2**32)\n",
    # Timing code next to seeding does not taint the seed.
    "import time, torch\nstart = time.time()\ntorch.manual_seed(42)\n",
    "from mylib import seed\nseed()\n",
]


@pytest.mark.parametrize("code", REP104_FIRES)
def test_rep104_fires(code):
    assert codes(code, "REP104") == ["REP104"]


@pytest.mark.parametrize("code", REP104_SILENT)
def test_rep104_silent(code):
    assert codes(code, "REP104") == []


def test_rep104_names_the_source():
    from conftest import lint

    [finding] = lint("import time, torch\ntorch.manual_seed(int(time.time()))\n", "REP104")
    assert "gets its seed from the clock (`time.time()`)" in finding.message


# --- REP105 seed-after-randomness -------------------------------------------------------------------

REP105_FIRES = [
    "import torch\nmodel = torch.nn.Linear(2, 2)\ntorch.manual_seed(0)\n",
    "import torch\ndef main():\n    x = torch.randn(3)\n    torch.manual_seed(0)\n",
    "import torch\ndef build():\n    return torch.nn.Conv2d(3, 3, 3)\ndef main():\n    net = build()\n    torch.manual_seed(0)\n",
    "import torch\nimport lightning as L\ndef main():\n    loader = torch.utils.data.RandomSampler(range(3))\n    L.seed_everything(1)\n",
    # Built where weights are allocated and initialised: a CUDA device, Fabric's init_module without
    # empty_init or with it off (or not known to be on), accelerate's context on a real device.
    "import torch\nwith torch.device('cuda'):\n    model = torch.nn.Linear(2, 2)\ntorch.manual_seed(0)\n",
    "import torch\ndef main(fabric):\n    with fabric.init_module():\n        model = torch.nn.Linear(2, 2)\n    torch.manual_seed(0)\n",
    "import torch\ndef main(fabric):\n    with fabric.init_module(empty_init=False):\n        model = torch.nn.Linear(2, 2)\n    torch.manual_seed(0)\n",
    "import torch\ndef main(fabric):\n    with fabric.init_module(empty_init=fabric.world_size > 1):\n        model = torch.nn.Linear(2, 2)\n    torch.manual_seed(0)\n",
    "import torch\nfrom accelerate import init_on_device\nwith init_on_device(torch.device('cuda')):\n    model = torch.nn.Linear(2, 2)\ntorch.manual_seed(0)\n",
    "import torch\ndef build():\n    return torch.nn.Linear(2, 2)\ndef main():\n    with torch.device('cuda'):\n        net = build()\n    torch.manual_seed(0)\n",
    # Only construction is judged no draw: a sampling call still draws under Fabric's and accelerate's
    # contexts, also in a function called there; a function defined in the block runs outside it.
    "import torch\ndef main(fabric):\n    with fabric.init_module(empty_init=True):\n        x = torch.randn(3)\n    torch.manual_seed(0)\n",
    "import torch\ndef build():\n    torch.randn(2)\n    return torch.nn.Linear(2, 2)\ndef main():\n    with torch.device('meta'):\n        net = build()\n    torch.manual_seed(0)\n",
    "import torch\nwith torch.device('meta'):\n    def build():\n        return torch.nn.Linear(2, 2)\nbuild()\ntorch.manual_seed(0)\n",
    # Handed to a call that runs it (`model.apply(init)`, `map`): it draws there, before the seed.
    "import torch\ndef init(m):\n    torch.nn.init.normal_(m.weight)\ndef main(model):\n    model.apply(init)\n    torch.manual_seed(0)\n",
]

REP105_SILENT = [
    # Wrapped, not run: `torch.compile(f)` and `functools.partial(f)` run f when the wrapper is called,
    # after the seed (litgpt's generate scripts compile `next_token`).
    "import torch\ndef sample():\n    return torch.randn(3)\ndef main():\n    fast = torch.compile(sample)\n    torch.manual_seed(0)\n    fast()\n",
    "import functools\nimport torch\ndef sample(n):\n    return torch.randn(n)\ndef main():\n    three = functools.partial(sample, 3)\n    torch.manual_seed(0)\n    three()\n",
    "import torch\ntorch.manual_seed(0)\nmodel = torch.nn.Linear(2, 2)\n",
    # The consumer lives in a function that is not called before the seed.
    "import torch\ndef build():\n    return torch.nn.Linear(2, 2)\ntorch.manual_seed(0)\nmodel = build()\n",
    # Seed and draw in different functions.
    "import torch\ndef a():\n    torch.nn.Linear(2, 2)\ndef b():\n    torch.manual_seed(0)\n",
    # Only numpy drew before the torch seed.
    "import numpy as np\nimport torch\nx = np.random.rand(3)\ntorch.manual_seed(0)\n",
    # Built where no weights are allocated or initialised, by any spelling of the context: the
    # construction draws nothing (litgpt's generate scripts).
    "import torch\nwith torch.device('meta'):\n    model = torch.nn.Linear(2, 2)\ntorch.manual_seed(0)\n",
    "import torch\nwith torch.device(device='meta'):\n    model = torch.nn.Linear(2, 2)\ntorch.manual_seed(0)\n",
    "import torch\nwith torch.device(type='meta'):\n    model = torch.nn.Linear(2, 2)\ntorch.manual_seed(0)\n",
    "import torch\nimport lightning as L\ndef main(fabric):\n    with fabric.init_module(empty_init=True):\n        model = torch.nn.Linear(2, 2)\n    L.seed_everything(0)\n",
    "import torch\ndef main(fabric):\n    with fabric.init_module(), torch.device('meta'):\n        model = torch.nn.Linear(2, 2)\n    torch.manual_seed(0)\n",
    "import torch\nfrom accelerate import init_empty_weights\nwith init_empty_weights():\n    model = torch.nn.Linear(2, 2)\ntorch.manual_seed(0)\n",
    "import torch\nimport accelerate\nwith accelerate.init_on_device(torch.device('meta')):\n    model = torch.nn.Linear(2, 2)\ntorch.manual_seed(0)\n",
    "import torch\nimport accelerate\nwith accelerate.init_on_device(device='meta'):\n    model = torch.nn.Linear(2, 2)\ntorch.manual_seed(0)\n",
    # A project function building the model, called in the block, and a nested block.
    "import torch\ndef build():\n    return torch.nn.Linear(2, 2)\ndef main():\n    with torch.device('meta'):\n        net = build()\n    torch.manual_seed(0)\n",
    "import torch\ndef main():\n    with torch.device('meta'):\n        with torch.no_grad():\n            model = torch.nn.Linear(2, 2)\n    torch.manual_seed(0)\n",
]


@pytest.mark.parametrize("code", REP105_FIRES)
def test_rep105_fires(code):
    assert codes(code, "REP105") == ["REP105"]


@pytest.mark.parametrize("code", REP105_SILENT)
def test_rep105_silent(code):
    assert codes(code, "REP105") == []


# --- REP104: seeds drawn from a global RNG before it is seeded ----------------------------------------

REP104_DRAW_FIRES = [
    # pytorch/examples dcgan: a random seed when none is given, printed, then used (a rerun of the same
    # command still gets another seed).
    "import random, torch\nif opt.manualSeed is None:\n    opt.manualSeed = random.randint(1, 10000)\nprint('Seed', opt.manualSeed)\n"
    "random.seed(opt.manualSeed)\ntorch.manual_seed(opt.manualSeed)\n",
    "import numpy as np\nimport torch\ntorch.manual_seed(np.random.randint(2**31))\n",
    "import torch\ndef main():\n    seed = torch.randint(0, 100, (1,)).item()\n    torch.manual_seed(seed)\n",
    "from random import randint\nimport torch\ntorch.manual_seed(args.seed or randint(0, 99))\n",
]

REP104_DRAW_SILENT = [
    # Drawn from an RNG seeded before the draw.
    "import random, torch\nrandom.seed(0)\nseed = random.randint(1, 10000)\ntorch.manual_seed(seed)\n",
    "import numpy as np, torch\nnp.random.seed(1)\ntorch.manual_seed(np.random.randint(100))\n",
    # A seeded generator object, not the global RNG.
    "import numpy as np, torch\nrng = np.random.default_rng(0)\ntorch.manual_seed(rng.integers(100))\n",
    # In a DataLoader worker_init_fn the global RNGs are seeded per worker by PyTorch.
    "import random, torch\ndef seed_worker(worker_id):\n    torch.manual_seed(random.randint(0, 9))\n",
    # A user's own function named like a draw.
    "import torch\ndef randint(a, b):\n    return 7\ntorch.manual_seed(randint(0, 9))\n",
    # The draw is in another function than the seeding call's value.
    "import random, torch\ndef pick():\n    return random.randint(0, 9)\ndef main(seed):\n    torch.manual_seed(seed)\n",
]


@pytest.mark.parametrize("code", REP104_DRAW_FIRES)
def test_rep104_seed_drawn_before_seeding_fires_once(code):
    assert codes(code, "REP104") == ["REP104"]


@pytest.mark.parametrize("code", REP104_DRAW_SILENT)
def test_rep104_seed_drawn_from_seeded_or_no_rng_is_silent(code):
    assert codes(code, "REP104") == []


def test_rep104_draw_is_reported_at_the_first_seeding_call_and_named():
    from conftest import lint

    [finding] = lint(REP104_DRAW_FIRES[0], "REP104")
    assert finding.start.line == 5
    assert "Python's global `random` before it is seeded (`random.randint()`)" in finding.message


def test_rep104_one_clock_value_is_reported_once():
    from conftest import lint

    code = "import time, torch, numpy as np\nseed = int(time.time())\ntorch.manual_seed(seed)\nnp.random.seed(seed)\n"
    assert [finding.start.line for finding in lint(code, "REP104")] == [3]


# --- REP105 fix: move the seeding up its block ------------------------------------------------------

REP105_MOVE = (
    """\
    import torch


    def main():
        args = parse()
        # the model
        model = torch.nn.Linear(2, 2)  # layer
        data = load(args)
        # seed everything
        torch.manual_seed(
            args.seed
        )  # keep
        train(model, data)
    """,
    """\
    import torch


    def main():
        args = parse()
        # seed everything
        torch.manual_seed(
            args.seed
        )  # keep
        # the model
        model = torch.nn.Linear(2, 2)  # layer
        data = load(args)
        train(model, data)
    """,
)


@pytest.mark.parametrize(
    "before, after",
    [
        REP105_MOVE,
        # Module level, the consumer reached through a call; the seed value is a module constant.
        (
            "import torch\nSEED = 1\n\ndef build():\n    return torch.nn.Conv2d(3, 3, 3)\n\nnet = build()\nprint(net)\ntorch.manual_seed(SEED)\n",
            "import torch\nSEED = 1\n\ndef build():\n    return torch.nn.Conv2d(3, 3, 3)\n\ntorch.manual_seed(SEED)\nnet = build()\nprint(net)\n",
        ),
        # A draw nested in an earlier compound statement of the same block: the seed moves above it.
        (
            "import lightning as L\nimport torch\nfor _ in range(2):\n    x = torch.rand(1)\nL.seed_everything(0)\n",
            "import lightning as L\nimport torch\nL.seed_everything(0)\nfor _ in range(2):\n    x = torch.rand(1)\n",
        ),
    ],
)
def test_rep105_fix_moves_the_seed_before_the_first_draw(before, after):
    assert_fix(before, after, "REP105", unsafe=True)


REP105_NOT_MOVABLE = [
    # The seed value is computed after the draw.
    "import torch\nmodel = torch.nn.Linear(2, 2)\nseed = 3\ntorch.manual_seed(seed)\n",
    # The configuration holding the seed changes after the draw.
    "import torch\ndef main(cfg):\n    net = torch.nn.Linear(2, 2)\n    cfg.merge_from_file('x.yaml')\n    torch.manual_seed(cfg.SEED)\n",
    "import torch\ndef main(args):\n    net = torch.nn.Linear(2, 2)\n    args.seed = args.seed + 1\n    torch.manual_seed(args.seed)\n",
    # The seed is not a statement of the draw's block.
    "import torch\ndef main(args):\n    x = torch.randn(3)\n    if args.seed is not None:\n        torch.manual_seed(args.seed)\n",
    # Not a statement of its own.
    "import torch\nx = torch.randn(3)\ng = torch.manual_seed(0)\n",
    # The draw and the seed are in different blocks of the module: the main block and the top level.
    "import torch\nnet = torch.nn.Linear(2, 2)\nif __name__ == '__main__':\n    torch.manual_seed(0)\n",
]


@pytest.mark.parametrize("code", REP105_NOT_MOVABLE)
def test_rep105_without_a_safe_move_has_no_fix_but_names_the_first_draw(code):
    from conftest import lint

    [finding] = lint(code, "REP105")
    assert finding.fix is None
    assert "already drew from torch's RNG (line " in finding.message


def test_rep105_a_helper_that_builds_in_a_meta_block_does_not_draw(project):
    from repro_lint.api import lint_paths
    from repro_lint.core.settings import Settings

    # litgpt chat/base.py: `merge_lora()` builds GPT under `torch.device("meta")`, then the seed.
    model = "import torch\nclass GPT(torch.nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.fc = torch.nn.Linear(2, 2)\n"
    merge = "import torch\nfrom model import GPT\ndef merge_lora():\n    with torch.device('meta'):\n        model = GPT()\n    model.load_state_dict(torch.load('m.pt'), assign=True)\n"
    chat = "import lightning as L\nfrom merge import merge_lora\ndef main():\n    merge_lora()\n    L.seed_everything(1234)\n"
    root = project({"model.py": model, "merge.py": merge, "chat.py": chat})
    assert lint_paths([root], Settings(select=("REP105",))).findings == []
    root = project({"model.py": model, "merge.py": merge.replace("'meta'", "'cuda'"), "chat.py": chat})
    [finding] = lint_paths([root], Settings(select=("REP105",))).findings
    assert finding.path.endswith("chat.py") and "(`merge_lora` draws)" in finding.message


def test_rep105_building_a_module_runs_its_init_not_its_forward(project):
    from repro_lint.api import lint_paths
    from repro_lint.core.settings import Settings

    # timm tests/test_layers_drop.py: a layer whose forward draws is built, then the seed is set.
    layers = "import torch\nclass Drop(torch.nn.Module):\n    def forward(self, x):\n        return x * torch.rand_like(x)\n"
    built = "import torch\nfrom layers import Drop\ndef test_drop():\n    module = Drop()\n    torch.manual_seed(42)\n    module(torch.ones(2))\n"
    root = project({"layers.py": layers, "test_drop.py": built})
    assert lint_paths([root], Settings(select=("REP105",))).findings == []
    drawn = built.replace("module = Drop()", "module = Drop()\n    torch.rand(1)")
    root = project({"layers.py": layers, "test_drop.py": drawn})
    assert [finding.code for finding in lint_paths([root], Settings(select=("REP105",))).findings] == ["REP105"]
