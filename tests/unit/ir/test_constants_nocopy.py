"""Constants without needless copies: ``from_numpy`` reuses a ``bytes`` object an array views whole,
copies otherwise (once, in C order); the graph builder deduplicates equal constants without hashing
all their bytes, and keeps different ones apart even when they agree on the sampled bytes."""

from __future__ import annotations

import numpy as np
from xdsl.dialects.builtin import TensorType, f32

from nnkiln.frontends.common.graph import GraphBuilder
from nnkiln.ir.elements import from_numpy, to_numpy


def test_a_view_of_a_whole_bytes_object_is_not_copied():
    raw = np.arange(12, dtype=np.float32).tobytes()
    arr = np.frombuffer(raw, dtype=np.float32).reshape(3, 4)
    attr = from_numpy(arr)
    assert attr.data.data is raw
    assert to_numpy(attr).tolist() == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 10, 11]]


def test_partial_or_strided_views_are_copied_in_c_order():
    raw = np.arange(12, dtype=np.float32).tobytes()
    arr = np.frombuffer(raw, dtype=np.float32).reshape(3, 4)
    part = from_numpy(arr[1:])
    assert part.data.data is not raw
    assert to_numpy(part).tolist() == [[4, 5, 6, 7], [8, 9, 10, 11]]
    tr = from_numpy(arr.T)
    assert to_numpy(tr).tolist() == [[0, 4, 8], [1, 5, 9], [2, 6, 10], [3, 7, 11]]
    assert len(tr.data.data) == 12 * 4


def test_conversion_to_the_storage_dtype_still_happens():
    raw = np.arange(4, dtype=np.int64).tobytes()
    arr = np.frombuffer(raw, dtype=np.int64)
    attr = from_numpy(arr, TensorType(f32, [4]))
    assert attr.data.data is not raw
    assert to_numpy(attr).dtype == np.float32 and to_numpy(attr).tolist() == [0.0, 1.0, 2.0, 3.0]


def test_a_scalar_broadcasts_to_the_type():
    attr = from_numpy(np.float32(2.5), TensorType(f32, [2, 2]))
    assert to_numpy(attr).tolist() == [[2.5, 2.5], [2.5, 2.5]]


def test_graph_constants_are_deduplicated_by_value():
    g = GraphBuilder("test.onnx", [])
    big = np.zeros(100_000, dtype=np.float32)
    a = g.const(big)
    b = g.const(big.copy())
    assert a is b
    small = g.const(np.array([1.0, 2.0], dtype=np.float32))
    assert g.const(np.array([1.0, 2.0], dtype=np.float32)) is small
    # same values, other type: a different constant
    assert g.const(np.array([1, 2], dtype=np.int32)) is not small


def test_graph_constants_that_differ_only_outside_the_sample_stay_apart():
    g = GraphBuilder("test.onnx", [])
    n = 100_000  # 400 000 bytes: the sample is both ends and every 390th byte
    x = np.zeros(n, dtype=np.float32)
    y = x.copy()
    y[n // 2 + 1] = 1.0  # bytes 200004..200007: not at either end; 200004 / 390 and 200007 / 390 are not whole
    assert g.const(x) is not g.const(y)
    assert g.const(y.copy()) is g.const(y)
