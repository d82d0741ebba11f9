"""Jupyter notebooks: code cells linted as one program, positions reported per cell, fixes written
back into the cells with everything else in the file unchanged."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
from click.testing import CliRunner

from repro_lint.cli import main
from repro_lint.program.model import ProjectModel
from repro_lint.sources.notebook import NotebookError, identity, read
from repro_lint.sources.notebook import parses as notebook_parses

SCHEMA = json.loads((Path(__file__).resolve().parent / "sarif-schema-2.1.0.json").read_text(encoding="utf-8"))
OUTPUTS = [{"name": "stdout", "output_type": "stream", "text": ["epoch 0\n", "loss 0.5\n"]}]
METADATA = {
    "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
    "language_info": {"name": "python", "version": "3.12.0"},
}


def markdown(*lines: str) -> dict:
    return {"cell_type": "markdown", "metadata": {}, "source": list(lines)}


def code(*lines: str, outputs: list | None = None, count: int | None = None) -> dict:
    return {"cell_type": "code", "execution_count": count, "metadata": {"tags": []}, "outputs": outputs or [], "source": list(lines)}


def notebook(*cells: dict, metadata: dict | None = None) -> dict:
    return {"cells": list(cells), "metadata": METADATA if metadata is None else metadata, "nbformat": 4, "nbformat_minor": 5}


def jupyter_text(document: dict) -> str:
    """How Jupyter writes a notebook (nbformat's writer)."""
    return json.dumps(document, indent=1, sort_keys=True, ensure_ascii=False) + "\n"


TRAINING = notebook(
    markdown("# Training ü\n", "Seeded below."),
    code("%matplotlib inline\n", "import torch\n", "from torch.utils.data import random_split\n", "!pip install tqdm\n", "files = !ls data\n", count=1),
    markdown("## Data"),
    code(
        "torch.backends.cudnn.benchmark = True  # speed\n",
        "template = '''\n",
        "%not a magic: inside a string\n",
        "'''\n",
        "train, val = random_split(ds, [0.9, 0.1])\n",
        "model?\n",
        "loss.backward()",
        outputs=OUTPUTS,
        count=2,
    ),
    code("%%bash\n", "echo torch.backends.cudnn.benchmark = True\n"),
)


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'demo'\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def check(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["check", "--no-cache", *args])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result.exit_code, result.stdout


def write(path: Path, document: dict) -> str:
    text = jupyter_text(document)
    path.write_text(text, encoding="utf-8")
    return text


# --- findings and positions ---------------------------------------------------------------------------


def test_findings_name_the_cell_and_the_line_within_it(repo):
    write(repo / "train.ipynb", TRAINING)
    status, out = check("train.ipynb")
    assert status == 1
    # Cells are counted among all cells, markdown included; magics and `!` lines shift nothing.
    assert out.splitlines()[:3] == [
        # The first draw is in this notebook: named by its cell and line there.
        "train.ipynb:cell 2:1:1: REP101 this program never seeds torch; first draw: "
        "cell 4, line 5 (torch.utils.data.random_split)",
        "train.ipynb:cell 4:1:1: REP301 `cudnn.benchmark` is enabled: cuDNN picks kernels by timing them, "
        "so runs can differ",
        "train.ipynb:cell 4:5:14: REP203 `random_split` without `generator` draws from torch's global RNG: "
        "earlier draws change the split",
    ]
    assert out.splitlines()[3].startswith("Found 3 findings")


def test_json_has_the_cell_and_cell_relative_lines(repo):
    write(repo / "train.ipynb", TRAINING)
    (repo / "script.py").write_text("import torch\ntorch.backends.cudnn.benchmark = True\n", encoding="utf-8")
    _, out = check("--output-format", "json", ".")
    found = {(item["path"], item["code"]): item for item in json.loads(out)}
    split = found["train.ipynb", "REP203"]
    assert (split["cell"], split["line"], split["column"], split["end_line"]) == (4, 5, 14, 5)
    # The generator, and the seed constant after the imports of the first code cell (cell 2, line 4).
    assert [(edit["line"], edit["column"]) for edit in split["fix"]["edits"]] == [(5, 41), (4, 1)]
    # The program fix inserts after the imports of the first code cell: its edit counts that cell's lines.
    seed = found["train.ipynb", "REP101"]
    assert (seed["cell"], seed["line"]) == (2, 1)
    assert [(edit["line"], edit["column"]) for edit in seed["fix"]["edits"]] == [(4, 1)]
    assert found["script.py", "REP301"]["cell"] is None


def test_sarif_and_github_name_the_cell(repo):
    write(repo / "train.ipynb", TRAINING)
    _, out = check("--output-format", "sarif", "train.ipynb")
    log = json.loads(out)
    jsonschema.Draft4Validator(SCHEMA).validate(log)
    split = next(result for result in log["runs"][0]["results"] if result["ruleId"] == "REP203")
    assert split["message"]["text"].startswith("cell 4, line 5, column 14: `random_split` without `generator`")
    assert split["properties"] == {"cell": 4, "line": 5, "column": 14, "end_line": 5, "end_column": 42}
    # Cell lines are no lines of the .ipynb file: no replacements a viewer would apply to its JSON.
    assert split["locations"][0]["physicalLocation"]["region"] == {"startLine": 1}
    assert "fixes" not in split
    _, out = check("--output-format", "github", "train.ipynb")
    assert "::error file=train.ipynb,title=REP203 random-split-missing-generator::cell 4, line 5, column 14: " in out
    assert "line=" not in out


def test_ipython_syntax_is_skipped_but_look_alikes_are_python(repo):
    document = notebook(
        code(
            "import torch\n",
            "%time x = torch.rand(3)\n",
            "for name in ['a']:\n",
            "    !echo $name\n",
            "ok = (1\n",
            "      != 2)\n",
            "torch.nn.Linear?\n",
            "??torch.nn\n",
            "text = '''\n",
            "!not a command\n",
            "'''\n",
            "torch.backends.cudnn.benchmark = True\n",
            "loss.backward()\n",
        )
    )
    write(repo / "nb.ipynb", document)
    _, out = check("--select", "REP301,REP001", "nb.ipynb")
    assert out.splitlines()[0].startswith("nb.ipynb:cell 1:12:1: REP301")
    assert "REP001" not in out


def test_a_shell_command_continued_by_backslashes_is_skipped_whole(repo):
    document = notebook(
        code("!pip install -q -U \\\n", "    transformers \\\n", "    accelerate\n"),
        code("import torch\n", "torch.backends.cudnn.benchmark = True\n", "loss.backward()\n"),
    )
    path = repo / "nb.ipynb"
    text = write(path, document)
    _, out = check("--select", "REP301,REP001", "nb.ipynb")
    assert out.splitlines()[0].startswith("nb.ipynb:cell 2:2:1: REP301"), out
    assert "REP001" not in out
    cells = read(text)
    assert cells.cell_sources(cells.code) == ["!pip install -q -U \\\n    transformers \\\n    accelerate\n", "import torch\ntorch.backends.cudnn.benchmark = True\nloss.backward()\n"]
    assert cells.updated(cells.code) == text


def test_cells_of_other_languages_and_other_kernels_are_not_read(repo):
    bash = code("%%bash\n", "python -c 'import torch; torch.backends.cudnn.benchmark = True'\n", "if then fi (\n")
    write(repo / "bash.ipynb", notebook(bash, code("x = 1\n")))
    assert check("bash.ipynb") == (0, "All checks passed!\n")
    r_kernel = {"kernelspec": {"language": "R", "name": "ir"}, "language_info": {"name": "R"}}
    write(repo / "r.ipynb", notebook(code("library(torch)\n", "x <- 1 +\n"), metadata=r_kernel))
    assert check("r.ipynb") == (0, "All checks passed!\n")


def test_folders_are_walked_for_notebooks_but_not_their_checkpoints(repo):
    (repo / "nbs" / ".ipynb_checkpoints").mkdir(parents=True)
    write(repo / "nbs" / "a.ipynb", TRAINING)
    write(repo / "nbs" / ".ipynb_checkpoints" / "a-checkpoint.ipynb", TRAINING)
    _, out = check("--select", "REP301", ".")
    assert out.splitlines() == [
        "nbs/a.ipynb:cell 4:1:1: REP301 `cudnn.benchmark` is enabled: cuDNN picks kernels by timing them, "
        "so runs can differ",
        "Found 1 finding (1 more with --fix --unsafe-fixes).",
    ]


# --- fixes ---------------------------------------------------------------------------------------------


def fixed_training() -> dict:
    """TRAINING as the fixes should leave it: only two code cells' sources differ. The split's
    generator uses the seed constant it adds; the split then no longer draws from torch's global RNG,
    which nothing else in the notebook does, so no global seed is needed."""
    document = json.loads(json.dumps(TRAINING))
    document["cells"][1]["source"][3:3] = ["\n", "SEED = 0\n"]
    data = document["cells"][3]["source"]
    data[0] = "torch.backends.cudnn.benchmark = False  # speed\n"
    data[4] = "train, val = random_split(ds, [0.9, 0.1], generator=torch.Generator().manual_seed(SEED))\n"
    return document


def test_fix_writes_into_the_cells_and_leaves_the_rest_byte_for_byte(repo):
    path = repo / "train.ipynb"
    write(path, TRAINING)
    assert check("--fix", "--unsafe-fixes", "train.ipynb") == (0, "Found 2 findings (2 fixed, 0 remaining).\n")
    # Markdown, outputs, metadata, magics, the other cells and Jupyter's layout are unchanged.
    assert path.read_text(encoding="utf-8") == jupyter_text(fixed_training())
    # A second run changes nothing and finds nothing.
    assert check("--fix", "--unsafe-fixes", "train.ipynb") == (0, "All checks passed!\n")
    assert path.read_text(encoding="utf-8") == jupyter_text(fixed_training())


def test_fix_keeps_an_unusual_layout_and_string_sources(repo):
    document = notebook(code("import torch\n", "torch.backends.cudnn.benchmark = True  # noqa: E501\n", "loss.backward()"))
    document["cells"][0]["source"] = "".join(document["cells"][0]["source"])  # one string, as some tools write
    original = json.dumps(document, indent=4, ensure_ascii=True)  # no trailing newline, 4 spaces
    path = repo / "nb.ipynb"
    path.write_text(original, encoding="utf-8")
    assert check("--fix", "--unsafe-fixes", "--select", "REP301", "nb.ipynb")[0] == 0
    expected = original.replace("benchmark = True", "benchmark = False")
    assert path.read_text(encoding="utf-8") == expected


def test_diff_shows_cells_and_changes_nothing(repo):
    path = repo / "train.ipynb"
    before = write(path, TRAINING)
    status, out = check("--diff", "--select", "REP203", "train.ipynb")
    assert status == 1
    assert out == (
        "--- a/train.ipynb:cell 2\n+++ b/train.ipynb:cell 2\n@@ -1,5 +1,7 @@\n"
        " %matplotlib inline\n import torch\n from torch.utils.data import random_split\n+\n+SEED = 0\n"
        " !pip install tqdm\n files = !ls data\n"
        "--- a/train.ipynb:cell 4\n+++ b/train.ipynb:cell 4\n@@ -2,6 +2,6 @@\n"
        " template = '''\n %not a magic: inside a string\n '''\n"
        "-train, val = random_split(ds, [0.9, 0.1])\n"
        "+train, val = random_split(ds, [0.9, 0.1], generator=torch.Generator().manual_seed(SEED))\n"
        " model?\n loss.backward()\n\\ No newline at end of file\n"
    )
    assert path.read_text(encoding="utf-8") == before


def test_program_fix_goes_after_a_cell_magic_and_never_into_magic_lines(repo):
    document = notebook(
        markdown("Train"),
        code("%%time\n", "!nvidia-smi\n", "import torch\n", "x = torch.rand(3)\n", "loss.backward()"),
    )
    path = repo / "nb.ipynb"
    write(path, document)
    assert check("--fix", "--unsafe-fixes", "--select", "REP101", "nb.ipynb")[0] == 0
    cell = json.loads(path.read_text(encoding="utf-8"))["cells"][1]["source"]
    assert cell[:2] == ["%%time\n", "!nvidia-smi\n"]
    assert "torch.manual_seed(SEED)\n" in cell and cell[-2:] == ["x = torch.rand(3)\n", "loss.backward()"]
    assert check("--select", "REP101", "nb.ipynb") == (0, "All checks passed!\n")


# --- suppression and configuration ----------------------------------------------------------------------


def test_noqa_in_a_cell(repo):
    document = notebook(
        markdown("x"),
        code("import torch\n", "torch.manual_seed(0)\n"),
        code("torch.backends.cudnn.benchmark = True  # noqa: REP301\n", "torch.backends.cudnn.benchmark = True\n", "loss.backward()\n"),
    )
    write(repo / "nb.ipynb", document)
    _, out = check("--select", "REP301", "nb.ipynb")
    assert [line.split(": ")[0] for line in out.splitlines()[:-1]] == ["nb.ipynb:cell 3:2:1"]


def test_unused_noqa_in_a_cell_is_reported_there_and_fixed_in_place(repo):
    document = notebook(markdown("x"), code("import torch  # noqa: REP301, E402\n", "torch.manual_seed(0)\n"))
    path = repo / "nb.ipynb"
    write(path, document)
    _, out = check("--extend-select", "REP002", "nb.ipynb")
    assert out.splitlines()[0] == "nb.ipynb:cell 2:1:15: REP002 `# noqa` lists REP301, which is not reported on this line"
    assert check("--fix", "--extend-select", "REP002", "nb.ipynb")[0] == 0
    document["cells"][1]["source"][0] = "import torch  # noqa: E402\n"
    assert path.read_text(encoding="utf-8") == jupyter_text(document)


def test_per_file_ignores_apply_to_notebooks(repo):
    (repo / "pyproject.toml").write_text('[tool.repro-lint.per-file-ignores]\n"*.ipynb" = ["REP3"]\n', encoding="utf-8")
    write(repo / "nb.ipynb", TRAINING)
    (repo / "train.py").write_text("import torch\ntorch.backends.cudnn.benchmark = True\n", encoding="utf-8")
    _, out = check("--select", "REP301,REP203", ".")
    assert [line.split(" ")[:2] for line in out.splitlines()[:-1]] == [
        ["nb.ipynb:cell", "4:5:14:"],
        ["train.py:2:1:", "REP301"],
    ]


# --- programs ---------------------------------------------------------------------------------------------


def test_a_notebook_seeded_through_a_helper_module_of_its_project(repo):
    (repo / "helpers.py").write_text(
        "import random\n\nimport numpy as np\nimport torch\n\n\ndef seed_all(seed):\n"
        "    random.seed(seed)\n    np.random.seed(seed)\n    torch.manual_seed(seed)\n",
        encoding="utf-8",
    )
    body = code("x = torch.rand(3)\n", "loss.backward()\n")
    write(repo / "seeded.ipynb", notebook(markdown("t"), code("import torch\n", "from helpers import seed_all\n", "seed_all(0)\n"), body))
    write(repo / "unseeded.ipynb", notebook(markdown("t"), code("import torch\n", "import helpers\n"), body))
    _, out = check("--select", "REP101", ".")
    assert out.splitlines() == [
        "unseeded.ipynb:cell 2:1:1: REP101 this program never seeds torch; first draw: cell 3, line 1 (torch.rand)",
        "Found 1 finding (1 more with --fix --unsafe-fixes).",
    ]


def test_a_notebook_is_a_module_no_import_can_name():
    assert identity("notebooks/v1.2 train.ipynb").name == "notebooks.v1-2 train-ipynb"
    assert identity("train.ipynb").name == "train-ipynb"


# --- broken notebooks --------------------------------------------------------------------------------------


def test_invalid_json_is_a_syntax_error_finding_and_nothing_is_written(repo):
    path = repo / "broken.ipynb"
    path.write_text('{\n "cells": [\n  {"cell_type": "code" "source": []}\n ]\n}\n', encoding="utf-8")
    (repo / "train.py").write_text("import torch\ntorch.backends.cudnn.benchmark = True\n", encoding="utf-8")
    before = path.read_text(encoding="utf-8")
    status, out = check("--fix", "--unsafe-fixes", "--select", "REP001,REP301", ".")
    assert status == 1
    assert out.splitlines() == [
        # A whole sentence: the decoder's message names no place, so the message adds it.
        "broken.ipynb:3:24: REP001 cannot read the notebook: invalid JSON (expecting ',' delimiter at line 3, column 24)",
        "Found 2 findings (1 fixed, 1 remaining).",
    ]
    assert path.read_text(encoding="utf-8") == before


def test_a_cell_that_does_not_parse_is_named_and_nothing_is_written(repo):
    document = notebook(
        markdown("m"),
        code("import torch\n", "torch.backends.cudnn.benchmark = True\n"),
        code("def broken(:\n", "    pass\n"),
    )
    path = repo / "nb.ipynb"
    before = write(path, document)
    status, out = check("--fix", "--unsafe-fixes", "nb.ipynb")
    assert status == 1
    assert out.splitlines()[0] == "nb.ipynb:cell 3:1:12: REP001 cannot parse cell 3: invalid syntax"
    assert path.read_text(encoding="utf-8") == before


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('["a list"]', "not a Jupyter notebook: no `cells` list (nbformat 4 is read)"),
        ('{"cells": [{"cell_type": "code", "source": 3}]}', "cell 1: `source` must be a string or a list of strings"),
        ('{"cells": ["text"]}', "cell 1 is not a JSON object"),
        ('{"cells": [], "metadata": ' + "[" * 100_000 + "]" * 100_000 + "}", "cannot read the notebook: its JSON is nested too deeply"),
    ],
)
def test_json_that_is_not_a_notebook(text, message):
    with pytest.raises(NotebookError, match=message.replace("(", r"\(").replace(")", r"\)")):
        read(text)


# --- the joined module ----------------------------------------------------------------------------------


def test_cells_round_trip_through_the_joined_module():
    document = notebook(markdown("m"), code("%%time\n", "import torch\n", "!ls\n", "x = 1"), code("y = 2\n"), code())
    cells = read(jupyter_text(document))
    assert cells.cell_sources(cells.code) == ["%%time\nimport torch\n!ls\nx = 1", "y = 2\n", ""]
    assert cells.updated(cells.code) == jupyter_text(document)
    # Code a fix inserts above a `%%time` line runs after it: the cell magic stays the first line.
    assert cells.cell_sources("SEED = 0\n" + cells.code)[0] == "%%time\nSEED = 0\nimport torch\n!ls\nx = 1"


def test_a_fix_that_touches_a_magic_or_a_cell_boundary_is_refused():
    cells = read(jupyter_text(notebook(code("import torch\n", "!ls\n"), code("x = 1\n"))))
    lines = cells.code.splitlines(keepends=True)
    assert notebook_parses(cells.code)
    assert not notebook_parses("".join(line for line in lines if "magic" not in line))
    assert not notebook_parses("".join(line for line in lines if "cell 2" not in line))
    assert not notebook_parses("".join(line for line in lines if "end:" not in line))
    assert not notebook_parses(cells.code.replace("pass  #", "pass  # x"))


def test_lines_moved_in_a_notebook_where_the_pass_reports_run_it_again(repo, monkeypatch):
    """Lines count within cells there: the pass's findings are not moved along, the pass runs."""
    write(repo / "train.ipynb", TRAINING)
    assert CliRunner().invoke(main, ["check", "train.ipynb"]).exit_code == 1  # the record
    first = TRAINING["cells"][1]
    write(repo / "train.ipynb", notebook(TRAINING["cells"][0], code("# A note.\n", *first["source"], count=1), *TRAINING["cells"][2:]))
    _, expected = check("train.ipynb")
    built = []
    real = ProjectModel.__init__
    monkeypatch.setattr(ProjectModel, "__init__", lambda self, *args, **kwargs: built.append(1) or real(self, *args, **kwargs))
    assert CliRunner().invoke(main, ["check", "train.ipynb"]).stdout == expected
    assert built
