"""Whether imports added or removed in some modules leave the project pass as it was, where the
modules' other facts are alike (engine/last_run.py): the pass reads a module's imports for the
modules it imports, and the names the module binds only where a name written somewhere denotes a
member of that module.

Which modules a program holds, which modules some module imports, and which import, transitively,
a module that may train when loaded (program/model.py) all follow from which modules each module
reaches through imports. If every module a changed module imports now, or no longer, is one it
reaches through imports that both versions of every module make, each module reaches the same
modules before and after: a path through an import one version alone makes goes through those
others as well. And such a module has an importer either way.

A name `pkg.mod.name` denotes a member of `pkg.mod` (program/symbols.py), the module the prefix
names, as the pass resolves it, and resolving `pkg.mod` ends with a module whose name ends like it:
in whatever string a module's facts hold, `mod` is followed by `name`. Through a star import, a
member of a module is a member of its importer too, so the names written as members of those count.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from repro_lint.core.records import strings_held
from repro_lint.facts.module_facts import ModuleFacts
from repro_lint.facts.shift import ImportChange
from repro_lint.program.module_names import ModuleNames


def reached_alike(changes: Sequence[ImportChange], names: ModuleNames, facts_of: Callable[[str, bool], ModuleFacts | None]) -> bool:
    """Whether each module a changed module imports in one version only is one it reaches through
    the imports both versions of every module make (`facts_of`: a module's facts before the changes,
    False, or after, True; None where unknown)."""
    changed = {change.module: change for change in changes}
    kept_imports: dict[str, frozenset[str] | None] = {}

    def imported(module: str, imports: Iterable[str]) -> frozenset[str]:
        return frozenset(found for name in imports if (found := names.resolve(name, module)) is not None and found != module)

    def kept(module: str) -> frozenset[str] | None:
        if module not in kept_imports:
            change = changed.get(module)
            if change is not None:
                kept_imports[module] = imported(module, change.before) & imported(module, change.after)
            else:
                before, after = facts_of(module, False), facts_of(module, True)
                kept_imports[module] = (
                    imported(module, before.imports) & imported(module, after.imports) if before is not None and after is not None else None
                )
        return kept_imports[module]

    for change in changes:
        wanted = set(imported(change.module, change.before) ^ imported(change.module, change.after))
        seen = {change.module}
        pending = [change.module]
        while wanted and pending:
            found = kept(pending.pop())
            if found is None:
                return False
            for module in found - seen:
                seen.add(module)
                pending.append(module)
                wanted.discard(module)
        if wanted:
            return False
    return True


def star_importers(modules: Iterable[str], names: ModuleNames, facts: Iterable[ModuleFacts]) -> frozenset[str]:
    """`modules` and the modules among `facts`' that star-import one of them, transitively."""
    found = set(modules)
    importing = [(each.module, each.star_imports) for each in facts if each.star_imports]
    grew = True
    while grew:
        grew = False
        for module, stars in importing:
            if module not in found and any(names.resolve(star, module) in found for star in stars):
                found.add(module)
                grew = True
    return frozenset(found)


def names_a_member(facts: ModuleFacts, modules: Iterable[str], members: Iterable[str]) -> bool:
    """Whether a string the facts hold may name one of `members` of one of `modules`: a part among
    `members` after one that ends one of the modules' names."""
    ends = {module.rpartition(".")[2] for module in modules}
    wanted = frozenset(members)
    held: set[str] = set()
    strings_held(facts, held)
    for string in held:
        parts = string.split(".")
        if any(part in ends and after in wanted for part, after in zip(parts, parts[1:])):
            return True
    return False
