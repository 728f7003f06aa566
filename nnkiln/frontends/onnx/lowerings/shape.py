"""Shape and data-layout lowerings: Reshape, Transpose, Concat, Split, Slice, Squeeze, Unsqueeze,
Expand, Tile, Pad, Gather*, Scatter*, DepthToSpace, SpaceToDepth, Range, Trilu, EyeLike, OneHot,
Compress, NonZero, Unique, CumSum, Resize, Upsample.

Conventions:
- Inputs that decide an output shape (Reshape's shape, Slice's starts/ends, Split's split, axes, pads,
  repeats, Resize's scales/sizes) must be import-time constants; TOSA 0.30 shapes are static.
- When every data input is a constant, the result is computed with numpy at import (shape arithmetic
  such as Shape→Gather→Concat→Reshape folds away).
- TOSA's SLICE, TILE and REVERSE take rank 1..4; higher ranks are first collapsed by RESHAPE where the
  collapse keeps the operation a box (see ``_slice``).
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
from nnkiln.dialects.tosa.ops_comparison import EqualOp, GreaterOp
from nnkiln.dialects.tosa.ops_data_layout import (
    ConcatOp,
    PadOp,
    ReshapeOp,
    ReverseOp,
    SliceOp,
    TileOp,
    TransposeOp,
)
from nnkiln.dialects.tosa.ops_elementwise_binary import AddOp
from nnkiln.dialects.tosa.ops_elementwise_ternary import SelectOp
from nnkiln.dialects.tosa.ops_image import ResizeMode, ResizeOp, resize_output_dim
from nnkiln.dialects.tosa.ops_scatter_gather import GatherOp, ScatterOp
from nnkiln.dialects.tosa.ops_type_conversion import CastOp
from nnkiln.frontends.common.layout import NCHW_TO_NHWC, NHWC_TO_NCHW
from nnkiln.frontends.onnx.importer import NodeContext, TensorValue
from nnkiln.frontends.onnx.lowerings import lowering

Result = TensorValue | SSAValue | np.ndarray

# ------------------------------------------------------------------------------------------------
# small helpers


def _shape(v: SSAValue) -> tuple[int, ...]:
    return tuple(v.type.get_shape())  # type: ignore[attr-defined]


def _etype(v: SSAValue):  # noqa: ANN202
    return v.type.element_type  # type: ignore[attr-defined]


def _norm_axis(ctx: NodeContext, axis: int, rank: int) -> int:
    if not -rank <= axis < max(rank, 1):
        raise ctx.error(f"axis {axis} is out of range for rank {rank}")
    return axis + rank if axis < 0 else axis


def _require_nonempty(ctx: NodeContext, shape: Sequence[int], what: str = "the result") -> None:
    if any(d == 0 for d in shape):
        raise ctx.error(f"{what} has a zero-size dimension {list(shape)}: zero-size tensors are not supported "
                        "in TOSA 0.30 (every dimension must be >= 1)")


def _reshape(ctx: NodeContext, v: SSAValue, shape: Sequence[int]) -> SSAValue:
    shape = tuple(int(d) for d in shape)
    if _shape(v) == shape:
        return v
    return ctx.g.value(ReshapeOp, [v], _etype(v), new_shape=list(shape))


def _transpose(ctx: NodeContext, v: SSAValue, perms: Sequence[int]) -> SSAValue:
    if tuple(perms) == tuple(range(len(perms))):
        return v
    return ctx.g.value(TransposeOp, [v], _etype(v), perms=list(perms))


def _const(ctx: NodeContext, array: np.ndarray) -> SSAValue:
    return ctx.importer.materialize(TensorValue.constant(np.asarray(array)))


def _check_rank4(ctx: NodeContext, rank: int, what: str) -> None:
    if not 1 <= rank <= 4:
        raise ctx.error(f"{what} of a rank-{rank} tensor is not supported (TOSA 0.30 allows rank 1 to 4 here)")


def _slice_box(ctx: NodeContext, v: SSAValue, start: Sequence[int], size: Sequence[int]) -> SSAValue:
    """SLICE of the box ``start``/``size``; ranks above 4 (and rank 0) are handled by collapsing
    runs of untouched dimensions with RESHAPE: a full dimension merges into the group before it
    (``start * d``, ``size * d``), and leading full dimensions merge together."""
    shape = _shape(v)
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
    x = _reshape(ctx, v, gshape)
    out = ctx.g.value(SliceOp, [x], _etype(v), start=[g[0] for g in groups], size=[g[1] for g in groups])
    return _reshape(ctx, out, size)


def _collapse_axis(shape: Sequence[int], axis: int) -> tuple[int, int, int]:
    return (math.prod(shape[:axis]), int(shape[axis]), math.prod(shape[axis + 1:]))


def _reverse(ctx: NodeContext, v: SSAValue, axis: int) -> SSAValue:
    shape = _shape(v)
    if shape[axis] == 1:
        return v
    if len(shape) <= 4:
        return ctx.g.value(ReverseOp, [v], _etype(v), axis=axis)
    three = _collapse_axis(shape, axis)
    r = ctx.g.value(ReverseOp, [_reshape(ctx, v, three)], _etype(v), axis=1)
    return _reshape(ctx, r, shape)


def _concat(ctx: NodeContext, parts: Sequence[SSAValue], axis: int) -> SSAValue:
    if len(parts) == 1:
        return parts[0]
    return ctx.g.value(ConcatOp, [list(parts)], _etype(parts[0]), axis=axis)


def _tile(ctx: NodeContext, v: SSAValue, multiples: Sequence[int]) -> SSAValue:
    shape = _shape(v)
    if all(m == 1 for m in multiples):
        return v
    if len(shape) <= 4:
        return ctx.g.value(TileOp, [v], _etype(v), multiples=list(multiples))
    # Tile one dimension at a time on a collapsed [pre, d, post] view (exact: pure data movement).
    out = v
    for axis, m in enumerate(multiples):
        if m == 1:
            continue
        cur = _shape(out)
        pre, d, post = _collapse_axis(cur, axis)
        t = ctx.g.value(TileOp, [_reshape(ctx, out, (pre, d, post))], _etype(v), multiples=[1, m, 1])
        new = list(cur)
        new[axis] = d * m
        out = _reshape(ctx, t, new)
    return out


def _slice_axis(ctx: NodeContext, v: SSAValue, axis: int, begin: int, size: int) -> SSAValue:
    shape = _shape(v)
    start = [0] * len(shape)
    sizes = list(shape)
    start[axis] = begin
    sizes[axis] = size
    return _slice_box(ctx, v, start, sizes)


def _as_gatherable(ctx: NodeContext, v: SSAValue) -> tuple[SSAValue, bool]:
    """GATHER/SCATTER take no Booleans: an exact CAST to int8 (and back afterwards)."""
    from nnkiln.dialects.tosa.base import kind_of

    if kind_of(v.type) is Kind.BOOL:
        return ctx.g.value(CastOp, [v], element_type(Kind.I8)), True
    return v, False


def _gather_flat(ctx: NodeContext, data: SSAValue, flat_index: np.ndarray) -> SSAValue:
    """``data.flatten()[flat_index]`` via one GATHER over ``data`` viewed as ``[1, size, 1]``."""
    flat_index = np.asarray(flat_index, dtype=np.int64)
    _require_nonempty(ctx, flat_index.shape)
    size = math.prod(_shape(data))
    et = _etype(data)
    x, was_bool = _as_gatherable(ctx, data)
    vals = _reshape(ctx, x, (1, size, 1))
    idx = _const(ctx, flat_index.reshape(1, -1).astype(np.int32))
    out = ctx.g.value(GatherOp, [vals, idx], _etype(x))
    out = _reshape(ctx, out, flat_index.shape)
    if was_bool:
        out = ctx.g.value(CastOp, [out], et)
    return out


def _gather_axis_const(ctx: NodeContext, data: SSAValue, axis: int, indices: np.ndarray) -> SSAValue:
    """``np.take(data, indices, axis)`` for constant, normalised ``indices`` via GATHER on
    ``[N, K, C]`` with ``N = prod(before)``, ``K = shape[axis]``, ``C = prod(after)``."""
    shape = _shape(data)
    n, k, c = _collapse_axis(shape, axis)
    flat = np.asarray(indices, dtype=np.int64).reshape(-1)
    out_shape = shape[:axis] + tuple(np.shape(indices)) + shape[axis + 1:]
    _require_nonempty(ctx, out_shape)
    if np.ndim(indices) == 1 and flat.size and np.all(np.diff(flat) == 1):
        return _reshape(ctx, _slice_axis(ctx, data, axis, int(flat[0]), int(flat.size)), out_shape)
    x, was_bool = _as_gatherable(ctx, data)
    vals = _reshape(ctx, x, (n, k, c))
    idx = _const(ctx, np.tile(flat.astype(np.int32)[None, :], (n, 1)))
    out = ctx.g.value(GatherOp, [vals, idx], _etype(x))
    out = _reshape(ctx, out, out_shape)
    if was_bool:
        out = ctx.g.value(CastOp, [out], _etype(data))
    return out


def _axes_input(ctx: NodeContext, attr_until: int, input_index: int) -> list[int] | None:
    """``axes`` as an attribute (opset < ``attr_until``) or an optional constant input."""
    if ctx.opset < attr_until:
        a = ctx.attr("axes")
        return None if a is None else [int(x) for x in a]
    if ctx.has_input(input_index):
        return [int(x) for x in np.asarray(ctx.const(input_index, "axes")).reshape(-1)]
    return None


def _np_dtype_of(kind: Kind) -> np.dtype:
    table = {Kind.BOOL: np.bool_, Kind.I8: np.int8, Kind.I16: np.int16, Kind.I32: np.int32,
             Kind.F16: np.float16, Kind.F32: np.float32, Kind.U8: np.uint8, Kind.U16: np.uint16}
    if kind not in table:
        raise ValueError(kind)
    return np.dtype(table[kind])


# ------------------------------------------------------------------------------------------------
# Reshape family


@lowering("Reshape")
def Reshape(ctx: NodeContext) -> list[Result]:
    data = ctx.input(0)
    if ctx.opset < 5:
        spec = [int(d) for d in ctx.attr("shape", [])]
    else:
        spec = [int(d) for d in np.asarray(ctx.const(1, "shape")).reshape(-1)]
    allowzero = bool(ctx.attr("allowzero", 0))
    out: list[int] = []
    for i, d in enumerate(spec):
        if d == 0 and not allowzero:
            if i >= data.rank:
                raise ctx.error(f"shape {spec}: 0 at position {i} copies a dimension the input (rank {data.rank}) lacks")
            out.append(data.shape[i])
        else:
            out.append(d)
    if out.count(-1) > 1:
        raise ctx.error(f"shape {spec} has more than one -1")
    size = math.prod(data.shape)
    if -1 in out:
        rest = math.prod(d for d in out if d != -1)
        if rest == 0 or size % rest:
            raise ctx.error(f"shape {spec} cannot take the {size} elements of input {list(data.shape)}")
        out[out.index(-1)] = size // rest
    if math.prod(out) != size or any(d < 0 for d in out):
        raise ctx.error(f"shape {spec} (resolved {out}) does not match input {list(data.shape)}")
    if data.is_const:
        return [np.asarray(data.const).reshape(out)]
    _require_nonempty(ctx, out)
    return [_reshape(ctx, ctx.tensor(0), out)]


@lowering("Squeeze")
def Squeeze(ctx: NodeContext) -> list[Result]:
    data = ctx.input(0)
    axes = _axes_input(ctx, 13, 1)
    if axes is None:
        drop = {i for i, d in enumerate(data.shape) if d == 1}
    else:
        drop = {_norm_axis(ctx, a, data.rank) for a in axes}
        bad = [a for a in drop if data.shape[a] != 1]
        if bad:
            raise ctx.error(f"cannot squeeze axes {bad} of shape {list(data.shape)}: size is not 1")
    out = [d for i, d in enumerate(data.shape) if i not in drop]
    if data.is_const:
        return [np.asarray(data.const).reshape(out)]
    return [_reshape(ctx, ctx.tensor(0), out)]


@lowering("Unsqueeze")
def Unsqueeze(ctx: NodeContext) -> list[Result]:
    data = ctx.input(0)
    axes = _axes_input(ctx, 13, 1)
    if axes is None:
        raise ctx.error("axes is required")
    rank = data.rank + len(axes)
    norm = sorted(_norm_axis(ctx, a, rank) for a in axes)
    if len(set(norm)) != len(norm):
        raise ctx.error(f"axes {axes} repeat an axis")
    it = iter(data.shape)
    out = [1 if i in norm else next(it) for i in range(rank)]
    if data.is_const:
        return [np.asarray(data.const).reshape(out)]
    return [_reshape(ctx, ctx.tensor(0), out)]


@lowering("Transpose")
def Transpose(ctx: NodeContext) -> list[Result]:
    data = ctx.input(0)
    perm = ctx.attr("perm")
    perm = list(range(data.rank))[::-1] if perm is None else [int(p) for p in perm]
    if sorted(perm) != list(range(data.rank)):
        raise ctx.error(f"perm {perm} is not a permutation of rank {data.rank}")
    if data.is_const:
        return [np.ascontiguousarray(np.transpose(data.const, perm))]
    if data.rank == 0:
        return [data]
    return [_transpose(ctx, ctx.tensor(0), perm)]


@lowering("Concat")
def Concat(ctx: NodeContext) -> list[Result]:
    vals = [ctx.input(i) for i in range(len(ctx.inputs)) if ctx.has_input(i)]
    rank = vals[0].rank
    axis = _norm_axis(ctx, int(ctx.attr("axis", 1 if ctx.opset < 4 else 0)), rank)
    if all(v.is_const for v in vals):
        return [np.concatenate([np.asarray(v.const) for v in vals], axis=axis)]
    parts = [v for v in vals if math.prod(v.shape) > 0]
    kinds = {v.kind for v in parts}
    if len(kinds) != 1:
        raise ctx.error(f"inputs have different element kinds {[k.value for k in kinds]}")
    return [_concat(ctx, [ctx.importer.materialize(v) for v in parts], axis)]


@lowering("Split")
def Split(ctx: NodeContext) -> list[Result]:
    data = ctx.input(0)
    axis = _norm_axis(ctx, int(ctx.attr("axis", 0)), data.rank)
    d = data.shape[axis]
    n_out = len(ctx.node.output)
    if ctx.opset < 13:
        split = ctx.attr("split")
        if split is None and ctx.opset < 2 and ctx.has_input(1):
            split = ctx.const(1, "split")
    else:
        split = ctx.const(1, "split") if ctx.has_input(1) else None
    if split is not None:
        sizes = [int(s) for s in np.asarray(split).reshape(-1)]
        if sum(sizes) != d or len(sizes) != n_out:
            raise ctx.error(f"split {sizes} does not match dimension {d} / {n_out} outputs")
    else:
        num = int(ctx.attr("num_outputs", n_out))
        if ctx.opset >= 18 and ctx.attrs.get("num_outputs") is not None:
            chunk = -(-d // num)
            sizes = [min(chunk, max(0, d - i * chunk)) for i in range(num)]
        else:
            if d % n_out:
                raise ctx.error(f"dimension {d} does not split into {n_out} equal parts")
            sizes = [d // n_out] * n_out
    results: list[Result] = []
    begin = 0
    for s in sizes:
        if data.is_const:
            idx = [slice(None)] * data.rank
            idx[axis] = slice(begin, begin + s)
            results.append(np.ascontiguousarray(np.asarray(data.const)[tuple(idx)]))
        else:
            shape = list(data.shape)
            shape[axis] = s
            _require_nonempty(ctx, shape, "an output")
            results.append(_slice_axis(ctx, ctx.tensor(0), axis, begin, s))
        begin += s
    return results


def _slice_indices(start: int, end: int, step: int, dim: int) -> range:
    """ONNX Slice's index set on one axis: negative start/end add ``dim``; then start is clamped to
    [0, dim] (step > 0) or [0, dim - 1] (step < 0) and end to [0, dim] or [-1, dim - 1]."""
    if start < 0:
        start += dim
    if end < 0:
        end += dim
    if step > 0:
        start = min(max(start, 0), dim)
        end = min(max(end, 0), dim)
    else:
        start = min(max(start, 0), dim - 1)
        end = min(max(end, -1), dim - 1)
    return range(start, end, step)


@lowering("Slice")
def Slice(ctx: NodeContext) -> list[Result]:
    """Slice: step 1 → SLICE; step -1 → SLICE + REVERSE; other steps → GATHER with constant indices."""
    data = ctx.input(0)
    if ctx.opset < 10:
        starts = [int(x) for x in ctx.attr("starts")]
        ends = [int(x) for x in ctx.attr("ends")]
        axes = ctx.attr("axes")
        steps = None
    else:
        starts = [int(x) for x in np.asarray(ctx.const(1, "starts")).reshape(-1)]
        ends = [int(x) for x in np.asarray(ctx.const(2, "ends")).reshape(-1)]
        axes = np.asarray(ctx.const(3, "axes")).reshape(-1) if ctx.has_input(3) else None
        steps = np.asarray(ctx.const(4, "steps")).reshape(-1) if ctx.has_input(4) else None
    axes_l = list(range(len(starts))) if axes is None else [_norm_axis(ctx, int(a), data.rank) for a in axes]
    steps_l = [1] * len(starts) if steps is None else [int(s) for s in steps]
    if any(s == 0 for s in steps_l):
        raise ctx.error("a step of 0 is invalid")
    per_axis: dict[int, range] = {}
    for a, b, e, s in zip(axes_l, starts, ends, steps_l):
        per_axis[a] = _slice_indices(b, e, s, data.shape[a])
    if data.is_const:
        idx = tuple(slice(r.start, r.stop if r.stop >= 0 else None, r.step) if a in per_axis else slice(None)
                    for a, r in ((a, per_axis.get(a)) for a in range(data.rank)))
        return [np.ascontiguousarray(np.asarray(data.const)[idx])]
    out_shape = [len(per_axis[a]) if a in per_axis else d for a, d in enumerate(data.shape)]
    _require_nonempty(ctx, out_shape)
    x = ctx.tensor(0)
    # one box slice for everything, then reverse / gather per axis
    start = [0] * data.rank
    size = list(data.shape)
    for a, r in per_axis.items():
        lo = min(r[0], r[-1])
        start[a] = lo
        size[a] = abs(r[-1] - r[0]) + 1
    x = _slice_box(ctx, x, start, size)
    for a, r in sorted(per_axis.items()):
        if len(r) == 1 or r.step == 1:
            continue
        if r.step == -1:
            x = _reverse(ctx, x, a)
        else:
            local = np.array([i - start[a] for i in r], dtype=np.int64)
            x = _gather_axis_const(ctx, x, a, local)
    return [x]


# ------------------------------------------------------------------------------------------------
# Expand / Tile / Pad


@lowering("Expand")
def Expand(ctx: NodeContext) -> list[Result]:
    """Expand: numpy broadcast of the input with ``shape`` (bidirectional); TILE of size-1 dims."""
    data = ctx.input(0)
    spec = [int(d) for d in np.asarray(ctx.const(1, "shape")).reshape(-1)]
    try:
        out = tuple(int(d) for d in np.broadcast_shapes(tuple(data.shape), tuple(spec)))
    except ValueError:
        raise ctx.error(f"shape {spec} does not broadcast with input {list(data.shape)}") from None
    if data.is_const:
        return [np.ascontiguousarray(np.broadcast_to(np.asarray(data.const), out))]
    _require_nonempty(ctx, out)
    x = _reshape(ctx, ctx.tensor(0), (1,) * (len(out) - data.rank) + tuple(data.shape))
    if not out:
        return [x]
    multiples = [o // i for o, i in zip(out, _shape(x))]
    return [_tile(ctx, x, multiples)]


@lowering("Tile")
def Tile(ctx: NodeContext) -> list[Result]:
    data = ctx.input(0)
    reps = [int(r) for r in np.asarray(ctx.const(1, "repeats")).reshape(-1)]
    if len(reps) != data.rank or any(r < 0 for r in reps):
        raise ctx.error(f"repeats {reps} do not fit input {list(data.shape)}")
    if data.is_const:
        return [np.tile(np.asarray(data.const), reps)]
    _require_nonempty(ctx, [d * r for d, r in zip(data.shape, reps)])
    return [_tile(ctx, ctx.tensor(0), reps)]


def _pad_const_attr(kind: Kind, value: float | int | bool) -> float | int | bool:
    if kind is Kind.BOOL:
        return bool(value)
    if kind.is_float:
        return float(value)
    return int(value)


@lowering("Pad")
def Pad(ctx: NodeContext) -> list[Result]:
    """Pad: constant → PAD (pad_const in the tensor's type); edge/reflect/wrap → SLICE/REVERSE/TILE
    pieces concatenated per axis (exact). Negative pads crop with SLICE."""
    data = ctx.input(0)
    rank = data.rank
    mode = ctx.attr("mode", "constant")
    if ctx.opset < 11:
        pads = [int(p) for p in ctx.attr("pads" if ctx.opset >= 2 else "paddings", [])]
        value = float(ctx.attr("value", 0.0))
        axes = list(range(rank))
    else:
        pads = [int(p) for p in np.asarray(ctx.const(1, "pads")).reshape(-1)]
        value = 0
        if ctx.has_input(2):
            cv = np.asarray(ctx.const(2, "constant_value")).reshape(-1)
            value = cv[0].item() if cv.size else 0
        if ctx.has_input(3):
            axes = [_norm_axis(ctx, int(a), rank) for a in np.asarray(ctx.const(3, "axes")).reshape(-1)]
        else:
            axes = list(range(rank))
    if len(pads) != 2 * len(axes):
        raise ctx.error(f"pads {pads} do not fit {len(axes)} axes")
    before = [0] * rank
    after = [0] * rank
    for i, a in enumerate(axes):
        before[a] = pads[i]
        after[a] = pads[i + len(axes)]
    if mode not in ("constant", "reflect", "edge", "wrap"):
        raise ctx.error(f"mode '{mode}' is not supported")
    if data.is_const:
        arr = np.asarray(data.const)
        crop = tuple(slice(max(0, -b), arr.shape[i] - max(0, -e)) for i, (b, e) in enumerate(zip(before, after)))
        arr = arr[crop]
        widths = [(max(0, b), max(0, e)) for b, e in zip(before, after)]
        if mode == "constant":
            return [np.pad(arr, widths, mode="constant", constant_values=np.asarray(value).astype(arr.dtype))]
        return [np.pad(arr, widths, mode={"edge": "edge", "reflect": "reflect", "wrap": "wrap"}[mode])]
    x = ctx.tensor(0)
    # crop negative pads first
    if any(b < 0 or e < 0 for b, e in zip(before, after)):
        start = [max(0, -b) for b in before]
        size = [d - max(0, -b) - max(0, -e) for d, b, e in zip(data.shape, before, after)]
        _require_nonempty(ctx, size)
        x = _slice_box(ctx, x, start, size)
    widths = [(max(0, b), max(0, e)) for b, e in zip(before, after)]
    if all(w == (0, 0) for w in widths):
        return [x]
    if mode == "constant":
        flat = [p for w in widths for p in w]
        return [ctx.g.value(PadOp, [x], _etype(x), padding=flat, pad_const=_pad_const_attr(data.kind, value))]
    for a, (b, e) in enumerate(widths):
        if b == 0 and e == 0:
            continue
        d = _shape(x)[a]
        parts: list[SSAValue] = []
        if mode == "edge":
            if b:
                parts.append(_tile_axis(ctx, _slice_axis(ctx, x, a, 0, 1), a, b))
            parts.append(x)
            if e:
                parts.append(_tile_axis(ctx, _slice_axis(ctx, x, a, d - 1, 1), a, e))
        elif mode == "reflect":
            if b > d - 1 or e > d - 1:
                raise ctx.error(f"reflect padding of {max(b, e)} on a dimension of size {d} is not supported "
                                "(needs pads < dimension)")
            if b:
                parts.append(_reverse(ctx, _slice_axis(ctx, x, a, 1, b), a))
            parts.append(x)
            if e:
                parts.append(_reverse(ctx, _slice_axis(ctx, x, a, d - 1 - e, e), a))
        else:  # wrap
            if b > d or e > d:
                raise ctx.error(f"wrap padding of {max(b, e)} on a dimension of size {d} is not supported "
                                "(needs pads <= dimension)")
            if b:
                parts.append(_slice_axis(ctx, x, a, d - b, b))
            parts.append(x)
            if e:
                parts.append(_slice_axis(ctx, x, a, 0, e))
        x = _concat(ctx, parts, a)
    return [x]


def _tile_axis(ctx: NodeContext, v: SSAValue, axis: int, m: int) -> SSAValue:
    mult = [1] * len(_shape(v))
    mult[axis] = m
    return _tile(ctx, v, mult)


# ------------------------------------------------------------------------------------------------
# Gather / Scatter


@lowering("Gather")
def Gather(ctx: NodeContext) -> list[Result]:
    """Gather: constant indices are normalised at import (negative + dim); dynamic indices are
    normalised with GREATER/ADD/SELECT and fed to GATHER on ``[N, K, C]``."""
    data = ctx.input(0)
    ind = ctx.input(1)
    axis = _norm_axis(ctx, int(ctx.attr("axis", 0)), data.rank)
    d = data.shape[axis]
    if ind.is_const:
        idx = np.asarray(ind.const).astype(np.int64)
        if idx.size and (idx.min() < -d or idx.max() >= d):
            raise ctx.error(f"indices {idx.tolist()} are out of range for dimension {d}")
        idx = np.where(idx < 0, idx + d, idx)
        if data.is_const:
            return [np.take(np.asarray(data.const), idx, axis=axis)]
        return [_gather_axis_const(ctx, ctx.tensor(0), axis, idx)]
    if ind.kind is not Kind.I32:
        raise ctx.error(f"{ind.kind.value} run-time indices are not supported (int32/int64 only)")
    out_shape = data.shape[:axis] + ind.shape + data.shape[axis + 1:]
    _require_nonempty(ctx, out_shape)
    n, k, c = _collapse_axis(data.shape, axis)
    w = math.prod(ind.shape)
    i = _reshape(ctx, ctx.tensor(1), (1, w))
    zero = _const(ctx, np.zeros((1, 1), np.int32))
    neg = ctx.g.value(GreaterOp, [zero, i], element_type(Kind.BOOL))
    shifted = ctx.g.value(AddOp, [i, _const(ctx, np.full((1, 1), d, np.int32))], element_type(Kind.I32))
    i = ctx.g.value(SelectOp, [neg, shifted, i], element_type(Kind.I32))
    if n > 1:
        i = ctx.g.value(TileOp, [i], element_type(Kind.I32), multiples=[n, 1])
    x, was_bool = _as_gatherable(ctx, ctx.tensor(0))
    out = ctx.g.value(GatherOp, [_reshape(ctx, x, (n, k, c)), i], _etype(x))
    out = _reshape(ctx, out, out_shape)
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
    axis = _norm_axis(ctx, int(ctx.attr("axis", 0)), data.rank)
    idx = _norm_indices(ctx, ctx.const(1, "indices (GATHER needs import-time flat indices)"), data.shape[axis])
    if data.is_const:
        return [np.take_along_axis(np.asarray(data.const), idx, axis=axis)]
    positions = np.arange(math.prod(data.shape), dtype=np.int64).reshape(data.shape)
    return [_gather_flat(ctx, ctx.tensor(0), np.take_along_axis(positions, idx, axis=axis))]


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
    return [_gather_flat(ctx, ctx.tensor(0), _gather_nd(positions, idx, b))]


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
    x, was_bool = _as_gatherable(ctx, ctx.tensor(0))
    u, _ = _as_gatherable(ctx, ctx.tensor(2))
    vals = _reshape(ctx, x, (1, size, 1))
    idx = _const(ctx, targets.reshape(1, -1).astype(np.int32))
    out = ctx.g.value(ScatterOp, [vals, idx, _reshape(ctx, u, (1, targets.size, 1))], _etype(x))
    out = _reshape(ctx, out, data.shape)
    if was_bool:
        out = ctx.g.value(CastOp, [out], element_type(Kind.BOOL))
    return [out]


@lowering("ScatterElements")
def ScatterElements(ctx: NodeContext) -> list[Result]:
    data = ctx.input(0)
    axis = _norm_axis(ctx, int(ctx.attr("axis", 0)), data.rank)
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
# DepthToSpace / SpaceToDepth


@lowering("DepthToSpace")
def DepthToSpace(ctx: NodeContext) -> list[Result]:
    data = ctx.input(0)
    bs = int(ctx.attr("blocksize"))
    mode = ctx.attr("mode", "DCR")
    if data.rank != 4 or data.shape[1] % (bs * bs):
        raise ctx.error(f"input {list(data.shape)} does not fit blocksize {bs}")
    b, c, h, w = data.shape
    oc = c // (bs * bs)
    if mode == "DCR":
        mid, perm = (b, bs, bs, oc, h, w), (0, 3, 4, 1, 5, 2)
    elif mode == "CRD":
        mid, perm = (b, oc, bs, bs, h, w), (0, 1, 4, 2, 5, 3)
    else:
        raise ctx.error(f"mode '{mode}' is not supported")
    out = (b, oc, h * bs, w * bs)
    if data.is_const:
        return [np.transpose(np.asarray(data.const).reshape(mid), perm).reshape(out)]
    x = _reshape(ctx, ctx.tensor(0), mid)
    return [_reshape(ctx, _transpose(ctx, x, perm), out)]


@lowering("SpaceToDepth")
def SpaceToDepth(ctx: NodeContext) -> list[Result]:
    data = ctx.input(0)
    bs = int(ctx.attr("blocksize"))
    mode = ctx.attr("mode", "DCR")
    if data.rank != 4 or data.shape[2] % bs or data.shape[3] % bs:
        raise ctx.error(f"input {list(data.shape)} does not fit blocksize {bs}")
    b, c, h, w = data.shape
    mid = (b, c, h // bs, bs, w // bs, bs)
    if mode == "DCR":
        perm = (0, 3, 5, 1, 2, 4)
    elif mode == "CRD":
        perm = (0, 1, 3, 5, 2, 4)
    else:
        raise ctx.error(f"mode '{mode}' is not supported")
    out = (b, c * bs * bs, h // bs, w // bs)
    if data.is_const:
        return [np.transpose(np.asarray(data.const).reshape(mid), perm).reshape(out)]
    x = _reshape(ctx, ctx.tensor(0), mid)
    return [_reshape(ctx, _transpose(ctx, x, perm), out)]


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
        dtype = _np_dtype_of(data.kind)
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
    m_v = _const(ctx, mask.reshape((1,) * (rank - 2) + (n, m)))
    zero = _const(ctx, np.zeros((1,) * rank, _np_dtype_of(data.kind)))
    return [ctx.g.value(SelectOp, [m_v, x, zero], _etype(x))]


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
    axis = _norm_axis(ctx, int(ctx.attr("axis", -1)), rank)
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
        sel = _const(ctx, hot)
    else:
        i = _reshape(ctx, ctx.tensor(0), [1 if a == axis else d for a, d in enumerate(out_shape)])
        if ind.kind.is_float:
            i = _trunc_to_i32(ctx, i)
        elif ind.kind is not Kind.I32:
            raise ctx.error(f"{ind.kind.value} run-time indices are not supported")
        zero = _const(ctx, np.zeros((1,) * rank, np.int32))
        neg = ctx.g.value(GreaterOp, [zero, i], element_type(Kind.BOOL))
        shifted = ctx.g.value(AddOp, [i, _const(ctx, np.full((1,) * rank, depth, np.int32))], element_type(Kind.I32))
        i = ctx.g.value(SelectOp, [neg, shifted, i], element_type(Kind.I32))
        sel = ctx.g.value(EqualOp, [i, _const(ctx, ar.astype(np.int32))], element_type(Kind.BOOL))
    if values.is_const:
        v = np.asarray(values.const).reshape(-1)
        off = _const(ctx, v[:1].reshape((1,) * rank))
        on = _const(ctx, v[1:2].reshape((1,) * rank))
    else:
        vv = ctx.importer.materialize(values)
        vv = _reshape(ctx, vv, (2,))
        off = _reshape(ctx, _slice_box(ctx, vv, [0], [1]), (1,) * rank)
        on = _reshape(ctx, _slice_box(ctx, vv, [1], [1]), (1,) * rank)
    if _shape(sel) != tuple(out_shape):
        sel = _tile(ctx, sel, [o // s for o, s in zip(out_shape, _shape(sel))])
    return [ctx.g.value(SelectOp, [sel, on, off], _etype(on))]


def _trunc_to_i32(ctx: NodeContext, x: SSAValue) -> SSAValue:
    """Float → int32 truncating toward zero (ONNX's cast to int64), exact for values in int32 range."""
    from nnkiln.dialects.tosa.ops_comparison import GreaterEqualOp
    from nnkiln.dialects.tosa.ops_elementwise_unary import CeilOp, FloorOp

    rank = len(_shape(x))
    zero = _const(ctx, np.zeros((1,) * rank, _np_dtype_of(kind_of_value(x))))
    nonneg = ctx.g.value(GreaterEqualOp, [x, zero], element_type(Kind.BOOL))
    fl = ctx.g.value(FloorOp, [x], _etype(x))
    ce = ctx.g.value(CeilOp, [x], _etype(x))
    t = ctx.g.value(SelectOp, [nonneg, fl, ce], _etype(x))
    return ctx.g.value(CastOp, [t], element_type(Kind.I32))


def kind_of_value(v: SSAValue) -> Kind:
    from nnkiln.dialects.tosa.base import kind_of

    k = kind_of(v.type)
    assert k is not None
    return k


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
        x = _reshape(ctx, x, shape)
        a = 0
    else:
        a = _norm_axis(ctx, int(axis), data.rank)
    keep = np.nonzero(c[: shape[a]])[0]
    shape[a] = len(keep)
    _require_nonempty(ctx, shape)
    return [_gather_axis_const(ctx, x, a, keep)]


@lowering("Unique")
def Unique(ctx: NodeContext) -> list[Result]:
    data = ctx.input(0)
    if not data.is_const:
        _data_dependent(ctx)
    arr = np.asarray(data.const)
    axis = ctx.attr("axis")
    sorted_ = bool(ctx.attr("sorted", 1))
    if axis is not None:
        axis = _norm_axis(ctx, int(axis), arr.ndim)
    y, idx, inv, cnt = np.unique(arr, return_index=True, return_inverse=True, return_counts=True, axis=axis)
    inv = inv.reshape(-1)
    if not sorted_:
        order = np.argsort(idx, kind="stable")
        rank_of = np.empty_like(order)
        rank_of[order] = np.arange(len(order))
        y = np.take(y, order, axis=0 if axis is None else axis)
        idx, cnt, inv = idx[order], cnt[order], rank_of[inv]
    return [y, idx.astype(np.int64), inv.astype(np.int64), cnt.astype(np.int64)]


# ------------------------------------------------------------------------------------------------
# CumSum


@lowering("CumSum")
def CumSum(ctx: NodeContext) -> list[Result]:
    """CumSum by log-step (Hillis-Steele) prefix sums: ``x += shift(x, s)`` for s = 1, 2, 4, ...,
    each shift a PAD of zeros in front plus a SLICE. Exact for int32 (wrapping adds); for floats
    the additions are grouped differently from a sequential sum (rounding may differ in the last
    bits). ``exclusive`` shifts the result by one more; ``reverse`` wraps it in REVERSE."""
    data = ctx.input(0)
    axis = _norm_axis(ctx, int(np.asarray(ctx.const(1, "axis")).reshape(-1)[0]), data.rank)
    exclusive = bool(ctx.attr("exclusive", 0))
    reverse = bool(ctx.attr("reverse", 0))
    if data.is_const:
        arr = np.asarray(data.const)
        a = np.flip(arr, axis) if reverse else arr
        c = np.cumsum(a, axis=axis, dtype=arr.dtype)
        if exclusive:
            c = np.concatenate([np.zeros_like(np.take(c, [0], axis)), np.take(c, range(a.shape[axis] - 1), axis)], axis)
        return [np.flip(c, axis) if reverse else c]
    if data.kind not in (Kind.I32, Kind.F32, Kind.F16, Kind.BF16):
        raise ctx.error(f"{data.kind.value} is not supported (TOSA ADD takes int32 and floats)")
    x = ctx.tensor(0)
    if reverse:
        x = _reverse(ctx, x, axis)
    d = data.shape[axis]
    zero = 0.0 if data.kind.is_float else 0

    def shifted(v: SSAValue, s: int) -> SSAValue:
        pad = [0] * (2 * data.rank)
        pad[2 * axis] = s
        p = ctx.g.value(PadOp, [v], _etype(v), padding=pad, pad_const=zero)
        return _slice_axis(ctx, p, axis, 0, d)

    s = 1
    while s < d:
        x = ctx.g.value(AddOp, [x, shifted(x, s)], _etype(x))
        s *= 2
    if exclusive:
        x = shifted(x, 1)
    if reverse:
        x = _reverse(ctx, x, axis)
    return [x]


# ------------------------------------------------------------------------------------------------
# Resize / Upsample


def _onnx_coord(mode: str, out_size: int, in_size: int, scale: float) -> np.ndarray:
    """ONNX's coordinate transformation (x_original per output index), in float64 like ONNX's reference."""
    x = np.arange(out_size, dtype=np.float64)
    width = scale * in_size  # ONNX uses the real-valued output width in these formulas
    if mode == "half_pixel":
        return (x + 0.5) / scale - 0.5
    if mode == "pytorch_half_pixel":
        return (x + 0.5) / scale - 0.5 if width != 1 else np.full(out_size, -0.5)
    if mode == "align_corners":
        return x * (in_size - 1) / (width - 1) if width != 1 else np.zeros(out_size)
    if mode == "asymmetric":
        return x / scale
    if mode == "tf_half_pixel_for_nn":
        return (x + 0.5) / scale
    if mode == "half_pixel_symmetric":
        return _symmetric_offset(out_size, in_size, scale) + (x + 0.5) / scale - 0.5
    raise ValueError(mode)


def _symmetric_offset(out_size: int, in_size: int, scale: float) -> float:
    """half_pixel_symmetric's shift: ``in/2 * (1 - out / (scale * in))``."""
    return in_size / 2 * (1 - out_size / (scale * in_size))


def _onnx_nearest(coord: np.ndarray, nearest_mode: str, in_size: int) -> np.ndarray:
    if nearest_mode == "round_prefer_floor":
        idx = np.where(coord == np.floor(coord) + 0.5, np.floor(coord), np.round(coord))
    elif nearest_mode == "round_prefer_ceil":
        idx = np.where(coord == np.floor(coord) + 0.5, np.ceil(coord), np.round(coord))
    elif nearest_mode == "floor":
        idx = np.floor(coord)
    elif nearest_mode == "ceil":
        idx = np.ceil(coord)
    else:
        raise ValueError(nearest_mode)
    return np.clip(idx, 0, in_size - 1).astype(np.int64)


def _tosa_positions(out_size: int, stride: float, offset: float) -> np.ndarray:
    """RESIZE's float-mode sample positions (fp32, as §2.12.1 computes them)."""
    o = np.arange(out_size, dtype=np.float32)
    return o * np.float32(stride) + np.float32(offset)


def _tosa_nearest(out_size: int, in_size: int, stride: float, offset: float) -> np.ndarray | None:
    pos = _tosa_positions(out_size, stride, offset)
    i = np.floor(pos).astype(np.int64)
    d = pos - i.astype(np.float32)
    i0, i1 = np.maximum(i, 0), np.minimum(i + 1, in_size - 1)
    if np.any(i0 > i1):
        return None
    return np.where(d >= np.float32(0.5), i1, i0)


def _resize_axis(mode: str, ctm: str, nearest_mode: str, in_size: int, out_size: int,
                 scale: float) -> tuple[float, float] | None:
    """(stride, offset) of RESIZE's float mode reproducing ONNX on one axis, or None.

    The stride is ``1 / scale`` (``(in - 1) / (out - 1)`` for align_corners) and the offset the
    transformation's constant term, both rounded to fp32. Nearest: the ONNX rounding rule is
    emulated by moving the offset (floor: −0.5; ceil: +0.5 − ε; round_prefer_floor: −ε) and the
    candidate is accepted only if RESIZE's index for every output position equals ONNX's index.
    Linear: accepted when RESIZE's fp32 positions are within 1e-6 of ONNX's and no position needs a
    sample beyond the last row (ONNX clamps coordinates to the edge, as RESIZE does for iy < 0 and
    iy + 1 > IH - 1)."""
    coord = _onnx_coord(ctm, out_size, in_size, scale)
    width = scale * in_size
    if ctm == "align_corners":
        stride = (in_size - 1) / (width - 1) if width != 1 else 1.0
        offset = 0.0
    elif ctm in ("half_pixel", "pytorch_half_pixel"):
        stride = 1.0 / scale
        offset = 0.5 / scale - 0.5
        if ctm == "pytorch_half_pixel" and width == 1:
            stride, offset = 1.0, -0.5
    elif ctm == "asymmetric":
        stride, offset = 1.0 / scale, 0.0
    elif ctm == "half_pixel_symmetric":
        stride = 1.0 / scale
        offset = _symmetric_offset(out_size, in_size, scale) + 0.5 / scale - 0.5
    else:  # tf_half_pixel_for_nn
        stride, offset = 1.0 / scale, 0.5 / scale
    if stride > in_size:
        stride = float(in_size)  # any stride is fine when every position is checked below
        if out_size > 1:
            return None
    if mode == "nearest":
        want = _onnx_nearest(coord, nearest_mode, in_size)
        eps = 2.0 ** -12
        shifts = {"round_prefer_ceil": [0.0], "round_prefer_floor": [0.0, -eps],
                  "floor": [-0.5], "ceil": [0.5 - eps, 0.5 - 2 * eps]}[nearest_mode]
        for sh in shifts:
            got = _tosa_nearest(out_size, in_size, stride, offset + sh)
            if got is not None and np.array_equal(got, want):
                return stride, offset + sh
        return None
    pos = _tosa_positions(out_size, stride, offset).astype(np.float64)
    if np.any(np.abs(pos - coord) > 1e-6 * max(1.0, in_size)):
        return None
    if np.any(np.floor(pos) > in_size - 1):
        return None
    return stride, offset


_INT_SHIFT = 11
"""Integer RESIZE modes: positions in units of 2^-11 (the largest shift, finest offsets)."""


def _int_nearest_params(ctm: str, nearest_mode: str, in_size: int, out_size: int, scale: float,
                        stride: float, offset: float) -> tuple[int, int] | None:
    """int16 (stride, offset) for RESIZE's integer NEAREST mode (shift 11) reproducing ONNX's
    indices exactly, from the float-mode parameters rounded to 2^-11 (tried with small offset
    nudges); each candidate is checked index by index."""
    want = _onnx_nearest(_onnx_coord(ctm, out_size, in_size, scale), nearest_mode, in_size)
    unit = 1 << _INT_SHIFT
    s_i = int(round(stride * unit))
    if not 0 < s_i < (16 << _INT_SHIFT):
        return None
    o = np.arange(out_size, dtype=np.int64)
    for nudge in (0, -1, 1, -2, 2):
        o_i = int(round(offset * unit)) + nudge
        if not -(16 << _INT_SHIFT) < o_i < (16 << _INT_SHIFT):
            continue
        pos = o * s_i + o_i
        i = pos >> _INT_SHIFT
        d = pos - (i << _INT_SHIFT)
        i0, i1 = np.maximum(i, 0), np.minimum(i + 1, in_size - 1)
        if np.any(i0 > i1):
            continue
        if np.array_equal(np.where(d >= unit // 2, i1, i0), want):
            return s_i, o_i
    return None


def _resize_common(ctx: NodeContext, mode: str, ctm: str, nearest_mode: str, scl: list[float],
                   out: list[int]) -> list[Result]:
    """RESIZE for output sizes ``out`` with ONNX coordinate scales ``scl`` (one per axis)."""
    data = ctx.input(0)
    rank = data.rank
    if mode not in ("nearest", "linear", "bilinear"):
        raise ctx.error(f"mode '{mode}' is not supported (TOSA RESIZE has NEAREST and BILINEAR)")
    mode = "linear" if mode == "bilinear" else mode
    if ctm not in ("half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric", "tf_half_pixel_for_nn",
                   "half_pixel_symmetric"):
        raise ctx.error(f"coordinate_transformation_mode '{ctm}' is not supported")
    if len(out) != rank:
        raise ctx.error(f"scales/sizes have {len(out)} values for rank {rank}")
    if rank < 2 or any(o != i for o, i in zip(out[:-2], data.shape[:-2])):
        raise ctx.error(f"resizing dimensions other than the last two ({list(data.shape)} -> {out}) is not "
                        "supported (TOSA RESIZE resizes H and W of NHWC)")
    _require_nonempty(ctx, out)
    if data.kind not in (Kind.F32, Kind.F16, Kind.BF16) and not (mode == "nearest" and data.kind in (Kind.I8, Kind.I16)):
        raise ctx.error(f"{data.kind.value} input is not supported for mode {mode}")
    params = []
    for a in (rank - 2, rank - 1):
        p = _resize_axis(mode, ctm, nearest_mode, data.shape[a], out[a], scl[a])
        if p is None:
            raise ctx.error(f"axis {a} ({data.shape[a]} -> {out[a]}, mode {mode}, {ctm}, {nearest_mode}) is not "
                            "supported: RESIZE's stride/offset cannot reproduce ONNX's sample positions")
        params.append(p)
    shift = 0
    if not data.kind.is_float:
        shift = _INT_SHIFT
        iparams = []
        for a, (st, of) in zip((rank - 2, rank - 1), params):
            ip = _int_nearest_params(ctm, nearest_mode, data.shape[a], out[a], scl[a], st, of)
            if ip is None:
                raise ctx.error(f"axis {a} ({data.shape[a]} -> {out[a]}, {ctm}, {nearest_mode}) is not supported "
                                f"for {data.kind.value}: RESIZE's int16 stride/offset cannot reproduce ONNX's indices")
            iparams.append(ip)
        params = iparams
    lead = data.shape[:-2]
    n = math.prod(lead)
    x = _reshape(ctx, ctx.tensor(0), (n, 1, data.shape[-2], data.shape[-1]))
    x = _transpose(ctx, x, NCHW_TO_NHWC)
    if shift:
        stride = [int(p[0]) for p in params]
        offset = [int(p[1]) for p in params]
    else:
        stride = [float(np.float32(p[0])) for p in params]
        offset = [float(np.float32(p[1])) for p in params]
    border = [o - resize_output_dim(i, st, of, 0, shift)
              for o, i, st, of in zip(out[-2:], data.shape[-2:], stride, offset)]
    r = ctx.g.value(
        ResizeOp, [x], _etype(x),
        output_size=[out[-2], out[-1]],
        stride=stride, offset=offset, border=border, shift=shift,
        mode=ResizeMode.NEAREST if mode == "nearest" else ResizeMode.BILINEAR,
    )
    r = _transpose(ctx, r, NHWC_TO_NCHW)
    return [_reshape(ctx, r, tuple(lead) + (out[-2], out[-1]))]


@lowering("Resize")
def Resize(ctx: NodeContext) -> list[Result]:
    """Resize (opsets 10, 11, 13, 18, 19) on the last two axes via RESIZE's float mode (NCHW viewed
    as ``[N*C, 1, H, W]`` and transposed to NHWC). Supported: nearest (round_prefer_floor/ceil,
    floor, ceil) and linear with half_pixel, half_pixel_symmetric, pytorch_half_pixel,
    align_corners, asymmetric, tf_half_pixel_for_nn, and keep_aspect_ratio_policy stretch /
    not_larger / not_smaller, when RESIZE's fp32 stride/offset reproduce ONNX's sample positions
    (checked per output index at import; ``border`` is chosen so RESIZE's size rule gives ONNX's
    output size). Not supported: cubic, antialias, exclude_outside, tf_crop_and_resize (needs
    extrapolation outside the input)."""
    data = ctx.input(0)
    mode = ctx.attr("mode", "nearest")
    ctm = ctx.attr("coordinate_transformation_mode", "half_pixel" if ctx.opset >= 11 else "asymmetric")
    nearest_mode = ctx.attr("nearest_mode", "round_prefer_floor" if ctx.opset >= 11 else "floor")
    if ctx.opset < 11:
        ctm = "asymmetric"
        nearest_mode = "floor"
    for name, bad in (("antialias", 0), ("exclude_outside", 0)):
        if int(ctx.attr(name, 0)) != bad:
            raise ctx.error(f"{name} is not supported")
    policy = ctx.attr("keep_aspect_ratio_policy", "stretch")
    ctx.attr("cubic_coeff_a")
    ctx.attr("extrapolation_value")
    rank = data.rank
    if mode == "cubic":
        raise ctx.error("mode 'cubic' is not supported (TOSA RESIZE has NEAREST and BILINEAR)")
    if ctx.opset < 11:
        scl = [float(s) for s in np.asarray(ctx.const(1, "scales")).reshape(-1)]
        out = [int(math.floor(i * s)) for i, s in zip(data.shape, scl)]
        return _resize_common(ctx, mode, ctm, nearest_mode, scl, out)
    scales_in = np.asarray(ctx.const(2, "scales")).reshape(-1) if ctx.has_input(2) else np.zeros(0)
    sizes_in = np.asarray(ctx.const(3, "sizes")).reshape(-1) if ctx.has_input(3) else np.zeros(0)
    axes = ctx.attr("axes")
    ax = list(range(rank)) if axes is None else [_norm_axis(ctx, int(a), rank) for a in axes]
    scl = [1.0] * rank
    out = list(data.shape)
    if scales_in.size:
        for a, s in zip(ax, scales_in):
            scl[a] = float(s)
            out[a] = int(math.floor(data.shape[a] * float(s)))
    elif sizes_in.size:
        if policy == "stretch":
            for a, s in zip(ax, sizes_in):
                out[a] = int(s)
                scl[a] = int(s) / data.shape[a]
        elif policy in ("not_larger", "not_smaller"):
            ratios = [int(s) / data.shape[a] for a, s in zip(ax, sizes_in)]
            r = min(ratios) if policy == "not_larger" else max(ratios)
            for a in ax:
                scl[a] = r
                out[a] = int(np.round(r * data.shape[a]))
        else:
            raise ctx.error(f"keep_aspect_ratio_policy '{policy}' is not supported")
    else:
        raise ctx.error("one of scales and sizes is required")
    return _resize_common(ctx, mode, ctm, nearest_mode, scl, out)


@lowering("Upsample")
def Upsample(ctx: NodeContext) -> list[Result]:
    """Upsample (opset 7: scales attribute; 9: scales input): asymmetric coordinates, nearest uses
    floor (ONNX's reference) and linear interpolates."""
    mode = ctx.attr("mode", "nearest")
    if ctx.opset < 9:
        scales = [float(s) for s in ctx.attr("scales")]
    else:
        scales = [float(s) for s in np.asarray(ctx.const(1, "scales")).reshape(-1)]
    out = [int(math.floor(i * s)) for i, s in zip(ctx.input(0).shape, scales)]
    return _resize_common(ctx, mode, "asymmetric", "floor", scales, out)

