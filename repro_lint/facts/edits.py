"""Reading call arguments and building the small CST edits fixes are made of."""

from __future__ import annotations

import libcst as cst


def keyword(call: cst.Call, name: str) -> cst.Arg | None:
    return next((arg for arg in call.args if arg.keyword is not None and arg.keyword.value == name), None)


def has_star_args(call: cst.Call) -> bool:
    """`*args` or `**kwargs` may carry any argument, so a rule cannot know one is missing."""
    return any(arg.star for arg in call.args)


def argument(call: cst.Call, name: str, position: int | None = None) -> cst.Arg | None:
    """The argument bound to parameter `name`, given by keyword or at `position` (0-based)."""
    found = keyword(call, name)
    if found is not None or position is None:
        return found
    positional = [arg for arg in call.args if arg.keyword is None and not arg.star]
    return positional[position] if position < len(positional) else None


def literal(node: cst.BaseExpression) -> object:
    """The value of a literal True/False/None, number or string; `...` (Ellipsis) when not a literal."""
    # Asked of most arguments and assigned values: exact types (see names.py).
    if type(node) is cst.Name and node.value in ("True", "False", "None"):
        return {"True": True, "False": False, "None": None}[node.value]
    if type(node) is cst.Integer:
        return int(node.value.replace("_", ""), 0)
    if type(node) is cst.SimpleString:
        return node.evaluated_value
    if type(node) is cst.UnaryOperation and type(node.operator) is cst.Minus and type(node.expression) is cst.Integer:
        return -int(node.expression.value.replace("_", ""), 0)
    return ...


def is_literally_false(node: cst.BaseExpression) -> bool:
    value = literal(node)
    return value is not ... and not value


def is_literally_true(node: cst.BaseExpression) -> bool:
    value = literal(node)
    return value is not ... and bool(value)


def off_unless_passed(function: cst.FunctionDef, name: str) -> bool:
    """Whether `name` is a parameter of `function` that is off unless its caller turns it on: one with
    no default, or a default not literally true."""
    params = function.params
    param = next((param for param in (*params.posonly_params, *params.params, *params.kwonly_params) if param.name.value == name), None)
    return param is not None and (param.default is None or not is_literally_true(param.default))


def with_keyword(call: cst.Call, name: str, value: str) -> cst.Call:
    """`call` with `name=value` appended, following the call's own layout: one line stays one line,
    and a call with one argument per line and a trailing comma gets a new line in the same style."""
    new_arg = cst.Arg(
        keyword=cst.Name(name),
        value=cst.parse_expression(value),
        equal=cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace("")),
    )
    args = list(call.args)
    if not args:
        return call.with_changes(args=[new_arg])
    last = args[-1]
    if isinstance(last.comma, cst.Comma):
        # Trailing comma: the new argument goes after it, indented like the others; a comment after
        # the old last argument stays on its line.
        closing = last.comma.whitespace_after
        separator = args[-2].comma.whitespace_after if len(args) > 1 and isinstance(args[-2].comma, cst.Comma) else call.whitespace_before_args
        if isinstance(closing, cst.ParenthesizedWhitespace) and isinstance(separator, cst.ParenthesizedWhitespace):
            after_last = closing.with_changes(indent=separator.indent, last_line=separator.last_line)
            closing = closing.with_changes(first_line=cst.TrailingWhitespace(), empty_lines=[])
        else:
            after_last = separator
        args[-1] = last.with_changes(comma=last.comma.with_changes(whitespace_after=after_last))
        new_arg = new_arg.with_changes(comma=cst.Comma(whitespace_after=closing))
    else:
        # The whitespace before `)` (a newline in a hanging layout) moves behind the new argument.
        args[-1] = last.with_changes(
            comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")), whitespace_after_arg=cst.SimpleWhitespace("")
        )
        new_arg = new_arg.with_changes(whitespace_after_arg=last.whitespace_after_arg)
    return call.with_changes(args=[*args, new_arg])


def without_argument(call: cst.Call, removed: cst.Arg) -> cst.Call:
    """`call` without one argument; the comma that separated it goes with it, and a comment on the
    line before stays there."""
    args = list(call.args)
    position = args.index(removed)
    del args[position]
    if args and position == len(args):
        # The removed argument was last: the new last one ends the call the way it did.
        previous = args[-1]
        comma = removed.comma
        if isinstance(comma, cst.Comma) and isinstance(previous.comma, cst.Comma):
            before_close = comma.whitespace_after
            kept = previous.comma.whitespace_after
            if isinstance(kept, cst.ParenthesizedWhitespace) and isinstance(before_close, cst.ParenthesizedWhitespace):
                comma = previous.comma.with_changes(whitespace_after=kept.with_changes(last_line=before_close.last_line))
        elif not isinstance(comma, cst.Comma) and isinstance(previous.comma, cst.Comma):
            # `f(a,  # note\n    b=1\n)`: the whitespace before `)` came after the removed argument.
            comma = cst.MaybeSentinel.DEFAULT
        args[-1] = previous.with_changes(comma=comma, whitespace_after_arg=removed.whitespace_after_arg)
    return call.with_changes(args=args)
