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
member of a module is a member of its importer too, where the importer does not decide what the name
denotes itself (a definition, or a name bound to a function, class, module or library name), so the
names written as members of those count.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence

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


def holders(
    changes: Sequence[ImportChange], names: ModuleNames, facts: Iterable[ModuleFacts], facts_of: Callable[[str, bool], ModuleFacts | None]
) -> dict[str, frozenset[str]]:
    """For each name a changed module binds otherwise, the modules where the pass may look it up
    there: that module, and the modules among `facts`' that star-import one of them, transitively,
    where the pass may look into their star imports for it (`_decided`)."""
    found: dict[str, set[str]] = {}
    for change in changes:
        for name in change.rebound:
            found.setdefault(name, set()).add(change.module)
    importing = [each for each in facts if each.star_imports]
    for name, modules in found.items():
        grew = True
        while grew:
            grew = False
            for each in importing:
                if (
                    each.module not in modules
                    and any(names.resolve(star, each.module) in modules for star in each.star_imports)
                    and not _decided(each, name, names, facts_of, _MOST_HOPS)
                ):
                    modules.add(each.module)
                    grew = True
    return {name: frozenset(modules) for name, modules in found.items()}


# Names bound to names followed to tell what a name bound in a module denotes, at most.
_MOST_HOPS = 8


def _decided(facts: ModuleFacts, name: str, names: ModuleNames, facts_of: Callable[[str, bool], ModuleFacts | None], hops: int) -> bool:
    """Whether the pass finds what the module's member `name` denotes without looking into its star
    imports (`_Denotations.member`): the module defines it, it is a submodule, or a name the module
    binds to it denotes a project function, class or module, or a name outside the project."""
    member = f"{facts.module}.{name}"
    if member in names.modules or any(each.qualname == member for each in (*facts.functions, *facts.classes)):
        return True
    return any(target != member and _denotes_something(target, facts.module, names, facts_of, hops) for target in facts.binding(name))


def _denotes_something(target: str, importer: str, names: ModuleNames, facts_of: Callable[[str, bool], ModuleFacts | None], hops: int) -> bool:
    """Whether `SymbolResolver` finds `target`, written in `importer`, to denote a project function,
    class or module, or a name outside the project, in both versions of the modules it looks into;
    False where that is not told so."""
    split = names.split(target, importer)
    if split is None:
        return True  # a module named whole, or a name outside the project
    module, rest = split
    if len(rest) != 1 or hops == 0:
        return False
    versions = (facts_of(module, False), facts_of(module, True))
    return all(each is not None and _decided(each, rest[0], names, facts_of, hops - 1) for each in versions)


def name_members(facts: Iterable[ModuleFacts], holders: Mapping[str, Iterable[str]]) -> bool:
    """Whether a string some module's facts hold may name a member of a module where the pass may
    look it up in a changed module (`holders`): its name after a part that ends one of those
    modules' names."""
    ends = {name: {module.rpartition(".")[2] for module in modules} for name, modules in holders.items()}
    for each in facts:
        held: set[str] = set()
        strings_held(each, held)
        for string in held:
            parts = string.split(".")
            if any(after in ends and part in ends[after] for part, after in zip(parts, parts[1:])):
                return True
    return False
