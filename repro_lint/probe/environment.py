"""Versions, devices and threads: the fingerprint that explains why two machines differ."""

from __future__ import annotations

import platform
import re
import sys
from importlib import metadata
from types import ModuleType
from typing import Any

# Distribution names, looked up in package metadata so that nothing gets imported.
PACKAGES = ("numpy", "transformers", "lightning", "pytorch-lightning", "accelerate",
            "transformer-engine", "flash-attn", "opt-einsum")


def installed_packages() -> dict[str, str | None]:
    versions: dict[str, str | None] = {}
    for name in PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = None
    return versions


def major_minor(version: str) -> tuple[int, int]:
    m = re.match(r"(\d+)\.(\d+)", version)
    if m is None:
        raise ValueError(f"unrecognised torch version {version!r}")
    return int(m.group(1)), int(m.group(2))


def cuda_available(torch: ModuleType) -> bool:
    # is_available() asks the driver for a device count without creating a CUDA context.
    return bool(torch.cuda.is_available())


def torch_environment(torch: ModuleType) -> dict[str, Any]:
    available = cuda_available(torch)
    initialized = bool(torch.cuda.is_initialized())
    out: dict[str, Any] = {
        "version": str(torch.__version__),
        "cuda": torch.version.cuda,
        "hip": getattr(torch.version, "hip", None),
        "cuda_available": available,
        "cuda_initialized": initialized,
        "device_count": torch.cuda.device_count() if available else 0,
        # Device names and the cuDNN version initialize CUDA, so only report them once the
        # user's code has done so.
        "devices": None,
        "cudnn_version": None,
        "cpu_capability": torch.backends.cpu.get_cpu_capability(),
        "num_threads": torch.get_num_threads(),
        "num_interop_threads": torch.get_num_interop_threads(),
    }
    if initialized:
        out["devices"] = [{"name": torch.cuda.get_device_name(i),
                           "capability": list(torch.cuda.get_device_capability(i))}
                          for i in range(torch.cuda.device_count())]
        out["cudnn_version"] = torch.backends.cudnn.version()
    return out


def describe_environment(torch: ModuleType | None, packages: dict[str, str | None]) -> dict[str, Any]:
    return {
        "python": platform.python_version(),
        "implementation": platform.python_implementation(),
        "platform": platform.platform(),
        "hash_randomization": bool(sys.flags.hash_randomization),
        "torch": None if torch is None else torch_environment(torch),
        "distributed": None if torch is None else distributed_state(torch),
        "packages": packages,
    }


def distributed_state(torch: ModuleType) -> dict[str, Any]:
    dist = getattr(torch, "distributed", None)
    if dist is None or not dist.is_available() or not dist.is_initialized():
        return {"initialized": False, "backend": None, "world_size": None, "rank": None}
    return {"initialized": True, "backend": str(dist.get_backend()), "world_size": dist.get_world_size(),
            "rank": dist.get_rank()}
