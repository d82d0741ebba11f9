"""The floor for any LibCST linter: `libcst.parse_module` on every .py file of a tree, on N processes.

    python benchmarks/parse_all.py TREE N
"""

from __future__ import annotations

import multiprocessing
import sys
from pathlib import Path

import libcst


def _parse(path: Path) -> None:
    try:
        libcst.parse_module(path.read_text(encoding="utf-8"))
    except Exception:  # noqa: BLE001 - a file LibCST rejects costs what it cost
        pass


if __name__ == "__main__":
    paths = sorted(Path(sys.argv[1]).rglob("*.py"))
    processes = int(sys.argv[2])
    if processes == 1:
        for path in paths:
            _parse(path)
    else:
        with multiprocessing.get_context("spawn").Pool(processes) as pool:
            pool.map(_parse, paths, chunksize=4)
