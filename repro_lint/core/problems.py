"""What kept repro-lint from doing its whole job on one file or program: plain data that workers
send back and every front-end reports, so that one file's trouble never costs the others' findings."""

from __future__ import annotations

import traceback
from dataclasses import dataclass
from typing import Literal


@dataclass(frozen=True)
class Problem:
    """`error`: an internal error, a bug in repro-lint (the run exits 2, the user is asked to report
    it); `skipped`: input repro-lint refuses by design (a config too large to scan), said on stderr."""

    path: str
    kind: Literal["error", "skipped"]
    summary: str  # "ExceptionType: message", or why the file was skipped
    traceback: str = ""


def internal_error(path: str, error: BaseException, during: str = "") -> Problem:
    """An unexpected exception while working on `path` (`during`: which part of the work, such as a
    rule's code), kept with its traceback for `--show-traceback`: a worker's would die with it."""
    summary = f"{type(error).__name__}: {error}"
    return Problem(path, "error", f"{during}: {summary}" if during else summary, "".join(traceback.format_exception(error)))
