"""``kernels.integer`` (int32 / bool elementwise fast paths) against the reference kernels, bit for bit.

The oracle is the reference interpreter's kernel for the same op and operands (``call_reference``, the spec's
pseudocode); overflowing int32 results must raise the reference's REQUIRE error, not wrap.
"""

from __future__ import annotations

import numpy as np
import pytest

from nnkiln.blob.format import BufferDesc, Memory
from nnkiln.kinds import Kind
from nnkiln.runtime.kernels import fast, integer
from nnkiln.runtime.kernels.reference import call_reference

RNG = np.random.default_rng(11)
I32, BOOL, F32 = Kind.I32, Kind.BOOL, Kind.F32
_NP = {I32: np.int32, BOOL: np.bool_, F32: np.float32}


def _desc(kind: Kind, shape: tuple[int, ...]) -> BufferDesc:
    return BufferDesc(Memory.ARENA, kind, shape, 0, int(np.prod(shape)) * np.dtype(_NP[kind]).itemsize)


def _data(kind: Kind, shape: tuple[int, ...], big: bool = False) -> np.ndarray:
    if kind is BOOL:
        return RNG.random(shape) < 0.5
    if kind is F32:
        return RNG.standard_normal(shape).astype(np.float32)
    hi = 1 << 30 if big else 1000
    return RNG.integers(-hi, hi, shape).astype(np.int32)


def _both(name: str, kinds: list[Kind], shapes: list[tuple[int, ...]], out: Kind, out_shape: tuple[int, ...],
          data: list[np.ndarray], attrs: dict | None = None) -> tuple[np.ndarray, np.ndarray]:
    attrs = attrs or {}
    fn = fast.build(name, attrs, [_desc(k, s) for k, s in zip(kinds, shapes)], [_desc(out, out_shape)],
                    [None] * len(kinds))
    assert fn is not None
    got = np.zeros(out_shape, _NP[out])
    fn(data, [got], [])
    want = call_reference(name, data, attrs, kinds, [out], [np.dtype(_NP[out])], [out_shape])[0]
    return got, np.asarray(want)


@pytest.mark.parametrize("name", ["tosa.add", "tosa.sub", "tosa.mul", "tosa.maximum", "tosa.minimum"])
@pytest.mark.parametrize("shapes", [[(1, 128), (1, 1)], [(3, 1, 5), (1, 4, 5)], [(7,), (7,)]])
def test_int32_binary_ops_equal_the_reference(name: str, shapes: list) -> None:
    out_shape = np.broadcast_shapes(*shapes)
    got, want = _both(name, [I32, I32], shapes, I32, out_shape, [_data(I32, s) for s in shapes],
                      {"shift": 0} if name == "tosa.mul" else None)
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("name", ["tosa.greater", "tosa.greater_equal", "tosa.equal"])
def test_int32_comparisons_equal_the_reference(name: str) -> None:
    a, b = _data(I32, (4, 6)), _data(I32, (1, 6))
    b[0, :3] = a[0, :3]  # some ties
    got, want = _both(name, [I32, I32], [(4, 6), (1, 6)], BOOL, (4, 6), [a, b])
    assert got.dtype == np.bool_
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("kind", [I32, BOOL, F32])
def test_select_equals_the_reference(kind: Kind) -> None:
    shapes = [(2, 1, 5), (2, 3, 5), (1, 3, 1)]
    data = [_data(BOOL, shapes[0]), _data(kind, shapes[1]), _data(kind, shapes[2])]
    got, want = _both("tosa.select", [BOOL, kind, kind], shapes, kind, (2, 3, 5), data)
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("name", ["tosa.add", "tosa.sub"])
def test_int32_overflow_raises_the_reference_error(name: str) -> None:
    a = np.array([(1 << 31) - 1, 5], np.int32)
    b = np.array([1 if name == "tosa.add" else -1, 2], np.int32)
    fn = fast.build(name, {}, [_desc(I32, (2,))] * 2, [_desc(I32, (2,))], [None, None])
    with pytest.raises(Exception) as ours:
        fn([a, b], [np.zeros(2, np.int32)], [])
    with pytest.raises(Exception) as ref:
        call_reference(name, [a, b], {}, [I32, I32], [I32], [np.dtype(np.int32)], [(2,)])
    assert type(ours.value) is type(ref.value) and str(ours.value) == str(ref.value)
    assert "fits int32" in str(ours.value)


def test_int32_mul_keeps_the_low_32_bits_as_the_reference() -> None:
    a = np.array([(1 << 31) - 1, -(1 << 31), 65536, 7], np.int32)
    b = np.array([2, -1, 65536, -3], np.int32)
    got, want = _both("tosa.mul", [I32, I32], [(4,), (4,)], I32, (4,), [a, b], {"shift": 0})
    np.testing.assert_array_equal(got, want)
    assert got[2] == 0 and got[0] == -2  # wrapped, not an error


def test_other_cases_stay_on_the_reference() -> None:
    assert integer.build("tosa.mul", {"shift": 3}, [_desc(I32, (4,))] * 2, [_desc(I32, (4,))]) is None
    assert integer.build("tosa.add", {}, [_desc(I32, (4,)), _desc(I32, (3,))], [_desc(I32, (4,))]) is None
    assert integer.build("tosa.intdiv", {}, [_desc(I32, (4,))] * 2, [_desc(I32, (4,))]) is None
    assert integer.build("tosa.select", {}, [_desc(I32, (4,))] * 3, [_desc(I32, (4,))]) is None


def _bound(name: str, kinds: list[Kind], out: Kind, data: list[np.ndarray], attrs: dict | None = None
           ) -> tuple[int, np.ndarray]:
    """Run the kernel's bound form (``nk_int_ew``) alone: (return code, result)."""
    import ctypes

    from nnkiln.runtime.kernels.conv import native_lib

    out_shape = np.broadcast_shapes(*(d.shape for d in data))
    fn = fast.build(name, attrs or {}, [_desc(k, d.shape) for k, d in zip(kinds, data)], [_desc(out, out_shape)],
                    [None] * len(kinds))
    got = np.zeros(out_shape, _NP[out])
    b = fn.bind(data, [got], [])
    assert b is not None
    (addr, args), = b.calls
    call = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_int)(addr)
    assert native_lib() is not None
    return call(args.ctypes.data, 1), got


@pytest.mark.native
@pytest.mark.parametrize("name", ["tosa.add", "tosa.sub", "tosa.mul", "tosa.maximum", "tosa.minimum", "tosa.greater",
                                  "tosa.greater_equal", "tosa.equal", "tosa.select"])
@pytest.mark.parametrize("scalar", [None, 0, 1])
def test_native_form_equals_the_reference(name: str, scalar: int | None) -> None:
    """``nk_int_ew`` (what chains run) bit for bit as the reference; an operand may be one element (step 0)."""
    select = name == "tosa.select"
    kinds = [BOOL, I32, I32] if select else [I32, I32]
    shapes = [(2, 65)] * len(kinds)
    if scalar is not None:
        shapes[scalar + int(select)] = (1, 1)
    data = [_data(k, s, big=name == "tosa.mul") for k, s in zip(kinds, shapes)]
    out = BOOL if name in ("tosa.greater", "tosa.greater_equal", "tosa.equal") else I32
    rc, got = _bound(name, kinds, out, data, {"shift": 0} if name == "tosa.mul" else None)
    want = call_reference(name, data, {"shift": 0} if name == "tosa.mul" else {}, kinds, [out], [np.dtype(_NP[out])],
                          [got.shape])[0]
    assert rc == 0
    np.testing.assert_array_equal(got, want)


@pytest.mark.native
def test_native_form_fails_cleanly_on_overflow() -> None:
    a = np.array([[1, 2, (1 << 31) - 1]], np.int32)
    rc, got = _bound("tosa.add", [I32, I32], I32, [a, np.ones((1, 1), np.int32)])
    assert rc == 1 and not got.any()  # nothing written: the chain runs the unit's own path, which reports it
