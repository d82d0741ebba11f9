"""Where a program-level fix inserts code in an entry module, recorded as facts.

Program rules run on facts alone, so what their fixes need to know about the entry module's text is
collected with the other facts: where the main path starts, which seed value is in scope there,
where imports go, and which names already denote torch, numpy, random and os.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import libcst as cst

from repro_lint.context import FileContext
from repro_lint.seed_values import CONFIG_OBJECTS, PARSED_OBJECTS
from repro_lint.names import dotted_name
from repro_lint.positions import Positions

FIX_MODULES = ("os", "random", "numpy", "torch")
_SEED_CONSTANTS = ("SEED", "RANDOM_SEED", "GLOBAL_SEED", "seed")
_SEEDS_SOMETHING = re.compile(r"(manual_seed|seed_everything|set_seed|random\.seed|\.seed)\s*\(")
_PARSE_CALLS = ("parse_args", "parse_known_args", "parse_args_into_dataclasses")


@dataclass(frozen=True)
class InsertionPoint:
    """Insert before `line` (1-based, at column 0), indented by `indent`."""

    line: int
    indent: str
    seed: str | None


@dataclass(frozen=True)
class EntryFixFacts:
    newline: str
    import_line: int
    torch_import_line: int | None
    os_import_line: int | None
    aliases: tuple[tuple[str, str], ...]
    main_path: InsertionPoint | None

    def alias(self, module: str) -> str | None:
        return dict(self.aliases).get(module)


def _statements(block: cst.BaseSuite) -> list[cst.BaseStatement]:
    return list(block.body) if isinstance(block, cst.IndentedBlock) else []


def _indent(block: cst.IndentedBlock, outer: str, module: cst.Module) -> str:
    return outer + (block.indent if block.indent is not None else module.default_indent)


def _assigned_config(statement: cst.BaseStatement, text: str, has_seed_option: bool) -> str | None:
    """`args = parser.parse_args()` when a `--seed` option is defined, or `cfg = load_config(...)`
    when the code reads `cfg.seed`."""
    if not isinstance(statement, cst.SimpleStatementLine) or not isinstance(statement.body[0], cst.Assign):
        return None
    assign = statement.body[0]
    target = assign.targets[0].target
    if not isinstance(target, cst.Name):
        return None
    value = assign.value
    parses = isinstance(value, cst.Call) and (dotted_name(value.func) or "").rpartition(".")[2] in _PARSE_CALLS
    if (parses and has_seed_option) or (
        (parses or target.value in CONFIG_OBJECTS) and re.search(rf"\b{target.value}\.seed\b", text)
    ):
        return f"{target.value}.seed"
    return None


def _main_path(context: FileContext, guard: cst.If | None, positions: Positions) -> InsertionPoint | None:
    module = context.module
    text = context.source
    option = context.argparse_seed
    constant = next((name for name in _SEED_CONSTANTS if context.resolver.usable_as_value(name, [module])), None)

    if guard is None:
        # A script training at module level: seed after the imports, the seed constant and any
        # seeding already there.
        line = _import_line(module, positions)
        if constant is not None:
            line = max(line, _definition_end(module, constant, positions) + 1)
        body = list(module.body)
        before = [index for index, statement in enumerate(body) if positions.range(statement)[1].line < line]
        return InsertionPoint(_after_seeding(body, before[-1] if before else -1, positions, text, line), "", constant)
    if not isinstance(guard.body, cst.IndentedBlock):
        return None
    blocks: list[tuple[list[cst.BaseStatement], str, cst.IndentedBlock]] = [(_statements(guard.body), _indent(guard.body, "", module), guard.body)]
    called, call = _first_called_function(guard, module)
    if called is not None and isinstance(called.body, cst.IndentedBlock):
        statements = _statements(called.body)
        indent = _indent(called.body, "", module)
        blocks.append((statements, indent, called.body))
        # `train(parser.parse_args())`: the parsed options arrive as the function's first parameter.
        parameter = _parsed_options_parameter(called, call)
        if parameter is not None and option.defined and not option.may_be_none and statements:
            first = 1 if _is_docstring(statements[0]) and len(statements) > 1 else 0
            start = _first_line(statements[first], positions)
            return InsertionPoint(_after_seeding(statements, first - 1, positions, text, start), indent, f"{parameter}.seed")

    for statements, indent, block in blocks:
        # The last assignment wins: `args = get_parser()` then `args = args.parse_args()`.
        found = [
            (index, seed)
            for index, statement in enumerate(statements)
            if (seed := _assigned_config(statement, text, option.defined)) is not None
            and not (option.may_be_none and seed.split(".")[0] in PARSED_OBJECTS)
        ]
        if found:
            index, seed = found[-1]
            return InsertionPoint(_after_seeding(statements, index, positions, text), indent, seed)
    statements, indent, block = blocks[0]
    return InsertionPoint(_after_seeding(statements, -1, positions, text, _first_line(statements[0], positions)), indent, constant)


def _first_line(statement: cst.BaseStatement, positions: Positions) -> int:
    """Where a statement's lines begin, its leading comments included: code inserted before it
    must not come between a comment and the statement it describes."""
    leading = statement.leading_lines
    comments = next((index for index, line in enumerate(leading) if line.comment is not None), len(leading))
    return positions.start(statement).line - (len(leading) - comments)


def _definition_end(module: cst.Module, name: str, positions: Positions) -> int:
    for statement in module.body:
        if isinstance(statement, cst.SimpleStatementLine) and any(
            isinstance(small, cst.Assign) and any(isinstance(t.target, cst.Name) and t.target.value == name for t in small.targets)
            for small in statement.body
        ):
            return positions.range(statement)[1].line
    return 0


def _after_seeding(
    statements: list[cst.BaseStatement], index: int, positions: Positions, text: str, default: int | None = None
) -> int:
    """The line after statement `index`, or after a later statement that already seeds (so what a
    fix adds lands next to the seed, after it)."""
    line = positions.range(statements[index])[1].line + 1 if index >= 0 else default or 1
    lines = text.split("\n")
    for statement in statements[index + 1 :]:
        start, end = positions.range(statement)
        if _SEEDS_SOMETHING.search("\n".join(lines[start.line - 1 : end.line])):
            line = end.line + 1
    return line


def _first_called_function(guard: cst.If, module: cst.Module) -> tuple[cst.FunctionDef | None, cst.Call | None]:
    """The module's own function the `__main__` block calls first (`main()`, `train(args)`), and the call."""
    defined = {statement.name.value: statement for statement in module.body if isinstance(statement, cst.FunctionDef)}
    for statement in _statements(guard.body):
        if not isinstance(statement, cst.SimpleStatementLine):
            continue
        for small in statement.body:
            value = small.value if isinstance(small, (cst.Expr, cst.Assign)) else None
            if isinstance(value, cst.Call) and isinstance(value.func, cst.Name) and value.func.value in defined:
                return defined[value.func.value], value
    return None, None


def _parsed_options_parameter(function: cst.FunctionDef, call: cst.Call | None) -> str | None:
    """The parameter receiving `parser.parse_args()` when the call passes it as the first argument."""
    if call is None or not call.args or not function.params.params:
        return None
    first = call.args[0].value
    parses = isinstance(first, cst.Call) and (dotted_name(first.func) or "").rpartition(".")[2] in _PARSE_CALLS
    return function.params.params[0].name.value if parses and call.args[0].keyword is None else None


def _import_line(module: cst.Module, positions: Positions) -> int:
    last = None
    for statement in module.body:
        if isinstance(statement, cst.SimpleStatementLine) and all(isinstance(s, (cst.Import, cst.ImportFrom)) for s in statement.body):
            last = statement
    if last is None and module.body and _is_docstring(module.body[0]):
        last = module.body[0]
    return positions.range(last)[1].line + 1 if last is not None else 1


def _is_docstring(statement: cst.BaseStatement) -> bool:
    return (
        isinstance(statement, cst.SimpleStatementLine)
        and isinstance(statement.body[0], cst.Expr)
        and isinstance(statement.body[0].value, (cst.SimpleString, cst.ConcatenatedString))
    )


def _first_import_line(module: cst.Module, positions: Positions, package: str) -> int | None:
    """The line of the first top-level statement importing `package` or one of its submodules."""
    for statement in module.body:
        if not isinstance(statement, cst.SimpleStatementLine):
            continue
        for small in statement.body:
            names = []
            if isinstance(small, cst.Import):
                names = [dotted_name(alias.name) or "" for alias in small.names]
            elif isinstance(small, cst.ImportFrom) and small.module is not None and not small.relative:
                names = [dotted_name(small.module) or ""]
            if any(name == package or name.startswith(package + ".") for name in names):
                return positions.start(statement).line
    return None


def entry_fix_facts(context: FileContext, guard: cst.If | None, positions: Positions) -> EntryFixFacts | None:
    module = context.module
    if not module.body:
        return None
    aliases = tuple(
        (name, alias) for name in FIX_MODULES if (alias := context.resolver.binding_for_module(name, [module])) is not None
    )
    return EntryFixFacts(
        newline=module.default_newline,
        import_line=_import_line(module, positions),
        torch_import_line=_first_import_line(module, positions, "torch"),
        os_import_line=_first_import_line(module, positions, "os"),
        aliases=aliases,
        main_path=_main_path(context, guard, positions),
    )
