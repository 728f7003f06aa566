"""Logic, comparison and bit ONNX ops: And, Or, Xor, Not, Equal, Greater, GreaterOrEqual, Less,
LessOrEqual, Where, IsNaN, IsInf, BitwiseAnd/Or/Xor/Not, BitShift.

Integer handling (uint8/uint16 via int32, wrapped back): see ``_elementwise_common``.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from nnkiln.dialects.tosa.base import Kind
from nnkiln.dialects.tosa.ops_comparison import EqualOp, GreaterEqualOp, GreaterOp
from nnkiln.dialects.tosa.ops_elementwise_binary import (
    ArithmeticRightShiftOp,
    BitwiseAndOp,
    BitwiseOrOp,
    BitwiseXorOp,
    LogicalAndOp,
    LogicalLeftShiftOp,
    LogicalOrOp,
    LogicalXorOp,
)
from nnkiln.dialects.tosa.ops_elementwise_ternary import SelectOp
from nnkiln.dialects.tosa.ops_elementwise_unary import BitwiseNotOp, LogicalNotOp
from nnkiln.frontends.common.arith import shape_of
from nnkiln.frontends.common.broadcast import to_rank
from nnkiln.frontends.onnx.importer import NodeContext
from nnkiln.frontends.onnx.lowerings import lowering
from nnkiln.frontends.onnx.lowerings._elementwise_common import (
    TOSA_INTS,
    Result,
    all_const,
    binop,
    cmp,
    consts,
    emit,
    int_domain,
    narrow,
    operands,
    require_float,
    select,
    splat,
    unop,
    value_kind,
)
from nnkiln.frontends.onnx.lowerings._integers import widen_i32

# ---------------------------------------------------------------------------------------------------
# logic and comparison


def _logical(ctx: NodeContext, cls: type, fold: Callable[[np.ndarray, np.ndarray], np.ndarray]) -> Result:
    if all_const(ctx):
        a, b = consts(ctx)[:2]
        return [np.asarray(fold(a.astype(bool), b.astype(bool)))]
    tvs = [ctx.input(0), ctx.input(1)]
    if value_kind(tvs) is not Kind.BOOL:
        raise ctx.error("non-bool inputs are not supported")
    a, b = operands(ctx, tvs, Kind.BOOL)
    return [emit(ctx, cls, [a, b], Kind.BOOL)]


@lowering("And")
def And(ctx: NodeContext) -> Result:
    """And: LOGICAL_AND."""
    return _logical(ctx, LogicalAndOp, np.logical_and)


@lowering("Or")
def Or(ctx: NodeContext) -> Result:
    """Or: LOGICAL_OR."""
    return _logical(ctx, LogicalOrOp, np.logical_or)


@lowering("Xor")
def Xor(ctx: NodeContext) -> Result:
    """Xor: LOGICAL_XOR."""
    return _logical(ctx, LogicalXorOp, np.logical_xor)


@lowering("Not")
def Not(ctx: NodeContext) -> Result:
    """Not: LOGICAL_NOT."""
    if all_const(ctx):
        return [np.logical_not(consts(ctx)[0])]
    if ctx.input(0).kind is not Kind.BOOL:
        raise ctx.error("non-bool inputs are not supported")
    return [unop(ctx, LogicalNotOp, ctx.tensor(0))]


def _compare(ctx: NodeContext, cls: type, swap: bool, fold: Callable[[np.ndarray, np.ndarray], np.ndarray]) -> Result:
    if all_const(ctx):
        a, b = consts(ctx)[:2]
        return [np.asarray(fold(a, b))]
    tvs = [ctx.input(0), ctx.input(1)]
    kind = value_kind(tvs)
    if kind is Kind.BOOL:
        if cls is not EqualOp:
            raise ctx.error("bool operands are not supported")
        a, b = operands(ctx, tvs, Kind.BOOL)
        return [unop(ctx, LogicalNotOp, emit(ctx, LogicalXorOp, [a, b], Kind.BOOL))]
    a, b = operands(ctx, tvs, int_domain(kind))
    if swap:
        a, b = b, a
    return [cmp(ctx, cls, a, b)]


@lowering("Equal")
def Equal(ctx: NodeContext) -> Result:
    """Equal: EQUAL (bool: NOT(XOR))."""
    return _compare(ctx, EqualOp, False, np.equal)


@lowering("Greater")
def Greater(ctx: NodeContext) -> Result:
    """Greater: GREATER."""
    return _compare(ctx, GreaterOp, False, np.greater)


@lowering("GreaterOrEqual")
def GreaterOrEqual(ctx: NodeContext) -> Result:
    """GreaterOrEqual: GREATER_EQUAL."""
    return _compare(ctx, GreaterEqualOp, False, np.greater_equal)


@lowering("Less")
def Less(ctx: NodeContext) -> Result:
    """Less: GREATER with the operands swapped."""
    return _compare(ctx, GreaterOp, True, np.less)


@lowering("LessOrEqual")
def LessOrEqual(ctx: NodeContext) -> Result:
    """LessOrEqual: GREATER_EQUAL with the operands swapped."""
    return _compare(ctx, GreaterEqualOp, True, np.less_equal)


@lowering("Where")
def Where(ctx: NodeContext) -> Result:
    """Where: SELECT (uint8/uint16 values via int32)."""
    if all_const(ctx):
        c, a, b = consts(ctx)[:3]
        return [np.where(c, a, b)]
    cond = ctx.input(0)
    tvs = [ctx.input(1), ctx.input(2)]
    kind = value_kind(tvs)
    dom = Kind.I32 if kind in (Kind.U8, Kind.U16) else kind
    rank = max(cond.rank, tvs[0].rank, tvs[1].rank)
    (c,) = operands(ctx, [cond], Kind.BOOL)
    c = to_rank(ctx.g, c, rank)
    a, b = operands(ctx, tvs, dom)
    a, b = to_rank(ctx.g, a, rank), to_rank(ctx.g, b, rank)
    out = emit(ctx, SelectOp, [c, a, b], dom)
    return [narrow(ctx, out, kind) if dom is not kind else out]


@lowering("IsNaN")
def IsNaN(ctx: NodeContext) -> Result:
    """IsNaN: ``NOT(EQUAL(x, x))``."""
    if all_const(ctx):
        return [np.isnan(consts(ctx)[0])]
    require_float(ctx, ctx.input(0).kind)
    x = ctx.tensor(0)
    return [unop(ctx, LogicalNotOp, cmp(ctx, EqualOp, x, x))]


@lowering("IsInf")
def IsInf(ctx: NodeContext) -> Result:
    """IsInf: ``EQUAL(x, +inf)`` / ``EQUAL(x, -inf)`` per detect_positive/detect_negative (OR of both)."""
    pos = int(ctx.attr("detect_positive", 1))
    neg = int(ctx.attr("detect_negative", 1))

    def fold(x: np.ndarray) -> np.ndarray:
        return (np.isposinf(x) & bool(pos)) | (np.isneginf(x) & bool(neg))

    if all_const(ctx):
        return [fold(consts(ctx)[0])]
    tv = ctx.input(0)
    require_float(ctx, tv.kind)
    if not pos and not neg:
        return [np.zeros(tv.shape, dtype=np.bool_)]
    x = ctx.tensor(0)
    parts = []
    if pos:
        parts.append(cmp(ctx, EqualOp, x, splat(ctx, math.inf, x)))
    if neg:
        parts.append(cmp(ctx, EqualOp, x, splat(ctx, -math.inf, x)))
    return [parts[0] if len(parts) == 1 else emit(ctx, LogicalOrOp, parts, Kind.BOOL)]


# ---------------------------------------------------------------------------------------------------
# bit operations


def _bitwise(ctx: NodeContext, cls: type, fold: Callable[[np.ndarray, np.ndarray], np.ndarray]) -> Result:
    if all_const(ctx):
        a, b = consts(ctx)[:2]
        return [np.asarray(fold(a, b))]
    tvs = [ctx.input(0), ctx.input(1)]
    kind = value_kind(tvs)
    if not kind.is_int:
        raise ctx.error(f"{kind.value} inputs are not supported")
    dom = kind if kind in TOSA_INTS else Kind.I32
    a, b = operands(ctx, tvs, dom)
    out = emit(ctx, cls, [a, b], dom)
    return [narrow(ctx, out, kind) if dom is not kind else out]


@lowering("BitwiseAnd")
def BitwiseAnd(ctx: NodeContext) -> Result:
    """BitwiseAnd: BITWISE_AND (uint8/uint16 via int32)."""
    return _bitwise(ctx, BitwiseAndOp, np.bitwise_and)


@lowering("BitwiseOr")
def BitwiseOr(ctx: NodeContext) -> Result:
    """BitwiseOr: BITWISE_OR (uint8/uint16 via int32)."""
    return _bitwise(ctx, BitwiseOrOp, np.bitwise_or)


@lowering("BitwiseXor")
def BitwiseXor(ctx: NodeContext) -> Result:
    """BitwiseXor: BITWISE_XOR (uint8/uint16 via int32)."""
    return _bitwise(ctx, BitwiseXorOp, np.bitwise_xor)


@lowering("BitwiseNot")
def BitwiseNot(ctx: NodeContext) -> Result:
    """BitwiseNot: BITWISE_NOT (uint8/uint16 via int32, masked back)."""
    if all_const(ctx):
        return [np.invert(consts(ctx)[0])]
    tv = ctx.input(0)
    if not tv.kind.is_int:
        raise ctx.error(f"{tv.kind.value} inputs are not supported")
    x = ctx.tensor(0)
    if tv.kind in TOSA_INTS:
        return [unop(ctx, BitwiseNotOp, x)]
    return [narrow(ctx, unop(ctx, BitwiseNotOp, widen_i32(ctx, x)), tv.kind)]


_WIDTH = {Kind.I8: 8, Kind.I16: 16, Kind.I32: 32, Kind.U8: 8, Kind.U16: 16}


def _np_bitshift(x: np.ndarray, y: np.ndarray, left: bool) -> np.ndarray:
    bits = x.dtype.itemsize * 8
    xw = x.astype(np.int64) if x.dtype.kind == "i" else x.astype(np.uint64).astype(np.int64)
    yw = y.astype(np.int64)
    bad = (yw < 0) | (yw >= bits)
    ys = np.where(bad, 0, yw)
    if left:
        out = np.where(bad, 0, xw << ys)
    else:
        out = np.where(bad, np.where(xw < 0, -1, 0), xw >> ys)
    return out.astype(x.dtype)


@lowering("BitShift")
def BitShift(ctx: NodeContext) -> Result:
    """BitShift: computed in int32 on the widened value, then wrapped back to the type.
    RIGHT: ARITHMETIC_RIGHT_SHIFT (round = false) — arithmetic for signed types, and for unsigned types
    the widened value is non-negative, so it equals a logical shift; LEFT: LOGICAL_LEFT_SHIFT.
    Shift amounts outside [0, width) (ONNX opset 28: the sign extension alone, -1 or 0) are replaced by
    width-1 (right; gives -1/0) or give 0 (left) through SELECT, so TOSA's shift REQUIREs hold."""
    direction = str(ctx.attr("direction", ""))
    if direction not in ("LEFT", "RIGHT"):
        raise ctx.error(f'direction "{direction}" is not supported (LEFT or RIGHT)')
    left = direction == "LEFT"
    if all_const(ctx):
        x, y = consts(ctx)[:2]
        return [_np_bitshift(x, y, left)]
    tvs = [ctx.input(0), ctx.input(1)]
    kind = value_kind(tvs)
    if kind not in _WIDTH:
        raise ctx.error(f"{kind.value} inputs are not supported")
    width = _WIDTH[kind]
    x, y = operands(ctx, tvs, Kind.I32)
    zero = splat(ctx, 0, y)
    bad = binop(ctx, LogicalOrOp, cmp(ctx, GreaterOp, zero, y), cmp(ctx, GreaterEqualOp, y, splat(ctx, width, y)))
    if left:
        ys = select(ctx, bad, zero, y)
        shifted = emit(ctx, LogicalLeftShiftOp, [x, ys], Kind.I32)
        zero_x = splat(ctx, 0, x)
        out = select(ctx, to_rank(ctx.g, bad, len(shape_of(shifted))), zero_x, shifted)
    else:
        ys = select(ctx, bad, splat(ctx, width - 1, y), y)
        out = emit(ctx, ArithmeticRightShiftOp, [x, ys], Kind.I32, round=False)
    return [narrow(ctx, out, kind)]
