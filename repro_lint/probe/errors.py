"""The probe's exceptions and the one place that imports torch."""

from __future__ import annotations

import importlib
import importlib.util
from types import ModuleType
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .report import Report

INSTALL_HINT = (
    "the runtime probe must run where torch is installed: "
    "`pip install torch`, or run repro-lint from your training environment"
)


class CannotEvaluate(RuntimeError):
    """The probe cannot judge this process (exit code 3)."""


class TorchUnavailable(CannotEvaluate, ImportError):
    """torch is not importable."""


class ProbeFailure(AssertionError):
    """Raised by ``check(strict=True)`` when a check fails; ``str()`` is a readable summary."""

    def __init__(self, report: Report) -> None:
        super().__init__(report.failure_summary())
        self.report = report


def require_torch() -> None:
    """Raise TorchUnavailable unless torch is installed, without importing it."""
    # find_spec does not import; it also returns None when torch is hidden
    # through sys.modules["torch"] = None.
    try:
        spec = importlib.util.find_spec("torch")
    except (ImportError, ValueError) as exc:
        raise TorchUnavailable(f"torch is not importable ({exc}); {INSTALL_HINT}") from None
    if spec is None:
        raise TorchUnavailable(f"torch is not installed; {INSTALL_HINT}")


def import_torch() -> ModuleType:
    """Import torch on demand, so importing repro_lint never pays for it."""
    require_torch()
    try:
        return importlib.import_module("torch")
    except ImportError as exc:
        raise TorchUnavailable(f"torch is installed but cannot be imported ({exc}); {INSTALL_HINT}") from None
