"""Gather, GatherElements, GatherND, Scatter, ScatterElements, ScatterND, and the ops whose output shape
depends on the data (NonZero, Compress, Unique: constant inputs fold at import). Constant indices are
applied at import to an ``arange`` over the data's elements (see ``_shape_common``).

Run-time indices (Gather, GatherND, ScatterElements, ScatterND) become flat int32 positions computed in the
graph (negative indices shifted by the extent with GREATER/ADD/SELECT, times the strides, summed) and feed one
GATHER or SCATTER. A position whose index tuple has an index outside its extent is set to -1, so the run fails
with TOSA's REQUIRE error instead of reading a neighbouring element; repeated scatter targets fail the same way
(SCATTER's ``output_modified`` check). Scatter reductions (``add``, ``mul``, ``max``, ``min``) with constant
indices apply the updates in index order, in rounds of distinct targets (GATHER, combine, SCATTER per round),
which is ONNX's sequential definition exactly; with run-time indices they fold the updates through a one-hot
mask of positions x updates (``_scatter_reduce``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from xdsl.ir import SSAValue

from nnkiln.dialects.tosa.base import Kind, element_type, kind_of
from nnkiln.dialects.tosa.ops_comparison import GreaterEqualOp, GreaterOp
from nnkiln.dialects.tosa.ops_data_layout import TileOp
from nnkiln.dialects.tosa.ops_elementwise_binary import AddOp, LogicalOrOp, MaximumOp, MinimumOp, MulOp
from nnkiln.dialects.tosa.ops_elementwise_ternary import SelectOp
from nnkiln.dialects.tosa.ops_reduction import ReduceAnyOp, ReduceSumOp
from nnkiln.dialects.tosa.ops_scatter_gather import GatherOp, ScatterOp
from nnkiln.dialects.tosa.ops_type_conversion import CastOp
from nnkiln.frontends.common.arith import etype, shape_of
from nnkiln.frontends.common.broadcast import reshape
from nnkiln.frontends.common.gather import gather_nd as _gather_nd
from nnkiln.frontends.onnx.importer import NodeContext
from nnkiln.frontends.onnx.lowerings import lowering
from nnkiln.frontends.onnx.lowerings._scatter_reduce import scatter_reduce
from nnkiln.frontends.onnx.lowerings._shape_common import (
    Result,
    as_gatherable,
    collapse_axis,
    const,
    gather_axis_const,
    gather_flat,
    norm_axis,
    require_nonempty,
    runtime_indices,
)

# ------------------------------------------------------------------------------------------------
# Gather / Scatter


@lowering("Gather")
def Gather(ctx: NodeContext) -> list[Result]:
    """Gather: constant indices are normalised at import (negative + dim); dynamic indices are
    normalised in the graph (``_runtime_flat``) and fed to GATHER on ``[N, K, C]``, whose REQUIRE rejects an
    index outside the axis."""
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
    out_shape = data.shape[:axis] + ind.shape + data.shape[axis + 1:]
    require_nonempty(ctx, out_shape)
    n, k, c = collapse_axis(data.shape, axis)
    i, _ = _runtime_flat(ctx, runtime_indices(ctx, 1), 1, math.prod(ind.shape), [d], check=False)
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
    if not ctx.input(1).is_const:
        flat = _along_axis(ctx, data.shape, axis)
        ind = ctx.input(1)
        require_nonempty(ctx, ind.shape)
        x, was_bool = as_gatherable(ctx, ctx.tensor(0))
        out = ctx.g.value(GatherOp, [reshape(ctx.g, x, (1, math.prod(data.shape), 1)), flat], etype(x))
        out = reshape(ctx.g, out, ind.shape)
        return [ctx.g.value(CastOp, [out], element_type(Kind.BOOL)) if was_bool else out]
    idx = _norm_indices(ctx, ctx.const(1, "indices"), data.shape[axis])
    if data.is_const:
        return [np.take_along_axis(np.asarray(data.const), idx, axis=axis)]
    positions = np.arange(math.prod(data.shape), dtype=np.int64).reshape(data.shape)
    return [gather_flat(ctx, ctx.tensor(0), np.take_along_axis(positions, idx, axis=axis))]


def _nd_indices(ctx: NodeContext, data_shape: Sequence[int], idx: np.ndarray, batch_dims: int) -> np.ndarray:
    q = idx.shape[-1]
    dims = np.array(data_shape[batch_dims:batch_dims + q], dtype=np.int64)
    if idx.size and (np.any(idx < -dims) or np.any(idx >= dims)):
        raise ctx.error("indices are out of range")
    return np.where(idx < 0, idx + dims, idx)


def _runtime_flat(ctx: NodeContext, ind: SSAValue, rows: int, w: int, dims: Sequence[int], check: bool = True
                  ) -> tuple[SSAValue, SSAValue | None]:
    """(int32 ``[rows, w]`` positions ``Σ_j norm(ind[r, i, j]) · stride_j``, bool ``[rows, w]`` "some index of
    the tuple is outside its extent" when ``check``, else None) for run-time int32 indices ``[rows, w, q]`` into
    axes of extents ``dims`` (``q = len(dims)``, row-major strides; a negative index + its extent). See
    ``_poison``.

    No int32 operation here may overflow on an index outside its extent (ADD and MUL would fail their REQUIRE
    with a message about the arithmetic, hiding the GATHER / SCATTER one about the index): the extent is added to
    ``min(index, 0)``, and with ``check`` the normalised indices are clamped into their extents before the strides
    multiply them (the out-of-extent ones are poisoned anyway)."""
    q = len(dims)
    i32, b1 = element_type(Kind.I32), element_type(Kind.BOOL)
    i = reshape(ctx.g, ind, (rows, w, q))
    ext = const(ctx, np.array(dims, np.int32).reshape(1, 1, q))
    zero = const(ctx, np.zeros((1, 1, 1), np.int32))
    neg = ctx.g.value(GreaterOp, [zero, i], b1)
    bad = None
    if check:
        bad = ctx.g.value(LogicalOrOp, [
            ctx.g.value(GreaterEqualOp, [i, ext], b1),
            ctx.g.value(GreaterOp, [const(ctx, -np.array(dims, np.int32).reshape(1, 1, q)), i], b1)], b1)
    wrapped = ctx.g.value(AddOp, [ctx.g.value(MinimumOp, [i, zero], i32), ext], i32)
    i = ctx.g.value(SelectOp, [neg, wrapped, i], i32)
    if check:
        last = const(ctx, np.array(dims, np.int32).reshape(1, 1, q) - 1)
        i = ctx.g.value(MinimumOp, [ctx.g.value(MaximumOp, [i, zero], i32), last], i32)
    if q > 1:
        strides = [math.prod(dims[j + 1:]) for j in range(q)]
        i = ctx.g.value(MulOp, [i, const(ctx, np.array(strides, np.int32).reshape(1, 1, q))], i32, shift=0)
        i = ctx.g.value(ReduceSumOp, [i], i32, axis=2)
        if bad is not None:
            bad = ctx.g.value(ReduceAnyOp, [bad], b1, axis=2)
    return reshape(ctx.g, i, (rows, w)), None if bad is None else reshape(ctx.g, bad, (rows, w))


def _poison(ctx: NodeContext, flat: SSAValue, bad: SSAValue | None) -> SSAValue:
    """``flat`` with -1 where ``bad``: an index outside its extent (which a flat position could hide, e.g.
    ``[1, 5]`` in a ``[3, 5]`` grid is position 10) makes the GATHER / SCATTER fail its REQUIRE at run time."""
    assert bad is not None
    minus1 = const(ctx, np.full((1,) * len(shape_of(flat)), -1, np.int32))
    return ctx.g.value(SelectOp, [bad, minus1, flat], element_type(Kind.I32))


def _check_along_axis(ctx: NodeContext, shape: Sequence[int], axis: int) -> None:
    """The run-time indices (input 1) have the data's rank and no larger extent off ``axis``."""
    ind = ctx.input(1)
    if ind.rank != len(shape) or any(i > d for a, (i, d) in enumerate(zip(ind.shape, shape)) if a != axis):
        raise ctx.error(f"indices of shape {list(ind.shape)} do not fit data {list(shape)} along axis {axis}")


def _along_axis(ctx: NodeContext, shape: Sequence[int], axis: int) -> SSAValue:
    """int32 ``[1, U]`` flat positions in a tensor of ``shape`` of the elements of run-time indices (input 1,
    U elements, same rank) along ``axis``: each element's own coordinates off the axis (a constant part) plus
    its normalised index times the axis stride."""
    ind = ctx.input(1)
    _check_along_axis(ctx, shape, axis)
    positions = np.arange(math.prod(shape), dtype=np.int64).reshape(shape)
    coords = list(np.indices(ind.shape, dtype=np.int64))
    coords[axis] = np.zeros(ind.shape, np.int64)
    base = positions[tuple(coords)].reshape(1, -1).astype(np.int32)
    stride = math.prod(shape[axis + 1:])
    i32 = element_type(Kind.I32)
    along, bad = _runtime_flat(ctx, runtime_indices(ctx, 1), 1, math.prod(ind.shape), [shape[axis]])
    if stride != 1:
        along = ctx.g.value(MulOp, [along, const(ctx, np.full((1, 1), stride, np.int32))], i32, shift=0)
    return _poison(ctx, ctx.g.value(AddOp, [along, const(ctx, base)], i32), bad)


def _gather_nd_runtime(ctx: NodeContext, b: int) -> SSAValue:
    """GatherND with run-time indices: data as ``[NB, K, C]`` (NB the batch dims, K the indexed ones),
    indices as flat positions ``[NB, W]``, one GATHER."""
    data, ind = ctx.input(0), ctx.input(1)
    q = ind.shape[-1]
    if ind.rank < 1 or ind.rank - 1 < b or q < 1 or b + q > data.rank:
        raise ctx.error(f"indices of shape {list(ind.shape)} do not fit data {list(data.shape)} with batch_dims {b}")
    nb = math.prod(data.shape[:b])
    dims = list(data.shape[b:b + q])
    k, c = math.prod(dims), math.prod(data.shape[b + q:])
    w = math.prod(ind.shape[b:-1])
    out_shape = tuple(ind.shape[:-1]) + tuple(data.shape[b + q:])
    require_nonempty(ctx, out_shape)
    flat = _poison(ctx, *_runtime_flat(ctx, runtime_indices(ctx, 1), nb, w, dims))
    x, was_bool = as_gatherable(ctx, ctx.tensor(0))
    out = reshape(ctx.g, ctx.g.value(GatherOp, [reshape(ctx.g, x, (nb, k, c)), flat], etype(x)), out_shape)
    return ctx.g.value(CastOp, [out], element_type(Kind.BOOL)) if was_bool else out


@lowering("GatherND")
def GatherND(ctx: NodeContext) -> list[Result]:
    data = ctx.input(0)
    b = int(ctx.attr("batch_dims", 0))
    if not ctx.input(1).is_const:
        return [_gather_nd_runtime(ctx, b)]
    idx = np.asarray(ctx.const(1, "indices")).astype(np.int64)
    idx = _nd_indices(ctx, data.shape, idx, b)
    if data.is_const:
        return [_gather_nd(np.asarray(data.const), idx, b)]
    positions = np.arange(math.prod(data.shape), dtype=np.int64).reshape(data.shape)
    return [gather_flat(ctx, ctx.tensor(0), _gather_nd(positions, idx, b))]


_COMBINE = {"add": AddOp, "mul": MulOp, "max": MaximumOp, "min": MinimumOp}
_NP_COMBINE = {"add": np.add, "mul": np.multiply, "max": np.maximum, "min": np.minimum}


def _reduction(ctx: NodeContext) -> str:
    """The ``reduction`` attribute: ``none`` or one of ``_COMBINE``'s."""
    reduction = str(ctx.attr("reduction", "none"))
    if reduction != "none" and reduction not in _COMBINE:
        raise ctx.error(f"reduction '{reduction}' is not supported")
    return reduction


def _scatter_flat(ctx: NodeContext, targets: np.ndarray | SSAValue) -> list[Result]:
    """SCATTER of input 2 (updates) into input 0 at the flat positions ``targets`` (constant, or a run-time
    int32 ``[1, U]`` value without a reduction); with a reduction, in rounds of distinct constant targets
    (module docstring)."""
    reduction = _reduction(ctx)
    data, upd = ctx.input(0), ctx.input(2)
    size = math.prod(data.shape)
    if isinstance(targets, SSAValue):
        assert reduction == "none"
        rounds: list[tuple[np.ndarray | SSAValue, np.ndarray]] = [(targets, np.arange(math.prod(upd.shape)))]
    else:
        targets = np.asarray(targets, dtype=np.int64).reshape(-1)
        if reduction == "none" and len(np.unique(targets)) != targets.size:
            raise ctx.error("repeated indices are not supported without a reduction (the result would be "
                            "unpredictable)")
        # round r holds the r-th occurrence (in index order) of every target: distinct within a round
        level = np.zeros(targets.size, np.int64)
        count: dict[int, int] = {}
        for n, t in enumerate(targets.tolist()):
            level[n] = count.get(t, 0)
            count[t] = int(level[n]) + 1
        rounds = [(targets[level == r], np.nonzero(level == r)[0]) for r in range(int(level.max(initial=-1)) + 1)]
        if data.is_const and upd.is_const:
            out = np.asarray(data.const).copy().reshape(-1)
            u = np.asarray(upd.const).reshape(-1)
            for t, which in rounds:
                out[t] = u[which] if reduction == "none" else _NP_COMBINE[reduction](out[t], u[which])
            return [out.reshape(data.shape)]
    x, was_bool = as_gatherable(ctx, ctx.tensor(0))
    if reduction != "none" and kind_of(etype(x)) not in (Kind.F32, Kind.F16, Kind.I32):
        raise ctx.error(f"reduction '{reduction}' of {data.kind.value} tensors is not supported "
                        "(float32, float16, int32/int64 only)")
    u, _ = as_gatherable(ctx, ctx.tensor(2))
    u = reshape(ctx.g, u, (1, math.prod(upd.shape), 1))
    vals = reshape(ctx.g, x, (1, size, 1))
    for t, which in rounds:
        idx = t if isinstance(t, SSAValue) else const(ctx, t.reshape(1, -1).astype(np.int32))
        ur = u if len(which) == math.prod(upd.shape) and np.all(which == np.arange(len(which))) else \
            ctx.g.value(GatherOp, [u, const(ctx, which.reshape(1, -1).astype(np.int32))], etype(u))
        if reduction != "none":
            cur = ctx.g.value(GatherOp, [vals, idx], etype(vals))
            extra = {"shift": 0} if reduction == "mul" and kind_of(etype(vals)) is Kind.I32 else {}
            ur = ctx.g.value(_COMBINE[reduction], [cur, ur], etype(vals), **extra)
        vals = ctx.g.value(ScatterOp, [vals, idx, ur], etype(x))
    out = reshape(ctx.g, vals, data.shape)
    if was_bool:
        out = ctx.g.value(CastOp, [out], element_type(Kind.BOOL))
    return [out]


def _scatter_elements_reduce(ctx: NodeContext, axis: int) -> SSAValue:
    """ScatterElements with a reduction at run-time indices (``_scatter_reduce``): indices as large as the data
    off ``axis`` give the mask ``[before, extent, indices' extent, after]``; smaller ones, flat positions."""
    data, ind = ctx.input(0), ctx.input(1)
    _check_along_axis(ctx, data.shape, axis)
    u = math.prod(ind.shape)
    if all(i == d for a, (i, d) in enumerate(zip(ind.shape, data.shape)) if a != axis):
        a, t, b = collapse_axis(data.shape, axis)
        targets = _poison(ctx, *_runtime_flat(ctx, runtime_indices(ctx, 1), 1, u, [t]))
        dims = (a, t, ind.shape[axis], b)
    else:
        targets, dims = _along_axis(ctx, data.shape, axis), (1, math.prod(data.shape), u, 1)
    return scatter_reduce(ctx, ctx.tensor(0), targets, ctx.tensor(2), dims, _reduction(ctx))


@lowering("ScatterElements")
def ScatterElements(ctx: NodeContext) -> list[Result]:
    data = ctx.input(0)
    axis = norm_axis(ctx, int(ctx.attr("axis", 0)), data.rank)
    ind = ctx.input(1)
    if not ind.is_const:
        if ind.shape != ctx.input(2).shape:
            raise ctx.error(f"indices {list(ind.shape)} and updates {list(ctx.input(2).shape)} must have equal shapes")
        if _reduction(ctx) != "none":
            return [_scatter_elements_reduce(ctx, axis)]
        return _scatter_flat(ctx, _along_axis(ctx, data.shape, axis))
    idx = _norm_indices(ctx, ctx.const(1, "indices"), data.shape[axis])
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
    data, ind = ctx.input(0), ctx.input(1)
    if not ind.is_const:
        q = ind.shape[-1] if ind.rank else 0
        if q < 1 or q > data.rank:
            raise ctx.error(f"indices of shape {list(ind.shape)} do not fit data {list(data.shape)}")
        w = math.prod(ind.shape[:-1])
        flat = _poison(ctx, *_runtime_flat(ctx, runtime_indices(ctx, 1), 1, w, list(data.shape[:q])))
        c = math.prod(data.shape[q:])
        if _reduction(ctx) != "none":
            dims = (1, math.prod(data.shape[:q]), w, c)
            return [scatter_reduce(ctx, ctx.tensor(0), flat, ctx.tensor(2), dims, _reduction(ctx))]
        if c > 1:  # each index addresses a slice of c elements: positions flat·c + 0..c-1
            i32 = element_type(Kind.I32)
            flat = ctx.g.value(MulOp, [reshape(ctx.g, flat, (1, w, 1)), const(ctx, np.full((1, 1, 1), c, np.int32))],
                               i32, shift=0)
            flat = ctx.g.value(AddOp, [flat, const(ctx, np.arange(c, dtype=np.int32).reshape(1, 1, c))], i32)
            flat = reshape(ctx.g, flat, (1, w * c))
        return _scatter_flat(ctx, flat)
    idx = np.asarray(ctx.const(1, "indices")).astype(np.int64)
    idx = _nd_indices(ctx, data.shape, idx, 0)
    positions = np.arange(math.prod(data.shape), dtype=np.int64).reshape(data.shape)
    return _scatter_flat(ctx, _gather_nd(positions, idx, 0))


# ------------------------------------------------------------------------------------------------
# Data-dependent shapes: fold constants only


def _data_dependent(ctx: NodeContext, i: int, what: str) -> None:
    """Input ``i`` decides the output shape: without its value at import there is no static shape."""
    raise ctx.importer.must_be_constant(ctx, ctx.node.input[i], f"input {i} ({what})",
                                        "the output shape depends on its values (TOSA 0.30 shapes are static)")


@lowering("NonZero")
def NonZero(ctx: NodeContext) -> list[Result]:
    data = ctx.input(0)
    if not data.is_const:
        _data_dependent(ctx, 0, "X")
    return [np.array(np.nonzero(np.asarray(data.const)), dtype=np.int64)]


@lowering("Compress")
def Compress(ctx: NodeContext) -> list[Result]:
    data, cond = ctx.input(0), ctx.input(1)
    if not cond.is_const:
        _data_dependent(ctx, 1, "condition")
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
        _data_dependent(ctx, 0, "X")
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
