"""Which of what the last project pass resolved (by module: its functions' links, `CallGraph.links`,
and what its calls resolve to) a pass after an edit can take as it is, instead of resolving every
call of the project again.

What a call resolves to depends on its targets and on the symbol tables of the modules a resolution
consults (their definitions, the names their imports and definitions bind, their star imports) and
the project's module names. A change to a module's tables is seen by a resolution made elsewhere
only where it tests what changed: a definition or a binding that is new, gone or different. The
names a resolution tests are built from strings of the facts of the modules it passes through (call
targets, binding targets), the last part of each from such a string, but for the methods that
building a class runs (`IMPLICIT_METHODS`, after the class's name); from module names; and the
strings of a module's facts are words of its text. So where no word of what changed is a word of an
unchanged module's text, a part of a module's name, or a part of a binding target a changed module
kept, no resolution outside the changed modules tests it, and theirs stand. `named_elsewhere`
(engine/last_run.py) relies on the same: a name reaches a module only as a word of some file.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from repro_lint.facts.module_facts import ModuleFacts
from repro_lint.program.call_graph import IMPLICIT_METHODS, Resolutions
from repro_lint.program.module_names import ModuleNames


def resolutions_kept(
    recorded: Mapping[str, Resolutions],
    changes: Sequence[tuple[ModuleFacts, ModuleFacts]],
    names: ModuleNames,
    mentioned: Callable[[frozenset[str]], bool],
) -> dict[str, Resolutions]:
    """What `recorded` holds (by module, as the last pass left it) that holds after `changes` (each
    changed module's facts before and after) among the same modules: nothing of a changed module's,
    and nothing at all where a resolution made elsewhere may see a change. `mentioned` tells whether
    the text of a module not changed holds one of the given words (or cannot be read)."""
    words: set[str] = set()
    routed: set[str] = set()
    for before, after in changes:
        changed = _changed_words(before, after)
        if changed is None:
            return {}
        words |= changed
        routed.update(part for binding in set(before.bindings) & set(after.bindings) for target in binding[1] for part in target.split("."))
    if words:
        if not all(word.isascii() and word.isidentifier() for word in words):
            return {}  # searched for as ASCII words
        # A word that is no part of a module's name is `outside`: nothing a module's name names.
        if not all(map(names.outside, words)) or not words.isdisjoint(routed) or mentioned(frozenset(words)):
            return {}
    changed_modules = {after.module for _, after in changes}
    return {module: resolutions for module, resolutions in recorded.items() if module not in changed_modules}


def _changed_words(before: ModuleFacts, after: ModuleFacts) -> set[str] | None:
    """The words through which a resolution may test what differs between a module's two versions:
    the last part of each definition new or gone (and its class's name for a method that building
    the class runs), and each name bound otherwise. None where any look-up in the module may differ
    (its star imports changed)."""
    if before.star_imports != after.star_imports or before.module != after.module:
        return None
    words = set()
    for qualname, _ in _definitions(before) ^ _definitions(after):
        owner, _, name = qualname.rpartition(".")
        words.add(name)
        if name in IMPLICIT_METHODS:
            words.add(owner.rpartition(".")[2])
    words.update(name for name, _ in set(before.bindings) ^ set(after.bindings))
    return words


def _definitions(facts: ModuleFacts) -> set[tuple[str, bool]]:
    """The module's functions (True) and classes (False)."""
    return {(function.qualname, True) for function in facts.functions} | {(cls.qualname, False) for cls in facts.classes}
