"""The call sites that choose a setting a library function applies ("Libraries applying their
caller's choice", catalog): the functions of modules that are no program's entry whose parameter
decides a DataLoader setting (facts/callers_choice.py), and the project calls that pass the
offending value or leave the parameter's offending default."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

from repro_lint.facts.callers_choice import ArgumentsFact, ChoiceFact, chosen_names, offends
from repro_lint.facts.module_facts import ModuleFacts
from repro_lint.program.model import ProjectModel


@dataclass(frozen=True)
class ChoosingCall:
    """A call in `caller` that makes `choice`'s setting offend: it gives the parameter `value`, or
    (`passed` False) leaves it at that default."""

    caller: ModuleFacts
    call: ArgumentsFact
    library: ModuleFacts
    choice: ChoiceFact
    value: str | None
    passed: bool


def choosing_calls(project: ProjectModel, setting: str, by_value: Callable[[str], bool]) -> Iterator[ChoosingCall]:
    """Each project call that makes a library function's `setting` offend, once per call and
    function (the function's first such DataLoader)."""
    entries = {program.entry.module for program in project.programs}
    chosen: dict[str, tuple[ModuleFacts, ChoiceFact]] = {}
    for facts in project.modules.values():
        if facts.module in entries:
            continue  # an entry module's own DataLoader is reported where it is built
        for choice in facts.choices:
            if choice.setting == setting:
                chosen.setdefault(choice.function, (facts, choice))
    if not chosen:
        return
    names = chosen_names(choice for _, choice in chosen.values())
    for caller in project.modules.values():
        for call in caller.arguments:
            if not call.may_reach(names):
                continue
            reached = {found for target in call.targets for found in project.calls.resolve_functions(target, caller.module)}
            for function in sorted(reached & chosen.keys()):
                library, choice = chosen[function]
                value = call.value_for(choice.choice)
                if offends(value, choice.choice, by_value):
                    yield ChoosingCall(caller, call, library, choice, value, call.gives(choice.choice))
