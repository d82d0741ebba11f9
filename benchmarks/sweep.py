"""Audit real repositories with repro-lint and list every fault it shows on them.

    python benchmarks/sweep.py REPO [REPO ...] [--fix-campaign] [--jobs 2] [--timeout 600]
        [--max-rss-mb 4096] [--repro-lint CMD] [--details FILE]

Each REPO is a folder holding a repository. From inside it, `check --no-cache --output-format json
--show-traceback` gives a row: the files it lints (Python, notebooks, launch scripts, configs, as
repro_lint's discovery finds them), wall time, peak memory per process (the largest resident set of
the main process or any worker, as benchmarks/bench.py measures it), findings, files skipped by
design (`warning: repro-lint skipped`), and internal errors. An internal error is an
`error: repro-lint failed on PATH` line on stderr, or else a run that exits with a code other than
0 and 1, prints a traceback or no JSON report; a run killed past --timeout seconds, or once its
processes hold more than --max-rss-mb together, counts as one too.

With --fix-campaign, on a copy of the folder (the folder itself is never written):
`check --fix --unsafe-fixes --no-cache`, and for each file it changed, whether the file no longer
compiles (a notebook: any of its Python code cells, IPython lines replaced by `pass`) or has a new
pyflakes "undefined name" or "local variable referenced before assignment"; then the same command
again, and each file it changes again (a fix that is not idempotent).

Prints a Markdown table (a row per repository and a totals row); --details FILE writes every fault
as JSON (repo, file, kind, stage, message). Exits 1 when any fault is found, so it can gate.
"""

from __future__ import annotations

import argparse
import ast
import bisect
import difflib
import hashlib
import json
import os
import re
import shlex
import shutil
import stat
import sys
import tempfile
from collections import defaultdict
from dataclasses import asdict, dataclass, field
from pathlib import Path

from measure import Measurement, measure
from pyflakes import checker, messages

_ERROR = re.compile(r"^error: repro-lint failed on (.+?): (.*)$")
_SKIPPED = "warning: repro-lint skipped "
_TRACEBACK = "Traceback (most recent call last):"
_EXCERPT_LINES = 12  # of a traceback or stderr: its last frames and the exception
_UNDEFINED = (messages.UndefinedName, messages.UndefinedLocal)
# Notebooks, as repro-lint reads them (repro_lint/sources/notebook.py): cells under a cell magic
# other than these are another language; IPython lines (`%magic`, `!cmd`, `x = !cmd`, `obj?`) are
# not Python.
_PYTHON_CELL_MAGICS = frozenset({"capture", "debug", "prun", "pypy", "python", "python3", "time", "timeit"})
_IPYTHON_LINE = re.compile(
    r"^([ \t]*)(?:%|!(?!=)|[\w.]+(?:[ \t]*,[ \t]*[\w.]+)*[ \t]*=[ \t]*[!%]|\?{1,2}[\w.*]|[\w.*\[\]()]+\?{1,2}[ \t]*$)"
)


@dataclass(frozen=True)
class Limits:
    timeout: float
    max_rss_mb: float


@dataclass(frozen=True)
class Fault:
    repo: str
    file: str  # relative to the repository; "" where the run as a whole failed
    kind: str  # internal error, no longer compiles, new undefined name, fixed again
    stage: str  # check, fix, fix again
    message: str


@dataclass
class Row:
    repo: str
    files: int
    seconds: float = 0.0
    peak_mb: float = 0.0
    findings: int | None = None
    skipped: int = 0
    fix_seconds: float | None = None
    fixed: int | None = None
    faults: list[Fault] = field(default_factory=list)


def _run(command: list[str], cwd: Path, limits: Limits) -> tuple[Measurement, str, str]:
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        run = measure(command, cwd, out, err, limits.timeout, limits.max_rss_mb)
        out.seek(0)
        err.seek(0)
        return run, out.read().decode(errors="replace"), err.read().decode(errors="replace")


def _tail(lines: list[str]) -> str:
    return "\n".join(lines[-_EXCERPT_LINES:])


def _run_faults(repo: str, stage: str, run: Measurement, stdout: str, stderr: str) -> tuple[list[Fault], list | None, int]:
    """The run's internal errors, its findings (None without a JSON report) and its skipped files."""
    if run.killed:
        limit = "--timeout" if run.killed == "timeout" else "--max-rss-mb"
        return [Fault(repo, "", "internal error", stage, f"killed past {limit} after {run.seconds:.0f} s")], None, 0
    faults, stray, skipped = [], [], 0
    body: list[str] | None = None  # the traceback lines of the last error line
    for line in stderr.splitlines():
        if match := _ERROR.match(line):
            body = []
            faults.append((match[1], match[2], body))
        elif line.startswith(("error: ", "warning: ", "hint: ")):
            body = None
            skipped += line.startswith(_SKIPPED)
        elif body is not None:
            body.append(line)
        else:
            stray.append(line)
    found = [Fault(repo, path, "internal error", stage, "\n".join([summary, _tail(lines)]).strip()) for path, summary, lines in faults]
    try:
        findings = json.loads(stdout)
    except ValueError:
        findings = None
    if run.returncode not in (0, 1, 2) or (run.returncode == 2 and not faults) or findings is None or _TRACEBACK in stray:
        report = "no JSON report, " if findings is None else ""
        found.append(Fault(repo, "", "internal error", stage, f"exit code {run.returncode}, {report}stderr ends:\n{_tail(stray)}"))
    return found, findings, skipped


def _linted_files(repo: Path) -> int:
    from repro_lint.engine.config import load_settings
    from repro_lint.engine.discovery import discover

    return len(discover([repo], load_settings(None, repo)))


def _writable(tree: Path) -> None:
    for folder, _, names in os.walk(tree):
        for path in (Path(folder), *(Path(folder, name) for name in names)):
            if not path.is_symlink():
                path.chmod(path.stat().st_mode | stat.S_IWUSR)


def _digests(tree: Path) -> dict[str, bytes]:
    found = {}
    for folder, _, names in os.walk(tree):
        for name in names:
            path = Path(folder, name)
            if not path.is_symlink():
                found[path.relative_to(tree).as_posix()] = hashlib.blake2b(path.read_bytes()).digest()
    return found


def _cells(raw: bytes) -> list[str] | None:
    """A notebook's Python code cells, IPython lines replaced by `pass`; None if it is not one."""
    try:
        cells = json.loads(raw)["cells"]
        sources = ["".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"] for cell in cells if cell["cell_type"] == "code"]
    except (ValueError, KeyError, TypeError):
        return None
    python = []
    for source in sources:
        lines = source.split("\n")
        if lines[0].startswith("%%") and lines[0][2:].split(" ")[0].strip() not in _PYTHON_CELL_MAGICS:
            python.append("")  # another language; kept so that cells keep their numbers
            continue
        python.append("\n".join(match[1] + "pass" if (match := _IPYTHON_LINE.match(line)) else line for line in lines))
    return python


def _compile_error(code: str | bytes, name: str) -> str | None:
    try:
        compile(code, name, "exec", dont_inherit=True)
    except (SyntaxError, ValueError) as error:
        return f"{type(error).__name__}: {error}"
    return None


def _compile_faults(original: bytes, fixed: bytes, name: str) -> list[str]:
    """Why the fixed file no longer compiles, where the original did (a message per cell)."""
    if not name.endswith(".ipynb"):
        return [error] if _compile_error(original, name) is None and (error := _compile_error(fixed, name)) else []
    before, after = _cells(original), _cells(fixed)
    if before is None:
        return []
    if after is None or len(after) != len(before):
        return ["not a notebook with the same code cells any more"]
    return [
        f"code cell {number}: {error}"
        for number, (old, new) in enumerate(zip(before, after), 1)
        if _compile_error(old, name) is None and (error := _compile_error(new, name))
    ]


def _undefined(raw: bytes, name: str) -> dict[tuple[str, str], list[str]]:
    """pyflakes' undefined names and locals used before assignment, by (kind, name): where each is."""
    cells = _cells(raw) if name.endswith(".ipynb") else None
    starts = [1]
    if cells is not None:  # the cells share one namespace: check them as one module
        for cell in cells:
            starts.append(starts[-1] + cell.count("\n") + 1)
        code: str | bytes = "\n".join(cells)
    else:
        code = raw
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError):
        return {}
    found = defaultdict(list)
    for message in checker.Checker(tree, filename=name).messages:
        if isinstance(message, _UNDEFINED):
            arguments = message.message_args
            where = f"line {message.lineno}"
            if cells is not None:
                cell = bisect.bisect_right(starts, message.lineno) - 1
                where = f"code cell {cell + 1} line {message.lineno - starts[cell] + 1}"
            found[type(message).__name__, arguments if isinstance(arguments, str) else arguments[0]].append(
                f"{where}: {message.message % arguments}"
            )
    return found


def _diff(old: bytes, new: bytes, name: str) -> str:
    lines = difflib.unified_diff(
        old.decode(errors="replace").splitlines(), new.decode(errors="replace").splitlines(), name, name, lineterm="", n=1
    )
    return "\n".join(list(lines)[:40])


class Sweep:
    def __init__(self, command: list[str], jobs: int, limits: Limits, fix_campaign: bool) -> None:
        self.command, self.jobs, self.limits, self.fix_campaign = command, jobs, limits, fix_campaign

    def _check(self, *options: str) -> list[str]:
        return [*self.command, "check", "--no-cache", "--output-format", "json", "--show-traceback", "--jobs", str(self.jobs), *options]

    def _stage(self, row: Row, stage: str, cwd: Path, *options: str) -> Measurement:
        run, stdout, stderr = _run(self._check(*options), cwd, self.limits)
        faults, findings, skipped = _run_faults(row.repo, stage, run, stdout, stderr)
        known = {(fault.file, fault.message.split("\n")[0]) for fault in row.faults}
        row.faults += [fault for fault in faults if (fault.file, fault.message.split("\n")[0]) not in known]
        row.peak_mb = max(row.peak_mb, run.peak_mb)
        if stage == "check":
            row.seconds, row.skipped = run.seconds, skipped
            row.findings = None if findings is None else len(findings)
        return run

    def repository(self, repo: Path) -> Row:
        row = Row(repo.name, _linted_files(repo))
        print(f"{repo.name}: {row.files} files", file=sys.stderr, flush=True)
        check = self._stage(row, "check", repo)
        if self.fix_campaign and not check.killed:  # a run killed for time or memory would be again
            self._fix(repo, row)
        print(f"  {len(row.faults)} faults", file=sys.stderr, flush=True)
        return row

    def _fix(self, repo: Path, row: Row) -> None:
        with tempfile.TemporaryDirectory(prefix="repro-lint-sweep-") as scratch:
            copy = Path(scratch) / repo.name
            shutil.copytree(repo, copy, symlinks=True)
            _writable(copy)  # a read-only checkout's copy must still take the fixes
            before = _digests(copy)
            fix = self._stage(row, "fix", copy, "--fix", "--unsafe-fixes")
            row.fix_seconds = fix.seconds
            fixed = _digests(copy)
            changed = sorted(path for path in fixed if fixed[path] != before.get(path))
            row.fixed = len(changed)
            texts = {path: (copy / path).read_bytes() for path in changed}
            for path in changed:
                self._judge(row, path, (repo / path).read_bytes() if path in before else b"", texts[path])
            if fix.killed:
                return
            self._stage(row, "fix again", copy, "--fix", "--unsafe-fixes")
            again = _digests(copy)
            for path in sorted(path for path in again if again[path] != fixed.get(path)):
                first = texts.get(path, (repo / path).read_bytes() if path in before else b"")
                row.faults.append(Fault(row.repo, path, "fixed again", "fix again", _diff(first, (copy / path).read_bytes(), path)))

    def _judge(self, row: Row, path: str, original: bytes, fixed: bytes) -> None:
        if not path.endswith((".py", ".ipynb")):
            return
        for error in _compile_faults(original, fixed, path):
            row.faults.append(Fault(row.repo, path, "no longer compiles", "fix", error))
        old, new = _undefined(original, path), _undefined(fixed, path)
        for key, places in new.items():
            if len(places) > len(old.get(key, ())):
                row.faults.append(Fault(row.repo, path, "new undefined name", "fix", "; ".join(places)))


def table(rows: list[Row], fix_campaign: bool) -> str:
    columns = ["repository", "files", "check s", "peak MB per process", "findings", "skipped", "internal errors"]
    if fix_campaign:
        columns += ["fix s", "files fixed", "no longer compile", "new undefined names", "fixed again"]
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]

    def line(name: str, files: int, seconds: float, peak: float, findings: int | None, skipped: int, faults: list[Fault], fix_seconds: float | None, fixed: int | None) -> str:
        count = {kind: sum(fault.kind == kind for fault in faults) for kind in ("internal error", "no longer compiles", "new undefined name", "fixed again")}
        cells = [name, str(files), f"{seconds:.1f}", f"{peak:.0f}", "—" if findings is None else str(findings), str(skipped), str(count["internal error"])]
        if fix_campaign:
            cells += ["—" if fix_seconds is None else f"{fix_seconds:.1f}", "—" if fixed is None else str(fixed)]
            cells += [str(count[kind]) for kind in ("no longer compiles", "new undefined name", "fixed again")]
        return "| " + " | ".join(cells) + " |"

    for row in rows:
        lines.append(line(row.repo, row.files, row.seconds, row.peak_mb, row.findings, row.skipped, row.faults, row.fix_seconds, row.fixed))
    lines.append(
        line(
            f"**total ({len(rows)})**",
            sum(row.files for row in rows),
            sum(row.seconds for row in rows),
            max((row.peak_mb for row in rows), default=0.0),
            sum(row.findings or 0 for row in rows),
            sum(row.skipped for row in rows),
            [fault for row in rows for fault in row.faults],
            sum(row.fix_seconds or 0.0 for row in rows),
            sum(row.fixed or 0 for row in rows),
        )
    )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("repos", nargs="+", type=Path)
    parser.add_argument("--fix-campaign", action="store_true", help="also fix a copy of each repository twice and judge the fixes")
    parser.add_argument("--jobs", type=int, default=2, help="repro-lint's --jobs (default 2)")
    parser.add_argument("--timeout", type=float, default=600, help="seconds a run may take before it is killed (default 600)")
    parser.add_argument("--max-rss-mb", type=float, default=4096, help="memory a run's processes may hold together (default 4096)")
    parser.add_argument("--repro-lint", default=f"{shlex.quote(sys.executable)} -m repro_lint", help="the command to run (default: this Python's -m repro_lint)")
    parser.add_argument("--details", type=Path, help="write every fault to this JSON file")
    args = parser.parse_args()
    for repo in args.repos:
        if not repo.is_dir():
            parser.error(f"{repo}: not a folder")
    sweep = Sweep(shlex.split(args.repro_lint), args.jobs, Limits(args.timeout, args.max_rss_mb), args.fix_campaign)
    rows = [sweep.repository(repo.resolve()) for repo in args.repos]
    print(table(rows, args.fix_campaign))
    faults = [fault for row in rows for fault in row.faults]
    if args.details:
        args.details.write_text(json.dumps([asdict(fault) for fault in faults], indent=1) + "\n")
    sys.exit(1 if faults else 0)


if __name__ == "__main__":
    main()
