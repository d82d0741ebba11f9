from __future__ import annotations

import os
import stat

import pycodestyle
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from repro_lint.analysis.python import parses
from repro_lint.api import fix_source, lint_source
from repro_lint.core.findings import Applicability, Edit, Fix
from repro_lint.core.settings import Settings
from repro_lint.core.source import Position
from repro_lint.engine.discovery import discover
from repro_lint.engine.engine import Engine
from repro_lint.engine.fixes import apply_fixes, write_atomically
from repro_lint.engine.modules import group_projects


def _fix(start: tuple[int, int], end: tuple[int, int], content: str) -> Fix:
    return Fix(Applicability.SAFE, "t", (Edit(Position(*start), Position(*end), content),))


def test_overlapping_fixes_wait_for_the_next_round():
    text = "a = 1\n"
    new, applied = apply_fixes(text, [_fix((1, 4), (1, 5), "2"), _fix((1, 0), (1, 5), "b = 3")], parses)
    assert (new, applied) == ("b = 3\n", [_fix((1, 0), (1, 5), "b = 3")])


def _one_by_one(text: str, fixes: list[Fix]) -> tuple[str, list[Fix]]:
    """What `apply_fixes` chooses and makes, written the plain way: each fix's spans against every
    span taken before, then each applied to the text, last first."""
    def spans(fix: Fix) -> list[tuple[int, int, str]]:
        return sorted((edit.start.column, edit.end.column, edit.content) for edit in fix.edits)

    taken: list[tuple[int, int, str]] = []
    chosen = []
    for fix in sorted(fixes, key=lambda fix: (spans(fix)[0][:2], fix.message)):
        if any(start < other_end and other_start < end or start == other_start
               for start, end, _ in spans(fix) for other_start, other_end, _ in taken):
            continue
        chosen.append(fix)
        taken += spans(fix)
    for start, end, content in sorted(taken, reverse=True):
        text = text[:start] + content + text[end:]
    return text, chosen


# A fix of one or two edits on a line of 12 characters; its own edits do not overlap.
_EDIT = st.tuples(st.integers(0, 12), st.integers(0, 3), st.sampled_from(["", "x", "yz"]))
_FIXES = st.lists(
    st.lists(_EDIT, min_size=1, max_size=2).filter(
        lambda edits: len(edits) == 1 or min(edits)[0] + min(edits)[1] <= max(edits)[0]
    ),
    max_size=12,
)


@settings(max_examples=300)
@given(_FIXES)
def test_the_fixes_chosen_and_the_text_made_are_those_of_checking_each_against_all(edits):
    text = "abcdefghijkl\n"
    fixes = [
        Fix(Applicability.SAFE, f"t{number}", tuple(
            Edit(Position(1, start), Position(1, min(start + length, 12)), content) for start, length, content in fix
        ))
        for number, fix in enumerate(edits)
    ]
    assert apply_fixes(text, fixes, lambda _: True) == _one_by_one(text, fixes)


def test_fix_breaking_the_syntax_is_rejected_and_others_kept():
    text = "a = 1\nb = 2\n"
    new, applied = apply_fixes(text, [_fix((1, 4), (1, 5), "("), _fix((2, 4), (2, 5), "3")], parses)
    assert (new, applied) == ("a = 1\nb = 3\n", [_fix((2, 4), (2, 5), "3")])


def test_nested_fixes_reach_a_fixed_point():
    code = (
        "from sklearn.model_selection import train_test_split\n"
        "a = train_test_split(train_test_split(x)[0])\n"
    )
    fixed = fix_source(code, settings=Settings(select=("REP204",)))
    # Both use one seed constant, added once.
    assert fixed.count("random_state=SEED") == 2 and fixed.count("SEED = 0") == 1
    assert lint_source(fixed, settings=Settings(select=("REP204",))) == []


def test_fixed_text_is_checked_by_cpythons_parser_first(monkeypatch):
    """LibCST parses only what CPython refuses (syntax newer than this Python, which it may read):
    its tree of a large fixed file stayed in a fix round's memory."""
    import repro_lint.analysis.python as python

    def refused(text):
        raise AssertionError("LibCST parsed a text CPython reads")

    with monkeypatch.context() as patched:
        patched.setattr(python, "parse", refused)
        assert parses("import torch\ntorch.manual_seed(0)\n")
    assert not parses("torch.manual_seed(0\n")
    assert not parses("x = 1\0\n")
    assert not parses("x = " + "(" * 300 + ")" * 300 + "\n")  # too many nested parentheses for CPython



def test_code_the_compiler_refuses_past_its_parser_is_analysed_and_fixed():
    """The check before LibCST is CPython's parser and symbol table. What the symbol table alone
    refuses (a duplicate argument, `nonlocal` at module level) is syntax LibCST reads: the file is
    analysed, and a fixed text of it still parses."""
    code = "import torch\ndef f(a, a):\n    pass\nnonlocal x\ntorch.backends.cudnn.benchmark = True\n"
    only = Settings(select=("REP301",))
    assert [finding.code for finding in lint_source(code, settings=only)] == ["REP301"]
    fixed = fix_source(code, settings=only, unsafe=True)
    assert fixed == code.replace("True", "False") and parses(fixed)
    assert fix_source(fixed, settings=only, unsafe=True) == fixed
    assert lint_source(fixed, settings=only) == []

def test_fix_rounds_leave_the_programs_of_the_last_round(project):
    """Each round judges the programs again; the engine keeps the last round's, not every round's."""
    root = project({"train.py": "import torch\ntorch.backends.cudnn.benchmark = True\nif __name__ == '__main__':\n    torch.nn.Linear(2, 2)(torch.ones(2)).sum().backward()\n"})
    settings = Settings()
    engine = Engine(settings)
    _, fixed = engine.fix(group_projects(discover([root], settings), [root], settings), unsafe=True)
    assert fixed > 1
    assert [program.path for program in engine.programs] == [str(root / "train.py")]


def test_crlf_line_endings_survive_a_fix():
    code = "import torch\r\ntorch.backends.cudnn.benchmark = True\r\nx = 1\r\n"
    fixed = fix_source(code, settings=Settings(select=("REP301",)), unsafe=True)
    assert fixed == "import torch\r\ntorch.backends.cudnn.benchmark = False\r\nx = 1\r\n"


def test_every_character_survives_the_compressed_text_the_engine_holds():
    # An astral character makes the `str` 4 bytes a character.
    code = "import torch\nnote = '\U0001f600 caf\u00e9'\ntorch.backends.cudnn.benchmark = True\n"
    fixed = fix_source(code, settings=Settings(select=("REP301",)), unsafe=True)
    assert fixed == code.replace("= True", "= False")


def test_inserted_import_uses_the_file_newline():
    code = "from torch.utils.data import random_split\r\nparts = random_split(ds, [1, 1])\r\n"
    fixed = fix_source(code, settings=Settings(select=("REP203",)))
    assert fixed.startswith("import torch\r\nfrom torch.utils.data import random_split\r\n\r\nSEED = 0\r\n")


def test_atomic_write_keeps_mode_and_leaves_no_temporary(tmp_path):
    path = tmp_path / "train.py"
    path.write_text("old\n")
    os.chmod(path, 0o750)
    write_atomically(path, "new\n", "utf-8", "old\n")
    assert path.read_text() == "new\n"
    assert stat.S_IMODE(path.stat().st_mode) == 0o750
    assert [p.name for p in tmp_path.iterdir()] == ["train.py"]


# Lines that start with a form feed, as some older files have; LibCST's code generation leaves the
# form feed out, and a fix on such a line must still edit the right characters.
FORM_FEED_FIXES = [
    ("import torch\n\ftorch.backends.cudnn.benchmark = True\n", "import torch\n\ftorch.backends.cudnn.benchmark = False\n"),
    ("import torch\n \f\ftorch.backends.cudnn.benchmark = True\n", "import torch\n \f\ftorch.backends.cudnn.benchmark = False\n"),
    (
        "import torch\nif x:\n    y = 1\n\f    torch.backends.cudnn.benchmark = True  # fast\n",
        "import torch\nif x:\n    y = 1\n\f    torch.backends.cudnn.benchmark = False  # fast\n",
    ),
]


@pytest.mark.parametrize(("code", "expected"), FORM_FEED_FIXES)
def test_fix_after_a_form_feed_edits_the_right_characters(code, expected):
    settings = Settings(select=("REP301",))
    fixed = fix_source(code, settings=settings, unsafe=True)
    assert fixed == expected
    compile(fixed, "<fixed>", "exec")
    assert fix_source(fixed, settings=settings, unsafe=True) == fixed
    assert lint_source(fixed, settings=settings) == []


def test_finding_after_a_form_feed_has_the_column_pycodestyle_gives():
    # pycodestyle (flake8's E/W checks) counts the form feed as a column: E703 points at the `;`.
    line = "\ftorch.backends.cudnn.benchmark = True;\n"
    seen: list[tuple[int, int]] = []

    class Report(pycodestyle.BaseReport):
        def error(self, line_number, offset, text, check):
            seen.append((line_number, offset))

    style = pycodestyle.StyleGuide(select=["E703"], reporter=Report)
    pycodestyle.Checker(lines=["import torch\n", line], options=style.options).check_all()
    assert seen == [(2, line.index(";"))]
    [finding] = lint_source("import torch\n" + line, settings=Settings(select=("REP301",)))
    assert (finding.start.line, finding.start.column) == (2, line.index("torch"))
    assert finding.end.column == line.index(";")
