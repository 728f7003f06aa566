"""View and data-movement lowerings: Reshape, Squeeze, Unsqueeze, Transpose, Concat, Split, Slice, Expand,
Tile, Pad, DepthToSpace, SpaceToDepth. Conventions of the shape family: see ``_shape_common``.
"""

from __future__ import annotations

import math

import numpy as np
from xdsl.ir import SSAValue

from nnkiln.dialects.tosa.base import Kind
from nnkiln.dialects.tosa.ops_data_layout import PadOp
from nnkiln.frontends.common.arith import etype, shape_of
from nnkiln.frontends.common.broadcast import reshape
from nnkiln.frontends.common.layout import transpose
from nnkiln.frontends.onnx.importer import NodeContext
from nnkiln.frontends.onnx.lowerings import lowering
from nnkiln.frontends.onnx.lowerings._shape_common import (
    Result,
    axes_input,
    concat,
    gather_axis_const,
    norm_axis,
    require_nonempty,
    reverse,
    slice_axis,
    slice_box,
    tile,
)
from nnkiln.frontends.onnx.zero_size import empty_of_kind

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
    require_nonempty(ctx, out)
    return [reshape(ctx.g, ctx.tensor(0), out)]


@lowering("Squeeze")
def Squeeze(ctx: NodeContext) -> list[Result]:
    data = ctx.input(0)
    axes = axes_input(ctx, 13, 1)
    if axes is None:
        drop = {i for i, d in enumerate(data.shape) if d == 1}
    else:
        drop = {norm_axis(ctx, a, data.rank) for a in axes}
        bad = [a for a in drop if data.shape[a] != 1]
        if bad:
            raise ctx.error(f"cannot squeeze axes {bad} of shape {list(data.shape)}: size is not 1")
    out = [d for i, d in enumerate(data.shape) if i not in drop]
    if data.is_const:
        return [np.asarray(data.const).reshape(out)]
    return [reshape(ctx.g, ctx.tensor(0), out)]


@lowering("Unsqueeze")
def Unsqueeze(ctx: NodeContext) -> list[Result]:
    data = ctx.input(0)
    axes = axes_input(ctx, 13, 1)
    if axes is None:
        raise ctx.error("axes is required")
    rank = data.rank + len(axes)
    norm = sorted(norm_axis(ctx, a, rank) for a in axes)
    if len(set(norm)) != len(norm):
        raise ctx.error(f"axes {axes} repeat an axis")
    it = iter(data.shape)
    out = [1 if i in norm else next(it) for i in range(rank)]
    if data.is_const:
        return [np.asarray(data.const).reshape(out)]
    return [reshape(ctx.g, ctx.tensor(0), out)]


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
    return [transpose(ctx.g, ctx.tensor(0), perm)]


@lowering("Concat")
def Concat(ctx: NodeContext) -> list[Result]:
    vals = [ctx.input(i) for i in range(len(ctx.inputs)) if ctx.has_input(i)]
    rank = vals[0].rank
    axis = norm_axis(ctx, int(ctx.attr("axis", 1 if ctx.opset < 4 else 0)), rank)
    if all(v.is_const for v in vals):
        return [np.concatenate([np.asarray(v.const) for v in vals], axis=axis)]
    parts = [v for v in vals if math.prod(v.shape) > 0]
    kinds = {v.kind for v in parts}
    if len(kinds) != 1:
        raise ctx.error(f"inputs have different element kinds {[k.value for k in kinds]}")
    return [concat(ctx, [ctx.importer.materialize(v) for v in parts], axis)]


@lowering("Split")
def Split(ctx: NodeContext) -> list[Result]:
    data = ctx.input(0)
    axis = norm_axis(ctx, int(ctx.attr("axis", 0)), data.rank)
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
            if s == 0:  # no data: known at import (Concat drops it; a graph output is returned empty)
                results.append(empty_of_kind(shape, data.kind))
            else:
                results.append(slice_axis(ctx, ctx.tensor(0), axis, begin, s))
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
    axes_l = list(range(len(starts))) if axes is None else [norm_axis(ctx, int(a), data.rank) for a in axes]
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
    require_nonempty(ctx, out_shape)
    x = ctx.tensor(0)
    # one box slice for everything, then reverse / gather per axis
    start = [0] * data.rank
    size = list(data.shape)
    for a, r in per_axis.items():
        lo = min(r[0], r[-1])
        start[a] = lo
        size[a] = abs(r[-1] - r[0]) + 1
    x = slice_box(ctx, x, start, size)
    for a, r in sorted(per_axis.items()):
        if len(r) == 1 or r.step == 1:
            continue
        if r.step == -1:
            x = reverse(ctx, x, a)
        else:
            local = np.array([i - start[a] for i in r], dtype=np.int64)
            x = gather_axis_const(ctx, x, a, local)
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
    require_nonempty(ctx, out)
    x = reshape(ctx.g, ctx.tensor(0), (1,) * (len(out) - data.rank) + tuple(data.shape))
    if not out:
        return [x]
    multiples = [o // i for o, i in zip(out, shape_of(x))]
    return [tile(ctx, x, multiples)]


@lowering("Tile")
def Tile(ctx: NodeContext) -> list[Result]:
    data = ctx.input(0)
    reps = [int(r) for r in np.asarray(ctx.const(1, "repeats")).reshape(-1)]
    if len(reps) != data.rank or any(r < 0 for r in reps):
        raise ctx.error(f"repeats {reps} do not fit input {list(data.shape)}")
    if data.is_const:
        return [np.tile(np.asarray(data.const), reps)]
    require_nonempty(ctx, [d * r for d, r in zip(data.shape, reps)])
    return [tile(ctx, ctx.tensor(0), reps)]


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
            axes = [norm_axis(ctx, int(a), rank) for a in np.asarray(ctx.const(3, "axes")).reshape(-1)]
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
        require_nonempty(ctx, size)
        x = slice_box(ctx, x, start, size)
    widths = [(max(0, b), max(0, e)) for b, e in zip(before, after)]
    if all(w == (0, 0) for w in widths):
        return [x]
    if mode == "constant":
        flat = [p for w in widths for p in w]
        return [ctx.g.value(PadOp, [x], etype(x), padding=flat, pad_const=_pad_const_attr(data.kind, value))]
    for a, (b, e) in enumerate(widths):
        if b == 0 and e == 0:
            continue
        d = shape_of(x)[a]
        parts: list[SSAValue] = []
        if mode == "edge":
            if b:
                parts.append(_tile_axis(ctx, slice_axis(ctx, x, a, 0, 1), a, b))
            parts.append(x)
            if e:
                parts.append(_tile_axis(ctx, slice_axis(ctx, x, a, d - 1, 1), a, e))
        elif mode == "reflect":
            if b > d - 1 or e > d - 1:
                raise ctx.error(f"reflect padding of {max(b, e)} on a dimension of size {d} is not supported "
                                "(needs pads < dimension)")
            if b:
                parts.append(reverse(ctx, slice_axis(ctx, x, a, 1, b), a))
            parts.append(x)
            if e:
                parts.append(reverse(ctx, slice_axis(ctx, x, a, d - 1 - e, e), a))
        else:  # wrap
            if b > d or e > d:
                raise ctx.error(f"wrap padding of {max(b, e)} on a dimension of size {d} is not supported "
                                "(needs pads <= dimension)")
            if b:
                parts.append(slice_axis(ctx, x, a, d - b, b))
            parts.append(x)
            if e:
                parts.append(slice_axis(ctx, x, a, 0, e))
        x = concat(ctx, parts, a)
    return [x]


def _tile_axis(ctx: NodeContext, v: SSAValue, axis: int, m: int) -> SSAValue:
    mult = [1] * len(shape_of(v))
    mult[axis] = m
    return tile(ctx, v, mult)


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
    x = reshape(ctx.g, ctx.tensor(0), mid)
    return [reshape(ctx.g, transpose(ctx.g, x, perm), out)]


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
    x = reshape(ctx.g, ctx.tensor(0), mid)
    return [reshape(ctx.g, transpose(ctx.g, x, perm), out)]
