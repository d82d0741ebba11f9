"""A one-line progress counter on stderr for long audits.

Shown only where a person watches: stderr is a terminal and no `CI` variable is set, so pipes, log
files and CI logs never receive it, and stdout (the report) never does.
"""

from __future__ import annotations

import os
import sys
import time
from typing import TextIO

# Below this many files to analyse a run takes a second or two: a counter would only flicker.
MIN_FILES = 200
_INTERVAL_S = 0.1


class Progress:
    def __init__(self, total: int, stream: TextIO | None = None) -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.total = total
        self.done = 0
        self.enabled = total >= MIN_FILES and _watched(self.stream)
        self._shown_at = 0.0

    def advance(self) -> None:
        self.done += 1
        if self.enabled and (time.monotonic() - self._shown_at >= _INTERVAL_S or self.done == self.total):
            self._shown_at = time.monotonic()
            self.stream.write(f"\rrepro-lint: analysed {self.done}/{self.total} files")
            self.stream.flush()

    def close(self) -> None:
        if self.enabled and self._shown_at:
            self.stream.write("\r\x1b[K")  # erase the line, so the summary starts clean
            self.stream.flush()


def _watched(stream: TextIO) -> bool:
    if os.environ.get("CI"):
        return False
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False
