"""Helpers shared by the ``nn`` family of ONNX lowerings (``nn``: Flatten, Dropout; ``nn_conv``: Conv, ConvTranspose,
the pools, Gemm, MatMul; ``nn_norm``: the normalisations, Softmax, LogSoftmax, Hardmax, LRN).

Float dtypes and checks, constants shaped like a value, elementwise builders, reductions and means that keep
their axes (``reduce_keepdims``, ``mean_keepdims``), ``sqrt`` and node-output checks. The family's conventions
are in ``nn``'s docstring.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from xdsl.ir import Attribute, SSAValue

from nnkiln.dialects.tosa.base import Kind, TosaOp
from nnkiln.frontends.common.broadcast import equal_ranks, reshape
from nnkiln.frontends.common.graph import GraphBuilder
from nnkiln.frontends.onnx.importer import NodeContext, TensorValue

FLOAT_KINDS = (Kind.F32, Kind.F16, Kind.BF16)


# ------------------------------------------------------------------------------------------------
# helpers


def np_dtype(kind: Kind) -> np.dtype:
    """The numpy dtype of constants for a float kind."""
    if kind is Kind.F16:
        return np.dtype(np.float16)
    if kind is Kind.BF16:
        import ml_dtypes

        return np.dtype(ml_dtypes.bfloat16)
    return np.dtype(np.float32)


def require_float(ctx: NodeContext, v: TensorValue, what: str = "input") -> None:
    """Float element types only; anything else is reported as not supported."""
    if v.kind not in FLOAT_KINDS:
        raise ctx.error(f"{what} of element type {v.kind.value} is not supported (TOSA 0.30 has no exact "
                        f"equivalent of this operator for that type; only fp32/fp16/bf16)")


def shape_of(v: SSAValue) -> tuple[int, ...]:
    return tuple(int(d) for d in v.type.get_shape())  # type: ignore[attr-defined]


def etype(v: SSAValue) -> Attribute:
    return v.type.element_type  # type: ignore[attr-defined]


def norm_axis(ctx: NodeContext, axis: int, rank: int) -> int:
    a = axis + rank if axis < 0 else axis
    if not 0 <= a < max(rank, 1):
        raise ctx.error(f"axis {axis} is out of range for rank {rank}")
    return a


def scalar(g: GraphBuilder, value: float, like: SSAValue, rank: int | None = None) -> SSAValue:
    """A constant of shape [1]*rank (default: the rank of ``like``) holding ``value`` in ``like``'s type."""
    r = len(shape_of(like)) if rank is None else rank
    return const_like(g, np.full((1,) * r, value, dtype=np.float64), like)


def const_like(g: GraphBuilder, array: np.ndarray, like: SSAValue) -> SSAValue:
    """A constant ``array`` in the element type of ``like``."""
    from xdsl.dialects.builtin import TensorType

    from nnkiln.dialects.tosa.base import kind_of

    kind = kind_of(like.type)  # type: ignore[arg-type]
    assert kind is not None
    arr = np.ascontiguousarray(np.asarray(array).astype(np_dtype(kind)))
    return g.const(arr, TensorType(etype(like), list(arr.shape)))


def binary(g: GraphBuilder, op: type[TosaOp], a: SSAValue, b: SSAValue, **attrs: object) -> SSAValue:
    """An elementwise binary op after rank equalisation (leading 1s)."""
    a, b = equal_ranks(g, a, b)
    return g.value(op, [a, b], etype(a), **attrs)


def add(g: GraphBuilder, a: SSAValue, b: SSAValue) -> SSAValue:
    from nnkiln.dialects.tosa.ops_elementwise_binary import AddOp

    return binary(g, AddOp, a, b)


def sub(g: GraphBuilder, a: SSAValue, b: SSAValue) -> SSAValue:
    from nnkiln.dialects.tosa.ops_elementwise_binary import SubOp

    return binary(g, SubOp, a, b)


def mul(g: GraphBuilder, a: SSAValue, b: SSAValue) -> SSAValue:
    from nnkiln.dialects.tosa.ops_elementwise_binary import MulOp

    return binary(g, MulOp, a, b, shift=0)


def unary(g: GraphBuilder, op: type[TosaOp], a: SSAValue) -> SSAValue:
    return g.value(op, [a], etype(a))


def reduce_keepdims(ctx: NodeContext, x: SSAValue, axes: Sequence[int], op: type[TosaOp]) -> SSAValue:
    """``op`` (a TOSA REDUCE_*) over ``axes`` of ``x``, keeping reduced dimensions as 1.

    TOSA reductions take one axis of a tensor of rank 1..4, so adjacent dimensions with the same role
    (reduced or kept) are merged by a RESHAPE first, each reduced group is reduced in turn, and the
    result is reshaped to the input's rank with 1s at the reduced axes.
    """
    g = ctx.g
    shape = shape_of(x)
    axes_set = {a for a in axes}
    if not axes_set:
        return x
    merged: list[int] = []
    flags: list[bool] = []
    for d, size in enumerate(shape):
        red = d in axes_set
        if size == 1 and merged:  # size-1 dims merge with either neighbour
            continue
        if flags and flags[-1] == red:
            merged[-1] *= size
        else:
            merged.append(size)
            flags.append(red)
    if not merged:
        merged, flags = [1], [True]
    if len(merged) > 4:
        raise ctx.error(f"a reduction over axes {sorted(axes_set)} of shape {list(shape)} is not supported "
                        f"(TOSA 0.30 reductions take rank <= 4 and the axes do not merge to that)")
    y = reshape(g, x, merged)
    for i, red in enumerate(flags):
        if red and merged[i] != 1:
            y = g.value(op, [y], etype(y), axis=i)
    out_shape = [1 if d in axes_set else s for d, s in enumerate(shape)]
    return reshape(g, y, out_shape)


def mean_keepdims(ctx: NodeContext, x: SSAValue, axes: Sequence[int]) -> SSAValue:
    """Mean over ``axes`` (REDUCE_SUM then MUL by 1/count)."""
    from nnkiln.dialects.tosa.ops_reduction import ReduceSumOp

    shape = shape_of(x)
    count = math.prod(shape[a] for a in set(axes))
    s = reduce_keepdims(ctx, x, axes, ReduceSumOp)
    if count == 1:
        return s
    return mul(ctx.g, s, scalar(ctx.g, 1.0 / count, s))


def sqrt(g: GraphBuilder, x: SSAValue) -> SSAValue:
    """sqrt(x) as RECIPROCAL(RSQRT(x)) (exact at 0: rsqrt(0) = inf, 1/inf = 0)."""
    from nnkiln.dialects.tosa.ops_elementwise_unary import ReciprocalOp, RsqrtOp

    return unary(g, ReciprocalOp, unary(g, RsqrtOp, x))


def value_of(ctx: NodeContext, v: TensorValue) -> SSAValue:
    return ctx.importer.materialize(v)


def single_output(ctx: NodeContext, what: str) -> None:
    """Error if the node uses outputs beyond the first."""
    if any(o for o in list(ctx.node.output)[1:]):
        raise ctx.error(f"the {what} output(s) are not supported")
