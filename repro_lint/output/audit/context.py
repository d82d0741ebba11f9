"""What every format of the audit says besides the verdicts: when it was made, by which version,
with which settings, and whether a terminal shows colours."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime


@dataclass(frozen=True)
class AuditContext:
    paths: tuple[str, ...]  # as given on the command line
    config: str | None  # the configuration file read, if any
    docs_url: str | None  # `[tool.repro-lint] docs-url`
    version: str | None  # repro-lint's, None when not installed
    generated: datetime
    color: bool = False  # text only: the terminal shows colours
