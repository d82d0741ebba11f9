"""Empirical self-test: run a few kernels repeatedly and count bitwise-distinct results.

Each op runs with deterministic algorithms on and warn_only off ("strict"), where one result is
promised.  The canary also runs with them off: it is known to vary run to run at >= 2 threads,
so seeing it vary proves the test can detect nondeterminism on this machine.

The self-test leaves the caller's process as it found it: inputs come from private generators,
module construction happens under ``torch.random.fork_rng``, no optimizer is stepped (that would
fire the user's global optimizer hooks), and the deterministic flags are restored through the
private setter, which, unlike ``torch.use_deterministic_algorithms``, does not touch (or import)
Inductor's config.
"""

from __future__ import annotations

import statistics
import time
import warnings
from dataclasses import dataclass
from types import ModuleType
from typing import Any, Callable, Sequence

from .errors import CannotEvaluate
from .hashing import tensors_sha256
from .report import OpResult, SelfTest

DEFAULT_REPEATS = 5
DETERMINISM_WARNINGS = ("does not have a deterministic implementation", "defaults to a non-deterministic")

Thunk = Callable[[], Sequence[Any]]


# The CPU canary races only when its threads overlap in time.  On a busy 2-core machine two
# threads often run one after the other and agree (fired 7 of 12 trials here under load);
# four threads, as the research notes also used, fired 12 of 12.
CANARY_MIN_THREADS = 4


@dataclass(frozen=True)
class Op:
    name: str
    build: Callable[[ModuleType, str], Thunk]  # prepares inputs once, returns the repeated call
    modes: tuple[str, ...] = ("strict",)
    canary: bool = False
    min_threads: int = 1  # CPU intra-op threads to run it with, at least


def _gen(torch: ModuleType) -> Any:
    return torch.Generator().manual_seed(0)


def _randn(torch: ModuleType, g: Any, *shape: int, device: str, dtype: Any = None) -> Any:
    return torch.randn(*shape, generator=g).to(device=device, dtype=dtype)


def _randint(torch: ModuleType, g: Any, high: int, n: int, device: str) -> Any:
    return torch.randint(0, high, (n,), generator=g).to(device)


def _index_put_accumulate(torch: ModuleType, device: str) -> Thunk:
    # 1M values into 100 bins: about 12 ms on CPU, and 5 distinct results in 5 runs at 2 threads.
    g = _gen(torch)
    idx = _randint(torch, g, 100, 1_000_000, device)
    vals = _randn(torch, g, 1_000_000, device=device)
    return lambda: (torch.zeros(100, device=device).index_put_((idx,), vals, accumulate=True),)


def _conv_net_step(torch: ModuleType, device: str) -> Thunk:
    nn, F = torch.nn, torch.nn.functional
    g = _gen(torch)
    model = nn.Sequential(
        nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(),
        nn.Conv2d(8, 16, 3, stride=2, padding=1), nn.ReLU(), nn.AvgPool2d(8), nn.Flatten(),
        nn.Linear(16, 10),
    ).to(device)
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(_randn(torch, g, *p.shape, device=device) * 0.2)
    initial = {k: v.clone() for k, v in model.state_dict().items()}
    x = _randn(torch, g, 16, 3, 16, 16, device=device)
    y = _randint(torch, g, 10, 16, device)
    params = list(model.parameters())

    def step() -> Sequence[Any]:
        model.load_state_dict(initial)
        loss = F.cross_entropy(model(x), y)
        grads = torch.autograd.grad(loss, params)
        with torch.no_grad():
            for p, gr in zip(params, grads):
                p.sub_(0.1 * gr)
        return (loss.detach(), *grads, *(p.detach() for p in params))

    return step


def _index_add(torch: ModuleType, device: str) -> Thunk:
    g = _gen(torch)
    idx = _randint(torch, g, 64, 200_000, device)
    src = _randn(torch, g, 200_000, 8, device=device)
    return lambda: (torch.zeros(64, 8, device=device).index_add_(0, idx, src),)


def _scatter_add(torch: ModuleType, device: str) -> Thunk:
    g = _gen(torch)
    idx = _randint(torch, g, 100, 1_000_000, device)
    src = _randn(torch, g, 1_000_000, device=device)
    return lambda: (torch.zeros(100, device=device).scatter_add_(0, idx, src),)


def _conv_backward(dtype_name: str) -> Callable[[ModuleType, str], Thunk]:
    def build(torch: ModuleType, device: str) -> Thunk:
        dtype = getattr(torch, dtype_name)
        g = _gen(torch)
        x = _randn(torch, g, 32, 64, 56, 56, device=device, dtype=dtype).requires_grad_()
        w = _randn(torch, g, 64, 64, 3, 3, device=device, dtype=dtype).mul_(0.05).requires_grad_()
        gy = _randn(torch, g, 32, 64, 54, 54, device=device, dtype=dtype)

        def run() -> Sequence[Any]:
            out = torch.nn.functional.conv2d(x, w)
            return torch.autograd.grad(out, (x, w), gy)
        return run
    return build


def _embedding_bag_backward(mode: str) -> Callable[[ModuleType, str], Thunk]:
    def build(torch: ModuleType, device: str) -> Thunk:
        g = _gen(torch)
        weight = _randn(torch, g, 1000, 64, device=device).requires_grad_()
        idx = _randint(torch, g, 1000, 100_000, device)
        offsets = torch.arange(0, 100_000, 100, device=device)

        def run() -> Sequence[Any]:
            out = torch.nn.functional.embedding_bag(idx, weight, offsets, mode=mode)
            return torch.autograd.grad(out.sum(), weight)
        return run
    return build


def _sdpa_backward(backend: str, dtype_name: str) -> Callable[[ModuleType, str], Thunk]:
    def build(torch: ModuleType, device: str) -> Thunk:
        from torch.nn.attention import SDPBackend, sdpa_kernel

        dtype = getattr(torch, dtype_name)
        g = _gen(torch)
        q, k, v = (_randn(torch, g, 4, 8, 1024, 64, device=device, dtype=dtype).requires_grad_()
                   for _ in range(3))
        gout = _randn(torch, g, 4, 8, 1024, 64, device=device, dtype=dtype)

        def run() -> Sequence[Any]:
            with sdpa_kernel(getattr(SDPBackend, backend)):
                out = torch.nn.functional.scaled_dot_product_attention(q, k, v)
            return torch.autograd.grad(out, (q, k, v), gout)
        return run
    return build


def _cumsum(torch: ModuleType, device: str) -> Thunk:
    x = _randn(torch, _gen(torch), 10_000_000, device=device)
    return lambda: (torch.cumsum(x, 0),)


def _bmm(torch: ModuleType, device: str) -> Thunk:
    g = _gen(torch)
    a, b = _randn(torch, g, 16, 256, 256, device=device), _randn(torch, g, 16, 256, 256, device=device)
    return lambda: (torch.bmm(a, b),)


OPS: dict[str, tuple[Op, ...]] = {
    "cpu": (
        Op("index_put_accumulate", _index_put_accumulate, ("off", "strict"), canary=True,
           min_threads=CANARY_MIN_THREADS),
        Op("conv_net_step", _conv_net_step),
    ),
    # Research notes 5b. On an NVIDIA H200 (torch 2.11.0+cu130, 2026-11-27), in 13 s: each op gave one
    # result in 5 runs in strict mode, the canary 5 with determinism off, embedding_bag max raised.
    "cuda": (
        Op("index_add", _index_add, ("off", "strict"), canary=True),
        Op("scatter_add", _scatter_add),
        Op("index_put_accumulate", _index_put_accumulate),
        Op("conv_backward_fp32", _conv_backward("float32")),
        Op("conv_backward_fp16", _conv_backward("float16")),
        Op("embedding_bag_max_backward", _embedding_bag_backward("max")),
        Op("embedding_bag_sum_backward", _embedding_bag_backward("sum")),
        Op("sdpa_flash_backward", _sdpa_backward("FLASH_ATTENTION", "bfloat16")),
        Op("sdpa_mem_efficient_backward", _sdpa_backward("EFFICIENT_ATTENTION", "float32")),
        Op("cumsum", _cumsum),
        Op("bmm", _bmm),
    ),
}


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def _measure(torch: ModuleType, op: Op, device: str, mode: str, thunk: Thunk, repeats: int) -> OpResult:
    digests: set[str] = set()
    raised = None
    times = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        torch._C._set_deterministic_algorithms(mode == "strict", warn_only=False)
        try:
            for _ in range(repeats):
                start = time.perf_counter()
                digests.add(tensors_sha256(thunk()))
                times.append(time.perf_counter() - start)
        except RuntimeError as exc:  # strict mode refusing an op is an expected outcome
            raised = _first_line(exc)
    # The median leaves out the first call's one-off kernel set-up (oneDNN: ~200 ms).
    ms = statistics.median(times) * 1000 if times else 0.0
    warning = next((str(w.message).splitlines()[0] for w in caught
                    if any(p in str(w.message) for p in DETERMINISM_WARNINGS)), None)
    return OpResult(op.name, device, mode, op.canary, torch.get_num_threads(), len(digests), raised, warning, ms)


def run_selftest(torch: ModuleType, device: str = "cpu", repeats: int = DEFAULT_REPEATS) -> SelfTest:
    """Run the ops for ``device`` ("cpu" or "cuda"); "cuda" initializes CUDA if it was not."""
    if device not in OPS:
        raise ValueError(f"self-test device must be one of {sorted(OPS)}, not {device!r}")
    if device == "cuda" and not torch.cuda.is_available():
        raise CannotEvaluate("the CUDA self-test needs a CUDA device, and torch sees none here")
    was_initialized = bool(torch.cuda.is_initialized())
    fork_devices = [torch.cuda.current_device()] if device == "cuda" else []
    saved = (torch.are_deterministic_algorithms_enabled(), torch.is_deterministic_algorithms_warn_only_enabled())
    threads = torch.get_num_threads()
    results = []
    try:
        with torch.random.fork_rng(devices=fork_devices):
            for op in OPS[device]:
                torch.set_num_threads(max(threads, op.min_threads))
                try:
                    thunk = op.build(torch, device)
                except RuntimeError as exc:  # e.g. a backend this GPU lacks
                    results += [OpResult(op.name, device, m, op.canary, threads, 0, _first_line(exc), None, 0.0)
                                for m in op.modes]
                    continue
                results += [_measure(torch, op, device, mode, thunk, repeats) for mode in op.modes]
    finally:
        torch.set_num_threads(threads)
        torch._C._set_deterministic_algorithms(saved[0], warn_only=saved[1])
    return SelfTest(device, repeats, threads,
                    initialized_cuda=device == "cuda" and not was_initialized, ops=tuple(results))
