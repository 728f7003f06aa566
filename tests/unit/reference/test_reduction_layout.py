"""Reference kernels of §2.9 (reduction), §2.10 (data layout), §2.11 (scatter/gather) and §2.14 (data nodes).

Expected values are hand computed from the spec pseudocode.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from nnkiln.ir.errors import TosaUnpredictable
from nnkiln.ir.text import parse_module
from nnkiln.reference import run

_ELEM = {
    np.dtype(np.bool_): "i1",
    np.dtype(np.int8): "i8",
    np.dtype(np.int16): "i16",
    np.dtype(np.int32): "i32",
    np.dtype(np.float16): "f16",
    np.dtype(ml_dtypes.bfloat16): "bf16",
    np.dtype(np.float32): "f32",
}


def ttype(shape: tuple[int, ...], elem: str) -> str:
    return f"tensor<{''.join(f'{d}x' for d in shape)}{elem}>"


def run_op(op: str, args: list[np.ndarray], out_shape: tuple[int, ...], attrs: str = "", out_elem: str | None = None) -> np.ndarray:
    in_types = [ttype(a.shape, _ELEM[a.dtype]) for a in args]
    out_type = ttype(out_shape, out_elem or _ELEM[args[0].dtype])
    params = ", ".join(f"%a{i}: {t}" for i, t in enumerate(in_types))
    operands = ", ".join(f"%a{i}" for i in range(len(args)))
    attr_text = f" {{{attrs}}}" if attrs else ""
    text = f"""
func.func @main({params}) -> {out_type} {{
  %r = tosa.{op} {operands}{attr_text} : ({", ".join(in_types)}) -> {out_type}
  func.return %r : {out_type}
}}
"""
    return run(parse_module(text), {f"a{i}": a for i, a in enumerate(args)})["output0"]


INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1
X23 = np.array([[1, -2, 3], [4, 5, -6]], dtype=np.int32)

# ---------------------------------------------------------------------------------------------- reductions


def test_reduce_sum_keeps_rank():
    np.testing.assert_array_equal(run_op("reduce_sum", [X23], (1, 3), "axis = 0 : i64"), [[5, 3, -3]])
    np.testing.assert_array_equal(run_op("reduce_sum", [X23], (2, 1), "axis = 1 : i64"), [[2], [3]])


def test_reduce_sum_partial_sum_overflow_is_unpredictable():
    # The total INT32_MAX + 1 - 1 fits, but apply_add's running sum INT32_MAX + 1 does not.
    x = np.array([INT32_MAX, 1, -1], dtype=np.int32)
    with pytest.raises(TosaUnpredictable):
        run_op("reduce_sum", [x], (1,), "axis = 0 : i64")
    # In the other order every partial sum fits: INT32_MAX, INT32_MAX - 1, INT32_MAX.
    x = np.array([INT32_MAX, -1, 1], dtype=np.int32)
    np.testing.assert_array_equal(run_op("reduce_sum", [x], (1,), "axis = 0 : i64"), [INT32_MAX])


def test_reduce_sum_float():
    x = np.array([[0.5, 0.25], [1.0, 2.0]], dtype=np.float32)
    np.testing.assert_array_equal(run_op("reduce_sum", [x], (2, 1), "axis = 1 : i64"), [[0.75], [3.0]])


def test_reduce_max_min_int8():
    x = np.array([[-128, 5], [7, -3]], dtype=np.int8)
    np.testing.assert_array_equal(run_op("reduce_max", [x], (1, 2), "axis = 0 : i64"), [[7, 5]])
    np.testing.assert_array_equal(run_op("reduce_min", [x], (2, 1), "axis = 1 : i64"), [[-128], [-3]])


def test_reduce_max_min_propagate_nan():
    x = np.array([[1.0, np.nan], [2.0, 3.0]], dtype=np.float32)
    mx = run_op("reduce_max", [x], (2, 1), "axis = 1 : i64")
    mn = run_op("reduce_min", [x], (2, 1), "axis = 1 : i64")
    assert np.isnan(mx[0, 0]) and mx[1, 0] == 3.0
    assert np.isnan(mn[0, 0]) and mn[1, 0] == 2.0


def test_reduce_product_all_any():
    x = np.array([[1.5, 2.0], [-1.0, 4.0]], dtype=np.float32)
    np.testing.assert_array_equal(run_op("reduce_product", [x], (1, 2), "axis = 0 : i64"), [[-1.5, 8.0]])
    b = np.array([[True, False], [True, True]])
    np.testing.assert_array_equal(run_op("reduce_all", [b], (2, 1), "axis = 1 : i64"), [[False], [True]])
    np.testing.assert_array_equal(run_op("reduce_any", [b], (1, 2), "axis = 0 : i64"), [[True, True]])


# ---------------------------------------------------------------------------------------------- data layout


def test_concat():
    a = np.array([[1, 2]], dtype=np.int8)
    b = np.array([[3, 4], [5, 6]], dtype=np.int8)
    np.testing.assert_array_equal(run_op("concat", [a, b], (3, 2), "axis = 0 : i64"), [[1, 2], [3, 4], [5, 6]])


def test_pad_uses_pad_const():
    x = np.array([[1, 2], [3, 4]], dtype=np.int32)
    out = run_op("pad", [x], (3, 5), "padding = array<i64: 1, 0, 2, 1>, pad_const = -9 : i64")
    np.testing.assert_array_equal(out, [[-9, -9, -9, -9, -9], [-9, -9, 1, 2, -9], [-9, -9, 3, 4, -9]])


def test_pad_float_and_bool():
    x = np.array([1.5], dtype=np.float32)
    out = run_op("pad", [x], (3,), "padding = array<i64: 1, 1>, pad_const = 0.25 : f32")
    np.testing.assert_array_equal(out, [0.25, 1.5, 0.25])
    b = np.array([False])
    np.testing.assert_array_equal(run_op("pad", [b], (2,), "padding = array<i64: 0, 1>, pad_const = true"), [False, True])


def test_reshape_row_major():
    out = run_op("reshape", [X23], (3, 2), "new_shape = array<i64: 3, 2>")
    np.testing.assert_array_equal(out, [[1, -2], [3, 4], [5, -6]])


def test_reverse():
    np.testing.assert_array_equal(run_op("reverse", [X23], (2, 3), "axis = 1 : i64"), [[3, -2, 1], [-6, 5, 4]])
    np.testing.assert_array_equal(run_op("reverse", [X23], (2, 3), "axis = 0 : i64"), [[4, 5, -6], [1, -2, 3]])


def test_slice():
    out = run_op("slice", [X23], (1, 2), "start = array<i64: 1, 1>, size = array<i64: 1, 2>")
    np.testing.assert_array_equal(out, [[5, -6]])


def test_tile():
    x = np.array([[1, 2]], dtype=np.int16)
    out = run_op("tile", [x], (2, 4), "multiples = array<i64: 2, 2>")
    np.testing.assert_array_equal(out, [[1, 2, 1, 2], [1, 2, 1, 2]])


def test_transpose():
    x = np.arange(6, dtype=np.int32).reshape(1, 2, 3)
    out = run_op("transpose", [x], (3, 1, 2), "perms = array<i64: 2, 0, 1>")
    # output[i, j, k] = input[j, k, i]
    assert out.shape == (3, 1, 2)
    np.testing.assert_array_equal(out[:, 0, :], [[0, 3], [1, 4], [2, 5]])


# ---------------------------------------------------------------------------------------------- scatter / gather

VALUES = np.array([[[10, 11], [20, 21], [30, 31]]], dtype=np.int32)  # N=1, K=3, C=2


def test_gather():
    idx = np.array([[2, 0, 2]], dtype=np.int32)
    out = run_op("gather", [VALUES, idx], (1, 3, 2))
    np.testing.assert_array_equal(out, [[[30, 31], [10, 11], [30, 31]]])


@pytest.mark.parametrize("bad", [3, -1])
def test_gather_index_out_of_range_is_unpredictable(bad):
    with pytest.raises(TosaUnpredictable):
        run_op("gather", [VALUES, np.array([[0, bad]], dtype=np.int32)], (1, 2, 2))


def test_scatter():
    idx = np.array([[2, 0]], dtype=np.int32)
    data = np.array([[[-1, -2], [-3, -4]]], dtype=np.int32)
    out = run_op("scatter", [VALUES, idx, data], (1, 3, 2))
    np.testing.assert_array_equal(out, [[[-3, -4], [20, 21], [-1, -2]]])


def test_scatter_duplicate_index_is_unpredictable():
    idx = np.array([[1, 1]], dtype=np.int32)
    data = np.zeros((1, 2, 2), dtype=np.int32)
    with pytest.raises(TosaUnpredictable):
        run_op("scatter", [VALUES, idx, data], (1, 3, 2))


def test_scatter_index_out_of_range_is_unpredictable():
    with pytest.raises(TosaUnpredictable):
        run_op("scatter", [VALUES, np.array([[3]], dtype=np.int32), np.zeros((1, 1, 2), np.int32)], (1, 3, 2))
