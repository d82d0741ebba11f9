"""Count the instructions of the per-file analysis after LibCST's parse, against another build.

    python benchmarks/instructions.py TREE [--files 60] [--vs GIT_REF]

Wall-clock pairs on a shared machine move by a tenth from run to run, which hides a change of a few
percent in the analysis of a file. Instruction counts barely do: valgrind's callgrind counts the
instructions a process runs, and for the same build, files and hash seed two counts differ by a few
tenths of a percent on one file, a few hundredths on 60 (memory addresses still differ). A sample of
`--files` Python files of TREE (the same every run) is parsed with LibCST, then analysed with every
default rule, in one process under callgrind; the same process parsing only gives what the start-up
and the parse take, which is subtracted. With `--vs`, the build at that git ref of this repository
(its `repro_lint` package, read with `git archive`) is counted alike, and the ratio printed.
callgrind runs some 50 times slower than the process itself: 60 files take a few minutes a build.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# Run in the child, from the build's folder: `python -c` puts the working folder first on the path,
# so `repro_lint` is the build's, not the one installed.
_CHILD = """
import gc, random, sys
from pathlib import Path
from repro_lint.analysis import python
from repro_lint.analysis.result import ModuleIdentity
from repro_lint.core.settings import Settings
from repro_lint.rules.base import Rule
from repro_lint.rules.registry import REGISTRY

root, count, analyse = Path(sys.argv[1]), int(sys.argv[2]), sys.argv[3] == "analyse"
files = sorted(root.rglob("*.py"))
random.Random(0).shuffle(files)
texts = [(path.relative_to(root).as_posix(), path.read_text(encoding="utf-8", errors="replace")) for path in files[:count]]
settings = Settings()
rules = [rule for code in sorted(settings.enabled_codes) if isinstance(rule := REGISTRY[code], type) and issubclass(rule, Rule)]
trees = {text: python.parse(text) for _, text in texts}
python.parse = trees.__getitem__  # analysed below without parsing again
gc.freeze()
for relative, text in texts if analyse else ():
    python.analyze(text, relative, ModuleIdentity.from_relative_path(relative), rules, settings)
"""
_COLLECTED = re.compile(r"Collected : (\d+)")


def instructions(build: Path, tree: Path, files: int, analyse: bool) -> int:
    """The instructions of the child process run with `build` (a folder holding `repro_lint`)."""
    environment = {**os.environ, "PYTHONHASHSEED": "0"}
    command = ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", sys.executable, "-c", _CHILD]
    arguments = [*command, str(tree.resolve()), str(files), "analyse" if analyse else "parse"]
    result = subprocess.run(arguments, capture_output=True, text=True, env=environment, cwd=build)
    found = _COLLECTED.search(result.stderr)
    if result.returncode != 0 or found is None:
        raise SystemExit(f"the count failed:\n{result.stderr[-2000:]}")
    return int(found.group(1))


def analysis(build: Path, tree: Path, files: int) -> int:
    """The instructions of analysing the sample after its parse."""
    return instructions(build, tree, files, analyse=True) - instructions(build, tree, files, analyse=False)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("tree", type=Path)
    parser.add_argument("--files", type=int, default=60, help="Python files sampled from TREE (default 60)")
    parser.add_argument("--vs", help="a git ref of this repository to count too, as the reference")
    args = parser.parse_args()
    if shutil.which("valgrind") is None:
        parser.error("valgrind is not installed")
    here = analysis(ROOT, args.tree, args.files)
    print(f"this build: {here:,} instructions analysing {args.files} files of {args.tree.name} after their parse")
    if args.vs:
        with tempfile.TemporaryDirectory() as folder:
            archive = subprocess.run(["git", "-C", str(ROOT), "archive", args.vs, "repro_lint"], capture_output=True, check=True).stdout
            subprocess.run(["tar", "-x", "-C", folder], input=archive, check=True)
            reference = analysis(Path(folder), args.tree, args.files)
        print(f"{args.vs}: {reference:,} instructions; this build / {args.vs}: {here / reference:.3f}")


if __name__ == "__main__":
    main()
