"""Assemble a Report from this process: settings, environment variables, RNG, loader, self-test."""

from __future__ import annotations

import os
from types import ModuleType
from typing import Any

from . import dataloader as dl
from .checks import CHECKS
from .environment import describe_environment, installed_packages, major_minor
from .envvars import ENV_VARS, judge_env, pythonhashseed_effective, read_env, read_exec_environ
from .errors import import_torch
from .evaluate import Context, judge_row
from .report import Finding, Report, Row, SelfTest
from .rng import in_dataloader_worker, judge_seeded, numpy_legacy_sha256, python_random_sha256, rng_state
from .selftest import run_selftest
from .settings import judge_setting, read_settings

ENV_MODE_NOTE = (
    "this process only sees environment variables and torch defaults: deterministic algorithms, "
    "cuDNN flags and seeds are set by your code at run time; use `repro-lint probe run -- train.py` "
    "or call repro_lint.probe.check() in the script to judge them"
)


def _env_rows(ctx: Context, findings: list[Finding], cuda_start_environ: dict[str, str] | None) -> tuple[list[Row], str]:
    exec_environ = read_exec_environ()
    rows = []
    hashseed = "unknown"
    for var, reading in zip(ENV_VARS, read_env(os.environ, exec_environ, cuda_start_environ)):
        row = Row(var.name, reading.value, var.expected, cuda_only=var.cuda_only,
                  extra={"value_at_exec": reading.value_at_exec, "set_in_process": reading.set_in_process})
        _add(findings, judge_row(row, judge_env(var, reading, ctx), ctx, var.fix))
        rows.append(row)
        if var.name == "PYTHONHASHSEED":
            hashseed = pythonhashseed_effective(reading.value, reading.value_at_exec, exec_environ is not None)
    return rows, hashseed


def _context(environment: dict[str, Any], profile: str, strict_warnings: bool, values: dict[str, Any]) -> Context:
    tinfo = environment["torch"]
    if tinfo is None:
        return Context(profile=profile, strict_warnings=strict_warnings, packages=environment["packages"])
    return Context(profile=profile, strict_warnings=strict_warnings, torch_version=major_minor(tinfo["version"]),
                   cuda=tinfo["cuda_available"], cuda_initialized=tinfo["cuda_initialized"],
                   hip=tinfo["hip"] is not None, values=values, packages=environment["packages"],
                   distributed=environment["distributed"])


def _add(findings: list[Finding], finding: Finding | None) -> None:
    if finding is not None:
        findings.append(finding)


def selftest_findings(st: SelfTest, ctx: Context) -> list[Finding]:
    out = []
    bad_check = CHECKS["RLP016"]
    for op in st.ops:
        if op.status == "fail":
            out.append(Finding(bad_check.id, bad_check.severity(ctx.profile, ctx.strict_warnings),
                               f"selftest.{op.name}",
                               f"{op.distinct_digests} different results in {st.repeats} runs on {op.device} "
                               "with strict deterministic mode on", bad_check.fix))
    if not st.canary_fired:
        silent = CHECKS["RLP017"]
        out.append(Finding(silent.id, silent.severity(ctx.profile, ctx.strict_warnings), "selftest.canary",
                           "the canary gave one result with deterministic algorithms off: the test could "
                           "not show that it sees nondeterminism here, so a clean result is inconclusive",
                           silent.fix))
    return out


def take_snapshot(*, mode: str, profile: str = "strict", strict_warnings: bool = False,
                  selftest: str | None = None, loader: Any = None, process_state: bool = True,
                  cuda_start_environ: dict[str, str] | None = None) -> Report:
    """Judge this process.  ``process_state=False`` (env mode) skips in-code settings and RNG;
    ``cuda_start_environ`` is the environment when CUDA was initialized, where that was seen."""
    torch = import_torch()
    packages = installed_packages()
    environment = describe_environment(torch, packages)
    readings = read_settings(torch) if process_state else []
    ctx = _context(environment, profile, strict_warnings, {r.setting.key: r.value for r in readings})
    findings: list[Finding] = []
    settings_rows = None
    if process_state:
        settings_rows = []
        for r in readings:
            s = r.setting
            row = Row(s.key, r.value, s.expected, read_via=s.read_via, cuda_only=s.cuda_only, error=r.error)
            _add(findings, judge_row(row, judge_setting(r, ctx), ctx, s.fix))
            settings_rows.append(row)
    env_rows, hashseed = _env_rows(ctx, findings, cuda_start_environ)
    rng, rng_rows = None, []
    if process_state:
        rng = rng_state(torch, hashseed)
        row = Row("rng.torch_initial_seed", rng["torch_initial_seed"], "< 2**32 (seeded)",
                  read_via="torch.initial_seed()")
        _add(findings, judge_row(row, judge_seeded(rng, in_dataloader_worker(torch)), ctx))
        rng_rows.append(row)
    loader_info, loader_rows = None, []
    if loader is not None:
        loader_info = dl.describe_loader(loader)
        seeded = bool(rng and rng["seeded_hint"])
        for key, verdict in (("DataLoader.generator", dl.judge_generator(loader_info, seeded)),
                             ("DataLoader.worker_init_fn", dl.judge_worker_init(loader_info, ctx))):
            field = key.split(".", 1)[1]
            row = Row(key, loader_info[field], read_via=f"loader.{field}")
            _add(findings, judge_row(row, verdict, ctx))
            loader_rows.append(row)
    st = None
    if selftest is not None:
        st = run_selftest(torch, selftest)
        findings += selftest_findings(st, ctx)
    notes = [] if process_state else [ENV_MODE_NOTE]
    return Report(mode=mode, profile=profile, environment=environment, settings=settings_rows, env=env_rows,
                  rng=rng, rng_rows=rng_rows, dataloader=loader_info, dataloader_rows=loader_rows,
                  selftest=st, findings=findings, notes=notes)


def error_report(*, mode: str, profile: str, strict_warnings: bool, error: str,
                 torch: ModuleType | None = None) -> Report:
    """A report for a process the probe cannot judge (no torch, or no CUDA for the CUDA self-test).

    It still carries what needs no torch: environment variables and Python-level RNG fingerprints.
    """
    environment = describe_environment(torch, installed_packages())
    ctx = _context(environment, profile, strict_warnings, {})
    findings: list[Finding] = []
    env_rows, hashseed = _env_rows(ctx, findings, None)
    rng = {"torch_initial_seed": None, "seeded_hint": None, "torch_cpu_state_sha256": None,
           "cuda_initial_seeds": None, "numpy_legacy_state_sha256": numpy_legacy_sha256(),
           "python_random_state_sha256": python_random_sha256(), "pythonhashseed_effective": hashseed}
    return Report(mode=mode, profile=profile, environment=environment, settings=None,
                  env=env_rows, rng=rng, rng_rows=[], dataloader=None, dataloader_rows=[], selftest=None,
                  findings=findings, error=error)
