"""REP201, REP202, REP205, REP206: DataLoader randomness. What fires, what must not, fixes, and the
REP201 hazard shown on a real DataLoader with worker processes."""

import importlib
import inspect
import sys
import textwrap

import pytest
from conftest import assert_fix, codes, lint

from repro_lint.api import fix_source
from repro_lint.core.settings import Settings
from repro_lint.knowledge import load

torch = pytest.importorskip("torch")


def test_dataloader_positions_match_the_installed_torch():
    """Positional arguments are read by the positions in dataloader.json: they must be torch's."""
    data = load("dataloader.json")
    parameters = list(inspect.signature(torch.utils.data.DataLoader.__init__).parameters)[1:]
    for name, position in data["parameters"].items():
        assert parameters[position] == name
    for qualified, position in data["random_samplers"].items():
        sampler = getattr(torch.utils.data, qualified.rpartition(".")[2])
        assert list(inspect.signature(sampler.__init__).parameters)[1:][position] == "generator"
    for qualified, position in data["distributed_samplers"].items():
        sampler = torch.utils.data.distributed.DistributedSampler
        assert list(inspect.signature(sampler.__init__).parameters)[1:][position] == "shuffle"


# --- REP201 dataloader-shared-worker-rng -----------------------------------------------------------

DATASET = """\
import numpy as np
import random
import torch
from torch.utils.data import Dataset


class Noisy(Dataset):
    def __init__(self, n):
        self.n = n
        self.rng = np.random.default_rng(0)

    def __len__(self):
        return self.n

    def __getitem__(self, index):
        return self.rng.normal()
"""

REP201_FIRES = [
    # keyword num_workers, dataset through a variable
    DATASET + "\nfrom torch.utils.data import DataLoader\nds = Noisy(8)\nloader = DataLoader(ds, batch_size=4, num_workers=4)\n",
    # positional num_workers (index 5) and an alias
    DATASET + "\nfrom torch.utils.data import DataLoader as DL\nloader = DL(Noisy(8), 4, True, None, None, 2)\n",
    # an unknown num_workers may be on; the dataset behind Subset and random_split
    DATASET + "\nfrom torch.utils.data import DataLoader, Subset\ntrain = Subset(Noisy(8), range(4))\n"
    "loader = DataLoader(train, num_workers=args.workers)\n",
    DATASET + "\nimport torch.utils.data as tud\ntrain, val = tud.random_split(Noisy(8), [6, 2])\n"
    "loader = tud.DataLoader(dataset=val, num_workers=2)\n",
    # a self attribute in a LightningDataModule-like class
    DATASET + "\nfrom torch.utils.data import DataLoader\nclass Data:\n    def setup(self):\n        self.train = Noisy(8)\n"
    "    def train_dataloader(self):\n        return DataLoader(self.train, num_workers=8)\n",
    # the generator lives in a base class and is used through a helper method; random.Random and torch.Generator
    "import random\nfrom torch.utils.data import DataLoader, Dataset\nclass Base(Dataset):\n    def __init__(self):\n"
    "        self.random = random.Random(1)\n    def augment(self, x):\n        return x + self.random.random()\n"
    "class Child(Base):\n    def __getitem__(self, i):\n        return self.augment(i)\nloader = DataLoader(Child(), num_workers=2)\n",
    "import torch\nfrom torch.utils.data import DataLoader, IterableDataset\nclass Stream(IterableDataset):\n"
    "    gen = torch.Generator().manual_seed(0)\n    def __iter__(self):\n        yield torch.rand(2, generator=self.gen)\n"
    "loader = DataLoader(Stream(), num_workers=2)\n",
    # a module-level generator
    "import numpy as np\nfrom torch.utils.data import DataLoader, Dataset\nRNG = np.random.RandomState(0)\nclass D(Dataset):\n"
    "    def __getitem__(self, i):\n        return RNG.rand()\nloader = DataLoader(D(), num_workers=2)\n",
    # a generator handed to a transform object the dataset calls
    "import numpy as np\nfrom torch.utils.data import DataLoader, Dataset\nclass Aug:\n    def __init__(self, rng):\n        self.rng = rng\n"
    "    def __call__(self, x):\n        return x * self.rng.random()\nclass D(Dataset):\n    def __init__(self):\n"
    "        self.transform = Aug(np.random.default_rng(0))\n    def __getitem__(self, i):\n        return self.transform(i)\n"
    "loader = DataLoader(D(), num_workers=2)\n",
]

REP201_SILENT = [
    # worker_init_fn given, by keyword or at position 10
    DATASET + "\nfrom torch.utils.data import DataLoader\nloader = DataLoader(Noisy(8), num_workers=2, worker_init_fn=seed_worker)\n",
    DATASET + "\nfrom torch.utils.data import DataLoader\nloader = DataLoader(Noisy(8), 1, False, None, None, 2, None, False, False, 0, init)\n",
    # no workers
    DATASET + "\nfrom torch.utils.data import DataLoader\nloader = DataLoader(Noisy(8), num_workers=0)\n",
    DATASET + "\nfrom torch.utils.data import DataLoader\nloader = DataLoader(Noisy(8), batch_size=2)\n",
    # **kwargs may carry worker_init_fn
    DATASET + "\nfrom torch.utils.data import DataLoader\nloader = DataLoader(Noisy(8), num_workers=2, **loader_kwargs)\n",
    # a user's own DataLoader, another library's
    DATASET + "\nclass DataLoader:\n    def __init__(self, *a, **k):\n        pass\nloader = DataLoader(Noisy(8), num_workers=2)\n",
    DATASET + "\nfrom torch_geometric.loader import DataLoader\nloader = DataLoader(Noisy(8), num_workers=2)\n",
    # the dataset draws only from the global RNGs (reseeded per worker since torch 1.9)
    "import numpy as np\nfrom torch.utils.data import DataLoader, Dataset\nclass D(Dataset):\n    def __getitem__(self, i):\n"
    "        return np.random.rand() + i\nloader = DataLoader(D(), num_workers=2)\n",
    # a generator created per item, or lazily in each worker, or reseeded from get_worker_info
    "import numpy as np\nfrom torch.utils.data import DataLoader, Dataset\nclass D(Dataset):\n    def __init__(self):\n"
    "        self.rng = np.random.default_rng(0)\n    def __getitem__(self, i):\n        self.rng = np.random.default_rng(i)\n"
    "        return self.rng.random()\nloader = DataLoader(D(), num_workers=2)\n",
    "import numpy as np\nfrom torch.utils.data import DataLoader, IterableDataset, get_worker_info\nclass D(IterableDataset):\n"
    "    def __init__(self):\n        self.rng = np.random.default_rng(0)\n    def __iter__(self):\n"
    "        self.rng = np.random.default_rng(get_worker_info().seed)\n        yield self.rng.random()\n"
    "loader = DataLoader(D(), num_workers=2)\n",
    # the generator is created but not drawn from in __getitem__
    "import numpy as np\nfrom torch.utils.data import DataLoader, Dataset\nclass D(Dataset):\n    def __init__(self):\n"
    "        self.rng = np.random.default_rng(0)\n        self.order = self.rng.permutation(10)\n"
    "    def __getitem__(self, i):\n        return self.order[i]\nloader = DataLoader(D(), num_workers=2)\n",
    # the dataset cannot be resolved to a class of this module (waits for the program model)
    "from torch.utils.data import DataLoader\nfrom mydata import Noisy\nloader = DataLoader(Noisy(8), num_workers=2)\n",
    "from torch.utils.data import DataLoader\ndef make(ds):\n    return DataLoader(ds, num_workers=2)\n",
    # Lightning seeds the workers
    DATASET + "\nimport lightning as L\nfrom torch.utils.data import DataLoader\nL.seed_everything(0, workers=True)\n"
    "loader = DataLoader(Noisy(8), num_workers=2)\n",
    # a transform object of another library, handed a generator: what it does with it cannot be known
    "import numpy as np\nfrom albumentations import Aug\nfrom torch.utils.data import DataLoader, Dataset\nclass D(Dataset):\n"
    "    def __init__(self):\n        self.transform = Aug(np.random.default_rng(0))\n    def __getitem__(self, i):\n"
    "        return self.transform(i)\nloader = DataLoader(D(), num_workers=2)\n",
]


@pytest.mark.parametrize("code", REP201_FIRES)
def test_rep201_fires(code):
    assert codes(code, "REP201") == ["REP201"]


@pytest.mark.parametrize("code", REP201_SILENT)
def test_rep201_silent(code):
    assert codes(code, "REP201") == []


OLD_TORCH = (
    "import numpy as np\nfrom torch.utils.data import DataLoader, Dataset\nclass D(Dataset):\n    def __getitem__(self, i):\n"
    "        return np.random.rand() + i\nloader = DataLoader(D(), num_workers=2)\n"
)


def test_rep201_global_numpy_fires_only_for_torch_before_1_9():
    assert [f.code for f in lint(OLD_TORCH, "REP201", target_torch_version="1.8")] == ["REP201"]
    assert [f.code for f in lint(OLD_TORCH, "REP201", target_torch_version="1.9")] == []
    assert [f.code for f in lint(OLD_TORCH, "REP201")] == []  # unknown target: silent


def test_rep201_old_torch_fix_seeds_numpy_in_each_worker():
    settings = Settings(select=("REP201",), target_torch_version="1.8")
    fixed = fix_source(OLD_TORCH, "train.py", settings, unsafe=True)
    assert "    np.random.seed(info.seed % 2**32)\n" in fixed and "worker_init_fn=seed_worker" in fixed
    assert fix_source(fixed, "train.py", settings, unsafe=True) == fixed
    assert lint(fixed, "REP201", target_torch_version="1.8") == []


def test_rep201_reports_at_the_dataloader_and_names_the_generator():
    (finding,) = lint(DATASET + "\nfrom torch.utils.data import DataLoader\nloader = DataLoader(Noisy(8), num_workers=2)\n", "REP201")
    assert finding.start.line == DATASET.count("\n") + 3 and finding.start.column == 9
    assert "Noisy.rng" in finding.message and "draw the same numbers" in finding.message


def test_rep201_fix_inserts_a_reseeding_worker_function():
    """The function goes after the last import before the first loader, with the file's indentation."""
    before = DATASET + "\nfrom torch.utils.data import DataLoader\n\nloader = DataLoader(Noisy(8), num_workers=2)  # train\n"
    after = (
        DATASET + "\nfrom torch.utils.data import DataLoader\n\n\n"
        "def seed_worker(worker_id):\n"
        "    # Added by repro-lint (REP201): each DataLoader worker starts with a copy of the dataset's random\n"
        "    # generators in the same state; reseed them from the seed PyTorch gives each worker.\n"
        "    info = torch.utils.data.get_worker_info()\n"
        "    dataset = info.dataset\n"
        '    while hasattr(dataset, "dataset"):  # Subset and random_split wrap the dataset\n'
        "        dataset = dataset.dataset\n"
        "    dataset.rng = np.random.default_rng(info.seed)\n"
        "\nloader = DataLoader(Noisy(8), num_workers=2, worker_init_fn=seed_worker)  # train\n"
    )
    assert_fix(before, after, "REP201", unsafe=True)


def test_rep201_fix_for_in_place_generators_adds_imports_and_keeps_tabs():
    before = (
        "import random\nfrom torch.utils.data import DataLoader, Dataset\n"
        "class D(Dataset):\n\tdef __init__(self):\n\t\tself.r = random.Random(0)\n\t\tself.g = None\n"
        "\tdef __getitem__(self, i):\n\t\treturn self.r.random()\n"
        "loader = DataLoader(D(), num_workers=2)\n"
    )
    after = (
        "import random\nimport torch\nfrom torch.utils.data import DataLoader, Dataset\n\n\n"
        "def seed_worker(worker_id):\n"
        "\t# Added by repro-lint (REP201): each DataLoader worker starts with a copy of the dataset's random\n"
        "\t# generators in the same state; reseed them from the seed PyTorch gives each worker.\n"
        "\tinfo = torch.utils.data.get_worker_info()\n\tdataset = info.dataset\n"
        '\twhile hasattr(dataset, "dataset"):  # Subset and random_split wrap the dataset\n'
        "\t\tdataset = dataset.dataset\n\tdataset.r.seed(info.seed)\n"
        "class D(Dataset):\n\tdef __init__(self):\n\t\tself.r = random.Random(0)\n\t\tself.g = None\n"
        "\tdef __getitem__(self, i):\n\t\treturn self.r.random()\n"
        "loader = DataLoader(D(), num_workers=2, worker_init_fn=seed_worker)\n"
    )
    assert_fix(before, after, "REP201", unsafe=True)


def test_rep201_fix_for_a_module_generator_rebinds_the_global():
    code = (
        "import numpy as np\nfrom torch.utils.data import DataLoader, Dataset\nRNG = np.random.default_rng(0)\n"
        "class D(Dataset):\n    def __getitem__(self, i):\n        return RNG.random()\nloader = DataLoader(D(), num_workers=2)\n"
    )
    fixed = fix_source(code, "train.py", Settings(select=("REP201",)), unsafe=True)
    assert "    global RNG\n    RNG = np.random.default_rng(info.seed)\n" in fixed
    assert "worker_init_fn=seed_worker" in fixed and "import torch\n" in fixed


def test_rep201_two_loaders_share_one_worker_function():
    code = DATASET + "\nfrom torch.utils.data import DataLoader\na = DataLoader(Noisy(8), num_workers=2)\nb = DataLoader(Noisy(4), num_workers=2)\n"
    fixed = fix_source(code, "train.py", Settings(select=("REP201",)), unsafe=True)
    assert fixed.count("def seed_worker") == 1 and fixed.count("worker_init_fn=seed_worker") == 2


def test_rep201_fix_is_unsafe_and_absent_behind_concat_dataset():
    code = DATASET + "\nfrom torch.utils.data import DataLoader, ConcatDataset\nloader = DataLoader(ConcatDataset([Noisy(2), Noisy(3)]), num_workers=2)\n"
    (finding,) = lint(code, "REP201")
    assert finding.fix is None
    (finding,) = lint(DATASET + "\nfrom torch.utils.data import DataLoader\nloader = DataLoader(Noisy(8), num_workers=2)\n", "REP201")
    assert finding.fix is not None and finding.fix.applicability.value == "unsafe"


# The hazard itself, on a real DataLoader: a tiny dataset, 2 workers, 2 batches (one per worker).
WORKER_PROGRAM = """\
import numpy as np
import random
import torch
from torch.utils.data import DataLoader, Dataset


class Noise(Dataset):
    def __init__(self):
        self.rng = {constructor}

    def __len__(self):
        return 4

    def __getitem__(self, index):
        return {draw}


def draws():
    torch.manual_seed(0)
    loader = DataLoader(Noise(), batch_size=2, num_workers=2)
    return [batch.tolist() for batch in loader]
"""


def _import_program(tmp_path, name, source):
    (tmp_path / f"{name}.py").write_text(source, encoding="utf-8")
    sys.path.insert(0, str(tmp_path))
    try:
        return importlib.import_module(name)
    finally:
        sys.path.remove(str(tmp_path))


@pytest.mark.parametrize(
    "constructor, draw",
    [
        ("np.random.default_rng(0)", "float(self.rng.random())"),
        ("random.Random(0)", "self.rng.random()"),
    ],
    ids=["numpy-default_rng", "random.Random"],
)
def test_rep201_hazard_on_a_real_dataloader_and_the_fix_removes_it(tmp_path, monkeypatch, constructor, draw):
    if constructor.startswith("np."):
        pytest.importorskip("numpy")
    source = WORKER_PROGRAM.format(constructor=constructor, draw=draw)
    monkeypatch.syspath_prepend(str(tmp_path))
    tag = "numpy" if constructor.startswith("np.") else "random"

    hazardous = _import_program(tmp_path, f"rep201_before_{tag}", source)
    first, second = hazardous.draws()
    assert first == second  # both workers drew the same numbers: the REP201 hazard

    assert [f.code for f in lint(source, "REP201")] == ["REP201"]
    fixed_source = fix_source(source, "train.py", Settings(select=("REP201",)), unsafe=True)
    assert "worker_init_fn=seed_worker" in fixed_source
    fixed = _import_program(tmp_path, f"rep201_after_{tag}", fixed_source)
    first, second = fixed.draws()
    assert first != second  # each worker now has its own stream
    assert fixed.draws() == [first, second]  # and it is reproducible under torch.manual_seed


TRANSFORM_PROGRAM = """\
import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset


class Jitter:
    def __init__(self, rng):
        self.rng = rng

    def __call__(self, x):
        return float(x + self.rng.random())


class Noise(Dataset):
    def __init__(self):
        self.transform = Jitter(rng=np.random.default_rng(0))

    def __len__(self):
        return 4

    def __getitem__(self, index):
        return self.transform(0)


def draws():
    torch.manual_seed(0)
    loader = DataLoader(Noise(), batch_size=2, num_workers=2)
    return [batch.tolist() for batch in loader]
"""


def test_rep201_transform_hazard_on_a_real_dataloader_and_the_fix_removes_it(tmp_path, monkeypatch):
    """A generator held by a transform object is copied into every worker too; the fix reseeds it."""
    monkeypatch.syspath_prepend(str(tmp_path))
    first, second = _import_program(tmp_path, "rep201_transform_before", TRANSFORM_PROGRAM).draws()
    assert first == second
    (finding,) = lint(TRANSFORM_PROGRAM, "REP201")
    assert "`Noise.transform.rng`" in finding.message
    fixed_source = fix_source(TRANSFORM_PROGRAM, "train.py", Settings(select=("REP201",)), unsafe=True)
    assert "    dataset.transform.rng = np.random.default_rng(info.seed)\n" in fixed_source
    fixed = _import_program(tmp_path, "rep201_transform_after", fixed_source)
    first, second = fixed.draws()
    assert first != second and fixed.draws() == [first, second]


# --- REP202 dataloader-missing-generator ------------------------------------------------------------

REP202_FIRES = [
    "from torch.utils.data import DataLoader\nloader = DataLoader(ds, batch_size=8, shuffle=True)\n",
    "import torch\nloader = torch.utils.data.DataLoader(ds, 8, True)\n",  # shuffle at position 2
    "from torch.utils.data import DataLoader as DL\nloader = DL(ds, shuffle=args.shuffle)\n",  # may be on
    "from torch.utils.data import DataLoader\nloader = DataLoader(ds, shuffle=(sampler is None), sampler=sampler)\n",
    # random samplers built without a generator: inline, through a variable, inside a BatchSampler
    "from torch.utils.data import DataLoader, RandomSampler\nloader = DataLoader(ds, sampler=RandomSampler(ds))\n",
    "import torch\nsampler = torch.utils.data.WeightedRandomSampler(w, len(w))\nloader = torch.utils.data.DataLoader(ds, 4, False, sampler)\n",
    "from torch.utils.data import BatchSampler, DataLoader, SubsetRandomSampler\n"
    "batches = BatchSampler(SubsetRandomSampler(idx), batch_size=4, drop_last=False)\nloader = DataLoader(ds, batch_sampler=batches)\n",
    # a branch that may run: the random sampler is used whenever the run is not distributed
    "from torch.utils.data import DataLoader, DistributedSampler, RandomSampler\n"
    "if args.distributed:\n    sampler = DistributedSampler(ds)\nelse:\n    sampler = RandomSampler(ds)\n"
    "loader = DataLoader(ds, sampler=sampler)\n",
    "from torch.utils.data import DataLoader, DistributedSampler, RandomSampler\n"
    "if True:\n    sampler = RandomSampler(ds)\nelse:\n    sampler = DistributedSampler(ds)\nloader = DataLoader(ds, sampler=sampler)\n",
]

REP202_SILENT = [
    "from torch.utils.data import DataLoader\nloader = DataLoader(ds, batch_size=8)\n",
    "from torch.utils.data import DataLoader\nloader = DataLoader(ds, shuffle=False)\n",
    "import torch\nloader = torch.utils.data.DataLoader(ds, 8, False)\n",
    "import torch\ng = torch.Generator().manual_seed(0)\nloader = torch.utils.data.DataLoader(ds, shuffle=True, generator=g)\n",
    # generator at position 12
    "from torch.utils.data import DataLoader\nloader = DataLoader(ds, 8, True, None, None, 0, None, False, False, 0, None, None, g)\n",
    "from torch.utils.data import DataLoader\nloader = DataLoader(ds, shuffle=True, **kwargs)\n",
    # samplers that are not random, or random with their own generator
    "from torch.utils.data import DataLoader, SequentialSampler\nloader = DataLoader(ds, sampler=SequentialSampler(ds))\n",
    "from torch.utils.data import DataLoader, RandomSampler\nloader = DataLoader(ds, sampler=RandomSampler(ds, generator=g))\n",
    "from torch.utils.data import DataLoader\nfrom torch.utils.data.distributed import DistributedSampler\n"
    "loader = DataLoader(ds, sampler=DistributedSampler(ds))\n",
    "from torch.utils.data import DataLoader\nloader = DataLoader(ds, batch_sampler=MyBatches(ds))\n",
    # the random sampler is built only in a branch switched off by hand (MAE's `if True:  # args.distributed:`)
    "from torch.utils.data import DataLoader, DistributedSampler, RandomSampler\n"
    "if True:  # args.distributed:\n    sampler = DistributedSampler(ds)\nelse:\n    sampler = RandomSampler(ds)\n"
    "loader = DataLoader(ds, sampler=sampler)\n",
    "from torch.utils.data import DataLoader, DistributedSampler, RandomSampler\n"
    "sampler = DistributedSampler(ds)\nif False:\n    sampler = RandomSampler(ds)\nloader = DataLoader(ds, sampler=sampler)\n",
    # not torch's DataLoader
    "class DataLoader:\n    pass\nloader = DataLoader(ds, shuffle=True)\n",
    "from torch_geometric.loader import DataLoader\nloader = DataLoader(ds, shuffle=True)\n",
]


@pytest.mark.parametrize("code", REP202_FIRES)
def test_rep202_fires(code):
    assert codes(code, "REP202") == ["REP202"]


@pytest.mark.parametrize("code", REP202_SILENT)
def test_rep202_silent(code):
    assert codes(code, "REP202") == []


@pytest.mark.parametrize(
    "before, after",
    [
        (
            "from torch.utils.data import DataLoader\nloader = DataLoader(ds, batch_size=8, shuffle=True)  # train\n",
            "import torch\nfrom torch.utils.data import DataLoader\n\nSEED = 0\n"
            "loader = DataLoader(\n    ds, batch_size=8, shuffle=True, generator=torch.Generator().manual_seed(SEED)\n)  # train\n",
        ),
        (
            "import torch\ndef make(ds, seed):\n    return torch.utils.data.DataLoader(\n        ds,\n        shuffle=True,\n    )\n",
            "import torch\ndef make(ds, seed):\n    return torch.utils.data.DataLoader(\n        ds,\n        shuffle=True,\n"
            "        generator=torch.Generator().manual_seed(seed),\n    )\n",
        ),
        (
            "import torch\nfrom torch.utils.data import DataLoader, RandomSampler\nsampler = RandomSampler(ds)\n"
            "loader = DataLoader(ds, sampler=sampler)\n",
            "import torch\nfrom torch.utils.data import DataLoader, RandomSampler\n\nSEED = 0\n"
            "sampler = RandomSampler(ds, generator=torch.Generator().manual_seed(SEED))\nloader = DataLoader(ds, sampler=sampler)\n",
        ),
    ],
)
def test_rep202_fix(before, after):
    assert_fix(before, after, "REP202")


# --- REP205 distributed-sampler-without-set-epoch ----------------------------------------------------

REP205_FIRES = [
    # epoch loop around a training function the loader is handed to; sampler optional
    "from torch.utils.data import DataLoader\nfrom torch.utils.data.distributed import DistributedSampler\n"
    "def main(args):\n    sampler = DistributedSampler(train_set) if args.distributed else None\n"
    "    loader = DataLoader(train_set, sampler=sampler)\n    for epoch in range(args.epochs):\n        train(loader, model)\n",
    # inline sampler, reached as loader.sampler, iterated in a while loop
    "import torch.utils.data as tud\ndef main(ds):\n    loader = tud.DataLoader(ds, 8, False, tud.DistributedSampler(ds))\n"
    "    epoch = 0\n    while epoch < 10:\n        for batch in loader:\n            step(batch)\n        epoch += 1\n",
    # shuffle=True explicit, at position 3, on self attributes
    "from torch.utils.data import DataLoader, DistributedSampler\nclass Trainer:\n    def __init__(self, ds):\n"
    "        self.sampler = DistributedSampler(ds, 2, 0, True)\n        self.loader = DataLoader(ds, sampler=self.sampler)\n"
    "    def fit(self):\n        for epoch in range(3):\n            for x in self.loader:\n                self.step(x)\n",
    # alias, module level
    "from torch.utils.data import DataLoader\nfrom torch.utils.data.distributed import DistributedSampler as DS\n"
    "s = DS(ds)\nloader = DataLoader(ds, sampler=s)\nfor epoch in range(5):\n    for batch, target in enumerate(loader):\n        pass\n",
]

# The epoch loop in a function of the module the loader is handed to: by position, by keyword to a
# method, through two functions.
REP205_HELPER_FIRES = [
    "from torch.utils.data import DataLoader, DistributedSampler\ndef fit(loader, epochs):\n    for epoch in range(epochs):\n"
    "        for x in loader:\n            step(x)\ndef main():\n    loader = DataLoader(ds, sampler=DistributedSampler(ds))\n"
    "    fit(loader, 3)\n",
    "from torch.utils.data import DataLoader, DistributedSampler\nclass Trainer:\n    def fit(self, epochs, loader=None):\n"
    "        for epoch in range(epochs):\n            self.train_one_epoch(loader)\n    def run(self):\n"
    "        self.fit(3, loader=DataLoader(ds, sampler=DistributedSampler(ds)))\n",
    "from torch.utils.data import DataLoader, DistributedSampler\ndef run_epoch(loader):\n    for x in loader:\n        step(x)\n"
    "def fit(loader):\n    for epoch in range(3):\n        run_epoch(loader)\ndef main():\n    s = DistributedSampler(ds)\n"
    "    fit(DataLoader(ds, sampler=s))\n",
]

REP205_HELPER_SILENT = [
    # the helper sets the epoch on its parameter's sampler
    REP205_HELPER_FIRES[0].replace("        for x in loader:\n", "        loader.sampler.set_epoch(epoch)\n        for x in loader:\n"),
    # the helper rebinds its parameter (accelerate's prepare sets the epoch itself)
    REP205_HELPER_FIRES[0].replace("    for epoch in range(epochs):\n", "    loader = accelerator.prepare(loader)\n    for epoch in range(epochs):\n"),
    # the helper makes one pass
    "from torch.utils.data import DataLoader, DistributedSampler\ndef evaluate(loader):\n    for x in loader:\n        step(x)\n"
    "def main():\n    evaluate(DataLoader(ds, sampler=DistributedSampler(ds)))\n",
    # a local name that merely shares the helper's name is not the helper
    REP205_HELPER_FIRES[0].replace("    fit(loader, 3)\n", "    fit = trainer.fit\n    fit(loader, 3)\n"),
    # the loader goes to a parameter the helper does not iterate
    REP205_HELPER_FIRES[0].replace("    fit(loader, 3)\n", "    fit(3, loader)\n"),
]

REP205_SILENT = [
    # set_epoch on the same name, on an attribute of that name, through loader.sampler
    "from torch.utils.data import DataLoader, DistributedSampler\ndef main():\n    sampler = DistributedSampler(ds)\n"
    "    loader = DataLoader(ds, sampler=sampler)\n    for epoch in range(3):\n        sampler.set_epoch(epoch)\n"
    "        for x in loader:\n            pass\n",
    "from torch.utils.data import DataLoader, DistributedSampler\ndef main():\n    loader = DataLoader(ds, sampler=DistributedSampler(ds))\n"
    "    for epoch in range(3):\n        loader.sampler.set_epoch(epoch)\n        train(loader)\n",
    "from torch.utils.data import DataLoader, DistributedSampler\ndef main():\n    train_sampler = DistributedSampler(ds)\n"
    "    loader = DataLoader(ds, sampler=train_sampler)\n    for epoch in range(3):\n        train(loader)\n"
    "def train(loader):\n    if args.distributed:\n        args.train_sampler.set_epoch(0)\n",
    # no shuffling, or a value that cannot be read
    "from torch.utils.data import DataLoader, DistributedSampler\ndef main():\n    s = DistributedSampler(ds, shuffle=False)\n"
    "    loader = DataLoader(ds, sampler=s)\n    for epoch in range(3):\n        train(loader)\n",
    "from torch.utils.data import DataLoader, DistributedSampler\ndef main():\n    s = DistributedSampler(ds, shuffle=cfg.shuffle)\n"
    "    loader = DataLoader(ds, sampler=s)\n    for epoch in range(3):\n        train(loader)\n",
    # **kwargs may carry shuffle=False
    "from torch.utils.data import DataLoader, DistributedSampler\ndef main():\n    s = DistributedSampler(ds, **sampler_args)\n"
    "    loader = DataLoader(ds, sampler=s)\n    for epoch in range(3):\n        train(loader)\n",
    # the loader is rebound (accelerate's prepare returns its own loader, which sets the epoch)
    "from torch.utils.data import DataLoader, DistributedSampler\ndef main():\n"
    "    loader = DataLoader(ds, sampler=DistributedSampler(ds))\n    loader = accelerator.prepare(loader)\n"
    "    for epoch in range(3):\n        train(loader)\n",
    # one pass, no epoch loop; loader returned to someone else's loop
    "from torch.utils.data import DataLoader, DistributedSampler\ndef evaluate(ds):\n"
    "    loader = DataLoader(ds, sampler=DistributedSampler(ds))\n    for batch in loader:\n        step(batch)\n",
    "from torch.utils.data import DataLoader, DistributedSampler\ndef train_dataloader(ds):\n"
    "    return DataLoader(ds, sampler=DistributedSampler(ds))\n",
    # a user's own DistributedSampler
    "from torch.utils.data import DataLoader\nclass DistributedSampler:\n    pass\ndef main():\n"
    "    loader = DataLoader(ds, sampler=DistributedSampler())\n    for epoch in range(3):\n        train(loader)\n",
]


@pytest.mark.parametrize("code", REP205_FIRES)
def test_rep205_fires(code):
    assert codes(code, "REP205") == ["REP205"]


@pytest.mark.parametrize("code", REP205_SILENT)
def test_rep205_silent(code):
    assert codes(code, "REP205") == []


@pytest.mark.parametrize("code", REP205_HELPER_FIRES)
def test_rep205_follows_the_loader_into_functions_of_the_module(code):
    assert codes(code, "REP205") == ["REP205"]


@pytest.mark.parametrize("code", REP205_HELPER_SILENT)
def test_rep205_silent_when_the_helper_sets_the_epoch_or_has_no_epoch_loop(code):
    assert codes(code, "REP205") == []


def test_rep205_fix_in_the_helper_uses_its_parameter():
    after = REP205_HELPER_FIRES[0].replace(
        "    for epoch in range(epochs):\n", "    for epoch in range(epochs):\n        loader.sampler.set_epoch(epoch)\n"
    )
    assert_fix(REP205_HELPER_FIRES[0], after, "REP205", unsafe=True)


def test_rep205_reports_at_the_sampler_call():
    code = REP205_FIRES[0]
    (finding,) = lint(code, "REP205")
    assert (finding.start.line, finding.start.column) == (4, 14)


@pytest.mark.parametrize(
    "before, after",
    [
        (
            "from torch.utils.data import DataLoader, DistributedSampler\ndef main():\n    sampler = DistributedSampler(ds)\n"
            "    loader = DataLoader(ds, sampler=sampler)\n    for epoch in range(3):\n        # one epoch\n        train(loader)\n",
            "from torch.utils.data import DataLoader, DistributedSampler\ndef main():\n    sampler = DistributedSampler(ds)\n"
            "    loader = DataLoader(ds, sampler=sampler)\n    for epoch in range(3):\n        # one epoch\n"
            "        sampler.set_epoch(epoch)\n        train(loader)\n",
        ),
        (
            REP205_FIRES[0],
            REP205_FIRES[0].replace(
                "    for epoch in range(args.epochs):\n",
                "    for epoch in range(args.epochs):\n        if sampler is not None:\n            sampler.set_epoch(epoch)\n",
            ),
        ),
        (
            "from torch.utils.data import DataLoader, DistributedSampler\ndef main():\n"
            "    loader = DataLoader(ds, sampler=DistributedSampler(ds))\n    for ep in range(3):\n        train(loader)\n",
            "from torch.utils.data import DataLoader, DistributedSampler\ndef main():\n"
            "    loader = DataLoader(ds, sampler=DistributedSampler(ds))\n    for ep in range(3):\n"
            "        loader.sampler.set_epoch(ep)\n        train(loader)\n",
        ),
        (REP205_FIRES[2], REP205_FIRES[2].replace("        for epoch in range(3):\n", "        for epoch in range(3):\n            self.sampler.set_epoch(epoch)\n")),
    ],
)
def test_rep205_fix(before, after):
    assert_fix(before, after, "REP205", unsafe=True)


def test_rep205_no_fix_without_a_loop_variable():
    (finding,) = lint(REP205_FIRES[1], "REP205")
    assert finding.fix is None


# --- REP206 dataloader-missing-worker-init (opt-in) -------------------------------------------------

REP206_FIRES = [
    "from torch.utils.data import DataLoader\nloader = DataLoader(ds, num_workers=4)\n",
    "import torch\nloader = torch.utils.data.DataLoader(ds, 32, True, None, None, 8)\n",
    "from torch.utils.data import DataLoader as DL\nloader = DL(ds, num_workers=args.workers)\n",
]

REP206_SILENT = [
    "from torch.utils.data import DataLoader\nloader = DataLoader(ds)\n",
    "from torch.utils.data import DataLoader\nloader = DataLoader(ds, num_workers=0)\n",
    "from torch.utils.data import DataLoader\nloader = DataLoader(ds, num_workers=4, worker_init_fn=seed_worker)\n",
    "from torch.utils.data import DataLoader\nloader = DataLoader(ds, num_workers=4, **kwargs)\n",
    "from mylib import DataLoader\nloader = DataLoader(ds, num_workers=4)\n",
]


@pytest.mark.parametrize("code", REP206_FIRES)
def test_rep206_fires(code):
    assert codes(code, "REP206") == ["REP206"]


@pytest.mark.parametrize("code", REP206_SILENT)
def test_rep206_silent(code):
    assert codes(code, "REP206") == []


def test_rep206_is_opt_in():
    assert "REP206" not in [finding.code for finding in lint(REP206_FIRES[0])]


def test_rep206_fix_is_the_pytorch_recipe():
    before = "import numpy as np\nimport torch\nfrom torch.utils.data import DataLoader\n\nloader = DataLoader(ds, num_workers=4)\n"
    after = (
        "import random\n\nimport numpy as np\nimport torch\nfrom torch.utils.data import DataLoader\n\n\n"
        "def seed_worker(worker_id):\n"
        "    # Added by repro-lint (REP206): the PyTorch reproducibility recipe, seeding each worker's\n"
        "    # numpy and random from the seed PyTorch gave it.\n"
        "    worker_seed = torch.initial_seed() % 2**32\n    np.random.seed(worker_seed)\n    random.seed(worker_seed)\n"
        "\nloader = DataLoader(ds, num_workers=4, worker_init_fn=seed_worker)\n"
    )
    assert_fix(before, after, "REP206", unsafe=True)


def test_rep206_fix_does_not_import_numpy_into_a_module_without_it():
    code = "from torch.utils.data import DataLoader\nloader = DataLoader(ds, num_workers=4)\n"
    fixed = fix_source(code, "train.py", Settings(select=("REP206",)), unsafe=True)
    assert "numpy" not in fixed and "random.seed(worker_seed)" in fixed and "import torch\n" in fixed


def test_rep206_reuses_an_existing_seed_worker():
    code = textwrap.dedent("""\
        from torch.utils.data import DataLoader

        def seed_worker(worker_id):
            pass

        loader = DataLoader(ds, num_workers=4)
    """)
    fixed = fix_source(code, "train.py", Settings(select=("REP206",)), unsafe=True)
    assert fixed == code.replace("num_workers=4)", "num_workers=4, worker_init_fn=seed_worker)")


# REP205 through what a helper of the module returns: the loader built and returned by one function
# (alone or in a tuple) and iterated in its caller's epoch loop; a sampler returned by a helper whose
# `shuffle` is its caller's choice, handed on through `loader = sample_data(loader)` into a generator
# that iterates it forever.
PREPARE = (
    "from torch.utils.data import DataLoader\nfrom torch.utils.data.distributed import DistributedSampler\n"
    "def prepare(hp):\n    if hp.distributed:\n        train_sampler = DistributedSampler(trainset)\n        shuffle = False\n"
    "    else:\n        train_sampler = None\n        shuffle = True\n"
    "    train_loader = DataLoader(trainset, shuffle=shuffle, sampler=train_sampler)\n    return train_loader, valset\n"
    "def train(hp):\n    train_loader, valset = prepare(hp)\n    for epoch in range(hp.epochs):\n"
    "        for batch in train_loader:\n            step(batch)\n"
)
SAMPLER_HELPER = (
    "from torch.utils import data\ndef data_sampler(dataset, shuffle, distributed):\n    if distributed:\n"
    "        return data.distributed.DistributedSampler(dataset, shuffle=shuffle)\n    return data.RandomSampler(dataset)\n"
    "def sample_data(loader):\n    while True:\n        for batch in loader:\n            yield batch\n"
    "def train(loader):\n    loader = sample_data(loader)\n    for i in range(100):\n        step(next(loader))\n"
    "def main(args):\n    loader = data.DataLoader(ds, sampler=data_sampler(ds, shuffle=True, distributed=args.distributed))\n"
    "    train(loader)\n"
)
REP205_RETURNED_FIRES = [
    PREPARE,
    PREPARE.replace("    return train_loader, valset\n", "    return train_loader\n").replace("train_loader, valset = prepare(hp)", "train_loader = prepare(hp)"),
    SAMPLER_HELPER,
    SAMPLER_HELPER.replace("def data_sampler(dataset, shuffle, distributed)", "def data_sampler(dataset, distributed, shuffle=True)").replace(
        "shuffle=True, distributed=args.distributed", "distributed=args.distributed"
    ),
]
REP205_RETURNED_SILENT = [
    # the caller sets the epoch on the loader it gets back
    PREPARE.replace("        for batch in train_loader:\n", "        train_loader.sampler.set_epoch(epoch)\n        for batch in train_loader:\n"),
    # one pass over the returned loader
    PREPARE.replace("    for epoch in range(hp.epochs):\n        for batch in train_loader:\n            step(batch)\n", "    for batch in train_loader:\n        step(batch)\n"),
    # the caller rebinds the name: the loop iterates another object
    PREPARE.replace("    for epoch in range(hp.epochs):\n", "    train_loader = accelerator.prepare(train_loader)\n    for epoch in range(hp.epochs):\n"),
    # the helper's caller chooses no shuffling, or a value that cannot be read, or turns the branch away
    SAMPLER_HELPER.replace("shuffle=True, distributed", "shuffle=False, distributed"),
    SAMPLER_HELPER.replace("shuffle=True, distributed", "shuffle=args.shuffle, distributed"),
    SAMPLER_HELPER.replace("distributed=args.distributed", "distributed=False"),
]


@pytest.mark.parametrize("code", REP205_RETURNED_FIRES)
def test_rep205_follows_what_a_helper_returns(code):
    findings = lint(code, "REP205")
    assert [finding.code for finding in findings] == ["REP205"]
    assert findings[0].fix is None  # the sampler's name is the helper's: no fix in the caller's loop


@pytest.mark.parametrize("code", REP205_RETURNED_SILENT)
def test_rep205_silent_where_what_a_helper_returns_gets_its_epoch_or_does_not_shuffle(code):
    assert codes(code, "REP205") == []


# set_epoch on another loader of the module (`train_loader.sampler`) is not on this one's sampler.
TWO_LOADERS = (
    "import torch\nfrom torch.utils.data import DataLoader\n"
    "def evaluate(model, valid_loader):\n    for data in valid_loader:\n        model(data)\n"
    "def train_validate(model, train_loader, valid_loader, epoch):\n    train_loader.sampler.set_epoch(epoch)\n"
    "    for data in train_loader:\n        model(data)\n    evaluate(model, valid_loader)\n"
    "def main(args):\n    train_loader = DataLoader(ds, sampler=torch.utils.data.distributed.DistributedSampler(ds))\n"
    "    valid_loader = DataLoader(vs, sampler=torch.utils.data.distributed.DistributedSampler(vs))\n"
    "    for epoch in range(3):\n        train_validate(model, train_loader, valid_loader, epoch)\n"
)


def test_rep205_set_epoch_on_another_loader_does_not_count():
    assert [finding.start.line for finding in lint(TWO_LOADERS, "REP205")] == [13]


def test_rep205_set_epoch_on_each_loader_silences_both():
    code = TWO_LOADERS.replace("    evaluate(model, valid_loader)\n", "    valid_loader.sampler.set_epoch(epoch)\n    evaluate(model, valid_loader)\n")
    assert codes(code, "REP205") == []
