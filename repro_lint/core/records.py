"""Pickling the frozen, slotted dataclasses that facts and findings are made of, as constructor calls.

For a frozen dataclass with slots, the dataclasses module adds a `__setstate__` written in Python,
which calls `fields()` and `object.__setattr__` for every field of every instance. A warm run
unpickles every module's analysis (about 320,000 call facts on transformers), and that
`__setstate__` took 0.8 of the 1.5 s spent loading them, with the collector paused. Pickled as a
call of the class, an instance is rebuilt by the generated `__init__`, in 0.65 s in all.

Each module's analysis is its own pickle, so the names every module repeats (`torch.nn.Linear`,
`os`, a call's `append`) came back as one string per module: on transformers, 37 of the 46 MiB of
strings in the facts the main process holds were such copies, and 14 MiB more were equal tuples of
them. Fields named `shared` are rebuilt as the one equal value the process already holds (and
`shared_items`, item by item), from a table that starts again when it grows past `_SHARED_MOST`, so
that a long-lived process (the language server) keeps no value no record holds any more for long.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import fields
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
    """Make the frozen, slotted dataclass `cls` pickle as a call of its constructor with the values
    of its fields; the fields named in `shared` (whole) and `shared_items` (each item of a tuple)
    come back as values the process already holds where it holds equal ones."""
    if cls is None:
        return lambda cls: pickled_by_constructor(cls, shared=shared, shared_items=shared_items)
    members = fields(cls)
    if any(not member.init for member in members):
        raise TypeError(f"{cls.__name__}: a field its constructor does not take cannot be rebuilt by it")
    names = [member.name for member in members]
    unknown = {*shared, *shared_items} - set(names)
    if unknown:
        raise TypeError(f"{cls.__name__} has no field {', '.join(sorted(unknown))} to share")
    read: Callable[[Any], Any] = attrgetter(*names)
    rebuild = _rebuilder(cls, names, shared, shared_items) if shared or shared_items else cls
    if len(names) == 1:
        cls.__reduce__ = lambda self: (rebuild, (read(self),))  # type: ignore[attr-defined]
    else:
        cls.__reduce__ = lambda self: (rebuild, read(self))  # type: ignore[attr-defined]
    return cls


def _rebuilder(cls: type, names: list[str], shared: tuple[str, ...], shared_items: tuple[str, ...]) -> Callable[..., Any]:
    """A function of the fields' values in order that builds `cls`, sharing the fields named. Written
    out and compiled, as dataclasses writes `__init__`: a loop over the fields at each call cost
    more than the sharing saves on the 320,000 calls a warm run on transformers rebuilds."""
    values = []
    for name in names:
        if name in shared:
            values.append(f"share({name}, {name})")
        elif name in shared_items:
            values.append(f"tuple([share(item, item) for item in {name}])")
        else:
            values.append(name)
    namespace: dict[str, Any] = {"cls": cls, "share": _SHARED.setdefault}
    exec(f"def rebuild({', '.join(names)}):\n    return cls({', '.join(values)})", namespace)
    rebuild: Callable[..., Any] = namespace["rebuild"]
    # Pickle names a function by where it can be found again.
    rebuild.__qualname__ = f"{cls.__qualname__}._rebuild"
    rebuild.__module__ = cls.__module__
    cls._rebuild = staticmethod(rebuild)  # type: ignore[attr-defined]
    return rebuild
