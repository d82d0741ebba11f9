"""REP001: a file repro-lint cannot read as Python is reported, never skipped silently."""

from __future__ import annotations

from repro_lint.rules.base import RuleMeta, register


@register
class SyntaxErrorRule(RuleMeta):
    """Reported by the engine itself when a file does not parse or is not UTF-8 text; it has no visitor."""

    code = "REP001"
    name = "syntax-error"
