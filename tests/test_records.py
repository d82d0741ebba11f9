"""Facts and findings pickle as calls of a function that builds them from their fields, and come
back equal; the names every module repeats come back as one object."""

from __future__ import annotations

import dataclasses
import importlib
import pickle
import pkgutil
from dataclasses import dataclass, field

import pytest

from repro_lint.api import lint_paths
from repro_lint.core.records import forget_shared_beyond, pickled_by_constructor
from repro_lint.core.settings import Settings
from repro_lint.engine.cache import CACHE_FOLDER
from repro_lint.facts.module_facts import CallFact

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
    assert call.__reduce__() == (Call._rebuild, (("torch.manual_seed",), 3, "args.seed", True))
    rebuilt = Call._rebuild(*call.__reduce__()[1])
    assert rebuilt == call and hash(rebuilt) == hash(call) and type(rebuilt) is Call
    with pytest.raises(dataclasses.FrozenInstanceError):
        rebuilt.line = 4  # type: ignore[misc]

    @pickled_by_constructor
    @dataclass(frozen=True, slots=True)
    class Single:
        line: int

    assert Single(7).__reduce__() == (Single._rebuild, (7,))
    assert Single._rebuild(7) == Single(7)


def test_a_record_whose_constructor_does_more_than_set_its_fields_is_refused():
    with pytest.raises(TypeError, match="__post_init__ would not run"):

        @pickled_by_constructor
        @dataclass(frozen=True, slots=True)
        class Checked:
            line: int

            def __post_init__(self) -> None:
                assert self.line > 0


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


def _fresh(text: str) -> str:
    """An equal string that is not the same object (literals in one module are)."""
    return "".join(list(text))


def test_equal_names_from_different_pickles_come_back_as_one_object():
    first = CallFact((_fresh("torch.nn.Linear"),), _fresh("append"), 1)
    second = CallFact((_fresh("torch.nn.Linear"),), _fresh("append"), 2)
    assert first.targets is not second.targets and first.method is not second.method
    # Each module's facts are a pickle of their own, in the cache and from the workers.
    one, two = (pickle.loads(pickle.dumps(call)) for call in (first, second))
    assert (one, two) == (first, second)
    assert one.targets is two.targets and one.method is two.method

    forget_shared_beyond(0)  # a table grown past its bound starts again: nothing is kept from before
    three = pickle.loads(pickle.dumps(first))
    assert three == first and three.targets is not one.targets


def test_shared_items_are_shared_one_by_one_and_the_rest_as_given():
    @pickled_by_constructor(shared=("name",), shared_items=("imports",))
    @dataclass(frozen=True, slots=True)
    class Module:
        name: str
        imports: tuple[str, ...]
        line: int = 0

    first = Module(_fresh("pkg.models"), (_fresh("torch"), _fresh("pkg.a")), 3)
    second = Module(_fresh("pkg.models"), (_fresh("os"), _fresh("torch")))
    rebuild, values = first.__reduce__()
    assert rebuild is Module._rebuild and values == ("pkg.models", ("torch", "pkg.a"), 3)
    one, two = rebuild(*values), rebuild(*second.__reduce__()[1])
    assert (one, two) == (first, second)
    assert one.name is two.name and one.imports[0] is two.imports[1]


def test_sharing_a_field_the_record_does_not_have_is_refused():
    with pytest.raises(TypeError, match="no field nmae to share"):

        @pickled_by_constructor(shared=("nmae",))
        @dataclass(frozen=True, slots=True)
        class Named:
            name: str


def test_facts_from_the_cache_share_the_names_their_modules_repeat(project):
    imports = "import os\nimport torch\nfrom torch.utils.data import DataLoader\n"
    root = project({"a.py": imports + "DataLoader(range(3)).append(1)\n", "b.py": imports + "DataLoader(range(4)).append(2)\n"})
    lint_paths([root], Settings(), use_cache=True)
    loaded = [pickle.loads(entry.read_bytes()).facts for entry in (root / CACHE_FOLDER).glob("??/*.pickle")]
    a, b = sorted((facts for facts in loaded if facts is not None), key=lambda facts: facts.module)
    assert (a.module, b.module) == ("a", "b")
    assert a.imports == b.imports and all(x is y for x, y in zip(a.imports, b.imports))
    assert a.bindings == b.bindings and all(x is y for x, y in zip(a.bindings, b.bindings))
    calls = {facts.module: {call.method: call for call in facts.module_calls} for facts in (a, b)}
    assert calls["a"]["append"].method is calls["b"]["append"].method
