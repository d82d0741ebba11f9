"""How a phase of the run looks on a terminal, drawn by `rich` on one line: a spinner, the phase, a
bar, the count, the rate and the time left, redrawn ten times a second on rich's own thread (so that a long
unit, such as building a large project's program model, still shows its time passing) and erased
when the phase ends. Imported by progress.py only when a person watches."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TextIO

from rich.console import Console
from rich.progress import BarColumn, ProgressColumn, SpinnerColumn, Task, TaskID
from rich.progress import Progress as RichProgress
from rich.table import Column
from rich.text import Text

# The clock the rate and the time left are measured with.
clock: Callable[[], float] = time.monotonic


class _Label(ProgressColumn):
    """What runs, cut short with `…` where the terminal is narrow: the one column that gives way."""

    def render(self, task: Task) -> Text:
        return Text(f"repro-lint: {task.description}", no_wrap=True, overflow="ellipsis")


class _Count(ProgressColumn):
    """`1234/2152 files`; `3/? rules` where the total is not known."""

    def render(self, task: Task) -> Text:
        total = "?" if task.total is None else f"{task.total:.0f}"
        return Text(f"{task.completed:.0f}/{total} {task.fields['unit']}", style="progress.download")


class _Rate(ProgressColumn):
    """Units a second, as `173/s`; nothing until two updates give a rate."""

    def render(self, task: Task) -> Text:
        speed = task.speed
        if speed is None:
            return Text("")
        return Text(f"{speed:.0f}/s" if speed >= 10 else f"{speed:.1f}/s", style="progress.data.speed")


class _Time(ProgressColumn):
    """The time left once the rate gives it (`ETA 0:05`), else the time spent (`0:07 elapsed`), so
    that a phase without units, or with one long unit, still shows its time passing."""

    def render(self, task: Task) -> Text:
        left = task.time_remaining if task.total is not None else None
        if left is not None:
            return Text(f"ETA {_minutes(left)}", style="progress.remaining")
        return Text(f"{_minutes(task.elapsed or 0.0)} elapsed", style="progress.elapsed")


def _minutes(seconds: float) -> str:
    minutes, seconds = divmod(int(seconds), 60)
    return f"{minutes}:{seconds:02d}"


class _ShownPhase:
    """A phase's handle (progress.Phase) that draws it."""

    def __init__(self, display: RichProgress, task: TaskID, label: str) -> None:
        self.display = display
        self.task = task
        self.label = label

    def advance(self, steps: int = 1) -> None:
        self.display.advance(self.task, steps)

    def describe(self, label: str) -> None:
        self.display.update(self.task, description=f"{self.label}: {label}")


@contextmanager
def shown_phase(stream: TextIO, label: str, total: int | None, unit: str) -> Iterator[_ShownPhase]:
    console = Console(file=stream, force_terminal=True)  # progress.py decided that a person watches
    fixed = Column(no_wrap=True)
    display = RichProgress(
        SpinnerColumn(table_column=fixed),
        _Label(),
        BarColumn(bar_width=16, table_column=fixed),
        _Count(table_column=fixed),
        _Rate(table_column=fixed),
        _Time(table_column=fixed),
        console=console,
        transient=True,  # the report follows on a clean screen
        redirect_stdout=False,  # the report is not ours to move
        redirect_stderr=False,
        get_time=clock,
    )
    task = display.add_task(label, total=total, unit=unit)
    with display:
        yield _ShownPhase(display, task, label)
