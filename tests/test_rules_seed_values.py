import pytest

from conftest import assert_fix, codes

# --- REP103 unseeded-generator ---------------------------------------------------------------------

REP103_FIRES = [
    "import numpy as np\nrng = np.random.default_rng()\n",
    "from numpy.random import default_rng\nrng = default_rng(None)\n",
    "import numpy as np\nrs = np.random.RandomState()\n",
    "import numpy as np\ng = np.random.Generator(np.random.PCG64())\n",
    "import random\nr = random.Random()\n",
    "import torch\ng = torch.Generator()\nloader = torch.utils.data.DataLoader(ds, generator=g)\n",
    "import torch\nloader = torch.utils.data.DataLoader(ds, shuffle=True, generator=torch.Generator(device='cpu'))\n",
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
        ("import numpy as np\nrng = np.random.default_rng()  # data\n", "import numpy as np\nrng = np.random.default_rng(0)  # data\n"),
        ("import numpy as np\nSEED = 5\nrng = np.random.default_rng(None)\n", "import numpy as np\nSEED = 5\nrng = np.random.default_rng(SEED)\n"),
        ("import random\nr = random.Random()\n", "import random\nr = random.Random(0)\n"),
        ("import torch\ng = torch.Generator(device='cpu')\n", "import torch\ng = torch.Generator(device='cpu').manual_seed(0)\n"),
    ],
)
def test_rep103_fix(before, after):
    assert_fix(before, after, "REP103", unsafe=True)


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
    assert "comes from the clock (`time.time()`)" in finding.message


# --- REP105 seed-after-randomness -------------------------------------------------------------------

REP105_FIRES = [
    "import torch\nmodel = torch.nn.Linear(2, 2)\ntorch.manual_seed(0)\n",
    "import torch\ndef main():\n    x = torch.randn(3)\n    torch.manual_seed(0)\n",
    "import torch\ndef build():\n    return torch.nn.Conv2d(3, 3, 3)\ndef main():\n    net = build()\n    torch.manual_seed(0)\n",
    "import torch\nimport lightning as L\ndef main():\n    loader = torch.utils.data.RandomSampler(range(3))\n    L.seed_everything(1)\n",
]

REP105_SILENT = [
    "import torch\ntorch.manual_seed(0)\nmodel = torch.nn.Linear(2, 2)\n",
    # The consumer lives in a function that is not called before the seed.
    "import torch\ndef build():\n    return torch.nn.Linear(2, 2)\ntorch.manual_seed(0)\nmodel = build()\n",
    # Seed and draw in different functions.
    "import torch\ndef a():\n    torch.nn.Linear(2, 2)\ndef b():\n    torch.manual_seed(0)\n",
    # Only numpy drew before the torch seed.
    "import numpy as np\nimport torch\nx = np.random.rand(3)\ntorch.manual_seed(0)\n",
]


@pytest.mark.parametrize("code", REP105_FIRES)
def test_rep105_fires(code):
    assert codes(code, "REP105") == ["REP105"]


@pytest.mark.parametrize("code", REP105_SILENT)
def test_rep105_silent(code):
    assert codes(code, "REP105") == []
