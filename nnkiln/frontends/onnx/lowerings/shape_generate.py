"""Generators and masks: Range, EyeLike, Trilu, OneHot; and CumSum. Conventions of the shape family: see
``_shape_common``.
"""

from __future__ import annotations

import math

import numpy as np
from xdsl.ir import SSAValue

from nnkiln.dialects.tosa.base import Kind, element_type
from nnkiln.dialects.tosa.ops_comparison import EqualOp, GreaterOp
from nnkiln.dialects.tosa.ops_data_layout import PadOp
from nnkiln.dialects.tosa.ops_elementwise_binary import AddOp
from nnkiln.dialects.tosa.ops_elementwise_ternary import SelectOp
from nnkiln.dialects.tosa.ops_type_conversion import CastOp
from nnkiln.frontends.common.arith import etype, np_dtype, shape_of, trunc_toward_zero
from nnkiln.frontends.common.broadcast import reshape
from nnkiln.frontends.onnx.importer import NodeContext
from nnkiln.frontends.onnx.lowerings import lowering
from nnkiln.frontends.onnx.lowerings._shape_common import (
    Result,
    const,
    norm_axis,
    reverse,
    slice_axis,
    slice_box,
    tile,
)

# ------------------------------------------------------------------------------------------------
# Generators and masks


@lowering("Range")
def Range(ctx: NodeContext) -> list[Result]:
    start, limit, delta = (np.asarray(ctx.const(i, what)) for i, what in enumerate(("start", "limit", "delta")))
    if start.size != 1 or limit.size != 1 or delta.size != 1:
        raise ctx.error("start, limit and delta must be scalars")
    start, limit, delta = start.reshape(()), limit.reshape(()), delta.reshape(())
    if float(delta) == 0.0:
        raise ctx.error("delta must not be 0")
    n = max(int(math.ceil((float(limit) - float(start)) / float(delta))), 0)
    out = (start.reshape(()) + np.arange(n).astype(start.dtype) * delta.reshape(())).astype(start.dtype)
    return [out]


@lowering("EyeLike")
def EyeLike(ctx: NodeContext) -> list[Result]:
    data = ctx.input(0)
    if data.rank != 2:
        raise ctx.error("input must be 2-D")
    k = int(ctx.attr("k", 0))
    dtype_code = ctx.attr("dtype")
    if dtype_code is not None:
        import onnx

        dtype = np.dtype(onnx.helper.tensor_dtype_to_np_dtype(int(dtype_code)))
    elif data.is_const:
        dtype = np.asarray(data.const).dtype
    else:
        dtype = np_dtype(data.kind)
    return [np.eye(data.shape[0], data.shape[1], k=k, dtype=dtype)]


@lowering("Trilu")
def Trilu(ctx: NodeContext) -> list[Result]:
    """Trilu: SELECT between the input and 0 with a constant Boolean mask (exact for every value)."""
    data = ctx.input(0)
    k = int(np.asarray(ctx.const(1, "k")).reshape(-1)[0]) if ctx.has_input(1) else 0
    upper = bool(ctx.attr("upper", 1))
    if data.rank < 2:
        raise ctx.error("input must have rank >= 2")
    n, m = data.shape[-2:]
    mask = np.triu(np.ones((n, m), bool), k) if upper else np.tril(np.ones((n, m), bool), k)
    if data.is_const:
        arr = np.asarray(data.const)
        return [np.where(mask, arr, np.zeros((), arr.dtype))]
    x = ctx.tensor(0)
    rank = data.rank
    m_v = const(ctx, mask.reshape((1,) * (rank - 2) + (n, m)))
    zero = const(ctx, np.zeros((1,) * rank, np_dtype(data.kind)))
    return [ctx.g.value(SelectOp, [m_v, x, zero], etype(x))]


@lowering("OneHot")
def OneHot(ctx: NodeContext) -> list[Result]:
    """OneHot: ``SELECT(EQUAL(indices, arange(depth)), on, off)``; negative indices add depth (at
    import for constants; with GREATER/ADD/SELECT at run time). Float run-time indices are
    truncated toward zero exactly: ``x >= 0 ? FLOOR(x) : CEIL(x)`` then CAST (CAST of an integral
    float is exact; TOSA's CAST alone would round to nearest)."""
    ind = ctx.input(0)
    depth = int(np.asarray(ctx.const(1, "depth")).reshape(-1)[0])
    values = ctx.input(2)
    rank = ind.rank + 1
    axis = norm_axis(ctx, int(ctx.attr("axis", -1)), rank)
    shape = [1] * rank
    shape[axis] = depth
    ar = np.arange(depth, dtype=np.int64).reshape(shape)
    out_shape = list(ind.shape)
    out_shape.insert(axis, depth)
    if ind.is_const:
        idx = np.asarray(ind.const)
        idx = np.trunc(idx).astype(np.int64) if idx.dtype.kind == "f" else idx.astype(np.int64)
        idx = np.where(idx < 0, idx + depth, idx)
        hot = np.expand_dims(idx, axis) == ar
        if values.is_const:
            v = np.asarray(values.const).reshape(-1)
            return [np.where(hot, v[1], v[0])]
        sel = const(ctx, hot)
    else:
        i = reshape(ctx.g, ctx.tensor(0), [1 if a == axis else d for a, d in enumerate(out_shape)])
        if ind.kind.is_float:
            i = ctx.g.value(CastOp, [trunc_toward_zero(ctx.g, i)], element_type(Kind.I32))
        elif ind.kind is not Kind.I32:
            raise ctx.error(f"{ind.kind.value} run-time indices are not supported")
        zero = const(ctx, np.zeros((1,) * rank, np.int32))
        neg = ctx.g.value(GreaterOp, [zero, i], element_type(Kind.BOOL))
        shifted = ctx.g.value(AddOp, [i, const(ctx, np.full((1,) * rank, depth, np.int32))], element_type(Kind.I32))
        i = ctx.g.value(SelectOp, [neg, shifted, i], element_type(Kind.I32))
        sel = ctx.g.value(EqualOp, [i, const(ctx, ar.astype(np.int32))], element_type(Kind.BOOL))
    if values.is_const:
        v = np.asarray(values.const).reshape(-1)
        off = const(ctx, v[:1].reshape((1,) * rank))
        on = const(ctx, v[1:2].reshape((1,) * rank))
    else:
        vv = ctx.importer.materialize(values)
        vv = reshape(ctx.g, vv, (2,))
        off = reshape(ctx.g, slice_box(ctx, vv, [0], [1]), (1,) * rank)
        on = reshape(ctx.g, slice_box(ctx, vv, [1], [1]), (1,) * rank)
    if shape_of(sel) != tuple(out_shape):
        sel = tile(ctx, sel, [o // s for o, s in zip(out_shape, shape_of(sel))])
    return [ctx.g.value(SelectOp, [sel, on, off], etype(on))]


# ------------------------------------------------------------------------------------------------
# CumSum


@lowering("CumSum")
def CumSum(ctx: NodeContext) -> list[Result]:
    """CumSum by log-step (Hillis-Steele) prefix sums: ``x += shift(x, s)`` for s = 1, 2, 4, ...,
    each shift a PAD of zeros in front plus a SLICE. Exact for int32 (wrapping adds); for floats
    the additions are grouped differently from a sequential sum (rounding may differ in the last
    bits). ``exclusive`` shifts the result by one more; ``reverse`` wraps it in REVERSE."""
    data = ctx.input(0)
    axis = norm_axis(ctx, int(np.asarray(ctx.const(1, "axis")).reshape(-1)[0]), data.rank)
    exclusive = bool(ctx.attr("exclusive", 0))
    backward = bool(ctx.attr("reverse", 0))
    if data.is_const:
        arr = np.asarray(data.const)
        a = np.flip(arr, axis) if backward else arr
        c = np.cumsum(a, axis=axis, dtype=arr.dtype)
        if exclusive:
            c = np.concatenate([np.zeros_like(np.take(c, [0], axis)), np.take(c, range(a.shape[axis] - 1), axis)], axis)
        return [np.flip(c, axis) if backward else c]
    if data.kind not in (Kind.I32, Kind.F32, Kind.F16, Kind.BF16):
        raise ctx.error(f"{data.kind.value} is not supported (TOSA ADD takes int32 and floats)")
    x = ctx.tensor(0)
    if backward:
        x = reverse(ctx, x, axis)
    d = data.shape[axis]
    zero = 0.0 if data.kind.is_float else 0

    def shifted(v: SSAValue, s: int) -> SSAValue:
        pad = [0] * (2 * data.rank)
        pad[2 * axis] = s
        p = ctx.g.value(PadOp, [v], etype(v), padding=pad, pad_const=zero)
        return slice_axis(ctx, p, axis, 0, d)

    s = 1
    while s < d:
        x = ctx.g.value(AddOp, [x, shifted(x, s)], etype(x))
        s *= 2
    if exclusive:
        x = shifted(x, 1)
    if backward:
        x = reverse(ctx, x, axis)
    return [x]
