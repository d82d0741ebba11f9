"""`# noqa` comments and file-level `# repro-lint: noqa` directives."""

from __future__ import annotations

import io
import re
import tokenize
from dataclasses import dataclass, field

_NOQA = re.compile(r"#\s*noqa(?::\s*(?P<codes>[A-Z]+[0-9]*(?:[\s,]+[A-Z]+[0-9]*)*))?", re.IGNORECASE)
_FILE_NOQA = re.compile(r"^#\s*repro-lint:\s*noqa(?::\s*(?P<codes>[A-Z]+[0-9]*(?:[\s,]+[A-Z]+[0-9]*)*))?\s*$", re.IGNORECASE)
_ALL = None  # a noqa without codes


def _codes(text: str | None) -> frozenset[str] | None:
    """None means every code."""
    if not text:
        return _ALL
    return frozenset(code.upper() for code in re.split(r"[\s,]+", text.strip()) if code)


def _matches(code: str, codes: frozenset[str] | None) -> bool:
    return codes is _ALL or any(code.startswith(prefix) for prefix in codes)


@dataclass
class Suppressions:
    by_line: dict[int, frozenset[str] | None] = field(default_factory=dict)
    file_wide: list[frozenset[str] | None] = field(default_factory=list)

    def suppresses(self, code: str, line: int) -> bool:
        if any(_matches(code, codes) for codes in self.file_wide):
            return True
        return line in self.by_line and _matches(code, self.by_line[line])

    def add_comment(self, line: int, comment: str, own_line: bool) -> None:
        file_match = _FILE_NOQA.match(comment) if own_line else None
        if file_match:
            self.file_wide.append(_codes(file_match.group("codes")))
            return
        match = _NOQA.search(comment)
        if match:
            self.by_line[line] = _codes(match.group("codes"))


def python_suppressions(text: str) -> Suppressions:
    """Read noqa comments with the tokenizer, so a `# noqa` inside a string does not count."""
    suppressions = Suppressions()
    if "noqa" not in text.lower():
        return suppressions
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type == tokenize.COMMENT:
                line, column = token.start
                own_line = not token.line[:column].strip()
                suppressions.add_comment(line, token.string, own_line)
    except (tokenize.TokenError, SyntaxError):
        pass  # the parser already reported the file; its comments are best effort
    return suppressions
