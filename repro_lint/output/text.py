"""flake8's one-line-per-finding shape (`concise`, also called `text`), with a Ruff-style summary."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence

from repro_lint.core.catalog import CATALOG
from repro_lint.core.findings import Applicability, Finding
from repro_lint.output.context import ReportContext
from repro_lint.output.style import paint


def finding_line(finding: Finding, color: bool = False, marked: bool = False) -> str:
    """`path:line:column: CODE message`; `marked` adds Ruff's `[*]`: `--fix` would fix it."""
    cell = f"cell {finding.cell}:" if finding.cell is not None else ""
    marker = " " + paint("[*]", "fixable", color) if marked else ""
    where = paint(finding.path, "path", color) + f":{cell}{finding.start.line}:{finding.start.column + 1}:"
    return f"{where} {paint(finding.code, 'code', color)}{marker} {finding.message}"


def render(findings: Sequence[Finding], context: ReportContext, color: bool, marked: Callable[[Finding], bool]) -> list[str]:
    return [finding_line(finding, color, marked(finding)) for finding in findings]


def fixes_applied(fixed_by_file: Mapping[str, Mapping[str, int]], color: bool = False) -> list[str]:
    """`--show-fixes` after `--fix`: what was fixed, per file and code, as Ruff lists it."""
    total = sum(sum(codes.values()) for codes in fixed_by_file.values())
    if not total:
        return []
    lines = [f"Fixed {_plural(total)}:"]
    for path, codes in sorted(fixed_by_file.items()):
        lines.append(f"- {paint(path, 'path', color)}:")
        lines.extend(f"    {count} × {paint(code, 'code', color)} ({CATALOG[code].name})" for code, count in codes.items())
    return [*lines, ""]


def _plural(count: int) -> str:
    return f"{count} finding" if count == 1 else f"{count} findings"


_PASSED = "All checks passed!"


def summary(findings: Sequence[Finding], fixed: int | None, unsafe_fixes: bool, errors: int = 0) -> str:
    """The closing line; with `errors` (internal errors on stderr), never "All checks passed!"."""
    line = _summary(findings, fixed, unsafe_fixes)
    if not errors:
        return line
    if line == _PASSED:
        line = "No findings in what was analysed."
    return f"{line} {errors} internal error{'' if errors == 1 else 's'}: see above."


def _summary(findings: Sequence[Finding], fixed: int | None, unsafe_fixes: bool) -> str:
    if fixed is not None:
        if not findings:
            return f"Found {_plural(fixed)} ({fixed} fixed, 0 remaining)." if fixed else _PASSED
        return f"Found {_plural(fixed + len(findings))} ({fixed} fixed, {len(findings)} remaining)."
    if not findings:
        return _PASSED
    safe = sum(1 for finding in findings if finding.fix and finding.fix.applicability is Applicability.SAFE)
    unsafe = sum(1 for finding in findings if finding.fix and finding.fix.applicability is Applicability.UNSAFE)
    if unsafe_fixes:
        safe, unsafe = safe + unsafe, 0
    hints = []
    if safe:
        hints.append(f"{safe} fixable with --fix" + (" --unsafe-fixes" if unsafe_fixes else ""))
    if unsafe:
        hints.append(f"{unsafe} more with --fix --unsafe-fixes")
    return f"Found {_plural(len(findings))}" + (f" ({', '.join(hints)})." if hints else ".")


def statistics(findings: Sequence[Finding]) -> list[str]:
    counts = Counter((finding.code, finding.name) for finding in findings)
    rows = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    width = max((len(str(count)) for _, count in rows), default=1)
    return [f"{count:>{width}}\t{code}\t{name}" for (code, name), count in rows]
