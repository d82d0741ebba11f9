"""Fingerprints of the random number generators, taken without drawing from them."""

from __future__ import annotations

import hashlib
import random
import sys
from types import ModuleType
from typing import Any

from .evaluate import Verdict, bad, na, ok
from .hashing import tensors_sha256

# torch.initial_seed() of a never-seeded process is a random 64-bit value; hand-picked seeds
# are almost always below 2**32 (Lightning even caps them there).
SEEDED_LIMIT = 2**32


def python_random_sha256() -> str:
    return hashlib.sha256(repr(random.getstate()).encode()).hexdigest()


def numpy_legacy_sha256() -> str | None:
    # Only a numpy the process already imported can have been seeded; importing it here would
    # fingerprint a fresh, meaningless state.
    np = sys.modules.get("numpy")
    if np is None:
        return None
    name, keys, pos, has_gauss, cached = np.random.get_state(legacy=True)
    h = hashlib.sha256(name.encode())
    h.update(keys.tobytes())
    h.update(repr((int(pos), int(has_gauss), float(cached))).encode())
    return h.hexdigest()


def in_dataloader_worker(torch: ModuleType) -> bool:
    return torch.utils.data.get_worker_info() is not None


def rng_state(torch: ModuleType, pythonhashseed: str) -> dict[str, Any]:
    seed = torch.initial_seed()
    cuda_seeds = None
    if torch.cuda.is_initialized():
        cuda_seeds = [g.initial_seed() for g in torch.cuda.default_generators]
    return {
        "torch_initial_seed": seed,
        "seeded_hint": seed < SEEDED_LIMIT,
        "torch_cpu_state_sha256": tensors_sha256([torch.get_rng_state()]),
        "cuda_initial_seeds": cuda_seeds,
        "numpy_legacy_state_sha256": numpy_legacy_sha256(),
        "python_random_state_sha256": python_random_sha256(),
        "pythonhashseed_effective": pythonhashseed,
    }


def judge_seeded(rng: dict[str, Any], in_worker: bool) -> Verdict:
    if in_worker:
        return na("inside a DataLoader worker the seed is base_seed + worker_id, which looks unseeded")
    if rng["seeded_hint"]:
        return ok()
    return bad("RLP007", "the default torch generator was never seeded: initial_seed() is a random "
                         "64-bit value, so weights, dropout and shuffling change every run")
