"""Shared helpers of the shape and data-layout lowerings (private module), and the family's conventions.

The family: Reshape, Transpose, Concat, Split, Slice, Squeeze, Unsqueeze,
Expand, Tile, Pad, Gather*, Scatter*, DepthToSpace, SpaceToDepth, Range, Trilu, EyeLike, OneHot,
Compress, NonZero, Unique, CumSum, Resize, Upsample, in ``shape_views`` (views, slicing, concatenation,
padding, depth/space), ``shape_gather`` (gather, scatter, data-dependent shapes), ``shape_generate``
(Range, EyeLike, Trilu, OneHot, CumSum) and ``shape_resize`` (Resize, Upsample).

Conventions:
- Inputs that decide an output shape (Reshape's shape, Slice's starts/ends, Split's split, axes, pads,
  repeats, Resize's scales/sizes) must be import-time constants; TOSA 0.30 shapes are static.
- When every data input is a constant, the result is computed with numpy at import (shape arithmetic
  such as Shape→Gather→Concat→Reshape folds away).
- TOSA's SLICE, TILE and REVERSE take rank 1..4; higher ranks are first collapsed by RESHAPE where the
  collapse keeps the operation a box (see ``slice_box``).
- Zero-size tensors do not exist in TOSA (spec §1.8.1: every dimension >= 1): a run-time result with
  a zero dimension is reported as not supported.
- Index-computing ops with constant indices (Gather with constant indices on dynamic data,
  GatherElements, GatherND, ScatterElements, ScatterND) apply the op's own semantics at import to
  an ``arange`` over the data's elements, which yields the flat element positions; one GATHER /
  SCATTER over the data viewed as ``[1, size, 1]`` then moves the elements (exact for every type
  GATHER/SCATTER take; Booleans go through an exact CAST to int8 and back).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from xdsl.ir import SSAValue

from nnkiln.dialects.tosa.base import Kind, element_type
from nnkiln.dialects.tosa.ops_data_layout import ConcatOp, ReverseOp, SliceOp, TileOp
from nnkiln.dialects.tosa.ops_scatter_gather import GatherOp
from nnkiln.dialects.tosa.ops_type_conversion import CastOp
from nnkiln.frontends.common.arith import etype, shape_of
from nnkiln.frontends.common.broadcast import reshape
from nnkiln.frontends.onnx.importer import NodeContext, TensorValue
from nnkiln.frontends.onnx.zero_size import ZeroSizeError
from nnkiln.limits import check_tensor

Result = TensorValue | SSAValue | np.ndarray

# ------------------------------------------------------------------------------------------------
# small helpers


def norm_axis(ctx: NodeContext, axis: int, rank: int) -> int:
    if not -rank <= axis < max(rank, 1):
        raise ctx.error(f"axis {axis} is out of range for rank {rank}")
    return axis + rank if axis < 0 else axis


def require_nonempty(ctx: NodeContext, shape: Sequence[int], what: str = "the result") -> None:
    """A result shape the lowering is about to build: no zero-size dimension (``ZeroSizeError``, which the importer
    may resolve) and within the size limits (``nnkiln.limits``, at 4 bytes per element) before anything of that
    size is computed at import."""
    check_tensor(shape, 4, what)
    if any(d == 0 for d in shape):
        raise ZeroSizeError(f"{ctx.op_type}: {what} has a zero-size dimension {list(shape)}: zero-size tensors are "
                            "not supported in TOSA 0.30 (every dimension must be >= 1)", file=ctx.g.file, node=ctx.name)


def const(ctx: NodeContext, array: np.ndarray) -> SSAValue:
    return ctx.importer.materialize(TensorValue.constant(np.asarray(array)))


def slice_box(ctx: NodeContext, v: SSAValue, start: Sequence[int], size: Sequence[int]) -> SSAValue:
    """SLICE of the box ``start``/``size``; ranks above 4 (and rank 0) are handled by collapsing
    runs of untouched dimensions with RESHAPE: a full dimension merges into the group before it
    (``start * d``, ``size * d``), and leading full dimensions merge together."""
    shape = shape_of(v)
    if tuple(start) == (0,) * len(shape) and tuple(size) == shape:
        return v
    groups: list[list[int]] = []  # [start, size, dim] of each collapsed dimension
    for b, n, d in zip(start, size, shape):
        if groups and b == 0 and n == d:
            g = groups[-1]
            groups[-1] = [g[0] * d, g[1] * d, g[2] * d]
        elif groups and groups[-1][2] == 1:
            groups[-1] = [b, n, d]
        else:
            groups.append([b, n, d])
    if len(groups) > 4:
        raise ctx.error(f"a slice of shape {list(shape)} touching {len(groups)} separate dimension groups is not "
                        "supported (TOSA 0.30 SLICE takes rank 1 to 4)")
    gshape = [g[2] for g in groups]
    x = reshape(ctx.g, v, gshape)
    out = ctx.g.value(SliceOp, [x], etype(v), start=[g[0] for g in groups], size=[g[1] for g in groups])
    return reshape(ctx.g, out, size)


def collapse_axis(shape: Sequence[int], axis: int) -> tuple[int, int, int]:
    return (math.prod(shape[:axis]), int(shape[axis]), math.prod(shape[axis + 1:]))


def reverse(ctx: NodeContext, v: SSAValue, axis: int) -> SSAValue:
    shape = shape_of(v)
    if shape[axis] == 1:
        return v
    if len(shape) <= 4:
        return ctx.g.value(ReverseOp, [v], etype(v), axis=axis)
    three = collapse_axis(shape, axis)
    r = ctx.g.value(ReverseOp, [reshape(ctx.g, v, three)], etype(v), axis=1)
    return reshape(ctx.g, r, shape)


def concat(ctx: NodeContext, parts: Sequence[SSAValue], axis: int) -> SSAValue:
    if len(parts) == 1:
        return parts[0]
    return ctx.g.value(ConcatOp, [list(parts)], etype(parts[0]), axis=axis)


def tile(ctx: NodeContext, v: SSAValue, multiples: Sequence[int]) -> SSAValue:
    shape = shape_of(v)
    if all(m == 1 for m in multiples):
        return v
    if len(shape) <= 4:
        return ctx.g.value(TileOp, [v], etype(v), multiples=list(multiples))
    # Tile one dimension at a time on a collapsed [pre, d, post] view (exact: pure data movement).
    out = v
    for axis, m in enumerate(multiples):
        if m == 1:
            continue
        cur = shape_of(out)
        pre, d, post = collapse_axis(cur, axis)
        t = ctx.g.value(TileOp, [reshape(ctx.g, out, (pre, d, post))], etype(v), multiples=[1, m, 1])
        new = list(cur)
        new[axis] = d * m
        out = reshape(ctx.g, t, new)
    return out


def slice_axis(ctx: NodeContext, v: SSAValue, axis: int, begin: int, size: int) -> SSAValue:
    shape = shape_of(v)
    start = [0] * len(shape)
    sizes = list(shape)
    start[axis] = begin
    sizes[axis] = size
    return slice_box(ctx, v, start, sizes)


def as_gatherable(ctx: NodeContext, v: SSAValue) -> tuple[SSAValue, bool]:
    """GATHER/SCATTER take no Booleans: an exact CAST to int8 (and back afterwards)."""
    from nnkiln.dialects.tosa.base import kind_of

    if kind_of(v.type) is Kind.BOOL:
        return ctx.g.value(CastOp, [v], element_type(Kind.I8)), True
    return v, False


def runtime_indices(ctx: NodeContext, i: int) -> SSAValue:
    """Input ``i``, run-time indices (int64 ones are carried as int32); other kinds are refused."""
    v = ctx.input(i)
    if v.kind is not Kind.I32:
        raise ctx.error(f"{v.kind.value} run-time indices are not supported (int32/int64 only)")
    return ctx.tensor(i)


def gather_flat(ctx: NodeContext, data: SSAValue, flat_index: np.ndarray) -> SSAValue:
    """``data.flatten()[flat_index]`` via one GATHER over ``data`` viewed as ``[1, size, 1]``."""
    flat_index = np.asarray(flat_index, dtype=np.int64)
    require_nonempty(ctx, flat_index.shape)
    size = math.prod(shape_of(data))
    et = etype(data)
    x, was_bool = as_gatherable(ctx, data)
    vals = reshape(ctx.g, x, (1, size, 1))
    idx = const(ctx, flat_index.reshape(1, -1).astype(np.int32))
    out = ctx.g.value(GatherOp, [vals, idx], etype(x))
    out = reshape(ctx.g, out, flat_index.shape)
    if was_bool:
        out = ctx.g.value(CastOp, [out], et)
    return out


def gather_axis_const(ctx: NodeContext, data: SSAValue, axis: int, indices: np.ndarray) -> SSAValue:
    """``np.take(data, indices, axis)`` for constant, normalised ``indices`` via GATHER on
    ``[N, K, C]`` with ``N = prod(before)``, ``K = shape[axis]``, ``C = prod(after)``."""
    shape = shape_of(data)
    n, k, c = collapse_axis(shape, axis)
    flat = np.asarray(indices, dtype=np.int64).reshape(-1)
    out_shape = shape[:axis] + tuple(np.shape(indices)) + shape[axis + 1:]
    require_nonempty(ctx, out_shape)
    if np.ndim(indices) == 1 and flat.size and np.all(np.diff(flat) == 1):
        return reshape(ctx.g, slice_axis(ctx, data, axis, int(flat[0]), int(flat.size)), out_shape)
    x, was_bool = as_gatherable(ctx, data)
    vals = reshape(ctx.g, x, (n, k, c))
    idx = const(ctx, np.tile(flat.astype(np.int32)[None, :], (n, 1)))
    out = ctx.g.value(GatherOp, [vals, idx], etype(x))
    out = reshape(ctx.g, out, out_shape)
    if was_bool:
        out = ctx.g.value(CastOp, [out], etype(data))
    return out


def axes_input(ctx: NodeContext, attr_until: int, input_index: int) -> list[int] | None:
    """``axes`` as an attribute (opset < ``attr_until``) or an optional constant input."""
    if ctx.opset < attr_until:
        a = ctx.attr("axes")
        return None if a is None else [int(x) for x in a]
    if ctx.has_input(input_index):
        return [int(x) for x in np.asarray(ctx.const(input_index, "axes")).reshape(-1)]
    return None
