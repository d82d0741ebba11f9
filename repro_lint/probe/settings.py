"""The process-global torch settings: how to read each one and how to judge it.

Every getter here is safe on a CUDA build whose CUDA is not initialized: none of them calls
``torch.cuda._lazy_init`` (research notes, section 0.8).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from types import ModuleType
from typing import Any, Callable

from .evaluate import Context, Verdict, bad, na, note, ok

INDUCTOR_CONFIG = "torch._inductor.config"
INDUCTOR_AUTOTUNE_FLAGS = ("max_autotune", "max_autotune_gemm", "max_autotune_pointwise",
                           "coordinate_descent_tuning")
FP32_EXACT = ["ieee", "none"]  # "none" inherits from the parent, which is judged on its own row

Judge = Callable[[Any, Context], Verdict]


@dataclass(frozen=True)
class Setting:
    key: str
    read_via: str
    read: Callable[[ModuleType], Any]
    expected: Any = None
    cuda_only: bool = False
    judge: Judge | None = None
    fix: str | None = None


def _inductor_config() -> ModuleType | None:
    # Importing it costs about 1.3 s, and an unimported config cannot have been changed.
    return sys.modules.get(INDUCTOR_CONFIG)


def _read_inductor_deterministic(_torch: ModuleType) -> bool | None:
    cfg = _inductor_config()
    return None if cfg is None else bool(cfg.deterministic or getattr(cfg, "batch_invariant", False))


def _read_inductor_autotune(_torch: ModuleType) -> list[str] | None:
    cfg = _inductor_config()
    return None if cfg is None else [f for f in INDUCTOR_AUTOTUNE_FLAGS if getattr(cfg, f, False)]


def _strict_deterministic(ctx: Context) -> bool:
    return bool(ctx.values.get("deterministic_algorithms")) and not ctx.values.get("deterministic_warn_only")


# ------------------------------------------------------------------------------ judges


def _deterministic(value: Any, ctx: Context) -> Verdict:
    if value:
        return ok()
    return bad("RLP001", "torch.use_deterministic_algorithms is off: nondeterministic kernels (CUDA "
                         "index_add_/scatter_add_/conv backward, CPU index_put_(accumulate=True)) run silently")


def _warn_only(value: Any, ctx: Context) -> Verdict:
    if value and ctx.values.get("deterministic_algorithms"):
        return bad("RLP002", "warn_only=True: ops without a deterministic implementation (flash and "
                             "memory-efficient attention backward, max_unpool, ...) only warn and stay "
                             "nondeterministic")
    return ok()


def _fill_memory(value: Any, ctx: Context) -> Verdict:
    if value or not ctx.values.get("deterministic_algorithms"):
        return ok()
    return bad("RLP019", "off: torch.empty / resize_ hand out uninitialized memory whose contents "
                         "differ between runs")


def _inductor_deterministic(value: Any, ctx: Context) -> Verdict:
    if value is None:
        return na("torch._inductor.config is not imported in this process; "
                  "TORCHINDUCTOR_DETERMINISTIC applies when it is")
    return ok() if value else note("off: set by torch.use_deterministic_algorithms(True), "
                                   "not by set_deterministic_debug_mode")


def _inductor_autotune(value: Any, ctx: Context) -> Verdict:
    if value is None:
        return na("torch._inductor.config is not imported in this process")
    if value and not ctx.values.get("inductor.deterministic"):
        return bad("RLP010", f"{', '.join(value)} on while inductor's deterministic flag is off: "
                             "compiled kernels are chosen by timing, which can differ between runs")
    return ok()


def _cudnn_deterministic(value: Any, ctx: Context) -> Verdict:
    if value:
        return ok()
    if ctx.values.get("deterministic_algorithms"):
        return ok("effective: cuDNN honours torch.use_deterministic_algorithms(True)")
    return bad("RLP004", "cuDNN may pick nondeterministic convolution algorithms "
                         "(neither cudnn.deterministic nor deterministic algorithms is on)")


def _is_false(check: str, why: str) -> Judge:
    return lambda value, ctx: ok() if not value else bad(check, why)


def _sdpa(name: str) -> Judge:
    def judge(value: Any, ctx: Context) -> Verdict:
        if not value:
            return ok()
        if _strict_deterministic(ctx):
            return ok("strict deterministic mode makes its backward deterministic")
        return bad("RLP005", f"{name} attention is enabled and its backward is nondeterministic unless "
                             "deterministic algorithms are on without warn_only")
    return judge


def _fp32_exact(value: Any, ctx: Context) -> Verdict:
    if value in FP32_EXACT:
        return ok()
    return bad("RLP009", f"{value!r}: fp32 math runs in reduced precision, so results differ between "
                         "hardware generations (run to run it stays deterministic)")


def _matmul_precision(value: Any, ctx: Context) -> Verdict:
    if value == "highest":
        return ok()
    return bad("RLP009", f"{value!r}: fp32 matmuls use TF32/bf16 (on CPU too: oneDNN switches to bf16), "
                         "so results differ between hardware generations")


_TF32 = "TF32 changes results between hardware generations (run to run it stays deterministic)"
_REDUCED = "reduced-precision reductions change results between GPU models"


def _flag(key: str, expr: str, expected: Any = None, *, cuda: bool = False, judge: Judge | None = None,
          fix: str | None = None) -> Setting:
    """A setting read by evaluating ``expr`` with ``torch`` in scope.

    The report's ``read_via`` is this same text, so it always names exactly what was read.
    """
    code = compile(expr, f"<probe setting {key}>", "eval")
    return Setting(key, expr, lambda torch: eval(code, {"torch": torch}), expected, cuda, judge, fix)


SETTINGS: tuple[Setting, ...] = (
    _flag("deterministic_algorithms", "torch.are_deterministic_algorithms_enabled()", True,
          judge=_deterministic),
    _flag("deterministic_warn_only", "torch.is_deterministic_algorithms_warn_only_enabled()", False,
          judge=_warn_only),
    _flag("deterministic_debug_mode", "torch.get_deterministic_debug_mode()", 2),
    _flag("fill_uninitialized_memory", "torch.utils.deterministic.fill_uninitialized_memory", True,
          judge=_fill_memory),
    Setting("inductor.deterministic", "torch._inductor.config.deterministic (or batch_invariant)",
            _read_inductor_deterministic, True, judge=_inductor_deterministic),
    Setting("inductor.autotune", "torch._inductor.config." + "/".join(INDUCTOR_AUTOTUNE_FLAGS),
            _read_inductor_autotune, [], judge=_inductor_autotune),
    _flag("cudnn.deterministic", "torch.backends.cudnn.deterministic", "True or deterministic algorithms on",
          cuda=True, judge=_cudnn_deterministic),
    _flag("cudnn.benchmark", "torch.backends.cudnn.benchmark", False, cuda=True,
          judge=_is_false("RLP003", "cuDNN benchmarking picks the fastest algorithm by timing, so the "
                                    "algorithm and its numerics can change between runs; deterministic "
                                    "mode does not turn it off")),
    _flag("cudnn.enabled", "torch.backends.cudnn.enabled", cuda=True),
    _flag("cudnn.allow_tf32", "torch.backends.cudnn.allow_tf32", False, cuda=True,
          judge=_is_false("RLP009", f"cuDNN convolutions use TF32 (the default); {_TF32}"),
          fix="torch.backends.cudnn.conv.fp32_precision = 'ieee'"),
    _flag("cudnn.fp32_precision", "torch.backends.cudnn.fp32_precision", FP32_EXACT, cuda=True,
          judge=_fp32_exact, fix="torch.backends.cudnn.fp32_precision = 'ieee'"),
    _flag("cudnn.conv.fp32_precision", "torch.backends.cudnn.conv.fp32_precision", FP32_EXACT, cuda=True,
          judge=_fp32_exact, fix="torch.backends.cudnn.conv.fp32_precision = 'ieee'"),
    _flag("cudnn.rnn.fp32_precision", "torch.backends.cudnn.rnn.fp32_precision", FP32_EXACT, cuda=True,
          judge=_fp32_exact, fix="torch.backends.cudnn.rnn.fp32_precision = 'ieee'"),
    _flag("cuda.matmul.allow_tf32", "torch.backends.cuda.matmul.allow_tf32", False, cuda=True,
          judge=_is_false("RLP009", f"cuBLAS fp32 matmuls use TF32; {_TF32}"),
          fix="torch.backends.cuda.matmul.fp32_precision = 'ieee'"),
    _flag("cuda.matmul.fp32_precision", "torch.backends.cuda.matmul.fp32_precision", FP32_EXACT, cuda=True,
          judge=_fp32_exact, fix="torch.backends.cuda.matmul.fp32_precision = 'ieee'"),
    _flag("float32_matmul_precision", "torch.get_float32_matmul_precision()", "highest",
          judge=_matmul_precision, fix="torch.set_float32_matmul_precision('highest')"),
    _flag("fp32_precision", "torch.backends.fp32_precision", FP32_EXACT,
          judge=_fp32_exact, fix="torch.backends.fp32_precision = 'ieee'"),
    _flag("cuda.matmul.allow_fp16_reduced_precision_reduction",
          "torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction", False, cuda=True,
          judge=_is_false("RLP009", f"fp16 matmuls may reduce in fp16; {_REDUCED}"),
          fix="torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction = False"),
    _flag("cuda.matmul.allow_fp16_reduced_precision_reduction_split_k",
          "torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction_split_k", cuda=True),
    _flag("cuda.matmul.allow_bf16_reduced_precision_reduction",
          "torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction", False, cuda=True,
          judge=_is_false("RLP009", f"bf16 matmuls may reduce in bf16; {_REDUCED}"),
          fix="torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction = False"),
    _flag("cuda.matmul.allow_bf16_reduced_precision_reduction_split_k",
          "torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction_split_k", cuda=True),
    _flag("cuda.matmul.allow_fp16_accumulation", "torch.backends.cuda.matmul.allow_fp16_accumulation", False,
          cuda=True, judge=_is_false("RLP009", f"fp16 matmuls accumulate in fp16; {_REDUCED}"),
          fix="torch.backends.cuda.matmul.allow_fp16_accumulation = False"),
    _flag("cuda.preferred_blas_library", "torch.backends.cuda.preferred_blas_library().name", cuda=True),
    _flag("cuda.preferred_linalg_library", "torch.backends.cuda.preferred_linalg_library().name", cuda=True),
    _flag("cuda.flash_sdp_enabled", "torch.backends.cuda.flash_sdp_enabled()",
          "False unless strict deterministic mode", cuda=True, judge=_sdpa("flash")),
    _flag("cuda.mem_efficient_sdp_enabled", "torch.backends.cuda.mem_efficient_sdp_enabled()",
          "False unless strict deterministic mode", cuda=True, judge=_sdpa("memory-efficient")),
    _flag("cuda.cudnn_sdp_enabled", "torch.backends.cuda.cudnn_sdp_enabled()", cuda=True),
    _flag("cuda.math_sdp_enabled", "torch.backends.cuda.math_sdp_enabled()"),
    _flag("cuda.fp16_bf16_reduction_math_sdp_allowed",
          "torch.backends.cuda.fp16_bf16_reduction_math_sdp_allowed()"),
    _flag("sdp_priority_order",
          "[torch.nn.attention.SDPBackend(b).name for b in torch._C._get_sdp_priority_order()]", cuda=True),
    _flag("fa3_sdp_enabled", "torch._C._get_fa3_sdp_enabled()", cuda=True),
    _flag("flash_attention_impl", "torch.nn.attention.current_flash_attention_impl()", cuda=True),
    _flag("mkldnn.enabled", "torch.backends.mkldnn.enabled"),
    _flag("mkldnn.deterministic", "torch.backends.mkldnn.deterministic"),
    _flag("mkldnn.fp32_precision", "torch.backends.mkldnn.fp32_precision", FP32_EXACT,
          judge=_fp32_exact, fix="torch.backends.mkldnn.fp32_precision = 'ieee'"),
    _flag("mkldnn.matmul.fp32_precision", "torch.backends.mkldnn.matmul.fp32_precision", FP32_EXACT,
          judge=_fp32_exact, fix="torch.backends.mkldnn.matmul.fp32_precision = 'ieee'"),
    _flag("mkldnn.conv.fp32_precision", "torch.backends.mkldnn.conv.fp32_precision", FP32_EXACT,
          judge=_fp32_exact, fix="torch.backends.mkldnn.conv.fp32_precision = 'ieee'"),
    _flag("mkldnn.rnn.fp32_precision", "torch.backends.mkldnn.rnn.fp32_precision", FP32_EXACT,
          judge=_fp32_exact, fix="torch.backends.mkldnn.rnn.fp32_precision = 'ieee'"),
    _flag("opt_einsum.enabled", "torch.backends.opt_einsum.enabled and torch.backends.opt_einsum.is_available()"),
    _flag("mha.fastpath_enabled", "torch.backends.mha.get_fastpath_enabled()"),
)


@dataclass
class Reading:
    setting: Setting
    value: Any = None
    error: str | None = None
    missing: bool = False  # the getter does not exist in this torch


def read_settings(torch: ModuleType) -> list[Reading]:
    readings = []
    for s in SETTINGS:
        try:
            readings.append(Reading(s, _plain(s.read(torch))))
        except AttributeError:
            readings.append(Reading(s, missing=True))
        except Exception as exc:  # e.g. RuntimeError from mixed legacy/new TF32 APIs
            readings.append(Reading(s, error=f"{type(exc).__name__}: {exc}"))
    return readings


def _plain(value: Any) -> Any:
    """JSON-friendly value (enums and other objects become their str)."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return str(value)


def judge_setting(reading: Reading, ctx: Context) -> Verdict:
    if reading.missing:
        return na("this torch version has no such getter")
    if reading.setting.judge is None:
        return note()
    return reading.setting.judge(reading.value, ctx)
