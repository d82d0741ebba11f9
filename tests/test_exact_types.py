"""Node classes compared by exact type (`type(node) is cst.Name`, `type(node) in (...)`), which
repro-lint does where most nodes are asked (facts/names.py), must have no subclasses: a subclass's
nodes would fail the comparison where `isinstance` holds."""

from __future__ import annotations

import ast
from pathlib import Path

import libcst as cst

PACKAGE = Path(__file__).resolve().parents[1] / "repro_lint"


def _classes(side: ast.expr) -> list[str]:
    """The `cst.X` names `side` compares with: `cst.X` itself, or a tuple, list or set of them
    (`frozenset((cst.A, cst.B))` too)."""
    if isinstance(side, ast.Call) and isinstance(side.func, ast.Name) and side.func.id in ("frozenset", "set", "tuple") and len(side.args) == 1:
        side = side.args[0]
    parts = side.elts if isinstance(side, (ast.Tuple, ast.List, ast.Set)) else [side]
    return [part.attr for part in parts if isinstance(part, ast.Attribute) and isinstance(part.value, ast.Name) and part.value.id == "cst"]


def _compared_by_identity() -> dict[str, set[str]]:
    """The `cst.X` names compared with `is`, `is not`, `in` or `not in`, each with the files doing it."""
    found: dict[str, set[str]] = {}
    for path in PACKAGE.rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        # A module's constants (`_TESTS = frozenset((cst.If, ...))`) compared by name.
        constants = {
            target.id: statement.value for statement in tree.body if isinstance(statement, ast.Assign) for target in statement.targets if isinstance(target, ast.Name)
        }
        for node in ast.walk(tree):
            if not isinstance(node, ast.Compare) or not all(isinstance(op, (ast.Is, ast.IsNot, ast.In, ast.NotIn)) for op in node.ops):
                continue
            for side in node.comparators:
                if isinstance(side, ast.Name) and side.id in constants:
                    side = constants[side.id]
                for name in _classes(side):
                    found.setdefault(name, set()).add(path.relative_to(PACKAGE).as_posix())
    return found


def test_node_classes_compared_by_exact_type_have_no_subclasses() -> None:
    compared = _compared_by_identity()
    assert {"Name", "Call", "SimpleStatementLine", "IfExp"} <= compared.keys()  # the scan finds them, constants too
    subclassed = {name: sorted(files) for name, files in compared.items() if getattr(cst, name).__subclasses__()}
    assert subclassed == {}


def test_node_types_are_the_classes_deriving_from_those_named() -> None:
    from repro_lint.facts.traversal import node_types

    statements = node_types(cst.BaseSmallStatement)
    assert {cst.BaseSmallStatement, cst.Assign, cst.Expr, cst.Import} <= statements
    assert cst.If not in statements and cst.Name not in statements
