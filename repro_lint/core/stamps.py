"""A file's stamp: its size and times, taken only where they are sure to change with its content.

A file changed within the clock tick of its last change keeps its time ("racy git"), and only its
content would tell; so a stamp is taken only of a file older than the moment it is taken by more
than a tick, as git's index and Ruff's cache do. A folder's stamp changes as files are added to it,
removed or renamed.
"""

from __future__ import annotations

import os
from pathlib import Path

# FAT's modification times have a resolution of 2 s, the coarsest of the file systems in use.
CLOCK_TICK_NS = 2_000_000_000

Stamp = tuple[int, int, int, int]  # size, modification and change times, inode


def stamp(path: Path | str | None, taken_ns: int) -> Stamp | None:
    """The stamp of the file or folder at `path` as of `taken_ns` (`time.time_ns()`, taken before it
    was last read); None where it is missing or changed too recently to be trusted."""
    if path is None:
        return None
    try:
        stat = os.stat(path)
    except OSError:
        return None
    if max(stat.st_mtime_ns, stat.st_ctime_ns) >= taken_ns - CLOCK_TICK_NS:
        return None
    return (stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns, stat.st_ino)
