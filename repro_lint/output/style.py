"""Colour for a person at a terminal: each part of a report has a role, and each role a style (click's
ANSI styles). Without colour the text is left exactly as it is."""

from __future__ import annotations

import click

_STYLES: dict[str, dict[str, object]] = {
    "path": {"bold": True},
    "code": {"fg": "red", "bold": True},
    "fixable": {"fg": "cyan"},
    "gutter": {"fg": "blue", "bold": True},
    "caret": {"fg": "red", "bold": True},
    "help": {"fg": "cyan", "bold": True},
    "removed": {"fg": "red"},
    "added": {"fg": "green"},
}


def paint(text: str, role: str, color: bool) -> str:
    return click.style(text, **_STYLES[role]) if color and text else text  # type: ignore[arg-type]
