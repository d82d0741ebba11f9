"""Findings and fixes of program-level rules: where they are reported, and the statements their
fixes insert on the main path of the entry module."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from repro_lint.core.findings import Applicability, Edit, Finding, Fix, Reporter
from repro_lint.core.source import Position
from repro_lint.facts.fix_points import EntryFixFacts, InsertionPoint
from repro_lint.facts.module_facts import ModuleFacts
from repro_lint.facts.seed_values import SEED_CONSTANT, seed_constant
from repro_lint.program.programs import Worker

_DEFAULT_NAMES = {"numpy": "np"}


def entry_position(entry: ModuleFacts) -> Position:
    """The `if __name__ == "__main__":` line, or line 1 for a module that trains at module level."""
    return Position(entry.main_guard_line or 1, 0)


def program_finding(rule: Reporter, entry: ModuleFacts, message: str, fix: Fix | None = None) -> Finding:
    at = entry_position(entry)
    return Finding(rule.code, rule.name, message, entry.path, at, at, fix)


def insert_on_main_path(
    entry: ModuleFacts,
    modules: Sequence[str],
    statements: Callable[[dict[str, str], str], list[str]],
    message: str,
    uses_seed: bool = True,
) -> Fix | None:
    """A fix inserting `statements(names, seed)` where the main path starts. `names` maps each of
    `modules` to the name that denotes it in the entry module (imports are added when missing);
    `seed` is the seed value in scope there, or a new module constant `SEED = 0` (when `uses_seed`)."""
    facts = entry.fix
    if facts is None or facts.main_path is None:
        return None
    return _insert(facts, facts.main_path, modules, statements, message, uses_seed)


def insert_in_worker(
    entry: ModuleFacts,
    worker: Worker,
    modules: Sequence[str],
    statements: Callable[[dict[str, str], str], list[str]],
    message: str,
    uses_seed: bool = True,
) -> Fix | None:
    """As `insert_on_main_path`, at the start of a function the entry module starts in other
    processes (the launcher's own settings do not reach them). None when the function is in another
    module: a fix edits the file its finding is reported in."""
    facts = entry.fix
    point = facts.worker_start(worker.functions[0]) if facts is not None and len(worker.functions) == 1 else None
    if facts is None or point is None:
        return None
    return _insert(facts, point, modules, statements, message, uses_seed)


def _insert(
    facts: EntryFixFacts,
    point: InsertionPoint,
    modules: Sequence[str],
    statements: Callable[[dict[str, str], str], list[str]],
    message: str,
    uses_seed: bool,
) -> Fix:
    newline = facts.newline
    names = {module: facts.alias(module) or _DEFAULT_NAMES.get(module, module) for module in modules}
    # Texts by line, in the order they go there: imports, the seed constant, the statements.
    added = facts.missing_imports(modules)
    seed = point.seed
    after_imports = point.line == facts.import_line > 1
    if seed is None and uses_seed:
        added[facts.import_line] = added.get(facts.import_line, "") + seed_constant(newline)
        seed = SEED_CONSTANT
    elif after_imports:
        added[point.line] = added.get(point.line, "") + newline  # a blank line ends the import block
    body = "".join(point.indent + line + newline for line in statements(names, seed or ""))
    added[point.line] = added.get(point.line, "") + body
    return Fix(Applicability.UNSAFE, message, tuple(_insertion(line, text) for line, text in sorted(added.items())))


def _insertion(line: int, text: str) -> Edit:
    at = Position(line, 0)
    return Edit(at, at, text)
