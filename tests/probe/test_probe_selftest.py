"""The empirical self-test: the CPU canary fires with determinism off and agrees with it on."""

from __future__ import annotations

import json
import sys

import pytest
from probe_helpers import cli_fixture, cpu_machine_fixture, needs_torch, torch_fixture  # noqa: F401 (fixtures)

from repro_lint.probe.evaluate import Context
from repro_lint.probe.report import OpResult, SelfTest
from repro_lint.probe.selftest import CANARY_MIN_THREADS, run_selftest
from repro_lint.probe.snapshot import selftest_findings

pytestmark = needs_torch



def ops_by_mode(st):
    return {(op.name, op.mode): op for op in st.ops}


def test_cpu_canary_fires_with_determinism_off_and_agrees_with_it_on(torch):
    # Research notes: up to 5 distinct results in 5 runs with determinism off.
    torch.set_num_threads(1)
    st = run_selftest(torch, "cpu", repeats=5)
    ops = ops_by_mode(st)
    off, strict = ops[("index_put_accumulate", "off")], ops[("index_put_accumulate", "strict")]
    assert off.threads == strict.threads == CANARY_MIN_THREADS  # raised for the canary only
    assert off.distinct_digests > 1, "the canary did not fire"
    assert off.status == "info" and off.expected is False
    assert strict.distinct_digests == 1 and strict.deterministic and strict.status == "pass"
    conv = ops[("conv_net_step", "strict")]
    assert conv.distinct_digests == 1 and conv.threads == 1
    assert st.canary_fired and st.num_threads == 1
    assert torch.get_num_threads() == 1
    assert selftest_findings(st, Context()) == []


def test_a_silent_canary_makes_the_result_inconclusive():
    silent = OpResult("index_put_accumulate", "cpu", "off", True, 4, 1, None, None, 1.0)
    clean = OpResult("index_put_accumulate", "cpu", "strict", True, 4, 1, None, None, 1.0)
    st = SelfTest("cpu", 5, 4, False, (silent, clean))
    assert not st.canary_fired
    findings = selftest_findings(st, Context())
    assert [(f.id, f.severity) for f in findings] == [("RLP017", "info")]


def test_selftest_leaves_the_process_as_it_found_it(torch):
    from torch.optim.optimizer import register_optimizer_step_pre_hook

    torch.manual_seed(42)
    torch.use_deterministic_algorithms(True, warn_only=True)
    inductor_loaded = "torch._inductor.config" in sys.modules
    rng_before = torch.get_rng_state()
    steps = []
    handle = register_optimizer_step_pre_hook(lambda *a: steps.append(a))
    try:
        run_selftest(torch, "cpu", repeats=2)
    finally:
        handle.remove()
    assert torch.equal(rng_before, torch.get_rng_state())
    assert torch.initial_seed() == 42
    assert torch.are_deterministic_algorithms_enabled()
    assert torch.is_deterministic_algorithms_warn_only_enabled()
    assert steps == [], "the self-test must not fire the user's optimizer hooks"
    assert ("torch._inductor.config" in sys.modules) == inductor_loaded


def test_nondeterminism_under_strict_mode_is_a_failure():
    flaky = OpResult("scatter_add", "cuda", "strict", False, 2, 3, None, None, 1.0)
    canary = OpResult("index_add", "cuda", "off", True, 2, 4, None, None, 1.0)
    st = SelfTest("cuda", 5, 2, True, (canary, flaky))
    findings = selftest_findings(st, Context())
    assert [(f.id, f.severity, f.setting) for f in findings] == [("RLP016", "fail", "selftest.scatter_add")]
    refused = OpResult("embedding_bag_max_backward", "cuda", "strict", False, 2, 0, "RuntimeError: ...", None, 1.0)
    assert refused.status == "pass" and refused.deterministic is None


def test_cuda_selftest_without_cuda_cannot_evaluate(cli, cpu_machine):
    result = cli("env", "--selftest", "cuda", "--json")
    assert result.exit_code == 3
    doc = json.loads(result.stdout)
    assert doc["status"] == "error" and "CUDA" in doc["error"]
    assert "needs a CUDA device" in result.stderr


def test_env_selftest_cpu_in_the_cli(cli):
    result = cli("env", "--selftest", "cpu", "--json")
    doc = json.loads(result.stdout)
    st = doc["selftest"]
    assert st["ran"] and st["device"] == "cpu" and st["initialized_cuda"] is False
    assert {(op["name"], op["mode"]) for op in st["ops"]} == {
        ("index_put_accumulate", "off"), ("index_put_accumulate", "strict"), ("conv_net_step", "strict")}
    assert all(op["distinct_digests"] == 1 for op in st["ops"] if op["mode"] == "strict")


def test_unknown_selftest_device(torch):
    with pytest.raises(ValueError, match="cpu"):
        run_selftest(torch, "tpu")
