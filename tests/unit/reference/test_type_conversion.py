"""CAST and RESCALE (spec §2.13); CLAMP / SIGMOID / TANH (§2.4). Expected values by hand."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from nnkiln.dialects.tosa.base import Kind
from nnkiln.ir.errors import TosaUnpredictable
from nnkiln.reference.activation import clamp, sigmoid, tanh
from nnkiln.reference.registry import KERNELS, KernelCall
from nnkiln.reference.type_conversion import cast, rescale

BF16 = ml_dtypes.bfloat16


def _call(op: str, inputs, attrs, kind: Kind, dtype):
    call = KernelCall(name="test", inputs=inputs, attrs=attrs, out_kinds=[kind],
                      out_dtypes=[np.dtype(dtype)], out_shapes=[inputs[0].shape])
    return KERNELS[op](call)[0]


# ----------------------------------------------------------------------------------------------
# CAST


def test_cast_float_to_int_half_even_saturate_nan() -> None:
    x = np.array([2.5, 3.5, -2.5, -0.5, 0.5, 1.4999, 127.5, 200, -200, np.inf, -np.inf, np.nan], np.float32)
    out = cast(x, np.int8)
    assert out.dtype == np.int8
    # ties to even; 127.5 -> 128 -> saturates to 127; +-inf saturate; NaN -> 0 (decision)
    assert out.tolist() == [2, 4, -2, 0, 0, 1, 127, 127, -128, 127, -128, 0]


def test_cast_fp16_bf16_to_int() -> None:
    h = np.array([65504, -65504, 1.5, -1.5], np.float16)
    assert cast(h, np.int16).tolist() == [32767, -32768, 2, -2]
    b = np.array([3e38, -3e38, 2.5], np.float32).astype(BF16)
    assert cast(b, np.int32).tolist() == [2147483647, -2147483648, 2]


def test_cast_int_narrowing_truncates() -> None:
    x = np.array([300, -129, 128, 255, -1, 65536 + 7], np.int32)
    assert cast(x, np.int8).tolist() == [44, 127, -128, -1, -1, 7]
    assert cast(np.array([70000, -32769], np.int32), np.int16).tolist() == [70000 - 65536, 32767]
    assert cast(np.array([-1, 127], np.int8), np.int32).tolist() == [-1, 127]


def test_cast_bool() -> None:
    assert cast(np.array([0, 5, -1], np.int32), np.bool_).tolist() == [False, True, True]
    out = cast(np.array([True, False]), np.int16)
    assert out.dtype == np.int16 and out.tolist() == [1, 0]


def test_cast_int_to_float_round_half_even_single_rounding() -> None:
    # bf16 has 8 significant bits: in [256, 512) the spacing is 2; 257 -> 256 (even), 259 -> 260
    # 2^24 + 2^16 + 1 is just above the midpoint of 2^24 and 2^24 + 2^17 -> 2^24 + 2^17
    # (via fp32 it would first round to 2^24 + 2^16, a tie, and then to 2^24)
    x = np.array([257, 259, (1 << 24) + (1 << 16) + 1, -257], np.int32)
    out = cast(x, BF16)
    assert out.dtype == np.dtype(BF16)
    assert out.astype(np.float64).tolist() == [256, 260, (1 << 24) + (1 << 17), -256]
    # fp16: spacing 2 in [2048, 4096); 65519 -> 65504, 65520 -> inf (IEEE overflow), -70000 -> -inf
    h = cast(np.array([2049, 2051, 65519, 65520, -70000], np.int32), np.float16)
    assert h.astype(np.float64).tolist() == [2048, 2052, 65504, np.inf, -np.inf]
    f = cast(np.array([(1 << 24) + 1, (1 << 24) + 3], np.int32), np.float32)
    assert f.astype(np.float64).tolist() == [1 << 24, (1 << 24) + 4]


def test_cast_kernel() -> None:
    out = _call("tosa.cast", [np.array([1.5, -7.9], np.float32)], {}, Kind.I16, np.int16)
    assert out.dtype == np.int16 and out.tolist() == [2, -8]


# ----------------------------------------------------------------------------------------------
# RESCALE


def test_rescale_per_channel_zero_points() -> None:
    # scale32, per channel: c0 = (2^30, 30) = 1, c1 = (2^30, 31) = 0.5, c2 = (3*2^29, 31) = 0.75
    # input_zp 10, output_zp -5:
    #  c0: -128 -> -138 -> -143 -> clip -128;   10 -> 0 -> -5
    #  c1: 0 -> -10 -> (-10*2^30 + 2^30) >> 31 = floor(-4.5) = -5 -> -10;   20 -> 10 -> 5 -> 0
    #  c2: 127 -> 117 -> (351*2^29 + 2*2^29) >> 31 = floor(88.25) = 88 -> 83;   30 -> 20 -> 15 -> 10
    x = np.array([[-128, 0, 127], [10, 20, 30]], np.int8)
    out = rescale(x, np.int8, 10, -5, [1 << 30, 1 << 30, 3 << 29], [30, 31, 31], True, False, True)
    assert out.tolist() == [[-128, -10, 83], [-5, 0, 10]]


def test_rescale_per_tensor_kernel() -> None:
    attrs = {"input_zp": 0, "output_zp": 0, "multiplier": (1 << 30,), "shift": (31,), "scale32": True,
             "double_round": False, "per_channel": False}
    x = np.array([1, -1, 3, -3, 1000], np.int32)
    out = _call("tosa.rescale", [x], attrs, Kind.I16, np.int16)
    assert out.tolist() == [1, 0, 2, -1, 500]


def test_rescale_unsigned() -> None:
    # uint8 -> int8 with input_zp 128 (unity scale): 0 -> -128, 255 -> 127, 128 -> 0
    u8 = np.array([0, 255, 128], np.uint8)
    assert rescale(u8, np.int8, 128, 0, [1 << 30], [30], True, False, False).tolist() == [-128, 127, 0]
    # int16 -> uint16 with output_zp 32768
    i16 = np.array([-32768, 32767, 0], np.int16)
    out = rescale(i16, np.uint16, 0, 32768, [1 << 30], [30], True, False, False)
    assert out.dtype == np.uint16 and out.tolist() == [0, 65535, 32768]
    # int8 -> uint8, scale 2 (2^30, 29), output_zp 128: 100 -> 328 -> 255; -100 -> -72 -> 0; 1 -> 130
    i8 = np.array([100, -100, 1], np.int8)
    assert rescale(i8, np.uint8, 0, 128, [1 << 30], [29], True, False, False).tolist() == [255, 0, 130]


def test_rescale_int48_scale16() -> None:
    # (2^40 * 2^14 + 2^23) >> 24 = 2^30;  -3 at scale 0.5 (2^14, 15): -2*2^14 / 2^15 = -1 (half up)
    x = np.array([1 << 40, -3], np.int64)
    out = rescale(x[:1], np.int32, 0, 0, [1 << 14], [24], False, False, False)
    assert out.tolist() == [1 << 30]
    assert rescale(x[1:], np.int32, 0, 0, [1 << 14], [15], False, False, False).tolist() == [-1]
    # result beyond int32: REQUIRE in apply_scale_16
    with pytest.raises(TosaUnpredictable):
        rescale(np.array([(1 << 47) - 1], np.int64), np.int32, 0, 0, [1 << 14], [14], False, False, False)


def test_rescale_double_round() -> None:
    # -2 at scale 1/4 (2^30, 32): plain (-2^31 + 2^31) >> 32 = 0; double_round -2^30 >> 32 = -1
    x = np.array([-2, 2], np.int32)
    assert rescale(x, np.int8, 0, 0, [1 << 30], [32], True, False, False).tolist() == [0, 1]
    assert rescale(x, np.int8, 0, 0, [1 << 30], [32], True, True, False).tolist() == [-1, 1]


def test_rescale_value_range_require() -> None:
    # shift 31 allows |value| < 2^29 only
    with pytest.raises(TosaUnpredictable):
        rescale(np.array([1 << 29], np.int32), np.int32, 0, 0, [1 << 30], [31], True, False, False)


# ----------------------------------------------------------------------------------------------
# CLAMP / SIGMOID / TANH


def test_clamp() -> None:
    x = np.array([-128, -5, 0, 5, 127], np.int8)
    assert clamp(x, -3, 4).tolist() == [-3, -3, 0, 4, 4]
    f = np.array([np.nan, -2.0, 0.5, 9.0], np.float32)
    out = clamp(f, -1.0, 1.0)
    assert np.isnan(out[0]) and out[1:].tolist() == [-1.0, 0.5, 1.0]
    # a bf16 bound is rounded to bf16 first: 1.00390625 (1 + 2^-8) is a tie -> 1.0
    b = np.array([3.0, -3.0], np.float32).astype(BF16)
    out = _call("tosa.clamp", [b], {"min_val": -2.0, "max_val": 1.00390625}, Kind.BF16, BF16)
    assert out.astype(np.float32).tolist() == [1.0, -2.0]
    with pytest.raises(TosaUnpredictable):
        clamp(x, 4, 3)


def test_sigmoid_tanh() -> None:
    x = np.array([0.0, 100.0, -100.0, 1.0], np.float32)
    s = sigmoid(x)
    assert s[:3].tolist() == [0.5, 1.0, 0.0]
    assert abs(float(s[3]) - 1 / (1 + np.exp(-1.0))) < 1e-6
    t = tanh(np.array([0.0, 50.0, -50.0], np.float16))
    assert t.dtype == np.float16 and t.tolist() == [0.0, 1.0, -1.0]
