"""Applying fixes: non-overlapping text edits, a parse check, atomic writes and diffs."""

from __future__ import annotations

import difflib
import os
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path

from repro_lint.rules.base import Applicability, Finding, Fix
from repro_lint.source import LineIndex

MAX_FIX_ROUNDS = 10


def applicable(finding: Finding, unsafe: bool) -> bool:
    return finding.fix is not None and (unsafe or finding.fix.applicability is Applicability.SAFE)


def _spans(fix: Fix, index: LineIndex) -> list[tuple[int, int, str]]:
    return sorted((index.offset(edit.start), index.offset(edit.end), edit.content) for edit in fix.edits)


def _overlaps(span: tuple[int, int, str], taken: list[tuple[int, int, str]]) -> bool:
    start, end, _ = span
    # Two insertions at one offset conflict too: their order would be arbitrary.
    return any(start < other_end and other_start < end or start == other_start for other_start, other_end, _ in taken)


def apply_fixes(text: str, fixes: Iterable[Fix], parses: Callable[[str], bool]) -> tuple[str, int]:
    """Apply as many fixes as do not overlap, each whole or not at all, and only if the result still
    parses. Returns the new text and how many fixes were applied; the caller re-lints and calls again
    for the fixes that were held back (overlapping ones are applied in a later round)."""
    index = LineIndex(text)
    chosen: list[list[tuple[int, int, str]]] = []
    taken: list[tuple[int, int, str]] = []
    for fix in sorted(fixes, key=lambda fix: (_spans(fix, index)[0][:2], fix.message)):
        spans = _spans(fix, index)
        if any(_overlaps(span, taken) for span in spans):
            continue
        chosen.append(spans)
        taken.extend(spans)
    if not chosen:
        return text, 0
    result = _splice(text, taken)
    if parses(result):
        return result, len(chosen)
    # One of them breaks the code: keep only those that are fine on their own.
    good = [spans for spans in chosen if parses(_splice(text, spans))]
    if len(good) == len(chosen) or not good:
        return text, 0
    result = _splice(text, [span for spans in good for span in spans])
    return (result, len(good)) if parses(result) else (text, 0)


def _splice(text: str, spans: list[tuple[int, int, str]]) -> str:
    for start, end, content in sorted(spans, reverse=True):
        text = text[:start] + content + text[end:]
    return text


def unified_diff(path: str, before: str, after: str) -> str:
    return "".join(
        difflib.unified_diff(
            before.splitlines(keepends=True), after.splitlines(keepends=True), fromfile=f"a/{path}", tofile=f"b/{path}"
        )
    )


def write_atomically(path: Path, text: str, encoding: str = "utf-8") -> None:
    """Write through a temporary file in the same folder and rename it over the original, so a crash
    never leaves a half-written source file. The file keeps its permissions and its encoding."""
    mode = path.stat().st_mode
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "w", encoding=encoding, newline="") as stream:
            stream.write(text)
            stream.flush()
            os.fsync(stream.fileno())
        os.chmod(temporary, mode & 0o7777)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise

