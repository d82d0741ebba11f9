"""``probe verify``: run the script twice, in two processes, and compare step fingerprints.

This is the one check that proves reproducibility instead of inferring it from settings: after
each of the first N optimizer steps both runs must have bitwise-equal parameters and losses.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from .checks import CHECKS
from .errors import require_torch
from .report import Finding, format_table, tool_header, tool_version

RUNS = 2
OUTPUT_TAIL = 4000  # characters of a failed run's output worth showing

# The child imports repro_lint from the same place as this process, whatever the user's
# sys.path, and then replaces sys.path[0] with the script's folder (runner.run_script).
_PACKAGE_ROOT = str(Path(__file__).resolve().parents[2])
_CHILD_BOOT = ("import sys; sys.path.insert(0, sys.argv[1]); "
               "from repro_lint.probe.fingerprint import main; sys.exit(main(sys.argv[2:]))")


@dataclass(frozen=True)
class Run:
    exit_code: int
    stopped_after_steps: bool
    steps: list[dict[str, Any]]
    output: str

    @property
    def failed(self) -> bool:
        return self.exit_code != 0


@dataclass(frozen=True)
class Divergence:
    step: int
    params: bool  # parameters differ
    loss: bool  # losses differ
    missing: bool  # one run has no such step

    def describe(self) -> str:
        if self.missing:
            return f"only one run reached optimizer step {self.step}"
        parts = [p for p, differ in (("parameters", self.params), ("loss", self.loss)) if differ]
        return f"{' and '.join(parts)} differ after optimizer step {self.step}"


def first_divergence(a: list[dict[str, Any]], b: list[dict[str, Any]]) -> Divergence | None:
    for ra, rb in zip(a, b):
        params, loss = ra["params_sha256"] != rb["params_sha256"], ra["loss_sha256"] != rb["loss_sha256"]
        if params or loss:
            return Divergence(ra["step"], params, loss, missing=False)
    if len(a) != len(b):
        return Divergence(min(len(a), len(b)) + 1, False, False, missing=True)
    return None


@dataclass(frozen=True)
class VerifyReport:
    script: str
    args: list[str]
    steps_requested: int
    runs: tuple[Run, ...]

    @property
    def divergence(self) -> Divergence | None:
        if len(self.runs) < RUNS:
            return None
        return first_divergence(self.runs[0].steps, self.runs[1].steps)

    @property
    def steps_compared(self) -> int:
        return min(len(r.steps) for r in self.runs)

    @property
    def status(self) -> str:
        if self.divergence is not None:
            return "fail"
        return "error" if any(r.failed for r in self.runs) or self.steps_compared == 0 else "pass"

    @property
    def exit_code(self) -> int:
        if self.divergence is not None:
            return 1
        if any(r.failed for r in self.runs):
            return 2
        return 3 if self.steps_compared == 0 else 0

    @property
    def findings(self) -> list[Finding]:
        d = self.divergence
        if d is None:
            return []
        check = CHECKS["RLP023"]
        return [Finding(check.id, "fail", f"verify.step{d.step}", f"the two runs diverge: {d.describe()}",
                        check.fix)]

    def summary(self) -> str:
        d = self.divergence
        if d is not None:
            return f"runs DIVERGE at optimizer step {d.step}: {d.describe()}"
        failed = [i + 1 for i, r in enumerate(self.runs) if r.failed]
        if failed:
            return f"run {failed[0]} of the script failed (exit status {self.runs[failed[0] - 1].exit_code})"
        if self.steps_compared == 0:
            return "the script ran no optimizer step, so there is nothing to compare"
        short = "" if self.steps_compared == self.steps_requested else \
            f" (the script ran only {self.steps_compared} of the {self.steps_requested} requested)"
        return f"runs AGREE bitwise after each of {self.steps_compared} optimizer steps{short}"

    def to_json(self) -> dict[str, Any]:
        out = tool_header("verify", self.status, self.exit_code)
        d = self.divergence
        out["verify"] = {
            "script": self.script,
            "args": self.args,
            "steps_requested": self.steps_requested,
            "steps_compared": self.steps_compared,
            "agree": d is None and self.status == "pass",
            "first_divergence": None if d is None else
            {"step": d.step, "params_differ": d.params, "loss_differs": d.loss, "missing_step": d.missing},
            "summary": self.summary(),
            "runs": [{"exit_code": r.exit_code, "stopped_after_steps": r.stopped_after_steps, "steps": r.steps}
                     for r in self.runs],
        }
        out["findings"] = [f.to_json() for f in self.findings]
        return out

    def render(self) -> str:
        parts = [f"repro-lint probe verify {tool_version()} · {self.script} · {RUNS} runs, "
                 f"first {self.steps_requested} optimizer steps"]
        if len(self.runs) == RUNS:
            parts.append(_steps_table(self.runs[0].steps, self.runs[1].steps))
        for i, r in enumerate(self.runs):
            if r.failed:
                parts += [f"--- output of run {i + 1} (last {OUTPUT_TAIL} characters) ---",
                          r.output[-OUTPUT_TAIL:]]
        parts += [self.summary()]
        for f in self.findings:
            parts.append(f"fix: {f.fix}")
        parts.append(f"status: {self.status.upper()} (exit {self.exit_code})")
        return "\n".join(parts)


def _steps_table(a: list[dict[str, Any]], b: list[dict[str, Any]]) -> str:
    rows = []
    for i in range(max(len(a), len(b))):
        ra, rb = (a[i] if i < len(a) else None), (b[i] if i < len(b) else None)
        both = ra is not None and rb is not None
        rows.append([str(i + 1), (ra or rb)["optimizer"], _loss(ra), _loss(rb),
                     _same(both and ra["params_sha256"] == rb["params_sha256"], both),
                     _same(both and ra["loss_sha256"] == rb["loss_sha256"], both)])
    return format_table(["STEP", "OPTIMIZER", "LOSS RUN 1", "LOSS RUN 2", "PARAMS", "LOSS"], rows)


def _loss(record: dict[str, Any] | None) -> str:
    if record is None:
        return "(no step)"
    return "-" if record["loss"] is None else repr(record["loss"])


def _same(equal: bool, comparable: bool) -> str:
    return ("same" if equal else "DIFFER") if comparable else "-"


def _run_once(script: str, args: Sequence[str], steps: int, workdir: str, index: int) -> Run:
    out = os.path.join(workdir, f"run{index}.json")
    proc = subprocess.run([sys.executable, "-c", _CHILD_BOOT, _PACKAGE_ROOT, str(steps), out, script, *args],
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors="replace")
    if not os.path.exists(out):  # died before writing: import error, crash, kill
        return Run(proc.returncode or 1, False, [], proc.stdout)
    data = _read_json(out)
    return Run(data["exit_code"], data["stopped_after_steps"], data["steps"], proc.stdout)


def _read_json(path: str) -> dict[str, Any]:
    with open(path, encoding="utf-8") as fh:
        return json.load(fh)


def verify(script: str, args: Sequence[str], steps: int) -> VerifyReport:
    """Run ``script`` twice, one after the other (parallel runs would share one GPU's memory).

    When the first run fails or takes no optimizer step, the second is skipped.
    """
    require_torch()  # the children import it; this process need not pay for it
    runs: list[Run] = []
    with tempfile.TemporaryDirectory(prefix="repro-lint-verify-") as workdir:
        for i in range(RUNS):
            runs.append(_run_once(script, args, steps, workdir, i))
            if runs[0].failed or not runs[0].steps:
                break  # a second run could not change the verdict
    return VerifyReport(script, list(args), steps, tuple(runs))
