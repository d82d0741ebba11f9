"""Where a program-level fix inserts code in an entry module, recorded as facts.

Program rules run on facts alone, so what their fixes need to know about the entry module's text is
collected with the other facts: where the main path starts, which seed value is in scope there,
where imports go, and which names already denote torch, numpy, random and os.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass
from functools import cache

import libcst as cst

from repro_lint.core.records import pickled_by_constructor
from repro_lint.core.source import Line
from repro_lint.facts.context import FileContext
from repro_lint.facts.import_block import block_end, import_placement, merge_placements
from repro_lint.facts.names import dotted_name
from repro_lint.facts.positions import Positions
from repro_lint.facts.seed_values import CONFIG_OBJECTS, PARSED_OBJECTS, binds, given_seeds, seeding_argument
from repro_lint.facts.traversal import walk

FIX_MODULES = ("os", "random", "numpy", "torch")
IMPORT_STATEMENTS = {"numpy": "import numpy as np", "torch": "import torch", "random": "import random", "os": "import os"}
_SEED_CONSTANTS = ("SEED", "RANDOM_SEED", "GLOBAL_SEED", "seed")
_SEEDS_SOMETHING = re.compile(r"(manual_seed|seed_everything|set_seed|random\.seed|\.seed)\s*\(")
# `torch.Generator().manual_seed(0)` seeds a generator of its own, not the global RNGs.
_GENERATOR_SEED = re.compile(r"Generator\([^()]*\)\s*\.\s*manual_seed\s*\(")
_PARSE_CALLS = ("parse_args", "parse_known_args", "parse_args_into_dataclasses")


@pickled_by_constructor
@dataclass(frozen=True, slots=True)
class InsertionPoint:
    """Insert before `line` (1-based, at column 0), indented by `indent`."""

    line: Line
    indent: str
    seed: str | None


@pickled_by_constructor
@dataclass(frozen=True, slots=True)
class SeedMove:
    """A seeding statement alone on its lines, which a fix may move up its own block: its lines
    (leading comments included: from `start` to the line before `stop`) and text, and the (first,
    last) lines of each earlier statement of the block it may move before: those after the last one
    that may change a value it reads. Every line a fix edits is one these facts hold, which moves
    with the code when lines are added above it (engine/last_run.py `moved_along`)."""

    line: Line
    start: Line
    stop: Line
    text: str
    before: tuple[tuple[Line, Line], ...]

    def target(self, line: int) -> int | None:
        """The first line of the earlier statement holding `line`, if the seed may move before it."""
        return next((start for start, end in self.before if start <= line <= end), None)


@pickled_by_constructor(shared_items=("import_points",))
@dataclass(frozen=True, slots=True)
class EntryFixFacts:
    newline: str
    indent: str  # one level of the module's indentation, for blocks a fix adds
    import_line: Line  # where statements a fix adds at module level go: after the opening imports
    torch_import_line: Line | None
    after_blank: bool  # whether a blank line comes right before the torch import
    os_import_line: Line | None
    aliases: tuple[tuple[str, str], ...]
    main_path: InsertionPoint | None
    seed_moves: tuple[SeedMove, ...] = ()
    # Where the functions this module starts in other processes begin, by qualified name.
    worker_starts: tuple[tuple[str, InsertionPoint], ...] = ()
    # Where the `import` of each of FIX_MODULES goes (its sorted place), and its text.
    import_points: tuple[tuple[str, Line, str], ...] = ()

    def missing_imports(self, modules: Collection[str]) -> dict[Line, str]:
        """The imports of those of `modules` nothing binds yet, as texts by the line they go before."""
        by_line: dict[Line, list[str]] = {}
        for name, line, text in self.import_points:
            if name in modules and self.alias(name) is None:
                by_line.setdefault(line, []).append(text)
        return {line: merge_placements(texts, self.newline) for line, texts in by_line.items()}

    def worker_start(self, function: str) -> InsertionPoint | None:
        return dict(self.worker_starts).get(function)

    def seed_move(self, line: int) -> SeedMove | None:
        return next((move for move in self.seed_moves if move.line == line), None)

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

    if guard is None:
        # A script training at module level: seed after the imports, the seed constant and any
        # seeding already there.
        constant = _seed_constant(context, positions)
        line = _statements_line(module, positions)
        if constant is not None:
            line = max(line, _definition_end(module, constant, positions) + 1)
        body = list(module.body)
        before = [index for index, statement in enumerate(body) if positions.range(statement)[1].line < line]
        line = _after_seeding(body, before[-1] if before else -1, positions, text, line)
        return InsertionPoint(line, "", constant or _existing_seed(context, body, line, positions))
    if not isinstance(guard.body, cst.IndentedBlock):
        return None
    constant = _seed_constant(context, positions, positions.start(guard).line)
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
    line = _after_seeding(statements, -1, positions, text, _first_line(statements[0], positions))
    return InsertionPoint(line, indent, constant or _existing_seed(context, statements, line, positions))


def _existing_seed(context: FileContext, statements: list[cst.BaseStatement], line: int, positions: Positions) -> str | None:
    """The seed a seeding call among `statements` above `line` already uses, where its name is
    bound by one of those statements (or it is a number)."""
    above = [statement for statement in statements if positions.range(statement)[1].line < line]

    @cache  # by name: a block may seed a thousand times from `args.seed`
    def bound(root: str) -> bool:
        return any(binds(statement, root) for statement in above)

    return seeding_argument([given_seeds(context, above)], lambda expression: bound(expression.split(".")[0]))


def _first_line(statement: cst.BaseStatement, positions: Positions) -> int:
    """Where a statement's lines begin, its leading comments included: code inserted before it
    must not come between a comment and the statement it describes."""
    leading = statement.leading_lines
    comments = next((index for index, line in enumerate(leading) if line.comment is not None), len(leading))
    return positions.start(statement).line - (len(leading) - comments)


def _seed_constant(context: FileContext, positions: Positions, before: int | None = None) -> str | None:
    """A module constant holding the seed, assigned at the top level of the module (before line
    `before`): one assigned only under a condition or in a loop may not exist where a fix uses it."""
    for name in _SEED_CONSTANTS:
        end = _definition_end(context.module, name, positions)
        if end and (before is None or end < before) and context.resolver.usable_as_value(name, [context.module]):
            return name
    return None


def _definition_end(module: cst.Module, name: str, positions: Positions) -> int:
    """The last line of the first top-level statement binding `name` whichever way it goes; 0 if none."""
    statement = next((statement for statement in module.body if binds(statement, name)), None)
    return positions.range(statement)[1].line if statement is not None else 0


def _after_seeding(
    statements: list[cst.BaseStatement], index: int, positions: Positions, text: str, default: int | None = None
) -> int:
    """The line after statement `index`, or after a later statement that already seeds (so what a
    fix adds lands next to the seed, after it)."""
    line = positions.range(statements[index])[1].line + 1 if index >= 0 else default or 1
    lines = text.split("\n")
    # Only the seeding right there: a seed further down may follow draws, and so must what the fix adds.
    for statement in statements[index + 1 :]:
        start, end = positions.range(statement)
        if not _SEEDS_SOMETHING.search(_GENERATOR_SEED.sub("", "\n".join(lines[start.line - 1 : end.line]))):
            break
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


def _statements_line(module: cst.Module, positions: Positions) -> int:
    """Where statements a fix adds at module level go: after the opening import block, so that no
    import comes after them (a late import is flagged by pycodestyle's E402), and before any code a
    script runs at module level."""
    end = block_end(module)
    return positions.range(end)[1].line + 1 if end is not None else 1


def _import_points(context: FileContext, positions: Positions) -> tuple[tuple[str, Line, str], ...]:
    """For each module a program fix may import: the line its `import` goes before, and the text."""
    found = []
    for name in FIX_MODULES:
        placement = import_placement(context.module, IMPORT_STATEMENTS[name], context.module_name.split(".")[0])
        if placement is None:
            continue
        start, end = positions.range(placement.node)
        line = start.line if placement.where == "line_before" else end.line + 1
        found.append((name, line, placement.text))
    return tuple(found)


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


class _Reads(cst.CSTVisitor):
    """Names an expression reads, by their root (`args` for `args.seed`); `attribute` for those read
    only through an attribute."""

    def __init__(self) -> None:
        self.names: set[str] = set()
        self.attribute: set[str] = set()

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        root = dotted_name(node)
        if root is None:
            return True
        self.attribute.add(root.split(".")[0])
        return False

    def visit_Name(self, node: cst.Name) -> None:
        self.names.add(node.value)


class _Writes(cst.CSTVisitor):
    """Root names a statement may change: names it binds, attributes or items it assigns, and the
    receivers of methods it calls (`cfg.merge_from_file(...)`)."""

    def __init__(self) -> None:
        self.names: set[str] = set()

    def _target(self, node: cst.BaseExpression) -> None:
        if isinstance(node, (cst.Tuple, cst.List)):
            for element in node.elements:
                self._target(element.value)
            return
        if isinstance(node, cst.StarredElement):
            self._target(node.value)
            return
        while isinstance(node, (cst.Attribute, cst.Subscript)):
            node = node.value
        if isinstance(node, cst.Name):
            self.names.add(node.value)

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        self._target(node.target)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._target(node.target)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self._target(node.target)

    def visit_For(self, node: cst.For) -> None:
        self._target(node.target)

    def visit_AsName(self, node: cst.AsName) -> None:
        self._target(node.name)  # type: ignore[arg-type]

    def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
        self._target(node.target)

    def visit_ImportAlias(self, node: cst.ImportAlias) -> None:
        bound = node.asname.name if node.asname is not None else node.name
        self.names.add((dotted_name(bound) or "").split(".")[0])  # type: ignore[arg-type]

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        self.names.add(node.name.value)
        return False

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        self.names.add(node.name.value)
        return False

    def visit_Call(self, node: cst.Call) -> None:
        if isinstance(node.func, cst.Attribute) and isinstance(node.func.value, (cst.Name, cst.Attribute)):
            self._target(node.func.value)
        if dotted_name(node.func) == "setattr" and node.args:
            self._target(node.args[0].value)


class SeedStatements:
    """Seeding calls met during the traversal that are a whole statement of their own (`torch.manual_seed(0)`),
    turned into `SeedMove` facts once positions are known."""

    def __init__(self) -> None:
        self._found: list[tuple[cst.Call, cst.SimpleStatementLine, list[cst.BaseStatement]]] = []

    def record(self, context: FileContext, call: cst.Call) -> None:
        ancestors = context.ancestors
        if len(ancestors) < 4 or ancestors[-1] is not call or not isinstance(ancestors[-2], cst.Expr):
            return
        statement, block = ancestors[-3], ancestors[-4]
        if not isinstance(statement, cst.SimpleStatementLine) or len(statement.body) != 1:
            return
        if isinstance(block, (cst.IndentedBlock, cst.Module)):
            self._found.append((call, statement, list(block.body)))

    def moves(self, positions: Positions, text: str, newline: str) -> tuple[SeedMove, ...]:
        lines = text.split("\n")
        found = []
        # By statement (by id: the tree outlives this), what it writes and its lines, worked out once:
        # a block of many seeding statements looks back over the same ones for each.
        written: dict[int, set[str]] = {}
        spans: dict[int, tuple[int, int]] = {}
        for call, statement, block in self._found:
            index = next(i for i, candidate in enumerate(block) if candidate is statement)
            reads = _Reads()
            for arg in call.args:
                walk(arg.value, reads)
            before = []
            for earlier in reversed(block[:index]):
                if id(earlier) not in written:
                    writes = _Writes()
                    walk(earlier, writes)
                    written[id(earlier)] = writes.names
                    spans[id(earlier)] = (_first_line(earlier, positions), positions.range(earlier)[1].line)
                if written[id(earlier)] & (reads.names | reads.attribute):
                    break
                before.append(spans[id(earlier)])
            start, end = _first_line(statement, positions), positions.range(statement)[1].line
            if not before or end >= len(lines):
                continue  # nothing it may move before, or the file's last line, with no line end to move
            moved = "\n".join(lines[start - 1 : end]) + "\n"
            found.append(SeedMove(positions.start(call).line, start, end + 1, moved.replace("\r\n", "\n").replace("\n", newline), tuple(before)))
        return tuple(found)


def _functions_by_qualname(context: FileContext) -> dict[str, cst.FunctionDef]:
    """The module's functions and its classes' methods, by qualified name."""
    found = {}
    for statement in context.module.body:
        if isinstance(statement, cst.FunctionDef):
            found[f"{context.module_name}.{statement.name.value}"] = statement
        elif isinstance(statement, cst.ClassDef) and isinstance(statement.body, cst.IndentedBlock):
            for member in statement.body.body:
                if isinstance(member, cst.FunctionDef):
                    found[f"{context.module_name}.{statement.name.value}.{member.name.value}"] = member
    return found


def _worker_seed(context: FileContext, function: cst.FunctionDef, positions: Positions) -> str | None:
    """A seed a worker function can see in its fresh process: a `seed` parameter, `args.seed` of a
    parsed-options parameter, or a module constant set outside the `__main__` block (which a fresh
    process does not run)."""
    params = {param.name.value: param for param in (*function.params.params, *function.params.kwonly_params)}
    for name in ("seed", "random_seed"):
        param = params.get(name)
        if param is not None and (param.default is None or not (isinstance(param.default, cst.Name) and param.default.value == "None")):
            return name
    option = context.argparse_seed
    for name in CONFIG_OBJECTS:
        if name in params and re.search(rf"\b{name}\.seed\b", context.source):
            if not (name in PARSED_OBJECTS and option.may_be_none):
                return f"{name}.seed"
    return _seed_constant(context, positions)


def _worker_starts(context: FileContext, positions: Positions, launched: Collection[str]) -> tuple[tuple[str, InsertionPoint], ...]:
    functions = _functions_by_qualname(context)
    found = []
    for qualname in sorted(set(launched) & set(functions)):
        function = functions[qualname]
        statements = _statements(function.body)
        if not statements:
            continue
        first = 1 if _is_docstring(statements[0]) and len(statements) > 1 else 0
        # After `global best_acc1`: declarations stay first.
        while first < len(statements) - 1 and _declares(statements[first]):
            first += 1
        indent = _indent(function.body, _def_indent(context, function), context.module)  # type: ignore[arg-type]
        line = _after_seeding(statements, first - 1, positions, context.source, _first_line(statements[first], positions))
        found.append((qualname, InsertionPoint(line, indent, _worker_seed(context, function, positions))))
    return tuple(found)


def _declares(statement: cst.BaseStatement) -> bool:
    return isinstance(statement, cst.SimpleStatementLine) and all(isinstance(small, (cst.Global, cst.Nonlocal)) for small in statement.body)


def _def_indent(context: FileContext, function: cst.FunctionDef) -> str:
    """The indentation of a module-level function (none) or of a method (its class body's)."""
    for statement in context.module.body:
        if isinstance(statement, cst.ClassDef) and isinstance(statement.body, cst.IndentedBlock) and function in statement.body.body:
            return _indent(statement.body, "", context.module)
    return ""


def entry_fix_facts(
    context: FileContext,
    guard: cst.If | None,
    positions: Positions,
    seed_statements: SeedStatements | None = None,
    launched: Collection[str] = (),
) -> EntryFixFacts | None:
    module = context.module
    if not module.body:
        return None
    main_path = _main_path(context, guard, positions)
    # Without a main guard the seed goes after the opening imports, with one it runs when the guard
    # does: names imported only further down do not exist there yet, so the fix imports them itself.
    visible_before = positions.start(guard).line if guard is not None else main_path.line if main_path is not None else None
    aliases = tuple(
        (name, alias)
        for name in FIX_MODULES
        if (alias := context.resolver.binding_for_module(name, [module])) is not None
        and (visible_before is None or (_first_import_line(module, positions, name) or 0) < visible_before)
    )
    torch_line = _first_import_line(module, positions, "torch")
    return EntryFixFacts(
        newline=module.default_newline,
        indent=module.default_indent,
        import_line=_statements_line(module, positions),
        import_points=_import_points(context, positions),
        torch_import_line=torch_line,
        after_blank=torch_line is not None and torch_line > 1 and not context.source.split("\n")[torch_line - 2].strip(),
        os_import_line=_first_import_line(module, positions, "os"),
        aliases=aliases,
        main_path=main_path,
        seed_moves=seed_statements.moves(positions, context.source, module.default_newline) if seed_statements else (),
        worker_starts=_worker_starts(context, positions, launched) if launched else (),
    )
