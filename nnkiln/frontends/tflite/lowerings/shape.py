"""Data movement (document legalize_tflite: ``tfl.reshape``, ``tfl.squeeze``, ``tfl.expand_dims``, ``tfl.transpose``,
``tfl.concatenation``, ``tfl.pad``/``padv2``, ``tfl.split``/``split_v``, ``tfl.slice``, ``tfl.strided_slice``,
``tfl.resize_nearest_neighbor``, ``tfl.resize_bilinear``).

int8 values move as codes: TFLite requires equal input/output quantization for these ops, except
CONCATENATION, whose inputs are RESCALEd to the output's quantization when they differ (TFLite's reference
``ConcatenationWithScaling`` rounds ``(x - zp_in)·s_in/s_out + zp_out`` in float; deviation: the RESCALE
rounds the fixed-point product, which can differ by one step at a tie).

Resize: the document leaves tfl.resize_* TODO, and its TF ``lower_resize_op`` is inconsistent with 0.30's RESIZE
(inventory §2.7); here the source
coordinates are computed at import exactly as TFLite's reference kernels do (float32 ``scale``, align_corners,
half_pixel_centers) and the resize is built from GATHERs along H then W (nearest: exact, int8 too; bilinear:
``a·(1 - d) + b·d`` per axis with TFLite's lower/upper indices and weights, float; int8 bilinear: TFLite's
integer algorithm with 10-bit weights, exact).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from xdsl.dialects.builtin import TensorType
from xdsl.ir import SSAValue

from nnkiln.dialects.tosa.base import Kind, element_type
from nnkiln.frontends.common.arith import etype, shape_of
from nnkiln.frontends.common.broadcast import reshape
from nnkiln.frontends.common.nn import pad_value, slice_value
from nnkiln.frontends.tflite.importer import OpContext
from nnkiln.frontends.tflite.lowerings._common import fused_activation, rescale_tfl
from nnkiln.frontends.tflite.lowerings._registry import lowering


@lowering("RESHAPE", "SQUEEZE", "EXPAND_DIMS")
def reshape_op(ctx: OpContext) -> list[SSAValue]:
    """``tfl.reshape``/``squeeze``/``expand_dims`` → RESHAPE to the output tensor's static shape."""
    return [reshape(ctx.g, ctx.value(0), ctx.tout().shape)]


@lowering("TRANSPOSE")
def transpose_op(ctx: OpContext) -> list[SSAValue]:
    """``tfl.transpose`` → TRANSPOSE with the constant permutation."""
    from nnkiln.frontends.common.layout import transpose

    perm = [int(p) for p in ctx.const(1, "perm").reshape(-1)]
    return [transpose(ctx.g, ctx.value(0), perm)]


@lowering("CONCATENATION")
def concatenation(ctx: OpContext) -> list[SSAValue]:
    """``tfl.concatenation`` → CONCAT (+ RESCALE of int8 inputs quantized unlike the output; module
    docstring) + fused activation."""
    from nnkiln.dialects.tosa.ops_data_layout import ConcatOp

    rank = len(ctx.tout().shape)
    axis = int(ctx.opt("Axis", 0)) % rank
    parts = []
    for i in range(len(ctx.op.inputs)):
        v = ctx.value(i)
        if ctx.is_quantized():
            qi, qo = ctx.quant(ctx.tin(i)), ctx.quant(ctx.tout())
            if float(qi.scale[0]) != float(qo.scale[0]) or int(qi.zero_point[0]) != int(qo.zero_point[0]):
                v = rescale_tfl(ctx.g, v, Kind.I8, float(qi.scale[0]) / float(qo.scale[0]),
                                input_zp=int(qi.zero_point[0]), output_zp=int(qo.zero_point[0]))
        parts.append(v)
    y = ctx.g.value(ConcatOp, [parts], etype(parts[0]), axis=axis)
    return [fused_activation(ctx, y)]


@lowering("PAD", "PADV2")
def pad(ctx: OpContext) -> list[SSAValue]:
    """``tfl.pad``/``padv2`` → PAD with the constant paddings; the pad value is 0 (float), the output zero
    point (int8 PAD), or PADV2's constant."""
    pads = ctx.const(1, "paddings").reshape(-1, 2)
    value: float = 0.0
    if ctx.op.name == "PADV2" and ctx.has_input(2):
        value = float(ctx.const(2, "constant_values").reshape(-1)[0])
    elif ctx.is_quantized():
        value = float(ctx.quant(ctx.tout()).zero_point[0])
    return [pad_value(ctx.g, ctx.value(0), [(int(a), int(b)) for a, b in pads], value)]


def _split_parts(ctx: OpContext, x: SSAValue, axis: int, sizes: Sequence[int]) -> list[SSAValue]:
    shape = shape_of(x)
    out, start = [], 0
    for s in sizes:
        begin = [0] * len(shape)
        begin[axis] = start
        size = list(shape)
        size[axis] = s
        out.append(slice_value(ctx.g, x, begin, size))
        start += s
    return out


@lowering("SPLIT")
def split(ctx: OpContext) -> list[SSAValue]:
    """``tfl.split`` (inputs: axis, value) → one SLICE per output."""
    x = ctx.value(1)
    axis = int(ctx.const(0, "axis").reshape(-1)[0]) % len(shape_of(x))
    return _split_parts(ctx, x, axis, [ctx.tout(i).shape[axis] for i in range(len(ctx.op.outputs))])


@lowering("SPLIT_V")
def split_v(ctx: OpContext) -> list[SSAValue]:
    """``tfl.split_v`` (inputs: value, size_splits, axis) → one SLICE per output."""
    x = ctx.value(0)
    axis = int(ctx.const(2, "axis").reshape(-1)[0]) % len(shape_of(x))
    return _split_parts(ctx, x, axis, [ctx.tout(i).shape[axis] for i in range(len(ctx.op.outputs))])


@lowering("SLICE")
def slice_op(ctx: OpContext) -> list[SSAValue]:
    """``tfl.slice`` → SLICE (size -1: to the end)."""
    x = ctx.value(0)
    shape = shape_of(x)
    begin = [int(b) for b in ctx.const(1, "begin").reshape(-1)]
    size = [int(s) if int(s) >= 0 else shape[i] - begin[i] for i, s in enumerate(ctx.const(2, "size").reshape(-1))]
    return [slice_value(ctx.g, x, begin, size)]


@lowering("STRIDED_SLICE")
def strided_slice(ctx: OpContext) -> list[SSAValue]:
    """``tfl.strided_slice`` → SLICE, then (stride > 1) RESHAPE + SLICE picking every stride-th element,
    negative strides by REVERSE, then RESHAPE to the output shape (shrink/new-axis masks). The index
    arithmetic is numpy's slicing of the constant begin/end/strides with TFLite's masks (the document's
    tfl.strided_slice
    heading is empty; its TF ``lower_strided_slice_op`` lacks negative strides). ``ellipsis_mask`` is not supported."""
    from nnkiln.dialects.tosa.ops_data_layout import ReverseOp

    x = ctx.value(0)
    shape = shape_of(x)
    begin = [int(v) for v in ctx.const(1, "begin").reshape(-1)]
    end = [int(v) for v in ctx.const(2, "end").reshape(-1)]
    strides = [int(v) for v in ctx.const(3, "strides").reshape(-1)] if ctx.has_input(3) else [1] * len(begin)
    bm, em = int(ctx.opt("BeginMask", 0)), int(ctx.opt("EndMask", 0))
    sm, nm, elm = int(ctx.opt("ShrinkAxisMask", 0)), int(ctx.opt("NewAxisMask", 0)), int(ctx.opt("EllipsisMask", 0))
    if nm or elm:
        raise ctx.error("STRIDED_SLICE with new_axis_mask or ellipsis_mask is not supported")
    if bool(ctx.opt("Offset", False)):
        raise ctx.error("STRIDED_SLICE with offset=true is not supported")
    y = x
    for ax, size in enumerate(shape):
        if ax >= len(begin):
            break
        st = strides[ax]
        if sm >> ax & 1:
            b = begin[ax] % size
            idx = [b]
        else:
            sl = slice(None if bm >> ax & 1 else begin[ax], None if em >> ax & 1 else end[ax], st)
            idx = list(range(size))[sl]
        if not idx:
            raise ctx.error(f"axis {ax} selects no element")
        lo, hi = min(idx), max(idx)
        cur = list(shape_of(y))
        start = [0] * len(cur)
        start[ax] = lo
        cur[ax] = hi - lo + 1
        y = slice_value(ctx.g, y, start, cur)
        step = abs(st)
        if len(idx) > 1 and step > 1:
            s2 = list(shape_of(y))
            padded = step * len(idx)
            y = pad_value(ctx.g, y, [(0, padded - s2[ax]) if i == ax else (0, 0) for i in range(len(s2))])
            view = s2[:ax] + [len(idx), step] + s2[ax + 1:]
            y = reshape(ctx.g, y, view)
            y = slice_value(ctx.g, y, [0] * len(view), view[:ax + 1] + [1] + view[ax + 2:])
            y = reshape(ctx.g, y, s2[:ax] + [len(idx)] + s2[ax + 1:])
        if st < 0 and len(idx) > 1:
            y = ctx.g.value(ReverseOp, [y], etype(y), axis=ax)
    return [reshape(ctx.g, y, ctx.tout().shape)]


def _gather_axis(ctx: OpContext, x: SSAValue, axis: int, idx: np.ndarray) -> SSAValue:
    """``x`` indexed by ``idx`` along ``axis`` (1 or 2 of NHWC) by one GATHER."""
    from nnkiln.dialects.tosa.ops_scatter_gather import GatherOp

    n, h, w, c = shape_of(x)
    if axis == 1:
        values, batch = reshape(ctx.g, x, (n, h, w * c)), n
    else:
        values, batch = reshape(ctx.g, x, (n * h, w, c)), n * h
    ind = np.ascontiguousarray(np.broadcast_to(idx.astype(np.int32), (batch, idx.size)))
    iv = ctx.g.const(ind, TensorType(element_type(Kind.I32), list(ind.shape)))
    y = ctx.g.value(GatherOp, [values, iv], etype(x))
    out = [n, h, w, c]
    out[axis] = idx.size
    return reshape(ctx.g, y, out)


def _scale(in_size: int, out_size: int, align_corners: bool) -> np.float32:
    if align_corners and out_size > 1:
        return np.float32(in_size - 1) / np.float32(out_size - 1)
    return np.float32(in_size) / np.float32(out_size)


def _resize_args(ctx: OpContext) -> tuple[SSAValue, list[int], bool, bool]:
    x = ctx.value(0)
    out = [int(v) for v in ctx.const(1, "size").reshape(-1)]
    return x, out, bool(ctx.opt("AlignCorners", False)), bool(ctx.opt("HalfPixelCenters", False))


@lowering("RESIZE_NEAREST_NEIGHBOR")
def resize_nearest(ctx: OpContext) -> list[SSAValue]:
    """``tfl.resize_nearest_neighbor`` → GATHER along H and W with TFLite's reference source indices (module
    docstring); exact for float and int8."""
    x, out, align, half = _resize_args(ctx)
    y = x
    for axis in (1, 2):
        in_size, out_size = shape_of(x)[axis], out[axis - 1]
        scale = _scale(in_size, out_size, align)
        offset = np.float32(0.5 if half else 0.0)
        pos = (np.arange(out_size, dtype=np.float32) + offset) * scale
        src = (np.sign(pos) * np.floor(np.abs(pos) + np.float32(0.5))) if align else np.floor(pos)
        idx = np.minimum(src.astype(np.int64), in_size - 1)
        if half:
            idx = np.maximum(idx, 0)
        if out_size != in_size or not np.array_equal(idx, np.arange(in_size)):
            y = _gather_axis(ctx, y, axis, idx)
    return [y]


@lowering("RESIZE_BILINEAR")
def resize_bilinear(ctx: OpContext) -> list[SSAValue]:
    """``tfl.resize_bilinear`` → per axis two GATHERs (lower/upper source rows) and ``a·(1 - d) + b·d`` with
    TFLite's reference coordinates (float; module docstring). int8: TFLite's ``ResizeBilinearInteger`` exactly
    (``_resize_bilinear_int8``)."""
    from nnkiln.dialects.tosa.ops_elementwise_binary import AddOp, MulOp

    x, out, align, half = _resize_args(ctx)
    if ctx.is_quantized():
        return [_resize_bilinear_int8(ctx, x, out, align, half)]
    y = x
    et = etype(x)
    for axis in (1, 2):
        in_size, out_size = shape_of(x)[axis], out[axis - 1]
        scale = _scale(in_size, out_size, align)
        j = np.arange(out_size, dtype=np.float32)
        pos = (j + np.float32(0.5)) * scale - np.float32(0.5) if half else j * scale
        lower = np.maximum(np.floor(pos).astype(np.int64), 0)
        upper = np.minimum(np.ceil(pos).astype(np.int64), in_size - 1)
        d = (pos - lower.astype(np.float32)).astype(np.float32)
        a = _gather_axis(ctx, y, axis, lower)
        b = _gather_axis(ctx, y, axis, upper)
        dshape = [1, 1, 1, 1]
        dshape[axis] = out_size
        dv = ctx.g.const(d.reshape(dshape))
        # TFLite: a·(1 - d) + b·d
        one_minus = ctx.g.const((np.float32(1) - d).reshape(dshape))
        y = ctx.g.value(AddOp, [ctx.g.value(MulOp, [a, one_minus], et, shift=0),
                                ctx.g.value(MulOp, [b, dv], et, shift=0)], et)
    return [y]


def _axis_weights_10(in_size: int, out_size: int, align: bool, half: bool) -> tuple[np.ndarray, np.ndarray,
                                                                                   np.ndarray, np.ndarray]:
    """TFLite's ``ComputeInterpolationValuesInteger`` along one axis: (lower, upper, weight of lower, weight of
    upper) with weights in units of 2^-10."""
    if align and out_size > 1:
        scale = ((1 << 10) * (in_size - 1) + (out_size - 1) // 2) // (out_size - 1)
    else:
        scale = ((1 << 10) * in_size + out_size // 2) // out_size
    lo, hi, wlo, whi = [], [], [], []
    for j in range(out_size):
        sv = j * scale + scale // 2 - (1 << 9) if half else j * scale
        low = max(int(sv / (1 << 10)), 0)  # C division truncates toward zero
        up = min((sv + (1 << 10) - 1) // (1 << 10), in_size - 1)
        frac = sv - (1 << 10) * low
        lo.append(low)
        hi.append(up)
        wlo.append((1 << 10) - frac)
        whi.append(frac)
    return (np.array(lo), np.array(hi), np.array(wlo, np.int32), np.array(whi, np.int32))


def _resize_bilinear_int8(ctx: OpContext, x: SSAValue, out: list[int], align: bool, half: bool) -> SSAValue:
    """Σ over the four corners of ``v·wy·wx`` in int32 (|sum| < 2^28), ``± 2^19`` by sign, INT_DIV by 2^20
    (C truncation), CAST to int8: TFLite's ``ResizeBilinearInteger``."""
    from nnkiln.dialects.tosa.ops_comparison import GreaterOp
    from nnkiln.dialects.tosa.ops_elementwise_binary import AddOp, IntDivOp, MulOp
    from nnkiln.dialects.tosa.ops_elementwise_ternary import SelectOp
    from nnkiln.dialects.tosa.ops_type_conversion import CastOp

    g = ctx.g
    i32 = element_type(Kind.I32)
    n, h, w, c = shape_of(x)
    ylo, yhi, wylo, wyhi = _axis_weights_10(h, out[0], align, half)
    xlo, xhi, wxlo, wxhi = _axis_weights_10(w, out[1], align, half)
    xi = rescale_tfl(g, x, Kind.I32, 1.0)

    def k(arr: np.ndarray, shape: list[int]) -> SSAValue:
        a = np.ascontiguousarray(arr.astype(np.int32).reshape(shape))
        return g.const(a, TensorType(i32, shape))

    total: SSAValue | None = None
    for yi, wy in ((ylo, wylo), (yhi, wyhi)):
        rows = _gather_axis(ctx, xi, 1, yi)
        for xj, wx in ((xlo, wxlo), (xhi, wxhi)):
            v = _gather_axis(ctx, rows, 2, xj)
            v = g.value(MulOp, [v, k(wy, [1, out[0], 1, 1])], i32, shift=0)
            v = g.value(MulOp, [v, k(wx, [1, 1, out[1], 1])], i32, shift=0)
            total = v if total is None else g.value(AddOp, [total, v], i32)
    assert total is not None
    one = [1, 1, 1, 1]
    pos = g.value(GreaterOp, [total, k(np.zeros(1), one)], element_type(Kind.BOOL))
    rounded = g.value(SelectOp, [pos, g.value(AddOp, [total, k(np.array([1 << 19]), one)], i32),
                                 g.value(AddOp, [total, k(np.array([-(1 << 19)]), one)], i32)], i32)
    q = g.value(IntDivOp, [rounded, k(np.array([1 << 20]), one)], i32)
    return g.value(CastOp, [q], element_type(Kind.I8))
