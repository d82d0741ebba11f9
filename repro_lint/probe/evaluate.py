"""Turn a read value plus a judge's verdict into a row status and, when due, a finding."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

from .checks import CHECKS
from .report import Finding, Row


@dataclass(frozen=True)
class Verdict:
    outcome: str  # "pass" | "issue" | "info" | "na"
    why: str = ""
    check: str | None = None


def ok(why: str = "") -> Verdict:
    return Verdict("pass", why)


def bad(check: str, why: str) -> Verdict:
    return Verdict("issue", why, check)


def note(why: str = "") -> Verdict:
    """Recorded for the fingerprint; nothing to judge."""
    return Verdict("info", why)


def na(why: str) -> Verdict:
    return Verdict("na", why)


@dataclass(frozen=True)
class Context:
    """What the judges may look at besides the row's own value."""

    profile: str = "strict"
    strict_warnings: bool = False
    torch_version: tuple[int, int] | None = None
    cuda: bool = False  # a CUDA or ROCm device is available, so CUDA-only checks apply
    cuda_initialized: bool = False
    hip: bool = False
    values: Mapping[str, Any] = field(default_factory=dict)  # settings by key
    packages: Mapping[str, str | None] = field(default_factory=dict)
    distributed: Mapping[str, Any] = field(default_factory=dict)


def judge_row(row: Row, verdict: Verdict, ctx: Context, fix: str | None = None) -> Finding | None:
    """Fill ``row.status`` / ``row.why`` / ``row.latent``; return the finding it raises, if any."""
    if row.error is not None:
        check = CHECKS["RLP018"]
        row.status = check.severity(ctx.profile, ctx.strict_warnings)
        row.why = "reading it raised; the other fp32_precision rows show the effective values"
        return Finding(check.id, row.status, row.key, f"reading {row.read_via or row.key} raised {row.error}",
                       check.fix)
    row.why = verdict.why
    if verdict.outcome == "na":
        row.status = "na"
        return None
    status = verdict.outcome
    check = CHECKS[verdict.check] if verdict.check else None
    if check is not None:
        status = check.severity(ctx.profile, ctx.strict_warnings)
    if row.cuda_only and not ctx.cuda:
        # Flags set in code carry over to a GPU run, so keep the verdict it would get there.
        row.status, row.latent = "na", status
        if check is None or status != "fail":
            return None
        severity = "fail" if ctx.strict_warnings else "warn"
        return Finding(check.id, severity, row.key,
                       f"CUDA-only, no CUDA device here; on a CUDA machine this fails: {verdict.why}",
                       fix or check.fix)
    row.status = status
    if check is None:
        return None
    return Finding(check.id, status, row.key, verdict.why, fix or check.fix)
