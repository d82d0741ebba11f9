"""Tensor digests: the raw bytes of every dtype, read without a Python call per byte."""

from __future__ import annotations

import pytest
from probe_helpers import needs_torch, torch_fixture  # noqa: F401 (fixtures)

from repro_lint.probe.hashing import raw_bytes, tensors_sha256

pytestmark = needs_torch

DTYPES = ("float32", "float16", "bfloat16", "float64", "int64", "int8", "uint8", "bool", "complex64")


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(3, 5), (), (0, 4), (2, 3, 4)])
def test_raw_bytes_are_the_storages(torch, dtype, shape):
    data = (torch.randn(shape) * 100).to(getattr(torch, dtype))
    assert bytes(raw_bytes(data)) == bytes(data.untyped_storage())


def test_without_numpy_the_bytes_and_the_digest_are_the_same(torch, monkeypatch):
    data = [torch.randn(4, 3), torch.randn(7).to(torch.bfloat16)]
    with_numpy = tensors_sha256(data)

    def no_numpy(self, *args, **kwargs):
        raise RuntimeError("Numpy is not available")

    monkeypatch.setattr(torch.Tensor, "numpy", no_numpy)
    assert raw_bytes(data[1]) == bytes(data[1].untyped_storage())
    assert tensors_sha256(data) == with_numpy


def test_a_view_hashes_as_its_own_data(torch):
    base = torch.arange(20, dtype=torch.float32)
    assert tensors_sha256([base[5:10]]) == tensors_sha256([base[5:10].clone()])
    assert tensors_sha256([base[5:10]]) != tensors_sha256([base[5:11]])
