"""Reading source files as text, and converting between (line, column) positions and offsets."""

from __future__ import annotations

import bisect
import io
import tokenize
import zlib
from dataclasses import dataclass
from pathlib import Path

from repro_lint.core.records import pickled_by_constructor


class UnreadableSource(Exception):
    """The file is not text repro-lint can lint: binary, not UTF-8, or unreadable."""

# A 1-based line number. Facts annotate their lines with it, so that two versions of a module's facts
# can be compared up to lines moved by an edit above them (facts_shift.py).
Line = int


@pickled_by_constructor
@dataclass(frozen=True, order=True, slots=True)
class Position:
    """A place in a text: 1-based line, 0-based column counted in characters (as LibCST does)."""

    line: Line
    column: int


def decode(data: bytes) -> tuple[str, str]:
    """A file's text and encoding: UTF-8 unless a BOM or a PEP 263 coding line says otherwise (as
    Python reads it), or an explanation of why it is not lintable text."""
    if b"\x00" in data:
        raise UnreadableSource("file is binary (it contains NUL bytes)")
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as error:
        raise UnreadableSource(f"invalid encoding declaration: {error.msg}") from None
    try:
        text = data.decode(encoding)
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        shown = "UTF-8" if encoding.startswith("utf-8") else encoding
        raise UnreadableSource(
            f"file is not valid {shown} (byte 0x{data[error.start]:02x} on line {line}); repro-lint reads "
            "sources as UTF-8 unless a coding declaration says otherwise"
        ) from None
    # With utf-8-sig the BOM is gone from the text; it comes back when the file is written.
    return text, encoding


def read_source(path: Path) -> tuple[str, str]:
    try:
        data = path.read_bytes()
    except OSError as error:
        raise UnreadableSource(f"cannot read file: {error.strerror or error}") from None
    return decode(data)


def read_text(path: Path) -> str:
    return read_source(path)[0]


def encoded(text: str) -> bytes:
    return text.encode("utf-8", "surrogatepass")  # a text given by a caller may hold lone surrogates


def packed(text: str) -> bytes:
    """`text` compressed, for holding many texts at once: a `str` takes 1 to 4 bytes a character (its
    widest character decides), compressed UTF-8 about a third of a byte."""
    return zlib.compress(encoded(text), 1)


def unpacked(data: bytes) -> str:
    return zlib.decompress(data).decode("utf-8", "surrogatepass")


class LineIndex:
    """Maps positions to string offsets for one text. Only '\\n' ends a line, as in Python's tokenizer."""

    def __init__(self, text: str) -> None:
        self.text = text
        self._starts = [0]
        start = text.find("\n")
        while start != -1:
            self._starts.append(start + 1)
            start = text.find("\n", start + 1)

    @property
    def line_count(self) -> int:
        return len(self._starts)

    def offset(self, position: Position) -> int:
        line = min(max(position.line, 1), len(self._starts))
        return min(self._starts[line - 1] + position.column, len(self.text))

    def position(self, offset: int) -> Position:
        line = bisect.bisect_right(self._starts, offset)
        return Position(line, offset - self._starts[line - 1])

    def line_text(self, line: int) -> str:
        start = self._starts[line - 1]
        end = self._starts[line] - 1 if line < len(self._starts) else len(self.text)
        return self.text[start:end].rstrip("\r")
