"""Pickling the frozen, slotted dataclasses that facts and findings are made of, as calls of a
function that builds them from their fields' values.

For a frozen dataclass with slots, the dataclasses module adds a `__setstate__` written in Python,
which calls `fields()` and `object.__setattr__` for every field of every instance. A warm run
unpickles every module's analysis (about 320,000 call facts on transformers), and that
`__setstate__` took 0.8 of the 1.5 s spent loading them, with the collector paused. Rebuilt by the
generated `__init__`, they took 0.65 s in all; the frozen `__init__` sets each field through
`object.__setattr__`, which looks the name up again, and a function written for the class that
sets each slot through its descriptor loads transformers' facts in two thirds of that time.

Each module's analysis is its own pickle, so the names every module repeats (`torch.nn.Linear`,
`os`, a call's `append`) came back as one string per module: on transformers, 37 of the 46 MiB of
strings in the facts the main process holds were such copies, and 14 MiB more were equal tuples of
them. Fields named `shared` are rebuilt as the one equal value the process already holds (and
`shared_items`, item by item), from a table that starts again when it grows past `_SHARED_MOST`, so
that a long-lived process (the language server) keeps no value no record holds any more for long.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import fields, is_dataclass
from functools import cache
from operator import attrgetter
from typing import Any, TypeVar

_Record = TypeVar("_Record", bound=type)


_SHARED: dict[Hashable, Hashable] = {}
_SHARED_MOST = 1 << 20


def forget_shared_beyond(most: int = _SHARED_MOST) -> None:
    """Start the table of shared values again once it holds more than `most` of them."""
    if len(_SHARED) > most:
        _SHARED.clear()


def pickled_by_constructor(
    cls: _Record | None = None, *, shared: tuple[str, ...] = (), shared_items: tuple[str, ...] = ()
) -> Any:
    """Make the frozen, slotted dataclass `cls` pickle as a call of `cls._rebuild` with the values of
    its fields, which builds what the constructor would (without running it: a `__post_init__` is
    refused); the fields named in `shared` (whole) and `shared_items` (each item of a tuple) come
    back as values the process already holds where it holds equal ones."""
    if cls is None:
        return lambda cls: pickled_by_constructor(cls, shared=shared, shared_items=shared_items)
    members = fields(cls)
    if any(not member.init for member in members):
        raise TypeError(f"{cls.__name__}: a field its constructor does not take cannot be rebuilt by it")
    if hasattr(cls, "__post_init__"):
        raise TypeError(f"{cls.__name__}: rebuilt from its fields' values, its __post_init__ would not run")
    names = [member.name for member in members]
    unknown = {*shared, *shared_items} - set(names)
    if unknown:
        raise TypeError(f"{cls.__name__} has no field {', '.join(sorted(unknown))} to share")
    read: Callable[[Any], Any] = attrgetter(*names)
    rebuild = _rebuilder(cls, names, shared, shared_items)
    if len(names) == 1:
        cls.__reduce__ = lambda self: (rebuild, (read(self),))  # type: ignore[attr-defined]
    else:
        cls.__reduce__ = lambda self: (rebuild, read(self))  # type: ignore[attr-defined]
    return cls


def _rebuilder(cls: type, names: list[str], shared: tuple[str, ...], shared_items: tuple[str, ...]) -> Callable[..., Any]:
    """A function of the fields' values in order that builds `cls`, sharing the fields named.
    Written out and compiled, as dataclasses writes `__init__`, and setting each slot through its
    descriptor rather than the frozen class's `object.__setattr__`, which looks each name up again."""
    lines = ["def rebuild(" + ", ".join(f"_{at}" for at in range(len(names))) + "):", "    record = new(cls)"]
    namespace: dict[str, Any] = {"cls": cls, "new": object.__new__, "share": _SHARED.setdefault}
    for at, name in enumerate(names):
        namespace[f"set_{at}"] = getattr(cls, name).__set__  # the slot's descriptor, wherever in the classes it is
        if name in shared:
            value = f"share(_{at}, _{at})"
        elif name in shared_items:
            value = f"tuple([share(item, item) for item in _{at}])"
        else:
            value = f"_{at}"
        lines.append(f"    set_{at}(record, {value})")
    lines.append("    return record")
    exec("\n".join(lines), namespace)
    rebuild: Callable[..., Any] = namespace["rebuild"]
    # Pickle names a function by where it can be found again.
    rebuild.__qualname__ = f"{cls.__qualname__}._rebuild"
    rebuild.__module__ = cls.__module__
    cls._rebuild = staticmethod(rebuild)  # type: ignore[attr-defined]
    return rebuild


def strings_held(value: object, found: set[str]) -> None:
    """Add to `found` the strings `value` holds, however deep in dataclasses and collections (the
    field names of each dataclass read once: this is asked of every module's facts)."""
    if isinstance(value, str):
        found.add(value)
    elif isinstance(value, (tuple, list, frozenset, set)):
        for item in value:
            strings_held(item, found)
    elif (names := _field_names(type(value))) is not None:
        for name in names:
            strings_held(getattr(value, name), found)


@cache
def _field_names(kind: type) -> tuple[str, ...] | None:
    return tuple(field.name for field in fields(kind)) if is_dataclass(kind) else None
