"""Wrapping a call a fix lengthened past the project's line length, the way Black would.

Black splits a call that does not fit after its opening bracket: the arguments all on one indented
line when they fit there, else one per line with a trailing comma, and the closing bracket on a line
of its own at the statement's indentation.
"""

from __future__ import annotations

import libcst as cst

from repro_lint.core.source import LineIndex, Position


def wrap_replacement(index: LineIndex, start: Position, end: Position, content: str, limit: int, unit: str) -> str:
    """`content`, the new text of the node between `start` and `end`, wrapped when it is a call that
    makes its lines longer than `limit` (and longer than they were); `unit` is one indentation level."""
    begin, finish = index.offset(start), index.offset(end)
    text = index.text
    line_start = text.rfind("\n", 0, begin) + 1
    line_end = text.find("\n", finish)
    line_end = len(text) if line_end == -1 else line_end
    before, after = text[line_start:begin], text[finish:line_end].rstrip("\r")
    if _longest(before + content + after) <= max(limit, _longest(text[line_start:line_end])):
        return content
    try:
        call = cst.parse_expression(content)
    except cst.ParserSyntaxError:
        return content
    if not isinstance(call, cst.Call) or not call.args or "#" in content:
        return content
    empty = cst.Module([])
    args = [empty.code_for_node(arg.with_changes(comma=cst.MaybeSentinel.DEFAULT, whitespace_after_arg=cst.SimpleWhitespace("")))
            for arg in call.args]
    if any("\n" in arg for arg in args):
        return content  # a multi-line argument: Black would split it too, which is more than a fix should redo
    newline = "\r\n" if "\r\n" in text[:line_end + 2] else "\n"
    indent = before[: len(before) - len(before.lstrip())]
    head = empty.code_for_node(call.func) + empty.code_for_node(call.whitespace_after_func) + "("
    inner = indent + unit
    one_line = inner + ", ".join(args)
    if len(one_line) <= limit:
        return f"{head}{newline}{one_line}{newline}{indent})"
    return head + newline + "".join(f"{inner}{arg},{newline}" for arg in args) + f"{indent})"


def _longest(text: str) -> int:
    return max(len(line.rstrip("\r")) for line in text.split("\n"))
