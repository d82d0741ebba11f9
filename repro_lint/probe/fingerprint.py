"""Child side of ``probe verify``: run the script and fingerprint its first N optimizer steps.

After each ``optimizer.step()`` it hashes that optimizer's parameters and the losses passed to
``backward`` since the previous step, then stops the script once N steps are recorded.
Run as ``python -c BOOT ROOT STEPS OUT SCRIPT ARGS...`` by verify.py.
"""

from __future__ import annotations

import functools
import hashlib
import os
import sys
from types import ModuleType
from typing import Any, Sequence

from .errors import import_torch
from .hashing import tensors_sha256, update_with_tensor
from .report import write_json_atomic
from .runner import run_script


class StopAfterSteps(BaseException):
    """Ends the script once enough steps are recorded (BaseException: user `except Exception` lets it by)."""


class Recorder:
    def __init__(self, torch: ModuleType, steps: int) -> None:
        self.torch = torch
        self.steps = steps
        self.records: list[dict[str, Any]] = []
        self._reset_loss()

    def _reset_loss(self) -> None:
        self._loss_hash = hashlib.sha256()
        self._loss_count = 0
        self._last_loss: float | None = None

    def on_backward(self, tensors: Any) -> None:
        for t in (tensors,) if isinstance(tensors, self.torch.Tensor) else tuple(tensors):
            update_with_tensor(self._loss_hash, t)
            self._loss_count += 1
            if t.numel() == 1:
                self._last_loss = float(t.detach().float().cpu())

    def on_step(self, optimizer: Any, args: Any, kwargs: Any) -> None:
        params = [p for group in optimizer.param_groups for p in group["params"]]
        self.records.append({
            "step": len(self.records) + 1,
            "optimizer": type(optimizer).__name__,
            "params_sha256": tensors_sha256(params),
            "loss_sha256": self._loss_hash.hexdigest() if self._loss_count else None,
            "loss": self._last_loss,
        })
        self._reset_loss()
        if len(self.records) >= self.steps:
            raise StopAfterSteps


def record(script: str, args: Sequence[str], steps: int) -> tuple[int, list[dict[str, Any]], bool]:
    """Run the script; return (exit status, step records, whether it was stopped after ``steps``)."""
    torch = import_torch()
    from torch.optim.optimizer import register_optimizer_step_post_hook

    recorder = Recorder(torch, steps)
    original_backward = torch.autograd.backward

    @functools.wraps(original_backward)
    def backward(tensors: Any, *a: Any, **kw: Any) -> Any:
        recorder.on_backward(tensors)
        return original_backward(tensors, *a, **kw)

    # Tensor.backward calls torch.autograd.backward by attribute, so this sees both spellings.
    torch.autograd.backward = backward
    handle = register_optimizer_step_post_hook(recorder.on_step)
    try:
        code, stopped = run_script(script, args), False
    except StopAfterSteps:
        code, stopped = 0, True
    finally:
        handle.remove()
        torch.autograd.backward = original_backward
    return code, recorder.records, stopped


def main(argv: Sequence[str]) -> int:
    steps, out, script, *args = argv
    code, records, stopped = record(script, args, int(steps))
    write_json_atomic(out, {"exit_code": code, "stopped_after_steps": stopped, "steps": records})
    if stopped:
        # The script was cut off mid-loop: its prefetch threads or workers may never finish,
        # and everything needed is written, so do not wait for them.
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(0)
    return code
