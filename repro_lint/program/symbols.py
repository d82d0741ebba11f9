"""Which project function or class a dotted name denotes, following re-exports: names bound by
imports (`from .core import Trainer`), `from x import *` and submodules, across any number of modules.

A name is resolved one part at a time, and what a module's member denotes (`pkg.Trainer`) is worked
out once per (module, member) pair, so the work grows with the project's bindings, not with the ways
to chain them; a star import of a module outside the project is never followed. Chains of
re-exports are followed on an explicit stack (`stack_memo`), not Python's, so their length is bounded
only by the project; a name whose re-exports lead back to itself denotes nothing along that cycle.
"""

from __future__ import annotations

from collections.abc import Callable, Container, Mapping
from dataclasses import dataclass
from functools import lru_cache

from repro_lint.core.stack_memo import StackMemo, Steps
from repro_lint.facts.module_facts import ModuleFacts
from repro_lint.program.module_names import ModuleNames


@dataclass(frozen=True)
class _Outside:
    """A name no prefix of which names a project module (`numpy`, bound by `import numpy as np`),
    and the module it is written in: with more parts it may still (`numpy.random` may be vendored)."""

    name: str
    importer: str | None


# A member of a module: ("pkg.models", "ResNet").
_Member = tuple[str, str]
# What a name or member denotes: a project function, class or module, a name outside, or nothing.
_Denoted = str | _Outside | None
# A computation that asks for members (yields them) and is sent back what each denotes.
_Computation = Steps[_Member, _Denoted]


class SymbolResolver:
    def __init__(self, modules: Mapping[str, ModuleFacts], names: ModuleNames, defined: Container[str]) -> None:
        self._defined = defined
        self._names = names
        # The computations hold no reference to the memo of their answers: the two would be a cycle,
        # which only the cyclic collector frees, by traversing every answer.
        self._denotations = _Denotations(modules, names, defined)
        self._members = StackMemo(self._denotations.member, None)

    def resolve(self, qualified: str, importer: str | None) -> str | None:
        """The project function or class `qualified` (written in module `importer`) denotes."""
        if qualified in self._defined:
            return qualified
        if self._names.outside(qualified):  # a library's name (`torch.nn.Linear`): most calls
            return None
        found = self._members.run(self._denotations.value(qualified, importer))
        return found if isinstance(found, str) and found in self._defined else None


class _Denotations:
    """The computations `SymbolResolver` memoises: what a name, and a module's member, denote."""

    def __init__(self, modules: Mapping[str, ModuleFacts], names: ModuleNames, defined: Container[str]) -> None:
        self._modules = modules
        self._names = names
        self._defined = defined

    def value(self, qualified: str, importer: str | None) -> _Computation:
        """What a dotted name denotes: a project function, class or module, or `_Outside` when no
        prefix of it names a project module."""
        while qualified not in self._defined:
            split = self._names.split(qualified, importer)
            if split is None:
                whole = self._names.resolve(qualified, importer)  # `import utils`: a module named whole
                return whole if whole is not None else _Outside(qualified, importer)
            found: _Denoted = split[0]
            rest = split[1]
            for at, part in enumerate(rest):
                if isinstance(found, str) and found in self._names.modules:
                    found = yield (found, part)
                elif isinstance(found, str):  # a class: its methods and nested classes
                    found = f"{found}.{part}" if f"{found}.{part}" in self._defined else None
                if not isinstance(found, str):
                    break
            else:
                return found
            if found is None:
                return None
            # `np.random.seed` where `np` is `numpy`: the name with the parts left may still name a
            # project module (a vendored `numpy/random.py`); each round consumes a part at least.
            qualified, importer = ".".join([found.name, *rest[at + 1 :]]), found.importer
        return qualified

    def member(self, member: _Member) -> _Computation:
        """What `module.name` denotes: its own definition or submodule, what an import binds to the
        name there (a project answer before one outside), or what a star-imported project module's
        member of that name denotes."""
        module, name = member
        qualified = f"{module}.{name}"
        if qualified in self._defined or qualified in self._names.modules:
            return qualified
        facts = self._modules[module]
        outside: _Denoted = None
        for target in facts.binding(name):
            if target != qualified:  # the module's own definition, checked above
                found = yield from self.value(target, module)
                if isinstance(found, str):
                    return found
                outside = outside or found
        if outside is not None:
            return outside
        for star in facts.star_imports:
            source = self._names.resolve(star, module)
            if source is not None and source != module:
                found = yield (source, name)
                if found is not None:
                    return found
        return None


def denotes_nothing(qualified: str, importer: str, names: ModuleNames, facts_of: Callable[[str], ModuleFacts | None]) -> bool:
    """Whether `SymbolResolver.resolve` finds nothing that `qualified`, written in `importer` and
    naming a project module by a prefix, denotes, as far as the facts of the modules its prefixes
    name tell (`facts_of`; None where they are not known): none of them defines it, and the member
    of the module its longest prefix names (`_Denotations.member`) is no definition nor submodule
    there, nothing a star import may bring, and bound only to names outside the project
    (`LOGGER.info` after `from logging_lib import LOGGER`). False where that is not so or cannot be
    told: this stands in for the whole resolver where only a few modules' facts are at hand."""
    split = names.split(qualified, importer)
    if split is None:
        return False
    module, rest = split
    member = f"{module}.{rest[0]}"
    if member in names.modules:
        return False
    # A definition's qualified name starts with its module's: only a module some prefix names may hold one.
    for name in (qualified, member):
        parts = name.split(".")
        for cut in range(1, len(parts)):
            prefix = ".".join(parts[:cut])
            if prefix in names.modules and ((facts := facts_of(prefix)) is None or name in _defined_in(facts)):
                return False
    facts = facts_of(module)
    if facts is None:
        return False
    if any(not names.outside(star) for star in facts.star_imports):
        return False
    return all(names.outside(target) for target in facts.binding(rest[0]) if target != member)


def _defined_in(facts: ModuleFacts) -> frozenset[str]:
    return _definitions(_Same(facts))


@dataclass(frozen=True, eq=False)
class _Same:
    """A module's facts compared by identity: hashing the facts themselves reads all of them."""

    facts: ModuleFacts


# Asked for each name a changed module's calls write, for each module its prefixes name: a handful of
# modules, named by hundreds of calls.
@lru_cache(maxsize=64)
def _definitions(same: _Same) -> frozenset[str]:
    facts = same.facts
    return frozenset(function.qualname for function in facts.functions) | frozenset(cls.qualname for cls in facts.classes)
