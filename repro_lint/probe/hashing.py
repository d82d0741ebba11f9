"""Bitwise digests of tensors (dtype, shape and raw bytes), for comparing results across runs."""

from __future__ import annotations

import hashlib
from typing import Any, Iterable


def update_with_tensor(h: Any, tensor: Any) -> None:
    # clone() gives a storage exactly as big as the data; views share a larger one.
    data = tensor.detach().cpu().contiguous().clone()
    h.update(f"{data.dtype}{tuple(data.shape)}".encode())
    h.update(bytes(data.untyped_storage()))


def tensors_sha256(tensors: Iterable[Any]) -> str:
    h = hashlib.sha256()
    for t in tensors:
        update_with_tensor(h, t)
    return h.hexdigest()
