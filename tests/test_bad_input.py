"""Every class of bad input, through the command line: the expected exit code (0/1 for findings, 2
for an error) and message, never a traceback, and no input file modified, by `check` or by
`check --fix --unsafe-fixes` (except where a row says what the fix writes)."""

from __future__ import annotations

import os
import re
import resource
import signal
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

REPOSITORY = Path(__file__).resolve().parent.parent
CUDNN = b"import torch\ntorch.backends.cudnn.benchmark = True\n"  # REP301
CUDNN_FIXED = b"import torch\ntorch.backends.cudnn.benchmark = False\n"
CLEAN = "All checks passed!"
LINTED = r"deep\.py|All checks passed!"  # a finding or message naming the file, or a clean run


def _chain(operator: str, terms: int) -> bytes:
    return f"total = {f' {operator} '.join(f'value{index}' for index in range(terms))}\n".encode()


def _elif_chain(branches: int) -> bytes:
    lines = ["def pick(value):", "    if value == 0:", "        return 0"]
    for index in range(1, branches):
        lines += [f"    elif value == {index}:", f"        return {index}"]
    return ("\n".join(lines) + "\n").encode()


def _billion_laughs(levels: int) -> bytes:
    lines = ['a0: &a0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    for level in range(1, levels + 1):
        lines.append(f"a{level}: &a{level} [{', '.join([f'*a{level - 1}'] * 10)}]")
    lines += ["model:", "  attn_implementation: flash_attention_2", f"  settings: *a{levels}"]
    return ("\n".join(lines) + "\n").encode()


@dataclass(frozen=True)
class Row:
    files: dict[str, bytes]
    exit_codes: tuple[int, ...]
    message: str  # a pattern searched in stdout + stderr
    args: tuple[str, ...] = (".",)
    links: dict[str, str] = field(default_factory=dict)  # symlink -> its target
    fixed: dict[str, bytes] = field(default_factory=dict)  # what `--fix --unsafe-fixes` writes; others stay as they are
    timeout: int = 60
    memory_limit: int | None = None  # bytes of address space


GIGABYTE = 1 << 30

ROWS = {
    "syntax-error": Row({"train.py": b"def train(:\n    pass\n"}, (1,), "REP001"),
    "binary-named-py": Row({"model.py": bytes(range(256)) * 4}, (1,), "REP001"),
    "nul-bytes": Row({"train.py": b"import torch\x00\nx = 1\n"}, (1,), "REP001"),
    "not-utf8-no-cookie": Row({"train.py": CUDNN + b"name = 'caf\xe9'\n"}, (1,), "REP001.*not valid UTF-8"),
    "not-utf8-latin1-cookie": Row(
        {"train.py": b"# -*- coding: latin-1 -*-\n# caf\xe9\n" + CUDNN},
        (1,),
        "REP301",
        fixed={"train.py": b"# -*- coding: latin-1 -*-\n# caf\xe9\nimport torch\ntorch.backends.cudnn.benchmark = False\n"},
    ),
    "bad-coding-cookie": Row({"train.py": b"# -*- coding: no-such-codec -*-\nx = 1\n"}, (1,), "REP001"),
    "bom": Row(
        {"train.py": b"\xef\xbb\xbf" + CUDNN},
        (1,),
        "REP301",
        fixed={"train.py": b"\xef\xbb\xbfimport torch\ntorch.backends.cudnn.benchmark = False\n"},
    ),
    "crlf-kept-by-fixes": Row(
        {"train.py": b"from torch.utils.data import random_split\r\n\r\ntrain, val = random_split(ds, [0.9, 0.1])\r\n"},
        (1,),
        "REP203",
        fixed={
            "train.py": b"import torch\r\nfrom torch.utils.data import random_split\r\n\r\nSEED = 0\r\n\r\n"
            b"train, val = random_split(ds, [0.9, 0.1], generator=torch.Generator().manual_seed(SEED))\r\n"
        },
    ),
    "form-feed": Row(
        {"train.py": b"import torch\n\x0ctorch.backends.cudnn.benchmark = True\n"},
        (1,),
        "REP301",
        fixed={"train.py": b"import torch\n\x0ctorch.backends.cudnn.benchmark = False\n"},
    ),
    "form-feed-opening-a-block": Row(
        {"train.py": b"import torch\n\n\ndef main():\n\x0c    model = 1\n    torch.backends.cudnn.benchmark = True\n"},
        (1,),
        "train.py:6:5: REP301",
        fixed={"train.py": b"import torch\n\n\ndef main():\n\x0c    model = 1\n    torch.backends.cudnn.benchmark = False\n"},
    ),
    "empty-file": Row({"train.py": b""}, (0,), CLEAN),
    "100k-lines": Row({"big.py": b"".join(b"value%d = %d\n" % (index, index) for index in range(100_000))}, (0, 1), r"big\.py|All checks passed!", timeout=300),
    "500-term-plus-chain": Row({"deep.py": _chain("+", 500)}, (0, 1), LINTED),
    "500-branch-elif-chain": Row({"deep.py": _elif_chain(500)}, (0, 1), LINTED),
    "10000-term-plus-chain": Row({"deep.py": _chain("+", 10_000)}, (0, 1, 2), LINTED),
    "symlink-loop-in-folder": Row(
        {"train.py": CUDNN},
        (1,),
        "REP301",
        links={"loop.py": "loop.py", "first": "second", "second": "first", "here": "."},
        fixed={"train.py": CUDNN_FIXED},
    ),
    "symlink-loop-given": Row({}, (1, 2), r"loop\.py", args=("loop.py",), links={"loop.py": "loop.py"}),
    "missing-path": Row({"train.py": CUDNN}, (2,), r"missing\.py", args=("missing.py",)),
    "ignored-by-gitignore-given": Row(
        {".gitignore": b"ignored.py\n", "ignored.py": CUDNN}, (1,), "REP301", args=("ignored.py",), fixed={"ignored.py": CUDNN_FIXED}
    ),
    "excluded-by-config-given": Row(
        {"pyproject.toml": b'[tool.repro-lint]\nextend-exclude = ["excluded.py"]\n', "excluded.py": CUDNN},
        (1,),
        "REP301",
        args=("excluded.py",),
        fixed={"excluded.py": CUDNN_FIXED},
    ),
    "broken-pyproject": Row({"pyproject.toml": b"[tool.repro-lint]\nselect = [\n", "train.py": CUDNN}, (2,), r"pyproject\.toml"),
    "broken-pyproject-header": Row({"pyproject.toml": b"[tool.repro-lint\nselect = []\n", "train.py": CUDNN}, (2,), r"pyproject\.toml"),
    "pyproject-not-utf8": Row({"pyproject.toml": b'# caf\xe9\n[tool.repro-lint]\nselect = ["REP203"]\n', "train.py": CUDNN}, (2,), r"pyproject\.toml"),
    "broken-notebook-json": Row({"train.ipynb": b'{"cells": [{"cell_type": "code", "source": ['}, (1,), "REP001"),
    "yaml-alias-bomb": Row({"config.yaml": _billion_laughs(9)}, (0, 1), r"config\.yaml", memory_limit=2 * GIGABYTE),
    "yaml-recursive-alias": Row({"config.yaml": b"a: &a [*a]\nattn_implementation: flash_attention_2\n"}, (0, 1), r"config\.yaml", memory_limit=2 * GIGABYTE),
    "binary-yaml": Row({"config.yaml": bytes(range(256)) * 4}, (1,), r"config\.yaml"),
}


def _limits(memory: int | None):
    def apply() -> None:
        os.setsid()  # its own process group: a timeout ends the workers it started too
        if memory is not None:
            resource.setrlimit(resource.RLIMIT_AS, (memory, memory))

    return apply


def _check(root: Path, row: Row, *options: str) -> subprocess.CompletedProcess[str]:
    environment = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPOSITORY), os.environ.get("PYTHONPATH", "")])}
    command = [sys.executable, "-m", "repro_lint", "check", "--no-cache", *options, *row.args]
    with subprocess.Popen(
        command, cwd=root, env=environment, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, errors="replace", preexec_fn=_limits(row.memory_limit)
    ) as process:
        try:
            stdout, stderr = process.communicate(timeout=row.timeout)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            stdout, stderr = process.communicate()
            timed_out = True
        else:
            timed_out = False
    if timed_out:
        pytest.fail(f"`{' '.join(command[2:])}` did not finish within {row.timeout} s; its output:\n{(stdout + stderr)[-3000:]}")
    return subprocess.CompletedProcess(command, process.returncode, stdout, stderr)


def _files(root: Path) -> dict[str, bytes]:
    """Every file under `root` with its bytes, and every symlink (not followed) with its target."""
    found = {}
    for folder, folders, names in os.walk(root):
        for name in names + [name for name in folders if Path(folder, name).is_symlink()]:
            path = Path(folder, name)
            found[path.relative_to(root).as_posix()] = b"-> " + os.fsencode(os.readlink(path)) if path.is_symlink() else path.read_bytes()
    return found


def _assert_clean_run(run: subprocess.CompletedProcess[str], row: Row) -> None:
    output = run.stdout + run.stderr
    assert "Traceback" not in output, output[-3000:]
    assert run.returncode in row.exit_codes, f"exit {run.returncode}, expected {row.exit_codes}:\n{output[-3000:]}"
    assert re.search(row.message, output), f"{row.message!r} not in:\n{output[-3000:]}"


@pytest.mark.parametrize("row", ROWS.values(), ids=ROWS.keys())
def test_bad_input(tmp_path, row):
    for name, data in row.files.items():
        (tmp_path / name).write_bytes(data)
    for name, target in row.links.items():
        (tmp_path / name).symlink_to(target)
    before = _files(tmp_path)

    _assert_clean_run(_check(tmp_path, row), row)
    assert _files(tmp_path) == before, "check modified its input"

    fixing = _check(tmp_path, row, "--fix", "--unsafe-fixes")
    output = fixing.stdout + fixing.stderr
    assert "Traceback" not in output, output[-3000:]
    assert fixing.returncode in ((*row.exit_codes, 0) if row.fixed else row.exit_codes), output[-3000:]
    assert _files(tmp_path) == {**before, **row.fixed}, "--fix wrote other than the expected files"

