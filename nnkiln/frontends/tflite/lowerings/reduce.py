"""Reductions (document legalize_tflite, where all five are TODO: ``tfl.mean``, ``tfl.sum``, ``tfl.reduce_max``,
``tfl.reduce_min``,
``tfl.reduce_prod``): one REDUCE_* per axis (TOSA reduces one axis at a time, keeping it as size 1), then a
RESHAPE to the output shape (``keep_dims``). Float MEAN multiplies the sum by 1/count (TFLite divides:
within 1 ulp).

int8 MEAN follows TFLite's reference ``QuantizedMeanOrSum`` exactly: the int32 sum of ``x - zp_in``, then
``MultiplyByQuantizedMultiplier(sum, m, e) + zp_out`` where (m, e) is ``QuantizeMultiplier(s_in / s_out)`` with
``1/count`` folded in TFLite's way (``m << k // count``, ``e - k``, ``k = min(floor(log2 count), 32, 31 + e)``):
one double-rounding RESCALE with that (not renormalised) multiplier.
"""

from __future__ import annotations

import numpy as np
from xdsl.ir import SSAValue

from nnkiln.dialects.tosa.base import Kind, element_type
from nnkiln.frontends.common.arith import etype, scalar_like, shape_of
from nnkiln.frontends.common.broadcast import reshape
from nnkiln.frontends.tflite.importer import OpContext
from nnkiln.frontends.tflite.lowerings._common import quantize_multiplier, rescale_raw, rescale_tfl
from nnkiln.frontends.tflite.lowerings._registry import lowering


def _axes(ctx: OpContext, rank: int) -> list[int]:
    return sorted({int(a) % rank for a in ctx.const(1, "axes").reshape(-1)})


def _reduce(ctx: OpContext, op: type, x: SSAValue, axes: list[int], et: object) -> SSAValue:
    for a in axes:
        x = ctx.g.value(op, [x], et, axis=a)
    return x


def _mean_multiplier(real: float, count: int) -> tuple[int, int]:
    """TFLite's multiplier and exponent of an int8 MEAN over ``count`` elements (module docstring)."""
    m, e = quantize_multiplier(real)
    k = min(count.bit_length() - 1, 32, 31 + e)
    return int((m << k) // count), e - k


@lowering("MEAN")
def mean(ctx: OpContext) -> list[SSAValue]:
    """``tfl.mean`` → REDUCE_SUM per axis, MUL by 1/count (float) or the int8 form of the module docstring."""
    from nnkiln.dialects.tosa.ops_elementwise_binary import MulOp
    from nnkiln.dialects.tosa.ops_reduction import ReduceSumOp

    x = ctx.value(0)
    shape = shape_of(x)
    axes = _axes(ctx, len(shape))
    count = int(np.prod([shape[a] for a in axes]))
    if ctx.is_quantized():
        qi, qo = ctx.quant(ctx.tin(0)), ctx.quant(ctx.tout())
        x32 = rescale_tfl(ctx.g, x, Kind.I32, 1.0, input_zp=int(qi.zero_point[0]))
        s = _reduce(ctx, ReduceSumOp, x32, axes, element_type(Kind.I32))
        m, e = _mean_multiplier(float(qi.scale[0]) / float(qo.scale[0]), count)
        y = rescale_raw(ctx.g, s, Kind.I8, [m], [e], output_zp=int(qo.zero_point[0]))
        return [reshape(ctx.g, y, ctx.tout().shape)]
    s = _reduce(ctx, ReduceSumOp, x, axes, etype(x))
    y = ctx.g.value(MulOp, [s, scalar_like(ctx.g, 1.0 / count, s)], etype(s), shift=0)
    return [reshape(ctx.g, y, ctx.tout().shape)]


@lowering("SUM", "REDUCE_MAX", "REDUCE_MIN", "REDUCE_PROD")
def reduce_op(ctx: OpContext) -> list[SSAValue]:
    """``tfl.sum``/``reduce_max``/``reduce_min``/``reduce_prod`` → REDUCE_SUM/MAX/MIN/PRODUCT per axis (float;
    int8 MAX/MIN on the codes; int8 SUM as ``QuantizedMeanOrSum(compute_sum)``: the int32 sum of ``x - zp_in``
    requantized by ``s_in/s_out``)."""
    from nnkiln.dialects.tosa.ops_reduction import ReduceMaxOp, ReduceMinOp, ReduceProductOp, ReduceSumOp

    op = {"SUM": ReduceSumOp, "REDUCE_MAX": ReduceMaxOp, "REDUCE_MIN": ReduceMinOp,
          "REDUCE_PROD": ReduceProductOp}[ctx.op.name]
    x = ctx.value(0)
    if ctx.is_quantized() and op is ReduceSumOp:
        qi, qo = ctx.quant(ctx.tin(0)), ctx.quant(ctx.tout())
        x32 = rescale_tfl(ctx.g, x, Kind.I32, 1.0, input_zp=int(qi.zero_point[0]))
        s = _reduce(ctx, ReduceSumOp, x32, _axes(ctx, len(shape_of(x))), element_type(Kind.I32))
        y = rescale_tfl(ctx.g, s, Kind.I8, float(qi.scale[0]) / float(qo.scale[0]), output_zp=int(qo.zero_point[0]))
        return [reshape(ctx.g, y, ctx.tout().shape)]
    if ctx.is_quantized() and op not in (ReduceMaxOp, ReduceMinOp):
        raise ctx.error("the int8 form is not supported yet")
    y = _reduce(ctx, op, x, _axes(ctx, len(shape_of(x))), etype(x))
    return [reshape(ctx.g, y, ctx.tout().shape)]


@lowering("L2_NORMALIZATION")
def l2_normalization(ctx: OpContext) -> list[SSAValue]:
    """``tfl.l2_normalization`` (float, last axis) → x · RSQRT(MAX(REDUCE_SUM(x²), 1e-12)) (TFLite divides by
    ``max(sqrt(sum), 1e-6)``: the same up to rounding) + fused activation. int8 is not supported yet."""
    from nnkiln.dialects.tosa.ops_elementwise_binary import MaximumOp, MulOp
    from nnkiln.dialects.tosa.ops_elementwise_unary import RsqrtOp
    from nnkiln.dialects.tosa.ops_reduction import ReduceSumOp
    from nnkiln.frontends.tflite.lowerings._common import fused_activation

    if ctx.is_quantized():
        raise ctx.error("int8 L2_NORMALIZATION is not supported yet")
    x = ctx.value(0)
    g, et = ctx.g, etype(x)
    s = g.value(ReduceSumOp, [g.value(MulOp, [x, x], et, shift=0)], et, axis=len(shape_of(x)) - 1)
    r = g.value(RsqrtOp, [g.value(MaximumOp, [s, scalar_like(g, 1e-12, s)], et)], et)
    return [fused_activation(ctx, g.value(MulOp, [x, r], et, shift=0))]
