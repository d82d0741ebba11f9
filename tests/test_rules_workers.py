"""Functions started in other processes (`mp.spawn`, `Process(target=...)`, process pools, submitit):
a spawned or pooled worker inherits none of the launcher's seeds or torch settings; a forked one does."""

from __future__ import annotations

import textwrap

import pytest
from conftest import assert_fix, lint

from repro_lint.api import lint_paths
from repro_lint.core.settings import Settings

SPAWNED = """
    import argparse
    import torch
    import torch.multiprocessing as mp
    {module_level}

    def worker(rank, args):
        {worker_seed}model = torch.nn.Linear(2, 2).cuda(rank)
        model(torch.ones(2)).sum().backward()

    def main():
        parser = argparse.ArgumentParser()
        parser.add_argument("--seed", type=int, default=0)
        args = parser.parse_args()
        torch.manual_seed(args.seed)
        torch.use_deterministic_algorithms(True)
        {launch}

    if __name__ == "__main__":
        main()
"""


def spawned(launch: str = "mp.spawn(worker, args=(args,), nprocs=2)", worker_seed: str = "", module_level: str = "") -> str:
    return SPAWNED.replace("{launch}", launch).replace("{worker_seed}", worker_seed).replace("{module_level}", module_level)


def codes_of(code: str, select: str = "REP101") -> list[str]:
    return [finding.code for finding in lint(code, select)]


# --- Which launches start fresh processes ---------------------------------------------------------------


def test_spawned_worker_is_not_seeded_by_the_launcher():
    [finding] = lint(spawned(), "REP101")
    assert finding.start.line == 19  # the main guard of the entry module
    assert "`worker` (fresh process, line 17) never seeds torch" in finding.message
    assert "first draw: line 8 (nn.Linear)" in finding.message


@pytest.mark.parametrize(
    "launch",
    [
        "mp.spawn(fn=worker, args=(args,), nprocs=2)",
        "mp.start_processes(worker, args=(args,), nprocs=2, start_method='forkserver')",
        "mp.set_start_method('spawn')\n        p = mp.Process(target=worker, args=(0, args))\n        p.start()",
        "mp.get_context('spawn').Process(target=worker, args=(0, args)).start()",
        "ctx = mp.get_context('forkserver')\n        ctx.Process(None, worker, args=(0, args)).start()",
    ],
)
def test_launches_that_start_fresh_interpreters(launch):
    assert codes_of(spawned(launch)) == ["REP101"]


def test_spawn_imported_by_name():
    code = spawned("spawn(worker, args=(args,))").replace("import torch.multiprocessing as mp", "from torch.multiprocessing import spawn")
    assert codes_of(code) == ["REP101"]


@pytest.mark.parametrize(
    "launch",
    [
        # Forked children continue a copy of the seeded parent's RNG state.
        "p = mp.Process(target=worker, args=(0, args))\n        p.start()",
        "mp.start_processes(worker, args=(args,), start_method='fork')",
        "mp.get_context('fork').Process(target=worker, args=(0, args)).start()",
        # Called in the launcher's own process.
        "worker(0, args)",
    ],
)
def test_forked_or_direct_workers_share_the_launchers_seed(launch):
    assert codes_of(spawned(launch)) == []


@pytest.mark.parametrize(
    "worker_seed, module_level",
    [
        ("torch.manual_seed(args.seed + rank)\n        ", ""),
        # Module-level code runs again when the fresh process imports the module.
        ("", "torch.manual_seed(0)"),
    ],
)
def test_a_seed_the_worker_runs_counts(worker_seed, module_level):
    assert codes_of(spawned(worker_seed=worker_seed, module_level=module_level)) == []


def test_a_seed_in_a_helper_module_called_by_the_worker_counts(project):
    root = project({
        "utils/seeding.py": "import torch\ndef seed_all(s):\n    torch.manual_seed(s)\n",
        "train.py": spawned(worker_seed="seed_all(args.seed)\n        ").replace("import argparse\n", "import argparse\n    from utils.seeding import seed_all\n"),
    })
    assert lint_paths([root], Settings(select=("REP101",))).findings == []


@pytest.mark.parametrize(
    "launch",
    [
        # A user's own function named `spawn` runs its argument here.
        "spawn(worker, args)",
        # An object with a `submit` method that is not a process pool.
        "queue = make_queue()\n        queue.submit(worker)",
        # A thread pool runs in the launcher's process.
        "with ThreadPoolExecutor() as pool:\n            pool.submit(worker, 0, args)",
    ],
)
def test_look_alike_launchers_run_in_process(launch):
    code = spawned(launch).replace("import torch.multiprocessing as mp", "from concurrent.futures import ThreadPoolExecutor\n    def spawn(fn, args):\n        fn(0, args)")
    assert codes_of(code) == []


# --- Process pools and job executors -----------------------------------------------------------------

POOL = """
    import random
    from concurrent.futures import ProcessPoolExecutor
    from multiprocessing import Pool

    def augment(path):
        {seed}return random.random()

    if __name__ == "__main__":
        random.seed(0)
        {launch}
"""


@pytest.mark.parametrize(
    "launch",
    [
        "with ProcessPoolExecutor(4) as pool:\n            list(pool.map(augment, ['a', 'b']))",
        "pool = Pool(4)\n        pool.imap_unordered(augment, ['a'])",
        "ProcessPoolExecutor().submit(augment, 'a')",
        "import multiprocessing as mp\n        mp.get_context('fork').Pool(2).map(augment, ['a'])",
    ],
)
def test_pool_tasks_are_not_seeded_by_the_launcher(launch):
    [finding] = lint(POOL.replace("{seed}", "").replace("{launch}", launch), "REP102")
    assert "`augment` (pool task, line " in finding.message
    assert "first draw: line 7 (random.random)" in finding.message


def test_pool_task_that_seeds_itself():
    code = POOL.replace("{seed}", "random.seed(hash(path) % 2**32)\n        ").replace("{launch}", "Pool(2).map(augment, ['a'])")
    assert codes_of(code, "REP102") == []


SUBMITIT = {
    "main_train.py": """
        import torch

        def train(args):
            {seed}model = torch.nn.Linear(2, 2).cuda()
            model(torch.ones(2)).sum().backward()

        if __name__ == "__main__":
            train(None)
    """,
    "run_with_submitit.py": """
        import submitit

        class Trainer:
            def __init__(self, args):
                self.args = args

            def __call__(self):
                import main_train
                main_train.train(self.args)

        if __name__ == "__main__":
            executor = submitit.AutoExecutor(folder="logs")
            trainer = Trainer(None)
            job = executor.submit(trainer)
    """,
}


def test_submitit_job_runs_the_callable_objects_call_elsewhere(project):
    root = project({path: text.replace("{seed}", "") for path, text in SUBMITIT.items()})
    found = lint_paths([root], Settings(select=("REP101", "REP302"))).findings
    by_file = sorted((finding.path.rpartition("/")[2], finding.code) for finding in found)
    assert by_file == [("main_train.py", "REP101"), ("main_train.py", "REP302"), ("run_with_submitit.py", "REP101"), ("run_with_submitit.py", "REP302")]
    launcher = next(finding for finding in found if finding.path.endswith("run_with_submitit.py") and finding.code == "REP101")
    assert "`Trainer.__call__` (pool task, line 15)" in launcher.message
    assert "main_train.py:5 (nn.Linear)" in launcher.message
    # The seed goes where the job starts, before it calls into the training module.
    assert launcher.fix is not None and launcher.fix.edits[-1].content == "        torch.manual_seed(SEED)\n"


def test_submitit_job_seeded_in_the_training_function(project):
    root = project({path: text.replace("{seed}", "torch.manual_seed(0)\n            ") for path, text in SUBMITIT.items()})
    assert [finding.code for finding in lint_paths([root], Settings(select=("REP101",))).findings] == []


# --- REP302 in spawned workers -------------------------------------------------------------------------


def test_determinism_set_by_the_launcher_does_not_reach_a_spawned_worker():
    [finding] = lint(spawned(worker_seed="torch.manual_seed(args.seed)\n        "), "REP302")
    assert "`worker` (fresh process, line 18) runs on CUDA (line 9)" in finding.message


def test_determinism_enabled_in_the_worker():
    seed = "torch.manual_seed(args.seed)\n        torch.use_deterministic_algorithms(True)\n        "
    assert codes_of(spawned(worker_seed=seed), "REP302") == []


# --- Fixes land in the worker --------------------------------------------------------------------------


def test_fix_seeds_the_worker_with_the_seed_it_receives():
    before = textwrap.dedent(spawned())
    after = before.replace(
        "    model = torch.nn.Linear(2, 2).cuda(rank)",
        "    torch.manual_seed(args.seed)\n    model = torch.nn.Linear(2, 2).cuda(rank)",
    )
    assert_fix(before, after, "REP101", unsafe=True)


def test_fix_in_a_worker_without_a_seed_in_scope_adds_a_constant():
    before = """\
        import random
        from multiprocessing import Pool


        def augment(path):
            \"\"\"Jitter one file.\"\"\"
            global calls  # counted
            return random.random()


        if __name__ == "__main__":
            Pool(2).map(augment, ["a"])
        """
    after = """\
        import random
        from multiprocessing import Pool

        SEED = 0


        def augment(path):
            \"\"\"Jitter one file.\"\"\"
            global calls  # counted
            random.seed(SEED)
            return random.random()


        if __name__ == "__main__":
            Pool(2).map(augment, ["a"])
        """
    assert_fix(before, after, "REP102", unsafe=True)


def test_rep302_fix_lands_in_the_worker():
    before = textwrap.dedent(spawned(worker_seed="torch.manual_seed(args.seed)\n        "))
    after = before.replace(
        "    torch.manual_seed(args.seed)\n    model",
        "    torch.manual_seed(args.seed)\n    torch.use_deterministic_algorithms(True)\n    torch.backends.cudnn.deterministic = True\n    model",
    )
    assert_fix(before, after.replace("import torch\n", 'import os\n\nos.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")\nimport torch\n', 1), "REP302", unsafe=True)


def test_a_launcher_that_spawns_its_worker_or_calls_it_gets_one_rep302(project):
    # hifi-gan: mp.spawn(train) on several GPUs, train(0) on one; the program runs on CUDA either way.
    code = (
        "import torch\nimport torch.multiprocessing as mp\n\ndef train(rank):\n    torch.manual_seed(0)\n"
        "    model = torch.nn.Linear(2, 2).cuda(rank)\n    model(torch.ones(2).cuda(rank)).sum().backward()\n\n"
        "def main():\n    if torch.cuda.device_count() > 1:\n        mp.spawn(train, nprocs=2)\n    else:\n        train(0)\n\n"
        "if __name__ == '__main__':\n    main()\n"
    )
    [finding] = lint_paths([project({"train.py": code})], Settings(select=("REP302",))).findings
    assert "`train` (fresh process, line 11) runs on CUDA" in finding.message


def test_worker_defined_in_another_module_gets_no_fix(project):
    root = project({
        "workers.py": "import torch\ndef worker(rank):\n    torch.nn.Linear(2, 2)(torch.ones(2)).sum().backward()\n",
        "train.py": "import torch\nimport torch.multiprocessing as mp\nfrom workers import worker\nif __name__ == '__main__':\n    torch.manual_seed(0)\n    mp.spawn(worker, nprocs=2)\n",
    })
    [finding] = lint_paths([root], Settings(select=("REP101",))).findings
    assert finding.path.endswith("train.py") and finding.fix is None
    assert "`worker` (fresh process, line 6) never seeds torch" in finding.message


def test_a_worker_started_before_the_seed_does_not_draw_from_the_launchers_rng():
    code = (
        "import torch\nimport torch.multiprocessing as mp\ndef worker(rank):\n    torch.manual_seed(rank)\n    torch.nn.Linear(2, 2)\n"
        "def main():\n    mp.spawn(worker, nprocs=2)\n    torch.manual_seed(0)\n    torch.randn(2)\n"
    )
    assert codes_of(code, "REP105") == []
    assert codes_of(code.replace("mp.spawn(worker, nprocs=2)", "worker(0)"), "REP105") == ["REP105"]


def test_a_launcher_that_only_spawns_trainers_is_judged_by_its_workers():
    # The launcher looks at the GPUs to size the job; the kernels run in the workers.
    code = spawned(worker_seed="torch.manual_seed(args.seed)\n        ").replace(
        "torch.use_deterministic_algorithms(True)\n        mp.spawn", "n = torch.cuda.device_count()\n        mp.spawn"
    )
    [finding] = lint(code, "REP302")
    assert "`worker` (fresh process, line " in finding.message
