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
import os
from collections import deque
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from repro_lint.analysis.result import FileAnalysis, ModuleIdentity
from repro_lint.core.problems import Problem, internal_error
from repro_lint.core.settings import Settings
from repro_lint.core.source import unpacked
from repro_lint.engine.heap import collector_paused
from repro_lint.rules.base import Rule

if TYPE_CHECKING:  # the pool's modules load where one starts: a run the cache answers starts none
    from concurrent.futures import Future, ProcessPoolExecutor

# Starting a spawned worker (a fresh interpreter importing LibCST and the rules) costs about 0.3 s
# on this kind of machine, as much as analysing some 15-20 average files; below this many files to
# parse, the pool's start-up eats what it would save.
POOL_MIN_FILES = 50
# Enough that a worker finds its next file waiting while this process analyses one of its own.
_QUEUED_PER_WORKER = 3
# Measured on transformers' files, 2 jobs: with this process analysing too, 511 files took 0.95x the
# time of two workers, 928 files 1.03x and 2,883 files 1.2x.
HELPS_BELOW_FILES = 500
# A file whose packed text is this large has some 10,000 tokens or more (0.6-0.8 a packed byte in
# transformers' largest files), and its LibCST tree and positions take 35 MB or more. With more than
# one job such a file is analysed by a worker, however few the files: this process may hold every
# analysis of a large project for the pass that follows, and much of a tree's memory, freed, stays
# with the process, pinned by the analysis made beside it. After an audit of transformers, an edit of
# modeling_utils.py took this process to 306 MB (235 MB so), and a fix campaign to 430 MB (286 MB so,
# and 314 MB with this limit at 30,000). Such an edit pays a worker's start (0.2 s); 7% of
# transformers' files are this large, none of pytorch/examples'.
WORKER_ONLY_BYTES = 15_000
_DIED = "the process analysing it died (a crash in a native library, or out of memory)"


@dataclass(frozen=True)
class Task:
    """One Python file to analyse; `report` is False for files read only for their facts."""

    source: bytes  # the text, packed (repro_lint.core.source.packed)
    display: str
    identity: ModuleIdentity
    report: bool


class _Analyser:
    """Analyses files, counting them. A file's analysis leaves reference cycles holding its LibCST
    tree (its context, its rules and their reports refer to each other): this process, which runs
    the project pass next with collections paused, collects them once its own analyses are done.
    The pass would keep them to its end otherwise, 70 MB at the peak of the second round of a fix
    campaign on diffusers (its fixed files analysed here). The engine freezes what it keeps before
    files are analysed (engine/heap.py), so that collection traverses only what the analyses made."""

    def __init__(self, settings: Settings) -> None:
        # LibCST and the rules load here, when files are to be analysed: a run that the cache answers
        # never imports them.
        from repro_lint.analysis.python import analyze
        from repro_lint.rules.registry import REGISTRY

        self.analyze = analyze
        self.settings = settings
        self.rules: list[type[Rule]] = [
            rule for code in sorted(settings.enabled_codes) if isinstance(rule := REGISTRY[code], type) and issubclass(rule, Rule)
        ]
        self.analysed = 0

    def __call__(self, task: Task) -> FileAnalysis:
        self.analysed += 1
        try:
            return self.analyze(unpacked(task.source), task.display, task.identity, self.rules if task.report else [], self.settings)
        except Exception as error:  # one file's bug must not cost the other files' findings
            return _failed(task, error)


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
    each task's index and analysis as soon as it is done, so that callers can keep it at once. A file
    whose analysis fails, or kills its worker, gets an analysis holding the problem instead."""
    if not tasks:
        return
    workers = min(jobs, len(tasks) // (POOL_MIN_FILES // 2) or 1)  # each worker earns its start-up
    large = sum(len(task.source) >= WORKER_ONLY_BYTES for task in tasks) if jobs > 1 else 0
    if (workers <= 1 or len(tasks) < POOL_MIN_FILES) and not large:
        analyser = _Analyser(settings)
        for index, task in enumerate(tasks):
            yield index, analyser(task)
        gc.collect()  # see _Analyser
        return
    # Largest files first, so that no worker is left parsing a big file while the others idle.
    order = deque(sorted(range(len(tasks)), key=lambda index: -len(tasks[index].source)))
    if len(tasks) >= HELPS_BELOW_FILES:
        # Unpickling the workers' analyses makes no reference cycles (a few thousand objects freed
        # in a cold audit of diffusers), while collections traversed every analysis kept so far.
        with collector_paused():
            yield from _on_pool(tasks, order, settings, workers, helping=False)
    else:
        yield from _on_pool(tasks, order, settings, max(workers - 1, min(jobs - 1, large)), helping=True)


def _on_pool(
    tasks: Sequence[Task], waiting: deque[int], settings: Settings, spawned: int, helping: bool
) -> Iterator[tuple[int, FileAnalysis]]:
    """The pool's loop. Each worker has a few tasks queued, not all of them: `helping`, this
    process takes the smallest files from the other end, so that it is never long away from
    collecting, and none as large as `WORKER_ONLY_BYTES`; it loads LibCST and the rules for them
    once the workers have their first files, which they start on meanwhile (on pytorch/examples, a
    cold run took 0.95x the time of loading them first); and a worker that dies (a crash in a native
    library, the kernel's out-of-memory killer) takes down only the tasks then in flight, which are
    analysed again one by one, each in a process of its own, to find the one that killed it."""
    from concurrent.futures import FIRST_COMPLETED, wait
    from concurrent.futures.process import BrokenProcessPool

    pool = _pool(spawned, settings)
    in_flight: dict[Future[FileAnalysis], int] = {}
    analyser: _Analyser | None = None
    try:
        while waiting or in_flight:
            while waiting and len(in_flight) < _QUEUED_PER_WORKER * spawned:
                index = waiting.popleft()
                in_flight[pool.submit(_run, tasks[index])] = index
            if helping and analyser is None:
                analyser = _Analyser(settings)
            if analyser is not None and waiting and len(tasks[waiting[-1]].source) < WORKER_ONLY_BYTES:
                index = waiting.pop()
                yield index, analyser(tasks[index])
                done = [future for future in in_flight if future.done()]
            else:
                done = list(wait(in_flight, return_when=FIRST_COMPLETED).done)
            suspects = []
            for future in done:
                index = in_flight.pop(future)
                try:
                    yield index, future.result()
                except BrokenProcessPool:
                    suspects.append(index)
                except Exception as error:  # the analysis could not be sent back (pickling)
                    yield index, _failed(tasks[index], error)
            if suspects:
                suspects += in_flight.values()
                in_flight.clear()
                pool.shutdown(cancel_futures=True)
                for index in sorted(suspects):
                    yield index, _alone(tasks[index], settings)
                pool = _pool(spawned, settings)
    finally:
        pool.shutdown(cancel_futures=True)
    if analyser is not None and analyser.analysed:
        gc.collect()  # see _Analyser


def _pool(workers: int, settings: Settings) -> ProcessPoolExecutor:
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    return ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn"), initializer=_start_worker, initargs=(settings,))


def _alone(task: Task, settings: Settings) -> FileAnalysis:
    """`task` analysed in a process of its own, whose death names this file."""
    from concurrent.futures.process import BrokenProcessPool

    with _pool(1, settings) as pool:
        try:
            return pool.submit(_run, task).result()
        except BrokenProcessPool:
            return FileAnalysis(task.display, [], None, problem=Problem(task.display, "error", _DIED))
        except Exception as error:
            return _failed(task, error)


def _failed(task: Task, error: Exception) -> FileAnalysis:
    return FileAnalysis(task.display, [], None, problem=internal_error(task.display, error))
