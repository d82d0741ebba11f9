"""The progress of a long audit on stderr, phase by phase: reading the files, analysing them, the
project pass and fixing, each with its count, rate and time left where it has units.

Shown only where a person watches: stderr is a terminal, no `CI` variable is set and the run is not
`--quiet`; so pipes, log files and CI logs never receive it, and stdout (the report) never does. How
it looks is progress_bar.py's, which imports `rich`: only a run that shows it pays for that import.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Protocol, TextIO

# Below this many files a run takes a second or two: a display would only flicker.
MIN_FILES = 200


class Phase(Protocol):
    """One phase's handle: `advance` after each unit done, `describe` when the work inside changes."""

    def advance(self, steps: int = 1) -> None:
        """Record `steps` more units done."""

    def describe(self, label: str) -> None:
        """Say what the phase is doing now (which rule the project pass runs)."""


class _Unseen:
    """The handle of a phase nobody watches: it does nothing."""

    def advance(self, steps: int = 1) -> None:
        pass

    def describe(self, label: str) -> None:
        pass


class Progress:
    """The run's display: off unless `shown` and a person watches `stream` (stderr by default, read
    when a phase starts, so that a redirected stderr is honoured)."""

    def __init__(self, shown: bool, stream: TextIO | None = None) -> None:
        self.shown = shown
        self.stream = stream

    @contextmanager
    def phase(self, label: str, total: int | None, unit: str) -> Iterator[Phase]:
        """A phase of `total` units (None: not known beforehand), shown while it runs and erased after."""
        stream = self.stream if self.stream is not None else sys.stderr
        if not (self.shown and total != 0 and watched(stream)):
            yield _Unseen()
            return
        from repro_lint.engine.progress_bar import shown_phase

        with shown_phase(stream, label, total, unit) as phase:
            yield phase


def watched(stream: TextIO) -> bool:
    """Whether a person watches the stream: a terminal, outside CI."""
    if os.environ.get("CI"):
        return False
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # no such method, or closed
        return False
