"""int8 SOFTMAX exactly as TFLite's reference kernel (``reference_ops::Softmax``, gemmlowp fixed point).

The document leaves ``tfl.softmax`` TODO; TensorFlow's own TOSA legalization approximates gemmlowp's exp with
16-bit TABLE interpolation, and its peer ``tosa-converter-for-tflite`` differs from TFLite by one step on some
outputs (issue 23). Here every step of TFLite's arithmetic is reproduced:

1. ``diff = x - max(x)`` per row (int32, in [-255, 0]). Every int8 input difference has one of 256 values, so
   ``exp_on_negative_values(MultiplyByQuantizedMultiplierGreaterThanOne(diff, m, s))`` (gemmlowp's Q5.26 → Q0.31
   exp with its barrel shifter and Taylor polynomial, transcribed below in Python integers) and its
   ``Rescale<12>`` are tabulated at import; differences below ``diff_min`` get 0 (TFLite skips them, and a zero
   exp yields the output -128 TFLite writes for them). Both are read by GATHER from 256-entry int32 tables.
2. ``sum`` of the Q12.19 terms (REDUCE_SUM), then TFLite's ``GetReciprocal``: CLZ, the sum shifted to
   [2^31, 2^32) minus 2^31 (LOGICAL_LEFT_SHIFT, BITWISE_XOR with 2^31), and gemmlowp's
   ``one_over_one_plus_x_for_x_in_0_1``: three Newton-Raphson steps, each fixed-point product a
   ``SaturatingRoundingDoublingHighMul`` = MUL with shift 31 (``floor((a·b + 2^30) / 2^31)`` equals gemmlowp's
   nudged truncating division for both signs; its only saturating case, INT32_MIN², cannot occur here).
3. ``RoundingDivideByPOT(SRDHM(scale, exp), 35 - clz)`` by ARITHMETIC_RIGHT_SHIFT with rounding (the product is
   non-negative, so round half up is gemmlowp's half away from zero), minus 128, clamped, CAST to int8.

Deviation: a row whose exp sum reaches 2^28 (over 511 elements at the maximum) needs a shift above 31, which
gemmlowp's ``RoundingDivideByPOT`` does not define; the result there is taken as 0 (the mathematical value).
"""

from __future__ import annotations

import math

import numpy as np
from xdsl.dialects.builtin import TensorType
from xdsl.ir import SSAValue

from nnkiln.dialects.tosa.base import Kind, element_type
from nnkiln.frontends.common.arith import shape_of
from nnkiln.frontends.common.broadcast import reshape
from nnkiln.frontends.common.graph import GraphBuilder
from nnkiln.frontends.tflite.lowerings._common import quantize_multiplier, rescale_tfl

INT32_MAX = (1 << 31) - 1


def srdhm(a: int, b: int) -> int:
    """gemmlowp ``SaturatingRoundingDoublingHighMul`` on Python ints."""
    if a == b == -(1 << 31):
        return INT32_MAX
    ab = a * b
    v = ab + ((1 << 30) if ab >= 0 else 1 - (1 << 30))
    q = abs(v) >> 31
    return q if v >= 0 else -q


def rounding_divide_by_pot(x: int, exponent: int) -> int:
    mask = (1 << exponent) - 1
    remainder = x & mask
    threshold = (mask >> 1) + (1 if x < 0 else 0)
    return (x >> exponent) + (1 if remainder > threshold else 0)


def _exp_on_interval(a: int) -> int:
    """gemmlowp ``exp_on_interval_between_negative_one_quarter_and_0_excl`` (Q0.31)."""
    constant_term, one_third = 1895147668, 715827883
    x = a + (1 << 28)
    x2 = srdhm(x, x)
    x3 = srdhm(x2, x)
    x4 = srdhm(x2, x2)
    x4_over_4 = rounding_divide_by_pot(x4, 2)
    poly = rounding_divide_by_pot(srdhm(x4_over_4 + x3, one_third) + x2, 1)
    return constant_term + srdhm(constant_term, x + poly)


def exp_on_negative_values(a: int) -> int:
    """gemmlowp ``exp_on_negative_values`` of a Q5.26 raw value ``a`` <= 0, as Q0.31 raw."""
    frac_bits = 26
    one_quarter = 1 << (frac_bits - 2)
    a_mod = (a & (one_quarter - 1)) - one_quarter
    result = _exp_on_interval(max(-(1 << 31), min(INT32_MAX, a_mod << 5)))
    remainder = a_mod - a
    for exponent, multiplier in ((-2, 1672461947), (-1, 1302514674), (0, 790015084), (1, 290630308),
                                 (2, 39332535), (3, 720401), (4, 242)):
        if remainder & (1 << (frac_bits + exponent)):
            result = srdhm(result, multiplier)
    return INT32_MAX if a == 0 else result


def softmax_tables(input_scale: float, beta: float) -> tuple[np.ndarray, np.ndarray]:
    """(exp Q0.31, exp Rescale<12> Q12.19) for ``diff = -k``, k = 0..255, as TFLite's Prepare and Eval compute."""
    real = min(float(beta) * float(input_scale) * (1 << (31 - 5)), (1 << 31) - 1.0)
    m, left_shift = quantize_multiplier(real)
    if left_shift < 0:
        left_shift = 0  # TFLite CHECKs a multiplier > 1; a smaller one is not representable there either
    radius = math.floor(1.0 * ((1 << 5) - 1) * (1 << (31 - 5)) / (1 << left_shift))
    exps = np.zeros(256, np.int64)
    for k in range(256):
        diff = -k
        if diff >= -radius:
            exps[k] = exp_on_negative_values(srdhm(diff * (1 << left_shift), m))
    acc = np.array([rounding_divide_by_pot(int(e), 12) for e in exps], np.int64)
    return exps.astype(np.int32), acc.astype(np.int32)


def softmax_int8_tflite(g: GraphBuilder, x: SSAValue, input_scale: float, beta: float) -> SSAValue:
    """Softmax over the last axis of int8 ``x`` with TFLite's int8 output quantization (1/256, -128)."""
    from nnkiln.dialects.tosa.ops_comparison import GreaterOp
    from nnkiln.dialects.tosa.ops_elementwise_binary import (
        AddOp,
        ArithmeticRightShiftOp,
        BitwiseXorOp,
        LogicalLeftShiftOp,
        MaximumOp,
        MinimumOp,
        MulOp,
        SubOp,
    )
    from nnkiln.dialects.tosa.ops_elementwise_ternary import SelectOp
    from nnkiln.dialects.tosa.ops_elementwise_unary import ClzOp
    from nnkiln.dialects.tosa.ops_reduction import ReduceMaxOp, ReduceSumOp
    from nnkiln.dialects.tosa.ops_scatter_gather import GatherOp
    from nnkiln.dialects.tosa.ops_type_conversion import CastOp

    i32 = element_type(Kind.I32)
    shape = shape_of(x)
    rank = len(shape)
    axis = rank - 1
    total = int(np.prod(shape))
    exps, acc = softmax_tables(input_scale, beta)

    def k(v: int) -> SSAValue:
        return g.const(np.full((1,) * rank, v, np.int32), TensorType(i32, [1] * rank))

    def mul31(a: SSAValue, b: SSAValue) -> SSAValue:
        return g.value(MulOp, [a, b], i32, shift=31)

    def lookup(table: np.ndarray, idx: SSAValue) -> SSAValue:
        values = g.const(table.reshape(1, 256, 1), TensorType(i32, [1, 256, 1]))
        y = g.value(GatherOp, [values, reshape(g, idx, (1, total))], i32)
        return reshape(g, y, shape)

    xi = rescale_tfl(g, x, Kind.I32, 1.0)
    mx = g.value(ReduceMaxOp, [xi], i32, axis=axis)
    k_idx = g.value(SubOp, [mx, xi], i32)
    e = lookup(exps, k_idx)
    s = g.value(ReduceSumOp, [lookup(acc, k_idx)], i32, axis=axis)
    clz = g.value(ClzOp, [s], i32)
    a = g.value(BitwiseXorOp, [g.value(LogicalLeftShiftOp, [s, clz], i32), k(-(1 << 31))], i32)
    half = g.value(AddOp, [g.value(ArithmeticRightShiftOp, [a, k(1)], i32, round=False), k(1 << 30)], i32)
    r = g.value(AddOp, [k(1515870810), mul31(half, k(-1010580540))], i32)
    for _ in range(3):
        om = g.value(SubOp, [k(1 << 29), mul31(half, r)], i32)
        r = g.value(AddOp, [r, g.value(LogicalLeftShiftOp, [mul31(r, om), k(2)], i32)], i32)
    scale = g.value(LogicalLeftShiftOp, [r, k(1)], i32)
    prod = mul31(scale, e)
    exponent = g.value(SubOp, [k(35), clz], i32)
    shifted = g.value(ArithmeticRightShiftOp, [prod, g.value(MinimumOp, [exponent, k(31)], i32)], i32, round=True)
    too_far = g.value(GreaterOp, [exponent, k(31)], element_type(Kind.BOOL))
    out = g.value(SelectOp, [too_far, k(0), shifted], i32)
    out = g.value(AddOp, [out, k(-128)], i32)
    out = g.value(MinimumOp, [g.value(MaximumOp, [out, k(-128)], i32), k(127)], i32)
    return g.value(CastOp, [out], element_type(Kind.I8))
