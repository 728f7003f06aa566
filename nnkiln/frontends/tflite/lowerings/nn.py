"""Convolutions, fully connected, pools and batched matmul (document legalize_tflite: ``tfl.conv_2d``,
``tfl.depthwise_conv_2d``, ``tfl.fully_connected``, ``tfl.average_pool_2d``, ``tfl.max_pool_2d``,
``tfl.transpose_conv``, ``tfl.batch_matmul``).

TFLite and TOSA share NHWC activations and OHWI conv weights, so weights pass unchanged except the depthwise
weight [1, KH, KW, C·M] → [KH, KW, C, M]. SAME padding is TFLite's (``ComputePaddingHeightWidth``: the extra
row at the end); end padding is adjusted so TOSA's exact output-size division holds (never-read rows are sliced
off). Quantized (int8) forms accumulate in int32 with the input zero point (TFLite's int8 weights are symmetric)
and requantize with one RESCALE per output channel computing TFLite's ``MultiplyByQuantizedMultiplier``
(``_common.rescale_tfl``), then clamp to the fused activation's quantized range.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from xdsl.dialects.builtin import TensorType
from xdsl.ir import SSAValue

from nnkiln.dialects.tosa.base import Kind, element_type
from nnkiln.frontends.common.arith import etype, shape_of
from nnkiln.frontends.common.broadcast import reshape
from nnkiln.frontends.common.nn import pad_value, trim_input
from nnkiln.frontends.tflite.importer import OpContext
from nnkiln.frontends.tflite.lowerings._common import fused_activation, rescale_tfl, window_pads
from nnkiln.frontends.tflite.lowerings._registry import lowering


def _weights(ctx: OpContext, i: int) -> np.ndarray:
    return ctx.const(i, "weights")


def _bias(ctx: OpContext, i: int, count: int, quantized: bool) -> SSAValue:
    """The bias input (zeros when omitted) as a TOSA constant: int32 for int8 ops, else the activation type."""
    if ctx.has_input(i):
        b = ctx.const(i, "bias").reshape(-1)
    else:
        b = np.zeros(count, np.int32 if quantized else np.float32)
    if quantized:
        if b.dtype != np.int32:
            raise ctx.error(f"a {b.dtype} bias of an int8 op is not supported (int32 expected)")
        return ctx.g.const(b, TensorType(element_type(Kind.I32), [count]))
    return ctx.g.const(b.astype(np.float32))


def _qconv_params(ctx: OpContext) -> tuple[int, list[float], int]:
    """(input zero point, per-channel requantization scales, output zero point) of an int8 conv/FC."""
    qi, qw, qo = ctx.quant(ctx.tin(0)), ctx.quant(ctx.tin(1)), ctx.quant(ctx.tout())
    if np.any(qw.zero_point != 0):
        raise ctx.error("int8 weights with a non-zero zero point are not supported (TFLite's are symmetric)")
    s_in, s_out = float(qi.scale[0]), float(qo.scale[0])
    scales = [s_in * float(sw) / s_out for sw in qw.scale.astype(np.float64)]
    return int(qi.zero_point[0]), scales, int(qo.zero_point[0])


def _finish(ctx: OpContext, acc: SSAValue, quantized: bool) -> SSAValue:
    """Requantize an int32 accumulator (quantized ops), then the fused activation."""
    if quantized:
        zp_in, scales, zp_out = _qconv_params(ctx)
        del zp_in
        nch = shape_of(acc)[-1]
        if len(scales) == 1:
            scales = scales * nch
        acc = rescale_tfl(ctx.g, acc, Kind.I8, scales, output_zp=zp_out)
    return fused_activation(ctx, acc)


def _conv_input(ctx: OpContext, kernel: Sequence[int], strides: Sequence[int], dilations: Sequence[int]
                ) -> tuple[SSAValue, list[int]]:
    x = ctx.value(0)
    pairs, _ = window_pads(ctx, shape_of(x)[1:3], kernel, strides, dilations)
    x, ends = trim_input(ctx.g, x, [e for _, e in pairs])
    return x, [pairs[0][0], ends[0], pairs[1][0], ends[1]]


@lowering("CONV_2D")
def conv_2d(ctx: OpContext) -> list[SSAValue]:
    """``tfl.conv_2d`` → CONV2D (+ accumulator RESCALE by ``sIn·sW/sOut`` for int8) + fused activation, as the
    document's tfl.conv_2d. Deviations: per-channel weight scales (the document is per-tensor only); the
    multiplier is TFLite's (double rounding, ``rescale_tfl``); the fused activation clamps in the quantized domain
    (the document's ``convert_fused_activation`` is TODO)."""
    from nnkiln.dialects.tosa.ops_tensor import Conv2DOp

    w = _weights(ctx, 1)
    q = ctx.is_quantized()
    strides = [int(ctx.opt("StrideH", 1)), int(ctx.opt("StrideW", 1))]
    dil = [int(ctx.opt("DilationHFactor", 1)), int(ctx.opt("DilationWFactor", 1))]
    x, pad = _conv_input(ctx, w.shape[1:3], strides, dil)
    if shape_of(x)[3] != w.shape[3]:
        raise ctx.error("grouped CONV_2D (input channels != weight channels) is not supported")
    attrs = dict(pad=pad, stride=strides, dilation=dil)
    if q:
        zp_in, _, _ = _qconv_params(ctx)
        wv = ctx.g.const(w, TensorType(element_type(Kind.I8), list(w.shape)))
        acc = ctx.g.value(Conv2DOp, [x, wv, _bias(ctx, 2, w.shape[0], True)], element_type(Kind.I32),
                          input_zp=zp_in, weight_zp=0, **attrs)
    else:
        acc = ctx.g.value(Conv2DOp, [x, ctx.g.const(w.astype(np.float32)), _bias(ctx, 2, w.shape[0], False)],
                          etype(x), input_zp=0, weight_zp=0, **attrs)
    return [_finish(ctx, acc, q)]


@lowering("DEPTHWISE_CONV_2D")
def depthwise_conv_2d(ctx: OpContext) -> list[SSAValue]:
    """``tfl.depthwise_conv_2d`` → DEPTHWISE_CONV2D with the weight [1,KH,KW,C·M] reshaped to [KH,KW,C,M]
    (the document's tfl.depthwise_conv_2d, which shows no filter layout conversion and types the int8 result as
    the output instead of the int32 accumulator), + per-channel RESCALE for int8 + fused activation."""
    from nnkiln.dialects.tosa.ops_tensor import DepthwiseConv2DOp

    w = _weights(ctx, 1)
    q = ctx.is_quantized()
    strides = [int(ctx.opt("StrideH", 1)), int(ctx.opt("StrideW", 1))]
    dil = [int(ctx.opt("DilationHFactor", 1)), int(ctx.opt("DilationWFactor", 1))]
    x, pad = _conv_input(ctx, w.shape[1:3], strides, dil)
    c = shape_of(x)[3]
    kh, kw, cm = w.shape[1], w.shape[2], w.shape[3]
    w4 = np.ascontiguousarray(w.reshape(kh, kw, c, cm // c))
    attrs = dict(pad=pad, stride=strides, dilation=dil)
    if q:
        zp_in, _, _ = _qconv_params(ctx)
        wv = ctx.g.const(w4, TensorType(element_type(Kind.I8), list(w4.shape)))
        acc = ctx.g.value(DepthwiseConv2DOp, [x, wv, _bias(ctx, 2, cm, True)], element_type(Kind.I32),
                          input_zp=zp_in, weight_zp=0, **attrs)
    else:
        acc = ctx.g.value(DepthwiseConv2DOp, [x, ctx.g.const(w4.astype(np.float32)), _bias(ctx, 2, cm, False)],
                          etype(x), input_zp=0, weight_zp=0, **attrs)
    return [_finish(ctx, acc, q)]


@lowering("FULLY_CONNECTED")
def fully_connected(ctx: OpContext) -> list[SSAValue]:
    """``tfl.fully_connected`` → RESHAPE to [batch, IC] + FULLY_CONNECTED (+ RESCALE for int8) + RESHAPE to the
    output shape (``keep_num_dims``) + fused activation (the document's tfl.fully_connected; its bias length
    ``filter.shape[3]`` of a 2-D filter is read
    as ``filter.shape[0]`` here, and int8 scales may be per channel). Deviation:
    run-time (non-constant) weights become a MATMUL instead of an error."""
    from nnkiln.dialects.tosa.ops_tensor import FullyConnectedOp

    q = ctx.is_quantized()
    x = ctx.value(0)
    wshape = ctx.tin(1).shape
    oc, ic = int(wshape[0]), int(wshape[-1])
    rows = int(np.prod(shape_of(x))) // ic
    x2 = reshape(ctx.g, x, (rows, ic))
    if q:
        zp_in, _, _ = _qconv_params(ctx)
        w = _weights(ctx, 1)
        wv = ctx.g.const(w.reshape(oc, ic), TensorType(element_type(Kind.I8), [oc, ic]))
        acc = ctx.g.value(FullyConnectedOp, [x2, wv, _bias(ctx, 2, oc, True)], element_type(Kind.I32),
                          input_zp=zp_in, weight_zp=0)
    elif ctx.is_const(1):
        w = _weights(ctx, 1).reshape(oc, ic).astype(np.float32)
        acc = ctx.g.value(FullyConnectedOp, [x2, ctx.g.const(w), _bias(ctx, 2, oc, False)], etype(x),
                          input_zp=0, weight_zp=0)
    else:
        from nnkiln.dialects.tosa.ops_elementwise_binary import AddOp
        from nnkiln.dialects.tosa.ops_tensor import MatMulOp
        from nnkiln.frontends.common.layout import transpose

        wt = transpose(ctx.g, reshape(ctx.g, ctx.value(1), (oc, ic)), (1, 0))
        acc = ctx.g.value(MatMulOp, [reshape(ctx.g, x2, (1, rows, ic)), reshape(ctx.g, wt, (1, ic, oc))],
                          etype(x), A_zp=0, B_zp=0)
        acc = reshape(ctx.g, acc, (rows, oc))
        if ctx.has_input(2):
            acc = ctx.g.value(AddOp, [acc, reshape(ctx.g, ctx.value(2), (1, oc))], etype(x))
    y = _finish(ctx, acc, q)
    return [reshape(ctx.g, y, ctx.tout().shape)]


def _pool_geometry(ctx: OpContext, x: SSAValue) -> tuple[SSAValue, list[int], list[int], list[int]]:
    kernel = [int(ctx.opt("FilterHeight", 1)), int(ctx.opt("FilterWidth", 1))]
    strides = [int(ctx.opt("StrideH", 1)), int(ctx.opt("StrideW", 1))]
    pairs, _ = window_pads(ctx, shape_of(x)[1:3], kernel, strides, [1, 1])
    x, ends = trim_input(ctx.g, x, [e for _, e in pairs])
    return x, kernel, strides, [pairs[0][0], ends[0], pairs[1][0], ends[1]]


@lowering("MAX_POOL_2D")
def max_pool_2d(ctx: OpContext) -> list[SSAValue]:
    """``tfl.max_pool_2d`` (TODO in the document) → MAX_POOL2D (+ fused activation); int8 runs on the codes (TFLite
    requires equal
    input and output quantization)."""
    from nnkiln.dialects.tosa.ops_tensor import MaxPool2dOp

    x, kernel, strides, pad = _pool_geometry(ctx, ctx.value(0))
    y = ctx.g.value(MaxPool2dOp, [x], etype(x), kernel=kernel, stride=strides, pad=pad)
    return [fused_activation(ctx, y)]


@lowering("AVERAGE_POOL_2D")
def average_pool_2d(ctx: OpContext) -> list[SSAValue]:
    """``tfl.average_pool_2d`` → AVG_POOL2D for float (padding excluded from the count, as TFLite).

    int8 deviation from the document (which emits AVG_POOL2D with zero points): TOSA's int8 AVG_POOL2D divides
    by a fixed-point reciprocal with round-half-up, TFLite's reference kernel computes
    ``(sum ± count/2) / count`` (half away from zero) on the raw codes; that is reproduced exactly: the window
    sums by a DEPTHWISE_CONV2D with unit weights (int32), ± half the per-position count (a constant),
    INT_DIV by the count, MAXIMUM/MINIMUM to the activation range (CLAMP has no int32 form), CAST to int8."""
    from nnkiln.dialects.tosa.ops_tensor import AvgPool2dOp

    x0 = ctx.value(0)
    x, kernel, strides, pad = _pool_geometry(ctx, x0)
    if not ctx.is_quantized():
        y = ctx.g.value(AvgPool2dOp, [x], etype(x), kernel=kernel, stride=strides, pad=pad, input_zp=0,
                        output_zp=0)
        return [fused_activation(ctx, y)]
    return [_avg_pool_int8(ctx, x, kernel, strides, pad)]


def _avg_pool_int8(ctx: OpContext, x: SSAValue, kernel: list[int], strides: list[int], pad: list[int]) -> SSAValue:
    from nnkiln.dialects.tosa.ops_comparison import GreaterOp
    from nnkiln.dialects.tosa.ops_elementwise_binary import AddOp, IntDivOp, MaximumOp, MinimumOp
    from nnkiln.dialects.tosa.ops_elementwise_ternary import SelectOp
    from nnkiln.dialects.tosa.ops_tensor import DepthwiseConv2DOp
    from nnkiln.dialects.tosa.ops_type_conversion import CastOp
    from nnkiln.frontends.tflite.lowerings._common import NONE, quantized_act_range

    g = ctx.g
    n, h, w, c = shape_of(x)
    i32 = element_type(Kind.I32)
    ones = g.const(np.ones((kernel[0], kernel[1], c, 1), np.int8), TensorType(element_type(Kind.I8),
                                                                               [kernel[0], kernel[1], c, 1]))
    s = g.value(DepthwiseConv2DOp, [x, ones, g.const(np.zeros(c, np.int32), TensorType(i32, [c]))], i32,
                pad=pad, stride=strides, dilation=[1, 1], input_zp=0, weight_zp=0)
    _, oh, ow, _ = shape_of(s)
    counts = np.zeros((1, oh, ow, 1), np.int32)
    for oy in range(oh):
        ys = oy * strides[0] - pad[0]
        cy = min(ys + kernel[0], h) - max(ys, 0)
        for ox in range(ow):
            xs = ox * strides[1] - pad[2]
            counts[0, oy, ox, 0] = cy * (min(xs + kernel[1], w) - max(xs, 0))
    half = counts // 2
    t = TensorType(i32, [1, oh, ow, 1])
    pos = g.value(GreaterOp, [s, g.const(np.zeros((1, 1, 1, 1), np.int32), TensorType(i32, [1, 1, 1, 1]))],
                  element_type(Kind.BOOL))
    plus = g.value(AddOp, [s, g.const(half, t)], i32)
    minus = g.value(AddOp, [s, g.const(-half, t)], i32)
    avg = g.value(IntDivOp, [g.value(SelectOp, [pos, plus, minus], i32), g.const(counts, t)], i32)
    qo = ctx.quant(ctx.tout())
    lo, hi = quantized_act_range(int(ctx.opt("FusedActivationFunction", NONE)), float(qo.scale[0]),
                                 int(qo.zero_point[0]))
    one = TensorType(i32, [1, 1, 1, 1])
    avg = g.value(MaximumOp, [avg, g.const(np.full((1, 1, 1, 1), lo, np.int32), one)], i32)
    avg = g.value(MinimumOp, [avg, g.const(np.full((1, 1, 1, 1), hi, np.int32), one)], i32)
    return g.value(CastOp, [avg], element_type(Kind.I8))


@lowering("TRANSPOSE_CONV")
def transpose_conv(ctx: OpContext) -> list[SSAValue]:
    """``tfl.transpose_conv`` (inputs: output_shape, weights [OC,KH,KW,IC], input, bias?) → TRANSPOSE_CONV2D
    (TODO in the document): TFLite's padding (computed on the output as for a conv) becomes
    the crop ``out_pad``; a negative crop (output larger than the full result) pads and adds the bias after.
    int8: int32 accumulation with the input zero point, then TFLite's per-channel requantization (as
    ``reference_integer_ops::TransposeConv``)."""
    from nnkiln.dialects.tosa.ops_elementwise_binary import AddOp
    from nnkiln.dialects.tosa.ops_tensor import TransposeConv2DOp

    x = ctx.value(2)
    q = ctx.tin(2).dtype == np.int8
    out_shape = [int(d) for d in ctx.tout().shape]
    w = _weights(ctx, 1)
    strides = [int(ctx.opt("StrideH", 1)), int(ctx.opt("StrideW", 1))]
    n, ih, iw, _ = shape_of(x)
    oc, kh, kw, _ = w.shape
    crops = []
    same = int(ctx.opt("Padding", 0)) == 0
    for i, (insz, k, s) in enumerate(((ih, kh, strides[0]), (iw, kw, strides[1]))):
        full = (insz - 1) * s + k
        before = max((insz - 1) * s + k - out_shape[1 + i], 0) // 2 if same else 0
        crops.append((before, full - before - out_shape[1 + i]))
    neg = any(c < 0 for pair in crops for c in pair)
    bias = _bias(ctx, 3, oc, q)
    acc_t = element_type(Kind.I32) if q else etype(x)
    zero_bias = ctx.g.const(np.zeros(oc, np.int32 if q else np.float32), TensorType(acc_t, [oc]))
    out_pad = [max(c, 0) for pair in crops for c in pair]
    full_shape = [n] + [(sz - 1) * s + k - out_pad[2 * i] - out_pad[2 * i + 1]
                        for i, (sz, s, k) in enumerate(((ih, strides[0], kh), (iw, strides[1], kw)))] + [oc]
    if q:
        qi, qw, qo = ctx.quant(ctx.tin(2)), ctx.quant(ctx.tin(1)), ctx.quant(ctx.tout())
        if np.any(qw.zero_point != 0):
            raise ctx.error("int8 weights with a non-zero zero point are not supported")
        wv = ctx.g.const(w, TensorType(element_type(Kind.I8), list(w.shape)))
        zps = {"input_zp": int(qi.zero_point[0]), "weight_zp": 0}
    else:
        wv, zps = ctx.g.const(w.astype(np.float32)), {"input_zp": 0, "weight_zp": 0}
    y = ctx.g.value(TransposeConv2DOp, [x, wv, zero_bias if neg else bias], acc_t, out_pad=out_pad,
                    stride=strides, out_shape=full_shape, **zps)
    if neg:
        y = pad_value(ctx.g, y, [(0, 0)] + [(max(-a, 0), max(-b, 0)) for a, b in crops] + [(0, 0)])
        y = ctx.g.value(AddOp, [y, reshape(ctx.g, bias, (1, 1, 1, oc))], acc_t)
    if q:
        s_in, s_out = float(qi.scale[0]), float(qo.scale[0])
        scales = [s_in * float(sw) / s_out for sw in qw.scale.astype(np.float64)]
        y = rescale_tfl(ctx.g, y, Kind.I8, scales * oc if len(scales) == 1 else scales,
                        output_zp=int(qo.zero_point[0]))
    return [fused_activation(ctx, y)]


@lowering("BATCH_MATMUL")
def batch_matmul(ctx: OpContext) -> list[SSAValue]:
    """``tfl.batch_matmul`` → (TRANSPOSE for adj_x/adj_y) + RESHAPE to rank 3 + MATMUL + RESHAPE (not in
    the document); batch dimensions broadcast by TILE. int8: MATMUL with both zero points (int32),
    then TFLite's ``MultiplyByQuantizedMultiplier`` by ``s_a·s_b/s_out`` (one RESCALE), as its reference kernel."""
    from nnkiln.dialects.tosa.ops_data_layout import TileOp
    from nnkiln.dialects.tosa.ops_tensor import MatMulOp
    from nnkiln.frontends.common.broadcast import numpy_broadcast_shape
    from nnkiln.frontends.common.layout import transpose

    g = ctx.g
    q = ctx.is_quantized()
    a, b = ctx.value(0), ctx.value(1)

    def adj(v: SSAValue, flag: bool) -> SSAValue:
        r = len(shape_of(v))
        return transpose(g, v, list(range(r - 2)) + [r - 1, r - 2]) if flag else v

    a, b = adj(a, bool(ctx.opt("AdjX", False))), adj(b, bool(ctx.opt("AdjY", False)))
    sa, sb = shape_of(a), shape_of(b)
    batch = numpy_broadcast_shape(sa[:-2], sb[:-2])

    def to3(v: SSAValue, s: tuple[int, ...]) -> SSAValue:
        full = (1,) * (len(batch) - len(s[:-2])) + s[:-2]
        v = reshape(g, v, full + s[-2:])
        if full != batch:
            v = g.value(TileOp, [v], etype(v), multiples=[bt // f for bt, f in zip(batch, full)] + [1, 1])
        return reshape(g, v, (int(np.prod(batch)), *s[-2:]))

    if not q:
        y = g.value(MatMulOp, [to3(a, sa), to3(b, sb)], etype(a), A_zp=0, B_zp=0)
        return [reshape(g, y, ctx.tout().shape)]
    qa, qb, qo = ctx.quant(ctx.tin(0)), ctx.quant(ctx.tin(1)), ctx.quant(ctx.tout())
    if not (qa.per_tensor and qb.per_tensor):
        raise ctx.error("per-channel quantized BATCH_MATMUL is not supported")
    acc = g.value(MatMulOp, [to3(a, sa), to3(b, sb)], element_type(Kind.I32), A_zp=int(qa.zero_point[0]),
                  B_zp=int(qb.zero_point[0]))
    y = rescale_tfl(g, acc, Kind.I8, float(qa.scale[0]) * float(qb.scale[0]) / float(qo.scale[0]),
                    output_zp=int(qo.zero_point[0]))
    return [reshape(g, y, ctx.tout().shape)]
