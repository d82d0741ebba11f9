"""REP209 sampler-global-rng: a project's own sampler drawing its order from a global RNG."""

import pytest
from conftest import codes, lint

_HEAD = "import random\nimport numpy as np\nimport torch\nfrom torch.utils.data import DataLoader, Sampler\n\n"


def _sampler(body: str, bases: str = "(Sampler)", init: str = "") -> str:
    return _HEAD + f"class Shuffled{bases}:\n    def __init__(self, n, seed=0):\n        self.n = n\n        self.seed = seed\n        self.epoch = 0\n{init}\n    def __iter__(self):\n{body}\n"


REP209_FIRES = [
    # every global draw the catalog names, in a Sampler subclass
    _sampler("        return iter(torch.randperm(self.n).tolist())"),
    _sampler("        return iter(torch.randint(0, self.n, (self.n,)).tolist())"),
    _sampler("        return iter(torch.rand(self.n).argsort().tolist())"),
    _sampler("        return iter(torch.multinomial(self.weights, self.n, replacement=True).tolist())"),
    _sampler("        idx = list(range(self.n))\n        random.shuffle(idx)\n        return iter(idx)"),
    _sampler("        return iter(random.sample(range(self.n), self.n))"),
    _sampler("        for _ in range(self.n):\n            yield random.choice(self.pool)"),
    _sampler("        return iter(np.random.permutation(self.n))"),
    _sampler("        idx = np.arange(self.n)\n        np.random.shuffle(idx)\n        return iter(idx)"),
    _sampler("        return iter(np.random.choice(self.n, self.n))"),
    # `generator=None` is the global RNG
    _sampler("        return iter(torch.randperm(self.n, generator=None).tolist())"),
    # torch's own sampler classes as bases, spelled through the module
    _sampler("        return iter(torch.randperm(self.n).tolist())", "(torch.utils.data.Sampler)"),
    _sampler("        return iter(torch.randperm(self.n).tolist())", "(torch.utils.data.distributed.DistributedSampler)"),
    # a base sampler of the project, in this module or named like one in another
    _HEAD + "class Base(Sampler):\n    pass\n\nclass Mine(Base):\n    def __iter__(self):\n        return iter(np.random.permutation(10))\n",
    _HEAD + "from .samplers import GroupedBatchSampler\n\nclass Mine(GroupedBatchSampler):\n"
    "    def __iter__(self):\n        random.shuffle(self.groups)\n        yield from self.groups\n",
    # not a Sampler subclass, but passed to a DataLoader as sampler= or batch_sampler=
    _HEAD + "class Buckets:\n    def __iter__(self):\n        return iter(np.random.permutation(10))\n\n"
    "loader = DataLoader(ds, batch_sampler=Buckets())\n",
    _HEAD + "class Order:\n    def __iter__(self):\n        return iter(torch.randperm(10).tolist())\n\n"
    "order = Order()\nloader = DataLoader(ds, sampler=order)\n",
    # in a method `__iter__` calls
    _sampler("        return iter(self._order())", init="\n    def _order(self):\n        idx = list(range(self.n))\n        random.shuffle(idx)\n        return idx\n"),
    # the DataLoader gets a generator, the sampler still ignores it
    _sampler("        return iter(torch.randperm(self.n).tolist())")
    + "loader = DataLoader(ds, sampler=Shuffled(10), generator=torch.Generator().manual_seed(0))\n",
]

REP209_SILENT = [
    # a generator or RNG object the sampler owns
    _sampler("        return iter(torch.randperm(self.n, generator=self.generator).tolist())"),
    _sampler("        return iter(self.rng.permutation(self.n))", init="        self.rng = np.random.default_rng(seed)\n"),
    _sampler("        self.rng.shuffle(self.idx)\n        return iter(self.idx)", init="        self.rng = random.Random(seed)\n"),
    # built from a seed and the epoch, as DistributedSampler does
    _sampler("        g = torch.Generator()\n        g.manual_seed(self.seed + self.epoch)\n        return iter(torch.randperm(self.n, generator=g).tolist())"),
    _sampler("        rng = np.random.RandomState(self.seed + self.epoch)\n        return iter(rng.permutation(self.n))"),
    # the global RNG reseeded by the sampler itself before the draw
    _sampler("        np.random.seed(self.seed + self.epoch)\n        return iter(np.random.permutation(self.n))"),
    # drawn in __init__, or in a method __iter__ does not call
    _HEAD + "class Fixed(Sampler):\n    def __init__(self, n):\n        self.order = np.random.permutation(n)\n"
    "    def __iter__(self):\n        return iter(self.order)\n",
    _HEAD + "class S(Sampler):\n    def reshuffle(self):\n        random.shuffle(self.idx)\n"
    "    def __iter__(self):\n        return iter(self.idx)\n",
    # not a sampler
    _HEAD + "class Augment:\n    def __iter__(self):\n        return iter(np.random.permutation(10))\n",
    _HEAD + "class Stream(torch.utils.data.IterableDataset):\n    def __iter__(self):\n        random.shuffle(self.files)\n        yield from self.files\n",
    # dead code: after return, under `if False:`
    _sampler("        return iter(range(self.n))\n        random.shuffle(self.idx)"),
    _sampler("        if False:\n            random.shuffle(self.idx)\n        return iter(range(self.n))"),
    # a user's own function that shares a name
    "from torch.utils.data import Sampler\n\ndef randperm(n):\n    return list(range(n))\n\n"
    "class S(Sampler):\n    def __iter__(self):\n        return iter(randperm(10))\n",
]


@pytest.mark.parametrize("code", REP209_FIRES)
def test_rep209_fires(code):
    assert codes(code, "REP209") == ["REP209"]


@pytest.mark.parametrize("code", REP209_SILENT)
def test_rep209_silent(code):
    assert codes(code, "REP209") == []


def test_rep209_reported_at_the_draw_without_fix():
    (finding,) = lint(_sampler("        idx = list(range(self.n))\n        random.shuffle(idx)\n        return iter(idx)"), "REP209")
    assert finding.start.line == 14 and finding.fix is None
    assert "`random.shuffle`" in finding.message and "Shuffled" in finding.message and "`generator`" in finding.message


def test_rep209_across_modules(project):
    """A sampler defined in one module, given to a DataLoader in another: the draw is reported where it is."""
    from repro_lint.api import lint_paths
    from repro_lint.core.settings import Settings

    root = project({
        "data/samplers.py": _HEAD + "class SubsetRandomSampler(torch.utils.data.Sampler):\n"
        "    def __init__(self, indices):\n        self.indices = indices\n\n"
        "    def __iter__(self):\n        return (self.indices[i] for i in torch.randperm(len(self.indices)))\n",
        "train.py": "from torch.utils.data import DataLoader\nfrom data.samplers import SubsetRandomSampler\n\n"
        "loader = DataLoader(ds, sampler=SubsetRandomSampler(range(10)))\n",
    })
    result = lint_paths([root], Settings(select=("REP209",)))
    assert [(f.path.rpartition("/")[2], f.start.line, f.code) for f in result.findings] == [("samplers.py", 11, "REP209")]


_HELPER = (
    _HEAD + "def grouped_indices(lengths, batch_size, generator=None):\n"
    "    indices = torch.randperm(len(lengths), generator=generator)\n"
    "    return indices.tolist()\n\n"
    "def sortish(data, bs):\n"
    "    idxs = np.random.permutation(len(data))\n"
    "    return idxs\n\n"
)


def test_rep209_follows_module_functions_the_sampler_calls():
    code = _HELPER + (
        "class Sortish(Sampler):\n    def __iter__(self):\n        return iter(sortish(self.data, self.bs))\n\n"
        "class Grouped(Sampler):\n    def __iter__(self):\n        return iter(grouped_indices(self.lengths, self.bs))\n\n"
        "class Seeded(Sampler):\n    def __iter__(self):\n        g = torch.Generator()\n        g.manual_seed(self.seed + self.epoch)\n"
        "        return iter(grouped_indices(self.lengths, self.bs, generator=g))\n"
    )
    found = [(finding.start.line, finding.message.split("`")[1]) for finding in lint(code, "REP209")]
    # the plain draw at the draw; the helper that applies its caller's `generator` at the call that passes none
    assert found == [(11, "np.random.permutation"), (20, "torch.randperm")]


def test_rep209_helper_with_owned_generator_is_silent():
    code = _HELPER + "class Grouped(Sampler):\n    def __iter__(self):\n        return iter(grouped_indices(self.lengths, self.bs, generator=self.generator))\n"
    assert codes(code, "REP209") == []


def test_rep209_helper_given_none_explicitly_is_reported_at_that_call():
    """LLaVA's pattern: the sampler passes its generator on, but a helper passes `generator=None`."""
    code = _HELPER + (
        "def by_modality(lengths, bs, generator=None):\n"
        "    first = grouped_indices(lengths, bs, generator=None)\n"
        "    second = grouped_indices(lengths, bs, generator=generator)\n"
        "    return first + second\n\n"
        "class Grouped(Sampler):\n    def __iter__(self):\n        return iter(by_modality(self.lengths, self.bs, generator=self.generator))\n"
    )
    assert [finding.start.line for finding in lint(code, "REP209")] == [15]
