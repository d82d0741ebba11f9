"""Jupyter notebooks (`.ipynb`): their code cells joined into one Python module, findings' positions
mapped back to cells, and fixed code written back into the cells with the rest of the file unchanged.

The joined module holds the Python cells in order. A marker comment line separates two cells, so the
cells can be cut apart again after fixes have inserted lines, and one after the last cell counts the
markers, so a fix that removed one is refused; IPython syntax (`%magic`, `%%cell magic`,
`!cmd`, `x = !cmd`, `obj?`) becomes a `pass` statement tagged with a marker comment, so no position
moves and a fix can neither see nor change the original line. Cells of other languages (`%%bash`,
`%%html`) and notebooks of other kernels are left out, as Ruff does.
"""

from __future__ import annotations

import bisect
import difflib
import io
import json
import re
import tokenize
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace

from repro_lint.analysis.result import ModuleIdentity
from repro_lint.analysis.suppression import GENERATED_COMMENT
from repro_lint.core.findings import Edit, Finding
from repro_lint.core.source import Position

SUFFIX = ".ipynb"

# Cell magics whose body is Python (the rest of the cell is linted), as Ruff lists them.
_PYTHON_CELL_MAGICS = frozenset({"capture", "debug", "prun", "pypy", "python", "python3", "time", "timeit"})
_CELL_MARKER = GENERATED_COMMENT + "cell {index}"
_MAGIC_MARKER = "pass  " + GENERATED_COMMENT + "magic {index}"
_END_MARKER = GENERATED_COMMENT + "end: {cells} cells, {magics} magics"
_CELL_MARKER_LINE = re.compile("^" + re.escape(GENERATED_COMMENT) + r"cell (\d+)$")
_MAGIC_MARKER_LINE = re.compile(r"^[ \t]*pass  " + re.escape(GENERATED_COMMENT) + r"magic (\d+)$")
_END_MARKER_LINE = re.compile("^" + re.escape(GENERATED_COMMENT) + r"end: (\d+) cells, (\d+) magics$")
_MAGIC_LINE = re.compile(
    r"""^[ \t]*(?:
        %                                   # %line magic, %%cell magic
      | !(?!=)                              # !shell command (not `!=` continuing an expression)
      | [\w.]+(?:[ \t]*,[ \t]*[\w.]+)*[ \t]*=[ \t]*[!%]   # x = !cmd, x = %magic
      | \?{1,2}[\w.*]                       # ?name, ??name
      | [\w.*\[\]()]+\?{1,2}[ \t]*$         # name?, name??
    )""",
    re.VERBOSE,
)
_JSON_SPACE = re.compile(r"[ \t\n\r]*")


# A line of the same file, as messages name it (message_text.place; CPython's "on line 3").
_SAME_FILE_LINE = re.compile(r"\bline (\d+)\b")


class NotebookError(Exception):
    """The file is not a notebook repro-lint can read; `line` and `column` (0-based) locate the cause
    in the file's text."""

    def __init__(self, message: str, line: int = 1, column: int = 0) -> None:
        super().__init__(message)
        self.line = line
        self.column = column


def is_notebook(path: str) -> bool:
    return path.lower().endswith(SUFFIX)


def identity(relative_path: str) -> ModuleIdentity:
    """A module name no import can spell (`nb-ipynb`), so a notebook never shadows `nb.py`; its folder
    part still resolves the notebook's imports of sibling modules, as Jupyter's working folder does."""
    folder, _, name = relative_path[: -len(SUFFIX)].rpartition("/")
    module = name.replace(".", "-") + "-ipynb"
    return ModuleIdentity(f"{folder.replace('/', '.')}.{module}" if folder else module, False, relative_path)


@dataclass(frozen=True)
class _Cell:
    """A code cell that is linted: its 1-based number among all cells, its source as the file has it
    and where that value sits in the file's text, and its IPython lines by 0-based line within the cell."""

    number: int
    source: str
    span: tuple[int, int]
    as_lines: bool
    magics: tuple[tuple[int, str], ...]
    cell_magic: bool  # the first line is a `%%` magic: it must stay first


@dataclass(frozen=True)
class Notebook:
    raw: str
    cells: tuple[_Cell, ...]
    code: str  # the joined module
    starts: tuple[int, ...]  # line of the joined module where each cell's code begins

    # --- positions ---------------------------------------------------------------------------------

    def _locate(self, position: Position) -> tuple[int, Position]:
        """(cell number, position within the cell). The marker line after a cell counts as the line
        after the cell's last line: an insertion there appends to the cell."""
        index = max(bisect.bisect_right(self.starts, position.line) - 1, 0)
        return self.cells[index].number, Position(position.line - self.starts[index] + 1, position.column)

    def locate(self, finding: Finding, relative_path: str) -> Finding:
        """The finding with cell-relative positions (its fix's edits too) and its cell number. Places
        in this notebook that the message names (`nb.ipynb:11`, from the project model) become
        `nb.ipynb:cell 3:5`, and its lines (`line 11`) `cell 3, line 5`."""
        cell, start = self._locate(finding.start)
        end_cell, end = self._locate(finding.end)
        if end_cell != cell:
            end = start
        here = re.compile(rf"(?<![\w/.-]){re.escape(relative_path)}:(\d+)\b")
        message = here.sub(lambda match: self._place(relative_path, int(match.group(1))), finding.message)
        message = _SAME_FILE_LINE.sub(lambda match: self._line(int(match.group(1))), message)
        if finding.code == "REP001":
            message = message.replace("cannot parse:", f"cannot parse cell {cell}:", 1)
        fix = finding.fix
        if fix is not None:
            fix = replace(fix, edits=tuple(self._edit(edit) for edit in fix.edits))
        return replace(finding, start=start, end=end, message=message, fix=fix, cell=cell)

    def _place(self, relative_path: str, line: int) -> str:
        cell, position = self._locate(Position(line, 0))
        return f"{relative_path}:cell {cell}:{position.line}"

    def _line(self, line: int) -> str:
        cell, position = self._locate(Position(line, 0))
        return f"cell {cell}, line {position.line}"

    def _edit(self, edit: Edit) -> Edit:
        return Edit(self._locate(edit.start)[1], self._locate(edit.end)[1], edit.content)

    # --- writing back ------------------------------------------------------------------------------

    def cell_sources(self, code: str) -> list[str]:
        """Each linted cell's source, cut out of a (fixed) joined module, IPython lines restored."""
        if not self.cells:
            return []
        chunks: list[list[str]] = [[]]
        for line in _lines(code):
            if _CELL_MARKER_LINE.match(line):
                chunks.append([])
            elif not _END_MARKER_LINE.match(line):
                chunks[-1].append(line)
        if len(chunks) != len(self.cells):
            raise ValueError("the notebook's cell markers were changed")
        magics = [line for cell in self.cells for _, line in cell.magics]
        sources = []
        for cell, lines in zip(self.cells, chunks):
            restored = []
            for line in lines:
                match = _MAGIC_MARKER_LINE.match(line)
                restored.append(magics[int(match.group(1)) - 1] + "\n" if match else line)
            if cell.cell_magic and restored and restored[0] != cell.magics[0][1] + "\n":
                # Code inserted above a `%%time` line runs after it: the magic stays the first line.
                restored.remove(cell.magics[0][1] + "\n")
                restored.insert(0, cell.magics[0][1] + "\n")
            text = "".join(restored)
            if not cell.source.endswith("\n"):
                text = text.removesuffix("\n")
            sources.append(text)
        return sources

    def updated(self, code: str) -> str:
        """The notebook file's text with the cells of `code`: only the changed cells' `source` values
        are rewritten, in the file's own layout; outputs, metadata and the rest stay byte for byte."""
        text = self.raw
        for cell, source in sorted(zip(self.cells, self.cell_sources(code)), key=lambda pair: -pair[0].span[0]):
            if source != cell.source:
                start, end = cell.span
                text = text[:start] + _serialized(source, cell.as_lines, self.raw[start:end], self.raw) + text[end:]
        return text

    def diff(self, display: str, code: str) -> str:
        """Unified diffs of the changed cells, headed `a/nb.ipynb:cell N`, as Ruff shows them."""
        parts = []
        for cell, source in zip(self.cells, self.cell_sources(code)):
            if source != cell.source:
                name = f"{display}:cell {cell.number}"
                before, after = cell.source.splitlines(keepends=True), source.splitlines(keepends=True)
                lines = difflib.unified_diff(before, after, fromfile=f"a/{name}", tofile=f"b/{name}")
                # As diff(1) marks it, so the next cell's header starts on a line of its own.
                parts.extend(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines)
        return "".join(parts)


def parses(code: str) -> bool:
    """What a fixed joined module must pass: it parses, and every marker is still there, in order."""
    from repro_lint.analysis.python import parses as python_parses  # LibCST: loaded only when a fix is checked

    return python_parses(code) and _markers_intact(code)


def _markers_intact(code: str) -> bool:
    lines = code.split("\n")
    ends = [match.groups() for line in lines if (match := _END_MARKER_LINE.match(line))]
    if len(ends) != 1:
        return False
    cells, magics = (int(count) for count in ends[0])
    found = {
        pattern: [int(match.group(1)) for line in lines if (match := pattern.match(line))]
        for pattern in (_CELL_MARKER_LINE, _MAGIC_MARKER_LINE)
    }
    return found[_CELL_MARKER_LINE] == list(range(2, cells + 1)) and found[_MAGIC_MARKER_LINE] == list(range(1, magics + 1))


# --- reading -----------------------------------------------------------------------------------------


def read(raw: str) -> Notebook:
    """Parse a notebook file's text; NotebookError says why it cannot be linted."""
    try:
        document = json.loads(raw)
    except json.JSONDecodeError as error:
        # The decoder's own words stop before the place ("Unterminated string starting at"): add it.
        place = f"{error.msg[0].lower()}{error.msg[1:]} at line {error.lineno}, column {error.colno}"
        raise NotebookError(f"cannot read the notebook: invalid JSON ({place})", error.lineno, error.colno - 1) from None
    except RecursionError:  # the decoder recurses once per level of nesting
        raise NotebookError("cannot read the notebook: its JSON is nested too deeply") from None
    if not isinstance(document, dict) or not isinstance(document.get("cells"), list):
        raise NotebookError("not a Jupyter notebook: no `cells` list (nbformat 4 is read)")
    if not _python_kernel(document.get("metadata")):
        return Notebook(raw, (), "", ())
    spans = _source_spans(raw)
    cells = []
    for number, cell in enumerate(document["cells"], 1):
        if not isinstance(cell, dict):
            raise NotebookError(f"cell {number} is not a JSON object")
        if cell.get("cell_type") != "code":
            continue
        value = cell.get("source", "")
        if isinstance(value, list) and all(isinstance(line, str) for line in value):
            source, as_lines = "".join(value), True
        elif isinstance(value, str):
            source, as_lines = value, False
        else:
            raise NotebookError(f"cell {number}: `source` must be a string or a list of strings")
        lines = _split(source)
        if lines and lines[0].startswith("%%") and _cell_magic(lines[0]) not in _PYTHON_CELL_MAGICS:
            continue  # the cell is another language
        magics = _ipython_lines(lines)
        cell_magic = bool(lines) and lines[0].startswith("%%")
        cells.append(_Cell(number, source, spans[number - 1], as_lines, magics, cell_magic))
    return _joined(raw, cells)


def _ipython_lines(lines: list[str]) -> tuple[tuple[int, str], ...]:
    """The IPython lines by row: magics and shell commands, and the lines a trailing backslash
    continues one onto (`!pip install \\` and the packages below it), which IPython joins to it."""
    found = []
    continued = False
    for row, line in enumerate(lines):
        if continued or _MAGIC_LINE.match(line):
            found.append((row, line))
            continued = line.endswith("\\")
    return tuple(found)


def _python_kernel(metadata: object) -> bool:
    """False for notebooks whose kernel names another language (R, Julia); unknown counts as Python."""
    if not isinstance(metadata, dict):
        return True
    for key, field in (("language_info", "name"), ("kernelspec", "language")):
        table = metadata.get(key)
        if isinstance(table, dict) and isinstance(table.get(field), str):
            return table[field].lower() == "python"
    return True


def _cell_magic(line: str) -> str:
    return line[2:].split(maxsplit=1)[0] if line[2:].strip() else ""


def _joined(raw: str, cells: list[_Cell]) -> Notebook:
    """Join the cells with marker lines, IPython lines replaced; lines that only look like IPython
    (inside a string or brackets) are kept once the tokenizer has said where statements begin."""
    draft, draft_starts = _join(cells, lambda index: "#", lambda index: "pass")
    statements = _statement_lines(draft) if any(cell.magics for cell in cells) else None
    if statements is not None:  # else nothing to check, or the code does not tokenize and the parser will say why
        cells = [
            replace(cell, magics=tuple((row, line) for row, line in cell.magics if first + row in statements))
            for cell, first in zip(cells, draft_starts)
        ]
        cells = [replace(cell, cell_magic=cell.cell_magic and cell.magics[:1] != () and cell.magics[0][0] == 0) for cell in cells]
    code, starts = _join(cells, _CELL_MARKER.format, _MAGIC_MARKER.format)
    code += _END_MARKER.format(cells=len(cells), magics=sum(len(cell.magics) for cell in cells)) + "\n"
    return Notebook(raw, tuple(cells), code, tuple(starts))


def _join(cells: Sequence[_Cell], marker: Callable[..., str], placeholder: Callable[..., str]) -> tuple[str, list[int]]:
    parts, starts, line, magic = [], [], 1, 0
    for index, cell in enumerate(cells):
        if index:
            parts.append(marker(index=index + 1) + "\n")
            line += 1
        starts.append(line)
        lines = _split(cell.source)
        indent, continues = "", -1
        for row, original in cell.magics:
            magic += 1
            if row != continues:  # a continued line's placeholder is indented as the line it continues
                indent = original[: len(original) - len(original.lstrip())]
            lines[row] = indent + placeholder(index=magic)
            continues = row + 1 if original.endswith("\\") else -1
        parts.extend(text + "\n" for text in lines)
        line += len(lines)
    return "".join(parts), starts


def _split(source: str) -> list[str]:
    """A cell's lines without their newlines. Only '\\n' ends a line, as in Python's tokenizer."""
    lines = source.split("\n")
    return lines[:-1] if lines[-1] == "" else lines


def _statement_lines(code: str) -> set[int] | None:
    """Lines on which a statement begins (not inside brackets, a string or a continuation)."""
    found: set[int] = set()
    depth, starts_statement = 0, True
    try:
        for token in tokenize.generate_tokens(io.StringIO(code).readline):
            if token.type in (tokenize.NL, tokenize.NEWLINE, tokenize.COMMENT, tokenize.INDENT, tokenize.DEDENT):
                if token.type == tokenize.NEWLINE or (token.type == tokenize.NL and depth == 0):
                    starts_statement = True
                continue
            if starts_statement and depth == 0:
                found.add(token.start[0])
            starts_statement = False
            if token.type == tokenize.OP and token.string in "([{":
                depth += 1
            elif token.type == tokenize.OP and token.string in ")]}":
                depth = max(depth - 1, 0)
    except (tokenize.TokenError, SyntaxError):
        return None
    return found


# --- where each cell's `source` value sits in the file's text ---------------------------------------


def _source_spans(raw: str) -> list[tuple[int, int]]:
    """For every cell, the offsets of its `source` value in the file's text (or an empty span)."""
    decoder = json.JSONDecoder()
    spans: list[tuple[int, int]] = []
    for key, start in _members(raw, _skip(raw, 0), decoder):
        if key == "cells":
            for cell_start in _elements(raw, start, decoder):
                found = [value for name, value in _members(raw, cell_start, decoder) if name == "source"]
                spans.append((found[-1], decoder.raw_decode(raw, found[-1])[1]) if found else (cell_start, cell_start))
    return spans


def _skip(raw: str, at: int) -> int:
    match = _JSON_SPACE.match(raw, at)
    return match.end() if match else at


def _members(raw: str, at: int, decoder: json.JSONDecoder) -> Iterator[tuple[str, int]]:
    """(key, value offset) of each member of the object at `at`; a non-object has none."""
    if raw[at : at + 1] != "{":
        return
    at = _skip(raw, at + 1)
    while raw[at : at + 1] == '"':
        key, at = json.decoder.scanstring(raw, at + 1)
        value = _skip(raw, _skip(raw, at) + 1)  # past the ':'
        yield key, value
        at = _skip(raw, decoder.raw_decode(raw, value)[1])
        at = _skip(raw, at + 1) if raw[at : at + 1] == "," else at


def _elements(raw: str, at: int, decoder: json.JSONDecoder) -> Iterator[int]:
    if raw[at : at + 1] != "[":
        return
    at = _skip(raw, at + 1)
    while at < len(raw) and raw[at] != "]":
        yield at
        at = _skip(raw, decoder.raw_decode(raw, at)[1])
        at = _skip(raw, at + 1) if raw[at : at + 1] == "," else at


def _serialized(source: str, as_lines: bool, old: str, raw: str) -> str:
    """The new `source` value, written as the old one was: a list of lines or one string, with the
    old value's indentation, line ends and escaping of non-ASCII text."""
    ascii_only = raw.isascii() and "\\u" in raw
    if not as_lines:
        return json.dumps(source, ensure_ascii=ascii_only)
    items = [json.dumps(line, ensure_ascii=ascii_only) for line in _lines(source)]
    layout = re.match(r"\[(?P<newline>\r?\n)(?P<indent>[ \t]*)", old)
    closing = re.search(r"\n(?P<indent>[ \t]*)\]$", old)
    if not items or layout is None or closing is None:
        return "[" + ", ".join(items) + "]"
    newline, indent = layout.group("newline"), layout.group("indent")
    return "[" + newline + indent + ("," + newline + indent).join(items) + newline + closing.group("indent") + "]"


def _lines(source: str) -> list[str]:
    """Jupyter's list form: every line keeps its newline, the last one may have none."""
    return re.findall(r"[^\n]*\n|[^\n]+$", source)
