from pathlib import Path

import pytest
from conftest import codes

from repro_lint.api import fix_source, lint_paths, lint_source
from repro_lint.core.settings import Settings

LINE = "import torch\ntorch.backends.cudnn.benchmark = True{comment}\n"


def test_bare_noqa_suppresses_everything_on_the_line():
    assert codes(LINE.format(comment="  # noqa")) == []


def test_noqa_with_code_or_prefix():
    assert codes(LINE.format(comment="  # noqa: REP301")) == []
    assert codes(LINE.format(comment="  # noqa:REP3")) == []
    assert codes(LINE.format(comment="  # noqa: REP203, REP301 explained here")) == []


def test_noqa_for_other_codes_does_not_suppress():
    assert codes(LINE.format(comment="  # noqa: REP203")) == ["REP301"]
    assert codes(LINE.format(comment="  # noqa: E501")) == ["REP301"]


def test_noqa_inside_a_string_does_not_count():
    assert codes('import torch\ntorch.backends.cudnn.benchmark = True; x = "# noqa"\n') == ["REP301"]


def test_multiline_finding_suppressed_on_its_first_line():
    code = "from torch.utils.data import random_split\nparts = random_split(  # noqa: REP203\n    ds,\n    [9, 1],\n)\n"
    assert codes(code) == []
    code_last_line = "from torch.utils.data import random_split\nparts = random_split(\n    ds,\n    [9, 1],\n)  # noqa: REP203\n"
    assert codes(code_last_line) == ["REP203"]


def test_file_level_directive():
    body = "import torch\ntorch.backends.cudnn.benchmark = True\ntorch.use_deterministic_algorithms(True, warn_only=True)\n"
    assert codes("# repro-lint: noqa\n" + body) == []
    assert codes("# repro-lint: noqa: REP301\n" + body) == ["REP303"]
    # Only a comment on a line of its own counts as a file-level directive.
    assert codes("x = 1  # repro-lint: noqa\n" + body) == ["REP301", "REP303"]


def test_noqa_after_a_multiline_string_or_continuation_counts_for_its_first_line():
    # Where `--add-noqa` puts it, as Ruff does: the first line cannot end in a comment.
    inside_string = 'import torch\ntorch.backends.cudnn.benchmark = f"""{1}\n"""  # noqa: REP301\n'
    assert codes(inside_string) == []
    continued = "import torch\ntorch.backends.cudnn.benchmark = \\\n    True  # noqa: REP301\n"
    assert codes(continued) == []
    # Inside brackets every line can take a comment: only the first one counts.
    bracketed = "import torch\ntorch.backends.cudnn.benchmark = (\n    True\n)  # noqa: REP301\n"
    assert codes(bracketed) == ["REP301"]


def test_words_after_the_codes_are_not_codes():
    assert codes(LINE.format(comment="  # noqa: REP203 because REP301")) == ["REP301"]


# --- REP002 unused-noqa ---------------------------------------------------------------------------------

UNUSED = Settings(extend_select=("REP002",))
PROGRAM = "import torch\n{line}\nloss.backward()\n"


def unused(line: str, settings: Settings = UNUSED) -> list[tuple[int, int, str]]:
    found = lint_source(PROGRAM.format(line=line), "train.py", settings)
    return [(finding.start.line, finding.start.column, finding.message) for finding in found if finding.code == "REP002"]


def test_unused_noqa_is_off_by_default():
    assert codes(PROGRAM.format(line="x = 1  # noqa: REP301")) == []


def test_unused_codes_are_reported_and_used_ones_are_not():
    assert unused("torch.backends.cudnn.benchmark = True  # noqa: REP301") == []
    assert unused("x = 1  # noqa: REP301") == [(2, 7, "`# noqa` lists REP301, which is not reported on this line")]
    assert unused("torch.backends.cudnn.benchmark = True  # noqa: REP301, REP203") == [
        (2, 39, "`# noqa` lists REP203, which is not reported on this line")
    ]
    assert unused("x = 1  # noqa: REP301,REP203") == [
        (2, 7, "`# noqa` lists REP301, REP203, which are not reported on this line")
    ]
    # A prefix that suppressed a finding is used.
    assert unused("torch.backends.cudnn.benchmark = True  # noqa: REP30") == []


def test_only_codes_that_ran_are_judged():
    # Other tools' codes, codes of rules that are off (REP306 is opt-in), unknown codes, and a prefix
    # naming a rule that is off: repro-lint cannot know they are unused.
    assert unused("x = 1  # noqa: E501, F401") == []
    assert unused("x = 1  # noqa: REP306") == []
    assert unused("x = 1  # noqa: REP3") == []
    assert unused("x = 1  # noqa: REP999") == []
    assert unused("x = 1  # noqa: REP301", Settings(extend_select=("REP002",), ignore=("REP301",))) == []
    per_file = Settings(extend_select=("REP002",), per_file_ignores=(("train.py", ("REP301",)),))
    assert unused("x = 1  # noqa: REP301", per_file) == []
    # With REP306 on, its comment is judged like any other.
    assert unused("x = 1  # noqa: REP306", Settings(extend_select=("REP002", "REP306"))) != []


def test_bare_noqa_is_judged_on_every_code():
    assert unused("torch.backends.cudnn.benchmark = True  # noqa") == []
    assert unused("x = 1  # noqa") == [
        (2, 7, "`# noqa` suppresses nothing on this line")
    ]


def test_unused_noqa_can_be_silenced_itself():
    assert unused("x = 1  # noqa: REP301, REP002") == []
    assert unused("x = 1  # noqa: REP301", Settings(extend_select=("REP002",), per_file_ignores=(("*.py", ("REP002",)),))) == []
    assert lint_source("# repro-lint: noqa: REP002\n" + PROGRAM.format(line="x = 1  # noqa: REP301"), "train.py", UNUSED) == []


@pytest.mark.parametrize(
    ("line", "fixed", "unsafe"),
    [
        ("torch.backends.cudnn.benchmark = True  # noqa: REP203, REP301, E501", "torch.backends.cudnn.benchmark = True  # noqa: REP301, E501", False),
        ("x = 1  # noqa: REP301", "x = 1", False),
        ("x = 1  # noqa: REP301 -- flaky on A100", "x = 1  # flaky on A100", False),
        ("x = 1  # type: ignore  # noqa: REP301", "x = 1  # type: ignore", False),
        ("x = 1  # noqa", "x = 1", True),
    ],
)
def test_the_fix_removes_unused_codes_and_keeps_other_comment_text(line, fixed, unsafe):
    source, expected = PROGRAM.format(line=line), PROGRAM.format(line=fixed)
    assert fix_source(source, "train.py", UNUSED, unsafe=unsafe) == expected
    assert fix_source(expected, "train.py", UNUSED, unsafe=unsafe) == expected
    assert unused(fixed) == []
    if unsafe:
        # A bare `noqa` may be another linter's: only `--unsafe-fixes` removes it.
        assert fix_source(source, "train.py", UNUSED) == source


def test_an_unused_noqa_on_its_own_line_goes_with_its_line():
    source = "import torch\n# noqa: REP301\nx = 1\nloss.backward()\n"
    assert fix_source(source, "train.py", UNUSED) == "import torch\nx = 1\nloss.backward()\n"


def test_unused_noqa_in_launch_scripts_and_configs(tmp_path):
    (tmp_path / "pyproject.toml").write_text("", encoding="utf-8")
    (tmp_path / "run.sh").write_text("torchrun train.py --lr 1  # noqa: REP305\ntorchrun train.py --use-flash-attn  # noqa: REP305\n")
    (tmp_path / "conf.yaml").write_text("lr: 1  # noqa: REP305\nattn_implementation: flash_attention_2  # noqa: REP305\n")
    found = lint_paths([tmp_path], UNUSED).findings
    assert [(Path(finding.path).name, finding.code, finding.start.line, finding.start.column) for finding in found] == [
        ("conf.yaml", "REP002", 1, 7),
        ("run.sh", "REP002", 1, 26),
    ]
