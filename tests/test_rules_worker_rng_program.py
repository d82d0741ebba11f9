"""REP201 across modules: datasets defined, re-exported or built by factories in other modules,
Lightning's worker seeding anywhere on the program's path, and generators held by transform objects."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from repro_lint.api import lint_paths
from repro_lint.core.settings import Settings

NOISY = """\
import numpy as np
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

# The dataset draws only from numpy's global RNG, which every worker reseeds (torch >= 1.9).
GLOBAL_NOISY = NOISY.replace("        self.rng = np.random.default_rng(0)\n", "").replace("self.rng.normal()", "np.random.normal()")


def main_with(imports: str, loader: str) -> str:
    return f"from torch.utils.data import DataLoader\n{imports}\n\n\ndef main(args):\n    loader = {loader}\n\n\nif __name__ == '__main__':\n    main(None)\n"


def rep201(root: Path, **settings: object) -> list[tuple[str, int]]:
    chosen = Settings(select=("REP201",), **settings)  # type: ignore[arg-type]
    return [(Path(finding.path).relative_to(root).as_posix(), finding.start.line) for finding in lint_paths([root], chosen).findings]


# --- the dataset class in another module ----------------------------------------------------------


@pytest.mark.parametrize(
    "files",
    [
        # absolute import
        {"data/datasets.py": NOISY, "train.py": main_with("from data.datasets import Noisy", "DataLoader(Noisy(8), num_workers=2)")},
        # re-export through the package __init__, alias, positional num_workers
        {
            "data/__init__.py": "from .datasets import Noisy as NoisySet\n",
            "data/datasets.py": NOISY,
            "train.py": main_with("from data import NoisySet", "DataLoader(NoisySet(8), 4, True, None, None, 4)"),
        },
        # relative import inside a package, the dataset through a variable and a Subset
        {
            "pkg/__init__.py": "",
            "pkg/datasets.py": NOISY,
            "pkg/train.py": main_with("from torch.utils.data import Subset\nfrom .datasets import Noisy", "DataLoader(Subset(ds, [0]), num_workers=2)").replace(
                "    loader =", "    ds = Noisy(8)\n    loader ="
            ),
        },
        # a module import and an attribute
        {"data/datasets.py": NOISY, "train.py": main_with("import data.datasets as D", "DataLoader(D.Noisy(8), num_workers=args.workers)")},
        # a factory in another module, which builds the class of a third
        {
            "data/datasets.py": NOISY,
            "data/build.py": "from data.datasets import Noisy\n\n\ndef build_dataset(args):\n    if args.small:\n        return Noisy(2)\n    return Noisy(args.n)\n",
            "train.py": main_with("from data.build import build_dataset", "DataLoader(build_dataset(args), num_workers=2)"),
        },
        # the generator is created by a base class in another module and drawn in the subclass
        {
            "data/base.py": (
                "import random\nfrom torch.utils.data import Dataset\n\n\n"
                "class Base(Dataset):\n    def __init__(self):\n        self.random = random.Random(1)\n"
            ),
            "data/child.py": "from data.base import Base\n\n\nclass Child(Base):\n    def __getitem__(self, i):\n        return self.random.random()\n",
            "train.py": main_with("from data.child import Child", "DataLoader(Child(), num_workers=2)"),
        },
    ],
    ids=["absolute", "init-reexport-alias-positional", "relative-subset", "module-attribute", "factory", "base-class"],
)
def test_rep201_fires_for_a_dataset_of_another_module(project, files):
    root = project(files)
    entry = next(path for path in files if path.endswith("train.py"))
    assert [path for path, _ in rep201(root)] == [entry]


def test_rep201_cross_module_message_names_the_class_its_module_and_generator(project):
    root = project({"data/datasets.py": NOISY, "train.py": main_with("from data.datasets import Noisy", "DataLoader(Noisy(8), num_workers=2)")})
    (finding,) = lint_paths([root], Settings(select=("REP201",))).findings
    assert (finding.start.line, finding.start.column) == (6, 13)
    assert "`Noisy.rng` (numpy Generator in data/datasets.py)" in finding.message


@pytest.mark.parametrize(
    "files",
    [
        # a look-alike class of the same name that draws only from numpy's global RNG
        {"data/datasets.py": GLOBAL_NOISY, "train.py": main_with("from data.datasets import Noisy", "DataLoader(Noisy(8), num_workers=2)")},
        # the entry defines its own Noisy: the other module's hazardous one is not the one used
        {
            "data/datasets.py": NOISY,
            "train.py": main_with(
                "from torch.utils.data import Dataset\n\n\nclass Noisy(Dataset):\n    def __getitem__(self, i):\n        return i",
                "DataLoader(Noisy(), num_workers=2)",
            ),
        },
        # another library's class of that name cannot be judged
        {"data/datasets.py": NOISY, "train.py": main_with("from torchvision.datasets import Noisy", "DataLoader(Noisy(8), num_workers=2)")},
        # the dataset reseeds its generator per worker from get_worker_info
        {
            "data/datasets.py": NOISY.replace("import numpy as np\n", "import numpy as np\nfrom torch.utils.data import get_worker_info\n").replace(
                "        return self.rng.normal()",
                "        if get_worker_info() is not None:\n"
                "            self.rng = np.random.default_rng(get_worker_info().seed)\n"
                "        return self.rng.normal()",
            ),
            "train.py": main_with("from data.datasets import Noisy", "DataLoader(Noisy(8), num_workers=2)"),
        },
        # a factory that returns what it was given, or a class without generators
        {
            "data/datasets.py": NOISY + "\n\ndef build_dataset(dataset):\n    return dataset\n",
            "train.py": main_with("from data.datasets import build_dataset", "DataLoader(build_dataset(ds), num_workers=2)"),
        },
        # worker_init_fn given; no workers
        {
            "data/datasets.py": NOISY,
            "train.py": main_with(
                "from data.datasets import Noisy\nfrom data.workers import seed_worker", "DataLoader(Noisy(8), num_workers=2, worker_init_fn=seed_worker)"
            ),
        },
        {"data/datasets.py": NOISY, "train.py": main_with("from data.datasets import Noisy", "DataLoader(Noisy(8), num_workers=0)")},
    ],
    ids=["look-alike", "local-class-shadows", "other-library", "reseeds-per-worker", "factory-returns-argument", "worker-init-fn", "no-workers"],
)
def test_rep201_silent_for_datasets_of_other_modules(project, files):
    assert rep201(project(files)) == []


def test_rep201_old_torch_form_across_modules(project):
    files = {"data/datasets.py": GLOBAL_NOISY, "train.py": main_with("from data.datasets import Noisy", "DataLoader(Noisy(8), num_workers=2)")}
    assert rep201(project(files), target_torch_version="1.8") == [("train.py", 6)]
    assert rep201(project(files), target_torch_version="1.9") == []
    # declared in the requirements nearest the entry module
    assert rep201(project({**files, "requirements.txt": "torch>=1.7\n"})) == [("train.py", 6)]


def assert_project_fix(root: Path, path: str, expected: str) -> None:
    """The fix gives `expected` in `path`; fixing again changes nothing; re-linting finds no REP201."""
    settings = Settings(select=("REP201",))
    assert lint_paths([root], settings).findings
    lint_paths([root], settings, fix=True, unsafe_fixes=True)
    assert (root / path).read_text(encoding="utf-8") == textwrap.dedent(expected)
    lint_paths([root], settings, fix=True, unsafe_fixes=True)
    assert (root / path).read_text(encoding="utf-8") == textwrap.dedent(expected)
    assert lint_paths([root], settings).findings == []


def test_rep201_fix_goes_into_the_loader_module(project):
    root = project({
        "data/datasets.py": NOISY,
        "train.py": """\
            import torch
            from torch.utils.data import DataLoader
            from data.datasets import Noisy

            loader = DataLoader(
                Noisy(8),
                num_workers=2,  # two processes
            )
            """,
    })
    assert_project_fix(root, "train.py", """\
        import numpy
        import torch
        from torch.utils.data import DataLoader
        from data.datasets import Noisy


        def seed_worker(worker_id):
            # Added by repro-lint (REP201): each DataLoader worker starts with a copy of the dataset's random
            # generators in the same state; reseed them from the seed PyTorch gives each worker.
            info = torch.utils.data.get_worker_info()
            dataset = info.dataset
            while hasattr(dataset, "dataset"):  # Subset and random_split wrap the dataset
                dataset = dataset.dataset
            dataset.rng = numpy.random.default_rng(info.seed)

        loader = DataLoader(
            Noisy(8),
            num_workers=2,  # two processes
            worker_init_fn=seed_worker,
        )
        """)
    assert (root / "data/datasets.py").read_text(encoding="utf-8") == NOISY


def test_rep201_no_fix_for_a_global_generator_of_another_module(project):
    dataset = (
        "import random\nfrom torch.utils.data import Dataset\nRNG = random.Random(0)\n\n\n"
        "class D(Dataset):\n    def __getitem__(self, i):\n        return RNG.random()\n"
    )
    root = project({"data.py": dataset, "train.py": main_with("from data import D", "DataLoader(D(), num_workers=2)")})
    (finding,) = lint_paths([root], Settings(select=("REP201",))).findings
    assert "`RNG` (random.Random in data.py)" in finding.message and finding.fix is None


# --- Lightning's worker seeding anywhere on the program's path ---------------------------------------

SETUP = "{imports}\n\n\ndef setup(seed):\n    {call}\n"
ENTRY = """\
from torch.utils.data import DataLoader
from data.datasets import Noisy
from utils.setup import setup


def main():
    setup(0)
    loader = DataLoader(Noisy(8), num_workers=2)


if __name__ == "__main__":
    main()
"""


@pytest.mark.parametrize(
    "imports, call",
    [
        ("import lightning as L", "L.seed_everything(seed, workers=True)"),
        ("import pytorch_lightning as pl", "pl.seed_everything(seed, workers=True)"),
        ("from lightning.fabric.utilities.seed import seed_everything", "seed_everything(seed, True)"),
        ("from lightning.pytorch import seed_everything as seed_all", "seed_all(seed, workers=True)"),
    ],
)
def test_rep201_silent_when_lightning_seeds_workers_in_a_helper_module(project, imports, call):
    root = project({"data/datasets.py": NOISY, "utils/setup.py": SETUP.format(imports=imports, call=call), "train.py": ENTRY})
    assert rep201(root) == []


@pytest.mark.parametrize(
    "setup, entry",
    [
        # workers not asked for, or explicitly off
        (SETUP.format(imports="import lightning as L", call="L.seed_everything(seed)"), ENTRY),
        (SETUP.format(imports="import lightning as L", call="L.seed_everything(seed, workers=False)"), ENTRY),
        # the helper that would seed the workers never runs in this program
        (SETUP.format(imports="import lightning as L", call="L.seed_everything(seed, workers=True)"), ENTRY.replace("    setup(0)\n", "")),
        # a user's own seed_everything is not Lightning's
        ("def seed_everything(seed, workers=False):\n    pass\n\n\ndef setup(seed):\n    seed_everything(seed, workers=True)\n", ENTRY),
    ],
    ids=["no-workers-argument", "workers-false", "helper-not-called", "own-seed-everything"],
)
def test_rep201_fires_when_lightning_does_not_seed_workers_on_the_path(project, setup, entry):
    root = project({"data/datasets.py": NOISY, "utils/setup.py": setup, "train.py": entry})
    assert rep201(root) == [("train.py", entry.splitlines().index("    loader = DataLoader(Noisy(8), num_workers=2)") + 1)]


def test_rep201_lightning_seeding_in_the_entry_main_block_counts(project):
    entry = ENTRY.replace("from utils.setup import setup\n", "import lightning as L\n").replace("    setup(0)\n", "").replace(
        "    main()", "    L.seed_everything(0, workers=True)\n    main()"
    )
    assert rep201(project({"data/datasets.py": NOISY, "train.py": entry})) == []


# --- generators held by transform objects -------------------------------------------------------------

TRANSFORM_DATASET = """\
import numpy as np
from torch.utils.data import Dataset
{transform_import}


class Augmented(Dataset):
    def __init__(self):
        self.transform = {transform}

    def __getitem__(self, index):
        return self.transform(index)
"""
RANDOM_AUGMENT = """\
class RandomAugment:
    def __init__(self, p, rng=None):
        self.p = p
        self.rng = rng

    def __call__(self, x):
        return x + self.rng.random()
"""
OWN_GENERATOR = """\
import random


class Jitter:
    def __init__(self):
        self.random = random.Random(0)

    def __call__(self, x):
        return self._jitter(x)

    def _jitter(self, x):
        return x + self.random.random()
"""


def transform_project(project, transform: str, transform_import: str, transforms: str = RANDOM_AUGMENT):
    dataset = TRANSFORM_DATASET.format(transform=transform, transform_import=transform_import)
    entry = main_with("from data.datasets import Augmented", "DataLoader(Augmented(), num_workers=2)")
    return project({"data/transforms.py": transforms, "data/datasets.py": dataset, "train.py": entry})


@pytest.mark.parametrize(
    "transform, transform_import, transforms, generator",
    [
        ("RandomAugment(0.5, rng=np.random.default_rng(0))", "from data.transforms import RandomAugment", RANDOM_AUGMENT, "Augmented.transform.rng"),
        ("RandomAugment(0.5, np.random.default_rng(0))", "from data.transforms import RandomAugment", RANDOM_AUGMENT, "Augmented.transform.rng"),
        ("T.Jitter()", "import data.transforms as T", OWN_GENERATOR, "Augmented.transform.random"),
    ],
    ids=["keyword-generator", "positional-generator", "own-generator-through-a-helper-method"],
)
def test_rep201_follows_generators_into_transform_objects(project, transform, transform_import, transforms, generator):
    root = transform_project(project, transform, transform_import, transforms)
    (finding,) = lint_paths([root], Settings(select=("REP201",))).findings
    assert f"`{generator}`" in finding.message


@pytest.mark.parametrize(
    "transform, transform_import, transforms",
    [
        # another library's transform: what it does with the generator cannot be known
        ("RandomAugment(0.5, rng=np.random.default_rng(0))", "from albumentations import RandomAugment", RANDOM_AUGMENT),
        # no generator handed over: the transform holds None
        ("RandomAugment(0.5)", "from data.transforms import RandomAugment", RANDOM_AUGMENT),
        # the generator goes to a parameter the transform never draws from in __call__
        ("RandomAugment(0.5, rng=np.random.default_rng(0))", "from data.transforms import RandomAugment", RANDOM_AUGMENT.replace("self.rng.random()", "1")),
        # the transform reseeds itself in each worker
        (
            "T.Jitter()",
            "import data.transforms as T",
            OWN_GENERATOR.replace("        return self._jitter(x)", "        torch.utils.data.get_worker_info()\n        return self._jitter(x)"),
        ),
        # a look-alike transform whose generator is built per call
        (
            "T.Jitter()",
            "import data.transforms as T",
            OWN_GENERATOR.replace("        return x + self.random.random()", "        self.random = random.Random(x)\n        return x + self.random.random()"),
        ),
    ],
    ids=["other-library", "no-generator", "not-drawn", "reseeds-per-worker", "rebuilt-per-call"],
)
def test_rep201_silent_for_transforms_that_cannot_or_do_not_share_a_stream(project, transform, transform_import, transforms):
    assert rep201(transform_project(project, transform, transform_import, transforms)) == []


def test_rep201_transform_held_but_not_called_in_getitem(project):
    dataset = TRANSFORM_DATASET.replace("        return self.transform(index)", "        return index")
    root = project({
        "data/transforms.py": RANDOM_AUGMENT,
        "data/datasets.py": dataset.format(transform="RandomAugment(0.5, rng=np.random.default_rng(0))", transform_import="from data.transforms import RandomAugment"),
        "train.py": main_with("from data.datasets import Augmented", "DataLoader(Augmented(), num_workers=2)"),
    })
    assert rep201(root) == []


def test_rep201_fix_reseeds_the_transform_generator(project):
    root = transform_project(project, "RandomAugment(0.5, rng=np.random.default_rng(0))", "from data.transforms import RandomAugment")
    settings = Settings(select=("REP201",))
    lint_paths([root], settings, fix=True, unsafe_fixes=True)
    fixed = (root / "train.py").read_text(encoding="utf-8")
    assert "    dataset.transform.rng = numpy.random.default_rng(info.seed)\n" in fixed
    assert "DataLoader(Augmented(), num_workers=2, worker_init_fn=seed_worker)" in fixed
    lint_paths([root], settings, fix=True, unsafe_fixes=True)
    assert (root / "train.py").read_text(encoding="utf-8") == fixed
    assert lint_paths([root], settings).findings == []


def test_rep201_no_fix_when_the_loader_may_get_a_dataset_of_another_class(project):
    """A worker function reseeding `dataset.rng` would fail on the other class's objects."""
    factory = (
        "from data.datasets import Noisy\nfrom data.plain import Plain\n\n\n"
        "def build_dataset(args):\n    if args.noisy:\n        return Noisy(8)\n    return Plain()\n"
    )
    plain = "from torch.utils.data import Dataset\n\n\nclass Plain(Dataset):\n    def __getitem__(self, i):\n        return i\n"
    root = project({
        "data/datasets.py": NOISY,
        "data/plain.py": plain,
        "data/build.py": factory,
        "train.py": main_with("from data.build import build_dataset", "DataLoader(build_dataset(args), num_workers=2)"),
    })
    (finding,) = lint_paths([root], Settings(select=("REP201",))).findings
    assert "`Noisy.rng`" in finding.message and finding.fix is None


def test_rep201_noqa_on_the_loader_line_silences_the_cross_module_finding(project):
    files = {"data/datasets.py": NOISY, "train.py": main_with("from data.datasets import Noisy", "DataLoader(Noisy(8), num_workers=2)  # noqa: REP201")}
    assert rep201(project(files)) == []
