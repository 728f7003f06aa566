"""ONNX lowerings composed from several TOSA 0.30 ops (family ``composite``).

Ops here have no single TOSA counterpart but are exact (or, where stated, within ONNX's test
tolerance) compositions of TOSA ops: Swish, Shrink, LpNormalization, RotaryEmbedding, Einsum,
CenterCropPad, ReverseSequence, CumProd, MaxUnpool, TopK and Col2Im. The losses are in
``composite_loss``, DFT, the windows and MelWeightMatrix in ``composite_signal``, Attention in
``composite_attention``, the recurrent ops (RNN, GRU, LSTM) in ``composite_rnn``, more in ``composite_more``
(each a family of its own in ``lowerings._FAMILIES``); the helpers they share are in ``_composite_common``.

Conventions: float16/bfloat16 arithmetic that accumulates (MATMUL, long sums) is done in fp32 after
an exact CAST and cast back once; element-by-element arithmetic stays in the input's type. Run-time
int64 values (targets, indices) are i32 (see the importer). Selections driven by a run-time index
(one element of a row) use a one-hot mask: ``EQUAL(index, iota)`` then SELECT and a REDUCE over the
row, which is exact because exactly one element of each row is kept.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

import numpy as np
from xdsl.ir import SSAValue

from nnkiln.dialects.tosa.base import Kind, element_type
from nnkiln.frontends.common.broadcast import reshape
from nnkiln.frontends.common.layout import transpose
from nnkiln.frontends.common.nn import pad_value, slice_value
from nnkiln.frontends.onnx.importer import NodeContext
from nnkiln.frontends.onnx.lowerings import lowering
from nnkiln.frontends.onnx.lowerings._composite_common import (
    FLOAT_KINDS,
    Result,
    add,
    bmm,
    cast,
    concat,
    const_k,
    equal,
    float_input,
    full,
    greater,
    logical_and,
    logical_or,
    mul,
    norm_axis,
    reciprocal,
    rmax,
    rsum,
    scalar_const,
    select,
    shape_of,
    sub,
    unary,
    val,
)
from nnkiln.frontends.onnx.lowerings._shape_common import gather_flat

# ------------------------------------------------------------------------------------------------
# elementwise compositions


@lowering("Swish")
def Swish(ctx: NodeContext) -> Result:
    """Swish (opset 24): ``x · sigmoid(alpha · x)`` with SIGMOID; ``alpha`` default 1.0."""
    from nnkiln.dialects.tosa.ops_activation import SigmoidOp

    xv = float_input(ctx, 0)
    alpha = float(ctx.attr("alpha", 1.0))
    x = val(ctx, xv)
    ax = x if alpha == 1.0 else mul(ctx.g, x, full(ctx.g, alpha, xv.kind, xv.rank))
    return [mul(ctx.g, x, unary(ctx.g, SigmoidOp, ax))]


@lowering("Shrink")
def Shrink(ctx: NodeContext) -> Result:
    """Shrink (opset 9): ``x < -lambd ? x + bias : (x > lambd ? x - bias : 0)`` with GREATER/SELECT.
    Integer inputs: only when ``lambd`` and ``bias`` are integers (then the arithmetic is exact in
    int32); fractional values on integers are not supported."""
    xv = ctx.input(0)
    lambd = float(ctx.attr("lambd", 0.5))
    bias = float(ctx.attr("bias", 0.0))
    g = ctx.g
    if xv.kind in FLOAT_KINDS:
        k = xv.kind
        x = val(ctx, xv)
    elif xv.kind in (Kind.I8, Kind.I16, Kind.I32):
        if lambd != int(lambd) or bias != int(bias):
            raise ctx.error("integer input with fractional lambd/bias is not supported")
        k = Kind.I32
        x = cast(g, val(ctx, xv), Kind.I32)
    else:
        raise ctx.error(f"element type {xv.kind.value} is not supported")
    r = xv.rank
    lo = greater(g, full(g, -lambd, k, r), x)
    hi = greater(g, x, full(g, lambd, k, r))
    y = select(g, lo, add(g, x, full(g, bias, k, r)),
               select(g, hi, sub(g, x, full(g, bias, k, r)), full(g, 0, k, r)))
    return [cast(g, y, xv.kind)]


@lowering("LpNormalization")
def LpNormalization(ctx: NodeContext) -> Result:
    """LpNormalization (opsets 1, 22): ``x / ||x||_p`` along ``axis`` (default −1), p ∈ {1, 2}.

    p = 2: ``x · RSQRT(Σ x²)``; p = 1: ``x · RECIPROCAL(Σ |x|)`` (the spec's L1 norm; onnx's
    reference sums x without ABS, which differs only for negative inputs). Where the norm is 0 the
    result is 0 (as the reference), via SELECT."""
    from nnkiln.dialects.tosa.ops_elementwise_unary import AbsOp, RsqrtOp

    xv = float_input(ctx, 0)
    axis = norm_axis(ctx, int(ctx.attr("axis", -1)), xv.rank)
    p = int(ctx.attr("p", 2))
    g = ctx.g
    x = val(ctx, xv)
    if p == 2:
        s = rsum(g, mul(g, x, x), axis)
        inv = unary(g, RsqrtOp, s)
    elif p == 1:
        s = rsum(g, unary(g, AbsOp, x), axis)
        inv = reciprocal(g, s)
    else:
        raise ctx.error(f"p = {p} is not supported (ONNX allows 1 or 2)")
    zero = full(g, 0.0, xv.kind, xv.rank)
    return [select(g, equal(g, s, zero), zero, mul(g, x, inv))]


# ------------------------------------------------------------------------------------------------
# RotaryEmbedding


@lowering("RotaryEmbedding")
def RotaryEmbedding(ctx: NodeContext) -> Result:
    """RotaryEmbedding (opset 23). X is [B, H, S, D] or [B, S, H·D] (``num_heads``). The first
    ``rotary_embedding_dim`` (default D) features of each head are rotated pairwise — halves, or
    even/odd pairs if ``interleaved`` — by cos/sin rows: ``position_ids`` [B, S] picks rows of the
    [P, R/2] caches with one GATHER (a run-time index is exact); without it the caches are [B, S, R/2].
    real = cos·x1 − sin·x2, imag = sin·x1 + cos·x2 (MUL/SUB/ADD in the input type), reassembled
    with CONCAT; untouched features are CONCATenated back."""
    from nnkiln.dialects.tosa.ops_scatter_gather import GatherOp

    xv = float_input(ctx, 0)
    g = ctx.g
    interleaved = bool(ctx.attr("interleaved", 0))
    num_heads = int(ctx.attr("num_heads", 0))
    rdim = int(ctx.attr("rotary_embedding_dim", 0))
    x = val(ctx, xv)
    if xv.rank == 4:
        b, h, s, d = xv.shape
        x = transpose(g, x, (0, 2, 1, 3))
    elif xv.rank == 3:
        b, s, hidden = xv.shape
        if num_heads <= 0 or hidden % num_heads:
            raise ctx.error(f"3-D input needs num_heads dividing {hidden}, got {num_heads}")
        h, d = num_heads, hidden // num_heads
        x = reshape(g, x, (b, s, h, d))
    else:
        raise ctx.error(f"input rank {xv.rank} is not 3 or 4")
    r = rdim or d
    half = r // 2
    if r % 2 or r > d:
        raise ctx.error(f"rotary_embedding_dim {r} must be even and <= head size {d}")
    caches = []
    for i in (1, 2):
        cv = ctx.input(i)
        if cv.kind is not xv.kind:
            raise ctx.error("cos/sin caches must have the input's element type")
        if ctx.has_input(3):
            pv = ctx.input(3)
            if cv.shape[-1] != half:
                raise ctx.error(f"cache last dimension {cv.shape[-1]} != rotary_embedding_dim/2 = {half}")
            if pv.is_const and cv.is_const:
                c = const_k(g, np.asarray(cv.const)[np.asarray(pv.const, dtype=np.int64)], xv.kind)
            else:
                table = reshape(g, val(ctx, cv), (1, cv.shape[0], half))
                idx = reshape(g, cast(g, val(ctx, pv), Kind.I32), (1, b * s))
                c = g.value(GatherOp, [table, idx], element_type(xv.kind))
        else:
            if tuple(cv.shape) != (b, s, half):
                raise ctx.error(f"without position_ids the caches must be [B, S, R/2] = {[b, s, half]}, got {list(cv.shape)}")
            c = val(ctx, cv)
        caches.append(reshape(g, c, (b, s, 1, half)))
    cos, sin = caches
    xr = slice_value(g, x, (0, 0, 0, 0), (b, s, h, r))
    if interleaved:
        pairs = reshape(g, xr, (b * s * h, half, 2))
        x1 = reshape(g, slice_value(g, pairs, (0, 0, 0), (b * s * h, half, 1)), (b, s, h, half))
        x2 = reshape(g, slice_value(g, pairs, (0, 0, 1), (b * s * h, half, 1)), (b, s, h, half))
    else:
        x1 = slice_value(g, xr, (0, 0, 0, 0), (b, s, h, half))
        x2 = slice_value(g, xr, (0, 0, 0, half), (b, s, h, half))
    real = sub(g, mul(g, cos, x1), mul(g, sin, x2))
    imag = add(g, mul(g, sin, x1), mul(g, cos, x2))
    if interleaved:
        parts = [reshape(g, real, (b * s * h, half, 1)), reshape(g, imag, (b * s * h, half, 1))]
        rot = reshape(g, concat(g, parts, 2), (b, s, h, r))
    else:
        rot = concat(g, [real, imag], 3)
    if r < d:
        rot = concat(g, [rot, slice_value(g, x, (0, 0, 0, r), (b, s, h, d - r))], 3)
    if xv.rank == 4:
        return [transpose(g, rot, (0, 2, 1, 3))]
    return [reshape(g, rot, xv.shape)]


# ------------------------------------------------------------------------------------------------
# Einsum


def _einsum_terms(ctx: NodeContext, eq: str, ranks: Sequence[int]) -> tuple[list[list[str]], list[str]]:
    """Parse an equation into per-operand label lists and the output labels; ``...`` becomes labels
    "0".."9"-style placeholders aligned on the right (numpy broadcasting)."""
    eq = eq.replace(" ", "")
    lhs, arrow, rhs = eq.partition("->")
    terms = lhs.split(",")
    if len(terms) != len(ranks):
        raise ctx.error(f"equation '{eq}' has {len(terms)} operands, the node has {len(ranks)}")
    ell_rank = 0
    for t, r in zip(terms, ranks):
        if "..." in t:
            ell_rank = max(ell_rank, r - len(t.replace("...", "")))
    ell = [f"#{i}" for i in range(ell_rank)]

    def expand(t: str, r: int | None) -> list[str]:
        if not re.fullmatch(r"[A-Za-z]*(\.\.\.)?[A-Za-z]*", t):
            raise ctx.error(f"malformed einsum term '{t}'")
        if "..." in t:
            a, _, c = t.partition("...")
            n = (r - len(a) - len(c)) if r is not None else ell_rank
            return list(a) + ell[ell_rank - n:] + list(c)
        return list(t)

    labels = [expand(t, r) for t, r in zip(terms, ranks)]
    for lab, r, t in zip(labels, ranks, terms):
        if len(lab) != r:
            raise ctx.error(f"einsum term '{t}' does not match an operand of rank {r}")
    if arrow:
        out = expand(rhs, None)
    else:
        counts: dict[str, int] = {}
        for lab in labels:
            for c in lab:
                counts[c] = counts.get(c, 0) + 1
        out = ell + sorted(c for c, n in counts.items() if n == 1 and not c.startswith("#"))
    return labels, out


@lowering("Einsum")
def Einsum(ctx: NodeContext) -> Result:
    """Einsum (opsets 12): per operand, repeated labels take the diagonal (one GATHER with constant
    flat indices) and labels used nowhere else are REDUCE_SUMmed; size-1 dimensions broadcasting
    against a larger one are squeezed. Operands are then contracted pairwise: TRANSPOSE each to
    [batch, free, contracted] / [batch, contracted, free], RESHAPE to 3-D, MATMUL (fp32
    accumulation), and the result is TRANSPOSEd to the output order. Float types only (TOSA 0.30's
    MATMUL has no int32 form)."""
    g = ctx.g
    vals = [ctx.input(i) for i in range(len(ctx.node.input))]
    for i in range(len(vals)):
        float_input(ctx, i)
    labels, out = _einsum_terms(ctx, str(ctx.attr("equation")), [v.rank for v in vals])
    sizes: dict[str, int] = {}
    for lab, v in zip(labels, vals):
        for c, d in zip(lab, v.shape):
            if sizes.get(c, 1) == 1:
                sizes[c] = d
            elif d not in (1, sizes[c]):
                raise ctx.error(f"label '{c}' has sizes {sizes[c]} and {d}")
    ops: list[tuple[SSAValue, list[str]]] = []
    for lab, v in zip(labels, vals):
        x = val(ctx, v)
        # squeeze broadcast dimensions
        keep = [i for i, (c, d) in enumerate(zip(lab, v.shape)) if not (d == 1 and sizes[c] != 1)]
        if len(keep) != len(lab):
            lab = [lab[i] for i in keep]
            x = reshape(g, x, [v.shape[i] for i in keep])
        # diagonals
        uniq = list(dict.fromkeys(lab))
        if len(uniq) != len(lab):
            shp = shape_of(x)
            strides = np.cumprod((1, *shp[::-1]))[::-1][1:]
            grids = np.meshgrid(*[np.arange(sizes[c]) for c in uniq], indexing="ij")
            flat = np.zeros(grids[0].shape if grids else (), dtype=np.int64)
            for pos, c in enumerate(lab):
                flat = flat + grids[uniq.index(c)] * int(strides[pos])
            x = gather_flat(ctx, x, flat)
            lab = uniq
        ops.append((x, lab))

    def needed_elsewhere(skip: Sequence[int]) -> set[str]:
        s = set(out)
        for j, (_, lb) in enumerate(ops):
            if j not in skip:
                s.update(lb)
        return s

    def sum_out(x: SSAValue, lab: list[str], keep: set[str]) -> tuple[SSAValue, list[str]]:
        for c in [c for c in lab if c not in keep]:
            i = lab.index(c)
            x = rsum(g, x, i)
            shp = list(shape_of(x))
            del shp[i]
            x = reshape(g, x, shp)
            lab = lab[:i] + lab[i + 1:]
        return x, lab

    x, lab = ops[0]
    x, lab = sum_out(x, lab, needed_elsewhere([0]))
    for j in range(1, len(ops)):
        y, lb = ops[j]
        rest = needed_elsewhere(list(range(j + 1)))
        y, lb = sum_out(y, lb, rest | set(lab))
        x, lab = sum_out(x, lab, rest | set(lb))
        batch = [c for c in lab if c in lb and c in rest]
        contract = [c for c in lab if c in lb and c not in rest]
        left = [c for c in lab if c not in lb]
        right = [c for c in lb if c not in lab]
        a = transpose(g, x, [lab.index(c) for c in batch + left + contract]) if lab != batch + left + contract else x
        bb = transpose(g, y, [lb.index(c) for c in batch + contract + right]) if lb != batch + contract + right else y
        nb = math.prod(sizes[c] for c in batch)
        nl = math.prod(sizes[c] for c in left)
        nc = math.prod(sizes[c] for c in contract)
        nr = math.prod(sizes[c] for c in right)
        prod = bmm(g, reshape(g, a, (nb, nl, nc)), reshape(g, bb, (nb, nc, nr)))
        x = prod
        lab = batch + left + right
        x = reshape(g, x, [sizes[c] for c in lab])
    x, lab = sum_out(x, lab, set(out))
    if sorted(lab) != sorted(out):
        raise ctx.error(f"output labels {out} are not produced by the operands")
    if lab != out:
        x = transpose(g, x, [lab.index(c) for c in out])
    return [reshape(g, x, [sizes[c] for c in out])]


# ------------------------------------------------------------------------------------------------
# CenterCropPad, ReverseSequence, CumProd, MaxUnpool


@lowering("CenterCropPad")
def CenterCropPad(ctx: NodeContext) -> Result:
    """CenterCropPad (opset 18): per axis, a larger size is center-cropped (SLICE from ⌊(d − s)/2⌋)
    and a smaller one center-padded with zeros (PAD ⌊(s − d)/2⌋ before, the rest after). ``shape``
    must be constant."""
    xv = ctx.input(0)
    shape = [int(s) for s in np.asarray(ctx.const(1, "shape")).reshape(-1)]
    axes = ctx.attr("axes")
    axes = list(range(xv.rank)) if axes is None else [norm_axis(ctx, int(a), xv.rank) for a in axes]
    if len(axes) != len(shape):
        raise ctx.error(f"shape has {len(shape)} entries for {len(axes)} axes")
    start = [0] * xv.rank
    size = list(xv.shape)
    pads = [(0, 0)] * xv.rank
    for a, s in zip(axes, shape):
        dim = xv.shape[a]
        if s < dim:
            start[a] = (dim - s) // 2
            size[a] = s
        elif s > dim:
            before = (s - dim) // 2
            pads[a] = (before, s - dim - before)
    if xv.is_const:
        arr = np.asarray(xv.const)[tuple(slice(b, b + n) for b, n in zip(start, size))]
        return [np.pad(arr, pads)]
    y = slice_value(ctx.g, val(ctx, xv), start, size)
    return [pad_value(ctx.g, y, pads, 0.0)]


@lowering("ReverseSequence")
def ReverseSequence(ctx: NodeContext) -> Result:
    """ReverseSequence (opset 10): for each batch entry b, the first ``sequence_lens[b]`` steps along
    ``time_axis`` are reversed. The lengths must be constant; the permutation is then one GATHER
    with constant flat indices (exact data movement)."""
    xv = ctx.input(0)
    lens = np.asarray(ctx.const(1, "sequence_lens"), dtype=np.int64).reshape(-1)
    t_ax = int(ctx.attr("time_axis", 0))
    b_ax = int(ctx.attr("batch_axis", 1))
    if {t_ax, b_ax} != {0, 1}:
        raise ctx.error(f"time_axis {t_ax} / batch_axis {b_ax} must be 0 and 1")
    idx = np.arange(math.prod(xv.shape), dtype=np.int64).reshape(xv.shape)
    out = idx.copy()
    for b, n in enumerate(lens):
        if not 0 <= n <= xv.shape[t_ax]:
            raise ctx.error(f"sequence length {n} out of range")
        if t_ax == 0:
            out[:n, b] = idx[:n, b][::-1]
        else:
            out[b, :n] = idx[b, :n][::-1]
    if xv.is_const:
        return [np.asarray(xv.const).reshape(-1)[out]]
    return [gather_flat(ctx, val(ctx, xv), out)]


@lowering("CumProd")
def CumProd(ctx: NodeContext) -> Result:
    """CumProd (opset 26): inclusive/exclusive, forward/reverse cumulative product along a constant
    ``axis``. A log-step scan (Hillis–Steele): ``y = y · shift(y, 2^i)`` with 1s shifted in (SLICE,
    PAD, MUL), ⌈log2 n⌉ steps; ``exclusive`` shifts the input by one first, ``reverse`` wraps the
    scan in REVERSE. Integers (int32, and int64 carried as int32) are exact; floats multiply in a
    different association order than a sequential product (a few ulp, within ONNX's tolerance)."""
    from nnkiln.dialects.tosa.ops_data_layout import ReverseOp

    xv = ctx.input(0)
    if xv.kind not in (*FLOAT_KINDS, Kind.I32):
        raise ctx.error(f"element type {xv.kind.value} is not supported")
    axis = norm_axis(ctx, int(scalar_const(ctx, 1, "axis")), xv.rank)
    exclusive = bool(ctx.attr("exclusive", 0))
    rev = bool(ctx.attr("reverse", 0))
    g = ctx.g
    pre, n, post = math.prod(xv.shape[:axis]), xv.shape[axis], math.prod(xv.shape[axis + 1:])
    y = reshape(g, val(ctx, xv), (pre, n, post))
    if rev:
        y = g.value(ReverseOp, [y], y.type.element_type, axis=1)  # type: ignore[attr-defined]

    def shifted(v: SSAValue, s: int) -> SSAValue:
        return pad_value(g, slice_value(g, v, (0, 0, 0), (pre, n - s, post)), [(0, 0), (s, 0), (0, 0)], 1)

    if exclusive:
        y = shifted(y, 1) if n > 1 else const_k(g, np.ones((pre, 1, post)), xv.kind)
    s = 1
    while s < n:
        y = mul(g, y, shifted(y, s))
        s *= 2
    if rev:
        y = g.value(ReverseOp, [y], y.type.element_type, axis=1)  # type: ignore[attr-defined]
    return [reshape(g, y, xv.shape)]


@lowering("MaxUnpool")
def MaxUnpool(ctx: NodeContext) -> Result:
    """MaxUnpool (opsets 9, 11, 22): X's values are written at the flat positions ``I`` of a zero
    tensor of the inferred shape ``(in − 1)·stride − pads + kernel`` with one SCATTER (run-time
    indices; TOSA requires them distinct, which MaxPool's indices are unless windows overlap and
    share a maximum). A larger ``output_shape`` (constant) pads that tensor with zeros at the end of
    each axis, as onnx's reference does."""
    from nnkiln.dialects.tosa.ops_scatter_gather import ScatterOp

    xv = float_input(ctx, 0)
    iv = ctx.input(1)
    kernel = [int(k) for k in ctx.attr("kernel_shape")]
    sp = len(kernel)
    strides = [int(s) for s in ctx.attr("strides", [1] * sp)]
    pads = [int(p) for p in ctx.attr("pads", [0] * (2 * sp))]
    inferred = list(xv.shape[:2]) + [
        (xv.shape[2 + i] - 1) * strides[i] - pads[i] - pads[sp + i] + kernel[i] for i in range(sp)]
    out_shape = inferred
    if ctx.has_input(2):
        out_shape = [int(d) for d in np.asarray(ctx.const(2, "output_shape")).reshape(-1)]
        if len(out_shape) != len(inferred) or any(o < i for o, i in zip(out_shape, inferred)):
            raise ctx.error(f"output_shape {out_shape} smaller than the inferred {inferred} is not supported")
    g = ctx.g
    total = math.prod(inferred)
    w = math.prod(xv.shape)
    zeros = const_k(g, np.zeros((1, total, 1)), xv.kind)
    idx = reshape(g, cast(g, val(ctx, iv), Kind.I32), (1, w))
    vals = reshape(g, val(ctx, xv), (1, w, 1))
    y = g.value(ScatterOp, [zeros, idx, vals], element_type(xv.kind))
    y = reshape(g, y, inferred)
    if out_shape != inferred:
        y = pad_value(g, y, [(0, o - i) for o, i in zip(out_shape, inferred)], 0.0)
    return [y]


# ------------------------------------------------------------------------------------------------
# TopK


@lowering("TopK")
def TopK(ctx: NodeContext) -> Result:
    """TopK (opsets 1, 10, 11, 24) by ranks, exactly: element i of a row has rank
    ``#{j : x_j beats x_i or (x_j == x_i and j < i)}`` (beats = GREATER, or its mirror when
    ``largest = 0``), computed on a [pre, n, n, post] comparison (GREATER, EQUAL, a constant j < i
    mask, CAST to int32, REDUCE_SUM). Output r is the element of rank r (one-hot EQUAL with an iota,
    SELECT, REDUCE_MAX for the value and REDUCE_SUM of the position for the index), so ties keep the
    lower index first as ONNX requires and the order is always sorted. NaN inputs are not ordered."""
    xv = ctx.input(0)
    if xv.kind not in (*FLOAT_KINDS, Kind.I8, Kind.I16, Kind.I32):
        raise ctx.error(f"element type {xv.kind.value} is not supported")
    axis = norm_axis(ctx, int(ctx.attr("axis", -1)), xv.rank)
    if ctx.opset >= 10:
        k = int(scalar_const(ctx, 1, "K"))
    else:
        k = int(ctx.attr("k"))
    largest = bool(ctx.attr("largest", 1))
    ctx.attr("sorted")
    n = xv.shape[axis]
    if not 1 <= k <= n:
        raise ctx.error(f"k = {k} is not in [1, {n}] (empty results are not supported)")
    g = ctx.g
    pre, post = math.prod(xv.shape[:axis]), math.prod(xv.shape[axis + 1:])
    kind = xv.kind if xv.kind in FLOAT_KINDS else Kind.I32
    x = cast(g, val(ctx, xv), kind)
    xj = reshape(g, x, (pre, n, 1, post))
    xi = reshape(g, x, (pre, 1, n, post))
    beats = greater(g, xj, xi) if largest else greater(g, xi, xj)
    tri = const_k(g, (np.arange(n)[:, None] < np.arange(n)[None, :]).reshape(1, n, n, 1), Kind.BOOL)
    before = logical_or(g, beats, logical_and(g, equal(g, xj, xi), tri))
    rank = rsum(g, cast(g, before, Kind.I32), 1)  # [pre, 1, n, post]
    hot = equal(g, rank, const_k(g, np.arange(k).reshape(1, k, 1, 1), Kind.I32))  # [pre, k, n, post]
    lowest = -np.inf if kind.is_float else np.iinfo(np.int32).min
    values = rmax(g, select(g, hot, xi, full(g, lowest, kind, 4)), 2)
    pos = const_k(g, np.arange(n).reshape(1, 1, n, 1), Kind.I32)
    indices = rsum(g, select(g, hot, pos, full(g, 0, Kind.I32, 4)), 2)
    out_shape = list(xv.shape)
    out_shape[axis] = k
    return [cast(g, reshape(g, values, out_shape), xv.kind), reshape(g, indices, out_shape)]


# ------------------------------------------------------------------------------------------------
# Col2Im


@lowering("Col2Im")
def Col2Im(ctx: NodeContext) -> Result:
    """Col2Im (opset 18): the sum of the sliding blocks [N, C·∏block, L] into an image [N, C, *image].
    Every block element lands at ``l·stride + b·dilation − pad_begin`` (dropped when outside), so the
    result is one MATMUL of [N·C, ∏block·L] with a constant 0/1 placement matrix [∏block·L, ∏image]
    (each output is a sum of its inputs times 1; only the summation order differs from a loop).
    ``image_shape`` and ``block_shape`` must be constant."""
    xv = float_input(ctx, 0)
    image = [int(d) for d in np.asarray(ctx.const(1, "image_shape")).reshape(-1)]
    block = [int(d) for d in np.asarray(ctx.const(2, "block_shape")).reshape(-1)]
    sp = len(image)
    dil = [int(d) for d in ctx.attr("dilations", [1] * sp)]
    pads = [int(p) for p in ctx.attr("pads", [0] * (2 * sp))]
    strides = [int(s) for s in ctx.attr("strides", [1] * sp)]
    n, cb, L = xv.shape
    pb = math.prod(block)
    if cb % pb:
        raise ctx.error(f"input dimension 1 ({cb}) is not a multiple of prod(block_shape) = {pb}")
    c = cb // pb
    grid = [(image[i] + pads[i] + pads[sp + i] - (dil[i] * (block[i] - 1) + 1)) // strides[i] + 1 for i in range(sp)]
    if math.prod(grid) != L:
        raise ctx.error(f"L = {L} does not match the {grid} block positions")
    m = np.zeros((pb * L, math.prod(image)))
    for bi, boff in enumerate(np.ndindex(*block)):
        for li, loff in enumerate(np.ndindex(*grid)):
            pos = [loff[i] * strides[i] + boff[i] * dil[i] - pads[i] for i in range(sp)]
            if all(0 <= p < image[i] for i, p in enumerate(pos)):
                m[bi * L + li, np.ravel_multi_index(pos, image)] = 1.0
    g = ctx.g
    x = reshape(g, val(ctx, xv), (1, n * c, pb * L))
    y = bmm(g, x, const_k(g, m.reshape(1, pb * L, -1), xv.kind))
    return [reshape(g, y, (n, c, *image))]
