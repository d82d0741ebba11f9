"""Without torch: a clear message and exit code 3, never a traceback; import stays torch-free."""

from __future__ import annotations

import json

import pytest
from probe_helpers import run_python, validate

# sys.modules["torch"] = None makes `import torch` fail as if it were not installed.
HIDDEN = "import sys; sys.modules['torch'] = None; from repro_lint.probe.cli import probe; probe(sys.argv[1:])"


@pytest.mark.parametrize("args", [[], ["env"], ["env", "--selftest", "cpu"], ["run", "--", "train.py"],
                                  ["verify", "--", "train.py"]])
def test_missing_torch_is_a_clear_message_and_exit_3(tmp_path, args):
    (tmp_path / "train.py").write_text("import torch\n")
    proc = run_python(HIDDEN, *args, cwd=tmp_path)
    assert proc.returncode == 3, proc.stdout + proc.stderr
    assert "torch is not installed" in proc.stderr
    assert "`pip install torch`" in proc.stderr
    assert "Traceback" not in proc.stdout + proc.stderr


def test_missing_torch_json_still_reports_the_environment():
    proc = run_python(HIDDEN, "env", "--json")
    assert proc.returncode == 3
    doc = json.loads(proc.stdout)
    validate(doc)
    assert (doc["status"], doc["exit_code"]) == ("error", 3)
    assert doc["environment"]["torch"] is None
    assert "PYTHONHASHSEED" in doc["env"]
    assert len(doc["rng"]["python_random_state_sha256"]) == 64


def test_missing_torch_run_still_writes_its_json_file(tmp_path):
    (tmp_path / "train.py").write_text("import torch\n")
    proc = run_python(HIDDEN, "run", "--json", "out.json", "--", "train.py", cwd=tmp_path)
    assert proc.returncode == 3 and proc.stdout == ""
    doc = json.loads((tmp_path / "out.json").read_text())
    validate(doc)
    assert (doc["mode"], doc["status"]) == ("wrapper", "error")


def test_missing_torch_api_raises_an_import_error():
    code = ("import sys; sys.modules['torch'] = None\n"
            "from repro_lint.probe import check, TorchUnavailable\n"
            "try:\n    check()\n"
            "except ImportError as exc:\n    print(type(exc).__name__, isinstance(exc, TorchUnavailable))\n")
    proc = run_python(code)
    assert proc.stdout.split() == ["TorchUnavailable", "True"], proc.stderr


def test_importing_the_probe_cli_does_not_import_torch():
    code = ("import sys\nimport repro_lint.probe, repro_lint.probe.cli\n"
            "print('torch' in sys.modules)\n")
    proc = run_python(code)
    assert proc.stdout.strip() == "False", proc.stderr
