from conftest import codes

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
