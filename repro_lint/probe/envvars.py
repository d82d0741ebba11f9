"""Environment variables that change determinism or numerics: reading and judging them.

Most are read once, when a library initializes, so the value the process was *started* with
matters as much as the current one.  On Linux that value is in /proc/self/environ, which
``os.environ`` assignments do not change.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping

from .evaluate import Context, Verdict, bad, na, note, ok

CUBLAS_DETERMINISTIC = (":4096:8", ":16:8")
NCCL_DETERMINISTIC_ALGOS = {"ring", "collnetdirect", "collnetchain"}


@dataclass(frozen=True)
class EnvReading:
    name: str
    value: str | None
    value_at_exec: str | None
    set_in_process: bool | None  # None where the start-up environment cannot be read
    environ: Mapping[str, str]
    # Whether it changed after CUDA was initialized: None where the probe did not see CUDA start
    # (`probe run` watches for it; `check()` and `probe env` do not).
    set_after_cuda_start: bool | None = None


Judge = Callable[[EnvReading, Context], Verdict]


@dataclass(frozen=True)
class EnvVar:
    name: str
    expected: Any = None
    cuda_only: bool = False
    judge: Judge | None = None
    fix: str | None = None


def read_exec_environ() -> dict[str, str] | None:
    """The environment this process was started with, or None where the OS does not show it."""
    try:
        raw = Path("/proc/self/environ").read_bytes()
    except OSError:
        return None
    pairs = (item.split(b"=", 1) for item in raw.split(b"\0") if b"=" in item)
    return {k.decode(errors="surrogateescape"): v.decode(errors="surrogateescape") for k, v in pairs}


def pythonhashseed_effective(value: str | None, value_at_exec: str | None, exec_known: bool) -> str:
    """``fixed``, ``random``, ``set_too_late`` (only os.environ has it) or ``unknown``."""
    if not exec_known:
        # hash_randomization is 0 only for PYTHONHASHSEED=0; other fixed seeds look random here.
        return "fixed" if not sys.flags.hash_randomization else "unknown"
    if value_at_exec is not None and value_at_exec.isdigit():
        return "fixed"
    return "set_too_late" if value is not None and value.isdigit() else "random"


# ------------------------------------------------------------------------------ judges


def _pythonhashseed(r: EnvReading, ctx: Context) -> Verdict:
    state = pythonhashseed_effective(r.value, r.value_at_exec, r.set_in_process is not None)
    if state == "fixed":
        return ok()
    if state == "unknown":
        return note("this platform does not show the start-up environment; cannot tell whether it was "
                    "set before Python started")
    if state == "set_too_late":
        return bad("RLP008", "set in os.environ after Python started: this process still hashes "
                             "randomly (only child processes see the value)")
    return bad("RLP008", "not fixed when Python started: str/bytes hashes, and with them set iteration "
                         "order, change every run")


def _cublas_workspace(r: EnvReading, ctx: Context) -> Verdict:
    if ctx.torch_version is None:
        return na("torch is not importable")
    if ctx.hip:
        return na("ROCm: cuBLAS variables do not apply")
    if ctx.torch_version < (2, 10):
        if ctx.values.get("deterministic_algorithms") and r.value not in CUBLAS_DETERMINISTIC:
            return bad("RLP006", f"torch {'.'.join(map(str, ctx.torch_version))} with deterministic "
                                 "algorithms raises at the first cuBLAS call unless it is :4096:8 or :16:8")
        return ok()
    if r.set_in_process and ctx.cuda_initialized and r.set_after_cuda_start is not False:
        when = "after CUDA was initialized" if r.set_after_cuda_start else "while CUDA is already initialized"
        return bad("RLP021", f"set in os.environ {when}: cuBLAS may have read the old value")
    if r.value is None:
        return bad("RLP022", "unset; not required by torch >= 2.10 (it only sizes the cuBLAS workspace)")
    return ok()


def _nvte(r: EnvReading, ctx: Context) -> Verdict:
    if ctx.hip:
        return na("ROCm: Transformer Engine variables do not apply")
    if not (ctx.packages.get("transformer-engine") or "transformer_engine" in sys.modules):
        return na("Transformer Engine is not installed")
    if r.value == "0":
        return ok()
    return bad("RLP012", f"{r.value or 'unset (defaults to 1)'}: Transformer Engine may pick "
                         "nondeterministic attention and GEMM algorithms")


def _nccl_algo(r: EnvReading, ctx: Context) -> Verdict:
    dist = ctx.distributed
    if dist.get("backend") != "nccl" or (dist.get("world_size") or 0) < 2:
        return na("torch.distributed is not running NCCL with more than one rank")
    algos = {a.strip().lower() for a in (r.value or "").split(",") if a.strip()}
    if algos and algos <= NCCL_DETERMINISTIC_ALGOS:
        return ok()
    return bad("RLP013", f"{r.value or 'unset'}: NCCL may choose Tree or NVLS all-reduce, whose "
                         "summation order depends on topology and message size")


def _flash_attention_env(r: EnvReading, ctx: Context) -> Verdict:
    if not (ctx.packages.get("flash-attn") and ctx.packages.get("transformers")):
        return na("flash-attn with transformers is not installed")
    if r.value == "1":
        return ok()
    return bad("RLP020", "transformers passes deterministic=True to flash_attn's backward only when "
                         "this is 1")


def _tf32_override(r: EnvReading, ctx: Context) -> Verdict:
    if r.value == "1":
        return bad("RLP009", "makes cuBLAS fp32 matmuls default to TF32")
    return ok()


def _threads_pinned(r: EnvReading, ctx: Context) -> Verdict:
    if r.environ.get("OMP_NUM_THREADS") or r.environ.get("MKL_NUM_THREADS"):
        return ok()
    return bad("RLP011", "thread count not pinned: it defaults to the core count, and CPU float "
                         "reductions (sum, conv and layernorm backward) change bits with it")


def _mkl_cbwr(r: EnvReading, ctx: Context) -> Verdict:
    if r.value:
        return ok()
    return bad("RLP011", "MKL picks code paths per CPU model, so CPU results differ between machines")


ENV_VARS: tuple[EnvVar, ...] = (
    EnvVar("PYTHONHASHSEED", "an integer, set before Python starts", judge=_pythonhashseed),
    EnvVar("CUBLAS_WORKSPACE_CONFIG", list(CUBLAS_DETERMINISTIC), cuda_only=True, judge=_cublas_workspace),
    EnvVar("NVTE_ALLOW_NONDETERMINISTIC_ALGO", "0", cuda_only=True, judge=_nvte),
    EnvVar("NCCL_ALGO", "Ring", cuda_only=True, judge=_nccl_algo),
    EnvVar("FLASH_ATTENTION_DETERMINISTIC", "1", cuda_only=True, judge=_flash_attention_env),
    EnvVar("TORCH_ALLOW_TF32_CUBLAS_OVERRIDE", "unset or 0", cuda_only=True, judge=_tf32_override,
           fix="unset TORCH_ALLOW_TF32_CUBLAS_OVERRIDE"),
    EnvVar("NVIDIA_TF32_OVERRIDE", cuda_only=True),
    EnvVar("OMP_NUM_THREADS", "pinned", judge=_threads_pinned,
           fix="export OMP_NUM_THREADS=N with the same N on every machine"),
    EnvVar("MKL_NUM_THREADS"),
    EnvVar("MKL_CBWR", "pinned, e.g. COMPATIBLE", judge=_mkl_cbwr,
           fix="export MKL_CBWR=COMPATIBLE for the same MKL results on every x86 CPU"),
    EnvVar("ATEN_CPU_CAPABILITY"),
    EnvVar("TORCH_CUDNN_V8_API_DISABLED", cuda_only=True),
    EnvVar("TORCH_CUDNN_V8_API_DEBUG", cuda_only=True),
    EnvVar("TORCH_CUDNN_USE_HEURISTIC_MODE_B", cuda_only=True),
    EnvVar("TORCH_CUDNN_V8_API_LRU_CACHE_LIMIT", cuda_only=True),
    EnvVar("TORCH_BLAS_PREFER_CUBLASLT", cuda_only=True),
    EnvVar("TORCH_LINALG_PREFER_CUSOLVER", cuda_only=True),
    EnvVar("TORCHINDUCTOR_DETERMINISTIC"),
    EnvVar("TORCHINDUCTOR_BATCH_INVARIANT"),
    EnvVar("TORCHINDUCTOR_MAX_AUTOTUNE"),
    EnvVar("TORCHINDUCTOR_MAX_AUTOTUNE_GEMM"),
    EnvVar("TORCHINDUCTOR_MAX_AUTOTUNE_POINTWISE"),
    EnvVar("TORCHINDUCTOR_COORDINATE_DESCENT_TUNING"),
    EnvVar("CUDA_LAUNCH_BLOCKING", cuda_only=True),
    EnvVar("MAMBA_DETERMINISTIC"),
    EnvVar("CAUSAL_CONV1D_DETERMINISTIC"),
    EnvVar("HCCL_DETERMINISTIC"),
    EnvVar("ASCEND_LAUNCH_BLOCKING"),
    EnvVar("PL_GLOBAL_SEED"),
    EnvVar("PL_SEED_WORKERS"),
)


def read_env(environ: Mapping[str, str], exec_environ: Mapping[str, str] | None,
             cuda_start_environ: Mapping[str, str] | None = None) -> list[EnvReading]:
    """Each variable's reading; `cuda_start_environ` is the environment when CUDA was initialized,
    where the probe saw that happen."""
    readings = []
    for var in ENV_VARS:
        value = environ.get(var.name)
        at_exec = None if exec_environ is None else exec_environ.get(var.name)
        set_in_process = None if exec_environ is None else value != at_exec
        after_cuda = None if cuda_start_environ is None else value != cuda_start_environ.get(var.name)
        readings.append(EnvReading(var.name, value, at_exec, set_in_process, environ, after_cuda))
    return readings


def judge_env(var: EnvVar, reading: EnvReading, ctx: Context) -> Verdict:
    return note() if var.judge is None else var.judge(reading, ctx)
