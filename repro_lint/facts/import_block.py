"""Where code a fix adds goes among a module's imports, so that other linters stay quiet about it.

A new `import` goes into the module's opening import block at its sorted place, as isort (and Ruff's
`I001`) orders it: sections `__future__`, standard library, third party, first party, relative; in a
section `import x` lines before `from x import y` lines, each by module name, case-insensitively. A
statement a fix adds (a seed constant) goes after that block: above an import it would make the
import a "module level import not at top of file" (pycodestyle `E402`).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Literal

import libcst as cst

from repro_lint.core.records import pickled_by_constructor
from repro_lint.facts.names import dotted_name
from repro_lint.facts.traversal import walk

_FUTURE, _STDLIB, _THIRD_PARTY, _FIRST_PARTY, _LOCAL = range(5)
# Calls that may sit between imports without ending the block, as pycodestyle and Ruff allow them.
_NEUTRAL_CALLS = ("sys.path.", "os.environ.", "site.addsitedir", "matplotlib.use", "pytest.importorskip")
_NEUTRAL_TARGETS = ("sys.path", "os.environ")


@pickled_by_constructor
@dataclass(frozen=True, slots=True)
class Placement:
    """Insert `text` on the line before `node` (at its first line) or on the line after it."""

    node: cst.CSTNode
    where: Literal["line_before", "line_after"]
    text: str


def is_import_line(statement: cst.CSTNode) -> bool:
    return isinstance(statement, cst.SimpleStatementLine) and all(
        isinstance(small, (cst.Import, cst.ImportFrom)) for small in statement.body
    )


def _is_docstring(statement: cst.CSTNode) -> bool:
    return (
        isinstance(statement, cst.SimpleStatementLine)
        and len(statement.body) == 1
        and isinstance(statement.body[0], cst.Expr)
        and isinstance(statement.body[0].value, (cst.SimpleString, cst.ConcatenatedString))
    )


def _is_neutral(statement: cst.CSTNode, first: bool) -> bool:
    """Whether `statement` may stand among imports without the imports after it counting as late:
    the docstring, `sys.path` and `os.environ` changes, `__dunder__` assignments, and `if`/`try`/
    `with` blocks that import (`try: import apex`); other blocks may draw random numbers, which a
    seed added after the block would come too late for."""
    kind = type(statement)  # asked of a module's statements up to its last import: exact types (see names.py)
    if kind is cst.If or kind is cst.Try or kind is cst.With:
        return not _is_main_guard(statement) and _imports(statement)
    if kind is not cst.SimpleStatementLine:
        return False
    if first and _is_docstring(statement):
        return True
    for small in statement.body:
        if isinstance(small, (cst.Import, cst.ImportFrom, cst.Pass)):
            continue
        if isinstance(small, cst.Expr) and isinstance(small.value, cst.Call):
            called = dotted_name(small.value.func) or ""
            if any(called.startswith(prefix) for prefix in _NEUTRAL_CALLS):
                continue
        if isinstance(small, (cst.Assign, cst.AugAssign)):
            targets = [target.target for target in small.targets] if isinstance(small, cst.Assign) else [small.target]
            if all(_is_neutral_target(target) for target in targets):
                continue
        return False
    return True


def _is_neutral_target(target: cst.BaseExpression) -> bool:
    if isinstance(target, cst.Name):
        return target.value.startswith("__") and target.value.endswith("__")
    while isinstance(target, cst.Subscript):
        target = target.value
    return (dotted_name(target) or "") in _NEUTRAL_TARGETS


def _is_main_guard(statement: cst.CSTNode) -> bool:
    return isinstance(statement, cst.If) and "__main__" in cst.Module([]).code_for_node(statement.test)


def _imports(statement: cst.CSTNode) -> bool:
    """Whether `statement` is or holds an import."""
    if is_import_line(statement):
        return True
    if isinstance(statement, cst.SimpleStatementLine):
        return False
    finder = _ImportFinder()
    walk(statement, finder)
    return finder.found


class _ImportFinder(cst.CSTVisitor):
    def __init__(self) -> None:
        self.found = False

    def visit_Import(self, node: cst.Import) -> None:
        self.found = True

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        self.found = True


def opening_block(module: cst.Module) -> list[cst.BaseStatement]:
    """The module's statements up to its last import that no other code precedes: the docstring,
    imports and what may stand between them."""
    last = 0
    for index, statement in enumerate(module.body):
        if not _is_neutral(statement, index == 0):
            break
        if _imports(statement) or (index == 0 and _is_docstring(statement)):
            last = index + 1
    return list(module.body[:last])


def block_end(module: cst.Module) -> cst.BaseStatement | None:
    """The statement a statement added by a fix follows: the last of the opening import block (None
    when the module opens with code: it goes first)."""
    block = opening_block(module)
    return block[-1] if block else None


def _section(module: str, relative: bool, first_party: str) -> int:
    if relative:
        return _LOCAL
    top = module.split(".")[0]
    if top == "__future__":
        return _FUTURE
    if top in sys.stdlib_module_names:
        return _STDLIB
    return _FIRST_PARTY if top == first_party else _THIRD_PARTY


def _sort_key(statement: cst.SimpleStatementLine, first_party: str) -> tuple[int, int, str]:
    small = statement.body[0]
    if isinstance(small, cst.Import):
        name = dotted_name(small.names[0].name) or ""
        return _section(name, False, first_party), 0, name.lower()
    assert isinstance(small, cst.ImportFrom)
    name = dotted_name(small.module) if small.module is not None else ""
    return _section(name or "", bool(small.relative), first_party), 1, (name or "").lower()


def import_placement(module: cst.Module, statement: str, first_party: str = "") -> Placement | None:
    """Where `statement` (`import numpy as np`) goes in the opening import block, with the blank line
    that separates a section of its own; None when the module has no statements. `first_party` is the
    top-level package of the module's own project."""
    newline = module.default_newline
    name = statement.split()[1]
    key = (_section(name, False, first_party), 0, name.lower())
    imports = [item for item in opening_block(module) if is_import_line(item)]
    previous = next_one = None
    for item in imports:
        if _sort_key(item, first_party) > key:  # type: ignore[arg-type]
            next_one = item
            break
        previous = item
    line = statement + newline
    section = key[0]
    if previous is not None and _sort_key(previous, first_party)[0] == section:  # type: ignore[arg-type]
        return Placement(previous, "line_after", line)
    if next_one is not None:
        same = _sort_key(next_one, first_party)[0] == section  # type: ignore[arg-type]
        return Placement(next_one, "line_before", line if same else line + newline)
    if previous is not None:
        return Placement(previous, "line_after", newline + line)
    end = block_end(module)
    if end is not None:
        return Placement(end, "line_after", line)
    return Placement(module.body[0], "line_before", line) if module.body else None


def merge_placements(texts: list[str], newline: str, first_party: str = "") -> str:
    """One text for several imports placed on one line (each as `import_placement` gave it): sorted,
    a blank line only between sections, and the blank lines that set the group apart kept."""
    statements = sorted({text.strip() for text in texts}, key=lambda text: _statement_key(text, first_party))
    lines = []
    for index, statement in enumerate(statements):
        if index and _statement_key(statement, first_party)[0] != _statement_key(statements[index - 1], first_party)[0]:
            lines.append("")
        lines.append(statement)
    leading = newline if any(text.startswith(newline) for text in texts) else ""
    trailing = newline if any(text.endswith(newline + newline) for text in texts) else ""
    return leading + "".join(line + newline for line in lines) + trailing


def _statement_key(statement: str, first_party: str) -> tuple[int, str]:
    name = statement.split()[1]
    return _section(name, False, first_party), name.lower()
