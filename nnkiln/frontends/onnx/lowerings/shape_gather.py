"""Gather, GatherElements, GatherND, Scatter, ScatterElements, ScatterND, and the ops whose output shape
depends on the data (NonZero, Compress, Unique: constant inputs fold at import). Constant indices are
applied at import to an ``arange`` over the data's elements (see ``_shape_common``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from nnkiln.dialects.tosa.base import Kind, element_type
from nnkiln.dialects.tosa.ops_comparison import GreaterOp
from nnkiln.dialects.tosa.ops_data_layout import TileOp
from nnkiln.dialects.tosa.ops_elementwise_binary import AddOp
from nnkiln.dialects.tosa.ops_elementwise_ternary import SelectOp
from nnkiln.dialects.tosa.ops_scatter_gather import GatherOp, ScatterOp
from nnkiln.dialects.tosa.ops_type_conversion import CastOp
from nnkiln.frontends.common.arith import etype
from nnkiln.frontends.common.broadcast import reshape
from nnkiln.frontends.onnx.importer import NodeContext
from nnkiln.frontends.onnx.lowerings import lowering

from nnkiln.frontends.onnx.lowerings._shape_common import (
    as_gatherable,
    collapse_axis,
    const,
    gather_axis_const,
    gather_flat,
    norm_axis,
    require_nonempty,
    Result,
)


# ------------------------------------------------------------------------------------------------
# Gather / Scatter


@lowering("Gather")
def Gather(ctx: NodeContext) -> list[Result]:
    """Gather: constant indices are normalised at import (negative + dim); dynamic indices are
    normalised with GREATER/ADD/SELECT and fed to GATHER on ``[N, K, C]``."""
    data = ctx.input(0)
    ind = ctx.input(1)
    axis = norm_axis(ctx, int(ctx.attr("axis", 0)), data.rank)
    d = data.shape[axis]
    if ind.is_const:
        idx = np.asarray(ind.const).astype(np.int64)
        if idx.size and (idx.min() < -d or idx.max() >= d):
            raise ctx.error(f"indices {idx.tolist()} are out of range for dimension {d}")
        idx = np.where(idx < 0, idx + d, idx)
        if data.is_const:
            return [np.take(np.asarray(data.const), idx, axis=axis)]
        return [gather_axis_const(ctx, ctx.tensor(0), axis, idx)]
    if ind.kind is not Kind.I32:
        raise ctx.error(f"{ind.kind.value} run-time indices are not supported (int32/int64 only)")
    out_shape = data.shape[:axis] + ind.shape + data.shape[axis + 1:]
    require_nonempty(ctx, out_shape)
    n, k, c = collapse_axis(data.shape, axis)
    w = math.prod(ind.shape)
    i = reshape(ctx.g, ctx.tensor(1), (1, w))
    zero = const(ctx, np.zeros((1, 1), np.int32))
    neg = ctx.g.value(GreaterOp, [zero, i], element_type(Kind.BOOL))
    shifted = ctx.g.value(AddOp, [i, const(ctx, np.full((1, 1), d, np.int32))], element_type(Kind.I32))
    i = ctx.g.value(SelectOp, [neg, shifted, i], element_type(Kind.I32))
    if n > 1:
        i = ctx.g.value(TileOp, [i], element_type(Kind.I32), multiples=[n, 1])
    x, was_bool = as_gatherable(ctx, ctx.tensor(0))
    out = ctx.g.value(GatherOp, [reshape(ctx.g, x, (n, k, c)), i], etype(x))
    out = reshape(ctx.g, out, out_shape)
    if was_bool:
        out = ctx.g.value(CastOp, [out], element_type(Kind.BOOL))
    return [out]


def _norm_indices(ctx: NodeContext, idx: np.ndarray, dim: int) -> np.ndarray:
    idx = np.asarray(idx).astype(np.int64)
    if idx.size and (idx.min() < -dim or idx.max() >= dim):
        raise ctx.error(f"indices are out of range [-{dim}, {dim - 1}]")
    return np.where(idx < 0, idx + dim, idx)


@lowering("GatherElements")
def GatherElements(ctx: NodeContext) -> list[Result]:
    data = ctx.input(0)
    axis = norm_axis(ctx, int(ctx.attr("axis", 0)), data.rank)
    idx = _norm_indices(ctx, ctx.const(1, "indices (GATHER needs import-time flat indices)"), data.shape[axis])
    if data.is_const:
        return [np.take_along_axis(np.asarray(data.const), idx, axis=axis)]
    positions = np.arange(math.prod(data.shape), dtype=np.int64).reshape(data.shape)
    return [gather_flat(ctx, ctx.tensor(0), np.take_along_axis(positions, idx, axis=axis))]


def _gather_nd(data: np.ndarray, indices: np.ndarray, batch_dims: int) -> np.ndarray:
    """ONNX GatherND on numpy arrays (indices already normalised)."""
    bshape = data.shape[:batch_dims]
    q = indices.shape[-1]
    nb = math.prod(bshape)
    d = data.reshape((nb,) + data.shape[batch_dims:])
    ind = indices.reshape((nb, -1, q))
    out = np.stack([d[b][tuple(ind[b].T)] for b in range(nb)]) if nb else np.zeros((0,))
    return out.reshape(indices.shape[:-1] + data.shape[batch_dims + q:])


def _nd_indices(ctx: NodeContext, data_shape: Sequence[int], idx: np.ndarray, batch_dims: int) -> np.ndarray:
    q = idx.shape[-1]
    dims = np.array(data_shape[batch_dims:batch_dims + q], dtype=np.int64)
    if idx.size and (np.any(idx < -dims) or np.any(idx >= dims)):
        raise ctx.error("indices are out of range")
    return np.where(idx < 0, idx + dims, idx)


@lowering("GatherND")
def GatherND(ctx: NodeContext) -> list[Result]:
    data = ctx.input(0)
    b = int(ctx.attr("batch_dims", 0))
    idx = np.asarray(ctx.const(1, "indices (GATHER needs import-time flat indices)")).astype(np.int64)
    idx = _nd_indices(ctx, data.shape, idx, b)
    if data.is_const:
        return [_gather_nd(np.asarray(data.const), idx, b)]
    positions = np.arange(math.prod(data.shape), dtype=np.int64).reshape(data.shape)
    return [gather_flat(ctx, ctx.tensor(0), _gather_nd(positions, idx, b))]


def _scatter_flat(ctx: NodeContext, targets: np.ndarray) -> list[Result]:
    """SCATTER of input 2 (updates) into input 0 at the flat positions ``targets``."""
    reduction = ctx.attr("reduction", "none")
    if reduction != "none":
        raise ctx.error(f"reduction '{reduction}' is not supported (TOSA SCATTER only overwrites)")
    targets = np.asarray(targets, dtype=np.int64).reshape(-1)
    if len(np.unique(targets)) != targets.size:
        raise ctx.error("repeated indices are not supported (SCATTER's result would be unpredictable)")
    data, upd = ctx.input(0), ctx.input(2)
    if data.is_const and upd.is_const:
        out = np.asarray(data.const).copy().reshape(-1)
        out[targets] = np.asarray(upd.const).reshape(-1)
        return [out.reshape(data.shape)]
    size = math.prod(data.shape)
    x, was_bool = as_gatherable(ctx, ctx.tensor(0))
    u, _ = as_gatherable(ctx, ctx.tensor(2))
    vals = reshape(ctx.g, x, (1, size, 1))
    idx = const(ctx, targets.reshape(1, -1).astype(np.int32))
    out = ctx.g.value(ScatterOp, [vals, idx, reshape(ctx.g, u, (1, targets.size, 1))], etype(x))
    out = reshape(ctx.g, out, data.shape)
    if was_bool:
        out = ctx.g.value(CastOp, [out], element_type(Kind.BOOL))
    return [out]


@lowering("ScatterElements")
def ScatterElements(ctx: NodeContext) -> list[Result]:
    data = ctx.input(0)
    axis = norm_axis(ctx, int(ctx.attr("axis", 0)), data.rank)
    idx = _norm_indices(ctx, ctx.const(1, "indices (SCATTER needs import-time flat indices)"), data.shape[axis])
    positions = np.arange(math.prod(data.shape), dtype=np.int64).reshape(data.shape)
    # target of update element u: its own coordinates with the axis coordinate replaced by idx[u]
    coords = list(np.indices(idx.shape, dtype=np.int64))
    coords[axis] = idx
    return _scatter_flat(ctx, positions[tuple(coords)])


@lowering("Scatter")
def Scatter(ctx: NodeContext) -> list[Result]:
    """Scatter (opset 9-10): ScatterElements without reduction."""
    return ScatterElements(ctx)


@lowering("ScatterND")
def ScatterND(ctx: NodeContext) -> list[Result]:
    data = ctx.input(0)
    idx = np.asarray(ctx.const(1, "indices (SCATTER needs import-time flat indices)")).astype(np.int64)
    idx = _nd_indices(ctx, data.shape, idx, 0)
    positions = np.arange(math.prod(data.shape), dtype=np.int64).reshape(data.shape)
    return _scatter_flat(ctx, _gather_nd(positions, idx, 0))


# ------------------------------------------------------------------------------------------------
# Data-dependent shapes: fold constants only


def _data_dependent(ctx: NodeContext) -> None:
    raise ctx.error("a run-time input is not supported: the output shape depends on the data "
                    "(TOSA 0.30 shapes are static); only constant inputs fold at import")


@lowering("NonZero")
def NonZero(ctx: NodeContext) -> list[Result]:
    data = ctx.input(0)
    if not data.is_const:
        _data_dependent(ctx)
    return [np.array(np.nonzero(np.asarray(data.const)), dtype=np.int64)]


@lowering("Compress")
def Compress(ctx: NodeContext) -> list[Result]:
    data, cond = ctx.input(0), ctx.input(1)
    if not cond.is_const:
        _data_dependent(ctx)
    axis = ctx.attr("axis")
    c = np.asarray(cond.const).astype(bool).reshape(-1)
    if data.is_const:
        return [np.compress(c, np.asarray(data.const), axis=axis)]
    x = ctx.tensor(0)
    shape = list(data.shape)
    if axis is None:  # the flattened input
        shape = [math.prod(shape)]
        x = reshape(ctx.g, x, shape)
        a = 0
    else:
        a = norm_axis(ctx, int(axis), data.rank)
    keep = np.nonzero(c[: shape[a]])[0]
    shape[a] = len(keep)
    require_nonempty(ctx, shape)
    return [gather_axis_const(ctx, x, a, keep)]


@lowering("Unique")
def Unique(ctx: NodeContext) -> list[Result]:
    data = ctx.input(0)
    if not data.is_const:
        _data_dependent(ctx)
    arr = np.asarray(data.const)
    axis = ctx.attr("axis")
    sorted_ = bool(ctx.attr("sorted", 1))
    if axis is not None:
        axis = norm_axis(ctx, int(axis), arr.ndim)
    y, idx, inv, cnt = np.unique(arr, return_index=True, return_inverse=True, return_counts=True, axis=axis)
    inv = inv.reshape(-1)
    if not sorted_:
        order = np.argsort(idx, kind="stable")
        rank_of = np.empty_like(order)
        rank_of[order] = np.arange(len(order))
        y = np.take(y, order, axis=0 if axis is None else axis)
        idx, cnt, inv = idx[order], cnt[order], rank_of[inv]
    return [y, idx.astype(np.int64), inv.astype(np.int64), cnt.astype(np.int64)]
