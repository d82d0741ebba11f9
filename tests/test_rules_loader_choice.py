"""REP202 and REP206 where a library function applies its caller's choice (catalog, "Libraries
applying their caller's choice"): silent at the DataLoader of a module that is no program's entry,
reported at the project call that passes the offending value or leaves an offending default. And
REP202 following a sampler that a helper of the module returns."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import assert_fix, codes

from repro_lint.api import lint_paths
from repro_lint.core.settings import Settings

LIBRARY = """\
from torch.utils.data import DataLoader


def get_loader(dataset, batch_size, shuffle, num_workers=0):
    return DataLoader(dataset, batch_size=batch_size, shuffle=shuffle, num_workers=num_workers)


def load_data(dataset, *, deterministic=False):
    if deterministic:
        loader = DataLoader(dataset, shuffle=False, num_workers=1)
    else:
        loader = DataLoader(dataset, shuffle=True, num_workers=1)
    yield from loader
"""

MAIN = """\
import argparse
from data import get_loader, load_data


def main(args):
    loader = {call}
    for batch in loader:
        print(batch)


if __name__ == "__main__":
    main(argparse.ArgumentParser().parse_args())
"""


def found(root: Path, select: str) -> list[tuple[str, int, str]]:
    return sorted(
        (Path(finding.path).relative_to(root).as_posix(), finding.start.line, finding.message)
        for finding in lint_paths([root], Settings(select=(select,))).findings
    )


@pytest.mark.parametrize(
    ("call", "select", "how"),
    [
        ("get_loader(data, 8, shuffle=True)", "REP202", "passes `shuffle=True`"),
        ("get_loader(data, 8, True)", "REP202", "passes `shuffle=True`"),
        ("get_loader(data, 8, shuffle=args.shuffle)", "REP202", "passes `shuffle` a value that may be on"),
        ("get_loader(data, 8, False, num_workers=args.workers)", "REP206", "passes `num_workers` a value that may be on"),
        ("load_data(data)", "REP202", "leaves `deterministic` at its default `False`"),
        ("load_data(data, deterministic=False)", "REP202", "passes `deterministic=False`"),
    ],
    ids=["keyword", "positional", "unknown-value", "workers", "default-under-test", "literal-under-test"],
)
def test_reported_at_the_call_that_chooses(project, call, select, how):
    root = project({"data.py": LIBRARY, "main.py": MAIN.format(call=call)})
    results = found(root, select)
    # load_data's loaders start workers in both branches: REP206 stays there (another test).
    ((path, line, message),) = [result for result in results if result[:2] not in (("data.py", 10), ("data.py", 12))]
    assert (path, line) == ("main.py", 6)
    assert how in message and "data.py:" in message


@pytest.mark.parametrize(
    ("call", "select"),
    [
        ("get_loader(data, 8, shuffle=False)", "REP202"),
        ("get_loader(data, 8, False, num_workers=0)", "REP206"),
        ("get_loader(data, 8, False)", "REP206"),  # the default 0 starts no worker
        ("load_data(data, deterministic=True)", "REP202"),
        ("load_data(data, deterministic=args.deterministic)", "REP202"),  # either branch may run
        ("get_loader(data, 8, **options)", "REP202"),
    ],
    ids=["literal-off", "workers-zero", "workers-default", "test-turned-away", "test-unknown", "unpacked"],
)
def test_silent_where_the_call_chooses_no_offending_value(project, call, select):
    root = project({"data.py": LIBRARY, "main.py": MAIN.format(call=call)})
    assert [result for result in found(root, select) if result[:2] not in (("data.py", 10), ("data.py", 12))] == []


def test_a_parameter_handed_on_is_its_own_callers_choice(project):
    wrapper = "from data import get_loader\n\n\ndef build(data, shuffle):\n    return get_loader(data, 8, shuffle=shuffle)\n"
    root = project({"data.py": LIBRARY, "wrap.py": wrapper, "main.py": MAIN.format(call="build(data, True)").replace("data import get_loader, load_data", "wrap import build")})
    assert found(root, "REP202") == []


def test_both_branches_offending_leave_the_parameter_out_of_it(project):
    """REP206 under `if deterministic:` where both loaders start workers: the test does not decide."""
    root = project({"data.py": LIBRARY, "main.py": MAIN.format(call="load_data(data, deterministic=True)")})
    assert [(path, line) for path, line, _ in found(root, "REP206")] == [("data.py", 10), ("data.py", 12)]


def test_an_entry_module_keeps_its_own_loader_finding(project):
    main = """\
    from torch.utils.data import DataLoader


    def loader_for(data, shuffle=True):
        return DataLoader(data, shuffle=shuffle)


    if __name__ == "__main__":
        for batch in loader_for(list(range(8))):
            print(batch)
    """
    root = project({"main.py": main})
    ((path, line, message),) = found(root, "REP202")
    assert (path, line) == ("main.py", 5) and "its caller's choice" in message


def test_a_library_nobody_calls_is_silent(project):
    root = project({"data.py": LIBRARY})
    assert found(root, "REP202") == []


SAMPLER_HELPER = """\
import torch
from torch.utils import data


def data_sampler(dataset, shuffle, distributed):
    if distributed:
        return data.distributed.DistributedSampler(dataset, shuffle=shuffle)
    if shuffle:
        return data.RandomSampler(dataset)
    else:
        return data.SequentialSampler(dataset)


loader = data.DataLoader(ds, sampler=data_sampler(ds, shuffle={shuffle}, distributed=False))
"""


def test_rep202_follows_the_sampler_a_helper_returns():
    before = SAMPLER_HELPER.format(shuffle="True")
    after = before.replace("from torch.utils import data\n", "from torch.utils import data\n\nSEED = 0\n").replace(
        "return data.RandomSampler(dataset)",
        "return data.RandomSampler(\n            dataset, generator=torch.Generator().manual_seed(SEED)\n        )",
    )
    assert_fix(before, after, "REP202")


@pytest.mark.parametrize("shuffle", ["False", "args.shuffle"])
def test_rep202_silent_when_the_helper_may_return_no_random_sampler(shuffle):
    assert codes(SAMPLER_HELPER.format(shuffle=shuffle), "REP202") == []


def test_a_test_of_a_parameter_that_is_no_flag_is_no_choice():
    """`if X:` on data (no True/False default) decides nothing: the loader's finding stays there."""
    code = "from torch.utils.data import DataLoader\ndef split(X, ds):\n    if X:\n        return DataLoader(ds, shuffle=True)\n"
    assert codes(code, "REP202") == ["REP202"]
