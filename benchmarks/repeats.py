"""Time `check` and `check --fix --unsafe-fixes` on one module that repeats one statement N times,
then 2N times, for each statement below; a ratio well above 2 is time that grows faster than the
module (what the analysis asks of the whole module at each repeat).

    python benchmarks/repeats.py [--repeats 800] [--timeout 120] [--max-rss-mb 4096] [NAME ...]

Each run is `python -m repro_lint check --no-cache` in a temporary project holding only that
module, in a fresh process. Rows print as they finish: wall seconds for N and 2N, their ratio, peak
memory at 2N, and FAULT where a run failed (a traceback, an internal error, killed for time or
memory). Exits 1 when a run failed.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from measure import Measurement, measure

_HEAD = (
    "import argparse\nimport random\n\nimport numpy as np\nimport torch\nimport torch.nn.functional as F\n"
    "from sklearn.model_selection import train_test_split\nfrom torch.utils.data import DataLoader, random_split\n\n"
)
# One statement (or two) per rule family, each of which some rule reports or a fix rewrites.
STATEMENTS = {
    "random draw": "random.random()\n",
    "numpy draw": "np.random.rand(3)\n",
    "torch draw": "x = torch.randn(3)\n",
    "loader": "loader = DataLoader(ds, shuffle=True, num_workers=4)\n",
    "train_test_split": "a, b = train_test_split(X, y)\n",
    "random_split": "p, q = random_split(ds, [1, 2])\n",
    "warn only": "torch.use_deterministic_algorithms(True, warn_only=True)\n",
    "set iteration": "for k in set(names):\n    print(k)\n",
    "set indexed": "first = list(set(names))[0]\n",
    "checkpoint": "torch.save({'model': model.state_dict()}, path)\n",
    "Random()": "r = random.Random()\n",
    "cudnn.deterministic": "torch.backends.cudnn.deterministic = False\n",
    "attention": "out = F.scaled_dot_product_attention(q, k, v)\n",
    "seed option": "parser.add_argument('--seed', type=int, default=None)\n",
    "seeding": "torch.manual_seed(args.seed)\n",
    "cudnn.benchmark": "torch.backends.cudnn.benchmark = flag\n",
    "hash": "h = hash(name)\n",
    "resume": "state = torch.load(path)\nmodel.load_state_dict(state['model'])\n",
    "training step": "loss.backward()\noptimizer.step()\n",
}


def _run(code: str, options: list[str], timeout: float, max_rss_mb: float) -> tuple[Measurement, bool]:
    """The run's measurement, and whether it failed."""
    folder = Path(tempfile.mkdtemp(prefix="repro-lint-repeats-"))
    try:
        (folder / "pyproject.toml").write_text("[project]\nname = 'repeats'\n")
        (folder / "train.py").write_text(code)
        command = [sys.executable, "-m", "repro_lint", "check", "--no-cache", "--exit-zero", "--quiet", *options, "."]
        with tempfile.TemporaryFile() as output:
            run = measure(command, folder, stdout=output, stderr=subprocess.STDOUT, timeout=timeout, max_rss_mb=max_rss_mb)
            output.seek(0)
            said = output.read()
        failed = run.killed is not None or run.returncode != 0 or b"Traceback" in said or b"internal error" in said
        return run, failed
    finally:
        shutil.rmtree(folder)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("names", nargs="*", help="statements to run (default: all)", metavar="NAME")
    parser.add_argument("--repeats", type=int, default=800, help="N (default 800)")
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds per run (default 120)")
    parser.add_argument("--max-rss-mb", type=float, default=4096.0, help="memory per run (default 4096)")
    options = parser.parse_args()
    unknown = set(options.names) - STATEMENTS.keys()
    if unknown:
        parser.error(f"unknown statements: {', '.join(sorted(unknown))} (known: {', '.join(STATEMENTS)})")
    faults = 0
    print(f"| statement | mode | N={options.repeats} s | 2N s | ratio | peak MB at 2N | fault |")
    print("|---|---|---|---|---|---|---|")
    for name, statement in STATEMENTS.items():
        if options.names and name not in options.names:
            continue
        for mode, flags in (("check", []), ("fix", ["--fix", "--unsafe-fixes"])):
            once, failed_once = _run(_HEAD + statement * options.repeats, flags, options.timeout, options.max_rss_mb)
            twice, failed_twice = _run(_HEAD + statement * 2 * options.repeats, flags, options.timeout, options.max_rss_mb)
            fault = failed_once or failed_twice
            faults += fault
            ratio = twice.seconds / once.seconds
            print(f"| {name} | {mode} | {once.seconds:.2f} | {twice.seconds:.2f} | {ratio:.1f} | {twice.peak_mb:.0f} | {'FAULT' if fault else ''} |", flush=True)
    return 1 if faults else 0


if __name__ == "__main__":
    sys.exit(main())
