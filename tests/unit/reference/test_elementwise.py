"""Reference kernels of §2.5–2.8, run end to end on one-op graphs.

Expected values are computed by hand from the spec pseudocode (noted next to each case).
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
    dims = "".join(f"{d}x" for d in shape)
    return f"tensor<{dims}{elem}>"


def run_op(op: str, args: list[np.ndarray], out_elem: str, attrs: str = "", out_shape: tuple[int, ...] | None = None) -> np.ndarray:
    """Run ``%r = tosa.<op> %a0, %a1, ... {attrs}`` on ``args`` and return the result."""
    in_types = [ttype(a.shape, _ELEM[a.dtype]) for a in args]
    if out_shape is None:
        out_shape = np.broadcast_shapes(*[a.shape for a in args])
    out_type = ttype(tuple(out_shape), out_elem)
    params = ", ".join(f"%a{i}: {t}" for i, t in enumerate(in_types))
    operands = ", ".join(f"%a{i}" for i in range(len(args)))
    attr_text = f" {{{attrs}}}" if attrs else ""
    text = f"""
func.func @main({params}) -> {out_type} {{
  %r = tosa.{op} {operands}{attr_text} : ({", ".join(in_types)}) -> {out_type}
  func.return %r : {out_type}
}}
"""
    outs = run(parse_module(text), {f"a{i}": a for i, a in enumerate(args)})
    return outs["output0"]


def i32(*v: int) -> np.ndarray:
    return np.array(v, dtype=np.int32)


def f32(*v: float) -> np.ndarray:
    return np.array(v, dtype=np.float32)


INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1


# ---------------------------------------------------------------------------------------------- ADD / SUB


def test_add_int32_and_broadcast():
    a = np.array([[1, 2, 3]], dtype=np.int32)
    b = np.array([[10], [20]], dtype=np.int32)
    out = run_op("add", [a, b], "i32")
    assert out.dtype == np.int32
    np.testing.assert_array_equal(out, [[11, 12, 13], [21, 22, 23]])


@pytest.mark.parametrize("op,a,b", [("add", INT32_MAX, 1), ("add", INT32_MIN, -1), ("sub", INT32_MIN, 1), ("sub", 0, INT32_MIN)])
def test_add_sub_int32_overflow_is_unpredictable(op, a, b):
    with pytest.raises(TosaUnpredictable):
        run_op(op, [i32(a), i32(b)], "i32")


def test_add_sub_at_the_limits_are_fine():
    np.testing.assert_array_equal(run_op("add", [i32(INT32_MAX - 1), i32(1)], "i32"), [INT32_MAX])
    np.testing.assert_array_equal(run_op("sub", [i32(-1), i32(INT32_MAX)], "i32"), [INT32_MIN])


def test_add_float_inf_minus_inf_is_nan():
    out = run_op("add", [f32(np.inf, 1.5), f32(-np.inf, 2.25)], "f32")
    assert np.isnan(out[0]) and out[1] == 3.75


def test_sub_fp16_rounds_to_fp16():
    # 1 + 2^-11 is halfway between fp16 1.0 and 1.0 + 2^-10: rounds to even (1.0).
    a = np.array([1.0, 3.0], dtype=np.float16)
    b = np.array([-(2.0**-11), 0.5], dtype=np.float16)
    out = run_op("sub", [a, b], "f16")
    assert out.dtype == np.float16
    np.testing.assert_array_equal(out, np.array([1.0, 2.5], dtype=np.float16))


def test_add_bf16():
    a = np.array([1.0, 256.0], dtype=ml_dtypes.bfloat16)
    b = np.array([0.5, 1.0], dtype=ml_dtypes.bfloat16)
    out = run_op("add", [a, b], "bf16")
    assert out.dtype == np.dtype(ml_dtypes.bfloat16)
    # 256 + 1 = 257 needs 9 significant bits; bf16 has 8 → ties to even: 256.
    np.testing.assert_array_equal(out.astype(np.float32), [1.5, 256.0])


# ---------------------------------------------------------------------------------------------- shifts


def test_arithmetic_right_shift_without_round():
    # -7 >> 1 = -4 (floor), 7 >> 1 = 3, -1 >> 31 = -1, 100 >> 0 = 100
    out = run_op("arithmetic_right_shift", [i32(-7, 7, -1, 100), i32(1, 1, 31, 0)], "i32", "round = false")
    np.testing.assert_array_equal(out, [-4, 3, -1, 100])


def test_arithmetic_right_shift_with_round():
    # round adds bit (shift-1): -7 = ...11001: -7>>1 = -4, bit0 = 1 → -3; 7>>1 = 3, bit0 = 1 → 4;
    # 6>>2 = 1, bit1 of 6 = 1 → 2; 5>>2 = 1, bit1 of 5 = 0 → 1; shift 0 never rounds: 9.
    out = run_op("arithmetic_right_shift", [i32(-7, 7, 6, 5, 9), i32(1, 1, 2, 2, 0)], "i32", "round = true")
    np.testing.assert_array_equal(out, [-3, 4, 2, 1, 9])


def test_arithmetic_right_shift_int8_round():
    # -128 >> 7 = -1, bit6 of -128 is 0 → -1; 127 >> 7 = 0, bit 6 = 1 → 1; -65 >> 6 = -2, bit5 of -65 (0b10111111) = 1 → -1
    a = np.array([-128, 127, -65], dtype=np.int8)
    s = np.array([7, 7, 6], dtype=np.int8)
    out = run_op("arithmetic_right_shift", [a, s], "i8", "round = true")
    assert out.dtype == np.int8
    np.testing.assert_array_equal(out, [-1, 1, -1])


@pytest.mark.parametrize("dtype,elem,bad", [(np.int8, "i8", 8), (np.int16, "i16", 16), (np.int32, "i32", 32), (np.int32, "i32", -1)])
def test_arithmetic_right_shift_range_is_required(dtype, elem, bad):
    with pytest.raises(TosaUnpredictable):
        run_op("arithmetic_right_shift", [np.array([1], dtype), np.array([bad], dtype)], elem, "round = false")


def test_logical_left_shift_truncates_to_the_type_width():
    # int8: 0x41 << 2 = 0x104 → low 8 bits 0x04; 1 << 7 = 0x80 = -128; 1 << 8 = 0x100 → 0; -1 << 31 → 0 in 8 bits
    a = np.array([0x41, 1, 1, -1], dtype=np.int8)
    s = np.array([2, 7, 8, 31], dtype=np.int8)
    out = run_op("logical_left_shift", [a, s], "i8")
    np.testing.assert_array_equal(out, [4, -128, 0, 0])


def test_logical_left_shift_int32():
    out = run_op("logical_left_shift", [i32(1, 3, -1), i32(31, 30, 1)], "i32")
    # 1<<31 = 0x80000000 = INT32_MIN; 3<<30 = 0xC0000000 → -2^30; -1<<1 = -2
    np.testing.assert_array_equal(out, [INT32_MIN, -(2**30), -2])


def test_logical_left_shift_range_is_0_to_31_for_every_type():
    with pytest.raises(TosaUnpredictable):
        run_op("logical_left_shift", [np.array([1], np.int8), np.array([32], np.int8)], "i8")
    with pytest.raises(TosaUnpredictable):
        run_op("logical_left_shift", [i32(1), i32(-1)], "i32")


def test_logical_right_shift():
    # int8 -1 = 0xFF: >> 4 = 0x0F = 15; -128 = 0x80 >> 7 = 1; 0xFF >> 8 (allowed, <= 31) = 0
    a = np.array([-1, -128, -1], dtype=np.int8)
    s = np.array([4, 7, 8], dtype=np.int8)
    np.testing.assert_array_equal(run_op("logical_right_shift", [a, s], "i8"), [15, 1, 0])
    # int32 -1 >> 1 = 0x7FFFFFFF; INT32_MIN >> 31 = 1
    np.testing.assert_array_equal(run_op("logical_right_shift", [i32(-1, INT32_MIN), i32(1, 31)], "i32"), [INT32_MAX, 1])
    with pytest.raises(TosaUnpredictable):
        run_op("logical_right_shift", [i32(1), i32(32)], "i32")


# ---------------------------------------------------------------------------------------------- bitwise, logical


def test_bitwise_ops_int16():
    a = np.array([0x0F0F, -1], dtype=np.int16)
    b = np.array([0x00FF, 0x1234], dtype=np.int16)
    np.testing.assert_array_equal(run_op("bitwise_and", [a, b], "i16"), [0x000F, 0x1234])
    np.testing.assert_array_equal(run_op("bitwise_or", [a, b], "i16"), [0x0FFF, -1])
    np.testing.assert_array_equal(run_op("bitwise_xor", [a, b], "i16"), [0x0FF0, ~0x1234])


def test_logical_ops():
    a = np.array([True, True, False, False])
    b = np.array([True, False, True, False])
    np.testing.assert_array_equal(run_op("logical_and", [a, b], "i1"), [True, False, False, False])
    np.testing.assert_array_equal(run_op("logical_or", [a, b], "i1"), [True, True, True, False])
    np.testing.assert_array_equal(run_op("logical_xor", [a, b], "i1"), [False, True, True, False])
    np.testing.assert_array_equal(run_op("logical_not", [a], "i1"), [False, False, True, True])


# ---------------------------------------------------------------------------------------------- INTDIV


def test_intdiv_truncates_toward_zero():
    out = run_op("intdiv", [i32(-7, 7, 7, -7, 6, INT32_MIN), i32(2, 2, -2, -2, 3, 1)], "i32")
    np.testing.assert_array_equal(out, [-3, 3, -3, 3, 2, INT32_MIN])


def test_intdiv_by_zero_is_unpredictable():
    with pytest.raises(TosaUnpredictable, match="value2 != 0"):
        run_op("intdiv", [i32(1, 2), i32(1, 0)], "i32")


def test_intdiv_overflow_is_unpredictable():
    with pytest.raises(TosaUnpredictable):
        run_op("intdiv", [i32(INT32_MIN), i32(-1)], "i32")


# ---------------------------------------------------------------------------------------------- MUL


def test_mul_int8_to_int32():
    a = np.array([-128, 127], dtype=np.int8)
    b = np.array([-128, 127], dtype=np.int8)
    out = run_op("mul", [a, b], "i32")
    assert out.dtype == np.int32
    np.testing.assert_array_equal(out, [16384, 16129])


def test_mul_int32_wraps_to_low_32_bits():
    # 65536 * 65536 = 2^32 → low 32 bits 0; 65536 * 32768 = 2^31 → INT32_MIN; 3 * -5 = -15
    out = run_op("mul", [i32(65536, 65536, 3), i32(65536, 32768, -5)], "i32")
    np.testing.assert_array_equal(out, [0, INT32_MIN, -15])


def test_mul_int32_shift_rounds_half_up():
    # shift 1: 3*1 = 3 → (3+1)>>1 = 2; -3 → (-3+1)>>1 = -1; 5 → 3; -5 → -2; 4 → 2
    out = run_op("mul", [i32(3, -3, 5, -5, 4), i32(1, 1, 1, 1, 1)], "i32", "shift = 1 : i64")
    np.testing.assert_array_equal(out, [2, -1, 3, -2, 2])
    # shift 2: 7*1 = 7 → (7+2)>>2 = 2; 6 → (6+2)>>2 = 2; 5 → 7>>2 = 1; -6 → -4>>2 = -1; -7 → -5>>2 = -2
    out = run_op("mul", [i32(7, 6, 5, -6, -7), i32(1, 1, 1, 1, 1)], "i32", "shift = 2 : i64")
    np.testing.assert_array_equal(out, [2, 2, 1, -1, -2])


def test_mul_int32_shift_63_does_not_overflow():
    # INT32_MIN^2 = 2^62; (2^62 + 2^62) >> 63 = 1
    out = run_op("mul", [i32(INT32_MIN, 0), i32(INT32_MIN, 5)], "i32", "shift = 63 : i64")
    np.testing.assert_array_equal(out, [1, 0])


def test_mul_int32_shift_result_must_fit():
    # 2^30 * 2^30 = 2^60; >> 1 = 2^59: does not fit int32
    with pytest.raises(TosaUnpredictable):
        run_op("mul", [i32(2**30), i32(2**30)], "i32", "shift = 1 : i64")


def test_mul_float():
    out = run_op("mul", [f32(0.0, 2.0), f32(np.inf, -1.5)], "f32")
    assert np.isnan(out[0]) and out[1] == -3.0


# ---------------------------------------------------------------------------------------------- MAXIMUM / MINIMUM / POW


def test_maximum_minimum_int32():
    a, b = i32(1, -5, INT32_MIN), i32(2, -6, INT32_MAX)
    np.testing.assert_array_equal(run_op("maximum", [a, b], "i32"), [2, -5, INT32_MAX])
    np.testing.assert_array_equal(run_op("minimum", [a, b], "i32"), [1, -6, INT32_MIN])


def test_maximum_minimum_propagate_nan():
    a, b = f32(np.nan, 1.0, 3.0), f32(1.0, np.nan, -2.0)
    mx = run_op("maximum", [a, b], "f32")
    mn = run_op("minimum", [a, b], "f32")
    assert np.isnan(mx[0]) and np.isnan(mx[1]) and mx[2] == 3.0
    assert np.isnan(mn[0]) and np.isnan(mn[1]) and mn[2] == -2.0


def test_pow():
    out = run_op("pow", [f32(2.0, 9.0, 0.0), f32(10.0, 0.5, 0.0)], "f32")
    np.testing.assert_array_equal(out, [1024.0, 3.0, 1.0])


# ---------------------------------------------------------------------------------------------- TABLE


def test_table_int8():
    table = np.arange(256, dtype=np.int32) - 128  # identity
    table = (-table).clip(-128, 127).astype(np.int8)  # table[i] = -(i - 128), clipped
    x = np.array([-128, -1, 0, 127], dtype=np.int8)
    # index = v + 128: 0 → 127 (clip of 128), 127 → 1, 128 → 0, 255 → -127
    out = run_op("table", [x, table], "i8", out_shape=(4,))
    np.testing.assert_array_equal(out, [127, 1, 0, -127])


def test_table_int16_interpolates():
    table = (np.arange(513, dtype=np.int64) * 8 - 2048).astype(np.int16)  # table[i] = 8i - 2048
    # v = 0: index 256, frac 0 → table[256] << 7 = 0
    # v = 64: index 256, frac 64 → (0 << 7) + 8 * 64 = 512
    # v = -32768: index 0, frac 0 → -2048 * 128 = -262144
    # v = 32767: index 511 (table 8*511 - 2048 = 2040), frac 127 → (2040 << 7) + 8 * 127 = 261120 + 1016 = 262136
    x = np.array([0, 64, -32768, 32767], dtype=np.int16)
    out = run_op("table", [x, table], "i32", out_shape=(4,))
    assert out.dtype == np.int32
    np.testing.assert_array_equal(out, [0, 512, -262144, 262136])


# ---------------------------------------------------------------------------------------------- unary


def test_abs():
    np.testing.assert_array_equal(run_op("abs", [i32(-5, 5, 0, INT32_MAX, -INT32_MAX)], "i32"), [5, 5, 0, INT32_MAX, INT32_MAX])
    with pytest.raises(TosaUnpredictable):
        run_op("abs", [i32(INT32_MIN)], "i32")
    out = run_op("abs", [f32(-0.0, -np.inf, np.nan, -2.5)], "f32")
    assert out[0] == 0.0 and not np.signbit(out[0])
    assert out[1] == np.inf and np.isnan(out[2]) and out[3] == 2.5


def test_bitwise_not():
    out = run_op("bitwise_not", [np.array([0, -1, 0x55], dtype=np.int8)], "i8")
    np.testing.assert_array_equal(out, [-1, 0, -0x56])


def test_ceil_floor():
    x = f32(1.5, -1.5, -0.0, np.inf, -0.25)
    c = run_op("ceil", [x], "f32")
    fl = run_op("floor", [x], "f32")
    np.testing.assert_array_equal(c, [2.0, -1.0, -0.0, np.inf, -0.0])
    assert np.signbit(c[2]) and np.signbit(c[4])  # ceil(-0.25) = -0
    np.testing.assert_array_equal(fl, [1.0, -2.0, -0.0, np.inf, -1.0])


def test_clz():
    # clz(0) = 32, clz(1) = 31, clz(negative) = 0, clz(INT32_MAX) = 1, clz(0x00010000) = 15
    out = run_op("clz", [i32(0, 1, -1, INT32_MIN, INT32_MAX, 0x10000)], "i32")
    np.testing.assert_array_equal(out, [32, 31, 0, 0, 1, 15])


def test_exp_special_values():
    out = run_op("exp", [f32(-np.inf, np.inf, -0.0, 0.0, np.nan)], "f32")
    assert out[0] == 0.0 and out[1] == np.inf and out[2] == 1.0 and out[3] == 1.0 and np.isnan(out[4])


def test_log_special_values():
    out = run_op("log", [f32(-np.inf, np.inf, -0.0, 0.0, -1.0, 1.0)], "f32")
    assert np.isnan(out[0]) and out[1] == np.inf and out[2] == -np.inf and out[3] == -np.inf
    assert np.isnan(out[4]) and out[5] == 0.0


def test_reciprocal_special_values():
    out = run_op("reciprocal", [f32(-np.inf, np.inf, -0.0, 0.0, 4.0)], "f32")
    assert out[0] == 0.0 and np.signbit(out[0]) and out[1] == 0.0 and not np.signbit(out[1])
    assert out[2] == -np.inf and out[3] == np.inf and out[4] == 0.25


def test_rsqrt_special_values():
    out = run_op("rsqrt", [f32(-np.inf, np.inf, -0.0, 0.0, -4.0, 4.0)], "f32")
    assert np.isnan(out[0]) and out[1] == 0.0 and out[2] == -np.inf and out[3] == np.inf
    assert np.isnan(out[4]) and out[5] == 0.5


def test_negate_int8_saturates_with_zero_points():
    x = np.array([-128, 127, 0, 5], dtype=np.int8)
    # zp 0: -(-128) = 128 → clip 127; -127; 0; -5
    np.testing.assert_array_equal(run_op("negate", [x], "i8", "input1_zp = 0 : i64, output_zp = 0 : i64"), [127, -127, 0, -5])
    # input1_zp = 10, output_zp = -20: -(v - 10) - 20 = -v - 10: 118; -137 → -128; -10; -15
    out = run_op("negate", [x], "i8", "input1_zp = 10 : i64, output_zp = -20 : i64")
    np.testing.assert_array_equal(out, [118, -128, -10, -15])


def test_negate_int16_saturates_and_int32_min_is_unpredictable():
    np.testing.assert_array_equal(run_op("negate", [np.array([-32768, 1], dtype=np.int16)], "i16"), [32767, -1])
    np.testing.assert_array_equal(run_op("negate", [i32(INT32_MAX, -7)], "i32"), [-INT32_MAX, 7])
    with pytest.raises(TosaUnpredictable):
        run_op("negate", [i32(INT32_MIN)], "i32")


def test_negate_float_flips_zero():
    out = run_op("negate", [f32(0.0, -0.0, np.inf)], "f32")
    assert np.signbit(out[0]) and not np.signbit(out[1]) and out[2] == -np.inf


# ---------------------------------------------------------------------------------------------- SELECT / comparisons


def test_select_broadcasts():
    cond = np.array([[True], [False]])
    a = np.array([[1, 2, 3]], dtype=np.int8)
    b = np.array([[-1, -2, -3]], dtype=np.int8)
    out = run_op("select", [cond, a, b], "i8")
    np.testing.assert_array_equal(out, [[1, 2, 3], [-1, -2, -3]])


def test_comparisons_int32():
    a, b = i32(1, 2, 3), i32(2, 2, 2)
    np.testing.assert_array_equal(run_op("equal", [a, b], "i1"), [False, True, False])
    np.testing.assert_array_equal(run_op("greater", [a, b], "i1"), [False, False, True])
    np.testing.assert_array_equal(run_op("greater_equal", [a, b], "i1"), [False, True, True])


def test_comparisons_with_nan_are_false_and_ignore_zero_sign():
    a = f32(np.nan, 1.0, np.nan, -0.0)
    b = f32(1.0, np.nan, np.nan, 0.0)
    for op in ("equal", "greater", "greater_equal"):
        out = run_op(op, [a, b], "i1")
        assert out.dtype == np.bool_
        assert not out[:3].any(), op
    assert run_op("equal", [a, b], "i1")[3]
    assert run_op("greater_equal", [a, b], "i1")[3]
    assert not run_op("greater", [a, b], "i1")[3]
