"""The package's layering (ARCHITECTURE.md): imports run one way, from the front-ends down to core,
and no module imports itself back through others. Read from the source with `ast`, so imports under
`TYPE_CHECKING` and inside functions count too: a cycle that only type checkers see still ties the
modules together for whoever reads them."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

import repro_lint

PACKAGE = Path(repro_lint.__file__).parent

# From the top down: a module may import its own layer and those below it, never one above.
LAYERS: tuple[tuple[str, ...], ...] = (
    ("repro_lint", "repro_lint.__main__", "repro_lint.api", "repro_lint.cli", "repro_lint.flake8_plugin", "repro_lint.lsp"),
    ("repro_lint.output",),
    ("repro_lint.engine",),
    ("repro_lint.sources",),
    ("repro_lint.analysis",),
    ("repro_lint.rules",),
    ("repro_lint.program",),
    ("repro_lint.facts",),
    ("repro_lint.core", "repro_lint.knowledge"),
)
# The runtime probe runs inside the user's training environment: it stands alone, and only the
# command line reaches it.
APART = "repro_lint.probe"


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_module_name(path): path for path in PACKAGE.rglob("*.py")}


def _imports(name: str) -> Iterator[tuple[str, int]]:
    """The project modules `name` imports, with the line of each import."""
    path = MODULES[name]
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            base = package.split(".")[: len(package.split(".")) - node.level + 1] if node.level else []
            target = ".".join(base + ([node.module] if node.module else []))
            for alias in node.names:
                member = f"{target}.{alias.name}"
                if member in MODULES:
                    yield member, node.lineno
                elif target in MODULES:
                    yield target, node.lineno
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name in MODULES:
                    yield alias.name, node.lineno


def _layer(name: str) -> int | None:
    for rank, members in enumerate(LAYERS):
        if any(name == member or (member != "repro_lint" and name.startswith(member + ".")) for member in members):
            return rank
    return None


def test_every_module_has_a_place():
    placed = [name for name in MODULES if not name.startswith(APART)]
    assert [name for name in placed if _layer(name) is None] == []


def test_imports_run_down_the_layers():
    upward = []
    for name in MODULES:
        for imported, line in _imports(name):
            if name.startswith(APART) or imported.startswith(APART):
                allowed = imported.startswith(APART) and (name.startswith(APART) or _layer(name) == 0)
            else:
                allowed = _layer(imported) >= _layer(name)  # type: ignore[operator]
            if not allowed:
                upward.append(f"{MODULES[name].relative_to(PACKAGE.parent)}:{line} imports {imported}")
    assert upward == []


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, successors = work[-1]
            for successor in successors:
                if successor not in index:
                    index[successor] = low[successor] = len(index)
                    stack.append(successor)
                    on_stack.add(successor)
                    work.append((successor, iter(sorted(graph[successor]))))
                    break
                if successor in on_stack:
                    low[node] = min(low[node], index[successor])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
    return found


def test_no_import_cycle():
    graph = {name: {imported for imported, _ in _imports(name) if imported != name} for name in MODULES}
    assert _cycles(graph) == []


def test_the_checks_catch_what_they_look_for():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []
    assert _layer("repro_lint.facts.names") > _layer("repro_lint.rules.base") > _layer("repro_lint.engine.cache")  # type: ignore[operator]
    assert _layer("repro_lint.core.source") == len(LAYERS) - 1


@pytest.mark.parametrize("package", ["core", "facts", "program", "rules", "analysis", "engine", "sources", "output", "probe", "lsp"])
def test_each_package_says_what_it_owns(package):
    docstring = ast.get_docstring(ast.parse((PACKAGE / package / "__init__.py").read_text(encoding="utf-8")))
    assert docstring and "import" in docstring, f"repro_lint/{package}/__init__.py must say what it owns and may import"


def test_few_modules_sit_at_the_top():
    assert len(list(PACKAGE.glob("*.py"))) <= 10
