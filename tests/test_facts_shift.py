"""Facts that differ only by lines an edit moved: what the project pass may reuse across such an edit."""

from __future__ import annotations

import textwrap
from dataclasses import fields, is_dataclass

import pytest

from repro_lint.analysis.python import analyze
from repro_lint.analysis.result import ModuleIdentity
from repro_lint.core import source
from repro_lint.core.settings import Settings
from repro_lint.facts import checkpoints, events, fix_points
from repro_lint.facts import dataset_records as dataset_facts
from repro_lint.facts import module_facts as facts
from repro_lint.facts.module_facts import FunctionFacts
from repro_lint.facts.shift import moved_lines

# A training script with facts of most kinds: imports, a seed option, a dataset drawing from numpy,
# a loader whose shuffle its caller chooses, a checkpoint saved and one restored, functions, calls,
# events, a main guard and its fix points.
TRAIN = textwrap.dedent("""\
    import argparse
    import random

    import numpy as np
    import torch
    from torch.utils.data import DataLoader, Dataset


    class Noisy(Dataset):
        def __getitem__(self, index):
            return np.random.rand() + index


    def batches(data, shuffle):
        return DataLoader(data, shuffle=shuffle, num_workers=2)


    def train(args):
        torch.manual_seed(args.seed)
        loader = batches(Noisy(), True)
        model = torch.nn.Linear(2, 2)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        state = torch.load("last.pt")
        model.load_state_dict(state["model"])
        for batch in loader:
            model(batch).sum().backward()
            optimizer.step()
        torch.save({"model": model.state_dict()}, "last.pt")


    if __name__ == "__main__":
        parser = argparse.ArgumentParser()
        parser.add_argument("--seed", type=int, default=None)
        random.seed(0)
        train(parser.parse_args())
""")


def _facts(text: str) -> facts.ModuleFacts:
    found = analyze(text, "train.py", ModuleIdentity.from_relative_path("train.py"), [], Settings()).facts
    assert found is not None
    return found


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("import argparse\n", '"""Train a model."""\nimport argparse\n'),  # every line moves
        ("    def __getitem__", "    # One noisy sample.\n    def __getitem__"),  # a line inside a class
        ("    for batch", "\n    # The epoch.\n    for batch"),  # lines inside a function
        ('"last.pt")\n', '"last.pt")\n\n# The end.\n'),  # a line after a function
    ],
)
def test_lines_moved_by_an_edit_keep_the_facts_but_for_lines(old, new):
    edited = TRAIN.replace(old, new, 1)
    before, after = _facts(TRAIN), _facts(edited)
    assert before != after
    moved = moved_lines(before, after)
    assert moved is not None and moved != {line: line for line in moved}
    # Each line the facts hold moved to the line holding the same text (or past the end, from there).
    old_lines, new_lines = [*TRAIN.splitlines(), None], [*edited.splitlines(), None]
    assert all(old_lines[min(line, len(old_lines)) - 1] == new_lines[min(to, len(new_lines)) - 1] for line, to in moved.items())


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("        optimizer.step()\n", "        optimizer.step()\n        optimizer.zero_grad()\n"),  # a call added
        ("random.seed(0)", "_ = random.seed(0)"),  # an event's column
        ("num_workers=2", "num_workers=0"),
        ('"model"', '"weights"'),  # a saved key
        ("default=None", "default=0"),  # a seed option's default
    ],
)
def test_other_edits_change_the_facts(old, new):
    edited = TRAIN.replace(old, new, 1)
    assert edited != TRAIN
    assert moved_lines(_facts(TRAIN), _facts(edited)) is None


def _functions(*lines: int) -> tuple[FunctionFacts, ...]:
    return tuple(FunctionFacts(f"m.{name}", line, (), False, end_line=line) for name, line in zip("fgh", lines))


@pytest.mark.parametrize(
    ("old", "new", "same"),
    [
        ((1, 5, 9), (1, 5, 9), True),
        ((1, 5, 9), (3, 7, 20), True),
        ((1, 5, 9), (9, 5, 1), False),  # swapped: which comes first changes
        ((1, 5, 9), (1, 5, 5), False),  # merged
        ((1, 1, 9), (1, 2, 9), False),  # split
    ],
)
def test_lines_must_move_in_order(old, new, same):
    assert (moved_lines(_functions(*old), _functions(*new)) is not None) is same


def test_facts_without_lines_are_compared_whole():
    assert moved_lines(None, None) is not None
    assert moved_lines(None, _facts(TRAIN)) is None
    assert moved_lines(_functions(1, 2), _functions(1, 2, 3)) is None


@pytest.mark.parametrize("module", [facts, events, fix_points, dataset_facts, checkpoints, source])
def test_every_line_field_of_the_facts_is_annotated_as_a_line(module):
    """A line annotated `int` is compared whole: an edit moving it would run the project pass again."""
    classes = [value for value in vars(module).values() if isinstance(value, type) and is_dataclass(value) and value.__module__ == module.__name__]
    line_fields = [(kind.__name__, field.name, field.type) for kind in classes for field in fields(kind) if field.name == "line" or field.name.endswith("_line")]
    assert line_fields
    assert [entry for entry in line_fields if entry[2] not in ("Line", "Line | None")] == []
