"""ONNX lowerings composed from several TOSA 0.30 ops (family ``composite``).

Ops here have no single TOSA counterpart but are exact (or, where stated, within ONNX's test
tolerance) compositions of TOSA ops: Swish, Shrink, LpNormalization, RotaryEmbedding, Einsum,
NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss, CenterCropPad, ReverseSequence, CumProd,
MaxUnpool, TopK, Col2Im, DFT, the Hann/Hamming/Blackman windows, MelWeightMatrix and Attention.
The recurrent ops (RNN, GRU, LSTM) are in ``composite_rnn`` (imported at the end).

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
from xdsl.dialects.builtin import TensorType
from xdsl.ir import SSAValue

from nnkiln.dialects.tosa.base import Kind, element_type, kind_of
from nnkiln.frontends.common.broadcast import equal_ranks, reshape
from nnkiln.frontends.common.graph import GraphBuilder
from nnkiln.frontends.common.layout import transpose
from nnkiln.frontends.common.nn import pad_value, slice_value
from nnkiln.frontends.onnx.importer import NodeContext, TensorValue
from nnkiln.frontends.onnx.lowerings import lowering
from nnkiln.frontends.onnx.lowerings._shape_common import gather_flat

Result = list[TensorValue | SSAValue | np.ndarray | None]

FLOAT_KINDS = (Kind.F32, Kind.F16, Kind.BF16)
BOOL = element_type(Kind.BOOL)
I32 = element_type(Kind.I32)
F32 = element_type(Kind.F32)


# ------------------------------------------------------------------------------------------------
# small IR helpers (family-private)


def shape_of(v: SSAValue) -> tuple[int, ...]:
    return tuple(int(d) for d in v.type.get_shape())  # type: ignore[attr-defined]


def kind_v(v: SSAValue) -> Kind:
    k = kind_of(v.type)  # type: ignore[arg-type]
    assert k is not None
    return k


def np_dtype(kind: Kind) -> np.dtype:
    if kind is Kind.F16:
        return np.dtype(np.float16)
    if kind is Kind.BF16:
        import ml_dtypes

        return np.dtype(ml_dtypes.bfloat16)
    if kind is Kind.BOOL:
        return np.dtype(np.bool_)
    return np.dtype({Kind.F32: np.float32, Kind.I8: np.int8, Kind.I16: np.int16, Kind.I32: np.int32}[kind])


def const_k(g: GraphBuilder, array: np.ndarray, kind: Kind) -> SSAValue:
    """A constant of ``kind`` holding ``array`` (float64 values are rounded once)."""
    arr = np.ascontiguousarray(np.asarray(array).astype(np_dtype(kind)))
    return g.const(arr, TensorType(element_type(kind), list(arr.shape)))


def full(g: GraphBuilder, value: float | int, kind: Kind, rank: int) -> SSAValue:
    """A broadcastable constant [1]*rank."""
    return const_k(g, np.full((1,) * rank, value), kind)


def val(ctx: NodeContext, v: TensorValue) -> SSAValue:
    return ctx.importer.materialize(v)


def _bin(g: GraphBuilder, op: type, a: SSAValue, b: SSAValue, out_kind: Kind | None = None, **attrs: object) -> SSAValue:
    a, b = equal_ranks(g, a, b)
    et = element_type(out_kind) if out_kind is not None else a.type.element_type  # type: ignore[attr-defined]
    return g.value(op, [a, b], et, **attrs)


def add(g: GraphBuilder, a: SSAValue, b: SSAValue) -> SSAValue:
    from nnkiln.dialects.tosa.ops_elementwise_binary import AddOp

    return _bin(g, AddOp, a, b)


def sub(g: GraphBuilder, a: SSAValue, b: SSAValue) -> SSAValue:
    from nnkiln.dialects.tosa.ops_elementwise_binary import SubOp

    return _bin(g, SubOp, a, b)


def mul(g: GraphBuilder, a: SSAValue, b: SSAValue) -> SSAValue:
    from nnkiln.dialects.tosa.ops_elementwise_binary import MulOp

    return _bin(g, MulOp, a, b, shift=0)


def maximum(g: GraphBuilder, a: SSAValue, b: SSAValue) -> SSAValue:
    from nnkiln.dialects.tosa.ops_elementwise_binary import MaximumOp

    return _bin(g, MaximumOp, a, b)


def minimum(g: GraphBuilder, a: SSAValue, b: SSAValue) -> SSAValue:
    from nnkiln.dialects.tosa.ops_elementwise_binary import MinimumOp

    return _bin(g, MinimumOp, a, b)


def greater(g: GraphBuilder, a: SSAValue, b: SSAValue) -> SSAValue:
    from nnkiln.dialects.tosa.ops_comparison import GreaterOp

    return _bin(g, GreaterOp, a, b, Kind.BOOL)


def greater_equal(g: GraphBuilder, a: SSAValue, b: SSAValue) -> SSAValue:
    from nnkiln.dialects.tosa.ops_comparison import GreaterEqualOp

    return _bin(g, GreaterEqualOp, a, b, Kind.BOOL)


def equal(g: GraphBuilder, a: SSAValue, b: SSAValue) -> SSAValue:
    from nnkiln.dialects.tosa.ops_comparison import EqualOp

    return _bin(g, EqualOp, a, b, Kind.BOOL)


def logical_and(g: GraphBuilder, a: SSAValue, b: SSAValue) -> SSAValue:
    from nnkiln.dialects.tosa.ops_elementwise_binary import LogicalAndOp

    return _bin(g, LogicalAndOp, a, b)


def logical_or(g: GraphBuilder, a: SSAValue, b: SSAValue) -> SSAValue:
    from nnkiln.dialects.tosa.ops_elementwise_binary import LogicalOrOp

    return _bin(g, LogicalOrOp, a, b)


def logical_not(g: GraphBuilder, a: SSAValue) -> SSAValue:
    from nnkiln.dialects.tosa.ops_elementwise_unary import LogicalNotOp

    return g.value(LogicalNotOp, [a], BOOL)


def select(g: GraphBuilder, c: SSAValue, a: SSAValue, b: SSAValue) -> SSAValue:
    """``c ? a : b`` with numpy broadcasting (ranks equalised with leading 1s)."""
    from nnkiln.dialects.tosa.ops_elementwise_ternary import SelectOp

    c, a, b = equal_ranks(g, c, a, b)
    return g.value(SelectOp, [c, a, b], a.type.element_type)  # type: ignore[attr-defined]


def unary(g: GraphBuilder, op: type, a: SSAValue) -> SSAValue:
    return g.value(op, [a], a.type.element_type)  # type: ignore[attr-defined]


def negate(g: GraphBuilder, a: SSAValue) -> SSAValue:
    from nnkiln.dialects.tosa.ops_elementwise_unary import NegateOp

    k = kind_v(a)
    if k.is_float:
        return unary(g, NegateOp, a)
    return g.value(NegateOp, [a], a.type.element_type, input1_zp=0, output_zp=0)  # type: ignore[attr-defined]


def reciprocal(g: GraphBuilder, a: SSAValue) -> SSAValue:
    from nnkiln.dialects.tosa.ops_elementwise_unary import ReciprocalOp

    return unary(g, ReciprocalOp, a)


def cast(g: GraphBuilder, x: SSAValue, kind: Kind) -> SSAValue:
    from nnkiln.dialects.tosa.ops_type_conversion import CastOp

    if kind_v(x) is kind:
        return x
    return g.value(CastOp, [x], element_type(kind))


def reduce_axis(g: GraphBuilder, op: type, x: SSAValue, axis: int) -> SSAValue:
    """``op`` (a REDUCE_*) over one axis of any rank, keeping the axis as 1 (a [pre, n, post] view)."""
    shape = shape_of(x)
    if shape[axis] == 1:
        return x
    view = (math.prod(shape[:axis]), shape[axis], math.prod(shape[axis + 1:]))
    y = g.value(op, [reshape(g, x, view)], x.type.element_type, axis=1)  # type: ignore[attr-defined]
    out = list(shape)
    out[axis] = 1
    return reshape(g, y, out)


def reduce_all(g: GraphBuilder, op: type, x: SSAValue) -> SSAValue:
    """``op`` over every element: a rank-0 result."""
    n = math.prod(shape_of(x))
    y = reshape(g, x, (1, n))
    if n > 1:
        y = g.value(op, [y], x.type.element_type, axis=1)  # type: ignore[attr-defined]
    return reshape(g, y, ())


def rsum(g: GraphBuilder, x: SSAValue, axis: int) -> SSAValue:
    from nnkiln.dialects.tosa.ops_reduction import ReduceSumOp

    return reduce_axis(g, ReduceSumOp, x, axis)


def rmax(g: GraphBuilder, x: SSAValue, axis: int) -> SSAValue:
    from nnkiln.dialects.tosa.ops_reduction import ReduceMaxOp

    return reduce_axis(g, ReduceMaxOp, x, axis)


def bmm(g: GraphBuilder, a: SSAValue, b: SSAValue) -> SSAValue:
    """Batched matrix product ``a [*batch, M, K] @ b [*batch, K, N]`` (equal batches) in the operands'
    type. fp32/fp16: one MATMUL (fp16 accumulates in fp16: TOSA 0.30 has no fp32 → fp16 CAST).
    bf16: MATMUL would give fp32, which cannot be cast back, so the product is MUL of
    [nb, M, K, 1] and [nb, 1, K, N] with REDUCE_SUM over K, in bf16."""
    from nnkiln.dialects.tosa.ops_tensor import MatMulOp

    sa, sb = shape_of(a), shape_of(b)
    batch = sa[:-2]
    assert batch == sb[:-2] and sa[-1] == sb[-2], (sa, sb)
    nb = math.prod(batch)
    m, k, n = sa[-2], sa[-1], sb[-1]
    if kind_v(a) is Kind.BF16:
        prod = mul(g, reshape(g, a, (nb, m, k, 1)), reshape(g, b, (nb, 1, k, n)))
        y = reshape(g, rsum(g, prod, 2), (nb, m, n))
    else:
        y = g.value(MatMulOp, [reshape(g, a, (nb, m, k)), reshape(g, b, (nb, k, n))], a.type.element_type,  # type: ignore[attr-defined]
                    A_zp=0, B_zp=0)
    return reshape(g, y, (*batch, m, n))


def float_input(ctx: NodeContext, i: int, what: str = "input") -> TensorValue:
    v = ctx.input(i)
    if v.kind not in FLOAT_KINDS:
        raise ctx.error(f"{what} of element type {v.kind.value} is not supported (only fp32/fp16/bf16 have an "
                        f"exact TOSA 0.30 composition of this operator)")
    return v


def norm_axis(ctx: NodeContext, axis: int, rank: int) -> int:
    a = axis + rank if axis < 0 else axis
    if not 0 <= a < rank:
        raise ctx.error(f"axis {axis} is out of range for rank {rank}")
    return a


def scalar_const(ctx: NodeContext, i: int, what: str) -> float | int:
    return np.asarray(ctx.const(i, what)).reshape(-1)[0].item()


def output_used(ctx: NodeContext, i: int) -> bool:
    return len(ctx.node.output) > i and bool(ctx.node.output[i])


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


def concat(g: GraphBuilder, parts: Sequence[SSAValue], axis: int) -> SSAValue:
    from nnkiln.dialects.tosa.ops_data_layout import ConcatOp

    if len(parts) == 1:
        return parts[0]
    return g.value(ConcatOp, [list(parts)], parts[0].type.element_type, axis=axis)  # type: ignore[attr-defined]


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
    kind = vals[0].kind
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
# NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss


def _nll(ctx: NodeContext, logp: SSAValue, xshape: tuple[int, ...], kind: Kind) -> SSAValue:
    """The loss of NegativeLogLikelihoodLoss for ``logp`` [N, C, D...] (inputs 1: target, 2: weight).

    ``picked[n, d] = Σ_c SELECT(target[n, d] == c, logp[n, c, d], 0)`` (exact: one term per row);
    the weight of each target is picked the same way; ignored targets get loss 0 and weight 0.
    ``mean`` divides Σ loss by Σ weight (by the count of non-ignored targets without weights) via
    RECIPROCAL and MUL (within 1 ulp of a division)."""
    g = ctx.g
    tv = ctx.input(1)
    n, c = xshape[0], xshape[1]
    dsz = math.prod(xshape[2:])
    if tuple(tv.shape) != (n, *xshape[2:]):
        raise ctx.error(f"target shape {list(tv.shape)} does not match input {list(xshape)}")
    reduction = str(ctx.attr("reduction", "mean"))
    ignore = ctx.attr("ignore_index")
    x3 = reshape(g, logp, (n, c, dsz))
    t = reshape(g, cast(g, val(ctx, tv), Kind.I32), (n, 1, dsz))
    iota = const_k(g, np.arange(c).reshape(1, c, 1), Kind.I32)
    hot = equal(g, t, iota)
    zero = full(g, 0.0, kind, 3)
    picked = rsum(g, select(g, hot, x3, zero), 1)
    loss = negate(g, picked)
    keep = None
    if ignore is not None:
        keep = logical_not(g, equal(g, t, const_k(g, np.full((1, 1, 1), int(ignore)), Kind.I32)))
    weight = None
    if ctx.has_input(2):
        wv = ctx.input(2)
        w = reshape(g, val(ctx, wv), (1, c, 1))
        weight = rsum(g, select(g, hot, w, zero), 1)
        if keep is not None:
            weight = select(g, keep, weight, zero)
        loss = mul(g, weight, loss)
    elif keep is not None:
        weight = select(g, keep, full(g, 1.0, kind, 3), zero)
        loss = select(g, keep, loss, zero)
    if reduction == "none":
        return reshape(g, loss, tv.shape)
    total = reduce_all(g, _sum_op(), loss)
    if reduction == "sum":
        return total
    if reduction != "mean":
        raise ctx.error(f"reduction '{reduction}' is not supported")
    if weight is None:
        return reshape(g, mul(g, total, const_k(g, np.asarray(1.0 / (n * dsz)), kind)), ())
    return reshape(g, mul(g, total, reciprocal(g, reduce_all(g, _sum_op(), weight))), ())


def _sum_op() -> type:
    from nnkiln.dialects.tosa.ops_reduction import ReduceSumOp

    return ReduceSumOp


@lowering("NegativeLogLikelihoodLoss")
def NegativeLogLikelihoodLoss(ctx: NodeContext) -> Result:
    """NegativeLogLikelihoodLoss (opsets 12, 13, 22): see ``_nll``. Float inputs; targets int32/int64.
    Decision: without weights, ``ignore_index = -1`` excludes those targets from the mean as the
    spec says (onnx's reference averages over all targets in that one case)."""
    xv = float_input(ctx, 0)
    if xv.rank < 2:
        raise ctx.error("input must have rank >= 2")
    return [_nll(ctx, val(ctx, xv), xv.shape, xv.kind)]


@lowering("SoftmaxCrossEntropyLoss")
def SoftmaxCrossEntropyLoss(ctx: NodeContext) -> Result:
    """SoftmaxCrossEntropyLoss (opsets 12, 13): log-softmax over axis 1 — ``(x − max) − log Σ
    exp(x − max)`` (REDUCE_MAX, SUB, EXP, REDUCE_SUM, LOG) — then NegativeLogLikelihoodLoss. The
    optional second output is the log-probabilities."""
    from nnkiln.dialects.tosa.ops_elementwise_unary import ExpOp, LogOp

    xv = float_input(ctx, 0)
    if xv.rank < 2:
        raise ctx.error("input must have rank >= 2")
    g = ctx.g
    n, c = xv.shape[:2]
    x = reshape(g, val(ctx, xv), (n, c, math.prod(xv.shape[2:])))
    d = sub(g, x, rmax(g, x, 1))
    logp = sub(g, d, unary(g, LogOp, rsum(g, unary(g, ExpOp, d), 1)))
    loss = _nll(ctx, logp, xv.shape, xv.kind)
    outs: Result = [loss]
    if output_used(ctx, 1):
        outs.append(reshape(g, logp, xv.shape))
    return outs


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


# ------------------------------------------------------------------------------------------------
# DFT, windows, MelWeightMatrix


def _dft_matrix(n_in: int, length: int, comp_in: int, inverse: bool, onesided: bool) -> tuple[np.ndarray, int, int]:
    """The real matrix W [n_in·comp_in, n_out·comp_out] with ``out = in @ W`` for interleaved
    (re, im) pairs, computed in float64; angles use ``(f·k) mod L`` so they are exact."""
    k = np.arange(n_in)[:, None]
    if inverse and onesided:
        # irfft: Hermitian extension of frequencies 0 .. L//2 (imaginary parts of DC and Nyquist unused)
        t = np.arange(length)[None, :]
        nf = length // 2 + 1
        ang = 2 * np.pi * ((k * t) % length) / length
        coef = np.where((k == 0) | ((length % 2 == 0) & (k == length // 2)), 1.0, 2.0) * (k < nf)
        wr = coef * np.cos(ang) / length
        wi = -coef * np.sin(ang) / length
        wi = np.where((k == 0) | ((length % 2 == 0) & (k == length // 2)), 0.0, wi)
        rows = [wr] if comp_in == 1 else [wr, wi]
        w = np.stack(rows, axis=1).reshape(n_in * comp_in, length)  # one output component
        return w, length, 1
    n_out = length // 2 + 1 if (onesided and not inverse) else length
    f = np.arange(n_out)[None, :]
    ang = 2 * np.pi * ((k * f) % length) / length
    valid = (k < length).astype(np.float64)
    cos, sin = np.cos(ang) * valid, np.sin(ang) * valid
    if inverse:
        # (xr + i xi)(cos + i sin) / L
        rr, ri, ir, ii = cos / length, sin / length, -sin / length, cos / length
    else:
        # (xr + i xi)(cos − i sin)
        rr, ri, ir, ii = cos, -sin, sin, cos
    if comp_in == 1:
        w = np.stack([rr, ri], axis=2).reshape(n_in, n_out * 2)
    else:
        w = np.stack([np.stack([rr, ri], axis=2), np.stack([ir, ii], axis=2)], axis=1).reshape(n_in * 2, n_out * 2)
    return w, n_out, 2


@lowering("DFT")
def DFT(ctx: NodeContext) -> Result:
    """DFT (opsets 17, 20) as one MATMUL with a constant DFT matrix computed in float64 and rounded
    once to the input type. Inexact: fp32 accumulation gives errors of a few ulp of Σ|x| (so outputs
    whose true value is 0 are off by ~1e-6 for inputs ~100 — more than ONNX's atol 1e-7, whose own
    expected data for ``test_dft_inverse`` carries a float32 FFT's rounding of 1.9e-7 there). The signal axis is
    TRANSPOSEd next to the (re[, im]) axis; ``dft_length`` truncates (zero rows) or zero-pads (no
    rows needed); ``onesided`` keeps L//2+1 frequencies, and with ``inverse`` it is irfft (real
    output). ``axis`` is an attribute (default 1) before opset 20, a constant input (default −2)
    after; ``dft_length`` must be constant."""
    xv = float_input(ctx, 0)
    rank = xv.rank
    inverse = bool(ctx.attr("inverse", 0))
    onesided = bool(ctx.attr("onesided", 0))
    if ctx.opset >= 20:
        axis = int(scalar_const(ctx, 2, "axis")) if ctx.has_input(2) else -2
    else:
        axis = int(ctx.attr("axis", 1))
    axis = axis % rank
    comp = xv.shape[-1]
    if comp not in (1, 2) or axis == rank - 1:
        raise ctx.error(f"input shape {list(xv.shape)} / axis {axis}: the last dimension must be 1 or 2 and not the axis")
    n = xv.shape[axis]
    if ctx.has_input(1):
        length = int(scalar_const(ctx, 1, "dft_length"))
    else:
        length = 2 * (n - 1) if (inverse and onesided) else n
    w, n_out, comp_out = _dft_matrix(n, length, comp, inverse, onesided)
    g = ctx.g
    perm = [d for d in range(rank - 1) if d != axis] + [axis, rank - 1]
    x = transpose(g, val(ctx, xv), perm) if perm != list(range(rank)) else val(ctx, xv)
    rest = [xv.shape[d] for d in perm[:-2]]
    p = math.prod(rest)
    x = reshape(g, x, (1, p, n * comp))
    y = bmm(g, x, const_k(g, w.reshape(1, *w.shape), xv.kind))
    y = reshape(g, y, (*rest, n_out, comp_out))
    inv = np.argsort(perm)
    return [transpose(g, y, list(inv)) if list(inv) != list(range(rank)) else y]


def _window(ctx: NodeContext, fn: str) -> np.ndarray:
    size = int(scalar_const(ctx, 0, "size"))
    periodic = int(ctx.attr("periodic", 1))
    dtype = int(ctx.attr("output_datatype", 1))
    from onnx.helper import tensor_dtype_to_np_dtype

    n = np.arange(size, dtype=np.float64)
    denom = size if periodic else size - 1
    if fn == "hann":
        w = np.sin(np.pi * n / denom) ** 2
    elif fn == "hamming":
        a = 25.0 / 46.0
        w = a - (1 - a) * np.cos(2 * np.pi * n / denom)
    else:
        w = 0.42 - 0.5 * np.cos(2 * np.pi * n / denom) + 0.08 * np.cos(4 * np.pi * n / denom)
    return w.astype(tensor_dtype_to_np_dtype(dtype))


@lowering("HannWindow")
def HannWindow(ctx: NodeContext) -> Result:
    """HannWindow (opset 17): ``sin²(πn/N)`` (N = size if periodic else size − 1), an import-time
    constant computed in float64 and rounded to ``output_datatype`` (``size`` must be constant)."""
    return [_window(ctx, "hann")]


@lowering("HammingWindow")
def HammingWindow(ctx: NodeContext) -> Result:
    """HammingWindow (opset 17): ``α − (1 − α)·cos(2πn/N)``, α = 25/46; import-time constant."""
    return [_window(ctx, "hamming")]


@lowering("BlackmanWindow")
def BlackmanWindow(ctx: NodeContext) -> Result:
    """BlackmanWindow (opset 17): ``0.42 − 0.5·cos(2πn/N) + 0.08·cos(4πn/N)``; import-time constant."""
    return [_window(ctx, "blackman")]


@lowering("MelWeightMatrix")
def MelWeightMatrix(ctx: NodeContext) -> Result:
    """MelWeightMatrix (opset 17): an import-time constant [dft_length/2 + 1, num_mel_bins] of
    triangular filters between mel-spaced bin edges (mel = 2595·log10(1 + f/700), num_mel_bins + 2
    edges mapped to bins ⌊(dft_length + 1)·f / sample_rate⌋), as onnx's reference computes them."""
    from onnx.helper import tensor_dtype_to_np_dtype

    bins = int(scalar_const(ctx, 0, "num_mel_bins"))
    dft_length = int(scalar_const(ctx, 1, "dft_length"))
    rate = scalar_const(ctx, 2, "sample_rate")
    lo = float(scalar_const(ctx, 3, "lower_edge_hertz"))
    hi = float(scalar_const(ctx, 4, "upper_edge_hertz"))
    dtype = tensor_dtype_to_np_dtype(int(ctx.attr("output_datatype", 1)))
    lo_mel = 2595 * np.log1p(lo / 700) / np.log(10)
    hi_mel = 2595 * np.log1p(hi / 700) / np.log(10)
    edges = np.arange(bins + 2) * ((hi_mel - lo_mel) / (bins + 2)) + lo_mel
    hz = 700 * np.expm1(edges / 2595 * np.log(10))
    idx = (((dft_length + 1) * hz) // rate).astype(np.int64)
    out = np.zeros((dft_length // 2 + 1, bins))
    for i in range(bins):
        left, center, right = int(idx[i]), int(idx[i + 1]), int(idx[i + 2])
        if center == left:
            out[center, i] = 1.0
        else:
            for j in range(left, center + 1):
                out[j, i] = (j - left) / (center - left)
        if right > center:
            for j in range(center, right):
                out[j, i] = (right - j) / (right - center)
    return [out.astype(dtype)]


# ------------------------------------------------------------------------------------------------
# Attention


def _heads_first(g: GraphBuilder, x: SSAValue, heads: int) -> SSAValue:
    """[B, S, H·D] → [B, H, S, D]."""
    b, s, hidden = shape_of(x)
    return transpose(g, reshape(g, x, (b, s, heads, hidden // heads)), (0, 2, 1, 3))


def _repeat_heads(g: GraphBuilder, x: SSAValue, rep: int) -> SSAValue:
    """Interleaved head repeat [B, Hk, S, D] → [B, Hk·rep, S, D] (h0, h0, h1, h1, ...) with TILE."""
    from nnkiln.dialects.tosa.ops_data_layout import TileOp

    if rep == 1:
        return x
    b, h, s, d = shape_of(x)
    t = g.value(TileOp, [reshape(g, x, (b, h, 1, s * d))], x.type.element_type,  # type: ignore[attr-defined]
                multiples=[1, 1, rep, 1])
    return reshape(g, t, (b, h * rep, s, d))


@lowering("Attention")
def Attention(ctx: NodeContext) -> Result:
    """Attention (opsets 23, 24, 25): ``softmax(softcap(Q·s · (K·s)ᵀ) + bias) · V`` with s = √scale
    (default scale 1/√head_size), per head; 3-D inputs [B, S, H·D] are split into heads
    (``q_num_heads``/``kv_num_heads``), grouped-query KV heads are repeated (TILE), ``past_key`` /
    ``past_value`` are CONCATenated before the new keys (outputs present_key/value).

    The bias: ``attn_mask`` (bool → 0/−inf, float added; padded with −inf/False to the key length),
    then the causal rule ``j <= i + offset`` (offset = past length, or ``nonpad_kv_seqlen[b] − Sq``
    with an external cache), the opset-25 sliding window, and the key-padding rule
    ``j < nonpad_kv_seqlen[b]``, combined as one Boolean ``allowed`` (EQUAL/GREATER_EQUAL against
    constant index differences; run-time lengths broadcast per batch) and applied with SELECT(allowed,
    mask, −inf) — the same values as the reference's additions of 0/−inf except when the float mask
    holds +inf or NaN at a disallowed position. Softmax as REDUCE_MAX, SUB, EXP, REDUCE_SUM,
    RECIPROCAL, MUL with the reference's guards (a row max of −inf uses 0, a zero sum uses 1), and
    rows whose bias is all −inf are zeroed. Computation is in fp32 (fp16/bf16 inputs are cast
    exactly; the probabilities are rounded to the input type before the second MATMUL as the
    reference does); ``softmax_precision`` is therefore met or exceeded (except DOUBLE). Output 3
    follows ``qk_matmul_output_mode`` per the spec: 0 raw QK, 1 after softcap, 2 with the bias,
    3 the probabilities."""
    from nnkiln.dialects.tosa.ops_activation import TanhOp
    from nnkiln.dialects.tosa.ops_elementwise_unary import ExpOp

    g = ctx.g
    qv, kv, vv = float_input(ctx, 0, "Q"), float_input(ctx, 1, "K"), float_input(ctx, 2, "V")
    kind = qv.kind
    rank = qv.rank
    if rank not in (3, 4) or kv.rank != rank or vv.rank != rank:
        raise ctx.error(f"Q, K, V ranks {qv.rank}, {kv.rank}, {vv.rank} must all be 3 or 4")
    is_causal = bool(ctx.attr("is_causal", 0))
    softcap = float(ctx.attr("softcap", 0.0))
    mode = int(ctx.attr("qk_matmul_output_mode", 0))
    scale_attr = ctx.attr("scale")
    ctx.attr("softmax_precision")
    left_w = int(ctx.attr("left_window_size", -1))
    right_w = int(ctx.attr("right_window_size", -1))
    q, k, v = val(ctx, qv), val(ctx, kv), val(ctx, vv)
    if rank == 3:
        hq, hk = ctx.attr("q_num_heads"), ctx.attr("kv_num_heads")
        if hq is None or hk is None:
            raise ctx.error("3-D inputs need q_num_heads and kv_num_heads")
        q, k, v = _heads_first(g, q, int(hq)), _heads_first(g, k, int(hk)), _heads_first(g, v, int(hk))
    has_past = ctx.has_input(4)
    if has_past != ctx.has_input(5):
        raise ctx.error("past_key and past_value must be given together")
    past_len = 0
    if has_past:
        past_len = ctx.input(4).shape[2]
        k = concat(g, [val(ctx, ctx.input(4)), k], 2)
        v = concat(g, [val(ctx, ctx.input(5)), v], 2)
    present_k, present_v = k, v
    b, hq_, sq, d = shape_of(q)
    hk_, skv = shape_of(k)[1], shape_of(k)[2]
    if hq_ % hk_:
        raise ctx.error(f"{hq_} query heads are not a multiple of {hk_} key/value heads")
    scale = float(scale_attr) if scale_attr is not None else 1.0 / math.sqrt(d)
    s = np.asarray(math.sqrt(scale)).astype(np_dtype(kind)).astype(np.float64)
    qf = mul(g, q, full(g, float(s), kind, 4))
    kf = mul(g, _repeat_heads(g, k, hq_ // hk_), full(g, float(s), kind, 4))
    vf = _repeat_heads(g, v, hq_ // hk_)
    qk = bmm(g, qf, transpose(g, kf, (0, 1, 3, 2)))  # [B, Hq, Sq, Skv]
    qk_raw = qk
    if softcap > 0:
        qk = mul(g, unary(g, TanhOp, mul(g, qk, full(g, 1.0 / softcap, kind, 4))), full(g, softcap, kind, 4))
    qk_capped = qk

    # --- the bias
    neg_inf = full(g, -np.inf, kind, 4)
    zero = full(g, 0.0, kind, 4)
    mask_term: SSAValue | None = None
    if ctx.has_input(3):
        mv = ctx.input(3)
        m = val(ctx, mv)
        pad = skv - mv.shape[-1]
        if pad < 0:
            raise ctx.error(f"attn_mask has {mv.shape[-1]} keys, more than {skv}")
        if mv.kind is Kind.BOOL:
            m = pad_value(g, m, [(0, 0)] * (mv.rank - 1) + [(0, pad)], False) if pad else m
            m = select(g, m, zero, neg_inf)
        elif mv.kind in FLOAT_KINDS:
            if mv.kind is not kind:
                raise ctx.error(f"a {mv.kind.value} attn_mask with {kind.value} inputs is not supported (TOSA 0.30 has no float-to-float CAST)")
            m = pad_value(g, m, [(0, 0)] * (mv.rank - 1) + [(0, pad)], -np.inf) if pad else m
        else:
            raise ctx.error(f"attn_mask of type {mv.kind.value} is not supported")
        mask_term = reshape(g, m, (1,) * (4 - len(shape_of(m))) + tuple(shape_of(m)))
    nonpad: SSAValue | None = None
    if ctx.has_input(6):
        if has_past:
            raise ctx.error("nonpad_kv_seqlen cannot be combined with past_key/past_value")
        npv = ctx.input(6)
        nonpad = reshape(g, cast(g, val(ctx, npv), Kind.I32), (b, 1, 1, 1))
    i_idx = np.arange(sq).reshape(sq, 1)
    j_idx = np.arange(skv).reshape(1, skv)
    static_allowed = np.ones((sq, skv), dtype=bool)
    dynamic: list[SSAValue] = []

    def iconst(a: np.ndarray) -> SSAValue:
        return const_k(g, a.reshape(1, 1, sq, skv), Kind.I32)

    if is_causal:
        if nonpad is not None:
            dynamic.append(greater_equal(g, nonpad, iconst(j_idx - i_idx + sq)))
        else:
            static_allowed &= j_idx <= i_idx + past_len
    if left_w >= 0 or right_w >= 0:
        if nonpad is not None:
            if left_w >= 0:
                dynamic.append(greater_equal(g, iconst(left_w - i_idx + j_idx + sq), nonpad))
            if right_w >= 0:
                dynamic.append(greater_equal(g, nonpad, iconst(j_idx - i_idx - right_w + sq)))
        else:
            diff = i_idx + past_len - j_idx
            if left_w >= 0:
                static_allowed &= diff <= left_w
            if right_w >= 0:
                static_allowed &= -diff <= right_w
    if nonpad is not None:
        dynamic.append(greater(g, nonpad, const_k(g, j_idx.reshape(1, 1, 1, skv), Kind.I32)))
    allowed: SSAValue | None = None
    if not static_allowed.all():
        allowed = const_k(g, static_allowed.reshape(1, 1, sq, skv), Kind.BOOL)
    for dyn in dynamic:
        allowed = dyn if allowed is None else logical_and(g, allowed, dyn)
    bias: SSAValue | None = mask_term
    if allowed is not None:
        bias = select(g, allowed, mask_term if mask_term is not None else zero, neg_inf)
    x = qk if bias is None else add(g, qk, bias)

    # --- softmax with the reference's guards
    mx = rmax(g, x, 3)
    mx = select(g, equal(g, mx, neg_inf), zero, mx)
    e = unary(g, ExpOp, sub(g, x, mx))
    sm = rsum(g, e, 3)
    sm = select(g, equal(g, sm, zero), full(g, 1.0, kind, 4), sm)
    p = mul(g, e, reciprocal(g, sm))
    if bias is not None:
        bmax = rmax(g, bias, 3)
        p = select(g, equal(g, bmax, neg_inf), zero, p)
    y = bmm(g, p, vf)  # [B, Hq, Sq, Dv]
    if rank == 3:
        y = reshape(g, transpose(g, y, (0, 2, 1, 3)), (b, sq, hq_ * shape_of(y)[3]))
    outs: Result = [y, present_k, present_v]
    if output_used(ctx, 3):
        chosen = {0: qk_raw, 1: qk_capped, 2: x, 3: p}.get(mode)
        if chosen is None:
            raise ctx.error(f"qk_matmul_output_mode {mode} is not supported")
        outs.append(chosen)
    return outs


# The recurrent lowerings (RNN, GRU, LSTM) register themselves on import.
from nnkiln.frontends.onnx.lowerings import composite_rnn as _composite_rnn  # noqa: E402,F401
