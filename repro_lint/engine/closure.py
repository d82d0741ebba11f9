"""The modules a run on some of a project's files needs: the programs those files belong to.

A reported module's findings depend on the programs whose modules include it, and a program's
modules are what its entry imports, transitively. So a run on a few files (a pre-commit hook, an
editor) needs the modules that import them, transitively (among them every such program's entry),
and everything those import and name: on pytorch/examples a file needs 1 or 2 modules of 93, on
fairseq 200 to 900 of 1,024. The project pass then works on those alone, with the same results.
A module whose findings no other program decides (the engine tells them from their analyses: none
of their own findings asks the program model, and they hold no place where a project check
reports what the programs running it decide) needs only what it imports, for its own program
where it is an entry. Whether it is one may depend on its importers, left out: a module that
trains when loaded is an entry where no module imports it. The engine then reads them too.
Such a module that some module imports, and that is no entry of itself, needs even less: what it
imports decides its findings only through the places the engine names (a torch seed after calls
of the project's functions in its body, which may draw first: it needs the modules their names may
denote, and what those import), or through the functions its calls pass arguments to, where a
module it imports may define one applying its caller's choice (facts/callers_choice.py). Else it is
read with the modules importing it, which tell that it is no entry, where they are no more than
what it imports.

Which modules a module may refer to is read from its text alone, before any parse: its import
statements, and the dotted names it writes (`pkg.sub.f()` after `import pkg` reaches `pkg.sub`
without importing it). Each name is matched to every module it may denote, wherever the project
pass looks for it (see `ModuleNames.candidates`), so the references found are a superset of those
the pass follows, and no module it would read is left out.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from repro_lint.core.graphs import closure
from repro_lint.core.imports import absolute_module
from repro_lint.core.source import UnreadableSource, decode
from repro_lint.engine.cache import ScannedReferences
from repro_lint.engine.discovery import SCANNED_SUFFIXES
from repro_lint.engine.modules import Project, SourceModule, text_digest
from repro_lint.program.module_names import ModuleNames

_CONTINUED = re.compile(r"\\\r?\n")
_DOTTED_PART = r"[^\W\d]\w*"
# What precedes `import` on its line: a statement's start, or `from <dots><module>` there (a
# compound statement's `if x: import y` and `a; import b` included).
_STATEMENT_START = re.compile(r"(?:^|[;:])\s*$")
_FROM_CLAUSE = re.compile(r"(?:^|[;:])\s*from\s+(\.*)\s*([\w.\s]*?)\s*$")
_IMPORTED = re.compile(r"\s*(?:\(([^)]*)\)|([^\n;#]*))")
_DOTTED_REST = re.compile(rf"{_DOTTED_PART}(?:\.{_DOTTED_PART})*")
_ALIAS = re.compile(rf"({_DOTTED_PART}(?:\s*\.\s*{_DOTTED_PART})*)(?:\s+as\s+({_DOTTED_PART}))?")
_DOTTED = re.compile(rf"(?<![\w.]){_DOTTED_PART}(?:\.{_DOTTED_PART})+")
_SPACE = re.compile(r"\s+")


@dataclass(frozen=True)
class OnItsOwn:
    """What a reported module whose findings no program but its own decides needs of the modules it
    imports: all of them where `imports` (an entry of itself, or a place where a check reports what
    the functions it calls do); else only where one of them may define a function named in
    `callees` (the last names of the functions its calls pass arguments to) that applies its
    caller's choice; else only the modules the names in `called` may denote (the targets of the
    calls made before its seeds, whose functions may draw first), and all those import; else none,
    where some module imports it (one that nothing imports may be an entry, by what it runs when
    loaded)."""

    imports: bool
    callees: frozenset[str] = frozenset()
    called: frozenset[str] = frozenset()


def needed(
    project: Project, cache_root: Path | None = None, on_their_own: Callable[[list[SourceModule]], Mapping[str, OnItsOwn]] | None = None
) -> Project:
    """`project` with only the modules its reported files' programs need; itself where at least
    half its Python modules are reported (an audit, maybe of a folder holding nested projects): the
    scan would save little there, and the whole project's record then answers its next run. With
    `cache_root`, the references of files whose texts' hashes are known come from the cache there,
    and are kept there. `on_their_own(reported)` gives, by name, those of the reported Python
    modules whose findings no program but their own decides, with what they need of what they
    import (`OnItsOwn`)."""
    python = [module for module in project.modules if not module.display.endswith(SCANNED_SUFFIXES)]
    if 2 * sum(module.report for module in python) >= len(python):
        return project
    alone = dict(on_their_own([module for module in python if module.report])) if on_their_own is not None else {}
    names = ModuleNames(module.identity.name for module in python)
    scanned = ScannedReferences(cache_root, names.modules) if cache_root is not None else None
    refers: dict[str, set[str]] = {module.identity.name: set() for module in python}
    try:
        for module in python:
            refers[module.identity.name] |= _references(module, names, scanned)
    except Exception:  # a bug of the scan must not cost the run: the whole project gives the same findings
        return project
    if scanned is not None:
        scanned.store()
    importers: dict[str, set[str]] = {}
    for module, referred in refers.items():
        for other in referred:
            importers.setdefault(other, set()).add(module)
    by_name = {module.identity.name: module for module in python}
    # Read without what it imports, a module is no entry only where a module imports it: its
    # importers are read too (not what they import), for the pass to tell (`Project.by_itself`).
    read_with = {name: found for name, own in alone.items() if (found := _read_with(name, own, refers, importers, by_name, names)) is not None}
    by_itself = read_with.keys()
    ancestors = closure({module.identity.name for module in python if module.report} - alone.keys(), importers) | (alone.keys() - by_itself)
    kept = closure(ancestors, refers) | by_itself | set().union(*read_with.values())
    modules = [module for module in project.modules if module.report or module.identity.name in kept or module.display.endswith(SCANNED_SUFFIXES)]
    left_out = frozenset(name for name in alone if not importers.get(name, set()) <= kept)
    return Project(project.root, modules, universe=names.modules, importers_left_out=left_out, by_itself=frozenset(by_itself))


def _read_with(
    name: str,
    own: OnItsOwn,
    refers: Mapping[str, set[str]],
    importers: Mapping[str, set[str]],
    modules: Mapping[str, SourceModule],
    names: ModuleNames,
) -> set[str] | None:
    """The modules the module on its own `name` is read with instead of what it imports: its
    importers, and what the calls before its seeds may run (`OnItsOwn.called`), where it needs
    nothing else of what it imports and they are fewer, and not all of that; None where it is read
    with what it imports. The texts of what it imports are read for that only where its calls pass
    arguments to functions: they tell whether one may define such a function applying its caller's
    choice."""
    if own.imports or not importers.get(name):
        return None
    imported = closure(refers[name], refers) - {name}
    found = importers[name] | (closure(_denoted(own.called, name, names), refers) - {name})
    # Read with what it imports, a run keeps a record (engine.py): no point reading as many without.
    if len(found) > len(imported) or imported <= found:
        return None
    if not own.callees:
        return found
    from repro_lint.facts.callers_choice import may_apply_callers_choice  # loads LibCST, which the engine has loaded to judge the module

    try:
        return None if any(may_apply_callers_choice(_text(modules[other]), own.callees) for other in imported) else found
    except Exception:  # a bug here must not cost the run: read with what it imports, the module gets the same findings
        return None


def _denoted(targets: Iterable[str], importer: str, names: ModuleNames) -> set[str]:
    """Every module the pass may look into for what the dotted names `targets`, written in
    `importer`, denote (program/symbols.py): the modules each of their prefixes may name, from the
    longest to the first that names one (`ModuleNames.split`), and the whole name's (`import
    utils` then `utils()`). What those import the caller adds: re-exports lead there."""
    found: set[str] = set()
    for target in targets:
        parts = target.split(".")
        found.update(names.candidates(target, importer))
        for cut in range(len(parts) - 1, 0, -1):
            prefix = ".".join(parts[:cut])
            found.update(names.candidates(prefix, importer))
            if names.resolve(prefix, importer) is not None:
                break
    return found


def _references(module: SourceModule, names: ModuleNames, scanned: ScannedReferences | None) -> frozenset[str]:
    """The modules `module` may refer to: from `scanned` where its text was seen (by its hash, which
    the last run's record may know without reading the file)."""
    if scanned is None or module.overridden:
        return _scan(_text(module), module, names)
    text = None
    if (digest := module.known_digest) is None:
        text = _text(module)
        digest = text_digest(text)
        module.assume_digest(digest)  # the file is not read again for the cache's look-up
    found = scanned.get(module.display, digest)
    if found is None:
        found = _scan(_text(module) if text is None else text, module, names)
        scanned.add(module.display, digest, found)
    return found


def _scan(text: str, module: SourceModule, names: ModuleNames) -> frozenset[str]:
    return frozenset(references(text, module.identity.name, module.identity.is_package, names))


def references(text: str, module: str, is_package: bool, names: ModuleNames) -> set[str]:
    """The project modules that `module`'s code (`text`) may import or name, found from its text."""
    if "\\" in text:
        text = _CONTINUED.sub(" ", text)
    package = module if is_package else module.rpartition(".")[0]
    dotted: set[str] = set()
    bindings: dict[str, set[str]] = {}
    stars: set[str] = set()
    for base, imported in _imports(text, package):
        dotted.add(base)
        if imported == "*":
            stars.add(base)
            continue
        for alias in _ALIAS.finditer(imported):
            name = _SPACE.sub("", alias[1])
            if base:
                dotted.add(f"{base}.{name}")
                bindings.setdefault(alias[2] or name, set()).add(f"{base}.{name}")
            else:
                dotted.add(name)
                head = alias[2] or name.partition(".")[0]
                bindings.setdefault(head, set()).add(name if alias[2] else head)
    dotted.discard("")
    # A name whose first part is no part of any module's name denotes no module (`torch.nn.init`).
    heads = [head for head, targets in bindings.items() if not all(names.outside(target) for target in targets)]
    for head, rest in _dotted_names(text, heads if not stars else None):
        for target in (*bindings.get(head, ()), *(f"{star}.{head}" for star in stars)):
            dotted.add(f"{target}.{rest}")
    prefixes = {".".join(parts[:cut]) for name in dotted if not names.outside(name) for parts in [name.split(".")] for cut in range(1, len(parts) + 1)}
    found = {candidate for prefix in prefixes for candidate in names.candidates(prefix, module)}
    found.discard(module)
    return found


def _imports(text: str, package: str) -> Iterator[tuple[str, str]]:
    """Each import statement's module and the names it imports: (`a.b`, `c as d`) for `from a.b
    import c as d`; ("", `a.b as c, e`) for `import a.b as c, e`. Only the word `import` is searched
    for (str.find is many times quicker than a regular expression over the whole text); where it
    starts a statement, or ends a `from` clause, the line around it is read."""
    at = text.find("import")
    while at != -1:
        end = at + len("import")
        if (at == 0 or not _is_name_character(text[at - 1])) and (end == len(text) or not _is_name_character(text[end])):
            before = text[text.rfind("\n", 0, at) + 1 : at]
            clause = _FROM_CLAUSE.search(before)
            if clause is not None or _STATEMENT_START.search(before) is not None:
                imported = _IMPORTED.match(text, end)  # always matches: its second form may be empty
                names = (imported[2] if imported[1] is None else imported[1]).strip()
                if clause is None:
                    yield "", names
                elif (base := absolute_module(_SPACE.sub("", clause[2]), len(clause[1]), package)) is not None:
                    yield base, names
        at = text.find("import", end)


def _dotted_names(text: str, heads: Iterable[str] | None) -> Iterator[tuple[str, str]]:
    """The dotted names in `text` (`pkg.sub.f`), as their first part and the rest; only those
    starting with one of `heads` where given."""
    if heads is None:
        for name in set(_DOTTED.findall(text)):
            head, _, rest = name.partition(".")
            yield head, rest
        return
    for head in heads:
        needle = head + "."
        at = text.find(needle)
        while at != -1:
            if at == 0 or not (_is_name_character(text[at - 1]) or text[at - 1] == "."):
                rest = _DOTTED_REST.match(text, at + len(needle))
                if rest is not None:
                    yield head, rest[0]
            at = text.find(needle, at + len(needle))


def _is_name_character(character: str) -> bool:
    return character.isalnum() or character == "_"


def _text(module: SourceModule) -> str:
    """The module's code; empty where it cannot be read (it then has no facts, and refers to nothing)."""
    if module.notebook is not None or module.overridden:
        return module.text
    raw = module.raw()
    if raw is None:
        return ""
    try:
        return decode(raw)[0]
    except UnreadableSource:
        return ""

