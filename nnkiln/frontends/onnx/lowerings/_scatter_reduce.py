"""Scatter with a reduction (``add``, ``mul``, ``max``, ``min``) at run-time indices, as a one-hot mask
(private module of ``shape_gather``).

The data is viewed as ``[A, T, B]``, the updates as ``[A, W, B]`` and their targets (indices normalised into
``[0, T)``, or -1 for an index outside its extent) as ``[A, W, B]``: update ``(a, w, b)`` goes to
``(a, targets[a, w, b], b)``. ScatterElements along an axis is ``A`` = the dimensions before it, ``T`` its extent,
``W`` the indices' extent on it, ``B`` the dimensions after it; ScatterND is ``A = 1``, ``T`` the indexed positions,
``W`` the index tuples, ``B`` the slice each tuple addresses (one target for the whole slice); anything else is ``A = B = 1`` with flat positions.

The ``[A, T, W, B]`` mask ``EQUAL(targets, iota over T)`` says which update hits which position. SELECT puts
each update where the mask holds and the reduction's identity elsewhere; REDUCE_SUM / REDUCE_PRODUCT /
REDUCE_MAX / REDUCE_MIN over W folds the updates of each position (an integer product is a tree of MULs:
REDUCE_PRODUCT takes floats only); ADD / MUL / MAXIMUM / MINIMUM combines the fold with the data, and a SELECT
on REDUCE_ANY of the mask keeps the data exactly where no update hits.

ONNX applies the updates one at a time in index order (``onnx.reference``'s loop). Integer sums and products
and every max / min are order-free, so those results are exact; a float sum or product of several updates at
one position may round in another order (REDUCE_SUM's own), as any reassociation does.

An index outside its extent is an error at run time: the targets first go through a GATHER from the iota
``0..T-1`` (the identity on valid targets), whose REQUIRE rejects -1, as SCATTER's does on the reduction-free
path. The mask has ``A·T·W·B`` elements: above ``MASK_BUDGET`` the lowering refuses at import.
"""

from __future__ import annotations

import math

import numpy as np
from xdsl.ir import SSAValue

from nnkiln.dialects.tosa.base import Kind, element_type
from nnkiln.dialects.tosa.ops_comparison import EqualOp
from nnkiln.dialects.tosa.ops_data_layout import ConcatOp, SliceOp
from nnkiln.dialects.tosa.ops_elementwise_binary import AddOp, MaximumOp, MinimumOp, MulOp
from nnkiln.dialects.tosa.ops_elementwise_ternary import SelectOp
from nnkiln.dialects.tosa.ops_reduction import ReduceAnyOp, ReduceMaxOp, ReduceMinOp, ReduceProductOp, ReduceSumOp
from nnkiln.dialects.tosa.ops_scatter_gather import GatherOp
from nnkiln.frontends.common.arith import etype, kind_of_value, scalar_like, shape_of
from nnkiln.frontends.common.broadcast import reshape
from nnkiln.frontends.onnx.importer import NodeContext
from nnkiln.frontends.onnx.lowerings._shape_common import const

MASK_BUDGET = 1 << 24
"""Most elements of the ``[A, T, W, B]`` one-hot mask (and of the selected updates, of the data's type)."""

REDUCTION_KINDS = (Kind.F32, Kind.F16, Kind.I32)
"""Element kinds a scatter reduction takes (int64 is carried as int32)."""

_COMBINE = {"add": AddOp, "mul": MulOp, "max": MaximumOp, "min": MinimumOp}
_REDUCE = {"add": ReduceSumOp, "mul": ReduceProductOp, "max": ReduceMaxOp, "min": ReduceMinOp}


def _identity(reduction: str, kind: Kind) -> float | int:
    """The value that leaves the reduction unchanged: 0, 1, the lowest / highest value of ``kind``."""
    if reduction in ("add", "mul"):
        return 0 if reduction == "add" else 1
    if kind is Kind.I32:
        info = np.iinfo(np.int32)
        return int(info.min if reduction == "max" else info.max)
    return -math.inf if reduction == "max" else math.inf


def _checked_targets(ctx: NodeContext, targets: SSAValue, t: int) -> SSAValue:
    """``targets`` through a GATHER from ``0..t-1``: the same values, and a run-time REQUIRE failure on -1."""
    n = math.prod(shape_of(targets))
    iota = const(ctx, np.arange(t, dtype=np.int32).reshape(1, t, 1))
    flat = reshape(ctx.g, targets, (1, n))
    return ctx.g.value(GatherOp, [iota, flat], element_type(Kind.I32))


def _multiply_along_w(ctx: NodeContext, x: SSAValue) -> SSAValue:
    """The product over axis 2 of an int32 ``[A, T, W, B]`` value as a tree of MULs (halves times halves)."""
    et = etype(x)
    while (w := shape_of(x)[2]) > 1:
        a, t, _, b = shape_of(x)
        h = w // 2
        lo = ctx.g.value(SliceOp, [x], et, start=[0, 0, 0, 0], size=[a, t, h, b])
        hi = ctx.g.value(SliceOp, [x], et, start=[0, 0, h, 0], size=[a, t, h, b])
        prod = ctx.g.value(MulOp, [lo, hi], et, shift=0)
        if w % 2:  # the odd last one joins the next round
            last = ctx.g.value(SliceOp, [x], et, start=[0, 0, 2 * h, 0], size=[a, t, 1, b])
            prod = ctx.g.value(ConcatOp, [[prod, last]], et, axis=2)
        x = prod
    return x


def _fold(ctx: NodeContext, vals: SSAValue, reduction: str) -> SSAValue:
    """``vals`` ``[A, T, W, B]`` folded over W with the reduction → ``[A, T, 1, B]``."""
    if reduction == "mul" and kind_of_value(vals) is Kind.I32:
        return _multiply_along_w(ctx, vals)
    return ctx.g.value(_REDUCE[reduction], [vals], etype(vals), axis=2)


def scatter_reduce(ctx: NodeContext, data: SSAValue, targets: SSAValue, updates: SSAValue,
                   dims: tuple[int, int, int, int], reduction: str) -> SSAValue:
    """``data`` with ``updates`` folded in at ``targets`` (module docstring); ``dims`` is ``(A, T, W, B)``;
    ``targets`` holds ``A·W·B`` elements, or ``A·W`` (one target for all B, e.g. ScatterND's slices: the mask is
    then ``[A, T, W, 1]``). Returns a value of ``data``'s shape."""
    a, t, w, b = dims
    kind = kind_of_value(data)
    if kind not in REDUCTION_KINDS:
        raise ctx.error(f"reduction '{reduction}' of {kind.value} tensors is not supported "
                        "(float32, float16, int32/int64 only)")
    if a * t * w * b > MASK_BUDGET:
        raise ctx.error(f"reduction '{reduction}' with run-time indices needs a one-hot mask of {a}x{t}x{w}x{b} = "
                        f"{a * t * w * b} elements (positions x updates), above the limit of {MASK_BUDGET}")
    b1, et = element_type(Kind.BOOL), etype(data)
    per_b = math.prod(shape_of(targets)) == a * w * b
    idx = reshape(ctx.g, _checked_targets(ctx, targets, t), (a, 1, w, b if per_b else 1))
    iota = const(ctx, np.arange(t, dtype=np.int32).reshape(1, t, 1, 1))
    mask = ctx.g.value(EqualOp, [idx, iota], b1)
    upd = reshape(ctx.g, updates, (a, 1, w, b))
    ident = scalar_like(ctx.g, _identity(reduction, kind), upd)
    folded = _fold(ctx, ctx.g.value(SelectOp, [mask, upd, ident], et), reduction)
    hit = ctx.g.value(ReduceAnyOp, [mask], b1, axis=2)
    x = reshape(ctx.g, data, (a, t, 1, b))
    extra = {"shift": 0} if reduction == "mul" and kind is Kind.I32 else {}
    combined = ctx.g.value(_COMBINE[reduction], [x, folded], et, **extra)
    out = ctx.g.value(SelectOp, [hit, combined, x], et)
    return reshape(ctx.g, out, shape_of(data))
