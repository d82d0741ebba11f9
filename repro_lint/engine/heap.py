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

import ctypes
import gc
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import cache


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


def freed_memory_returned() -> None:
    """Return to the operating system the memory the C allocator holds freed, where it can (glibc's
    `malloc_trim`, as Dask's workers do; elsewhere nothing). Python hands objects of more than 512
    bytes (large dicts, lists, strings) to it, and glibc keeps what they freed in the middle of its
    heap for later: a fix round's project pass on diffusers left 56 to 81 MB so, beneath the next
    round's peak."""
    trim = _malloc_trim()
    if trim is not None:
        trim(0)


@cache
def _malloc_trim() -> Callable[[int], int] | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        return getattr(ctypes.CDLL(None), "malloc_trim", None)  # none in musl's C library
    except OSError:
        return None
