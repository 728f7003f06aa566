"""Integer convolution and matmul cores of the quantization lowerings (private module): int8 CONV2D /
DEPTHWISE_CONV2D / MATMUL with zero points accumulating in int32, and the exact paths for run-time scales
and zero points (int16 operands, int48 accumulators, float requantization following ONNX's reference).
See ``_quant_common`` for the family's conventions.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from xdsl.ir import SSAValue

from nnkiln.dialects.tosa.base import Kind
from nnkiln.frontends.common.arith import kind_of_value, shape_of
from nnkiln.frontends.common.broadcast import reshape
from nnkiln.frontends.common.layout import transpose, transpose_const  # noqa: F401
from nnkiln.frontends.common.quant import QuantError, conv_i32_cl
from nnkiln.frontends.onnx.importer import NodeContext, TensorValue
from nnkiln.frontends.onnx.lowerings._integers import rescale, widen_i32
from nnkiln.frontends.onnx.lowerings._quant_common import (
    F16,
    F32,
    I8,
    I16,
    I32,
    RANGE,
    SIGNED,
    U8,
    U16,
    axis_shape,
    clamp_i32,
    const,
    elem_kind_of_array,
    emit,
    narrow_i32,
    requantize,
    scalar_const,
    to_signed,
)

# ------------------------------------------------------------------------------------------------
# integer convolution and matmul cores


def weight_i8(ctx: NodeContext, wv: TensorValue, wzp: np.ndarray, what: str) -> tuple[TensorValue, int]:
    """Weights as int8 with one zero point. Constant weights with per-channel zero points (axis 0) are
    shifted at import (``w - zp[c]`` must then fit int8); run-time weights need a scalar zero point."""
    if wzp.size == 1:
        if wv.is_const:
            arr = np.asarray(wv.const).astype(np.int64)
            signed, off = SIGNED[elem_kind_of_array(ctx, np.asarray(wv.const), wv.kind)]
            if signed is not I8:
                raise ctx.error(f"{what} of type {np.asarray(wv.const).dtype} is not supported (int8/uint8 only)")
            return TensorValue.constant((arr - off).astype(np.int8)), int(wzp[0]) - off
        if wv.kind not in (I8, U8):
            raise ctx.error(f"{what} of type {wv.kind.value} is not supported (int8/uint8 only)")
        v, z = to_signed(ctx, wv, int(wzp[0]))
        return TensorValue.of(v), z
    if not wv.is_const:
        raise ctx.error(f"per-channel zero points of a run-time {what} are not supported")
    arr = np.asarray(wv.const).astype(np.int64)
    shifted = arr - wzp.reshape((-1,) + (1,) * (arr.ndim - 1))
    if shifted.min(initial=0) < -128 or shifted.max(initial=0) > 127:
        raise ctx.error(f"{what} minus its per-channel zero points does not fit int8; not supported")
    return TensorValue.constant(shifted.astype(np.int8)), 0


def conv_i32(ctx: NodeContext, x: SSAValue, x_zp: int, wv: TensorValue, w_zp: int,
             bias: np.ndarray | None) -> tuple[SSAValue, int]:
    """Integer Conv of int8 NCHW (or NCL) ``x`` with int8 weights ``wv`` (M, C/g, K..): the int32
    accumulator in channels-last layout (1-D as [N, 1, L, M]) and the number of spatial axes. Geometry
    attributes are read from ``ctx`` as ONNX Conv defines them (see nn_conv for the exact-division rules)."""
    from nnkiln.frontends.onnx.lowerings.nn_conv import spatial_attrs, to_channels_last, trim_input, window_geometry

    xs = shape_of(x)
    k = len(xs) - 2
    if k not in (1, 2) or len(wv.shape) != len(xs):
        raise ctx.error(f"an integer convolution with input rank {len(xs)} is not supported (1-D and 2-D only)")
    kernel = list(wv.shape[2:])
    in_sizes = list(xs[2:])
    strides, dilations, pairs = spatial_attrs(ctx, in_sizes, kernel)
    group = int(ctx.attr("group", 1))
    ctx.attr("kernel_shape")
    c_in, m_out = xs[1], wv.shape[0]
    if group < 1 or c_in % group or m_out % group or wv.shape[1] * group != c_in:
        raise ctx.error(f"group {group} does not fit input channels {c_in} and weight {list(wv.shape)}")
    geo = [window_geometry(s, kk, st, d, b, e, False) for s, kk, st, d, (b, e) in
           zip(in_sizes, kernel, strides, dilations, pairs)]
    if any(o < 1 for o, _ in geo):
        raise ctx.error(f"the kernel {kernel} is larger than the padded input {in_sizes}")
    xl = to_channels_last(ctx, x)
    xl, ends = trim_input(ctx, xl, [e for _, e in geo])
    begins = [b for b, _ in pairs]
    if k == 1:
        kernel, strides, dilations, begins, ends = [1] + kernel, [1] + strides, [1] + dilations, [0] + begins, [0] + ends
    pad = [p for b, e in zip(begins, ends) for p in (b, e)]
    b = np.zeros(m_out, np.int64) if bias is None else np.asarray(bias).astype(np.int64).reshape(-1)
    if b.size != m_out:
        raise ctx.error(f"bias has {b.size} values, expected {m_out}")
    w = np.asarray(wv.const) if wv.is_const else ctx.importer.materialize(wv)
    w = w.reshape((m_out, wv.shape[1], *kernel)) if isinstance(w, np.ndarray) else \
        reshape(ctx.g, w, (m_out, wv.shape[1], *kernel))
    try:
        y = conv_i32_cl(ctx.g, xl, int(x_zp), w, int(w_zp), b, pad, strides, dilations, group)
    except QuantError as err:
        raise ctx.error(str(err)) from None
    return y, k


def from_channels_last(ctx: NodeContext, y: SSAValue, k: int) -> SSAValue:
    from nnkiln.frontends.onnx.lowerings.nn_conv import to_channels_first

    assert kind_of_value(y) not in (U8, U16), "TRANSPOSE has no unsigned types: change the layout in the signed kind"
    return to_channels_first(ctx, y, k)


def finish_conv(ctx: NodeContext, acc: SSAValue, k: int, scale: np.ndarray, out_kind: Kind, out_zp: int,
                 lo: int | None = None) -> SSAValue:
    """Requantize a channels-last int32 accumulator and return it in ONNX layout as ``out_kind``."""
    signed, off = SIGNED[out_kind]
    y = requantize(ctx, acc, 0, list(scale), signed, out_zp - off, per_channel=scale.size > 1,
                   lo=None if lo is None else lo - off)
    y = from_channels_last(ctx, y, k)
    if off:
        y = rescale(ctx, y, out_kind, output_zp=off)
    return y


def matmul_i32(ctx: NodeContext, a: SSAValue, a_zp: int, bv: TensorValue, b_zp: int) -> SSAValue:
    """int8 ``a`` [.., M, K] × int8 ``bv`` [.., K, N] (numpy batch broadcasting) → int32 [.., M, N]."""
    from nnkiln.dialects.tosa.ops_tensor import MatMulOp

    a_shape = shape_of(a)
    b_shape = tuple(bv.shape)
    if len(a_shape) < 2 or len(b_shape) < 2:
        raise ctx.error("integer matmuls of 1-D operands are not supported")
    m, kk = a_shape[-2:]
    k2, n = b_shape[-2:]
    if kk != k2:
        raise ctx.error(f"inner dimensions differ: {list(a_shape)} x {list(b_shape)}")
    a_b, b_b = math.prod(a_shape[:-2]), math.prod(b_shape[:-2])
    batch = tuple(int(d) for d in np.broadcast_shapes(a_shape[:-2], b_shape[:-2]))
    nb = math.prod(batch)
    if b_b == 1:
        if a_b != nb:
            raise ctx.error("broadcasting A's batch is not supported")
        a3 = reshape(ctx.g, a, (1, nb * m, kk))
        b3 = const(ctx, np.asarray(bv.const).reshape(1, kk, n), I8) if bv.is_const else \
            reshape(ctx.g, ctx.importer.materialize(bv), (1, kk, n))
    elif a_b == nb and b_b == nb:
        a3 = reshape(ctx.g, a, (nb, m, kk))
        b3 = const(ctx, np.asarray(bv.const).reshape(nb, kk, n), I8) if bv.is_const else \
            reshape(ctx.g, ctx.importer.materialize(bv), (nb, kk, n))
    else:
        raise ctx.error("broadcasting batch dimensions of integer matmuls is not supported")
    y = emit(ctx, MatMulOp, [a3, b3], I32, A_zp=int(a_zp), B_zp=int(b_zp))
    return reshape(ctx.g, y, (*batch, m, n))


def act_i8(ctx: NodeContext, idx: int, zp: np.ndarray, what: str) -> tuple[SSAValue, int]:
    v = ctx.input(idx)
    kind = elem_kind_of_array(ctx, np.asarray(v.const), v.kind) if v.is_const else v.kind
    if kind not in (I8, U8):
        raise ctx.error(f"{what} of type {kind.value} is not supported (int8/uint8 only)")
    if zp.size != 1:
        raise ctx.error(f"a per-axis zero point of {what} is not supported")
    return to_signed(ctx, v if not v.is_const else TensorValue.constant(np.asarray(v.const)), int(zp[0]))


# ------------------------------------------------------------------------------------------------
# run-time quantization parameters (float path; no fusion)


def param(ctx: NodeContext, idx: int, rank: int, axis: int, kind: Kind | None = None) -> SSAValue:
    """Parameter input ``idx`` (scalar, [1] or 1-D along ``axis``) reshaped to broadcast against a
    rank-``rank`` tensor; integer parameters are widened to int32 (``kind`` = I32)."""
    tv = ctx.input(idx)
    n = int(np.prod(tv.shape, dtype=np.int64))
    if tv.rank > 1:
        raise ctx.error(f"a rank-{tv.rank} quantization parameter is not supported (blocked quantization)")
    shape = axis_shape(rank, axis, n) if n > 1 else (1,) * rank
    if tv.is_const:
        arr = np.asarray(tv.const)
        k = kind or (F32 if arr.dtype.kind == "f" and arr.dtype != np.float16 else F16 if arr.dtype == np.float16 else I32)
        return const(ctx, (arr.astype(np.int64) if k is I32 else arr).reshape(shape), k)
    if kind is I32 and tv.wide is not None:  # an unsigned value TOSA cannot hold in its own type
        return reshape(ctx.g, tv.wide, shape)
    v = ctx.importer.materialize(tv)
    if kind is I32:
        v = widen_i32(ctx, v)
    return reshape(ctx.g, v, shape)


def _dyn_axis(ctx: NodeContext, rank: int, idxs: Sequence[int]) -> int:
    n = max((int(np.prod(ctx.input(i).shape, dtype=np.int64)) for i in idxs if ctx.has_input(i)), default=1)
    axis = int(ctx.attr("axis", 1))
    if n > 1:
        axis = axis + rank if axis < 0 else axis
        if not 0 <= axis < rank:
            raise ctx.error(f"axis {ctx.attr('axis', 1)} is out of range for rank {rank}")
    return axis if n > 1 else 0


def dyn_dequantize(ctx: NodeContext) -> SSAValue:
    """``(x - zp) * scale`` with run-time scale and/or zero point."""
    from nnkiln.dialects.tosa.ops_elementwise_binary import MulOp, SubOp
    from nnkiln.dialects.tosa.ops_type_conversion import CastOp

    xv = ctx.input(0)
    rank = xv.rank
    axis = _dyn_axis(ctx, rank, (1, 2))
    fk = ctx.input(1).kind
    if fk not in (F32, F16):
        raise ctx.error(f"a {fk.value} scale is not supported")
    x = widen_i32(ctx, ctx.tensor(0))
    if ctx.has_input(2):
        x = emit(ctx, SubOp, [x, param(ctx, 2, rank, axis, I32)], I32)
    f = emit(ctx, CastOp, [x], fk)
    return emit(ctx, MulOp, [f, param(ctx, 1, rank, axis)], fk)


def _dyn_round(ctx: NodeContext, v: SSAValue, zp: SSAValue | None, kind: Kind) -> SSAValue:
    """round_half_even(v) + zp saturated to ``kind`` (v float, zp int32 or None)."""
    from nnkiln.dialects.tosa.ops_activation import ClampOp
    from nnkiln.dialects.tosa.ops_elementwise_binary import AddOp
    from nnkiln.dialects.tosa.ops_type_conversion import CastOp

    fk = kind_of_value(v)
    big = float(1 << 20) if fk is F32 else 60000.0
    v = emit(ctx, ClampOp, [v], fk, min_val=-big, max_val=big)
    q = emit(ctx, CastOp, [v], I32)
    if zp is not None:
        q = emit(ctx, AddOp, [q, zp], I32)
    lo, hi = RANGE[kind]
    return narrow_i32(ctx, clamp_i32(ctx, q, lo, hi), kind)


def dyn_quantize(ctx: NodeContext, kind: Kind) -> SSAValue:
    """``saturate(round(x / scale) + zp)`` with run-time scale and/or zero point; ``x / scale`` is ``math.div``,
    the correctly rounded quotient (``x · RECIPROCAL(scale)`` can be an ulp off and move a rounding tie)."""
    from nnkiln.frontends.onnx.lowerings._elementwise_common import math_custom

    xv = ctx.input(0)
    rank = xv.rank
    axis = _dyn_axis(ctx, rank, (1, 2))
    x = ctx.tensor(0)
    fk = kind_of_value(x)
    s = param(ctx, 1, rank, axis)
    if kind_of_value(s) is not fk:
        raise ctx.error("a scale of another float type than the input is not supported")
    v = math_custom(ctx, "div", [x, s], fk)
    zp = param(ctx, 2, rank, axis, I32) if ctx.has_input(2) else None
    return _dyn_round(ctx, v, zp, kind)


def _centered_i16(ctx: NodeContext, idx: int, zp_idx: int, rank: int, axis: int) -> SSAValue:
    """``x - zp`` (8-bit x) as int16: exact, since both are 8-bit."""
    from nnkiln.dialects.tosa.ops_elementwise_binary import SubOp
    from nnkiln.dialects.tosa.ops_type_conversion import CastOp

    tv = ctx.input(idx)
    kind = elem_kind_of_array(ctx, np.asarray(tv.const), tv.kind) if tv.is_const else tv.kind
    if kind not in (I8, U8):
        raise ctx.error(f"{kind.value} operands are not supported (int8/uint8 only)")
    x = widen_i32(ctx, ctx.tensor(idx)) if not tv.is_const else const(ctx, np.asarray(tv.const).astype(np.int64), I32)
    if ctx.has_input(zp_idx):
        x = emit(ctx, SubOp, [x, param(ctx, zp_idx, rank, axis, I32)], I32)
    return emit(ctx, CastOp, [x], I16)


def dyn_matmul_i32(ctx: NodeContext, a_idx: int, az_idx: int, b_idx: int, bz_idx: int) -> SSAValue:
    """(A - a_zp) × (B - b_zp) in int32 for run-time zero points: int16 operands, MATMUL int16 → int48,
    RESCALE int48 → int32 (exact: |sum| < 2^31 for K < 33025). a_zp may be per row, b_zp per column."""
    from nnkiln.dialects.tosa.ops_tensor import MatMulOp

    av, bv = ctx.input(a_idx), ctx.input(b_idx)
    if av.rank < 2 or bv.rank < 2:
        raise ctx.error("integer matmuls of 1-D operands are not supported")
    a = _centered_i16(ctx, a_idx, az_idx, av.rank, av.rank - 2)
    b = _centered_i16(ctx, b_idx, bz_idx, bv.rank, bv.rank - 1)
    (m, k), (k2, n) = av.shape[-2:], bv.shape[-2:]
    if k != k2:
        raise ctx.error(f"inner dimensions differ: {list(av.shape)} x {list(bv.shape)}")
    a_b, b_b = math.prod(av.shape[:-2]), math.prod(bv.shape[:-2])
    batch = tuple(int(d) for d in np.broadcast_shapes(av.shape[:-2], bv.shape[:-2]))
    nb = math.prod(batch)
    if b_b == 1 and a_b == nb:
        a3, b3 = reshape(ctx.g, a, (1, nb * m, k)), reshape(ctx.g, b, (1, k, n))
    elif a_b == nb and b_b == nb:
        a3, b3 = reshape(ctx.g, a, (nb, m, k)), reshape(ctx.g, b, (nb, k, n))
    else:
        raise ctx.error("broadcasting batch dimensions of integer matmuls is not supported")
    y = emit(ctx, MatMulOp, [a3, b3], Kind.I48, A_zp=0, B_zp=0)
    return reshape(ctx.g, rescale(ctx, y, I32), (*batch, m, n))


def dyn_conv_i32(ctx: NodeContext, x_idx: int, xz_idx: int, w_idx: int, wz_idx: int) -> tuple[SSAValue, int]:
    """conv(x - x_zp, w - w_zp) in int32 (channels last) for run-time weights / zero points:
    ``x - x_zp`` as int16 (CONV2D int16×int8 → int48), ``w`` shifted to int8 by ``off`` (128 for uint8)
    and the rest of the weight zero point added back as ``(off - w_zp[m]) · Σ_window(x - x_zp)``
    (the window sum is a convolution with a weight of ones). Grouped (and depthwise) convolutions take the
    same route: the weight of ones has the weight's shape, so each output channel sums its own group's inputs."""
    from nnkiln.dialects.tosa.ops_elementwise_binary import AddOp, MulOp, SubOp

    xv, wv = ctx.input(x_idx), ctx.input(w_idx)
    x16 = _centered_i16(ctx, x_idx, xz_idx, xv.rank, 1)
    wkind = elem_kind_of_array(ctx, np.asarray(wv.const), wv.kind) if wv.is_const else wv.kind
    if wkind not in (I8, U8):
        raise ctx.error(f"{wkind.value} weights are not supported (int8/uint8 only)")
    w8, _ = to_signed(ctx, wv, 0)
    off = SIGNED[wkind][1]
    acc, k = conv_i32(ctx, x16, 0, TensorValue.of(w8), 0, None)
    wz_const = ctx.input(wz_idx).const if ctx.has_input(wz_idx) else np.zeros(1, np.int64)
    if wz_const is not None and np.all(np.asarray(wz_const).astype(np.int64) == off):
        return acc, k
    group = int(ctx.attr("group", 1))
    ones = TensorValue.constant(np.ones((1 if group == 1 else wv.shape[0], *wv.shape[1:]), np.int8))
    wsum, _ = conv_i32(ctx, x16, 0, ones, 0, None)  # [N, OH, OW, 1] (group 1) or [N, OH, OW, M]
    if ctx.has_input(wz_idx):
        wz = param(ctx, wz_idx, 4, 3, I32)  # [1, 1, 1, M] or [1, 1, 1, 1]
        corr = emit(ctx, SubOp, [scalar_const(ctx, off, I32, 4), wz], I32)
    else:
        corr = scalar_const(ctx, off, I32, 4)
    return emit(ctx, AddOp, [acc, emit(ctx, MulOp, [wsum, corr], I32, shift=0)], I32), k


def scale_product(ctx: NodeContext, idxs: Sequence[int], div_idx: int, rank: int, axis_of: dict[int, int]) -> SSAValue:
    """Π scale[i] / scale[div_idx] as a run-time float tensor broadcasting against rank ``rank``."""
    from nnkiln.dialects.tosa.ops_elementwise_binary import MulOp
    from nnkiln.dialects.tosa.ops_elementwise_unary import ReciprocalOp

    vals = [param(ctx, i, rank, axis_of.get(i, 0)) for i in idxs]
    p = vals[0]
    for v in vals[1:]:
        p = emit(ctx, MulOp, [p, v], kind_of_value(p))
    d = param(ctx, div_idx, rank, 0)
    return emit(ctx, MulOp, [p, emit(ctx, ReciprocalOp, [d], kind_of_value(d))], kind_of_value(p))


def dyn_requant(ctx: NodeContext, acc: SSAValue, factor: SSAValue, zp_idx: int, out_kind: Kind,
                 zp_offset: int = 0) -> SSAValue:
    """``saturate(rint(acc · factor) + zp)`` as ``out_kind``; with ``zp_offset`` the result is computed
    as ``value - zp_offset`` (a uint8 result held in int8)."""
    from nnkiln.dialects.tosa.ops_elementwise_binary import MulOp, SubOp
    from nnkiln.dialects.tosa.ops_type_conversion import CastOp

    fk = kind_of_value(factor)
    f = emit(ctx, MulOp, [emit(ctx, CastOp, [acc], fk), factor], fk)
    rank = len(shape_of(acc))
    zp = param(ctx, zp_idx, rank, 0, I32) if ctx.has_input(zp_idx) else None
    if zp_offset:
        off = scalar_const(ctx, zp_offset, I32, rank)
        zp = emit(ctx, SubOp, [zp, off], I32) if zp is not None else emit(ctx, SubOp, [scalar_const(ctx, 0, I32, rank), off], I32)
    return _dyn_round(ctx, f, zp, out_kind)
