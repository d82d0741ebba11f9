"""Analysing many files on a pool of worker processes.

The pool uses the `spawn` start method explicitly: it behaves the same on Linux, macOS and Windows,
and never inherits a forked copy of a parent holding threads or locks. Each worker builds the
settings' rule list once, in its initializer, and then analyses whole files; results come back as
picklable `FileAnalysis` records tagged with their task's index, so callers place them by file and
output never depends on which worker finished first.

In a run of a few hundred files this process is one of the `jobs`: it loads LibCST and the rules
for the project pass anyway, so it analyses files too (the smallest, between collecting the workers'
results) instead of idling while a worker it spawned pays for that import again. In a larger run it
only collects: it holds every analysis so far, and in a heap that large its own parsing slows more
than sparing a worker's start-up gains.
"""

from __future__ import annotations

import gc
import multiprocessing
import os
from collections import deque
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from multiprocessing.pool import AsyncResult

from repro_lint.file_analysis import FileAnalysis, ModuleIdentity
from repro_lint.config import Settings
from repro_lint.rules.base import Rule
from repro_lint.source import unpacked

# Starting a spawned worker (a fresh interpreter importing LibCST and the rules) costs about 0.3 s
# on this kind of machine, as much as analysing some 15-20 average files; below this many files to
# parse, the pool's start-up eats what it would save.
POOL_MIN_FILES = 50
# Enough that a worker finds its next file waiting while this process analyses one of its own.
_QUEUED_PER_WORKER = 3
# Measured on transformers' files, 2 jobs: with this process analysing too, 511 files took 0.95x the
# time of two workers, 928 files 1.03x and 2,883 files 1.2x.
HELPS_BELOW_FILES = 500


@dataclass(frozen=True)
class Task:
    """One Python file to analyse; `report` is False for files read only for their facts."""

    source: bytes  # the text, packed (repro_lint.source.packed)
    display: str
    identity: ModuleIdentity
    report: bool


class _Analyser:
    def __init__(self, settings: Settings) -> None:
        # LibCST and the rules load here, when files are to be analysed: a run that the cache answers
        # never imports them.
        from repro_lint.analysis import analyze
        from repro_lint.registry import REGISTRY

        self.analyze = analyze
        self.settings = settings
        self.rules: list[type[Rule]] = [
            rule for code in sorted(settings.enabled_codes) if isinstance(rule := REGISTRY[code], type) and issubclass(rule, Rule)
        ]

    def __call__(self, task: Task) -> FileAnalysis:
        return self.analyze(unpacked(task.source), task.display, task.identity, self.rules if task.report else [], self.settings)


_worker: _Analyser | None = None


def _start_worker(settings: Settings) -> None:
    global _worker
    _worker = _Analyser(settings)
    # LibCST, the rules and their tables live as long as the worker: frozen, the full collections
    # that parsing's garbage triggers no longer traverse them (on transformers' files, those took 5%
    # of a worker's time, and 1% frozen).
    gc.freeze()


def _run(task: Task) -> FileAnalysis:
    assert _worker is not None, "the pool initializer builds the analyser"
    return _worker(task)


def default_jobs() -> int:
    """The cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # macOS, Windows
        return os.cpu_count() or 1


def analyse_all(tasks: Sequence[Task], settings: Settings, jobs: int) -> Iterator[tuple[int, FileAnalysis]]:
    """Analyse `tasks` on `jobs` processes (in this one for `jobs` 1 or a handful of files), yielding
    each task's index and analysis as soon as it is done, so that callers can keep it at once."""
    if not tasks:
        return
    workers = min(jobs, len(tasks) // (POOL_MIN_FILES // 2) or 1)  # each worker earns its start-up
    if workers <= 1 or len(tasks) < POOL_MIN_FILES:
        analyser = _Analyser(settings)
        for index, task in enumerate(tasks):
            yield index, analyser(task)
        return
    # Largest files first, so that no worker is left parsing a big file while the others idle.
    order = sorted(range(len(tasks)), key=lambda index: -len(tasks[index].source))
    context = multiprocessing.get_context("spawn")
    if len(tasks) >= HELPS_BELOW_FILES:
        with context.Pool(workers, initializer=_start_worker, initargs=(settings,)) as pool:
            yield from zip(order, pool.imap(_run, [tasks[index] for index in order], chunksize=2))
        return
    # This process takes the smallest files from the other end, so that it is never long away from
    # collecting; the workers get a few tasks queued each, not all of them, so the rest stay for it.
    analyser = _Analyser(settings)
    spawned = workers - 1
    waiting = deque(order)
    with context.Pool(spawned, initializer=_start_worker, initargs=(settings,)) as pool:
        in_flight: list[tuple[int, AsyncResult[FileAnalysis]]] = []
        while waiting or in_flight:
            while waiting and len(in_flight) < _QUEUED_PER_WORKER * spawned:
                index = waiting.popleft()
                in_flight.append((index, pool.apply_async(_run, (tasks[index],))))
            done = [entry for entry in in_flight if entry[1].ready()]
            if not done and not waiting:
                done = [in_flight[0]]
            for entry in done:
                in_flight.remove(entry)
                yield entry[0], entry[1].get()
            if waiting:
                index = waiting.pop()
                yield index, analyser(tasks[index])
