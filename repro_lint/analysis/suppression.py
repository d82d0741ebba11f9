"""`# noqa` comments and file-level `# repro-lint: noqa` directives: reading them, recording which ones
suppressed a finding (REP002 reports the others), and adding them for existing findings (`--add-noqa`)."""

from __future__ import annotations

import io
import re
import tokenize
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from repro_lint.core.catalog import CATALOG
from repro_lint.core.findings import Applicability, Edit, Finding, Fix
from repro_lint.core.message_text import elide
from repro_lint.core.source import LineIndex, Position
from repro_lint.rules.unused_noqa import UNUSED_NOQA

_CODES = r"[A-Z]+[0-9]+(?:[\s,]+[A-Z]+[0-9]+)*"
_NOQA = re.compile(rf"#\s*noqa(?::\s*(?P<codes>{_CODES}))?", re.IGNORECASE)
_FILE_NOQA = re.compile(rf"^#\s*repro-lint:\s*noqa(?::\s*(?P<codes>{_CODES}))?\s*$", re.IGNORECASE)
_ALL = None  # a noqa without codes
# `--add-noqa` does not silence a file that does not parse, nor the report of unused comments.
NOT_SILENCED_BY_ADD_NOQA = frozenset({"REP001", UNUSED_NOQA})
_HASH_COMMENTED = (".py", ".ipynb", ".sh", ".yaml", ".yml")
# Lines repro-lint writes into a notebook's joined cells (sources/notebook.py) stand for IPython lines
# and cell boundaries: a comment added there would be lost, so they cannot take a `noqa`.
GENERATED_COMMENT = "# repro-lint notebook "


def _codes(text: str | None) -> tuple[str, ...] | None:
    """The codes as written, upper-cased, without repeats; None means every code."""
    if not text:
        return _ALL
    return tuple(dict.fromkeys(code.upper() for code in re.split(r"[\s,]+", text.strip()) if code))


def _matches(code: str, codes: Iterable[str] | None) -> bool:
    return codes is _ALL or any(code.startswith(prefix) for prefix in codes)


@dataclass(frozen=True)
class Noqa:
    """A `# noqa` comment: where its comment starts (1-based line, 0-based column), the whole comment,
    and the codes it lists (None: every code)."""

    line: int
    column: int
    comment: str
    own_line: bool
    codes: tuple[str, ...] | None


@dataclass
class Suppressions:
    noqas: dict[int, Noqa] = field(default_factory=dict)
    # A line that cannot end in a comment (it ends inside a string, or continues on the next line)
    # is covered by the comment of the line where its statement or command can take one.
    covered_by: dict[int, int] = field(default_factory=dict)
    file_wide: list[tuple[str, ...] | None] = field(default_factory=list)
    # (comment line, code) of every finding a `# noqa` comment suppressed in this run.
    used: set[tuple[int, str]] = field(default_factory=set)

    def suppresses(self, code: str, line: int) -> bool:
        by_comment = False
        for at in (line, self.covered_by.get(line)):
            noqa = self.noqas.get(at) if at is not None else None
            if noqa is not None and _matches(code, noqa.codes):
                self.used.add((at, code))  # type: ignore[arg-type]
                by_comment = True
        return by_comment or any(_matches(code, codes) for codes in self.file_wide)

    def add_comment(self, line: int, column: int, comment: str, own_line: bool) -> None:
        file_match = _FILE_NOQA.match(comment) if own_line else None
        if file_match:
            self.file_wide.append(_codes(file_match.group("codes")))
            return
        match = _NOQA.search(comment)
        if match:
            self.noqas[line] = Noqa(line, column, comment.rstrip("\r\n"), own_line, _codes(match.group("codes")))

    def cover(self, lines: Iterable[int], by: int) -> None:
        for line in lines:
            self.covered_by.setdefault(line, by)


def python_suppressions(text: str) -> Suppressions:
    """Read noqa comments with the tokenizer, so a `# noqa` inside a string does not count."""
    suppressions = Suppressions()
    if "noqa" not in text.lower():
        return suppressions
    comments, covered = _python_comments(text)
    for token in comments:
        line, column = token.start
        suppressions.add_comment(line, column, token.string, not token.line[:column].strip())
    for line, by in covered.items():
        suppressions.cover([line], by)
    return suppressions


def python_comment_lines(text: str) -> dict[int, int]:
    """For each line that cannot end in a comment (inside a multi-line string, before a backslash
    continuation, or written by repro-lint), the next line that can, as Ruff places a `noqa` for them."""
    return _python_comments(text)[1]


def _python_comments(text: str) -> tuple[list[tokenize.TokenInfo], dict[int, int]]:
    """The comment tokens, and `python_comment_lines`, from one pass of the tokenizer. A text that
    does not tokenize has neither: the parser reports it, and its comments are best effort."""
    comments: list[tokenize.TokenInfo] = []
    endings: set[int] = set()
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type == tokenize.COMMENT:
                comments.append(token)
            if token.type in (tokenize.NEWLINE, tokenize.NL, tokenize.COMMENT):
                endings.add(token.start[0])
    except (tokenize.TokenError, SyntaxError):
        return comments, {}
    endings -= {token.start[0] for token in comments if token.string.startswith(GENERATED_COMMENT)}
    covered: dict[int, int] = {}
    previous = 0
    for line in sorted(endings):
        covered.update((inner, line) for inner in range(previous + 1, line))
        previous = line
    return comments, covered


# --- REP002: noqa comments that suppressed nothing ---------------------------------------------------


def _judged(selector: str, enabled: frozenset[str]) -> bool:
    """Only codes that ran can be found unused: a selector is judged when every rule it names ran
    (other tools' codes, REP002 itself and unknown codes never are)."""
    named = [code for code in CATALOG if code.startswith(selector)]
    return bool(named) and UNUSED_NOQA not in named and all(code in enabled for code in named)


def unused_noqa(display: str, text: str, suppressions: Suppressions, enabled: frozenset[str]) -> list[Finding]:
    """REP002 findings for the `# noqa` comments that suppressed nothing of `enabled` in this run.
    Reads and then forgets what was used, so the next run of the engine judges afresh."""
    used, suppressions.used = suppressions.used, set()
    if any(_matches(UNUSED_NOQA, codes) for codes in suppressions.file_wide):
        return []
    rule = CATALOG[UNUSED_NOQA]
    index = LineIndex(text)
    found = []
    for line, noqa in sorted(suppressions.noqas.items()):
        used_here = [code for at, code in used if at == line]
        if noqa.codes is _ALL:
            if used_here:
                continue
            unused: tuple[str, ...] = ()
            message = "`# noqa` suppresses nothing on this line"
        else:
            if any(_matches(UNUSED_NOQA, [code]) for code in noqa.codes):
                continue  # the comment silences this very report
            unused = tuple(
                code for code in noqa.codes if _judged(code, enabled) and not any(used_code.startswith(code) for used_code in used_here)
            )
            if not unused:
                continue
            listed = ", ".join(unused)
            message = f"`# noqa` lists {elide(listed, 48)}, which {'is' if len(unused) == 1 else 'are'} not reported on this line"
        start = Position(line, noqa.column + _NOQA.search(noqa.comment).start())  # type: ignore[union-attr]
        end = Position(line, noqa.column + len(noqa.comment))
        found.append(Finding(rule.code, rule.name, message, display, start, end, _removal(noqa, unused, index)))
    return found


def _removal(noqa: Noqa, unused: tuple[str, ...], index: LineIndex) -> Fix:
    """Remove the unused codes from the comment, or the whole directive when none is left, keeping
    other comment text. Removing a bare `# noqa` is unsafe: it may be there for another linter."""
    comment = noqa.comment
    match = _NOQA.search(comment)
    assert match is not None  # the comment was recorded because it matched
    kept = [code for code in noqa.codes or () if code not in unused]
    start = Position(noqa.line, noqa.column)
    end = Position(noqa.line, noqa.column + len(comment))
    if kept:
        new = comment[: match.start("codes")] + ", ".join(kept) + comment[match.end("codes") :]
        return Fix(Applicability.SAFE, f"Remove {', '.join(unused)} from the `noqa` comment", (Edit(start, end, new),))
    before, after = comment[: match.start()].rstrip(), comment[match.end() :].strip()
    applicability = Applicability.UNSAFE if noqa.codes is _ALL else Applicability.SAFE
    if before or after:
        # Other comment text stays: `# type: ignore  # noqa: REP301` -> `# type: ignore`.
        new = before + (" " if before and after else "") + (after if before else "# " + after.lstrip("#:,;- ").strip())
        return Fix(applicability, "Remove the unused `noqa` directive", (Edit(start, end, new),))
    if noqa.own_line:
        line_start = Position(noqa.line, 0)
        following = Position(noqa.line + 1, 0) if noqa.line < index.line_count else end
        return Fix(applicability, "Remove the unused `noqa` comment", (Edit(line_start, following, ""),))
    code_end = len(index.line_text(noqa.line)[: noqa.column].rstrip())
    return Fix(applicability, "Remove the unused `noqa` comment", (Edit(Position(noqa.line, code_end), end, ""),))


# --- --add-noqa ----------------------------------------------------------------------------------------


def takes_noqa(path: str) -> bool:
    """Whether a file of this name has `#` comments for a `noqa` (JSON has no comments)."""
    return path.lower().endswith(_HASH_COMMENTED)


def add_noqa(
    text: str, codes_by_line: Mapping[int, Sequence[str]], suppressions: Suppressions, python: bool
) -> tuple[str, dict[int, int]]:
    """`text` with `# noqa: CODES` for the findings on each line of `codes_by_line`, merged into an
    existing `# noqa: X` comment, and where each line's comment went: a line that cannot end in a
    comment (inside a multi-line string, before a continuation) gets it where its statement or command
    can, where `covered_by` reads it back. Lines whose comment needs no change are left out."""
    moved = python_comment_lines(text) if python else suppressions.covered_by
    wanted: dict[int, set[str]] = {}
    targets = {line: moved.get(line, line) for line in codes_by_line}
    for line, codes in codes_by_line.items():
        wanted.setdefault(targets[line], set()).update(codes)
    lines = text.split("\n")
    changed = set()
    for line, codes in sorted(wanted.items()):
        new = _with_noqa(lines[line - 1], suppressions.noqas.get(line), sorted(codes))
        if new != lines[line - 1]:
            lines[line - 1] = new
            changed.add(line)
    return "\n".join(lines), {line: target for line, target in targets.items() if target in changed}


def _with_noqa(line: str, existing: Noqa | None, codes: list[str]) -> str:
    ending = "\r" if line.endswith("\r") else ""
    body = line.removesuffix("\r")
    if existing is None:
        return body.rstrip() + "  # noqa: " + ", ".join(codes) + ending
    if existing.codes is _ALL:
        return line
    match = _NOQA.search(existing.comment)
    assert match is not None
    merged = [*existing.codes, *(code for code in codes if code not in existing.codes)]
    at = existing.column + match.start("codes")
    return body[:at] + ", ".join(merged) + body[existing.column + match.end("codes") :] + ending
