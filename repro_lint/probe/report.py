"""The probe's result: data classes, the JSON document, and the human table."""

from __future__ import annotations

import json
import os
import tempfile
import textwrap
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

from .checks import SEVERITY_RANK

SCHEMA = "repro-lint.probe/1"
# The text report fits a terminal or a CI log of this many columns.
WIDTH = 100
_MIN_CUT = 8  # a cell cut shorter than this ("ab...") says nothing

# Research notes section 9.5: warnings alone never fail a run.  Exit code 2 (usage or internal
# error, or the wrapped script failed) is decided outside this table.
EXIT_CODES = {"pass": 0, "warn": 0, "fail": 1, "error": 3}


def tool_version() -> str:
    try:
        return metadata.version("repro-lint")
    except metadata.PackageNotFoundError:
        return "0.0.0+unknown"


def tool_header(mode: str, status: str, exit_code: int) -> dict[str, Any]:
    return {
        "schema": SCHEMA,
        "tool": {"name": "repro-lint", "version": tool_version()},
        "mode": mode,
        "status": status,
        "exit_code": exit_code,
    }


def worst_status(severities: list[str]) -> str:
    """Overall status of a set of finding severities: fail, warn, or pass."""
    worst = max((SEVERITY_RANK[s] for s in severities), default=0)
    return {3: "fail", 2: "warn"}.get(worst, "pass")


@dataclass
class Row:
    """One judged or recorded value: a line of the table and an entry of the JSON."""

    key: str
    value: Any
    expected: Any = None
    status: str = "info"
    why: str = ""
    read_via: str | None = None
    cuda_only: bool = False
    latent: str | None = None
    error: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"value": self.value}
        out.update(self.extra)
        if self.read_via is not None:
            out["read_via"] = self.read_via
        out.update(expected=self.expected, cuda_only=self.cuda_only, status=self.status, why=self.why)
        if self.latent is not None:
            out["latent"] = self.latent
        if self.error is not None:
            out["error"] = self.error
        return out


@dataclass(frozen=True)
class Finding:
    id: str
    severity: str
    setting: str
    message: str
    fix: str

    def to_json(self) -> dict[str, str]:
        return {"id": self.id, "severity": self.severity, "setting": self.setting,
                "message": self.message, "fix": self.fix}


@dataclass(frozen=True)
class OpResult:
    """One self-test op run ``repeats`` times in one deterministic mode."""

    name: str
    device: str
    mode: str  # "off": deterministic algorithms off; "strict": on, warn_only off
    canary: bool
    threads: int  # CPU intra-op threads it ran with
    distinct_digests: int
    raised: str | None
    warning: str | None
    ms: float

    @property
    def expected(self) -> bool:
        """Whether bitwise-equal results are expected (strict mode promises them)."""
        return self.mode == "strict"

    @property
    def deterministic(self) -> bool | None:
        return None if self.raised else self.distinct_digests == 1

    @property
    def status(self) -> str:
        if self.mode == "strict" and self.distinct_digests > 1:
            return "fail"
        return "pass" if self.deterministic is not False else "info"

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "device": self.device, "mode": self.mode, "canary": self.canary,
                "threads": self.threads, "distinct_digests": self.distinct_digests,
                "deterministic": self.deterministic, "expected": self.expected, "raised": self.raised,
                "warning": self.warning, "ms": round(self.ms, 3), "status": self.status}


@dataclass(frozen=True)
class SelfTest:
    device: str
    repeats: int
    num_threads: int
    initialized_cuda: bool
    ops: tuple[OpResult, ...]

    @property
    def canary_fired(self) -> bool:
        return any(op.canary and op.mode == "off" and op.distinct_digests > 1 for op in self.ops)

    def to_json(self) -> dict[str, Any]:
        return {"ran": True, "device": self.device, "repeats": self.repeats,
                "num_threads": self.num_threads, "initialized_cuda": self.initialized_cuda,
                "canary_fired": self.canary_fired, "ops": [op.to_json() for op in self.ops]}


@dataclass
class Report:
    """Everything one probe snapshot saw.  Row lists feed the table and the JSON; ``rng`` and
    ``dataloader`` are the JSON sections whose judged parts also appear as rows."""

    mode: str  # "in-process" | "wrapper" | "env"
    profile: str
    environment: dict[str, Any]
    settings: list[Row] | None
    env: list[Row]
    rng: dict[str, Any] | None
    rng_rows: list[Row]
    dataloader: dict[str, Any] | None
    dataloader_rows: list[Row]
    selftest: SelfTest | None
    findings: list[Finding]
    notes: list[str] = field(default_factory=list)
    error: str | None = None
    script: dict[str, Any] | None = None

    @property
    def status(self) -> str:
        if self.error is not None:
            return "error"
        return worst_status([f.severity for f in self.findings])

    @property
    def exit_code(self) -> int:
        if self.script is not None and self.script["exit_code"] != 0:
            return 2  # the run did not complete; never let a crashed script look like a pass
        return EXIT_CODES[self.status]

    def to_json(self) -> dict[str, Any]:
        out = tool_header(self.mode, self.status, self.exit_code)
        out["profile"] = self.profile
        if self.error is not None:
            out["error"] = self.error
        out["notes"] = list(self.notes)
        if self.script is not None:
            out["script"] = self.script
        out["environment"] = self.environment
        out["settings"] = None if self.settings is None else {r.key: r.to_json() for r in self.settings}
        out["env"] = {r.key: r.to_json() for r in self.env}
        out["rng"] = self.rng
        out["dataloader"] = self.dataloader
        out["selftest"] = self.selftest.to_json() if self.selftest else {"ran": False}
        out["findings"] = [f.to_json() for f in self.findings]
        return out

    def failure_summary(self) -> str:
        failing = [f for f in self.findings if f.severity == "fail"]
        lines = [f"repro-lint probe: {len(failing)} failing check(s) (profile {self.profile}):"]
        for f in failing:
            lines += [f"  {f.id} {f.setting}: {f.message}", f"      fix: {f.fix}"]
        return "\n".join(lines)

    def render(self) -> str:
        return render_report(self)


# ---------------------------------------------------------------- text rendering


def format_value(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, (list, tuple)):
        return ", ".join(format_value(v) for v in value) if value else "[]"
    return str(value)


def _cell(value: Any, width: int = 40) -> str:
    text = format_value(value)
    return text if len(text) <= width else text[: width - 3] + "..."


def format_expected(expected: Any) -> str:
    if isinstance(expected, (list, tuple)):
        return " or ".join(format_value(v) for v in expected)
    return format_value(expected)


def format_status(status: str, latent: str | None = None) -> str:
    shown = "N/A" if status == "na" else status.upper()
    return f"{shown} ({latent.upper()} on CUDA)" if latent else shown


def wrap(text: str, indent: str = "    ", first: str = "") -> list[str]:
    """``text`` as lines of at most WIDTH columns, the first led by ``first``, the others by ``indent``."""
    return textwrap.wrap(text, WIDTH, initial_indent=first, subsequent_indent=indent,
                         break_long_words=True, break_on_hyphens=False) or [first.rstrip()]


def format_table(headers: list[str], rows: list[list[str]], notes: list[str] | None = None) -> str:
    """Left-aligned columns within WIDTH: the widest cells after the first (which names the row) are
    cut (with "...") until a line fits. ``notes``, one per row, are free text wrapped on the lines
    below their row."""
    widths = [max(len(r[i]) for r in [headers, *rows]) for i in range(len(headers))]
    while sum(widths) + 2 * (len(widths) - 1) > WIDTH:
        cuttable = [i for i in range(1, len(widths)) if widths[i] > _MIN_CUT] or [0]
        widths[max(cuttable, key=lambda i: widths[i])] -= 1
    lines = []
    for index, r in enumerate([headers, *rows]):
        cells = [c if len(c) <= w else c[: w - 3] + "..." for c, w in zip(r, widths)]
        lines.append("  ".join(c.ljust(w) for c, w in zip(cells, widths)).rstrip())
        note = notes[index - 1] if notes and index else ""
        if note:
            lines += wrap(note, first="    ")
    return "\n".join(lines)


def _row_cells(row: Row) -> list[str]:
    return [row.key, _cell(row.value), format_expected(row.expected), format_status(row.status, row.latent)]


def _row_note(row: Row) -> str:
    return row.why if row.error is None else f"{row.why} [{row.error}]".strip()


def _env_row_shown(row: Row) -> bool:
    # Unset variables that are only recorded are noise in the table (they stay in the JSON).
    return row.value is not None or row.expected is not None


def _table(headers: list[str], rows: list[Row], noun: str) -> list[str]:
    """The rows that apply on this machine as a table; those that do not, folded into one line."""
    shown = [r for r in rows if r.status != "na"]
    lines = [format_table(headers, [_row_cells(r) for r in shown], [_row_note(r) for r in shown])] if shown else []
    # A CUDA-only row on a machine without CUDA keeps the verdict it would get there (``latent``).
    cuda_only = [r for r in rows if r.status == "na" and r.latent is not None]
    failing = [r.key for r in cuda_only if r.latent == "fail"]
    folded = [f"{len(cuda_only)} CUDA-only {noun}, not judged without a CUDA device"
              + (f" (on a CUDA machine these would FAIL: {', '.join(failing)})" if failing else "")] if cuda_only else []
    folded += [f"{r.key} ({r.why})" if r.why else r.key for r in rows if r.status == "na" and r.latent is None]
    if folded:
        lines += wrap("; ".join(folded) + "; the JSON report lists each", first="N/A: ")
    return lines


def _scope_lines(report: Report) -> list[str]:
    """Why each check applies or not on this machine. `repro-lint check` reads the program, not the
    machine, so on a CPU-only machine the two can disagree; this says why."""
    torch_env = report.environment.get("torch")
    if torch_env is None:
        return []
    if torch_env["cuda_available"]:
        return wrap("a CUDA device is available, so the CUDA settings are judged too.", first="scope: ")
    rows = [*(report.settings or []), *(r for r in report.env if _env_row_shown(r))]
    judged = sum(r.status != "na" for r in rows)
    cuda_only = sum(r.latent is not None for r in rows)
    if report.settings is None:  # `probe env`: variables only
        return wrap(f"CPU only, no CUDA device. Judged: the {judged} variables that act on CPU runs; the "
                    f"{cuda_only} CUDA-only ones act only on a CUDA device: N/A here.", first="scope: ")
    return wrap(
        f"CPU only, no CUDA device. Judged: the {judged} settings and variables that act on CPU runs "
        "(deterministic algorithms, which CPU kernels such as index_put_(accumulate=True) honour too; "
        f"oneDNN and fp32 precision; threads; seeds). The {cuda_only} CUDA-only ones act only on a CUDA "
        "device: N/A here. `repro-lint check` reads the code instead, and asks for deterministic "
        "algorithms (REP302) only in programs that run on CUDA.", first="scope: ")


def _environment_lines(env: dict[str, Any]) -> list[str]:
    t = env.get("torch")
    if t is None:
        return [f"python {env['python']} · torch not importable"]
    cuda = "CUDA not available"
    if t["cuda_available"]:
        cuda = f"CUDA {t['cuda'] or t['hip']}, {t['device_count']} device(s), " + (
            "initialized" if t["cuda_initialized"] else "not initialized")
    return wrap(f"python {env['python']} · torch {t['version']} · {cuda} · CPU {t['cpu_capability']}, "
                f"{t['num_threads']} threads ({t['num_interop_threads']} inter-op)")


def render_report(report: Report) -> str:
    parts = [f"repro-lint probe {tool_version()} · {report.mode} · profile {report.profile}"]
    parts += _environment_lines(report.environment)
    if report.script is not None:
        sc = report.script
        parts += wrap(f"script: {' '.join([sc['path'], *sc['args']])} · snapshot at {sc['snapshot_at']} · "
                      f"exit status {sc['exit_code']}")
    parts += _scope_lines(report)
    for n in report.notes:
        parts += wrap(n, first="note: ")
    if report.error:
        parts += wrap(report.error, first="error: ")
    headers = ["SETTING", "VALUE", "EXPECTED", "STATUS"]
    if report.settings is not None:
        parts += ["", *_table(headers, report.settings + report.rng_rows + report.dataloader_rows, "settings")]
    shown = [r for r in report.env if _env_row_shown(r)]
    hidden = len(report.env) - len(shown)
    parts += ["", *_table(["ENVIRONMENT VARIABLE", *headers[1:]], shown, "variables")]
    if hidden:
        parts.append(f"({hidden} unset variables that are only recorded are listed in the JSON)")
    if report.selftest is not None:
        st = report.selftest
        parts += ["", f"self-test on {st.device}: {st.repeats} repeats per op"
                      + (" (this initialized CUDA)" if st.initialized_cuda else "")]
        op_rows = [[op.name, op.mode, str(op.threads), "raised" if op.raised else str(op.distinct_digests),
                    "1" if op.expected else ">=1", format_status(op.status), f"{op.ms:.1f}"] for op in st.ops]
        op_headers = ["OP", "DET MODE", "THREADS", "DISTINCT", "EXPECTED", "STATUS", "MS"]
        parts.append(format_table(op_headers, op_rows, [op.raised or op.warning or "" for op in st.ops]))
        parts.append("canary fired: " + ("yes, the test can see nondeterminism here" if st.canary_fired
                                          else "no, a clean strict result proves less"))
    if report.findings:
        parts += ["", "FINDINGS"]
        order = sorted(report.findings, key=lambda f: -SEVERITY_RANK[f.severity])
        for f in order:
            parts += wrap(f"{f.id} {f.setting}: {f.message}", indent="     ", first=f"{f.severity.upper():4} ")
            parts += wrap(f.fix, indent="          ", first="     fix: ")
    parts += ["", f"status: {report.status.upper()} (exit {report.exit_code})"]
    return "\n".join(parts)


def write_json_atomic(path: str | os.PathLike[str], data: dict[str, Any]) -> None:
    """Write JSON so that readers see the old file or the whole new one, never a half."""
    target = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(data, fh, indent=2, sort_keys=False)
            fh.write("\n")
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
