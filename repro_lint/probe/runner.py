"""``probe run``: execute the user's script in this process and snapshot its real settings."""

from __future__ import annotations

import os
import runpy
import sys
import traceback
from typing import Any, Sequence

from .errors import import_torch
from .report import Report
from .snapshot import take_snapshot

SNAPSHOT_POINTS = ("first-step", "exit")


def exit_status(code: Any) -> int:
    """The process status ``sys.exit(code)`` would give."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)
    return 1


def run_script(script: str, args: Sequence[str]) -> int:
    """Run ``script`` as ``__main__`` the way ``python script args...`` would; return its status.

    Exceptions other than Exception subclasses (KeyboardInterrupt, the verify stop signal)
    propagate to the caller.
    """
    path = os.path.abspath(script)
    saved_argv, saved_path0 = sys.argv[:], sys.path[0]
    sys.argv = [script, *args]
    sys.path[0] = os.path.dirname(path)  # as the interpreter does for a script
    try:
        runpy.run_path(path, run_name="__main__")
        return 0
    except SystemExit as exc:
        return exit_status(exc.code)
    except Exception:
        traceback.print_exc()
        return 1
    finally:
        sys.argv, sys.path[0] = saved_argv, saved_path0


class CudaStart:
    """The environment when CUDA is initialized, while watching: cuBLAS and the CUDA runtime read
    their variables then, so a script that sets one in `os.environ` before its first CUDA call
    (as PyTorch's reproducibility notes show) is in time. torch initializes CUDA through
    `torch.cuda._lazy_init`, which its C++ side looks up by name at each first use."""

    def __init__(self, torch: Any) -> None:
        self._environ: dict[str, str] | None = None
        self._cuda = torch.cuda
        self._original = torch.cuda._lazy_init
        self._was_initialized = bool(torch.cuda.is_initialized())

        def lazy_init() -> Any:
            if self._environ is None and not self._cuda.is_initialized():
                self._environ = dict(os.environ)
            return self._original()

        torch.cuda._lazy_init = lazy_init

    def seen(self) -> dict[str, str] | None:
        """The environment CUDA started with, where it started while watched."""
        return None if self._was_initialized else self._environ

    def stop(self) -> None:
        self._cuda._lazy_init = self._original


def run_and_snapshot(script: str, args: Sequence[str], *, at: str = "first-step", profile: str = "strict",
                     strict_warnings: bool = False) -> Report:
    """Run the script; judge the settings at its first optimizer step, or when it ends."""
    torch = import_torch()  # fails early, with the clear message, when torch is missing
    from torch.optim.optimizer import register_optimizer_step_pre_hook

    taken: list[Report] = []
    failures: list[BaseException] = []

    def snapshot_on_first_step(optimizer: Any, args: Any, kwargs: Any) -> None:
        # The hook stays registered until the script ends: removing it here would mutate the
        # hook dict that optimizer.step is iterating over.
        if taken or failures:
            return
        try:
            taken.append(take_snapshot(mode="wrapper", profile=profile, strict_warnings=strict_warnings,
                                       cuda_start_environ=cuda_start.seen()))
        except Exception as exc:  # a probe bug must not break the user's training
            failures.append(exc)

    cuda_start = CudaStart(torch)
    handle = register_optimizer_step_pre_hook(snapshot_on_first_step) if at == "first-step" else None
    try:
        code = run_script(script, args)
    finally:
        cuda_start.stop()
        if handle is not None:
            handle.remove()
    if failures:
        raise failures[0]
    if taken:
        report, point = taken[0], "first-step"
    else:
        report = take_snapshot(mode="wrapper", profile=profile, strict_warnings=strict_warnings,
                               cuda_start_environ=cuda_start.seen())
        point = "exit"
        if at == "first-step":
            report.notes.append("no optimizer step ran, so the snapshot was taken when the script ended")
    report.script = {"path": script, "args": list(args), "exit_code": code, "snapshot_at": point}
    if code != 0:
        report.notes.append(f"the script exited with status {code}, so repro-lint exits 2")
    return report
