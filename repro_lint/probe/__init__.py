"""Runtime probe: judge the determinism settings a PyTorch process really runs with.

This is the only part of repro_lint that uses torch, and it imports torch only when a probe
function is called, so ``import repro_lint.probe`` stays cheap. It imports nothing else of
repro_lint, and only the command line imports it: it runs inside the user's training environment.

    import repro_lint.probe
    repro_lint.probe.check(strict=True)   # after seeding and setting flags; raises ProbeFailure
"""

from __future__ import annotations

from typing import Any

from .checks import PROFILES
from .errors import CannotEvaluate, ProbeFailure, TorchUnavailable
from .report import Report
from .snapshot import take_snapshot

__all__ = ["CannotEvaluate", "ProbeFailure", "Report", "TorchUnavailable", "check"]


def check(*, profile: str = "strict", selftest: bool | str = False, loader: Any = None,
          strict: bool = False) -> Report:
    """Judge this process's torch settings, environment, seeds and (optionally) a DataLoader.

    ``selftest``: False, True (= "cpu"), "cpu" or "cuda" (which initializes CUDA).
    ``strict=True`` raises ProbeFailure, whose message lists the failing checks and their fixes,
    when any check fails.  Raises TorchUnavailable when torch cannot be imported.
    """
    if profile not in PROFILES:
        raise ValueError(f"profile must be one of {', '.join(PROFILES)}, not {profile!r}")
    device = "cpu" if selftest is True else (selftest or None)
    report = take_snapshot(mode="in-process", profile=profile, selftest=device, loader=loader)
    if strict and report.status == "fail":
        raise ProbeFailure(report)
    return report
