"""More data movement (document legalize_tflite: ``tfl.pack``, ``tfl.unpack``, ``tfl.gather``, ``tfl.mirror_pad``,
``tfl.space_to_depth``, ``tfl.depth_to_space``, ``tfl.tile``, ``tfl.reverse_v2``) and the import-time folds of
``tfl.shape``, ``tfl.fill`` and ``tfl.broadcast_to`` (shapes are static in TOSA 0.30).

All of them move values without arithmetic, so int8 runs on the codes (TFLite requires equal quantization of
input and output for these ops).
"""

from __future__ import annotations

import numpy as np
from xdsl.dialects.builtin import TensorType
from xdsl.ir import SSAValue

from nnkiln.dialects.tosa.base import Kind, element_type
from nnkiln.frontends.common.arith import etype, shape_of
from nnkiln.frontends.common.broadcast import reshape
from nnkiln.frontends.common.layout import transpose
from nnkiln.frontends.common.nn import slice_value
from nnkiln.frontends.tflite.importer import OpContext
from nnkiln.frontends.tflite.lowerings._registry import lowering


@lowering("PACK")
def pack(ctx: OpContext) -> list[SSAValue]:
    """``tfl.pack`` → RESHAPE of each input with a size-1 axis, CONCAT along it."""
    from nnkiln.dialects.tosa.ops_data_layout import ConcatOp

    out = ctx.tout().shape
    axis = int(ctx.opt("Axis", 0)) % len(out)
    one = list(out)
    one[axis] = 1
    parts = [reshape(ctx.g, ctx.value(i), one) for i in range(len(ctx.op.inputs))]
    return [parts[0] if len(parts) == 1 else ctx.g.value(ConcatOp, [parts], etype(parts[0]), axis=axis)]


@lowering("UNPACK")
def unpack(ctx: OpContext) -> list[SSAValue]:
    """``tfl.unpack`` → one SLICE per output along the axis, RESHAPE without it."""
    x = ctx.value(0)
    shape = shape_of(x)
    axis = int(ctx.opt("Axis", 0)) % len(shape)
    outs = []
    for i in range(shape[axis]):
        start = [0] * len(shape)
        start[axis] = i
        size = list(shape)
        size[axis] = 1
        outs.append(reshape(ctx.g, slice_value(ctx.g, x, start, size), ctx.tout(i).shape))
    return outs


@lowering("GATHER")
def gather(ctx: OpContext) -> list[SSAValue]:
    """``tfl.gather`` (batch_dims 0) → GATHER on the view [1, K, inner] with the flattened indices (constant
    indices are range-checked and made non-negative at import; run-time ones are used as they are)."""
    from nnkiln.dialects.tosa.ops_scatter_gather import GatherOp

    if int(ctx.opt("BatchDims", 0)) != 0:
        raise ctx.error("GATHER with batch_dims != 0 is not supported")
    x = ctx.value(0)
    shape = shape_of(x)
    axis = int(ctx.opt("Axis", 0)) % len(shape)
    outer, k = int(np.prod(shape[:axis])), shape[axis]
    inner = int(np.prod(shape[axis + 1:]))
    if ctx.is_const(1):
        idx = ctx.const(1, "indices").astype(np.int64).reshape(-1)
        if idx.size and (idx.min() < -k or idx.max() >= k):
            raise ctx.error(f"an index is outside [0, {k})")
        idx = np.where(idx < 0, idx + k, idx).astype(np.int32)
        iv = ctx.g.const(np.ascontiguousarray(np.broadcast_to(idx, (outer, idx.size))),
                         TensorType(element_type(Kind.I32), [outer, idx.size]))
    else:
        from nnkiln.dialects.tosa.ops_data_layout import TileOp

        iv = reshape(ctx.g, ctx.value(1), (1, int(np.prod(ctx.tin(1).shape))))
        if outer > 1:
            iv = ctx.g.value(TileOp, [iv], etype(iv), multiples=[outer, 1])
    y = ctx.g.value(GatherOp, [reshape(ctx.g, x, (outer, k, inner)), iv], etype(x))
    return [reshape(ctx.g, y, ctx.tout().shape)]


@lowering("MIRROR_PAD")
def mirror_pad(ctx: OpContext) -> list[SSAValue]:
    """``tfl.mirror_pad`` (REFLECT or SYMMETRIC) → per axis SLICEs of the mirrored rows, REVERSE, CONCAT."""
    from nnkiln.dialects.tosa.ops_data_layout import ConcatOp, ReverseOp

    symmetric = int(ctx.opt("Mode", 0)) == 1
    pads = ctx.const(1, "paddings").reshape(-1, 2)
    y = ctx.value(0)
    for axis, (before, after) in enumerate(pads):
        before, after = int(before), int(after)
        if before == 0 and after == 0:
            continue
        shape = list(shape_of(y))
        n = shape[axis]
        off = 0 if symmetric else 1
        parts = []

        def rows(start: int, count: int) -> SSAValue:
            begin = [0] * len(shape)
            begin[axis] = start
            size = list(shape)
            size[axis] = count
            part = slice_value(ctx.g, y, begin, size)
            return ctx.g.value(ReverseOp, [part], etype(part), axis=axis) if count > 1 else part

        if before:
            parts.append(rows(off, before))
        parts.append(y)
        if after:
            parts.append(rows(n - off - after, after))
        if max(before, after) + off > n:
            raise ctx.error(f"padding {before}/{after} is larger than axis {axis} allows")
        y = ctx.g.value(ConcatOp, [parts], etype(y), axis=axis)
    return [y]


@lowering("SPACE_TO_DEPTH", "DEPTH_TO_SPACE")
def space_depth(ctx: OpContext) -> list[SSAValue]:
    """``tfl.space_to_depth``/``tfl.depth_to_space`` (NHWC, TFLite's DCR order) → RESHAPE, TRANSPOSE, RESHAPE
    (tfl.space_to_depth is TODO in the document, tfl.depth_to_space an empty heading)."""
    b = int(ctx.opt("BlockSize", 2))
    x = ctx.value(0)
    n, h, w, c = shape_of(x)
    if ctx.op.name == "SPACE_TO_DEPTH":
        y = reshape(ctx.g, x, (n, h // b, b, w // b, b, c))
        y = transpose(ctx.g, y, (0, 1, 3, 2, 4, 5))
    else:
        y = reshape(ctx.g, x, (n, h, w, b, b, c // (b * b)))
        y = transpose(ctx.g, y, (0, 1, 3, 2, 4, 5))
    return [reshape(ctx.g, y, ctx.tout().shape)]


@lowering("TILE")
def tile(ctx: OpContext) -> list[SSAValue]:
    """``tfl.tile`` → TILE with the constant multiples."""
    from nnkiln.dialects.tosa.ops_data_layout import TileOp

    x = ctx.value(0)
    mult = [int(m) for m in ctx.const(1, "multiples").reshape(-1)]
    return [ctx.g.value(TileOp, [x], etype(x), multiples=mult)]


@lowering("REVERSE_V2")
def reverse_v2(ctx: OpContext) -> list[SSAValue]:
    """``tfl.reverse_v2`` → one REVERSE per axis."""
    from nnkiln.dialects.tosa.ops_data_layout import ReverseOp

    y = ctx.value(0)
    rank = len(shape_of(y))
    for a in sorted({int(a) % rank for a in ctx.const(1, "axis").reshape(-1)}):
        y = ctx.g.value(ReverseOp, [y], etype(y), axis=a)
    return [y]


@lowering("SHAPE")
def shape_op(ctx: OpContext) -> list[SSAValue]:
    """``tfl.shape`` folded at import: a constant (int32; int64 narrowed, shapes fit)."""
    shape = np.asarray(ctx.tin(0).shape, dtype=np.int32)
    return [ctx.g.const(shape, TensorType(element_type(Kind.I32), [shape.size]))]


@lowering("FILL", "BROADCAST_TO")
def fill_broadcast(ctx: OpContext) -> list[SSAValue]:
    """``tfl.fill`` (dims, value) and ``tfl.broadcast_to`` (input, shape) → TILE of the value reshaped to the
    output rank (a constant at import when the value is)."""
    from nnkiln.dialects.tosa.ops_data_layout import TileOp

    out = list(ctx.tout().shape)
    src = 1 if ctx.op.name == "FILL" else 0
    if ctx.is_const(src):
        arr = np.broadcast_to(ctx.const(src).reshape((1,) * (len(out) - ctx.const(src).ndim) + ctx.const(src).shape),
                              out)
        kind_t = ctx.value(src).type.element_type  # type: ignore[attr-defined]
        return [ctx.g.const(np.ascontiguousarray(arr), TensorType(kind_t, out))]
    x = ctx.value(src)
    s = shape_of(x)
    x = reshape(ctx.g, x, (1,) * (len(out) - len(s)) + s)
    mult = [o // d for o, d in zip(out, shape_of(x))]
    return [ctx.g.value(TileOp, [x], etype(x), multiples=mult) if any(m != 1 for m in mult) else x]


@lowering("SPACE_TO_BATCH_ND")
def space_to_batch_nd(ctx: OpContext) -> list[SSAValue]:
    """``tfl.space_to_batch_nd`` (NHWC, 2 block dims) → PAD, RESHAPE [N, H/bh, bh, W/bw, bw, C], TRANSPOSE
    [bh, bw, N, H/bh, W/bw, C], RESHAPE: the scheme of the document's ``lower_space_to_batch_nd_op``, whose
    pseudocode errors (inventory
    §2.7) are not reproduced. The pad value is the zero point for int8."""
    from nnkiln.frontends.common.nn import pad_value

    x = ctx.value(0)
    bh, bw = (int(v) for v in ctx.const(1, "block_shape").reshape(-1))
    pads = ctx.const(2, "paddings").reshape(-1, 2)
    fill = float(ctx.quant(ctx.tin(0)).zero_point[0]) if ctx.is_quantized() else 0.0
    y = pad_value(ctx.g, x, [(0, 0), (int(pads[0][0]), int(pads[0][1])), (int(pads[1][0]), int(pads[1][1])), (0, 0)],
                  fill)
    n, h, w, c = shape_of(y)
    y = reshape(ctx.g, y, (n, h // bh, bh, w // bw, bw, c))
    y = transpose(ctx.g, y, (2, 4, 0, 1, 3, 5))
    return [reshape(ctx.g, y, ctx.tout().shape)]


@lowering("BATCH_TO_SPACE_ND")
def batch_to_space_nd(ctx: OpContext) -> list[SSAValue]:
    """``tfl.batch_to_space_nd`` (NHWC, 2 block dims) → RESHAPE [bh, bw, N', H, W, C], TRANSPOSE
    [N', H, bh, W, bw, C], RESHAPE, SLICE of the crops: the scheme of the document's
    ``lower_batch_to_space_nd_op`` (its pseudocode errors, inventory §2.7, not reproduced)."""
    x = ctx.value(0)
    bh, bw = (int(v) for v in ctx.const(1, "block_shape").reshape(-1))
    crops = ctx.const(2, "crops").reshape(-1, 2)
    nb, h, w, c = shape_of(x)
    n = nb // (bh * bw)
    y = reshape(ctx.g, x, (bh, bw, n, h, w, c))
    y = transpose(ctx.g, y, (2, 3, 0, 4, 1, 5))
    y = reshape(ctx.g, y, (n, h * bh, w * bw, c))
    top, left = int(crops[0][0]), int(crops[1][0])
    out = ctx.tout().shape
    return [slice_value(ctx.g, y, [0, top, left, 0], list(out))]


@lowering("CUMSUM")
def cumsum(ctx: OpContext) -> list[SSAValue]:
    """``tfl.cumsum`` (float) along a constant axis → a MATMUL with a constant triangular matrix ([1, rows, K] ×
    [1, K, K]), ``exclusive``/``reverse`` choosing the triangle (the document has no CUMSUM lowering)."""
    from nnkiln.dialects.tosa.ops_tensor import MatMulOp

    if ctx.is_quantized() or ctx.tin(0).dtype != np.float32:
        raise ctx.error("only float32 CUMSUM is supported")
    x = ctx.value(0)
    shape = shape_of(x)
    axis = int(ctx.const(1, "axis").reshape(-1)[0]) % len(shape)
    k = shape[axis]
    i, j = np.meshgrid(np.arange(k), np.arange(k), indexing="ij")  # out[j] = sum_i x[i]·m[i, j]
    rev, excl = bool(ctx.opt("Reverse", False)), bool(ctx.opt("Exclusive", False))
    m = (i >= j) if rev else (i <= j)
    if excl:
        m &= i != j
    perm = [a for a in range(len(shape)) if a != axis] + [axis]
    moved = transpose(ctx.g, x, perm) if axis != len(shape) - 1 else x
    rows = int(np.prod(shape)) // k
    y = ctx.g.value(MatMulOp, [reshape(ctx.g, moved, (1, rows, k)), ctx.g.const(m.astype(np.float32).reshape(1, k, k))],
                    etype(x), A_zp=0, B_zp=0)
    y = reshape(ctx.g, y, [shape[a] for a in perm])
    inv = [perm.index(a) for a in range(len(shape))]
    return [transpose(ctx.g, y, inv) if axis != len(shape) - 1 else y]


@lowering("GATHER_ND")
def gather_nd(ctx: OpContext) -> list[SSAValue]:
    """``tfl.gather_nd`` (the document: "No TOSA lowering defined"; TFLite's reference kernel, batch_dims 0:
    ``output[i...] = params[indices[i...]]``, the last indices dimension indexing the leading params dimensions).

    Constant indices (range-checked at import; TFLite rejects negative ones) are applied with the shared numpy
    GatherND (``common.gather``) to an ``arange`` over the params' elements, giving flat positions for one GATHER
    on the view ``[1, size, 1]``. Run-time int32/int64 indices become flat positions in the graph (MUL by the
    row-major strides, REDUCE_SUM); a tuple with an index outside its extent gets position -1, so the GATHER's
    REQUIRE fails at run time (TFLite reports an error there too)."""
    from nnkiln.dialects.tosa.ops_comparison import GreaterEqualOp, GreaterOp
    from nnkiln.dialects.tosa.ops_elementwise_binary import LogicalOrOp, MulOp
    from nnkiln.dialects.tosa.ops_elementwise_ternary import SelectOp
    from nnkiln.dialects.tosa.ops_reduction import ReduceAnyOp, ReduceSumOp
    from nnkiln.dialects.tosa.ops_scatter_gather import GatherOp
    from nnkiln.dialects.tosa.ops_type_conversion import CastOp
    from nnkiln.frontends.common.gather import gather_nd as np_gather_nd

    x = ctx.value(0)
    shape = shape_of(x)
    ishape = tuple(ctx.tin(1).shape)
    if len(ishape) < 1 or ishape[-1] < 1 or ishape[-1] > len(shape):
        raise ctx.error(f"indices of shape {list(ishape)} do not fit params {list(shape)}")
    q = ishape[-1]
    dims = list(shape[:q])
    k, c = int(np.prod(dims)), int(np.prod(shape[q:]))
    w = int(np.prod(ishape[:-1]))
    out_shape = ctx.tout().shape
    i32, b1 = element_type(Kind.I32), element_type(Kind.BOOL)
    g = ctx.g
    if ctx.is_const(1):
        idx = ctx.const(1, "indices").astype(np.int64)
        ext = np.array(dims, np.int64)
        if idx.size and (np.any(idx < 0) or np.any(idx >= ext)):
            raise ctx.error(f"an index is outside the params dimensions {dims}")
        positions = np.arange(k, dtype=np.int64).reshape(dims)
        flat = np_gather_nd(positions, idx.reshape(ishape), 0).reshape(1, w).astype(np.int32)
        iv = g.const(np.ascontiguousarray(flat), TensorType(i32, [1, w]))
    else:
        if ctx.tin(1).dtype not in (np.int32, np.int64):
            raise ctx.error("run-time indices must be int32 or int64")
        ind = reshape(g, ctx.value(1), (1, w, q))

        def cst(a: np.ndarray) -> SSAValue:
            a = np.ascontiguousarray(a.astype(np.int32).reshape(1, 1, q))
            return g.const(a, TensorType(i32, [1, 1, q]))

        bad = g.value(LogicalOrOp, [g.value(GreaterEqualOp, [ind, cst(np.array(dims))], b1),
                                    g.value(GreaterOp, [cst(np.zeros(q)), ind], b1)], b1)
        iv = ind
        if q > 1:
            strides = np.array([int(np.prod(dims[j + 1:])) for j in range(q)])
            iv = g.value(MulOp, [iv, cst(strides)], i32, shift=0)
        iv = g.value(ReduceSumOp, [iv], i32, axis=2)
        bad = g.value(ReduceAnyOp, [bad], b1, axis=2)
        minus1 = g.const(np.full((1, 1, 1), -1, np.int32), TensorType(i32, [1, 1, 1]))
        iv = reshape(g, g.value(SelectOp, [bad, minus1, iv], i32), (1, w))
    was_bool = ctx.tin(0).dtype == np.bool_
    if was_bool:
        x = g.value(CastOp, [x], element_type(Kind.I8))
    y = g.value(GatherOp, [reshape(g, x, (1, k, c)), iv], etype(x))
    y = reshape(g, y, out_shape)
    if was_bool:
        y = g.value(CastOp, [y], b1)
    return [y]
