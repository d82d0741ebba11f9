"""Time repro-lint against references measured in the same run, on trees you provide.

    python benchmarks/bench.py TREE [TREE ...] [--repeat 3]

References, each run in a fresh process like repro-lint itself:
  parse   libcst.parse_module on every .py file of the tree (what any LibCST linter pays at least)
  flake8  `flake8` with its default plugins, when installed

The script fetches nothing. Get trees with, for example,
`pip download --no-deps --no-binary :all: transformers==5.23.0` (unpack the sdist) or a clone of
pytorch/examples. It prints, per tree, the median wall time of each command and its ratio to repro-lint.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

_PARSE_ALL = """
import sys
from pathlib import Path
import libcst
for path in sorted(Path(sys.argv[1]).rglob("*.py")):
    try:
        libcst.parse_module(path.read_text(encoding="utf-8"))
    except Exception:
        pass
"""


def _time(command: list[str], repeat: int) -> float:
    runs = []
    for _ in range(repeat):
        start = time.perf_counter()
        subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        runs.append(time.perf_counter() - start)
    return statistics.median(runs)


def _commands(tree: Path) -> dict[str, list[str]]:
    commands = {
        "repro-lint": [sys.executable, "-m", "repro_lint", "check", "--exit-zero", "--quiet", str(tree)],
        "parse": [sys.executable, "-c", _PARSE_ALL, str(tree)],
    }
    if shutil.which("flake8") or _has_module("flake8"):
        commands["flake8"] = [sys.executable, "-m", "flake8", "--exit-zero", "-q", str(tree)]
    return commands


def _has_module(name: str) -> bool:
    return subprocess.run([sys.executable, "-c", f"import {name}"], capture_output=True).returncode == 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("trees", nargs="+", type=Path)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    print(f"{'tree':<28} {'files':>6} {'command':<11} {'median s':>9} {'x repro-lint':>13}")
    for tree in args.trees:
        files = sum(1 for _ in tree.rglob("*.py"))
        timings = {name: _time(command, args.repeat) for name, command in _commands(tree).items()}
        ours = timings["repro-lint"]
        for name, seconds in timings.items():
            print(f"{tree.name[:28]:<28} {files:>6} {name:<11} {seconds:>9.2f} {seconds / ours:>13.2f}")
    print(f"(median of {args.repeat} runs each, {os.cpu_count()} cores)")


if __name__ == "__main__":
    main()
