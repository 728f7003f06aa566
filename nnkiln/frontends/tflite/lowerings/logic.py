"""Comparisons, selection, casts and arg-reductions (document legalize_tflite: ``tfl.equal``, ``tfl.not_equal``,
``tfl.greater``, ``tfl.greater_equal``, ``tfl.less``, ``tfl.less_equal``, ``tfl.logical_and/or/not``,
``tfl.select``/``select_v2``, ``tfl.cast``, ``tfl.arg_max``, ``tfl.arg_min``).

Comparisons of int8 values compare codes, which is right only when both operands share quantization; they are
refused otherwise. ARG_MAX/ARG_MIN output int32 (an int64 output is computed in int32 and declared int64).
CAST float → int truncates toward zero as TFLite does (TOSA's CAST rounds to nearest, so FLOOR/CEIL first).
"""

from __future__ import annotations

from xdsl.ir import SSAValue

from nnkiln.dialects.tosa.base import Kind, element_type
from nnkiln.frontends.common.arith import etype, kind_of_value, shape_of, trunc_toward_zero
from nnkiln.frontends.common.broadcast import equal_ranks, reshape
from nnkiln.frontends.tflite.importer import OpContext
from nnkiln.frontends.tflite.lowerings._registry import lowering


def _same_quant(ctx: OpContext) -> None:
    if ctx.is_quantized():
        q0, q1 = ctx.quant(ctx.tin(0)), ctx.quant(ctx.tin(1))
        if float(q0.scale[0]) != float(q1.scale[0]) or int(q0.zero_point[0]) != int(q1.zero_point[0]):
            raise ctx.error("comparing int8 operands of different quantization is not supported")


@lowering("EQUAL", "NOT_EQUAL", "GREATER", "GREATER_EQUAL", "LESS", "LESS_EQUAL")
def compare(ctx: OpContext) -> list[SSAValue]:
    """Comparisons → EQUAL / GREATER / GREATER_EQUAL (operands swapped for LESS*, LOGICAL_NOT for NOT_EQUAL)."""
    from nnkiln.dialects.tosa.ops_comparison import EqualOp, GreaterEqualOp, GreaterOp
    from nnkiln.dialects.tosa.ops_elementwise_unary import LogicalNotOp

    _same_quant(ctx)
    a, b = equal_ranks(ctx.g, ctx.value(0), ctx.value(1))
    bt = element_type(Kind.BOOL)
    name = ctx.op.name
    if name in ("EQUAL", "NOT_EQUAL"):
        y = ctx.g.value(EqualOp, [a, b], bt)
        return [ctx.g.value(LogicalNotOp, [y], bt) if name == "NOT_EQUAL" else y]
    op = GreaterOp if name in ("GREATER", "LESS") else GreaterEqualOp
    return [ctx.g.value(op, [a, b] if name.startswith("GREATER") else [b, a], bt)]


@lowering("LOGICAL_AND", "LOGICAL_OR", "LOGICAL_NOT")
def logical(ctx: OpContext) -> list[SSAValue]:
    """``tfl.logical_and/or/not`` → LOGICAL_AND / LOGICAL_OR / LOGICAL_NOT."""
    from nnkiln.dialects.tosa.ops_elementwise_binary import LogicalAndOp, LogicalOrOp
    from nnkiln.dialects.tosa.ops_elementwise_unary import LogicalNotOp

    bt = element_type(Kind.BOOL)
    if ctx.op.name == "LOGICAL_NOT":
        return [ctx.g.value(LogicalNotOp, [ctx.value(0)], bt)]
    a, b = equal_ranks(ctx.g, ctx.value(0), ctx.value(1))
    return [ctx.g.value(LogicalAndOp if ctx.op.name == "LOGICAL_AND" else LogicalOrOp, [a, b], bt)]


@lowering("SELECT", "SELECT_V2")
def select(ctx: OpContext) -> list[SSAValue]:
    """``tfl.select``/``select_v2`` → SELECT (ranks equalised; int8 operands must share quantization with the
    output, as TFLite requires)."""
    from nnkiln.dialects.tosa.ops_elementwise_ternary import SelectOp

    c, a, b = equal_ranks(ctx.g, ctx.value(0), ctx.value(1), ctx.value(2))
    return [ctx.g.value(SelectOp, [c, a, b], etype(a))]


@lowering("CAST")
def cast(ctx: OpContext) -> list[SSAValue]:
    """``tfl.cast`` → CAST (float → int truncated toward zero first; module docstring)."""
    from nnkiln.dialects.tosa.ops_type_conversion import CastOp

    x = ctx.value(0)
    out_t = ctx.out_type()
    out_kind = ctx.tout().dtype
    if kind_of_value(x).is_float and out_kind is not None and str(out_kind).find("float") < 0:
        x = trunc_toward_zero(ctx.g, x)
    if x.type.element_type == out_t:  # type: ignore[attr-defined]
        return [x]
    return [ctx.g.value(CastOp, [x], out_t)]


@lowering("ARG_MAX", "ARG_MIN")
def arg_max_min(ctx: OpContext) -> list[SSAValue]:
    """``tfl.arg_max`` → ARGMAX; ``tfl.arg_min`` → ARGMAX of the negation (float) or of ``-1 - x`` (ints: no
    overflow; BITWISE_NOT). The first index wins ties in both, as TFLite."""
    from nnkiln.dialects.tosa.ops_elementwise_unary import BitwiseNotOp, NegateOp
    from nnkiln.dialects.tosa.ops_tensor import ArgMaxOp

    x = ctx.value(0)
    axis = int(ctx.const(1, "axis").reshape(-1)[0]) % len(shape_of(x))
    if ctx.op.name == "ARG_MIN":
        op = NegateOp if kind_of_value(x).is_float else BitwiseNotOp
        x = ctx.g.value(op, [x], etype(x))
    y = ctx.g.value(ArgMaxOp, [x], element_type(Kind.I32), axis=axis)
    return [reshape(ctx.g, y, ctx.tout().shape)]



