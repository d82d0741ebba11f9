"""Applying fixes: non-overlapping text edits, a parse check, atomic writes and diffs."""

from __future__ import annotations

import difflib
import os
import stat
import tempfile
from bisect import bisect_left
from collections.abc import Callable, Iterable
from pathlib import Path

from repro_lint.core.findings import Applicability, Finding, Fix
from repro_lint.core.source import LineIndex

MAX_FIX_ROUNDS = 10


def applicable(finding: Finding, unsafe: bool) -> bool:
    return finding.fix is not None and (unsafe or finding.fix.applicability is Applicability.SAFE)


def _spans(fix: Fix, index: LineIndex) -> list[tuple[int, int, str]]:
    return sorted((index.offset(edit.start), index.offset(edit.end), edit.content) for edit in fix.edits)


class _Taken:
    """The spans of the fixes chosen so far, in order. Two spans of different fixes conflict where
    they overlap, or start at one offset (two insertions there would go in an arbitrary order), and
    one fix's edits are one change, which does not overlap itself; so their ends rise with their
    starts, and whether a new span conflicts is two binary searches, not a scan of them all for each
    fix (0.2 s of a module with 1,800 fixes)."""

    def __init__(self) -> None:
        self.starts: list[int] = []
        self.ends: list[int] = []
        self.spans: list[tuple[int, int, str]] = []

    def conflicts(self, span: tuple[int, int, str]) -> bool:
        start, end, _ = span
        at = bisect_left(self.starts, start)
        if at < len(self.starts) and self.starts[at] == start:
            return True
        # Of the spans starting before `end`, the last ends last.
        before = bisect_left(self.starts, end, lo=at)
        return before > 0 and self.ends[before - 1] > start

    def add(self, span: tuple[int, int, str]) -> None:
        at = bisect_left(self.spans, span)  # an insertion before the edit starting where it does
        self.starts.insert(at, span[0])
        self.ends.insert(at, span[1])
        self.spans.insert(at, span)


def apply_fixes(text: str, fixes: Iterable[Fix], parses: Callable[[str], bool], line_length: int | None = None) -> tuple[str, list[Fix]]:
    """Apply as many fixes as do not overlap, each whole or not at all, and only if the result still
    parses. Returns the new text and the fixes applied; the caller re-lints and calls again for the
    fixes that were held back (overlapping ones are applied in a later round). With a `line_length`
    (Python source), whole lines a fix inserts are wrapped to it."""
    index = LineIndex(text)
    unit = _indent_unit(text) if line_length is not None else ""
    chosen: list[tuple[Fix, list[tuple[int, int, str]]]] = []
    taken = _Taken()
    for fix in sorted(fixes, key=lambda fix: (_spans(fix, index)[0][:2], fix.message)):
        spans = _spans(fix, index)
        if line_length is not None:
            spans = [(start, end, _wrapped(text, start, end, content, line_length, unit)) for start, end, content in spans]
        if any(taken.conflicts(span) for span in spans):
            continue
        chosen.append((fix, spans))
        for span in spans:
            taken.add(span)
    if not chosen:
        return text, []
    result = _splice(text, taken.spans)
    if parses(result):
        return result, [fix for fix, _ in chosen]
    # One of them breaks the code: keep only those that are fine on their own.
    good = [(fix, spans) for fix, spans in chosen if parses(_splice(text, spans))]
    if len(good) == len(chosen) or not good:
        return text, []
    result = _splice(text, [span for _, spans in good for span in spans])
    return (result, [fix for fix, _ in good]) if parses(result) else (text, [])


def _wrapped(text: str, start: int, end: int, content: str, limit: int, unit: str) -> str:
    """`content`, to replace `text[start:end]`, with each whole line it brings wrapped to `limit`
    (`unit`: one level of the file's indentation)."""
    if "\n" not in content:
        return content
    # Imported here: wrapping parses with LibCST, which a run answered from the cache never loads.
    from repro_lint.analysis.wrapping import wrap_inserted_line

    newline = "\r\n" if "\r\n" in content else "\n"
    lines = content.split(newline)
    rest = text[end : text.find("\n", end) if "\n" in text[end:] else len(text)]
    whole = [at > 0 or start == 0 or text[start - 1] == "\n" for at in range(len(lines))]
    whole[-1] = whole[-1] and not rest.strip()
    return newline.join(wrap_inserted_line(line, limit, unit, newline) if full else line for line, full in zip(lines, whole))


def _indent_unit(text: str) -> str:
    """One level of the file's indentation: how much the first block (after a line ending in `:`)
    is indented, else four spaces."""
    opener: str | None = None
    for line in text.splitlines():
        code = line.split("#", 1)[0].rstrip()
        if not code:
            continue
        indent = line[: len(line) - len(line.lstrip(" \t"))]
        if opener is not None and len(indent) > len(opener) and indent.startswith(opener):
            return indent[len(opener):]
        opener = indent if code.endswith(":") else None
    return "    "


def _splice(text: str, spans: list[tuple[int, int, str]]) -> str:
    """`text` with each span's range replaced by its content; the spans do not overlap."""
    pieces = []
    at = 0
    for start, end, content in sorted(spans):
        pieces += (text[at:start], content)
        at = end
    pieces.append(text[at:])
    return "".join(pieces)


def unified_diff(path: str, before: str, after: str) -> str:
    return "".join(
        difflib.unified_diff(
            before.splitlines(keepends=True), after.splitlines(keepends=True), fromfile=f"a/{path}", tofile=f"b/{path}"
        )
    )


class NotWritten(Exception):
    """A fixed text that was not written: the file is as it was, for the reason given."""

    def __init__(self, path: Path, reason: str) -> None:
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.reason = reason


def write_atomically(path: Path, text: str, encoding: str, read: str) -> None:
    """Replace the file with `text` through a temporary file in the same folder renamed over it, so
    a crash never leaves a half-written source file. `read` is the file's text as it was read and
    fixed: a file that no longer holds it was edited meanwhile, and is left alone rather than lose
    that edit. The file keeps its permissions, owner and encoding; a read-only file, or one whose
    owner a new file cannot get, is not written. Raises NotWritten."""
    path = Path(os.path.realpath(path))  # a symbolic link stays one: the file it names is replaced
    try:
        status = path.stat()
    except OSError as error:
        raise NotWritten(path, f"cannot read its permissions: {error.strerror or error}") from None
    # Root may write any file: one that nobody may write is read-only all the same.
    if not os.access(path, os.W_OK) or not status.st_mode & 0o222:
        raise NotWritten(path, "the file is read-only")
    try:
        handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    except OSError as error:
        raise NotWritten(path, f"cannot create a file in its folder: {error.strerror or error}") from None
    try:
        with os.fdopen(handle, "w", encoding=encoding, newline="") as stream:
            stream.write(text)
            stream.flush()
            os.fsync(stream.fileno())
        if not _keep_owner(Path(temporary), status):
            raise NotWritten(path, "it belongs to another user or group, which a rewritten file could not keep")
        os.chmod(temporary, stat.S_IMODE(status.st_mode))
        if not _holds(path, read.encode(encoding)):
            raise NotWritten(path, "the file changed after it was read; run again to fix the new text")
        os.replace(temporary, path)
    except OSError as error:
        Path(temporary).unlink(missing_ok=True)
        raise NotWritten(path, error.strerror or str(error)) from None
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def _keep_owner(temporary: Path, status: os.stat_result) -> bool:
    """Give the new file the old one's owner and group, if the process may: a rewrite must not hand
    a file that belongs to someone else to the user running the fix."""
    new = temporary.stat()
    if (new.st_uid, new.st_gid) == (status.st_uid, status.st_gid):
        return True
    try:
        os.chown(temporary, status.st_uid, status.st_gid)
    except OSError:
        return False
    return True


def _holds(path: Path, expected: bytes) -> bool:
    """Whether the file's bytes are `expected`, and were not being changed while read (its size and
    modification time the same before and after)."""
    try:
        before = path.stat()
        data = path.read_bytes()
        after = path.stat()
    except OSError:
        return False
    return data == expected and (before.st_size, before.st_mtime_ns) == (after.st_size, after.st_mtime_ns)
