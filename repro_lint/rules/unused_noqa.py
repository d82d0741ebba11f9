"""REP002: a `# noqa` comment that suppressed nothing (Ruff's RUF100)."""

from __future__ import annotations

from repro_lint.core.findings import FixAvailability
from repro_lint.rules.base import RuleMeta, register

UNUSED_NOQA = "REP002"


@register
class UnusedNoqa(RuleMeta):
    """Reported by the engine once every other rule has run on a project: only then is it known which
    comments suppressed a finding (repro_lint.analysis.suppression.unused_noqa)."""

    code = UNUSED_NOQA
    name = "unused-noqa"
    default_enabled = False
    fix_availability = FixAvailability.ALWAYS
