"""Helpers shared by the ``composite`` family of ONNX lowerings (``composite``, ``composite_attention``,
``composite_loss``, ``composite_more``, ``composite_rnn``, ``composite_signal``; ``resize_matrix`` uses ``bmm``).

Small IR builders over ``GraphBuilder`` (constants of a kind, binary ops with numpy broadcasting, casts,
reductions over one axis, a batched matrix product that stays in the operands' type) and node-input checks.
Conventions (see ``composite``): float16/bfloat16 arithmetic that accumulates is done in fp32 after an exact CAST;
element-by-element arithmetic stays in the input's type.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from xdsl.dialects.builtin import TensorType
from xdsl.ir import SSAValue

from nnkiln.dialects.tosa.base import Kind, element_type, kind_of
from nnkiln.frontends.common.broadcast import equal_ranks, reshape
from nnkiln.frontends.common.graph import GraphBuilder
from nnkiln.frontends.onnx.importer import NodeContext, TensorValue

Result = list[TensorValue | SSAValue | np.ndarray | None]

FLOAT_KINDS = (Kind.F32, Kind.F16, Kind.BF16)
BOOL = element_type(Kind.BOOL)
I32 = element_type(Kind.I32)
F32 = element_type(Kind.F32)


# ------------------------------------------------------------------------------------------------
# small IR helpers


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


def concat(g: GraphBuilder, parts: Sequence[SSAValue], axis: int) -> SSAValue:
    from nnkiln.dialects.tosa.ops_data_layout import ConcatOp

    if len(parts) == 1:
        return parts[0]
    return g.value(ConcatOp, [list(parts)], parts[0].type.element_type, axis=axis)  # type: ignore[attr-defined]

