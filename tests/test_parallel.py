"""Linting on worker processes: the same findings with 1 and 2 jobs, with and without the cache,
under different hash salts; the pool is a `spawn` pool; damaged cache entries survive the parallel path."""

from __future__ import annotations

import gc
import json
import multiprocessing
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from conftest import SEEDED_PROGRAM_WITH_TWO_FINDINGS

from repro_lint.analysis.result import ModuleIdentity
from repro_lint.core.settings import Settings
from repro_lint.core.source import packed
from repro_lint.engine import workers
from repro_lint.engine.cache import CACHE_FOLDER

UNSEEDED_TRAINING = """\
import torch
from lib.helpers_0 import vocabulary

def main():
    model = torch.nn.Linear(2, 2)
    model(torch.randn(4, 2)).sum().backward()

if __name__ == "__main__":
    main()
"""


def _helper(index: int) -> str:
    # Every helper orders a vocabulary by iterating a set of strings (REP106, a local finding).
    return textwrap.dedent(
        f"""\
        def vocabulary(words):
            index = {{}}
            for word in set(words):
                index[word] = len(index)
            return index

        def scale_{index}(value):
            return value * {index}
        """
    )


@pytest.fixture
def big_project(project):
    """Enough modules for `--jobs 2` to start a pool, with local and program-level findings."""
    files = {"train.py": SEEDED_PROGRAM_WITH_TWO_FINDINGS, "eval/train_unseeded.py": UNSEEDED_TRAINING}
    files.update({f"lib/helpers_{index}.py": _helper(index) for index in range(workers.POOL_MIN_FILES + 5)})
    files["lib/__init__.py"] = ""
    return project(files)


def _check(root, *options: str, hash_seed: str = "0") -> list[dict]:
    result = subprocess.run(
        [sys.executable, "-m", "repro_lint", "check", "--output-format", "json", *options, "."],
        cwd=root,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONHASHSEED": hash_seed},
    )
    assert result.returncode == 1, result.stderr
    return json.loads(result.stdout)


def test_same_findings_with_one_and_two_jobs_cache_and_hash_seeds(big_project):
    reference = _check(big_project, "--jobs", "1", "--no-cache")
    codes = {finding["code"] for finding in reference}
    assert {"REP106", "REP203", "REP301"} <= codes  # local findings
    assert "REP101" in codes  # a program-level finding (the unseeded training script)
    assert sum(finding["code"] == "REP106" for finding in reference) == workers.POOL_MIN_FILES + 5

    assert _check(big_project, "--jobs", "2", "--no-cache", hash_seed="1") == reference
    assert not (big_project / CACHE_FOLDER).exists()
    assert _check(big_project, "--jobs", "2", hash_seed="2") == reference  # fills the cache
    assert len(list((big_project / CACHE_FOLDER).glob("*/*.pickle"))) == workers.POOL_MIN_FILES + 8  # one per file
    (last_run,) = (big_project / CACHE_FOLDER).glob("run-*.pickle")
    assert _check(big_project, "--jobs", "1", hash_seed="3") == reference  # the last run's findings
    last_run.unlink()
    assert _check(big_project, "--jobs", "1", hash_seed="4") == reference  # each file's analysis from the cache


def test_damaged_cache_entries_are_rebuilt_by_the_pool(big_project):
    reference = _check(big_project, "--jobs", "2")
    for number, entry in enumerate(sorted((big_project / CACHE_FOLDER).rglob("*.pickle"))):
        entry.write_bytes(entry.read_bytes()[: number % 7] if number % 2 else b"\x80\x05garbage")
    assert _check(big_project, "--jobs", "2") == reference
    assert _check(big_project, "--jobs", "2") == reference  # the rebuilt entries are sound


def _tasks(count: int) -> list[workers.Task]:
    return [
        workers.Task(packed(_helper(index)), f"lib/helpers_{index}.py", ModuleIdentity.from_relative_path(f"lib/helpers_{index}.py"), True)
        for index in range(count)
    ]


def test_pool_is_a_spawn_pool_and_answers_every_task(monkeypatch):
    methods = []
    real = multiprocessing.get_context

    def recording(method=None):
        methods.append(method)
        return real(method)

    monkeypatch.setattr(multiprocessing, "get_context", recording)
    tasks = _tasks(workers.POOL_MIN_FILES)
    pooled = list(workers.analyse_all(tasks, Settings(), jobs=2))
    assert methods == ["spawn"]
    in_process = list(workers.analyse_all(tasks, Settings(), jobs=1))
    assert methods == ["spawn"]  # one job never starts a pool
    assert sorted(index for index, _ in pooled) == list(range(len(tasks)))
    by_index = dict(pooled)
    assert [by_index[index].display for index in range(len(tasks))] == [task.display for task in tasks]
    assert [(by_index[index].findings, by_index[index].facts) for index in range(len(tasks))] == [
        (analysis.findings, analysis.facts) for _, analysis in in_process
    ]


def _analysed_here(monkeypatch):
    """The files this process analyses, in order, from now on. Spawned workers import the module
    afresh, so only this process's analyses are counted."""
    here = []
    real = workers._Analyser.__call__

    def counting(self, task):
        here.append(task.display)
        return real(self, task)

    monkeypatch.setattr(workers._Analyser, "__call__", counting)
    return here


@pytest.mark.parametrize("helps_below, spawned", [(workers.HELPS_BELOW_FILES, 1), (10, 2)])
def test_this_process_analyses_its_share_beside_the_workers_in_smaller_runs(monkeypatch, helps_below, spawned):
    """With two jobs and fewer files than `HELPS_BELOW_FILES`, one worker is spawned and this process
    takes files too; with more, two workers take them all."""
    monkeypatch.setattr(workers, "HELPS_BELOW_FILES", helps_below)
    here = _analysed_here(monkeypatch)
    processes = []
    real_pool = workers._pool

    def recording(processes_wanted, settings):
        processes.append(processes_wanted)
        return real_pool(processes_wanted, settings)

    monkeypatch.setattr(workers, "_pool", recording)
    tasks = _tasks(workers.POOL_MIN_FILES)
    collecting = []
    analysed = []
    for result in workers.analyse_all(tasks, Settings(), jobs=2):
        analysed.append(result)
        collecting.append(gc.isenabled())
    assert processes == [spawned]
    assert sorted(index for index, _ in analysed) == list(range(len(tasks)))
    assert (0 < len(here) < len(tasks)) if spawned == 1 else here == []
    # Analysing here makes cyclic garbage; only collecting the workers' analyses makes none.
    assert set(collecting) == {spawned == 1}
    assert gc.isenabled()


def test_the_worker_has_its_first_files_before_this_process_loads_the_rules(monkeypatch):
    """A spawned worker takes about as long to start as this process takes to load LibCST and the
    rules: it is sent files first, and starts while they load."""
    events = []
    real_pool, real_init = workers._pool, workers._Analyser.__init__

    def recording_pool(processes_wanted, settings):
        pool = real_pool(processes_wanted, settings)
        submit = pool.submit
        monkeypatch.setattr(pool, "submit", lambda *arguments: (events.append("sent"), submit(*arguments))[1])
        return pool

    def recording_init(self, settings):
        events.append("loaded")
        real_init(self, settings)

    monkeypatch.setattr(workers, "_pool", recording_pool)
    monkeypatch.setattr(workers._Analyser, "__init__", recording_init)
    tasks = _tasks(workers.POOL_MIN_FILES)
    assert sorted(index for index, _ in workers.analyse_all(tasks, Settings(), jobs=2)) == list(range(len(tasks)))
    assert events.count("loaded") == 1
    assert events.index("loaded") == workers._QUEUED_PER_WORKER  # after the worker's first files, once


def test_few_files_are_analysed_in_process(monkeypatch):
    monkeypatch.setattr(multiprocessing, "get_context", lambda method=None: pytest.fail("no pool for a few files"))
    analyses = list(workers.analyse_all(_tasks(3), Settings(), jobs=8))
    assert [index for index, _ in analyses] == [0, 1, 2]
    assert [finding.code for _, analysis in analyses for finding in analysis.findings] == ["REP106"] * 3


def _large(number: int) -> workers.Task:
    """A task of more than 300 packed bytes."""
    text = _helper(number) + "".join(f"CONSTANT_{index} = {index * 7919 % 104729}\n" for index in range(100))
    return workers.Task(packed(text), f"lib/large_{number}.py", ModuleIdentity.from_relative_path(f"lib/large_{number}.py"), True)


@pytest.mark.parametrize("jobs", [1, 2])
def test_this_processs_analyses_leave_no_cyclic_garbage(monkeypatch, jobs):
    """The pass that follows runs with collections paused: the cycles an analysis here leaves (its
    LibCST tree among them) are collected once this process's analyses are done, alone or beside a
    worker."""
    monkeypatch.setattr(workers, "WORKER_ONLY_BYTES", 300)  # the large task goes to a worker
    here = _analysed_here(monkeypatch)
    tasks = [*_tasks(3), _large(0)]
    gc.collect()
    gc.disable()
    try:
        analysed = list(workers.analyse_all(tasks, Settings(), jobs=jobs))
        left = gc.collect()
    finally:
        gc.enable()
    assert len(analysed) == len(tasks)
    assert (len(here) == 4) if jobs == 1 else (here and "lib/large_0.py" not in here)
    assert left == 0


def test_a_large_file_is_analysed_by_a_worker_however_few_the_files(monkeypatch):
    """Its tree would stay in this process's memory beside the project's analyses; the small files
    are analysed here, and every analysis is what one process gives."""
    here = _analysed_here(monkeypatch)
    monkeypatch.setattr(workers, "WORKER_ONLY_BYTES", 300)
    large = [_large(number) for number in range(5)]  # more than a worker's queue holds
    tasks = [*_tasks(3), *large]
    assert [len(task.source) >= workers.WORKER_ONLY_BYTES for task in tasks] == [False] * 3 + [True] * 5
    analysed = dict(workers.analyse_all(tasks, Settings(), jobs=2))
    assert here and not any(display.startswith("lib/large") for display in here)
    here.clear()
    assert [(analysed[index].findings, analysed[index].facts) for index in range(len(tasks))] == [
        (analysis.findings, analysis.facts) for _, analysis in workers.analyse_all(tasks, Settings(), jobs=1)
    ]
    assert len(here) == len(tasks)  # one job: all in this process


def test_files_read_for_facts_run_no_local_rule():
    task = _tasks(1)[0]
    facts_only = workers.Task(task.source, task.display, task.identity, report=False)
    ((_, analysis),) = workers.analyse_all([facts_only], Settings(), jobs=1)
    assert analysis.findings == []
    assert analysis.facts is not None and [f.qualname for f in analysis.facts.functions] == [
        "lib.helpers_0.vocabulary",
        "lib.helpers_0.scale_0",
    ]


_CHILDREN = """
import os, sys
from pathlib import Path

from repro_lint.api import lint_paths
from repro_lint.core.settings import Settings

if __name__ == "__main__":
    lint_paths([Path(sys.argv[1])], Settings(), jobs=2)
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as stat:
                state, parent = stat.read().rpartition(") ")[2].split()[:2]
            with open(f"/proc/{entry}/cmdline", "rb") as command:
                line = command.read().replace(b"\\0", b" ").decode()
        except OSError:
            continue
        if int(parent) == os.getpid():
            print(state, line)
"""


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads the process table from /proc")
def test_a_finished_run_leaves_no_worker_behind(big_project, tmp_path):
    # Only multiprocessing's resource tracker may outlive the pool (it lives until the interpreter
    # exits); a worker left running or defunct would be a pool not closed and joined.
    script = tmp_path / "children.py"
    script.write_text(_CHILDREN, encoding="utf-8")
    done = subprocess.run([sys.executable, str(script), str(big_project)], capture_output=True, text=True, check=True)
    children = [line for line in done.stdout.splitlines() if line]
    assert any("resource_tracker" in line for line in children)  # the run did start a pool
    assert [line for line in children if "resource_tracker" not in line] == []
    assert all(not line.startswith("Z") for line in children)
