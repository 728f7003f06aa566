"""TRANSPOSE and SLICE in the runtime: the C kernels (``nk_transpose32``, ``nk_permute32``) and the numpy paths
give exactly numpy's ``transpose`` / slice (a copy: bit for bit, any element type), whatever the tile remainders
and threads."""

from __future__ import annotations

import numpy as np
import pytest

from nnkiln.blob.format import BufferDesc, Memory
from nnkiln.kinds import Kind
from nnkiln.runtime import native
from nnkiln.runtime.kernels import conv as conv_mod
from nnkiln.runtime.kernels import fast

_KINDS = {np.dtype(np.float32): Kind.F32, np.dtype(np.int32): Kind.I32, np.dtype(np.int8): Kind.I8,
          np.dtype(np.bool_): Kind.BOOL}


def _desc(kind: Kind, shape: tuple[int, ...]) -> BufferDesc:
    return BufferDesc(Memory.ARENA, kind, tuple(shape), 0, 0)


def _run(x: np.ndarray, perms: tuple[int, ...]) -> np.ndarray:
    kind = _KINDS[x.dtype]
    out_shape = tuple(x.shape[p] for p in perms)
    fn = fast.build("tosa.transpose", {"perms": perms}, [_desc(kind, x.shape)], [_desc(kind, out_shape)], [None])
    assert fn is not None
    out = np.zeros(out_shape, x.dtype)
    fn([x], [out], [])
    return out


@pytest.mark.parametrize("shape,perms", [
    ((1, 40, 45, 19), (0, 3, 1, 2)),     # NHWC -> NCHW, 34200 elements: the C kernel, odd tile remainders
    ((2, 19, 37, 41), (0, 2, 3, 1)),     # NCHW -> NHWC, batch 2
    ((3, 129, 67), (0, 2, 1)),           # batched matrix transpose
    ((131, 257), (1, 0)),                # plain 2-D
    ((2, 8, 8, 300), (1, 2, 3, 0)),      # no kept prefix: P = 1
    ((4, 50, 3, 70), (0, 2, 1, 3)),      # the last axis stays: numpy rows
    ((2, 3, 4, 5), (3, 1, 0, 2)),        # not a swap of two groups
    ((1, 3, 224, 224), (0, 2, 3, 1)),    # narrow innermost output axis: the C kernel's narrow rows for 4 bytes
    ((2, 5, 40, 41), (0, 2, 3, 1)),      # 5 columns
    ((128, 4, 64), (1, 0, 2)),           # the last axis kept: nk_permute32 (a memcpy per row)
    ((2, 6, 130, 16), (0, 2, 1, 3)),     # [N, heads, H, D] -> [N, H, heads, D], 99840 elements: threads
    ((3, 2, 5, 7, 20), (4, 2, 0, 3, 1)), # any permutation of five axes (a row per element of the source stride)
])
@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.int8, np.bool_])
def test_transpose_equals_numpy(shape: tuple[int, ...], perms: tuple[int, ...], dtype: type) -> None:
    rng = np.random.default_rng(0)
    x = (rng.standard_normal(shape) * 100).astype(dtype)
    if dtype is np.float32:  # NaN payloads and infinities are moved, never interpreted
        x.reshape(-1)[::97] = np.nan
        x.reshape(-1)[5::101] = -np.inf
    got = _run(x, perms)
    np.testing.assert_array_equal(got, x.transpose(perms))
    assert got.view(np.uint8).tobytes() == np.ascontiguousarray(x.transpose(perms)).view(np.uint8).tobytes()


@pytest.mark.native
@pytest.mark.parametrize("threads", [1, 2, 3])
def test_native_kernel_remainders_and_threads(threads: int) -> None:
    lib = conv_mod.native_lib()
    rng = np.random.default_rng(1)
    # narrow rows (a < 8: columns read side by side, 8192 per work item), 8x8 blocks, wide items for small a
    for p, a, b in [(1, 8, 8), (3, 13, 11), (2, 37, 45), (1, 1000, 33), (2, 70, 129), (1, 1, 20000), (2, 2, 9000),
                    (2, 3, 17001), (1, 4, 8193), (3, 5, 333), (1, 7, 16385), (2, 8, 5000), (1, 16, 3001)]:
        x = rng.integers(-2**31, 2**31 - 1, (p, a, b), dtype=np.int64).astype(np.int32)
        out = np.zeros((p, b, a), np.int32)
        assert lib.nk_transpose32(x.ctypes.data, out.ctypes.data, p, a, b, threads) == 0
        np.testing.assert_array_equal(out, x.transpose(0, 2, 1))


@pytest.mark.native
@pytest.mark.parametrize("threads", [1, 2, 3])
def test_permute_kernel(threads: int) -> None:
    lib = conv_mod.native_lib()
    rng = np.random.default_rng(2)
    for shape, perms in [((5, 3, 17), (1, 0, 2)), ((2, 3, 4, 1000), (2, 0, 1, 3)), ((7, 9), (1, 0)), ((64,), (0,)),
                         ((2, 3, 5, 4, 3, 2), (5, 3, 1, 0, 2, 4))]:
        x = rng.integers(-2**31, 2**31 - 1, shape, dtype=np.int64).astype(np.int32)
        out_shape = tuple(shape[p] for p in perms)
        strides = [int(np.prod(shape[k + 1:])) for k in range(len(shape))]
        d = np.array(out_shape, np.int64)
        s = np.array([strides[p] for p in perms], np.int64)
        out = np.zeros(out_shape, np.int32)
        assert lib.nk_permute32(x.ctypes.data, out.ctypes.data, len(shape), d.ctypes.data, s.ctypes.data, threads) == 0
        np.testing.assert_array_equal(out, x.transpose(perms))


def test_swapped_groups() -> None:
    g = fast._swapped_groups
    assert g((1, 56, 56, 64), (0, 3, 1, 2)) == (1, 56 * 56, 64)
    assert g((2, 64, 56, 56), (0, 2, 3, 1)) == (2, 64, 56 * 56)
    assert g((5, 7), (1, 0)) == (1, 5, 7)
    assert g((2, 3, 4), (0, 1, 2)) is None  # identity
    assert g((2, 3, 4, 5), (0, 2, 1, 3)) is None  # the last axis stays
    assert g((2, 3, 4, 5), (3, 1, 0, 2)) is None


@pytest.mark.parametrize("shape,start,size", [
    ((1, 56, 56, 64), (0, 0, 0, 0), (1, 55, 55, 64)),   # ResNet's trim before a stride-2 1x1 convolution
    ((3, 7, 9), (1, 2, 3), (2, 4, 5)),
    ((40,), (5,), (30,)),
    ((2, 3, 4, 5, 6), (1, 0, 2, 1, 3), (1, 3, 2, 4, 2)),
])
@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.int8, np.bool_])
def test_slice_equals_numpy(shape: tuple[int, ...], start: tuple[int, ...], size: tuple[int, ...], dtype: type) -> None:
    """SLICE's fast path and, for 4-byte elements, its bound form (``nk_permute32`` over the box): numpy's slice."""
    import ctypes

    rng = np.random.default_rng(3)
    x = (rng.standard_normal(shape) * 100).astype(dtype)
    kind = _KINDS[x.dtype]
    fn = fast.build("tosa.slice", {"start": start, "size": size}, [_desc(kind, shape)], [_desc(kind, size)], [None])
    assert fn is not None
    want = x[tuple(slice(b, b + n) for b, n in zip(start, size))]
    out = np.zeros(size, dtype)
    fn([x], [out], [])
    np.testing.assert_array_equal(out, want)
    bind = getattr(fn, "bind", None)
    if np.dtype(dtype).itemsize != 4 or native.disabled():
        assert bind is None or np.dtype(dtype).itemsize == 4
        return
    assert conv_mod.native_lib() is not None, native.status()  # the bound form needs the library
    out2 = np.zeros(size, dtype)
    b = bind([x], [out2], [])
    (addr, args), = b.calls
    assert ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_int)(addr)(args.ctypes.data, 1) == 0
    np.testing.assert_array_equal(out2, want)
