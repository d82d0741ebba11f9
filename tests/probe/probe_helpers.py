"""Helpers and fixtures shared by the runtime-probe tests.

A plain module, not a conftest.py: the rule tests import their own `conftest` by name, and a
second conftest module would shadow it.  Test modules import the fixtures they use.  torch is
imported inside fixtures only, so importing this module never imports it.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = json.loads((Path(__file__).with_name("probe_schema.json")).read_text())

# For a CI job installed without the `probe` extra; find_spec does not import torch.
needs_torch = pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="needs torch")

# Environment for child interpreters: repro_lint importable, and none of the variables the
# probe judges inherited from whoever runs the tests.
JUDGED_ENV = ("PYTHONHASHSEED", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "MKL_CBWR", "CUBLAS_WORKSPACE_CONFIG")


def child_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in JUDGED_ENV}
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    env.update(extra)
    return env


def run_python(code: str, *args: str, env: dict[str, str] | None = None,
               cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True,
                          env=env if env is not None else child_env(), cwd=cwd or ROOT, timeout=120)


def validate(doc: dict[str, Any]) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    jsonschema.validate(doc, SCHEMA)


@pytest.fixture(name="torch")
def torch_fixture():
    """torch, with the process-global flags this test changes put back afterwards."""
    import torch as torch_module

    t = torch_module
    b = t.backends
    saved = {
        "det": (t.are_deterministic_algorithms_enabled(), t.is_deterministic_algorithms_warn_only_enabled()),
        "fill": t.utils.deterministic.fill_uninitialized_memory,
        "cudnn": (b.cudnn.deterministic, b.cudnn.benchmark),
        "sdp": (b.cuda.flash_sdp_enabled(), b.cuda.mem_efficient_sdp_enabled()),
        "rng": t.get_rng_state(),
        "threads": t.get_num_threads(),
    }
    yield t
    t._C._set_deterministic_algorithms(saved["det"][0], warn_only=saved["det"][1])
    t.utils.deterministic.fill_uninitialized_memory = saved["fill"]
    b.cudnn.deterministic, b.cudnn.benchmark = saved["cudnn"]
    b.cuda.enable_flash_sdp(saved["sdp"][0])
    b.cuda.enable_mem_efficient_sdp(saved["sdp"][1])
    t.set_rng_state(saved["rng"])  # restores initial_seed() too
    t.set_num_threads(saved["threads"])


@pytest.fixture(name="cpu_machine")
def cpu_machine_fixture(monkeypatch):
    """torch as on a machine without a GPU, for the tests of that case run where there is one."""
    import torch as torch_module

    monkeypatch.setattr(torch_module.cuda, "is_available", lambda: False)
    monkeypatch.setattr(torch_module.cuda, "is_initialized", lambda: False)
    monkeypatch.setattr(torch_module.cuda, "device_count", lambda: 0)
    return torch_module


# A child interpreter that sees no GPU, for the tests of that case run where there is one.
CPU_ONLY = {"CUDA_VISIBLE_DEVICES": ""}


@pytest.fixture(name="cli")
def cli_fixture():
    """Invoke the `probe` click group in this process."""
    from repro_lint.probe.cli import probe

    runner = CliRunner()

    def invoke(*args: str):
        return runner.invoke(probe, list(args), catch_exceptions=False)

    return invoke
