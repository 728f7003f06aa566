"""Quantization lowerings: DequantizeLinear, QuantizeLinear, DynamicQuantizeLinear, QLinearConv,
ConvInteger, MatMulInteger, QLinearMatMul. Conventions (integer arithmetic, uint8 handling, rounding,
run-time parameters): see ``_quant_common``; the QDQ fusion that consumes DequantizeLinear results:
``quant_qdq_fusion``.
"""

from __future__ import annotations

import numpy as np
from xdsl.ir import SSAValue

from nnkiln.dialects.tosa.base import Kind
from nnkiln.frontends.common.arith import kind_of_value, shape_of
from nnkiln.frontends.onnx.importer import NodeContext, TensorValue
from nnkiln.frontends.onnx.lowerings import lowering
from nnkiln.frontends.onnx.lowerings._elementwise_common import math_custom
from nnkiln.frontends.onnx.lowerings._integers import rescale
from nnkiln.frontends.onnx.lowerings._quant_common import (
    DQ_KINDS,
    F16,
    F32,
    I8,
    I32,
    NP_DTYPES,
    ONNX_ELEM,
    Q_KINDS,
    RANGE,
    SIGNED,
    U8,
    DequantizedValue,
    QuantInfo,
    Result,
    Target,
    act,
    as_target,
    axis_shape,
    check_block,
    dequantize_ir,
    elem_kind_of_array,
    emit,
    is_dynamic,
    out_kind_of_zp,
    per_axis,
    q_out_kind,
    quantize_ir,
    requant_signed,
    requantize,
    scale_vec,
    zp_array,
    zp_input,
    zp_kind,
)
from nnkiln.frontends.onnx.lowerings._quant_kernels import (
    act_i8,
    conv_i32,
    dyn_conv_i32,
    dyn_dequantize,
    dyn_matmul_i32,
    dyn_quantize,
    dyn_requant,
    finish_conv,
    from_channels_last,
    matmul_i32,
    param,
    scale_product,
    weight_i8,
)

# ------------------------------------------------------------------------------------------------
# DequantizeLinear / QuantizeLinear


@lowering("DequantizeLinear")
def DequantizeLinear(ctx: NodeContext) -> Result:
    """DequantizeLinear (opsets 10, 13, 19, 21, 23): ``y = (x - x_zero_point) * x_scale``.

    Per-tensor or per-axis (``axis``) scales and zero points, which must be constants; int8, uint8,
    int16, uint16 and int32 inputs; float8/int4 and ``block_size > 0`` are not supported. The float
    result is a ``DequantizedValue`` (see the module docstring); constants are dequantized at import."""
    check_block(ctx)
    xv = ctx.input(0)
    if is_dynamic(ctx, 1, 2) and not xv.is_const:
        if xv.kind not in DQ_KINDS:
            raise ctx.error(f"{xv.kind.value} input is not supported")
        return [dyn_dequantize(ctx)]
    if xv.is_const:
        kind = elem_kind_of_array(ctx, np.asarray(xv.const), xv.kind)
    else:
        kind = xv.kind
    if kind not in DQ_KINDS:
        raise ctx.error(f"{kind.value} input is not supported")
    sv = ctx.input(1)
    if sv.kind not in (F32, F16):
        raise ctx.error(f"a {sv.kind.value} scale is not supported")
    out_kind = sv.kind
    out_dtype = ctx.attr("output_dtype", 0)
    if out_dtype and out_dtype not in (1, 10):
        raise ctx.error(f"output_dtype {out_dtype} is not supported")
    if out_dtype:
        out_kind = F32 if out_dtype == 1 else F16
    scale_raw = np.asarray(ctx.const(1, "scale"))
    scale = scale_raw.astype(np.float64).reshape(-1)
    zp, zkind = zp_array(ctx, 2, scale, kind)
    if scale.size > 1 and scale_raw.ndim != 1 or zp.size not in (1, scale.size):
        raise ctx.error(f"scale shape {list(scale_raw.shape)} / zero point size {zp.size} are not supported "
                        "(per-tensor or 1-D per-axis only)")
    axis = per_axis(ctx, xv.rank, scale, zp)
    if scale.size > 1 and xv.shape[axis] != scale.size:
        raise ctx.error(f"scale has {scale.size} values but axis {axis} has size {xv.shape[axis]}")
    if kind is I32 and np.any(zp != 0):
        raise ctx.error("an int32 input with a non-zero zero point is not supported")
    info = QuantInfo(xv, scale, zp, axis)
    fdt = np.float32 if out_kind is F32 else np.float16
    if xv.is_const:
        x = np.asarray(xv.const).astype(np.int64)
        zb = zp.reshape(axis_shape(xv.rank, axis, zp.size)) if zp.size > 1 else zp.reshape(())
        sb = scale_raw.astype(np.float32).reshape(axis_shape(xv.rank, axis, scale.size)) if scale.size > 1 \
            else scale_raw.astype(np.float32).reshape(())
        y = ((x - zb).astype(np.float32) * sb).astype(fdt)
        return [DequantizedValue(tuple(xv.shape), out_kind, info, lambda: None, const=y)]  # type: ignore[arg-type,return-value]
    scale_f = scale_raw.astype(np.float32).reshape(-1).astype(np.float64)

    def emit() -> SSAValue:
        view = getattr(xv, "signed_view", None)
        if view is not None:
            return dequantize_ir(ctx, view[0], scale_f, zp - view[1], axis, out_kind)
        return dequantize_ir(ctx, ctx.importer.materialize(xv), scale_f, zp, axis, out_kind)

    return [DequantizedValue(tuple(xv.shape), out_kind, info, emit)]


@lowering("QuantizeLinear")
def QuantizeLinear(ctx: NodeContext) -> Result:
    """QuantizeLinear (opsets 10, 13, 19, 21, 23): ``y = saturate(round(x / y_scale) + y_zero_point)``,
    rounding half to even. Per-tensor or per-axis constant scales / zero points; int8, uint8, int16 and
    uint16 outputs (``output_dtype`` when there is no zero point; default uint8). Float8/int4 outputs and
    ``block_size > 0`` are not supported. When the input comes from a fused integer op (see the module
    docstring) with the same scale and zero point, that integer tensor is the result."""
    check_block(ctx)
    xv = ctx.input(0)
    if xv.kind not in (F32, F16) and not (xv.is_const and np.asarray(xv.const).dtype.kind == "f"):
        if xv.kind is I32:
            pass
        else:
            raise ctx.error(f"{xv.kind.value} input is not supported")
    if is_dynamic(ctx, 1, 2):
        kind = zp_kind(ctx, 2, ONNX_ELEM.get(int(ctx.attr("output_dtype", 0) or 0), U8))
        if kind not in Q_KINDS:
            raise ctx.error(f"{kind.value} output is not supported (float8/int4/int2/float4 have no TOSA type)")
        if xv.kind not in (F32, F16):
            raise ctx.error(f"{xv.kind.value} input is not supported")
        return [dyn_quantize(ctx, kind)]
    kind, zp = q_out_kind(ctx)
    scale_raw = np.asarray(ctx.const(1, "scale"))
    scale = scale_vec(ctx, scale_raw, "scale")
    if scale.size > 1 and scale_raw.ndim != 1 or zp.size not in (1, scale.size):
        raise ctx.error(f"scale shape {list(scale_raw.shape)} is not supported (per-tensor or 1-D per-axis only)")
    axis = per_axis(ctx, xv.rank, scale, zp)
    fused = getattr(xv, "fused", None)
    if isinstance(xv, DequantizedValue) and fused is not None and scale.size == 1 and zp.size == 1:
        fq, fs, fz, fk = fused
        if fk is kind and fz == int(zp[0]) and np.float32(fs) == np.float32(scale[0]):
            return [fq]
    if isinstance(xv, DequantizedValue) and not xv.is_const and scale.size == 1 and zp.size == 1 \
            and kind in (I8, U8):
        operand = act(ctx, xv)
        if operand is not None:  # DQ → Q: an integer requantization (identity when the parameters agree)
            t = Target(float(np.float32(scale[0])), int(zp[0]), kind)
            if xv.info.q.kind is kind and xv.info.z == t.zp and np.float32(xv.info.s) == np.float32(t.scale):
                return [xv.info.q]
            q, z, s = operand
            return [as_target(ctx, requant_signed(ctx, q, z, s / t.scale, t), t)]
    if xv.is_const:
        x = np.asarray(xv.const).astype(np.float32)
        sb = scale_raw.astype(np.float32)
        zb = zp
        if scale.size > 1:
            sb = sb.reshape(axis_shape(xv.rank, axis, scale.size))
        else:
            sb = sb.reshape(())
        zb = zp.reshape(axis_shape(xv.rank, axis, zp.size)) if zp.size > 1 else zp.reshape(())
        lo, hi = RANGE[kind]
        y = np.clip(np.rint(x / sb).astype(np.float64) + zb, lo, hi).astype(NP_DTYPES[kind])
        return [y]
    x = ctx.importer.materialize(xv)
    if xv.kind is I32:
        from nnkiln.dialects.tosa.ops_type_conversion import CastOp

        x = emit(ctx, CastOp, [x], F32)
    return [quantize_ir(ctx, x, scale_raw.astype(np.float32).reshape(-1).astype(np.float64), zp, axis, kind)]


@lowering("DynamicQuantizeLinear")
def DynamicQuantizeLinear(ctx: NodeContext) -> Result:
    """DynamicQuantizeLinear (opset 11): uint8 quantization with a scale computed from the data's range:
    ``lo = min(0, min(x))``, ``hi = max(0, max(x))``, ``scale = (hi - lo) / 255``,
    ``zp = saturate(round(-lo / scale))``, ``y = saturate(round(x / scale) + zp)`` (round half to even).
    Constant inputs are folded at import. A run-time input is computed in the graph, since the values are
    data-dependent but the shapes are not: REDUCE_MIN/MAX over the flattened tensor, then float
    arithmetic; TOSA 0.30 has no float division, and ``a · RECIPROCAL(b)`` is up to an ulp off the quotient,
    which moves a rounding tie by 1 LSB: the three quotients are ``math.div`` (the correctly rounded division,
    one ``tosa.custom``), so the results are onnxruntime's exactly.
    An all-zero input gives scale 0, zero point 0 and y = 0 (the quotient is computed with scale 1).
    The run-time zero point is a [1] tensor for the ops reading it (TOSA 0.30 has no rank-0 uint8 tensor), and
    as a graph output a rank-0 int32 declared uint8 (``TensorValue.wide``)."""
    xv = ctx.input(0)
    if not xv.is_const:
        return _dynamic_quantize_runtime(ctx)
    x = np.asarray(xv.const).astype(np.float32)
    lo = min(0.0, float(x.min())) if x.size else 0.0
    hi = max(0.0, float(x.max())) if x.size else 0.0
    scale = (np.float32(hi) - np.float32(lo)) / np.float32(255)  # float32 arithmetic, as onnx.reference
    if scale == 0:
        zp = np.uint8(0)
        y = np.zeros(x.shape, np.uint8)
    else:
        zpf = np.clip(np.rint(np.float32(0 - lo) / scale), 0, 255)
        zp = np.uint8(zpf)
        y = np.clip(np.rint(x / scale) + zpf, 0, 255).astype(np.uint8)
    return [y, np.array(scale, np.float32), np.array(zp, np.uint8)]


def _dynamic_quantize_runtime(ctx: NodeContext) -> Result:
    from nnkiln.dialects.tosa.ops_comparison import EqualOp
    from nnkiln.dialects.tosa.ops_elementwise_binary import MaximumOp, MinimumOp, SubOp
    from nnkiln.dialects.tosa.ops_elementwise_ternary import SelectOp
    from nnkiln.dialects.tosa.ops_elementwise_unary import NegateOp
    from nnkiln.dialects.tosa.ops_reduction import ReduceMaxOp, ReduceMinOp
    from nnkiln.dialects.tosa.ops_type_conversion import CastOp
    from nnkiln.frontends.common.broadcast import reshape
    from nnkiln.frontends.onnx.lowerings._quant_common import clamp_i32, narrow_i32, scalar_const
    from nnkiln.frontends.onnx.lowerings._quant_kernels import _dyn_round

    x = ctx.tensor(0)
    if kind_of_value(x) is not F32:
        raise ctx.error(f"{kind_of_value(x).value} input is not supported (float32 only, as in the operator's schema)")
    shape = shape_of(x)
    n = int(np.prod(shape, dtype=np.int64))
    if n == 0:
        raise ctx.error("an empty input is not supported (its range is undefined)")
    rank = len(shape)
    flat = reshape(ctx.g, x, [n])
    zero = scalar_const(ctx, 0.0, F32, 1)
    lo = emit(ctx, MinimumOp, [emit(ctx, ReduceMinOp, [flat], F32, axis=0), zero], F32)
    hi = emit(ctx, MaximumOp, [emit(ctx, ReduceMaxOp, [flat], F32, axis=0), zero], F32)
    scale = math_custom(ctx, "div", [emit(ctx, SubOp, [hi, lo], F32), scalar_const(ctx, 255.0, F32, 1)], F32)
    is_zero = emit(ctx, EqualOp, [scale, zero], Kind.BOOL)  # all-zero input
    safe = emit(ctx, SelectOp, [is_zero, scalar_const(ctx, 1.0, F32, 1), scale], F32)
    zp_f = math_custom(ctx, "div", [emit(ctx, NegateOp, [lo], F32), safe], F32)
    zp_i32 = clamp_i32(ctx, emit(ctx, CastOp, [zp_f], I32), 0, 255)
    zp_b = reshape(ctx.g, zp_i32, [1] * rank)
    y = _dyn_round(ctx, math_custom(ctx, "div", [x, reshape(ctx.g, safe, [1] * rank)], F32), zp_b, U8)
    # TOSA 0.30 has no rank-0 uint8 tensor (RESCALE needs rank >= 1, RESHAPE has no unsigned mode): the
    # zero point is a [1] tensor, which every zero-point input accepts, and a graph output takes its int32
    # rank-0 form (``TensorValue.wide``), declared uint8 at the boundary.
    zp = TensorValue.of(narrow_i32(ctx, zp_i32, U8))
    zp.wide = reshape(ctx.g, zp_i32, [])
    return [y, reshape(ctx.g, scale, []), zp]


# ------------------------------------------------------------------------------------------------
# integer convolution and matmul


@lowering("QLinearConv")
def QLinearConv(ctx: NodeContext) -> Result:
    """QLinearConv (opset 10): int8/uint8 Conv with per-tensor input/output and per-tensor or per-output-
    channel weight quantization; int32 bias (scale x_scale·w_scale). CONV2D / DEPTHWISE_CONV2D in int8
    with zero points → int32 → RESCALE by x_scale·w_scale/y_scale (per channel) to the output type.
    Run-time weights, scales or zero points: ``dyn_conv_i32`` and a float requantization (ONNX's
    reference formula: ``rint(acc · x_scale·w_scale/y_scale) + y_zero_point``)."""
    if is_dynamic(ctx, 1, 2, 3, 4, 5, 6, 7):
        from nnkiln.dialects.tosa.ops_elementwise_binary import AddOp

        acc, k = dyn_conv_i32(ctx, 0, 2, 3, 5)
        if ctx.has_input(8):
            acc = emit(ctx, AddOp, [acc, param(ctx, 8, 4, 3, I32)], I32)
        factor = scale_product(ctx, [1, 4], 6, 4, {4: 3})
        out_kind = zp_kind(ctx, 7, U8)
        if out_kind not in (I8, U8):
            raise ctx.error(f"{out_kind.value} output is not supported")
        signed, off = SIGNED[out_kind]
        y = dyn_requant(ctx, acc, factor, 7, signed, zp_offset=off)  # computed as y - off in int8
        y = from_channels_last(ctx, y, k)
        return [rescale(ctx, y, out_kind, output_zp=off) if off else y]
    x_scale = scale_vec(ctx, ctx.const(1, "x_scale"), "x_scale")
    x_zp = zp_input(ctx, 2)
    w_scale = scale_vec(ctx, ctx.const(4, "w_scale"), "w_scale")
    w_zp = zp_input(ctx, 5)
    y_scale = scale_vec(ctx, ctx.const(6, "y_scale"), "y_scale")
    y_zp = zp_input(ctx, 7)
    out_kind = out_kind_of_zp(ctx, 7)
    if out_kind not in (I8, U8) or x_scale.size != 1 or y_scale.size != 1 or y_zp.size != 1:
        raise ctx.error("only per-tensor int8/uint8 input and output quantization is supported")
    x, xz = act_i8(ctx, 0, x_zp, "x")
    w, wz = weight_i8(ctx, ctx.input(3), w_zp, "w")
    bias = ctx.optional_const(8, "bias")
    acc, k = conv_i32(ctx, x, xz, w, wz, bias)
    m = w.shape[0]
    scale = np.broadcast_to(x_scale[0] * w_scale / y_scale[0], (m,)) if w_scale.size > 1 else x_scale * w_scale / y_scale
    return [finish_conv(ctx, acc, k, np.asarray(scale), out_kind, int(y_zp[0]))]


@lowering("ConvInteger")
def ConvInteger(ctx: NodeContext) -> Result:
    """ConvInteger (opset 10): ``conv(x - x_zero_point, w - w_zero_point)`` in int32 (CONV2D int8 → int32;
    run-time weights or zero points: ``dyn_conv_i32``)."""
    if is_dynamic(ctx, 1, 2, 3):
        acc, k = dyn_conv_i32(ctx, 0, 2, 1, 3)
        return [from_channels_last(ctx, acc, k)]
    x_zp = zp_input(ctx, 2)
    w_zp = zp_input(ctx, 3)
    x, xz = act_i8(ctx, 0, x_zp, "x")
    w, wz = weight_i8(ctx, ctx.input(1), w_zp, "w")
    acc, k = conv_i32(ctx, x, xz, w, wz, None)
    return [from_channels_last(ctx, acc, k)]


def _matmul_weight(ctx: NodeContext, bv: TensorValue, b_zp: np.ndarray, what: str) -> tuple[TensorValue, int]:
    """The B operand of an integer matmul as int8 with one zero point: a per-column zero point is folded
    into a constant B at import (which must then fit int8)."""
    if b_zp.size > 1:
        if not bv.is_const:
            raise ctx.error(f"a per-column zero point of a run-time {what} is not supported")
        arr = np.asarray(bv.const).astype(np.int64) - b_zp
        if arr.min(initial=0) < -128 or arr.max(initial=0) > 127:
            raise ctx.error(f"{what} minus its per-column zero points does not fit int8; not supported")
        return TensorValue.constant(arr.astype(np.int8)), 0
    return weight_i8(ctx, bv, b_zp, what)


@lowering("MatMulInteger")
def MatMulInteger(ctx: NodeContext) -> Result:
    """MatMulInteger (opset 10): ``(A - a_zero_point) × (B - b_zero_point)`` in int32 (MATMUL int8 → int32).
    A per-column B zero point is folded into a constant B (which must then fit int8); run-time zero points
    use ``dyn_matmul_i32``."""
    if is_dynamic(ctx, 2, 3) or (ctx.has_input(2) and np.asarray(ctx.input(2).const).size > 1):
        return [dyn_matmul_i32(ctx, 0, 2, 1, 3)]
    a_zp = zp_input(ctx, 2)
    b_zp = zp_input(ctx, 3)
    a, az = act_i8(ctx, 0, a_zp, "A")
    bv = ctx.input(1)
    b, bz = _matmul_weight(ctx, bv, b_zp, "B")
    return [matmul_i32(ctx, a, az, b, bz)]


@lowering("QLinearMatMul")
def QLinearMatMul(ctx: NodeContext) -> Result:
    """QLinearMatMul (opsets 10, 21): MATMUL int8 with zero points → int32 → RESCALE by
    a_scale·b_scale/y_scale (per column when b_scale is per column) to the output type. Run-time scales
    or zero points: ``dyn_matmul_i32`` and ONNX's float formula ``rint(acc · a_scale·b_scale/y_scale) + y_zp``."""
    if is_dynamic(ctx, 1, 2, 4, 5, 6, 7):
        acc = dyn_matmul_i32(ctx, 0, 2, 3, 5)
        rank = len(shape_of(acc))
        factor = scale_product(ctx, [1, 4], 6, rank, {4: rank - 1})
        return [dyn_requant(ctx, acc, factor, 7, zp_kind(ctx, 7, U8))]
    a_scale = scale_vec(ctx, ctx.const(1, "a_scale"), "a_scale")
    a_zp = zp_input(ctx, 2)
    b_scale = scale_vec(ctx, ctx.const(4, "b_scale"), "b_scale")
    b_zp = zp_input(ctx, 5)
    y_scale = scale_vec(ctx, ctx.const(6, "y_scale"), "y_scale")
    y_zp = zp_input(ctx, 7)
    out_kind = out_kind_of_zp(ctx, 7)
    if out_kind not in (I8, U8) or a_scale.size != 1 or y_scale.size != 1:
        raise ctx.error("only per-tensor int8/uint8 A and output quantization is supported")
    a, az = act_i8(ctx, 0, a_zp, "a")
    bv = ctx.input(3)
    b, bz = _matmul_weight(ctx, bv, b_zp, "b")
    acc = matmul_i32(ctx, a, az, b, bz)
    scale = a_scale[0] * b_scale / y_scale[0]
    n = shape_of(acc)[-1]
    scale = np.broadcast_to(scale, (n,)) if scale.size > 1 else scale
    return [requantize(ctx, acc, 0, list(scale), out_kind, int(y_zp[0]), per_channel=scale.size > 1)]
