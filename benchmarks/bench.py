"""Time repro-lint against references measured in the same run, on trees you provide.

    python benchmarks/bench.py TREE [TREE ...] --flake8 FLAKE8 --torchfix FLAKE8_WITH_TORCHFIX
        [--jobs 2] [--repeat 3] [--warm-repeat 5] [--scaling] [--skip-warm]

Each tree is copied to a temporary folder first (the cache and the one-file edit never touch it), and
repro-lint's modules are compiled to bytecode first, as an install does.
Measured per tree, every command in a fresh process, median of --repeat runs (the cold runs, the
references and the cold pre-commit run, which take a minute each on a large tree) or of
--warm-repeat runs (the runs with a cache, which take seconds and vary most: one slow run decided a
row of --repeat 1):
  repro-lint cold       `check` on the tree after `repro-lint clean` (--jobs processes)
  parse                 libcst.parse_module on every .py file on --jobs processes (parse_all.py)
  flake8                FLAKE8 with its default plugins only (give a venv holding just flake8, since
                        repro-lint registers a flake8 plugin in its own environment)
  torchfix              FLAKE8_WITH_TORCHFIX --select TOR (a venv with `pip install torchfix`)
  warm, unchanged       `check` again with the cache filled
  warm, comment added   the same after appending a comment to one file (a new one each run): the
                        file keeps its facts, and the last run's project pass is reused
  warm, line inserted   the same after inserting comment lines at the top of that file (one more
                        each run): every line in it moves; the project pass is reused unless a
                        program finding is in that file or names one of its lines
  warm, call added      the same after appending a call of a function the project does not define
                        (another each run): a call the project pass cannot see, which reuses it
  warm, import added    the same after appending an import of a module the project does not hold
                        (another each run): an import the project pass cannot see, which reuses it
  warm, function added  the same after appending a function (another each run) that nothing calls
                        and that calls nothing: one the project pass cannot see, which reuses it
  warm, inert function called
                        the same after appending a function that calls another one it appends,
                        which calls nothing, and a call of the first (others each run): the calls run
                        nothing the pass sees, which reuses it
  warm, function called the same after appending the same two functions where the second seeds
                        Python's RNG (`random.seed`), and a call of the first: the project pass sees
                        an event in what the call runs, and runs again
  warm, torch seeded after a call
                        the same where the second prints, then seeds torch (`torch.manual_seed`,
                        which REP105 judges by what the calls before it run)
  warm, inert function called from another module
                        the same after appending a function that calls nothing to a module the file
                        imports names from, and to the file that import of it and a call (others
                        each run): the pass cannot see those, and is reused
  pre-commit            `check ONE_FILE` from the tree's root, cold: what a pre-commit hook pays
                        the first time
  pre-commit after an audit
                        `check ONE_FILE` after `check .` filled the cache and the file was edited
                        as above: what a pre-commit hook pays on a commit after an audit (both
                        files, for the edit across modules)
  tree + copy           (--scaling) cold `check` on a folder holding the tree twice
Peak memory is the largest resident set of any one process of the command (ru_maxrss of children).
The cold run and its references take turns, run after run; every row gives its median wall time as
a ratio to the parse's and to flake8's on the same tree in the same run, the units of issue 26's
goals (cold <= 0.35x the parse, pre-commit cold <= 0.12x, a function called after an audit <= 0.05x,
pytorch/examples cold <= 1.0x flake8).

The script fetches nothing. Get the trees with
  pip download --no-deps --no-binary :all: transformers==5.23.0   (then unpack the .tar.gz)
  git clone https://github.com/pytorch/examples
and the references with
  python -m venv /tmp/flake8-venv && /tmp/flake8-venv/bin/pip install flake8
  python -m venv /tmp/torchfix-venv && /tmp/torchfix-venv/bin/pip install torchfix
"""

from __future__ import annotations

import argparse
import compileall
import importlib.util
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from measure import measure

HERE = Path(__file__).resolve().parent
PARSE = "parse"
FLAKE8 = "flake8 (default plugins)"


@dataclass
class Row:
    tree: str
    files: int
    name: str
    seconds: float
    cpu: float
    peak_mb: float


Run = tuple[float, float, float]  # wall seconds, CPU seconds of all its processes, peak MB


def _measure(command: list[str], cwd: Path) -> Run:
    run = measure(command, cwd)
    return run.seconds, run.cpu, run.peak_mb


def _median(runs: list[Run]) -> Run:
    return (
        statistics.median(run[0] for run in runs),
        statistics.median(run[1] for run in runs),
        max(run[2] for run in runs),
    )


def _repro_lint(*arguments: str) -> list[str]:
    return [sys.executable, "-m", "repro_lint", *arguments]


def _check(jobs: int, *targets: str) -> list[str]:
    return _repro_lint("check", "--jobs", str(jobs), "--exit-zero", "--quiet", *targets)


def _clean(tree: Path) -> None:
    subprocess.run(_repro_lint("clean", str(tree)), capture_output=True, check=True)


def _one_file(tree: Path) -> Path:
    """A file of median size: what a typical commit touches."""
    files = sorted(tree.rglob("*.py"), key=lambda path: (path.stat().st_size, path.as_posix()))
    return files[len(files) // 2]


def _called_chain(number: int, step: str) -> bytes:
    """Two functions, the first calling the second, whose body is `step`, and a call of the first."""
    return (
        f"\n\ndef benchmark_edit_{number}():\n    benchmark_step_{number}()\n\n\n"
        f"def benchmark_step_{number}():\n    {step}\n\n\nbenchmark_edit_{number}()\n"
    ).encode()


_CLASS = re.compile(rb"^class \w+[^\n]*:[ \t]*\n(?=([ \t]+)\S)", re.MULTILINE)


def _methods_added(text: bytes, number: int) -> bytes:
    """Two methods, the first calling the second through `self.`, first in the file's first class
    (with a one-line header); where it has none, in a class appended (which the pass sees)."""
    header = _CLASS.search(text)
    indent = header.group(1) if header else b"    "
    methods = (
        f"def benchmark_edit_{number}(self):\n    return self.benchmark_step_{number}()\n\n"
        f"def benchmark_step_{number}(self):\n    return {number}\n\n"
    ).encode()
    methods = b"".join(indent + line if line.strip() else line for line in methods.splitlines(keepends=True))
    if header is None:
        return text + f"\n\nclass BenchmarkEdit{number}:\n".encode() + methods
    return text[: header.end()] + methods + text[header.end() :]


# The one-file edits, each different from the last run's text: a comment appended keeps the file's
# facts; lines inserted first move every line in it (one more each run); a call of a function the
# project does not define, an import of a module it does not hold, or a function nothing calls
# adds something the project pass cannot see, as does a function that calls nothing added with a call
# of it, or two of them, one calling the other, or two methods alike in a class. These reuse the last
# run's project pass. The same two functions where the second seeds, and called, change what the pass
# sees, and it runs again; seeding torch after a call, REP105's place.
EDITS: dict[str, Callable[[bytes, int], bytes]] = {
    "comment added": lambda text, number: text + f"\n# benchmark edit {number}\n".encode(),
    "line inserted": lambda text, number: b"# benchmark edit\n" * (number + 1) + text,
    "call added": lambda text, number: text + f"\nbenchmark_edit_{number}()\n".encode(),
    "import added": lambda text, number: text + f"\nimport benchmark_edit_{number}\n".encode(),
    "function added": lambda text, number: text + f"\n\ndef benchmark_edit_{number}():\n    pass\n".encode(),
    "inert function called": lambda text, number: text + _called_chain(number, "pass"),
    "methods added": _methods_added,
    "function called": lambda text, number: text + _called_chain(number, f"import random\n\n    random.seed({number})"),
    "torch seeded after a call": lambda text, number: text
    + _called_chain(number, f"import torch\n\n    print({number})\n    torch.manual_seed({number})"),
}


ACROSS = "inert function called from another module"
_FROM_IMPORT = re.compile(r"^from ([\w.]+) import", re.MULTILINE)


def _imported_from(tree: Path, changed: Path) -> tuple[Path, str] | None:
    """A module of the tree that `changed` imports names from at module level (`from X import y`),
    with the file's own spelling of it: where the edit across modules defines its function."""
    for spec in _FROM_IMPORT.findall(changed.read_text(encoding="utf-8", errors="replace")):
        parts = [part for part in spec.lstrip(".").split(".") if part]
        dots = len(spec) - len(spec.lstrip("."))
        if dots > len(changed.relative_to(tree).parts) - 1:
            continue  # above the tree
        bases = [changed.parents[dots - 1]] if dots else [tree, tree / "src", changed.parent]
        for base in bases:
            for candidate in (base.joinpath(*parts).with_suffix(".py"), base.joinpath(*parts, "__init__.py")):
                if parts and candidate.is_file() and candidate != changed:
                    return candidate, spec
    return None


class Bench:
    def __init__(self, jobs: int, repeat: int, warm_repeat: int, flake8: str | None, torchfix: str | None) -> None:
        self.jobs, self.repeat, self.warm_repeat, self.flake8, self.torchfix = jobs, repeat, warm_repeat, flake8, torchfix
        self.rows: list[Row] = []

    def _add(self, tree: Path, files: int, name: str, runs: list[Run]) -> None:
        seconds, cpu, peak = _median(runs)
        self.rows.append(Row(tree.name, files, name, seconds, cpu, peak))
        print(f"  {name}: {seconds:.2f} s, {cpu:.2f} CPU s, {peak:.0f} MB", file=sys.stderr, flush=True)

    def _cold(self, tree: Path) -> list[Run]:
        runs = []
        for _ in range(self.repeat):
            _clean(tree)
            runs.append(_measure(_check(self.jobs, "."), tree))
        return runs

    def tree(self, original: Path, scaling: bool, warm: bool) -> None:
        with tempfile.TemporaryDirectory(prefix="repro-lint-bench-") as scratch:
            tree = Path(scratch) / original.name
            shutil.copytree(original, tree, symlinks=True, ignore=shutil.ignore_patterns(".repro_lint_cache"))
            files = sum(1 for _ in tree.rglob("*.py"))
            print(f"{original.name}: {files} files", file=sys.stderr, flush=True)
            # The cold run and its references take turns, so that a slower minute of the machine
            # weighs on all of them alike.
            cases: dict[str, tuple[Callable[[], None], list[str]]] = {
                "repro-lint cold": (lambda: _clean(tree), _check(self.jobs, ".")),
                PARSE: (lambda: None, [sys.executable, str(HERE / "parse_all.py"), ".", str(self.jobs)]),
            }
            if self.flake8:
                cases[FLAKE8] = (lambda: None, [self.flake8, "--exit-zero", "-q", "--jobs", str(self.jobs), "."])
            if self.torchfix:
                cases["torchfix (flake8 --select TOR)"] = (
                    lambda: None, [self.torchfix, "--select", "TOR", "--exit-zero", "-q", "--jobs", str(self.jobs), "."]
                )
            runs: dict[str, list[Run]] = {name: [] for name in cases}
            for _ in range(self.repeat):
                for name, (prepare, command) in cases.items():
                    prepare()
                    runs[name].append(_measure(command, tree))
            for name in cases:
                self._add(tree, files, name, runs[name])
            if warm:
                self._warm(tree, files)
            if scaling:
                double = Path(scratch) / f"{original.name}-twice"
                double.mkdir()
                shutil.move(tree, double / "first")
                shutil.copytree(double / "first", double / "second", symlinks=True)
                self._add(double, 2 * files, "tree + copy, cold", self._cold(double))

    def _warm(self, tree: Path, files: int) -> None:
        _clean(tree)
        _measure(_check(self.jobs, "."), tree)  # fills the cache
        self._add(tree, files, "warm, unchanged", [_measure(_check(self.jobs, "."), tree) for _ in range(self.warm_repeat)])
        changed = _one_file(tree)
        relative = changed.relative_to(tree).as_posix()
        for edit in EDITS:
            self._add(tree, files, f"warm, {edit}", self._edited(tree, changed, EDITS[edit], "."))
        source = _imported_from(tree, changed)
        if source is not None:
            self._add(tree, files, f"warm, {ACROSS}", self._edited_across(tree, changed, *source, "."))
        runs = []
        for _ in range(self.repeat):
            _clean(tree)
            runs.append(_measure(_check(self.jobs, relative), tree))
        self._add(tree, files, f"pre-commit, cold ({relative})", runs)
        _measure(_check(self.jobs, "."), tree)  # an audit fills the cache
        for edit in EDITS:
            self._add(tree, files, f"pre-commit after an audit, {edit}", self._edited(tree, changed, EDITS[edit], relative))
        if source is not None:
            both = (relative, source[0].relative_to(tree).as_posix())
            self._add(tree, files, f"pre-commit after an audit, {ACROSS}", self._edited_across(tree, changed, *source, *both))

    def _edited(self, tree: Path, changed: Path, edit: Callable[[bytes, int], bytes], target: str) -> list[Run]:
        """`check TARGET` after each of --warm-repeat edits of `changed` (a new text each time)."""
        original = changed.read_bytes()
        runs = []
        try:
            for number in range(self.warm_repeat):
                changed.write_bytes(edit(original, number))
                runs.append(_measure(_check(self.jobs, target), tree))
        finally:
            changed.write_bytes(original)
        return runs

    def _edited_across(self, tree: Path, changed: Path, defining: Path, spec: str, *targets: str) -> list[Run]:
        """`check TARGETS` after each of --warm-repeat edits that append a function calling nothing to
        `defining` and, to `changed`, `from SPEC import` of it and a call."""
        originals = changed.read_bytes(), defining.read_bytes()
        runs = []
        try:
            for number in range(self.warm_repeat):
                name = f"benchmark_across_{number}"
                defining.write_bytes(originals[1] + f"\n\ndef {name}():\n    pass\n".encode())
                changed.write_bytes(originals[0] + f"\n\nfrom {spec} import {name}\n\n{name}()\n".encode())
                runs.append(_measure(_check(self.jobs, *targets), tree))
        finally:
            changed.write_bytes(originals[0])
            defining.write_bytes(originals[1])
        return runs

    def table(self) -> str:
        lines = [
            "| tree | files | command | median wall s | median CPU s | peak MB per process | ÷ parse (wall) | ÷ flake8 (wall) | ÷ the single tree's cold run (wall, CPU) |",
            "|---|---|---|---|---|---|---|---|---|",
        ]
        by_tree = {(row.tree, row.name): row for row in self.rows}
        for row in self.rows:
            ratios = []
            for reference in (PARSE, FLAKE8):
                base = by_tree.get((row.tree.removesuffix("-twice"), reference))
                ratios.append(f"{row.seconds / base.seconds:.2f}" if base is not None and row.name != reference else "")
            # --scaling: the tree twice against the tree once, cold.
            single = by_tree.get((row.tree.removesuffix("-twice"), "repro-lint cold")) if row.tree.endswith("-twice") else None
            ratios.append(f"{row.seconds / single.seconds:.2f}, {row.cpu / single.cpu:.2f}" if single is not None else "")
            lines.append(f"| {row.tree} | {row.files} | {row.name} | {row.seconds:.2f} | {row.cpu:.2f} | {row.peak_mb:.0f} | {' | '.join(ratios)} |")
        return "\n".join(lines)


def _version(flake8: str | None) -> str:
    if flake8 is None:
        return "not measured"
    return subprocess.run([flake8, "--version"], capture_output=True, text=True).stdout.strip().replace("\n", " ")


def _compile_like_an_install() -> None:
    """Compile repro-lint's modules as `pip install` does: run from a checkout with
    PYTHONDONTWRITEBYTECODE set, each start compiled them all again (0.07 s of a 0.4 s warm run),
    which no installed copy pays."""
    spec = importlib.util.find_spec("repro_lint")
    if spec is None or spec.origin is None:
        sys.exit("repro_lint is not importable: install it, or set PYTHONPATH to a checkout")
    compileall.compile_dir(Path(spec.origin).parent, quiet=1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("trees", nargs="+", type=Path)
    parser.add_argument("--jobs", type=int, default=2, help="processes for repro-lint, parse and flake8 (default 2)")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each cold case and reference (default 3)")
    parser.add_argument("--warm-repeat", type=int, default=5, help="runs of each case with a cache (default 5)")
    parser.add_argument("--flake8", help="flake8 executable of an environment with only flake8 installed")
    parser.add_argument("--torchfix", help="flake8 executable of an environment with torchfix installed")
    parser.add_argument("--scaling", action="store_true", help="also time a folder holding the tree twice")
    parser.add_argument("--skip-warm", action="store_true", help="skip the warm and pre-commit measurements")
    args = parser.parse_args()
    for tree in args.trees:
        if not tree.is_dir():
            parser.error(f"{tree}: not a folder")
    _compile_like_an_install()
    if min(args.repeat, args.warm_repeat) < 1:
        parser.error("--repeat and --warm-repeat take 1 or more")
    bench = Bench(args.jobs, args.repeat, args.warm_repeat, args.flake8, args.torchfix)
    for tree in args.trees:
        bench.tree(tree.resolve(), args.scaling, not args.skip_warm)
    print(bench.table())
    print(f"\nmedian of {args.repeat} runs of each cold case and reference, of {args.warm_repeat} of each case with a cache; --jobs {args.jobs}, {os.cpu_count()} cores")
    print(f"flake8: {_version(args.flake8)}")
    print(f"torchfix: {_version(args.torchfix)}")


if __name__ == "__main__":
    main()
