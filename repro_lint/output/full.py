"""Ruff's `full` shape: each finding's line, then the source it points at with a caret under its
span, and its fix (what it does, whether `--fix` applies it, and the change as numbered - and +
lines; in a notebook, the fix's message only, as `--diff` shows its cells). A finding whose source
is unknown (a file that could not be read) gets its line only."""

from __future__ import annotations

import difflib
from collections.abc import Callable, Sequence

from repro_lint.core.findings import Applicability, Finding, Fix
from repro_lint.core.source import LineIndex
from repro_lint.output.context import ReportContext, source_of
from repro_lint.output.style import paint
from repro_lint.output.text import finding_line

MAX_SPAN_LINES = 8  # a longer span shows its first lines and an ellipsis
_TAB = 4


def _visible(line: str) -> str:
    return line.expandtabs(_TAB)


def snippet(finding: Finding, index: LineIndex, color: bool) -> list[str]:
    """The span's lines and one on each side, numbered, each spanned line's part underlined."""
    last_line = max(index.text.count("\n") + (not index.text.endswith("\n")), 1)
    first, last = finding.start.line, max(finding.end.line, finding.start.line)
    shown_last = min(last, first + MAX_SPAN_LINES - 1)
    numbers = range(max(first - 1, 1), min(shown_last + 1, last_line) + 1)
    width = len(str(numbers[-1])) if numbers else 1
    gutter = paint(" " * width + " |", "gutter", color)
    lines = [gutter]
    for number in numbers:
        text = index.line_text(number)
        lines.append(f"{paint(f'{number:>{width}} |', 'gutter', color)} {_visible(text)}".rstrip())
        if first <= number <= shown_last:
            start = finding.start.column if number == first else len(text) - len(text.lstrip())
            end = finding.end.column if number == last else len(text)
            begin, stop = len(_visible(text[:start])), len(_visible(text[:end]))
            carets = "^" * max(stop - begin, 1)
            label = f" {finding.code}" if number == first else ""
            lines.append(f"{gutter} {' ' * begin}{paint(carets + label, 'caret', color)}")
    if shown_last < last:
        lines.append(f"{gutter} ...")
    return [*lines, gutter]


def fix_lines(fix: Fix, index: LineIndex | None, color: bool) -> list[str]:
    """The fix's message and safety, and the lines it changes, numbered as before and after it
    (without `index`, the message only)."""
    kind = "safe fix" if fix.applicability is Applicability.SAFE else "unsafe fix, with --unsafe-fixes"
    lines = [f"  = {paint('help', 'help', color)}: {fix.message} ({kind})"]
    if index is None:
        return lines
    spans = sorted((index.offset(edit.start), index.offset(edit.end), edit.content) for edit in fix.edits)
    after = index.text
    for start, end, content in reversed(spans):
        after = after[:start] + content + after[end:]
    before_lines, after_lines = index.text.split("\n"), after.split("\n")
    width = len(str(max(len(before_lines), len(after_lines))))
    for tag, old_start, old_end, new_start, new_end in difflib.SequenceMatcher(None, before_lines, after_lines, autojunk=False).get_opcodes():
        if tag == "equal":
            continue
        for number in range(old_start, old_end):
            lines.append(paint(f"  {number + 1:>{width}} - {_visible(before_lines[number])}".rstrip(), "removed", color))
        for number in range(new_start, new_end):
            lines.append(paint(f"  {number + 1:>{width}} + {_visible(after_lines[number])}".rstrip(), "added", color))
    return lines


def render(findings: Sequence[Finding], context: ReportContext, color: bool, marked: Callable[[Finding], bool]) -> list[str]:
    lines: list[str] = []
    for finding in findings:
        lines.append(finding_line(finding, color, marked(finding)))
        index = source_of(finding, context)
        if index is not None and index.text:  # an unreadable file is held as no text
            lines.extend(snippet(finding, index, color))
            if finding.fix is not None:
                # A notebook fix's edits may lie in other cells than the finding's, and name no cell.
                lines.extend(fix_lines(finding.fix, index if finding.cell is None else None, color))
        lines.append("")
    return lines
