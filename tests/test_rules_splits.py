import pytest
from conftest import assert_fix, codes

# --- REP203 random-split-missing-generator -------------------------------------------------------

REP203_FIRES = [
    "import torch\ntrain, val = torch.utils.data.random_split(ds, [0.9, 0.1])\n",
    "from torch.utils.data import random_split\ntrain, val = random_split(ds, [90, 10])\n",
    "from torch.utils.data import random_split as rs\nparts = rs(ds, [0.5, 0.5])\n",
    "import torch.utils.data as tud\nparts = tud.random_split(dataset=ds, lengths=[1, 2])\n",
    "from torch.utils.data.dataset import random_split\ndef split(ds):\n    return random_split(ds, [8, 2])\n",
]

REP203_SILENT = [
    "import torch\ng = torch.Generator().manual_seed(0)\ntorch.utils.data.random_split(ds, [9, 1], generator=g)\n",
    "from torch.utils.data import random_split\nrandom_split(ds, [9, 1], g)\n",
    "from torch.utils.data import random_split\nrandom_split(ds, [9, 1], **split_kwargs)\n",
    # A user's own helper of the same name.
    "def random_split(ds, lengths):\n    return ds[: lengths[0]], ds[lengths[0] :]\nrandom_split(ds, [9, 1])\n",
    "from mylib.data import random_split\nrandom_split(ds, [9, 1])\n",
]


@pytest.mark.parametrize("code", REP203_FIRES)
def test_rep203_fires(code):
    assert codes(code, "REP203") == ["REP203"]


@pytest.mark.parametrize("code", REP203_SILENT)
def test_rep203_silent(code):
    assert codes(code, "REP203") == []


def test_rep203_fix_adds_import_when_torch_is_not_bound():
    assert_fix(
        '"""Data prep."""\nfrom torch.utils.data import random_split\n\ntrain, val = random_split(ds, [9, 1])\n',
        '"""Data prep."""\nimport torch\nfrom torch.utils.data import random_split\n\nSEED = 0\n\n'
        "train, val = random_split(ds, [9, 1], generator=torch.Generator().manual_seed(SEED))\n",
        "REP203",
    )


def test_rep203_fix_uses_existing_alias_and_seed():
    assert_fix(
        "import torch as th\nSEED = 7\nparts = th.utils.data.random_split(ds, [9, 1])  # split\n",
        "import torch as th\nSEED = 7\nparts = th.utils.data.random_split(\n"
        "    ds, [9, 1], generator=th.Generator().manual_seed(SEED)\n)  # split\n",
        "REP203",
    )


def test_rep203_fix_multiline_call_keeps_layout():
    assert_fix(
        "import torch\nparts = torch.utils.data.random_split(\n    ds,\n    [9, 1],  # ratio\n)\n",
        "import torch\n\nSEED = 0\nparts = torch.utils.data.random_split(\n    ds,\n    [9, 1],  # ratio\n"
        "    generator=torch.Generator().manual_seed(SEED),\n)\n",
        "REP203",
    )


def test_rep203_fix_uses_seed_parameter():
    assert_fix(
        "import torch\ndef split(ds, seed):\n    return torch.utils.data.random_split(ds, [9, 1])\n",
        "import torch\ndef split(ds, seed):\n    return torch.utils.data.random_split(\n"
        "        ds, [9, 1], generator=torch.Generator().manual_seed(seed)\n    )\n",
        "REP203",
    )


# --- REP204 sklearn-missing-random-state ---------------------------------------------------------

REP204_FIRES = [
    "from sklearn.model_selection import train_test_split\nx1, x2 = train_test_split(x, test_size=0.2)\n",
    "from sklearn.model_selection import train_test_split as tts\nx1, x2 = tts(x)\n",
    "import sklearn.model_selection as ms\nx1, x2 = ms.train_test_split(x, random_state=None)\n",
    "from sklearn.model_selection import KFold\nfolds = KFold(5, shuffle=True)\n",
    "from sklearn.model_selection import StratifiedKFold\nfolds = StratifiedKFold(n_splits=5, shuffle=True)\n",
    "from sklearn.model_selection import ShuffleSplit\nss = ShuffleSplit(n_splits=3, test_size=0.1)\n",
    "from sklearn.model_selection import RepeatedKFold\nrk = RepeatedKFold(n_splits=3)\n",
    "from sklearn.utils import shuffle\nx, y = shuffle(x, y)\n",
    "import sklearn\nx1, x2 = sklearn.model_selection.train_test_split(x, shuffle=True)\n",
]

REP204_SILENT = [
    "from sklearn.model_selection import train_test_split\ntrain_test_split(x, random_state=42)\n",
    "from sklearn.model_selection import train_test_split\ntrain_test_split(x, random_state=seed)\n",
    "from sklearn.model_selection import train_test_split\ntrain_test_split(x, shuffle=False)\n",
    "from sklearn.model_selection import KFold\nKFold(5)\n",
    "from sklearn.model_selection import KFold\nKFold(n_splits=5, shuffle=False)\n",
    "from sklearn.model_selection import KFold\nKFold(5, shuffle=args.shuffle)\n",
    "from sklearn.model_selection import ShuffleSplit\nShuffleSplit(3, 0.1, None, 0)\n",
    "from sklearn.model_selection import train_test_split\ntrain_test_split(x, **split_args)\n",
    # A user's own function, and a global np.random.seed does not matter for silence either way.
    "def train_test_split(x):\n    return x[:8], x[8:]\ntrain_test_split(x)\n",
    "from utils import train_test_split\ntrain_test_split(x)\n",
]


@pytest.mark.parametrize("code", REP204_FIRES)
def test_rep204_fires(code):
    assert codes(code, "REP204") == ["REP204"]


@pytest.mark.parametrize("code", REP204_SILENT)
def test_rep204_silent(code):
    assert codes(code, "REP204") == []


@pytest.mark.parametrize(
    "before, after",
    [
        (
            "from sklearn.model_selection import train_test_split as tts\na, b = tts(x, test_size=0.2)\n",
            "from sklearn.model_selection import train_test_split as tts\n\nSEED = 0\na, b = tts(x, test_size=0.2, random_state=SEED)\n",
        ),
        (
            "from sklearn.model_selection import train_test_split\na, b = train_test_split(x, random_state=None)\n",
            "from sklearn.model_selection import train_test_split\n\nSEED = 0\na, b = train_test_split(x, random_state=SEED)\n",
        ),
        (
            "import argparse\nfrom sklearn.model_selection import KFold\n"
            "parser = argparse.ArgumentParser()\nparser.add_argument('--seed', type=int, default=1)\n"
            "args = parser.parse_args()\nfolds = KFold(5, shuffle=True)\nprint(args.seed)\n",
            "import argparse\nfrom sklearn.model_selection import KFold\n"
            "parser = argparse.ArgumentParser()\nparser.add_argument('--seed', type=int, default=1)\n"
            "args = parser.parse_args()\nfolds = KFold(5, shuffle=True, random_state=args.seed)\nprint(args.seed)\n",
        ),
    ],
)
def test_rep204_fix(before, after):
    assert_fix(before, after, "REP204")


def test_rep204_fix_does_not_reuse_a_seed_option_that_defaults_to_none():
    from repro_lint.api import fix_source
    from repro_lint.core.settings import Settings

    code = (
        "from sklearn.model_selection import train_test_split\n"
        "parser.add_argument('--seed', type=int)\nargs = parser.parse_args()\n"
        "a, b = train_test_split(x)\nprint(args.seed)\n"
    )
    assert "random_state=SEED)" in fix_source(code, settings=Settings(select=("REP204",)))


def test_seed_reuse_skips_an_imported_function_named_seed():
    from repro_lint.api import fix_source
    from repro_lint.core.settings import Settings

    code = "from random import seed\n" + "from torch.utils.data import random_split\nimport torch\nparts = random_split(ds, [1, 1])\n"
    assert "manual_seed(SEED)" in fix_source(code, settings=Settings(select=("REP203",)))


def test_seed_reuse_skips_a_parameter_defaulting_to_none():
    from repro_lint.api import fix_source
    from repro_lint.core.settings import Settings

    code = "import torch\ndef split(ds, seed=None):\n    return torch.utils.data.random_split(ds, [1, 1])\n"
    assert "manual_seed(SEED)" in fix_source(code, settings=Settings(select=("REP203",)))


@pytest.mark.parametrize(
    "before, after",
    [
        (  # hanging layout inside a function: the new keyword keeps the block's indentation
            "from sklearn.model_selection import train_test_split\n\n\ndef split(x, y):\n"
            "    parts = train_test_split(\n        x, y, test_size=0.25\n    )\n    return parts\n",
            "from sklearn.model_selection import train_test_split\n\nSEED = 0\n\n\ndef split(x, y):\n"
            "    parts = train_test_split(\n        x, y, test_size=0.25, random_state=SEED\n    )\n    return parts\n",
        ),
        (  # one argument per line with a trailing comma, nested two blocks deep
            "from sklearn.model_selection import train_test_split\n\n\nclass Data:\n    def split(self, x):\n"
            "        return train_test_split(\n            x,\n            test_size=0.25,  # quarter\n        )\n",
            "from sklearn.model_selection import train_test_split\n\nSEED = 0\n\n\nclass Data:\n    def split(self, x):\n"
            "        return train_test_split(\n            x,\n            test_size=0.25,  # quarter\n"
            "            random_state=SEED,\n        )\n",
        ),
    ],
)
def test_fix_keeps_multiline_layout_inside_blocks(before, after):
    assert_fix(before, after, "REP204")


def test_rep203_generator_none_is_the_default():
    assert codes("from torch.utils.data import random_split\nrandom_split(ds, [1, 1], generator=None)\n", "REP203") == ["REP203"]
    assert_fix(
        "import torch\ntorch.utils.data.random_split(ds, [1, 1], generator=None)\n",
        "import torch\n\nSEED = 0\ntorch.utils.data.random_split(ds, [1, 1], generator=torch.Generator().manual_seed(SEED))\n",
        "REP203",
    )
