"""How messages quote what the user wrote: a finding's message stays one short line (at most 120
characters with ordinary names), so a long name or expression is cut with an ellipsis."""

from __future__ import annotations

# Long enough for ordinary names (`DistributedSampler`, `train_sampler is None`), short enough that
# two quoted pieces and the sentence around them stay under 120 characters.
QUOTE_LIMIT = 24


def elide(text: str, limit: int = QUOTE_LIMIT) -> str:
    """`text` on one line, cut to `limit` characters with a trailing `…` when longer."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def place(path: str, line: int, here: str) -> str:
    """A line as a message in the file `here` names it: `line 8` in that file (a notebook's messages
    turn it into a cell and line), `models/net.py:14` in another."""
    return f"line {line}" if path == here else f"{path}:{line}"
