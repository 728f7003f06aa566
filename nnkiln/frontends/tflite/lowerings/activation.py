"""Activations (document legalize_tflite: ``tfl.relu``, ``tfl.relu6``, ``tfl.relu_n1_to_1``, ``tfl.leaky_relu``,
``tfl.logistic``, ``tfl.tanh``, ``tfl.gelu``, ``tfl.hard_swish``, ``tfl.softmax``).

The document leaves relu, relu6, leaky_relu, logistic, tanh, softmax, log_softmax and prelu TODO, and
relu_n1_to_1 and gelu undefined; its elu (``lower_elu_op``) is float only; its hard_swish float form uses RELUN,
not a 0.30 op (CLAMP here), and its quantized hard_swish table is incomplete.

int8 LOGISTIC/TANH/ELU/GELU: a 256-entry TABLE built at import the way TFLite's reference kernels build their
lookup table (``LUTPopulate``: float32 dequantize, function, scale, round); LOGISTIC and TANH are exact that way
(TFLite's reference kernels evaluate int8 through that table). int8 HARD_SWISH, LEAKY_RELU and PRELU: TFLite's
integer arithmetic (the first two evaluated for the 256 codes at import, one TABLE). int8 SOFTMAX reproduces
TFLite's gemmlowp arithmetic exactly (``softmax_int8``).
"""

from __future__ import annotations

import math

import numpy as np
from xdsl.dialects.builtin import TensorType
from xdsl.ir import SSAValue

from nnkiln.dialects.tosa.base import Kind, element_type
from nnkiln.frontends.common.arith import etype, scalar_like, shape_of
from nnkiln.frontends.tflite.importer import OpContext
from nnkiln.frontends.tflite.lowerings._common import RELU, RELU6, RELU_N1_TO_1, fused_activation
from nnkiln.frontends.tflite.lowerings._registry import lowering


@lowering("RELU", "RELU6", "RELU_N1_TO_1")
def relu(ctx: OpContext) -> list[SSAValue]:
    """``tfl.relu``/``relu6``/``relu_n1_to_1`` → CLAMP (float bounds, or int8 bounds of the output when input
    and output quantization agree; otherwise a RESCALE first)."""
    from nnkiln.frontends.tflite.lowerings._common import rescale_tfl

    act = {"RELU": RELU, "RELU6": RELU6, "RELU_N1_TO_1": RELU_N1_TO_1}[ctx.op.name]
    x = ctx.value(0)
    if ctx.is_quantized():
        qi, qo = ctx.quant(ctx.tin(0)), ctx.quant(ctx.tout())
        if float(qi.scale[0]) != float(qo.scale[0]) or int(qi.zero_point[0]) != int(qo.zero_point[0]):
            x = rescale_tfl(ctx.g, x, Kind.I8, float(qi.scale[0]) / float(qo.scale[0]),
                            input_zp=int(qi.zero_point[0]), output_zp=int(qo.zero_point[0]))
    return [fused_activation(ctx, x, act)]


def _table_const(ctx: OpContext, codes: np.ndarray) -> SSAValue:
    """TABLE of int8 ``x`` by the 256 int8 outputs ``codes`` (for inputs -128..127)."""
    from nnkiln.dialects.tosa.ops_elementwise_binary import TableOp

    table = ctx.g.const(np.asarray(codes, np.int8), TensorType(element_type(Kind.I8), [256]))
    return ctx.g.value(TableOp, [ctx.value(0), table], element_type(Kind.I8))


def _table_i8(ctx: OpContext, fn: object) -> SSAValue:
    """int8 → int8 TABLE of ``fn`` built as TFLite's ``LUTPopulate`` does, in float32: dequantize
    ``s_in·(q - zp_in)``, apply ``fn`` (evaluated in double, rounded to float32), multiply by ``1/s_out``, round
    half away from zero, add ``zp_out``, clamp."""
    qi, qo = ctx.quant(ctx.tin(0)), ctx.quant(ctx.tout())
    codes = np.arange(-128, 128, dtype=np.int32)
    deq = np.float32(qi.scale[0]) * (codes - int(qi.zero_point[0])).astype(np.float32)
    y = np.asarray(fn(deq.astype(np.float64)), dtype=np.float64).astype(np.float32)  # type: ignore[operator]
    r = y * (np.float32(1) / np.float32(qo.scale[0]))
    q = np.sign(r) * np.floor(np.abs(r) + np.float32(0.5)) + int(qo.zero_point[0])
    return _table_const(ctx, np.clip(q, -128, 127))


@lowering("LOGISTIC")
def logistic(ctx: OpContext) -> list[SSAValue]:
    """``tfl.logistic`` → SIGMOID (float) or TABLE (int8, module docstring)."""
    from nnkiln.dialects.tosa.ops_activation import SigmoidOp

    if ctx.is_quantized():
        return [_table_i8(ctx, lambda v: 1.0 / (1.0 + np.exp(-v)))]
    x = ctx.value(0)
    return [ctx.g.value(SigmoidOp, [x], etype(x))]


@lowering("TANH")
def tanh(ctx: OpContext) -> list[SSAValue]:
    """``tfl.tanh`` → TANH (float) or TABLE (int8, module docstring)."""
    from nnkiln.dialects.tosa.ops_activation import TanhOp

    if ctx.is_quantized():
        return [_table_i8(ctx, np.tanh)]
    x = ctx.value(0)
    return [ctx.g.value(TanhOp, [x], etype(x))]


@lowering("LEAKY_RELU")
def leaky_relu(ctx: OpContext) -> list[SSAValue]:
    """``tfl.leaky_relu`` → MAXIMUM(x, alpha·x) for 0 <= alpha <= 1, else SELECT(x > 0, x, alpha·x) (the
    document leaves tfl.leaky_relu TODO). int8: a TABLE of TFLite's
    ``QuantizeLeakyRelu`` (``MultiplyByQuantizedMultiplier`` by ``s_in/s_out`` or ``alpha·s_in/s_out`` by the sign
    of ``q - zp_in``), computed at import: exact."""
    from nnkiln.dialects.tosa.ops_comparison import GreaterOp
    from nnkiln.dialects.tosa.ops_elementwise_binary import MaximumOp, MulOp
    from nnkiln.dialects.tosa.ops_elementwise_ternary import SelectOp

    alpha = float(np.float32(ctx.opt("Alpha", 0.2)))
    if ctx.is_quantized():
        return [_leaky_relu_int8(ctx, alpha)]
    x = ctx.value(0)
    ax = ctx.g.value(MulOp, [x, scalar_like(ctx.g, alpha, x)], etype(x), shift=0)
    if 0.0 <= alpha <= 1.0:
        return [ctx.g.value(MaximumOp, [x, ax], etype(x))]
    pos = ctx.g.value(GreaterOp, [x, scalar_like(ctx.g, 0.0, x)], element_type(Kind.BOOL))
    return [ctx.g.value(SelectOp, [pos, x, ax], etype(x))]


def _leaky_relu_int8(ctx: OpContext, alpha: float) -> SSAValue:
    from nnkiln.frontends.tflite.lowerings._common import quantize_multiplier
    from nnkiln.frontends.tflite.lowerings.softmax_int8 import rounding_divide_by_pot, srdhm

    qi, qo = ctx.quant(ctx.tin(0)), ctx.quant(ctx.tout())
    s_in, s_out = float(qi.scale[0]), float(qo.scale[0])

    def mbqm(v: int, real: float) -> int:
        m, e = quantize_multiplier(real)
        return rounding_divide_by_pot(srdhm(v * (1 << max(e, 0)), m), max(-e, 0))

    out = []
    for code in range(-128, 128):
        v = code - int(qi.zero_point[0])
        y = mbqm(v, s_in / s_out) if v >= 0 else mbqm(v, s_in * alpha / s_out)
        out.append(min(127, max(-128, y + int(qo.zero_point[0]))))
    return _table_const(ctx, np.array(out))


@lowering("HARD_SWISH")
def hard_swish(ctx: OpContext) -> list[SSAValue]:
    """``tfl.hard_swish`` → x·CLAMP(x + 3, 0, 6)/6 (float); int8: a TABLE of TFLite's 16-bit fixed-point
    reference arithmetic (``hard_swish_int8``)."""
    from nnkiln.dialects.tosa.ops_activation import ClampOp
    from nnkiln.dialects.tosa.ops_elementwise_binary import AddOp, MulOp

    if ctx.is_quantized():
        from nnkiln.frontends.tflite.lowerings.hard_swish_int8 import hard_swish_table

        qi, qo = ctx.quant(ctx.tin(0)), ctx.quant(ctx.tout())
        try:
            codes = hard_swish_table(float(qi.scale[0]), int(qi.zero_point[0]), float(qo.scale[0]),
                                     int(qo.zero_point[0]))
        except ValueError as err:
            raise ctx.error(str(err)) from None
        return [_table_const(ctx, codes)]
    x = ctx.value(0)
    g, et = ctx.g, etype(x)
    r = g.value(ClampOp, [g.value(AddOp, [x, scalar_like(g, 3.0, x)], et)], et, min_val=0.0, max_val=6.0)
    return [g.value(MulOp, [x, g.value(MulOp, [r, scalar_like(g, 1.0 / 6.0, x)], et, shift=0)], et, shift=0)]


@lowering("GELU")
def gelu(ctx: OpContext) -> list[SSAValue]:
    """``tfl.gelu`` (float): ``approximate`` → 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))); exact →
    0.5·x·(1 + erf(x/√2)) with erf from TOSA ops (``onnx`` lowerings' ``approx.erf``, ~1e-7 absolute).
    The document has no GELU lowering. int8 uses a TABLE."""
    from nnkiln.dialects.tosa.ops_activation import TanhOp
    from nnkiln.dialects.tosa.ops_elementwise_binary import AddOp, MulOp

    approximate = bool(ctx.opt("Approximate", False))
    if ctx.is_quantized():
        erf = np.vectorize(math.erf)

        if approximate:
            return [_table_i8(ctx, lambda v: 0.5 * v * (1 + np.tanh(math.sqrt(2 / math.pi) * (v + 0.044715 * v**3))))]
        return [_table_i8(ctx, lambda v: 0.5 * v * (1 + erf(v / math.sqrt(2))))]
    x = ctx.value(0)
    g, et = ctx.g, etype(x)

    def mul(a: SSAValue, b: SSAValue) -> SSAValue:
        return g.value(MulOp, [a, b], et, shift=0)

    if approximate:
        x3 = mul(mul(x, x), x)
        inner = mul(g.value(AddOp, [x, mul(x3, scalar_like(g, 0.044715, x))], et),
                    scalar_like(g, math.sqrt(2 / math.pi), x))
        t = g.value(TanhOp, [inner], et)
    else:
        t = _erf(ctx, mul(x, scalar_like(g, 1 / math.sqrt(2), x)))
    one_plus = g.value(AddOp, [t, scalar_like(g, 1.0, x)], et)
    return [mul(mul(x, one_plus), scalar_like(g, 0.5, x))]


def _erf(ctx: OpContext, x: SSAValue) -> SSAValue:
    """erf of a float32 value (the ONNX lowerings' ``erf_ir``: it only uses ``ctx.g``)."""
    from nnkiln.frontends.onnx.lowerings.approx import erf_ir

    return erf_ir(ctx, x)  # type: ignore[arg-type]


@lowering("SOFTMAX")
def softmax(ctx: OpContext) -> list[SSAValue]:
    """``tfl.softmax`` over the last axis (TODO in the document; TFLite's float reference): EXP(beta·(x − max)) /
    sum, the division as
    RECIPROCAL + MUL. int8: TFLite's gemmlowp arithmetic exactly (``softmax_int8``)."""
    from nnkiln.dialects.tosa.ops_elementwise_binary import MulOp, SubOp
    from nnkiln.dialects.tosa.ops_elementwise_unary import ExpOp, ReciprocalOp
    from nnkiln.dialects.tosa.ops_reduction import ReduceMaxOp, ReduceSumOp

    beta = float(np.float32(ctx.opt("Beta", 1.0)))
    x = ctx.value(0)
    axis = len(shape_of(x)) - 1
    g = ctx.g
    if ctx.is_quantized():
        from nnkiln.frontends.tflite.lowerings.softmax_int8 import softmax_int8_tflite

        qi, qo = ctx.quant(ctx.tin(0)), ctx.quant(ctx.tout())
        if ctx.tin(0).dtype != np.int8 or abs(float(qo.scale[0]) - 1 / 256) > 1e-9 or int(qo.zero_point[0]) != -128:
            raise ctx.error("int8 SOFTMAX needs TFLite's output quantization (scale 1/256, zero point -128)")
        return [softmax_int8_tflite(g, x, float(qi.scale[0]), float(np.float32(ctx.opt("Beta", 1.0))))]
    et = etype(x)
    m = g.value(ReduceMaxOp, [x], et, axis=axis)
    d = g.value(SubOp, [x, m], et)
    if beta != 1.0:
        d = g.value(MulOp, [d, scalar_like(g, beta, x)], et, shift=0)
    e = g.value(ExpOp, [d], et)
    s = g.value(ReduceSumOp, [e], et, axis=axis)
    return [g.value(MulOp, [e, g.value(ReciprocalOp, [s], et)], et, shift=0)]


@lowering("LOG_SOFTMAX")
def log_softmax(ctx: OpContext) -> list[SSAValue]:
    """``tfl.log_softmax`` (float, last axis; TODO in the document) → (x − max) − LOG(REDUCE_SUM(EXP(x − max))).
    int8 is not supported yet."""
    from nnkiln.dialects.tosa.ops_elementwise_binary import SubOp
    from nnkiln.dialects.tosa.ops_elementwise_unary import ExpOp, LogOp
    from nnkiln.dialects.tosa.ops_reduction import ReduceMaxOp, ReduceSumOp

    if ctx.is_quantized():
        raise ctx.error("int8 LOG_SOFTMAX is not supported yet")
    x = ctx.value(0)
    g, et = ctx.g, etype(x)
    axis = len(shape_of(x)) - 1
    d = g.value(SubOp, [x, g.value(ReduceMaxOp, [x], et, axis=axis)], et)
    s = g.value(ReduceSumOp, [g.value(ExpOp, [d], et)], et, axis=axis)
    return [g.value(SubOp, [d, g.value(LogOp, [s], et)], et)]


@lowering("ELU")
def elu(ctx: OpContext) -> list[SSAValue]:
    """``tfl.elu`` → SELECT(x > 0, x, EXP(x) − 1) (float; int8 by a TABLE)."""
    from nnkiln.dialects.tosa.ops_comparison import GreaterOp
    from nnkiln.dialects.tosa.ops_elementwise_binary import SubOp
    from nnkiln.dialects.tosa.ops_elementwise_ternary import SelectOp
    from nnkiln.dialects.tosa.ops_elementwise_unary import ExpOp

    if ctx.is_quantized():
        return [_table_i8(ctx, lambda v: np.where(v > 0, v, np.expm1(np.minimum(v, 0))))]
    x = ctx.value(0)
    g, et = ctx.g, etype(x)
    em1 = g.value(SubOp, [g.value(ExpOp, [x], et), scalar_like(g, 1.0, x)], et)
    pos = g.value(GreaterOp, [x, scalar_like(g, 0.0, x)], element_type(Kind.BOOL))
    return [g.value(SelectOp, [pos, x, em1], et)]


@lowering("PRELU")
def prelu(ctx: OpContext) -> list[SSAValue]:
    """``tfl.prelu`` (float) → SELECT(x >= 0, x, alpha·x) with alpha broadcast (TODO in the document). int8: TFLite's
    reference ``Prelu``: ``x - zp >= 0`` → ``MultiplyByQuantizedMultiplier(x - zp, s_in/s_out)``, else
    ``MultiplyByQuantizedMultiplier((x - zp)·(a - zp_a), s_in·s_a/s_out)``, plus ``zp_out``: two RESCALEs and a
    SELECT, exact."""
    from nnkiln.dialects.tosa.ops_comparison import GreaterEqualOp
    from nnkiln.dialects.tosa.ops_elementwise_binary import MulOp
    from nnkiln.dialects.tosa.ops_elementwise_ternary import SelectOp
    from nnkiln.frontends.common.broadcast import equal_ranks

    if ctx.is_quantized():
        return [_prelu_int8(ctx)]
    x, alpha = equal_ranks(ctx.g, ctx.value(0), ctx.value(1))
    g, et = ctx.g, etype(x)
    ax = g.value(MulOp, [x, alpha], et, shift=0)
    pos = g.value(GreaterEqualOp, [x, scalar_like(g, 0.0, x)], element_type(Kind.BOOL))
    return [g.value(SelectOp, [pos, x, ax], et)]


def _prelu_int8(ctx: OpContext) -> SSAValue:
    from nnkiln.dialects.tosa.ops_comparison import GreaterEqualOp
    from nnkiln.dialects.tosa.ops_elementwise_binary import MulOp
    from nnkiln.dialects.tosa.ops_elementwise_ternary import SelectOp
    from nnkiln.frontends.common.broadcast import equal_ranks
    from nnkiln.frontends.tflite.lowerings._common import rescale_tfl

    g = ctx.g
    qi, qa, qo = ctx.quant(ctx.tin(0)), ctx.quant(ctx.tin(1)), ctx.quant(ctx.tout())
    si, sa, so = float(qi.scale[0]), float(qa.scale[0]), float(qo.scale[0])
    zi, za, zo = int(qi.zero_point[0]), int(qa.zero_point[0]), int(qo.zero_point[0])
    i32 = element_type(Kind.I32)
    x = ctx.value(0)
    xi = rescale_tfl(g, x, Kind.I32, 1.0, input_zp=zi)
    ai = rescale_tfl(g, ctx.value(1), Kind.I32, 1.0, input_zp=za)
    xi, ai = equal_ranks(g, xi, ai)
    pos = rescale_tfl(g, x, Kind.I8, si / so, input_zp=zi, output_zp=zo)
    neg = rescale_tfl(g, g.value(MulOp, [xi, ai], i32, shift=0), Kind.I8, si * sa / so, output_zp=zo)
    zero = g.const(np.zeros((1,) * len(shape_of(xi)), np.int32), TensorType(i32, [1] * len(shape_of(xi))))
    cond = g.value(GreaterEqualOp, [xi, zero], element_type(Kind.BOOL))
    pos, neg = equal_ranks(g, pos, neg)
    return g.value(SelectOp, [cond, pos, neg], element_type(Kind.I8))
