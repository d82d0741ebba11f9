"""Facts and findings pickle as calls of their constructors, and come back equal."""

from __future__ import annotations

import dataclasses
import importlib
import pickle
import pkgutil
from dataclasses import dataclass, field

import pytest

from repro_lint.api import lint_paths
from repro_lint.core.records import pickled_by_constructor
from repro_lint.core.settings import Settings
from repro_lint.engine.cache import CACHE_FOLDER

# Packages the cache and the workers send facts and findings from (the probe's and the editor's are not).
_PICKLED_PACKAGES = ("core", "facts", "analysis", "program", "engine", "sources", "rules")


def _frozen_slotted_dataclasses() -> list[type]:
    found = []
    for package in _PICKLED_PACKAGES:
        root = importlib.import_module(f"repro_lint.{package}")
        for info in pkgutil.walk_packages(root.__path__, f"{root.__name__}."):
            module = importlib.import_module(info.name)
            for value in vars(module).values():
                if (
                    isinstance(value, type)
                    and value.__module__ == module.__name__
                    and dataclasses.is_dataclass(value)
                    and value.__dataclass_params__.frozen  # type: ignore[attr-defined]
                    and "__slots__" in value.__dict__
                ):
                    found.append(value)
    return found


def test_every_frozen_slotted_dataclass_pickles_by_its_constructor():
    classes = _frozen_slotted_dataclasses()
    assert len(classes) >= 40  # CallFact, Position, Finding...: the walk found the package's records
    assert [cls.__qualname__ for cls in classes if "__reduce__" not in cls.__dict__] == []


def test_a_record_with_defaults_comes_back_with_the_values_it_held():
    @pickled_by_constructor
    @dataclass(frozen=True, slots=True)
    class Call:
        targets: tuple[str, ...]
        line: int
        guard: str | None = None
        wrapped: bool = False

    call = Call(("torch.manual_seed",), 3, guard="args.seed", wrapped=True)
    assert call.__reduce__() == (Call, (("torch.manual_seed",), 3, "args.seed", True))

    @pickled_by_constructor
    @dataclass(frozen=True, slots=True)
    class Single:
        line: int

    assert Single(7).__reduce__() == (Single, (7,))


def test_a_record_with_a_field_its_constructor_does_not_take_is_refused():
    with pytest.raises(TypeError, match="cannot be rebuilt"):

        @pickled_by_constructor
        @dataclass(frozen=True, slots=True)
        class Derived:
            line: int
            doubled: int = field(init=False, default=0)


def test_cached_analyses_unpickle_equal_to_what_was_stored(project):
    root = project(
        {
            "train.py": "import torch\nfrom torch.utils.data import random_split\nfrom models.net import build\n"
            "if __name__ == '__main__':\n    random_split(ds, [1, 1])\n    build()(torch.ones(2)).sum().backward()\n",
            "models/net.py": "import torch\ndef build():\n    return torch.nn.Linear(2, 2)\n",
        }
    )
    first = lint_paths([root], Settings(), use_cache=True).findings
    assert first  # the entries hold findings and facts, not just empty analyses
    entries = list((root / CACHE_FOLDER).glob("??/*.pickle"))
    assert entries
    for entry in entries:
        loaded = pickle.loads(entry.read_bytes())
        assert pickle.loads(pickle.dumps(loaded, protocol=pickle.HIGHEST_PROTOCOL)) == loaded
    assert lint_paths([root], Settings(), use_cache=True).findings == first  # read back from those entries
