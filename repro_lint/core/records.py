"""Pickling the frozen, slotted dataclasses that facts and findings are made of, as constructor calls.

For a frozen dataclass with slots, the dataclasses module adds a `__setstate__` written in Python,
which calls `fields()` and `object.__setattr__` for every field of every instance. A warm run
unpickles every module's analysis (about 320,000 call facts on transformers), and that
`__setstate__` took 0.8 of the 1.5 s spent loading them, with the collector paused. Pickled as a
call of the class, an instance is rebuilt by the generated `__init__`, in 0.65 s in all.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import fields
from operator import attrgetter
from typing import Any, TypeVar

_Record = TypeVar("_Record", bound=type)


def pickled_by_constructor(cls: _Record) -> _Record:
    """Make the frozen, slotted dataclass `cls` pickle as `cls(*values of its fields)`."""
    members = fields(cls)
    if any(not member.init for member in members):
        raise TypeError(f"{cls.__name__}: a field its constructor does not take cannot be rebuilt by it")
    names = [member.name for member in members]
    read: Callable[[Any], Any] = attrgetter(*names)
    if len(names) == 1:
        cls.__reduce__ = lambda self: (cls, (read(self),))  # type: ignore[attr-defined]
    else:
        cls.__reduce__ = lambda self: (cls, read(self))  # type: ignore[attr-defined]
    return cls
