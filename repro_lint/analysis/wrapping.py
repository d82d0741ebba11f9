"""Wrapping a call a fix lengthened, or a line a fix inserted, past the project's line length, the
way Black would.

Black splits a call (or a dict display) that does not fit after its opening bracket: the arguments
all on one indented line when they fit there, else one per line with a trailing comma, and the
closing bracket on a line of its own at the statement's indentation.
"""

from __future__ import annotations

from collections.abc import Sequence

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
    head = empty.code_for_node(call.func) + empty.code_for_node(call.whitespace_after_func) + "("
    newline = "\r\n" if "\r\n" in text[:line_end + 2] else "\n"
    indent = before[: len(before) - len(before.lstrip())]
    return _split(head, _parts(call.args), ")", indent, unit, limit, newline) or content


def wrap_inserted_line(line: str, limit: int, unit: str, newline: str) -> str:
    """A whole line a fix inserts (without its line ending), split when it is longer than `limit`
    and is a call statement (`torch.cuda.set_rng_state_all([...])`) or a dict entry whose value is a
    dict display (`"rng_state": {...},`)."""
    if len(line) <= limit or "#" in line:
        return line
    indent, code = line[: len(line) - len(line.lstrip())], line.strip()
    try:
        statement = cst.parse_statement(code)
    except cst.ParserSyntaxError:
        statement = None
    empty = cst.Module([])
    if isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1:
        expression = statement.body[0]
        if isinstance(expression, cst.Expr) and isinstance(expression.value, cst.Call) and expression.value.args:
            call = expression.value
            head = empty.code_for_node(call.func) + "("
            wrapped = _split(head, _parts(call.args), ")", indent, unit, limit, newline)
            return line if wrapped is None else indent + wrapped
        return line
    trailing = "," if code.endswith(",") else ""
    try:
        entry = cst.parse_expression("{" + code.removesuffix(",") + "}")
    except cst.ParserSyntaxError:
        return line
    if not (isinstance(entry, cst.Dict) and len(entry.elements) == 1 and isinstance(entry.elements[0], cst.DictElement)):
        return line
    element = entry.elements[0]
    value = element.value
    if not isinstance(value, cst.Dict) or not value.elements:
        return line
    head = empty.code_for_node(element.key) + ": {"
    wrapped = _split(head, _parts(value.elements), "}" + trailing, indent, unit, limit, newline)
    return line if wrapped is None else indent + wrapped


def _parts(nodes: Sequence[cst.CSTNode]) -> list[str]:
    """Each argument or element's code, without its comma."""
    empty = cst.Module([])
    return [empty.code_for_node(node.with_changes(comma=cst.MaybeSentinel.DEFAULT)).strip() for node in nodes]


def _split(head: str, parts: list[str], closing: str, indent: str, unit: str, limit: int, newline: str) -> str | None:
    """`head` and its bracket, then `parts` on one line when they fit, else one per line, then the
    closing bracket at `indent`; None where a part spans lines (Black would split it too, which is
    more than a fix should redo)."""
    if any("\n" in part for part in parts):
        return None
    inner = indent + unit
    one_line = inner + ", ".join(parts)
    if len(one_line) <= limit:
        return f"{head}{newline}{one_line}{newline}{indent}{closing}"
    return head + newline + "".join(f"{inner}{part},{newline}" for part in parts) + f"{indent}{closing}"


def _longest(text: str) -> int:
    return max(len(line.rstrip("\r")) for line in text.split("\n"))
