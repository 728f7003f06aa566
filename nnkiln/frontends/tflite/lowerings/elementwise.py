"""Elementwise arithmetic (document legalize_tflite: ``tfl.add``, ``tfl.sub``, ``tfl.mul``, ``tfl.div``,
``tfl.squared_difference``, ``tfl.maximum``/``minimum``, ``tfl.abs``, ``tfl.neg``, ``tfl.rsqrt``, ``tfl.sqrt``,
``tfl.exp``, ``tfl.log``).

Operands are broadcast numpy-style: TOSA needs equal ranks, so the lower-rank operand is reshaped with leading
1s (the document's rank broadcast of ``tfl.add``). Fused activations are applied after the op.

Quantized ADD/SUB (int8) deviate from the document's ``tfl.add`` (one RESCALE per input by ``2^20·s/max2x``,
zero points not shown; its ``tfl.sub`` has no quantized form) to reproduce TFLite's reference kernel exactly: TFLite
shifts ``x - zp`` left by 20 *then* applies ``MultiplyByQuantizedMultiplierSmallerThanOneExp`` (two roundings),
so each input gets an exact ``<< 20`` RESCALE followed by a double-rounding RESCALE (``rescale_tfl``); the
int32 sum is requantized by TFLite's output multiplier. Quantized MUL: ``(x1 - zp1)·(x2 - zp2)`` in int32, one
RESCALE by ``s1·s2/s_out`` (TFLite's ``MulElementwise``; the document leaves tfl.mul TODO).
"""

from __future__ import annotations

import numpy as np
from xdsl.dialects.builtin import TensorType
from xdsl.ir import SSAValue

from nnkiln.dialects.tosa.base import Kind, element_type
from nnkiln.frontends.common.arith import etype
from nnkiln.frontends.common.broadcast import equal_ranks
from nnkiln.frontends.tflite.importer import OpContext
from nnkiln.frontends.tflite.lowerings._common import fused_activation, rescale_tfl
from nnkiln.frontends.tflite.lowerings._registry import lowering

ADD_LEFT_SHIFT = 20  # TFLite's left_shift of int8 ADD/SUB


def _binary(ctx: OpContext, op: type) -> SSAValue:
    a, b = equal_ranks(ctx.g, ctx.value(0), ctx.value(1))
    extra = {"shift": 0} if op.name == "tosa.mul" else {}
    return ctx.g.value(op, [a, b], etype(a), **extra)


def _to_i32_shifted(ctx: OpContext, i: int, scale: float, left_shift: int = ADD_LEFT_SHIFT) -> SSAValue:
    """Input ``i`` as TFLite's ``MultiplyByQuantizedMultiplierSmallerThanOneExp((x - zp) << left_shift, m, e)``."""
    from nnkiln.dialects.tosa.ops_type_conversion import RescaleOp

    q = ctx.quant(ctx.tin(i))
    x = ctx.value(i)
    shifted = ctx.g.value(RescaleOp, [x], element_type(Kind.I32), input_zp=int(q.zero_point[0]), output_zp=0,
                          multiplier=[1 << 30], shift=[30 - left_shift], scale32=True, double_round=False,
                          per_channel=False)
    return rescale_tfl(ctx.g, shifted, Kind.I32, scale)


def _add_sub_int8(ctx: OpContext, subtract: bool) -> SSAValue:
    from nnkiln.dialects.tosa.ops_elementwise_binary import AddOp, SubOp

    s1, s2 = float(ctx.quant(ctx.tin(0)).scale[0]), float(ctx.quant(ctx.tin(1)).scale[0])
    qo = ctx.quant(ctx.tout())
    twice_max = 2.0 * max(s1, s2)
    a = _to_i32_shifted(ctx, 0, s1 / twice_max)
    b = _to_i32_shifted(ctx, 1, s2 / twice_max)
    a, b = equal_ranks(ctx.g, a, b)
    s = ctx.g.value(SubOp if subtract else AddOp, [a, b], element_type(Kind.I32))
    out_scale = twice_max / ((1 << ADD_LEFT_SHIFT) * float(qo.scale[0]))
    return rescale_tfl(ctx.g, s, Kind.I8, out_scale, output_zp=int(qo.zero_point[0]))


@lowering("ADD")
def add(ctx: OpContext) -> list[SSAValue]:
    """``tfl.add`` → ADD (float) or the exact TFLite int8 form (module docstring) + fused activation."""
    from nnkiln.dialects.tosa.ops_elementwise_binary import AddOp

    y = _add_sub_int8(ctx, False) if ctx.is_quantized() else _binary(ctx, AddOp)
    return [fused_activation(ctx, y)]


@lowering("SUB")
def sub(ctx: OpContext) -> list[SSAValue]:
    """``tfl.sub`` → SUB (float) or the int8 form of ADD with a subtraction (TFLite's ``SubElementwise``: the
    two scaled inputs subtracted) + fused activation."""
    from nnkiln.dialects.tosa.ops_elementwise_binary import SubOp

    y = _add_sub_int8(ctx, True) if ctx.is_quantized() else _binary(ctx, SubOp)
    return [fused_activation(ctx, y)]


@lowering("MUL")
def mul(ctx: OpContext) -> list[SSAValue]:
    """``tfl.mul`` → MUL (shift 0) (+ the int8 form of the module docstring) + fused activation."""
    from nnkiln.dialects.tosa.ops_elementwise_binary import MulOp

    if not ctx.is_quantized():
        return [fused_activation(ctx, _binary(ctx, MulOp))]
    q1, q2, qo = ctx.quant(ctx.tin(0)), ctx.quant(ctx.tin(1)), ctx.quant(ctx.tout())
    a = rescale_tfl(ctx.g, ctx.value(0), Kind.I32, 1.0, input_zp=int(q1.zero_point[0]))
    b = rescale_tfl(ctx.g, ctx.value(1), Kind.I32, 1.0, input_zp=int(q2.zero_point[0]))
    a, b = equal_ranks(ctx.g, a, b)
    p = ctx.g.value(MulOp, [a, b], element_type(Kind.I32), shift=0)
    scale = float(q1.scale[0]) * float(q2.scale[0]) / float(qo.scale[0])
    y = rescale_tfl(ctx.g, p, Kind.I8, scale, output_zp=int(qo.zero_point[0]))
    return [fused_activation(ctx, y)]


@lowering("DIV")
def div(ctx: OpContext) -> list[SSAValue]:
    """``tfl.div`` (float) → MUL by RECIPROCAL (the document's form; RECIPROCAL is within 1 ulp)."""
    from nnkiln.dialects.tosa.ops_elementwise_binary import MulOp
    from nnkiln.dialects.tosa.ops_elementwise_unary import ReciprocalOp

    if ctx.is_quantized() or ctx.tin(0).dtype is not None and ctx.tin(0).type_name != "FLOAT32":
        raise ctx.error("only float DIV is supported")
    a, b = equal_ranks(ctx.g, ctx.value(0), ctx.value(1))
    r = ctx.g.value(ReciprocalOp, [b], etype(b))
    return [fused_activation(ctx, ctx.g.value(MulOp, [a, r], etype(a), shift=0))]


def _float_only(ctx: OpContext) -> None:
    if ctx.is_quantized():
        raise ctx.error("the int8 form is not supported yet")


@lowering("SQUARED_DIFFERENCE")
def squared_difference(ctx: OpContext) -> list[SSAValue]:
    """``tfl.squared_difference`` → SUB, MUL (float). int8 as TFLite's reference kernel: each input
    ``(x - zp) << 7`` scaled by ``s_i / (2·max(s1, s2))`` (double rounding), SUB, MUL in int32, requantized by
    ``(2·max)^2 / (2^14·s_out)`` (tfl.squared_difference is TODO in the document)."""
    from nnkiln.dialects.tosa.ops_elementwise_binary import MulOp, SubOp

    if not ctx.is_quantized():
        d = _binary(ctx, SubOp)
        return [ctx.g.value(MulOp, [d, d], etype(d), shift=0)]
    s1, s2 = float(ctx.quant(ctx.tin(0)).scale[0]), float(ctx.quant(ctx.tin(1)).scale[0])
    qo = ctx.quant(ctx.tout())
    twice_max = 2.0 * max(s1, s2)
    a = _to_i32_shifted(ctx, 0, s1 / twice_max, 7)
    b = _to_i32_shifted(ctx, 1, s2 / twice_max, 7)
    a, b = equal_ranks(ctx.g, a, b)
    i32 = element_type(Kind.I32)
    d = ctx.g.value(SubOp, [a, b], i32)
    sq = ctx.g.value(MulOp, [d, d], i32, shift=0)
    return [rescale_tfl(ctx.g, sq, Kind.I8, twice_max * twice_max / ((1 << 14) * float(qo.scale[0])),
                        output_zp=int(qo.zero_point[0]))]


@lowering("MAXIMUM", "MINIMUM")
def maximum_minimum(ctx: OpContext) -> list[SSAValue]:
    """``tfl.maximum``/``tfl.minimum`` → MAXIMUM/MINIMUM (int8: on the codes; TFLite requires equal
    quantization of inputs and output)."""
    from nnkiln.dialects.tosa.ops_elementwise_binary import MaximumOp, MinimumOp

    return [_binary(ctx, MaximumOp if ctx.op.name == "MAXIMUM" else MinimumOp)]


def _unary(ctx: OpContext, op: type) -> list[SSAValue]:
    _float_only(ctx)
    x = ctx.value(0)
    return [ctx.g.value(op, [x], etype(x))]


@lowering("ABS", "NEG", "RSQRT", "EXP", "LOG", "FLOOR", "CEIL")
def unary(ctx: OpContext) -> list[SSAValue]:
    """``tfl.abs``/``neg``/``rsqrt``/``exp``/``log``/``floor``/``ceil`` → the TOSA unary op of the same name
    (float); int8 RSQRT and ABS → TABLE (``_unary_table_int8``)."""
    from nnkiln.dialects.tosa.ops_elementwise_unary import (
        AbsOp,
        CeilOp,
        ExpOp,
        FloorOp,
        LogOp,
        NegateOp,
        RsqrtOp,
    )

    if ctx.is_quantized() and ctx.op.name in ("RSQRT", "ABS"):
        return [_unary_table_int8(ctx)]
    ops = {"ABS": AbsOp, "NEG": NegateOp, "RSQRT": RsqrtOp, "EXP": ExpOp, "LOG": LogOp, "FLOOR": FloorOp,
           "CEIL": CeilOp}
    return _unary(ctx, ops[ctx.op.name])


def _unary_table_int8(ctx: OpContext) -> SSAValue:
    """int8 RSQRT (``rsqrt_int8``) and ABS (``MultiplyByQuantizedMultiplier(|q - zp_in|, s_in/s_out) + zp_out``, as
    TFLite's ``AbsEvalQuantized``) as a TABLE of TFLite's integer arithmetic for the 256 codes."""
    from nnkiln.dialects.tosa.ops_elementwise_binary import TableOp
    from nnkiln.frontends.tflite.lowerings._common import quantize_multiplier
    from nnkiln.frontends.tflite.lowerings.rsqrt_int8 import mbqm, rsqrt_table

    qi, qo = ctx.quant(ctx.tin(0)), ctx.quant(ctx.tout())
    si, zi, so, zo = float(qi.scale[0]), int(qi.zero_point[0]), float(qo.scale[0]), int(qo.zero_point[0])
    if ctx.op.name == "RSQRT":
        codes = rsqrt_table(si, zi, so, zo)
    else:
        m, e = quantize_multiplier(si / so)
        codes = np.array([min(127, max(-128, mbqm(abs(c - zi), m, e) + zo)) for c in range(-128, 128)])
    table = ctx.g.const(codes.astype(np.int8), TensorType(element_type(Kind.I8), [256]))
    return ctx.g.value(TableOp, [ctx.value(0), table], element_type(Kind.I8))


@lowering("SQRT")
def sqrt(ctx: OpContext) -> list[SSAValue]:
    """``tfl.sqrt`` → RECIPROCAL(RSQRT(x)) (TOSA 0.30 has no SQRT; sqrt(0) = 1/inf = 0)."""
    from nnkiln.dialects.tosa.ops_elementwise_unary import ReciprocalOp, RsqrtOp

    _float_only(ctx)
    x = ctx.value(0)
    r = ctx.g.value(RsqrtOp, [x], etype(x))
    return [ctx.g.value(ReciprocalOp, [r], etype(x))]
