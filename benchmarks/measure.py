"""Run a command and measure it as the benchmarks report it: wall time, CPU time of all its
processes, and peak memory per process (the largest resident set of any one of them, workers
included: the kernel's ru_maxrss of the process and every descendant it waited for).

Optionally bounded: past `timeout` seconds, or when the resident sets of its processes add up to
more than `max_rss_mb` (polled), the whole process group is killed and the result says why.
"""

from __future__ import annotations

import os
import select
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import IO

_POLL_S = 0.25
_PAGE_MB = os.sysconf("SC_PAGE_SIZE") / 2**20


@dataclass(frozen=True)
class Measurement:
    seconds: float
    cpu: float
    peak_mb: float
    returncode: int
    killed: str | None  # why the command was killed ("timeout", "memory"), None if it ended itself


def _group_rss_mb(group: int) -> float:
    """Resident memory of the processes in process group `group`, from /proc."""
    total = 0.0
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat", "rb") as stat:
                fields = stat.read().rpartition(b")")[2].split()  # the name before it may hold spaces
        except OSError:  # the process ended meanwhile
            continue
        if int(fields[2]) == group:  # fields from the state on: state, ppid, pgrp, ..., rss is the 22nd
            total += int(fields[21]) * _PAGE_MB
    return total


def measure(
    command: list[str],
    cwd: Path,
    stdout: IO[bytes] | int = subprocess.DEVNULL,
    stderr: IO[bytes] | int = subprocess.DEVNULL,
    timeout: float | None = None,
    max_rss_mb: float | None = None,
) -> Measurement:
    start = time.perf_counter()
    # A session of its own, so the command and its workers can be killed together.
    process = subprocess.Popen(command, cwd=cwd, stdout=stdout, stderr=stderr, start_new_session=True)
    # Readable once the command has ended: waiting on it between polls ends the wait then, so the
    # wall time is not rounded up to the next poll.
    ended = os.pidfd_open(process.pid)
    killed = None
    while True:
        # wait4 gives the rusage of this command alone, whatever ran before in this process.
        pid, status, usage = os.wait4(process.pid, os.WNOHANG if timeout or max_rss_mb else 0)
        if pid:
            break
        if killed is None and timeout is not None and time.perf_counter() - start > timeout:
            killed = "timeout"
        elif killed is None and max_rss_mb is not None and _group_rss_mb(process.pid) > max_rss_mb:
            killed = "memory"
        if killed is not None:
            os.killpg(process.pid, signal.SIGKILL)
        select.select([ended], [], [], _POLL_S)
    seconds = time.perf_counter() - start
    os.close(ended)
    process.returncode = os.waitstatus_to_exitcode(status)
    try:  # workers the command left behind
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    return Measurement(seconds, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, process.returncode, killed)
