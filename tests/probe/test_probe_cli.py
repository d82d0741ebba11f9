"""The probe commands: JSON shape, exit codes, `probe run` and `probe verify` on toy scripts."""

from __future__ import annotations

import json
import textwrap

import pytest
from probe_helpers import (  # noqa: F401 (fixtures)
    JUDGED_ENV,
    cli_fixture,
    cpu_machine_fixture,
    needs_torch,
    torch_fixture,
    validate,
)

from repro_lint.probe import check
from repro_lint.probe.report import format_table, write_json_atomic

pytestmark = needs_torch

# Settings flipped inside a helper, where a static linter cannot follow them, and flipped
# back after training, so the first-step and at-exit snapshots disagree.
HELPER_SCRIPT = """
import sys
import torch

def make_reproducible():
    torch.manual_seed(0)
    torch.use_deterministic_algorithms(True)
    torch.backends.cudnn.benchmark = True   # fails on a GPU; visible as latent on CPU

def train(steps):
    make_reproducible()
    model = torch.nn.Linear(4, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = torch.randn(16, 4), torch.randn(16, 1)
    for _ in range(steps):
        opt.zero_grad()
        torch.nn.functional.mse_loss(model(x), y).backward()
        opt.step()
    torch.use_deterministic_algorithms(False)
    print("argv", sys.argv[1:])

if __name__ == "__main__":
    train(int(sys.argv[1]))
"""

# Seeded and deterministic: two runs must agree bitwise.
REPRODUCIBLE_SCRIPT = """
import torch
torch.manual_seed(0)
torch.use_deterministic_algorithms(True)
model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Dropout(0.5), torch.nn.Linear(16, 1))
opt = torch.optim.Adam(model.parameters(), lr=0.01)
for step in range(10):
    x = torch.randn(32, 8)
    opt.zero_grad()
    loss = model(x).pow(2).mean()
    loss.backward()
    opt.step()
"""

# Seeded, except for one draw from an unseeded generator in step 3.
DIVERGES_AT_3_SCRIPT = """
import random
import torch

torch.manual_seed(0)
model = torch.nn.Linear(4, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(32, 4), torch.randn(32, 1)
for step in range(1, 7):
    noise = random.Random().random() if step == 3 else 0.0
    opt.zero_grad()
    loss = torch.nn.functional.mse_loss(model(x) + noise, y)
    loss.backward()
    opt.step()
"""


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return str(path)


# ------------------------------------------------------------------------ JSON shape


def test_in_process_report_matches_the_schema(torch):
    from torch.utils.data import DataLoader

    doc = check(selftest=True, loader=DataLoader(list(range(4)))).to_json()
    validate(doc)
    assert doc["mode"] == "in-process" and doc["settings"]["deterministic_algorithms"]["read_via"]
    assert doc["exit_code"] == {"pass": 0, "warn": 0, "fail": 1}[doc["status"]]


def test_schema_rejects_a_broken_report(torch):
    jsonschema = pytest.importorskip("jsonschema")
    doc = check().to_json()
    del doc["settings"]["deterministic_algorithms"]["status"]
    with pytest.raises(jsonschema.ValidationError):
        validate(doc)


def test_plain_probe_is_the_environment_report(cli):
    result = cli("--json")
    doc = json.loads(result.stdout)
    validate(doc)
    assert doc["mode"] == "env" and doc["settings"] is None and doc["rng"] is None
    assert "run time" in doc["notes"][0]
    assert result.exit_code == doc["exit_code"]


def test_env_human_output_is_a_table(cli):
    result = cli("env")
    header = next(line for line in result.stdout.splitlines() if line.startswith("ENVIRONMENT VARIABLE"))
    assert header.split() == ["ENVIRONMENT", "VARIABLE", "VALUE", "EXPECTED", "STATUS"]
    assert "PYTHONHASHSEED" in result.stdout and "status:" in result.stdout


def test_table_cells_are_cut_to_fit_but_never_the_setting_name():
    # The longest setting names, as a CUDA machine shows them, with the longest values.
    key = "cuda.matmul.allow_fp16_reduced_precision_reduction_split_k"
    row = [key, "FLASH_ATTENTION, EFFICIENT_ATTENTION, MATH", "False unless strict deterministic mode", "FAIL"]
    lines = format_table(["SETTING", "VALUE", "EXPECTED", "STATUS"], [row], ["why " * 40]).splitlines()
    assert max(len(line) for line in lines) <= 100
    assert lines[1].split()[0] == key and lines[1].endswith("FAIL") and "..." in lines[1]
    assert " ".join(lines[2:]).split() == ["why"] * 40


def cpu_only(torch):
    if torch.cuda.is_available():
        pytest.skip("the CPU-only report needs a machine without CUDA")


@pytest.mark.parametrize("args", [("run", "{script}", "1"), ("env", "--selftest", "cpu")])
def test_cpu_report_fits_100_columns(cli, torch, tmp_path, args):
    cpu_only(torch)
    script = write(tmp_path, "train.py", HELPER_SCRIPT)
    result = cli(*(arg.format(script=script) for arg in args))
    lines = result.stdout.splitlines()
    assert "FINDINGS" in lines  # the whole report, not an error line
    assert [line for line in lines if len(line) > 100] == []


def test_cpu_report_says_what_applies_here_and_folds_the_cuda_only_rows(cli, torch, tmp_path):
    cpu_only(torch)
    script = write(tmp_path, "train.py", HELPER_SCRIPT)
    out = tmp_path / "run.json"
    report = cli("run", "--json", str(out), script, "1").stdout
    doc = json.loads(out.read_text())
    # Why the CUDA rows do not apply, and why `check` (REP302) can stay silent where the probe fails.
    assert "scope: CPU only, no CUDA device." in report
    assert "REP302" in report and "only in programs that run on CUDA" in " ".join(report.split())
    cuda_only = [key for key, row in doc["settings"].items() if row["cuda_only"] and row["status"] == "na"]
    assert "cudnn.benchmark" in cuda_only
    table = [line.split()[0] for line in report.splitlines() if line and not line.startswith((" ", "N/A:"))]
    assert not set(cuda_only) & set(table)  # none has a row of its own
    folded = " ".join(" ".join(line.split()) for line in report.splitlines() if line.startswith(("N/A:", "    ")))
    assert f"N/A: {len(cuda_only)} CUDA-only settings, not judged without a CUDA device" in folded
    # The one a GPU run would fail is named in the folded line (HELPER_SCRIPT turns benchmark on).
    assert doc["settings"]["cudnn.benchmark"]["latent"] == "fail" and "cudnn.benchmark" in folded


# ------------------------------------------------------------------------ exit codes


def start_environment(monkeypatch, **env):
    """Pretend this process was started with exactly ``env`` among the judged variables."""
    import repro_lint.probe.snapshot as snapshot

    for name in JUDGED_ENV:
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setattr(snapshot, "read_exec_environ", lambda: dict(env))


def test_strict_promotes_warnings_to_failures(cli, monkeypatch):
    start_environment(monkeypatch)
    assert cli().exit_code == 0  # PYTHONHASHSEED unset is only a warning
    result = cli("--strict")
    assert result.exit_code == 1
    assert "FAIL RLP008 PYTHONHASHSEED" in result.stdout
    start_environment(monkeypatch, PYTHONHASHSEED="0", OMP_NUM_THREADS="2", MKL_CBWR="COMPATIBLE")
    assert cli("--strict").exit_code == 0


def test_portable_profile_needs_pinned_threads(cli, monkeypatch):
    start_environment(monkeypatch, PYTHONHASHSEED="0")
    result = cli("--profile", "portable", "--json")
    doc = json.loads(result.stdout)
    assert doc["env"]["OMP_NUM_THREADS"]["status"] == "warn"
    assert cli("--profile", "portable", "--strict").exit_code == 1
    start_environment(monkeypatch, PYTHONHASHSEED="0", OMP_NUM_THREADS="2", MKL_CBWR="COMPATIBLE")
    assert cli("--profile", "portable", "--strict").exit_code == 0


def test_usage_errors_exit_2(cli):
    assert cli("--json", "env").exit_code == 2
    assert cli("env", "--no-such-option").exit_code == 2
    assert cli("verify", "--steps", "0", "x.py").exit_code == 2


def test_internal_error_exits_2_with_a_report_request(cli, monkeypatch):
    import repro_lint.probe.cli as probe_cli

    def broken(**kwargs):
        raise KeyError("bug")

    monkeypatch.setattr(probe_cli, "take_snapshot", broken)
    result = cli("env")
    assert result.exit_code == 2
    assert "internal error" in result.stderr and "KeyError" in result.stderr


def test_json_file_is_written_atomically(tmp_path):
    target = tmp_path / "report.json"
    write_json_atomic(target, {"a": 1})
    with pytest.raises(TypeError):
        write_json_atomic(target, {"a": object()})
    assert json.loads(target.read_text()) == {"a": 1}
    assert [p.name for p in tmp_path.iterdir()] == ["report.json"]


# ------------------------------------------------------------------------ probe run


def test_run_snapshots_settings_flipped_inside_a_helper(cli, torch, cpu_machine, tmp_path):
    script = write(tmp_path, "train.py", HELPER_SCRIPT)
    out = tmp_path / "run.json"
    result = cli("run", "--json", str(out), "--", script, "3")
    assert "argv ['3']" in result.stdout  # the script ran, with its arguments
    doc = json.loads(out.read_text())
    validate(doc)
    assert doc["mode"] == "wrapper"
    assert doc["script"] == {"path": script, "args": ["3"], "exit_code": 0, "snapshot_at": "first-step"}
    rows = doc["settings"]
    assert rows["deterministic_algorithms"]["status"] == "pass"
    assert (rows["cudnn.benchmark"]["value"], rows["cudnn.benchmark"]["latent"]) == (True, "fail")
    assert doc["rng"]["torch_initial_seed"] == 0
    assert doc["status"] == "warn" and result.exit_code == 0
    assert "SETTING" in result.stdout and "deterministic_algorithms" in result.stdout


def test_run_at_exit_sees_the_setting_flipped_back(cli, torch, tmp_path):
    script = write(tmp_path, "train.py", HELPER_SCRIPT)
    out = tmp_path / "run.json"
    result = cli("run", "--at", "exit", "--json", str(out), script, "2")
    doc = json.loads(out.read_text())
    assert doc["script"]["snapshot_at"] == "exit"
    assert doc["settings"]["deterministic_algorithms"]["status"] == "fail"
    assert result.exit_code == 1


def test_run_strict_fails_on_the_latent_cuda_failure(cli, torch, tmp_path):
    script = write(tmp_path, "train.py", HELPER_SCRIPT)
    assert cli("run", "--strict", script, "1").exit_code == 1


def test_run_without_an_optimizer_step_snapshots_at_exit(cli, torch, tmp_path):
    script = write(tmp_path, "train.py", HELPER_SCRIPT)
    out = tmp_path / "run.json"
    cli("run", "--json", str(out), script, "0")
    doc = json.loads(out.read_text())
    assert doc["script"]["snapshot_at"] == "exit"
    assert any("no optimizer step" in n for n in doc["notes"])


def test_run_of_a_crashing_script_exits_2(cli, torch, tmp_path):
    script = write(tmp_path, "crash.py", "raise RuntimeError('boom')\n")
    out = tmp_path / "run.json"
    result = cli("run", "--json", str(out), script)
    assert result.exit_code == 2
    doc = json.loads(out.read_text())
    assert doc["script"]["exit_code"] == 1 and doc["exit_code"] == 2
    assert "RuntimeError: boom" in result.stderr


# ------------------------------------------------------------------------ probe verify


def test_verify_reproducible_script_agrees(cli, tmp_path):
    script = write(tmp_path, "good.py", REPRODUCIBLE_SCRIPT)
    out = tmp_path / "verify.json"
    result = cli("verify", "--steps", "3", "--json", str(out), "--", script)
    assert result.exit_code == 0, result.output
    doc = json.loads(out.read_text())
    validate(doc)
    v = doc["verify"]
    assert v["agree"] is True and v["first_divergence"] is None and v["steps_compared"] == 3
    assert all(r["stopped_after_steps"] for r in v["runs"])
    assert v["runs"][0]["steps"] == v["runs"][1]["steps"]
    assert all(s["loss_sha256"] and s["optimizer"] == "Adam" for s in v["runs"][0]["steps"])
    assert "AGREE" in result.stdout


def test_verify_reports_the_step_where_runs_diverge(cli, tmp_path):
    script = write(tmp_path, "bad.py", DIVERGES_AT_3_SCRIPT)
    out = tmp_path / "verify.json"
    result = cli("verify", "--steps", "4", "--json", str(out), "--", script)
    assert result.exit_code == 1, result.output
    doc = json.loads(out.read_text())
    validate(doc)
    assert doc["status"] == "fail"
    assert doc["verify"]["first_divergence"] == {"step": 3, "params_differ": True, "loss_differs": True,
                                                 "missing_step": False}
    assert [f["id"] for f in doc["findings"]] == ["RLP023"]
    assert "DIVERGE at optimizer step 3" in result.stdout


def test_verify_without_optimizer_steps_cannot_evaluate(cli, tmp_path):
    script = write(tmp_path, "idle.py", "print('no training here')\n")
    out = tmp_path / "verify.json"
    result = cli("verify", "--json", str(out), script)
    assert result.exit_code == 3
    assert "no optimizer step" in result.stdout
    doc = json.loads(out.read_text())
    validate(doc)
    assert doc["status"] == "error" and len(doc["verify"]["runs"]) == 1  # a second run cannot help


def test_verify_of_a_crashing_script_exits_2_and_shows_its_output(cli, tmp_path):
    script = write(tmp_path, "crash.py", "raise SystemExit('bad config')\n")
    out = tmp_path / "verify.json"
    result = cli("verify", "--json", str(out), script)
    assert result.exit_code == 2
    assert "bad config" in result.stdout
    assert json.loads(out.read_text())["verify"]["runs"][0]["exit_code"] == 1
