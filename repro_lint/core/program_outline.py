"""A program as the audit shows it: where it starts, the files it runs, whether it trains and saves
a training checkpoint. Plain data, kept in the last run's record (which loads neither LibCST nor
the rules), so an unchanged project is audited without building its model again."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ProgramOutline:
    path: str  # the entry module's file (relative to the project root until the engine displays it)
    line: int  # where its program findings are reported: the main guard, or line 1
    modules: tuple[str, ...]  # the files of the modules it runs, the entry's among them
    trains: bool  # it, or a worker it starts in processes of its own, trains
    saves_checkpoint: bool  # it runs code that saves optimizer state
