"""`repro-lint check --add-noqa`: a `# noqa: CODE` comment for every finding, so a repository can
adopt repro-lint and fail only on new problems."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

from repro_lint.cli import main

TRAIN = textwrap.dedent(
    '''\
    """Train
    a model."""
    import torch
    import torch.backends.cudnn as cudnn
    from torch.utils.data import random_split

    cudnn.benchmark = True  # speed
    torch.backends.cudnn.benchmark = True  # noqa: E501
    note = f"""{random_split(data, [9, 1])}
    """
    total = random_split(data, [9, 1]) + \\
        []


    def main():
        train, val = random_split(ds, [0.9, 0.1])  # noqa:REP203
        loss.backward()

    if __name__ == "__main__":
        main()
    '''
)

TRAIN_SILENCED = textwrap.dedent(
    '''\
    """Train
    a model."""
    import torch
    import torch.backends.cudnn as cudnn
    from torch.utils.data import random_split

    cudnn.benchmark = True  # speed  # noqa: REP301
    torch.backends.cudnn.benchmark = True  # noqa: E501, REP301
    note = f"""{random_split(data, [9, 1])}
    """  # noqa: REP203
    total = random_split(data, [9, 1]) + \\
        []  # noqa: REP203


    def main():
        train, val = random_split(ds, [0.9, 0.1])  # noqa:REP203
        loss.backward()

    if __name__ == "__main__":  # noqa: REP101
        main()
    '''
)


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'demo'\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def check(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, ["check", "--no-cache", *args])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result.exit_code, result.stdout, result.stderr


def test_adds_merges_and_moves_comments_where_they_work(repo):
    path = repo / "train.py"
    path.write_text(TRAIN, encoding="utf-8")
    assert check("train.py")[0] == 1
    # Beside another comment, merged into another tool's `noqa`, after a multi-line string and a
    # continuation (where a comment can go), at the main guard for the program-level REP101.
    assert check("--add-noqa", "train.py") == (0, "All checks passed!\n", "Added 5 noqa directives.\n")
    assert path.read_text(encoding="utf-8") == TRAIN_SILENCED
    assert check("--add-noqa", "train.py") == (0, "All checks passed!\n", "Added 0 noqa directives.\n")
    assert path.read_text(encoding="utf-8") == TRAIN_SILENCED
    # Every comment it wrote is used: the unused-noqa rule has nothing to say.
    assert check("--extend-select", "REP002", "train.py")[:2] == (0, "All checks passed!\n")


def test_launch_scripts_and_yaml_take_the_comment_too(repo):
    script = repo / "run.sh"
    script.write_text("torchrun train.py \\\n  --use-flash-attn \\\n  --lr 1\n", encoding="utf-8")
    config = repo / "conf.yaml"
    config.write_text("model:\n  attn_implementation: flash_attention_2  # chosen for speed\n", encoding="utf-8")
    assert check("--add-noqa", ".") == (0, "All checks passed!\n", "Added 2 noqa directives.\n")
    # A command split over lines takes its comment after its last line.
    assert script.read_text(encoding="utf-8") == "torchrun train.py \\\n  --use-flash-attn \\\n  --lr 1  # noqa: REP305\n"
    assert config.read_text(encoding="utf-8") == "model:\n  attn_implementation: flash_attention_2  # chosen for speed  # noqa: REP305\n"
    assert check("--add-noqa", ".")[2] == "Added 0 noqa directives.\n"


def test_a_file_without_comments_keeps_its_findings_and_says_so(repo):
    config = repo / "config.json"
    original = '{"attn_implementation": "flash_attention_2"}\n'
    config.write_text(original, encoding="utf-8")
    status, out, err = check("--add-noqa", "config.json")
    assert status == 1 and err == "Added 0 noqa directives.\n"
    assert out.startswith("config.json:1:2: REP305 ") and out.endswith("\nFound 1 finding.\n")
    assert config.read_text(encoding="utf-8") == original


def test_notebooks_get_the_comment_in_the_cell_and_never_on_a_magic(repo):
    cells = [
        {"cell_type": "markdown", "metadata": {}, "source": ["# Train"]},
        {"cell_type": "code", "execution_count": 1, "metadata": {}, "outputs": [{"output_type": "stream", "name": "stdout", "text": ["ok\n"]}],
         "source": ["%matplotlib inline\n", "import torch\n", "x = torch.rand(3)\n", "loss.backward()"]},
    ]  # fmt: skip
    document = {"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    path = repo / "nb.ipynb"
    path.write_text(json.dumps(document, indent=1) + "\n", encoding="utf-8")
    assert check("--add-noqa", "nb.ipynb") == (0, "All checks passed!\n", "Added 1 noqa directive.\n")
    # REP101 is reported at line 1 of the first code cell, a magic: the comment goes on the next line.
    cells[1]["source"][1] = "import torch  # noqa: REP101\n"
    assert path.read_text(encoding="utf-8") == json.dumps(document, indent=1) + "\n"


def test_not_with_fix_or_diff(repo):
    (repo / "train.py").write_text(TRAIN, encoding="utf-8")
    status, _, err = check("--add-noqa", "--fix", "train.py")
    assert status == 2 and "--add-noqa cannot be combined with --fix or --diff" in err
    assert (repo / "train.py").read_text(encoding="utf-8") == TRAIN
