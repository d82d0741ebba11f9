"""Fixed code that other linters accept: an added import goes into the import block at its sorted
place and only when nothing binds the name; added statements go after the import block; a call a
fix lengthens past the project's line length is wrapped as Black would wrap it."""

from __future__ import annotations

import textwrap
from pathlib import Path

import libcst as cst
import pycodestyle
import pytest
from click.testing import CliRunner

from repro_lint.api import fix_source, lint_paths
from repro_lint.cli import main
from repro_lint.core.settings import Settings
from repro_lint.engine.config import load_settings
from repro_lint.engine.line_length import project_line_length
from repro_lint.facts.import_block import import_placement
from tests.conftest import assert_fix


def _pycodestyle(code: str, tmp_path: Path, max_line_length: int = 88) -> list[str]:
    """pycodestyle's E402 (import not at top) and E501 (line too long) for `code`."""
    path = tmp_path / "checked.py"
    path.write_text(code, encoding="utf-8")
    found: list[str] = []

    class Report(pycodestyle.StandardReport):
        def error(self, line_number, offset, text, check):  # type: ignore[no-untyped-def]
            found.append(text[:4])
            return super().error(line_number, offset, text, check)

    style = pycodestyle.StyleGuide(select=["E402", "E501"], max_line_length=max_line_length, reporter=Report, quiet=True)
    style.input_file(str(path))
    return found


# --- imports ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("imports", "expected"),
    [
        # Into its section, `import x` lines before `from x import y` lines.
        ("import os\n\nimport numpy as np\nfrom torch.utils.data import random_split\n",
         "import os\n\nimport numpy as np\nimport torch\nfrom torch.utils.data import random_split\n"),
        ("import os\n\nfrom torch.utils.data import random_split\n",
         "import os\n\nimport torch\nfrom torch.utils.data import random_split\n"),
        # Module names compare without case.
        ("import numpy\nimport PIL\nimport Zarr\nfrom torch.utils.data import random_split\n",
         "import numpy\nimport PIL\nimport torch\nimport Zarr\nfrom torch.utils.data import random_split\n"),
    ],
)
def test_an_added_import_goes_to_its_sorted_place(imports, expected):
    code = imports + "\nparts = random_split(ds, [1, 1])\n"
    fixed = fix_source(code, "train.py", Settings(select=("REP203",)))
    assert fixed.startswith(expected + "\nSEED = 0\n")
    compile(fixed, "train.py", "exec")
    assert fix_source(fixed, "train.py", Settings(select=("REP203",))) == fixed


@pytest.mark.parametrize(
    ("imports", "statement", "expected"),
    [
        # A section of its own: after the standard library, before first-party and relative imports.
        ("import os\nimport sys\n", "import torch", "import os\nimport sys\n\nimport torch\n"),
        ("from __future__ import annotations\n\nimport os\n\nfrom . import data\n", "import torch",
         "from __future__ import annotations\n\nimport os\n\nimport torch\n\nfrom . import data\n"),
        ("import numpy as np\n\nfrom train import data\n", "import zlib", "import zlib\n\nimport numpy as np\n\nfrom train import data\n"),
        ("import numpy as np\nimport torch\n\nfrom train import data\n", "import random",
         "import random\n\nimport numpy as np\nimport torch\n\nfrom train import data\n"),
        # After the docstring of a module without imports.
        ('"""Doc."""\n', "import torch", '"""Doc."""\nimport torch\n'),
    ],
)
def test_import_placement_keeps_isort_sections(imports, statement, expected):
    module = cst.parse_module(imports + "x = 1\n")
    placement = import_placement(module, statement, "train")
    assert placement is not None
    code = module.code_for_node(placement.node).lstrip("\n")  # its line, not the blank lines before
    index = imports.index(code)
    at = index if placement.where == "line_before" else imports.index("\n", index + len(code) - 1) + 1
    assert imports[:at] + placement.text + imports[at:] == expected


def test_no_import_when_the_module_already_binds_it_further_down():
    # A notebook imports torch in a later cell: the fix uses that name instead of importing it again.
    code = "from torch.utils.data import random_split\nimport os\npass  # cell\nimport torch\nparts = random_split(ds, [1, 1])\n"
    fixed = fix_source(code, "train.py", Settings(select=("REP203",)))
    assert fixed.count("import torch") == 1 and "torch.Generator()" in fixed


def test_statements_go_below_imports_that_follow_an_environment_setting(project, tmp_path):
    code = textwrap.dedent("""\
        import os
        os.environ["OMP_NUM_THREADS"] = "1"
        import sys

        import torch

        model = torch.nn.Linear(2, 2)
        model(torch.ones(2)).sum().backward()
        print(sys.argv)
        """)
    root = project({"train.py": code})
    lint_paths([root], Settings(select=("REP101",)), fix=True, unsafe_fixes=True)
    fixed = (root / "train.py").read_text(encoding="utf-8")
    assert fixed == code.replace("import torch\n", "import torch\n\nSEED = 0\ntorch.manual_seed(SEED)\n")
    assert _pycodestyle(fixed, tmp_path) == _pycodestyle(code, tmp_path)


def test_statements_right_after_the_imports_follow_a_blank_line(project):
    code = "import torch\nfrom torch import nn\nmodel = nn.Linear(2, 2).cuda()\nmodel(torch.ones(2).cuda()).sum().backward()\n"
    root = project({"train.py": code}, pyproject='[project]\nname = "demo"\ndependencies = ["torch>=2.10"]\n')
    lint_paths([root], Settings(select=("REP302",)), fix=True, unsafe_fixes=True)
    fixed = (root / "train.py").read_text(encoding="utf-8")
    assert "from torch import nn\n\ntorch.use_deterministic_algorithms(True)\n" in fixed


def test_cublas_setting_splits_a_sorted_block_into_two_sorted_blocks(project):
    # Before torch is imported, as the catalog requires; each part followed by a blank line.
    root = project({"train.py": """\
        import argparse
        import os
        import torch

        if __name__ == "__main__":
            torch.manual_seed(0)
            torch.use_deterministic_algorithms(True)
            torch.nn.Linear(2, 2).cuda()(torch.ones(2).cuda()).sum().backward()
        """})
    lint_paths([root], Settings(select=("REP304",), target_torch_version="2.1"), fix=True, unsafe_fixes=True)
    fixed = (root / "train.py").read_text(encoding="utf-8")
    assert fixed.startswith('import argparse\nimport os\n\nos.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")\nimport torch\n')


# --- line length -----------------------------------------------------------------------------------


def test_a_call_that_fits_on_an_indented_line_is_split_there():
    assert_fix(
        "import torch\ndef make(ds, seed):\n    return torch.utils.data.DataLoader(ds, batch_size=64, shuffle=True)\n",
        "import torch\ndef make(ds, seed):\n    return torch.utils.data.DataLoader(\n"
        "        ds, batch_size=64, shuffle=True, generator=torch.Generator().manual_seed(seed)\n    )\n",
        "REP202",
    )


def test_a_call_that_does_not_fit_gets_one_argument_per_line_and_a_trailing_comma(tmp_path):
    code = (
        "import torch\nSEED = 1\nloader = torch.utils.data.DataLoader(dataset, batch_size=64, shuffle=True, "
        "num_workers=4, pin_memory=True)\n"
    )
    expected = (
        "import torch\nSEED = 1\nloader = torch.utils.data.DataLoader(\n    dataset,\n    batch_size=64,\n    shuffle=True,\n"
        "    num_workers=4,\n    pin_memory=True,\n    generator=torch.Generator().manual_seed(SEED),\n)\n"
    )
    assert_fix(code, expected, "REP202")
    assert _pycodestyle(expected, tmp_path) == []


def test_a_hanging_call_is_rewrapped_and_a_call_with_comments_is_left_alone():
    hanging = (
        "import torch\nSEED = 1\nloader = torch.utils.data.DataLoader(dataset, batch_size=64,\n"
        "                                     shuffle=True, num_workers=4)\n"
    )
    fixed = fix_source(hanging, "train.py", Settings(select=("REP202",)))
    assert max(len(line) for line in fixed.splitlines()) <= 88 and "    generator=torch.Generator().manual_seed(SEED),\n)" in fixed
    commented = "import torch\nSEED = 1\nloader = torch.utils.data.DataLoader(dataset, batch_size=64,  # big\n    shuffle=True, num_workers=4)\n"
    fixed = fix_source(commented, "train.py", Settings(select=("REP202",)))
    assert "# big\n" in fixed and "num_workers=4, generator=" in fixed


def test_a_line_that_still_fits_is_not_wrapped():
    code = "import torch\nfrom torch.utils.data import DataLoader\nSEED = 1\nl = DataLoader(dataset, shuffle=True)\n"
    fixed = fix_source(code, "train.py", Settings(select=("REP202",)))
    assert fixed.endswith("l = DataLoader(dataset, shuffle=True, generator=torch.Generator().manual_seed(SEED))\n")
    code = "import torch\nSEED = 1\nloader = torch.utils.data.DataLoader(dataset, batch_size=64, shuffle=True, num_workers=4)\n"
    fixed = fix_source(code, "train.py", Settings(select=("REP202",), line_length=140))
    assert fixed.count("\n") == code.count("\n")


@pytest.mark.parametrize(
    ("name", "text", "expected"),
    [
        ("pyproject.toml", "[tool.ruff]\nline-length = 100\n", 100),
        ("pyproject.toml", "[tool.black]\nline-length = 79\n", 79),
        ("pyproject.toml", "[tool.ruff]\nline-length = 110\n[tool.black]\nline-length = 79\n", 110),
        ("ruff.toml", "line-length = 99\n", 99),
        ("setup.cfg", "[flake8]\nmax-line-length = 120\n", 120),
        ("tox.ini", "[flake8]\nmax_line_length = 101\n", 101),
        (".flake8", "[flake8]\nmax-line-length = 95\n", 95),
        ("pyproject.toml", "[tool.isort]\nprofile = 'black'\n", 88),
        ("setup.cfg", "[flake8\nbroken", 88),
    ],
)
def test_line_length_comes_from_the_projects_config(tmp_path, name, text, expected):
    (tmp_path / name).write_text(text, encoding="utf-8")
    (tmp_path / "pkg").mkdir()
    assert project_line_length(tmp_path / "pkg") == expected
    assert load_settings(None, tmp_path / "pkg").line_length == expected


def test_the_cli_wraps_at_the_configured_length(tmp_path, monkeypatch):
    (tmp_path / "pyproject.toml").write_text("[tool.ruff]\nline-length = 60\n", encoding="utf-8")
    (tmp_path / "train.py").write_text("import torch\nSEED = 1\nloader = torch.utils.data.DataLoader(ds, shuffle=True)\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["check", "--no-cache", "--fix", "--select", "REP202", "train.py"])
    assert result.exit_code == 0, result.output
    fixed = (tmp_path / "train.py").read_text(encoding="utf-8")
    assert max(len(line) for line in fixed.splitlines()) <= 60 and "generator=torch.Generator().manual_seed(SEED),\n)" in fixed


DEEP_CHECKPOINT = """\
import torch


def main(resume):
    model = torch.nn.Linear(2, 2).cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    if resume:
        if True:
            checkpoint = torch.load(resume)
            model.load_state_dict(checkpoint["model"])
            optimizer.load_state_dict(checkpoint["optimizer"])
    for epoch in range(3):
        model(torch.randn(2, device="cuda")).sum().backward()
        optimizer.step()
        if epoch:
            if True:
                torch.save(
                    {
                        "model": model.state_dict(),
                        "optimizer": optimizer.state_dict()
                    },
                    "ckpt.pt",
                )


if __name__ == "__main__":
    torch.manual_seed(0)
    main(None)
"""


def test_lines_a_fix_inserts_are_wrapped_to_the_line_length(project, tmp_path):
    # REP402's unsafe fix inserts the RNG states into the saved dict and a restore block on the load
    # path; at this depth both are longer than 88 characters unwrapped.
    root = project({"train.py": DEEP_CHECKPOINT})
    settings = Settings(select=("REP402",))
    lint_paths([root], settings, fix=True, unsafe_fixes=True)
    fixed = (root / "train.py").read_text(encoding="utf-8")
    assert "torch.cuda.set_rng_state_all(\n" in fixed
    assert '"rng_state": {\n' in fixed
    compile(fixed, "train.py", "exec")
    assert _pycodestyle(fixed, tmp_path) == []
    assert lint_paths([root], settings).findings == []
    lint_paths([root], settings, fix=True, unsafe_fixes=True)
    assert (root / "train.py").read_text(encoding="utf-8") == fixed
