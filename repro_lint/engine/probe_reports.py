"""A `repro-lint probe --json` report, read back for the audit: what the probe saw in force at run
time, beside what the audit reads in the code. Read as JSON only, never through the probe package,
which stands apart."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

PROBE_SCHEMA = "repro-lint.probe/1"
_STATUSES = frozenset({"pass", "warn", "fail", "error"})


class ProbeReportError(Exception):
    """A file that is not a probe report this version can read."""


@dataclass(frozen=True)
class ProbeCheck:
    """One of the probe's findings: a setting that was not as reproducibility needs."""

    id: str
    severity: str  # fail, warn, info
    setting: str
    message: str
    fix: str


@dataclass(frozen=True)
class ProbeReport:
    file: str  # as given on the command line
    mode: str  # env, in-process, wrapper, verify
    status: str  # pass, warn, fail, error
    script: str | None  # the script it ran (`probe run`, `probe verify`); None: the environment of every program
    checks: tuple[ProbeCheck, ...]


def read_probe_report(path: Path) -> ProbeReport:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise ProbeReportError(f"cannot read probe report {path}: {error.strerror or error}") from error
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ProbeReportError(f"{path} is not a JSON probe report: {error}") from error
    if not isinstance(data, dict) or data.get("schema") != PROBE_SCHEMA:
        raise ProbeReportError(f"{path} is not a probe report (its `schema` is not {PROBE_SCHEMA!r}); write one with `repro-lint probe ... --json`")
    status = data.get("status")
    if status not in _STATUSES:
        raise ProbeReportError(f"{path}: unknown probe status {status!r}")
    try:
        checks = tuple(
            ProbeCheck(str(item["id"]), str(item["severity"]), str(item["setting"]), str(item["message"]), str(item["fix"]))
            for item in data.get("findings") or ()
        )
    except (KeyError, TypeError) as error:
        raise ProbeReportError(f"{path}: a probe finding lacks {error}") from error
    return ProbeReport(str(path), str(data.get("mode", "")), status, _script(data), checks)


def _script(data: dict) -> str | None:
    """`probe run` keeps its script under `script.path`, `probe verify` under `verify.script`."""
    for section, key in (("script", "path"), ("verify", "script")):
        value = data.get(section)
        if isinstance(value, dict) and isinstance(value.get(key), str):
            return value[key]
    return None
