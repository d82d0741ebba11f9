"""What a run answered from the last run's record must check of each changed file: whether the
project pass could see the change at all, and whether findings of the pass point into it."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import replace
from functools import partial

from repro_lint.analysis.result import FileAnalysis
from repro_lint.core.findings import Finding
from repro_lint.engine.cache import RecordedRun
from repro_lint.engine.modules import Project, SourceModule
from repro_lint.facts.shift import Naming, same_but_for_moved_lines, without_calls, without_imports, without_unseen_functions
from repro_lint.program.module_names import ModuleNames


def seen_by_the_pass(
    before: FileAnalysis,
    after: FileAnalysis,
    recorded: RecordedRun,
    names: ModuleNames,
    named_elsewhere: Callable[[Mapping[str, Naming]], bool],
) -> bool | None:
    """How the project pass sees the change from `before` to `after`: not at all (False); only in
    what it reports in this file (True), where lines moved or the places its fixes would edit
    changed; otherwise (None), it may see it. Calls and imports it cannot see (of a library's
    functions and modules), and functions added or removed that run nothing it sees, with the calls
    that only run them, are left out where the facts differ by more than moved lines."""
    old, new = before.facts, after.facts
    if old == new:
        return False
    if old is None or new is None:
        return None
    if not same_but_for_moved_lines(old, new):
        from repro_lint.program.model import is_inert  # the model loads LibCST, which a run answered from its record never does

        inert = partial(is_inert, module=new.module, names=names, function_names=recorded.function_names)
        # A module's fix facts are read only for the fixes of findings in that module: a fix edits its
        # finding's file alone (an edit holds positions, not a path).
        fixes_changed = old.fix != new.fix
        old, new = (replace(without_imports(without_calls(facts, inert), names.outside), fix=None) for facts in (old, new))
        old, new = without_unseen_functions(old, new, named_elsewhere)
        if not same_but_for_moved_lines(old, new):
            return None
        return fixes_changed or old != new
    return True


def named_elsewhere(project: Project, module: SourceModule, names: Mapping[str, Naming]) -> bool:
    """Whether one of `names` occurs as a word in `module` outside the lines defining it and more
    often on a line than its plain calls there (given with it), or in another file of the project:
    where a call of a function of that name could be. Files not read in this run are read for it,
    once for all the names, as bytes, and not kept."""
    if not all(name.isascii() for name in names):
        return True  # searched for as ASCII bytes in files of any encoding
    words = {name: re.compile(rf"(?<!\w){re.escape(name)}(?!\w)", re.ASCII) for name in names}
    for number, line in enumerate(module.text.split("\n"), 1):  # as LineIndex counts
        for name, word in words.items():
            defining, calls = names[name]
            if number not in defining and len(word.findall(line)) > calls.get(number, 0):
                return True
    encoded = [name.encode() for name in names]
    any_word = re.compile(rf"(?<!\w)(?:{'|'.join(map(re.escape, names))})(?!\w)".encode(), re.ASCII)
    for other in project.modules:
        if other is not module:
            data = other.raw()
            # The substring test first: far quicker than the pattern, and most files hold no name.
            if data is None or (any(name in data for name in encoded) and any_word.search(data)):
                return True
    return False


def points_into(finding: Finding, module: SourceModule) -> bool:
    """Whether a program finding is in `module`, or its message names a line there ("first use of
    torch randomness: models/net.py:6")."""
    return finding.path == module.display or f"{module.identity.relative_path}:" in finding.message
