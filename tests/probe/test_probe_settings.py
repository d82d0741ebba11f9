"""Each judged setting: a pass case and a fail case, read from real torch state where it can be set."""

from __future__ import annotations

import json

import pytest
from probe_helpers import (  # noqa: F401 (fixtures)
    CPU_ONLY,
    child_env,
    cpu_machine_fixture,
    needs_torch,
    run_python,
    torch_fixture,
)

from repro_lint.probe import ProbeFailure, check
from repro_lint.probe.evaluate import Context

pytestmark = needs_torch


def settings_of(report):
    return report.to_json()["settings"]


def finding_ids(report, setting=None):
    return {f.id for f in report.findings if setting is None or f.setting == setting}


def test_deterministic_algorithms(torch):
    torch.use_deterministic_algorithms(False)
    row = settings_of(check())["deterministic_algorithms"]
    assert (row["value"], row["status"]) == (False, "fail")
    torch.use_deterministic_algorithms(True)
    report = check()
    assert settings_of(report)["deterministic_algorithms"]["status"] == "pass"
    assert "RLP001" not in finding_ids(report)


def test_warn_only_fails_and_strict_mode_passes(torch):
    torch.use_deterministic_algorithms(True, warn_only=True)
    report = check()
    assert settings_of(report)["deterministic_warn_only"]["status"] == "fail"
    assert "RLP002" in finding_ids(report, "deterministic_warn_only")
    torch.use_deterministic_algorithms(True)
    assert settings_of(check())["deterministic_warn_only"]["status"] == "pass"


def test_fill_uninitialized_memory(torch):
    torch.use_deterministic_algorithms(True)
    torch.utils.deterministic.fill_uninitialized_memory = False
    assert settings_of(check())["fill_uninitialized_memory"]["status"] == "warn"
    torch.utils.deterministic.fill_uninitialized_memory = True
    assert settings_of(check())["fill_uninitialized_memory"]["status"] == "pass"


def test_cuda_only_settings_are_na_on_cpu_with_their_gpu_verdict(torch, cpu_machine):
    torch.use_deterministic_algorithms(False)
    torch.backends.cudnn.benchmark = True
    torch.backends.cudnn.deterministic = False
    report = check()
    rows = settings_of(report)
    assert (rows["cudnn.benchmark"]["status"], rows["cudnn.benchmark"]["latent"]) == ("na", "fail")
    assert (rows["cudnn.deterministic"]["status"], rows["cudnn.deterministic"]["latent"]) == ("na", "fail")
    # A latent failure is a warning on CPU, never a failure of its own.
    bench = [f for f in report.findings if f.setting == "cudnn.benchmark"]
    assert [(f.id, f.severity) for f in bench] == [("RLP003", "warn")]

    torch.backends.cudnn.benchmark = False
    torch.use_deterministic_algorithms(True)  # cuDNN honours it even with cudnn.deterministic False
    rows = settings_of(check())
    assert rows["cudnn.benchmark"]["latent"] == "pass"
    assert rows["cudnn.deterministic"]["latent"] == "pass"
    assert "effective" in rows["cudnn.deterministic"]["why"]


def test_sdpa_backends_need_strict_deterministic_mode(torch, cpu_machine):
    torch.use_deterministic_algorithms(True, warn_only=True)
    torch.backends.cuda.enable_flash_sdp(True)
    rows = settings_of(check())
    assert rows["cuda.flash_sdp_enabled"]["latent"] == "fail"
    assert rows["cuda.mem_efficient_sdp_enabled"]["latent"] == "fail"
    torch.use_deterministic_algorithms(True)
    assert settings_of(check())["cuda.flash_sdp_enabled"]["latent"] == "pass"
    torch.use_deterministic_algorithms(False)
    torch.backends.cuda.enable_flash_sdp(False)
    assert settings_of(check())["cuda.flash_sdp_enabled"]["latent"] == "pass"


def test_unseeded_torch_fails_and_seeded_passes(torch):
    torch.seed()  # a fresh random 64-bit seed, as in a process nobody seeded
    report = check()
    assert report.to_json()["rng"]["seeded_hint"] is False
    assert "RLP007" in finding_ids(report, "rng.torch_initial_seed")
    torch.manual_seed(1234)
    report = check()
    rng = report.to_json()["rng"]
    assert (rng["torch_initial_seed"], rng["seeded_hint"]) == (1234, True)
    assert "RLP007" not in finding_ids(report)


def test_check_reads_without_drawing_from_the_rng(torch):
    torch.manual_seed(0)
    before = torch.get_rng_state()
    first = check().to_json()["rng"]["torch_cpu_state_sha256"]
    assert torch.equal(before, torch.get_rng_state())
    torch.rand(1)
    assert check().to_json()["rng"]["torch_cpu_state_sha256"] != first


def test_inductor_autotune_without_deterministic_warns(torch, monkeypatch):
    import torch._inductor.config as cfg

    monkeypatch.setattr(cfg, "deterministic", False)
    monkeypatch.setattr(cfg, "max_autotune", True)
    row = settings_of(check())["inductor.autotune"]
    assert (row["value"], row["status"]) == (["max_autotune"], "warn")
    monkeypatch.setattr(cfg, "deterministic", True)
    assert settings_of(check())["inductor.autotune"]["status"] == "pass"


def test_strict_raises_a_readable_summary(torch):
    torch.use_deterministic_algorithms(False)
    with pytest.raises(ProbeFailure) as info:
        check(strict=True)
    text = str(info.value)
    assert "RLP001 deterministic_algorithms" in text
    assert "fix: call torch.use_deterministic_algorithms(True)" in text
    assert info.value.report.status == "fail"


def test_strict_passes_silently_when_nothing_fails(torch):
    torch.manual_seed(0)
    torch.use_deterministic_algorithms(True)
    torch.backends.cudnn.benchmark = False
    assert check(strict=True).status in ("pass", "warn")


def test_seeds_only_profile_judges_seeding_only(torch):
    torch.use_deterministic_algorithms(False)
    torch.manual_seed(0)
    report = check(profile="seeds-only")
    assert settings_of(report)["deterministic_algorithms"]["status"] == "info"
    assert report.status != "fail"
    torch.seed()
    assert check(profile="seeds-only").status == "fail"


def test_unknown_profile_is_rejected():
    with pytest.raises(ValueError, match="profile"):
        check(profile="lenient")


# --------------------------------------------------------------------- DataLoader


def test_dataloader_workers_without_generator_in_unseeded_process(torch):
    from torch.utils.data import DataLoader

    data = list(range(8))
    torch.seed()
    report = check(loader=DataLoader(data, num_workers=2, shuffle=True))
    assert "RLP014" in finding_ids(report, "DataLoader.generator")
    assert report.to_json()["dataloader"]["num_workers"] == 2
    seeded_gen = torch.Generator().manual_seed(7)
    report = check(loader=DataLoader(data, num_workers=2, shuffle=True, generator=seeded_gen))
    assert report.to_json()["dataloader"]["generator"] == 7
    assert "RLP014" not in finding_ids(report)


def test_worker_init_fn_is_needed_only_under_multi_rank_training():
    from repro_lint.probe.dataloader import judge_worker_init

    info = {"worker_init_fn": None, "num_workers": 2}
    assert judge_worker_init(info, Context(distributed={"world_size": 4})).check == "RLP015"
    assert judge_worker_init(info, Context(distributed={"world_size": 1})).outcome == "pass"
    assert judge_worker_init(info | {"worker_init_fn": "seed_worker"},
                             Context(distributed={"world_size": 4})).outcome == "pass"


# ------------------------------------------------------ precision flags (fresh process)

# Mixing the legacy TF32 flags with the fp32_precision API cannot be undone in-process,
# so these run in a child interpreter.
PRECISION_SCRIPT = r"""
import json, warnings
warnings.simplefilter("ignore")
import torch
from repro_lint.probe import check

def rows(**kw):
    return check(**kw).to_json()["settings"]

out = {"default": rows(), "default_portable": rows(profile="portable")}
torch.set_float32_matmul_precision("medium")
out["medium_strict"] = rows()
out["medium_portable"] = rows(profile="portable")
torch.backends.cudnn.conv.fp32_precision = "ieee"   # now conv and rnn differ: legacy reads raise
torch.backends.mkldnn.conv.fp32_precision = "bf16"
out["mixed"] = rows()
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def precision():
    proc = run_python(PRECISION_SCRIPT, env=child_env(**CPU_ONLY))
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_matmul_precision_pass_and_fail(precision):
    assert precision["default"]["float32_matmul_precision"]["status"] == "pass"
    assert precision["medium_strict"]["float32_matmul_precision"]["status"] == "info"
    medium = precision["medium_portable"]
    assert medium["float32_matmul_precision"]["status"] == "fail"
    # "medium" also moves the CPU oneDNN matmul to bf16, which the probe sees on its own row.
    assert (medium["mkldnn.matmul.fp32_precision"]["value"], medium["mkldnn.matmul.fp32_precision"]["status"]) \
        == ("bf16", "fail")


def test_tf32_defaults_fail_only_the_portable_profile_and_only_on_cuda(precision):
    strict, portable = precision["default"], precision["default_portable"]
    assert (strict["cudnn.allow_tf32"]["value"], strict["cudnn.allow_tf32"]["latent"]) == (True, "info")
    assert portable["cudnn.allow_tf32"]["latent"] == "fail"
    assert portable["cudnn.conv.fp32_precision"]["latent"] == "fail"
    assert portable["cuda.matmul.allow_tf32"]["latent"] == "pass"


def test_mixed_tf32_apis_warn_and_keep_the_new_api_value(precision):
    mixed = precision["mixed"]
    legacy = mixed["cudnn.allow_tf32"]
    assert legacy["status"] == "warn" and legacy["value"] is None
    assert "mix" in legacy["error"] or "different TF32" in legacy["error"]
    assert (mixed["cudnn.conv.fp32_precision"]["value"], mixed["cudnn.conv.fp32_precision"]["latent"]) \
        == ("ieee", "pass")
    assert (mixed["mkldnn.conv.fp32_precision"]["value"], mixed["mkldnn.conv.fp32_precision"]["status"]) \
        == ("bf16", "info")


# -------------------------------------------- CUDA present but not initialized (simulated)


def test_probe_never_initializes_cuda(torch, monkeypatch):
    import torch.cuda.random

    calls = []

    def forbidden(*args, **kwargs):
        calls.append(args)
        raise AssertionError("the probe initialized CUDA")

    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "is_initialized", lambda: False)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 1)
    monkeypatch.setattr(torch.cuda, "_lazy_init", forbidden)
    monkeypatch.setattr(torch.cuda.random, "_lazy_init", forbidden)
    torch.use_deterministic_algorithms(False)
    torch.backends.cudnn.benchmark = True
    report = check()
    assert calls == []
    doc = report.to_json()
    assert doc["environment"]["torch"]["devices"] is None
    assert doc["rng"]["cuda_initial_seeds"] is None
    # With a device the CUDA checks apply for real instead of being "na".
    assert doc["settings"]["cudnn.benchmark"]["status"] == "fail"
    assert doc["settings"]["cudnn.deterministic"]["status"] == "fail"


def test_numpy_legacy_state_fingerprint_tracks_seeding():
    np = pytest.importorskip("numpy")
    from repro_lint.probe.rng import numpy_legacy_sha256

    np.random.seed(0)
    first = numpy_legacy_sha256()
    np.random.seed(0)
    assert numpy_legacy_sha256() == first
    np.random.rand()
    assert numpy_legacy_sha256() != first
