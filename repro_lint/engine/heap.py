"""Sparing Python's cyclic garbage collector the objects a run keeps.

A full collection traverses every object the collector tracks, and the more objects a process
allocates, the more often one runs. A run keeps millions of objects to its end whose traversal frees
nothing: every file's analysis, loaded from the cache or sent back by a worker, and the model the
project pass builds over them. The engine reads the analyses with collections paused, keeps them
frozen while it analyses the files the cache did not answer, and runs the pass with collections
paused: its garbage has few reference cycles, and the model is freed by reference counting alone
(tests/test_heap.py). On transformers after an audit, a function added and called: collections
took 0.78 s of a 4 s run with the analyses frozen during the pass alone, and 0.03 s so.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def collector_paused() -> Iterator[None]:
    """No collections in the block: for work whose garbage holds no reference cycles, such as
    unpickling, which reference counting alone frees."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


@contextmanager
def kept_out_of_collections() -> Iterator[None]:
    """The objects alive on entry are not traversed by the block's collections (`gc.freeze`); on
    exit they are tracked again, so that a long-lived caller still frees them once unreachable."""
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()
