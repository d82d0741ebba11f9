"""From repro-lint's positions, findings and texts to LSP's: 0-based lines, columns in the code units
the client and server agreed on (UTF-16 unless both take another), diagnostics, and the edit that
turns one text into another."""

from __future__ import annotations

from lsprotocol import types
from pygls.workspace.position_codec import PositionCodec

from repro_lint.core.findings import Finding
from repro_lint.core.pages import page_text, page_url
from repro_lint.core.source import LineIndex, Position

SOURCE = "repro-lint"


class Positions:
    """Converts positions in one text (1-based lines, columns in characters) to the client's."""

    def __init__(self, text: str, codec: PositionCodec) -> None:
        self.index = LineIndex(text)
        # Only "\n" ends a line, as the engine counts them; a "\r" before it is the line's last character.
        self._lines = text.split("\n")
        self._codec = codec

    def position(self, position: Position) -> types.Position:
        line = min(max(position.line, 1), len(self._lines)) - 1
        return self._codec.position_to_client_units(self._lines, types.Position(line, max(position.column, 0)))

    def range(self, start: Position, end: Position) -> types.Range:
        return types.Range(self.position(start), self.position(end))

    def from_client(self, position: types.Position) -> Position:
        server = self._codec.position_from_client_units(self._lines, position)
        return Position(server.line + 1, server.character)


def diagnostic(finding: Finding, positions: Positions, docs_url: str | None) -> types.Diagnostic:
    """A warning (findings have no severity of their own) with the rule's code; a link to the rule's
    page only where one is published or configured (`docs-url`), else hover shows the page."""
    url = page_url(finding.code, docs_url)
    return types.Diagnostic(
        range=positions.range(finding.start, finding.end),
        message=finding.message,
        severity=types.DiagnosticSeverity.Warning,
        code=finding.code,
        code_description=types.CodeDescription(href=url) if url else None,
        source=SOURCE,
    )


def hover_text(finding: Finding) -> str:
    """Markdown: the finding, then its rule's page."""
    head = f"**{finding.code}** ({finding.name}): {finding.message}"
    page = page_text(finding.code)
    return head if page is None else f"{head}\n\n---\n\n{page}"


def text_edit(before: str, after: str, positions: Positions) -> types.TextEdit:
    """One edit replacing only the span that differs, so that the client keeps the cursor and the
    folds outside it."""
    start = 0
    limit = min(len(before), len(after))
    while start < limit and before[start] == after[start]:
        start += 1
    end = 0
    while end < limit - start and before[-1 - end] == after[-1 - end]:
        end += 1
    old = positions.range(positions.index.position(start), positions.index.position(len(before) - end))
    return types.TextEdit(range=old, new_text=after[start : len(after) - end])
