"""Environment variables: pass and fail for each judged one, and the start-up environment."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest
from probe_helpers import child_env, needs_torch, run_python

from repro_lint.probe.envvars import ENV_VARS, EnvReading, pythonhashseed_effective, read_env, read_exec_environ
from repro_lint.probe.evaluate import Context
from repro_lint.probe.runner import CudaStart

VARS = {v.name: v for v in ENV_VARS}


def verdict(name, value, ctx=None, *, at_exec=None, set_in_process=False, environ=None, after_cuda=None):
    environ = environ if environ is not None else ({} if value is None else {name: value})
    reading = EnvReading(name, value, at_exec, set_in_process, environ, after_cuda)
    return VARS[name].judge(reading, ctx or Context(torch_version=(2, 13)))


# ------------------------------------------------------------------ PYTHONHASHSEED

# The start-up environment is per process, so these run a child.  It hides torch: the
# environment-variable checks need none, and the child starts ten times faster.
ENV_SCRIPT = r"""
import json, os, sys
sys.modules["torch"] = None
if len(sys.argv) > 1:
    os.environ["PYTHONHASHSEED"] = sys.argv[1]   # too late for this interpreter
from repro_lint.probe.cli import probe
probe(["env", "--json"], standalone_mode=False)
"""


def env_report(*args, **env):
    proc = run_python(ENV_SCRIPT, *args, env=child_env(**env))
    doc = json.loads(proc.stdout)
    return {"row": doc["env"]["PYTHONHASHSEED"], "effective": doc["rng"]["pythonhashseed_effective"],
            "ids": [f["id"] for f in doc["findings"] if f["setting"] == "PYTHONHASHSEED"]}


def test_pythonhashseed_fixed_at_start_passes():
    out = env_report(PYTHONHASHSEED="0")
    assert (out["row"]["status"], out["effective"], out["ids"]) == ("pass", "fixed", [])
    assert out["row"]["value_at_exec"] == "0" and out["row"]["set_in_process"] is False


def test_pythonhashseed_set_in_process_is_too_late():
    out = env_report("0")
    assert (out["row"]["status"], out["effective"], out["ids"]) == ("warn", "set_too_late", ["RLP008"])
    assert out["row"]["value"] == "0" and out["row"]["value_at_exec"] is None
    assert out["row"]["set_in_process"] is True


@needs_torch
def test_pythonhashseed_unset_warns(monkeypatch):
    import repro_lint.probe.snapshot as snapshot
    from repro_lint.probe import check

    monkeypatch.delenv("PYTHONHASHSEED", raising=False)
    monkeypatch.setattr(snapshot, "read_exec_environ", dict)
    doc = check().to_json()
    assert (doc["env"]["PYTHONHASHSEED"]["status"], doc["rng"]["pythonhashseed_effective"]) == ("warn", "random")


def test_exec_environment_ignores_later_assignments(monkeypatch):
    monkeypatch.setenv("REPRO_LINT_PROBE_TEST_VAR", "1")
    exec_env = read_exec_environ()
    assert exec_env is not None and "PATH" in exec_env
    assert "REPRO_LINT_PROBE_TEST_VAR" not in exec_env


@pytest.mark.parametrize("value, at_exec, known, expected", [
    ("0", "0", True, "fixed"),
    ("123", "123", True, "fixed"),
    (None, None, True, "random"),
    ("random", "random", True, "random"),
    ("0", None, True, "set_too_late"),
])
def test_pythonhashseed_effective(value, at_exec, known, expected):
    assert pythonhashseed_effective(value, at_exec, known) == expected


# ---------------------------------------------------------- CUBLAS_WORKSPACE_CONFIG


def test_cublas_config_required_before_torch_2_10_when_deterministic():
    old_det = Context(torch_version=(2, 9), values={"deterministic_algorithms": True})
    assert verdict("CUBLAS_WORKSPACE_CONFIG", None, old_det).check == "RLP006"
    assert verdict("CUBLAS_WORKSPACE_CONFIG", ":4096:2", old_det).check == "RLP006"
    assert verdict("CUBLAS_WORKSPACE_CONFIG", ":4096:8", old_det).outcome == "pass"
    assert verdict("CUBLAS_WORKSPACE_CONFIG", ":16:8", old_det).outcome == "pass"
    assert verdict("CUBLAS_WORKSPACE_CONFIG", None, Context(torch_version=(2, 9))).outcome == "pass"


def test_cublas_config_is_information_only_from_torch_2_10():
    new_det = Context(torch_version=(2, 13), values={"deterministic_algorithms": True})
    assert verdict("CUBLAS_WORKSPACE_CONFIG", None, new_det).check == "RLP022"
    assert verdict("CUBLAS_WORKSPACE_CONFIG", ":4096:8", new_det).outcome == "pass"


def test_cublas_config_set_after_cuda_started_warns():
    ctx = Context(torch_version=(2, 13), cuda=True, cuda_initialized=True)
    assert verdict("CUBLAS_WORKSPACE_CONFIG", ":4096:8", ctx, set_in_process=True).check == "RLP021"
    assert verdict("CUBLAS_WORKSPACE_CONFIG", ":4096:8", ctx, at_exec=":4096:8").outcome == "pass"


def test_cublas_config_set_in_the_script_before_cuda_started_passes():
    # `os.environ[...] = ":4096:8"` at the top of the script, as PyTorch's notes show: `probe run`
    # saw CUDA start with the value already there.
    ctx = Context(torch_version=(2, 13), cuda=True, cuda_initialized=True)
    name, value = "CUBLAS_WORKSPACE_CONFIG", ":4096:8"
    before, after, unseen = (
        next(r for r in read_env({name: value}, {}, at_start) if r.name == name)
        for at_start in ({name: value}, {}, None)
    )
    assert (before.set_in_process, before.set_after_cuda_start) == (True, False)
    assert VARS[name].judge(before, ctx).outcome == "pass"
    late = VARS[name].judge(after, ctx)
    assert late.check == "RLP021" and "after CUDA was initialized" in late.why
    assert VARS[name].judge(unseen, ctx).check == "RLP021"  # not seen: it may have been too late


def test_cuda_start_keeps_the_environment_cuda_started_with(monkeypatch):
    started = []
    cuda = SimpleNamespace(is_initialized=lambda: bool(started), _lazy_init=lambda: started.append(True))
    original = cuda._lazy_init
    watch = CudaStart(SimpleNamespace(cuda=cuda))
    monkeypatch.setenv("CUBLAS_WORKSPACE_CONFIG", ":16:8")
    cuda._lazy_init()  # torch's first CUDA call
    monkeypatch.setenv("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
    cuda._lazy_init()  # later calls find CUDA started
    assert started == [True, True]
    assert watch.seen()["CUBLAS_WORKSPACE_CONFIG"] == ":16:8"
    watch.stop()
    assert cuda._lazy_init is original
    # CUDA started before the probe watched: what it started with is unknown.
    assert CudaStart(SimpleNamespace(cuda=cuda)).seen() is None


# ----------------------------------------------------------- libraries and threads


def test_transformer_engine_needs_nvte_zero_when_installed():
    with_te = Context(torch_version=(2, 13), packages={"transformer-engine": "2.1"})
    assert verdict("NVTE_ALLOW_NONDETERMINISTIC_ALGO", None, with_te).check == "RLP012"
    assert verdict("NVTE_ALLOW_NONDETERMINISTIC_ALGO", "1", with_te).check == "RLP012"
    assert verdict("NVTE_ALLOW_NONDETERMINISTIC_ALGO", "0", with_te).outcome == "pass"
    assert verdict("NVTE_ALLOW_NONDETERMINISTIC_ALGO", None).outcome == "na"


def test_nccl_algo_only_matters_for_multi_rank_nccl():
    nccl = Context(distributed={"backend": "nccl", "world_size": 8})
    assert verdict("NCCL_ALGO", None, nccl).check == "RLP013"
    assert verdict("NCCL_ALGO", "Tree", nccl).check == "RLP013"
    assert verdict("NCCL_ALGO", "Ring,Tree", nccl).check == "RLP013"
    assert verdict("NCCL_ALGO", "Ring", nccl).outcome == "pass"
    assert verdict("NCCL_ALGO", None, Context(distributed={"backend": "gloo", "world_size": 8})).outcome == "na"


def test_flash_attention_env_when_used_through_transformers():
    hf = Context(packages={"flash-attn": "2.8", "transformers": "5.0"})
    assert verdict("FLASH_ATTENTION_DETERMINISTIC", None, hf).check == "RLP020"
    assert verdict("FLASH_ATTENTION_DETERMINISTIC", "1", hf).outcome == "pass"
    assert verdict("FLASH_ATTENTION_DETERMINISTIC", None).outcome == "na"


def test_tf32_override():
    assert verdict("TORCH_ALLOW_TF32_CUBLAS_OVERRIDE", "1").check == "RLP009"
    assert verdict("TORCH_ALLOW_TF32_CUBLAS_OVERRIDE", None).outcome == "pass"


def test_threads_pinned_by_either_variable():
    assert verdict("OMP_NUM_THREADS", None, environ={}).check == "RLP011"
    assert verdict("OMP_NUM_THREADS", "4").outcome == "pass"
    assert verdict("OMP_NUM_THREADS", None, environ={"MKL_NUM_THREADS": "4"}).outcome == "pass"
    assert verdict("MKL_CBWR", None).check == "RLP011"
    assert verdict("MKL_CBWR", "COMPATIBLE").outcome == "pass"


def test_unpinned_threads_are_info_in_strict_and_warn_in_portable():
    from repro_lint.probe.checks import CHECKS

    assert CHECKS["RLP011"].severity("strict") == "info"
    assert CHECKS["RLP011"].severity("portable") == "warn"
    assert CHECKS["RLP011"].severity("portable", strict_warnings=True) == "fail"
