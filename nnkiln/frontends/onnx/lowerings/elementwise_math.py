"""Elementwise arithmetic and math ONNX ops: Add, Sub, Mul, Div, Pow, Max, Min, Sum, Mean, Mod, the
float unaries (Ceil, Floor, Exp, Log, Reciprocal, Sigmoid, Tanh), Neg, Abs, Sqrt, Round, Sign and Clip.

Conventions, integer handling and float deviations of the elementwise family: see
``_elementwise_common``. Not supported here: float Mod (a - b * floor(a / b) is not exact with a
reciprocal), integer Pow, int32 base or exponent conversions that are not exact.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
from xdsl.ir import SSAValue

from nnkiln.dialects.tosa.base import Kind
from nnkiln.dialects.tosa.ops_activation import ClampOp, SigmoidOp, TanhOp
from nnkiln.dialects.tosa.ops_comparison import EqualOp, GreaterOp
from nnkiln.dialects.tosa.ops_elementwise_binary import (
    AddOp,
    IntDivOp,
    LogicalAndOp,
    LogicalOrOp,
    LogicalXorOp,
    MaximumOp,
    MinimumOp,
    PowOp,
    SubOp,
)
from nnkiln.dialects.tosa.ops_elementwise_unary import (
    AbsOp,
    CeilOp,
    ExpOp,
    FloorOp,
    LogicalNotOp,
    LogOp,
    NegateOp,
    ReciprocalOp,
    RsqrtOp,
)
from nnkiln.frontends.common.arith import kind_of_value, np_dtype, shape_of
from nnkiln.frontends.common.broadcast import reshape, to_rank
from nnkiln.frontends.onnx.importer import NodeContext, TensorValue
from nnkiln.frontends.onnx.lowerings import lowering
from nnkiln.frontends.onnx.lowerings._elementwise_common import (
    TOSA_INTS,
    Result,
    all_const,
    binop,
    clamp,
    cmp,
    const,
    consts,
    emit,
    int_domain,
    lower_unary,
    math_custom,
    mul,
    narrow,
    operands,
    present_inputs,
    require_float,
    select,
    splat,
    unop,
    value_kind,
)
from nnkiln.frontends.onnx.lowerings._integers import widen_i32

# ---------------------------------------------------------------------------------------------------
# binary arithmetic


def _np_intdiv(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    q = np.abs(a.astype(np.int64)) // np.abs(b.astype(np.int64))
    return np.where((a < 0) != (b < 0), -q, q).astype(np.result_type(a, b))


def _np_div(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    if np.result_type(a, b).kind in "iu":
        return _np_intdiv(a, b)
    with np.errstate(all="ignore"):
        return np.divide(a, b)


def _arith(ctx: NodeContext, fn: Callable[[SSAValue, SSAValue, Kind], SSAValue],
           fold: Callable[[np.ndarray, np.ndarray], np.ndarray]) -> Result:
    """A broadcasting binary op; integers run in int32 and wrap back to their kind."""
    if all_const(ctx):
        a, b = consts(ctx)[:2]
        with np.errstate(all="ignore"):
            return [np.asarray(fold(a, b))]
    tvs = [ctx.input(0), ctx.input(1)]
    kind = value_kind(tvs)
    if kind is Kind.BOOL:
        raise ctx.error("bool operands are not supported")
    dom = int_domain(kind)
    a, b = operands(ctx, tvs, dom)
    out = fn(a, b, dom)
    return [narrow(ctx, out, kind) if dom is not kind else out]


@lowering("Add")
def Add(ctx: NodeContext) -> Result:
    """Add: ADD (integers in int32, wrapped back)."""
    return _arith(ctx, lambda a, b, k: binop(ctx, AddOp, a, b), np.add)


@lowering("Sub")
def Sub(ctx: NodeContext) -> Result:
    """Sub: SUB (integers in int32, wrapped back)."""
    return _arith(ctx, lambda a, b, k: binop(ctx, SubOp, a, b), np.subtract)


@lowering("Mul")
def Mul(ctx: NodeContext) -> Result:
    """Mul: MUL with shift 0 (int32 keeps the low 32 bits)."""
    return _arith(ctx, lambda a, b, k: mul(ctx, a, b), np.multiply)


@lowering("Div")
def Div(ctx: NodeContext) -> Result:
    """Div: integers INTDIV (truncation toward zero, as ONNX); floats ``a * RECIPROCAL(b)`` (TOSA 0.30 has
    no float division; see the module docstring for the precision); a constant divisor is inverted with
    numpy at import (same rounding as RECIPROCAL)."""
    if all_const(ctx):
        a, b = consts(ctx)[:2]
        return [_np_div(a, b)]
    a_tv, b_tv = ctx.input(0), ctx.input(1)
    kind = value_kind([a_tv, b_tv])
    if kind.is_float and b_tv.is_const:
        with np.errstate(divide="ignore"):
            inv = (np.asarray(1, dtype=np_dtype(kind)) / np.asarray(b_tv.const).astype(np_dtype(kind)))
        a, r = operands(ctx, [a_tv, TensorValue.constant(np.asarray(inv))], kind)
        return [mul(ctx, a, r)]

    def build(a: SSAValue, b: SSAValue, k: Kind) -> SSAValue:
        if k.is_float:
            return mul(ctx, a, unop(ctx, ReciprocalOp, b))
        return binop(ctx, IntDivOp, a, b)

    return _arith(ctx, build, _np_div)


def _np_pow(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    if a.dtype.kind in "iu":  # the kernel of math.pow_int, so that folding and running agree
        from nnkiln.reference.custom_math import pow_int

        return pow_int(a, b, a.dtype)
    with np.errstate(all="ignore"):
        return np.power(a.astype(np.float64), b.astype(np.float64)).astype(a.dtype)


@lowering("Pow")
def Pow(ctx: NodeContext) -> Result:
    """Pow: POW (float base; an integer exponent is CAST to the base's float type, exact for
    |y| < 2^24). POW takes ranks 1..4: rank-0 operands are reshaped to [1]. Integer bases (TOSA has no
    integer power and a float round trip is not exact): one ``tosa.custom`` ``math.pow_int`` (see
    ``nnkiln.reference.custom_math.pow_int``: wrapping integer powers, or a float exponent's power truncated)."""
    if all_const(ctx):
        a, b = consts(ctx)[:2]
        return [_np_pow(a, b)]
    x_tv, y_tv = ctx.input(0), ctx.input(1)
    kind = x_tv.kind
    if not kind.is_float:
        return [_int_pow(ctx, x_tv, y_tv)]
    if not y_tv.is_const and not (y_tv.kind.is_float and y_tv.kind is kind) and y_tv.kind not in TOSA_INTS:
        raise ctx.error(f"exponents of type {y_tv.kind.value} with a {kind.value} base are not supported")
    x, y = operands(ctx, [x_tv, y_tv], kind)
    shape = shape_of(x)
    rank = len(shape)
    if rank == 0:
        x, y = reshape(ctx.g, x, (1,)), reshape(ctx.g, y, (1,))
    elif rank > 4:
        raise ctx.error(f"rank {rank} is not supported (TOSA POW takes ranks 1..4)")
    out = binop(ctx, PowOp, x, y)
    return [reshape(ctx.g, out, ()) if rank == 0 else out]


def _int_pow(ctx: NodeContext, x_tv: TensorValue, y_tv: TensorValue) -> SSAValue:
    if x_tv.kind not in (Kind.I8, Kind.I16, Kind.I32) or y_tv.kind is Kind.BOOL:
        raise ctx.error(f"a {x_tv.kind.value} base with a {y_tv.kind.value} exponent is not supported")
    args = [ctx.importer.materialize(x_tv), ctx.importer.materialize(y_tv)]
    return math_custom(ctx, "pow_int", args, x_tv.kind)


def _variadic(ctx: NodeContext, cls: type, fold: Callable[[np.ndarray, np.ndarray], np.ndarray]) -> list[SSAValue | np.ndarray | TensorValue]:
    tvs = present_inputs(ctx)
    if not tvs:
        raise ctx.error("at least one input is required")
    if all(tv.is_const for tv in tvs):
        acc = np.asarray(tvs[0].const)
        for tv in tvs[1:]:
            acc = fold(acc, np.asarray(tv.const))
        return [np.asarray(acc)]
    kind = value_kind(tvs)
    if kind is Kind.BOOL:
        raise ctx.error("bool operands are not supported")
    if len(tvs) == 1:
        return [tvs[0]]
    dom = int_domain(kind)
    vals = operands(ctx, tvs, dom)
    acc = vals[0]
    for v in vals[1:]:
        acc = emit(ctx, cls, [acc, v], dom)
    return [narrow(ctx, acc, kind) if dom is not kind else acc]


@lowering("Max")
def Max(ctx: NodeContext) -> Result:
    """Max: a chain of MAXIMUM (NaN propagates, as ONNX's reference)."""
    return _variadic(ctx, MaximumOp, np.maximum)


@lowering("Min")
def Min(ctx: NodeContext) -> Result:
    """Min: a chain of MINIMUM (NaN propagates)."""
    return _variadic(ctx, MinimumOp, np.minimum)


@lowering("Sum")
def Sum(ctx: NodeContext) -> Result:
    """Sum: a chain of ADD."""
    return _variadic(ctx, AddOp, np.add)


@lowering("Mean")
def Mean(ctx: NodeContext) -> Result:
    """Mean: a chain of ADD, then MUL by ``1/n`` (floats only; exact for n a power of two)."""
    tvs = present_inputs(ctx)
    if tvs and all(tv.is_const for tv in tvs):
        acc = np.asarray(tvs[0].const)
        for tv in tvs[1:]:
            acc = acc + np.asarray(tv.const)
        return [(acc / len(tvs)).astype(acc.dtype)]
    (total,) = _variadic(ctx, AddOp, np.add)
    if len(tvs) == 1:
        return [total]
    assert isinstance(total, SSAValue)
    require_float(ctx, kind_of_value(total))
    return [mul(ctx, total, splat(ctx, 1.0 / len(tvs), total))]


def _np_mod(a: np.ndarray, b: np.ndarray, fmod: int) -> np.ndarray:
    with np.errstate(all="ignore"):
        if np.result_type(a, b).kind in "iu":
            b_safe = np.where(b == 0, 1, b)
            return (np.fmod(a, b_safe) if fmod else np.mod(a, b_safe)).astype(np.result_type(a, b))
        return np.fmod(a, b) if fmod else np.mod(a, b)


@lowering("Mod")
def Mod(ctx: NodeContext) -> Result:
    """Mod (integers): ``r = a - b * INTDIV(a, b)`` (fmod=1: sign of a); fmod=0 adds ``b`` where ``r != 0``
    and ``r``, ``b`` have different signs (sign of b). Float Mod (float32 / float16): ``a - b·floor(a/b)`` is not
    exact in TOSA 0.30 (no float division), so it is one ``tosa.custom`` ``math.fmod`` (fmod=1, C's fmod) or
    ``math.mod`` (fmod=0, the sign of b) whose numpy kernel is exact (``nnkiln.reference.custom_math``)."""
    fmod = int(ctx.attr("fmod", 0))
    if all_const(ctx):
        a, b = consts(ctx)[:2]
        with np.errstate(all="ignore"):
            return [_np_mod(a, b, fmod)]
    kind = value_kind([ctx.input(0), ctx.input(1)])
    if kind.is_float:
        return _float_mod(ctx, kind, fmod)

    def build(a: SSAValue, b: SSAValue, k: Kind) -> SSAValue:
        q = binop(ctx, IntDivOp, a, b)
        r = binop(ctx, SubOp, a, mul(ctx, b, q))
        if fmod:
            return r
        zero = splat(ctx, 0, r)
        nonzero = unop(ctx, LogicalNotOp, cmp(ctx, EqualOp, r, zero))
        signs_differ = binop(ctx, LogicalXorOp, cmp(ctx, GreaterOp, zero, r), cmp(ctx, GreaterOp, zero, b))
        fix = binop(ctx, LogicalAndOp, nonzero, signs_differ)
        return select(ctx, fix, binop(ctx, AddOp, r, b), r)

    return _arith(ctx, build, lambda a, b: _np_mod(a, b, fmod))


def _float_mod(ctx: NodeContext, kind: Kind, fmod: int) -> Result:
    if kind not in (Kind.F32, Kind.F16):
        raise ctx.error(f"float Mod is not supported for {kind.value} (float32 and float16 only)")
    name = "fmod" if fmod else "mod"
    return _arith(ctx, lambda a, b, k: math_custom(ctx, name, [a, b], k), lambda a, b: _np_mod(a, b, fmod))


# ---------------------------------------------------------------------------------------------------
# unary math


def _float_unary(name: str, cls: type, fold: Callable[[np.ndarray], np.ndarray]) -> None:
    def lower(ctx: NodeContext) -> Result:
        return lower_unary(ctx, fold, lambda x, k: unop(ctx, cls, x))

    lower.__name__ = name
    lower.__doc__ = f"{name}: {cls.name} (floats only)."
    lowering(name)(lower)


_float_unary("Ceil", CeilOp, np.ceil)
_float_unary("Floor", FloorOp, np.floor)
_float_unary("Exp", ExpOp, np.exp)
_float_unary("Log", LogOp, np.log)
_float_unary("Reciprocal", ReciprocalOp, np.reciprocal)
_float_unary("Sigmoid", SigmoidOp, lambda x: 1.0 / (1.0 + np.exp(-x)))
_float_unary("Tanh", TanhOp, np.tanh)


@lowering("Neg")
def Neg(ctx: NodeContext) -> Result:
    """Neg: NEGATE; int8/int16 are negated in int32 and wrapped back (NEGATE would saturate)."""
    def build(x: SSAValue, k: Kind) -> SSAValue:
        if k.is_float or k is Kind.I32:
            return unop(ctx, NegateOp, x)
        return narrow(ctx, unop(ctx, NegateOp, widen_i32(ctx, x)), k)

    return lower_unary(ctx, np.negative, build, float_only=False)


@lowering("Abs")
def Abs(ctx: NodeContext) -> Result:
    """Abs: ABS (int8/int16 via int32, wrapped back; unsigned values are their own absolute value)."""
    def build(x: SSAValue, k: Kind) -> SSAValue:
        if k in (Kind.U8, Kind.U16):
            return x
        if k.is_float or k is Kind.I32:
            return unop(ctx, AbsOp, x)
        return narrow(ctx, unop(ctx, AbsOp, widen_i32(ctx, x)), k)

    return lower_unary(ctx, np.abs, build, float_only=False)


@lowering("Sqrt")
def Sqrt(ctx: NodeContext) -> Result:
    """Sqrt: ``RECIPROCAL(RSQRT(x))`` — two roundings; +-0, +inf and NaN (negatives) are exact."""
    return lower_unary(ctx, np.sqrt, lambda x, k: unop(ctx, ReciprocalOp, unop(ctx, RsqrtOp, x)))


def _round_half_even(ctx: NodeContext, x: SSAValue) -> SSAValue:
    """Exact round half to even: ``f = FLOOR(x)``, ``d = x - f`` (exact), round up when ``d > 0.5`` or
    ``d == 0.5`` and ``f`` is odd; a zero result takes the sign of ``x`` (``x * 0``)."""
    f = unop(ctx, FloorOp, x)
    d = binop(ctx, SubOp, x, f)
    half = splat(ctx, 0.5, x)
    half_f = unop(ctx, FloorOp, mul(ctx, f, half))
    odd = cmp(ctx, GreaterOp, binop(ctx, SubOp, f, binop(ctx, AddOp, half_f, half_f)), splat(ctx, 0.0, x))
    tie_up = binop(ctx, LogicalAndOp, cmp(ctx, EqualOp, d, half), odd)
    up = binop(ctx, LogicalOrOp, cmp(ctx, GreaterOp, d, half), tie_up)
    r = select(ctx, up, binop(ctx, AddOp, f, splat(ctx, 1.0, x)), f)
    zero = splat(ctx, 0.0, x)
    return select(ctx, cmp(ctx, EqualOp, r, zero), mul(ctx, x, zero), r)


@lowering("Round")
def Round(ctx: NodeContext) -> Result:
    """Round: round half to even, composed exactly (see ``_round_half_even``)."""
    return lower_unary(ctx, np.round, lambda x, k: _round_half_even(ctx, x))


@lowering("Sign")
def Sign(ctx: NodeContext) -> Result:
    """Sign: ``x > 0 ? 1 : (x < 0 ? -1 : x * 0)`` (floats: NaN stays NaN, zeros keep their sign);
    integers compare in int32."""
    def build(x: SSAValue, k: Kind) -> SSAValue:
        if k.is_float:
            zero = splat(ctx, 0.0, x)
            inner = select(ctx, cmp(ctx, GreaterOp, zero, x), splat(ctx, -1.0, x), mul(ctx, x, zero))
            return select(ctx, cmp(ctx, GreaterOp, x, zero), splat(ctx, 1.0, x), inner)
        w = widen_i32(ctx, x)
        zero = splat(ctx, 0, w)
        inner = select(ctx, cmp(ctx, GreaterOp, zero, w), splat(ctx, -1, w), zero)
        out = select(ctx, cmp(ctx, GreaterOp, w, zero), splat(ctx, 1, w), inner)
        return narrow(ctx, out, k)

    return lower_unary(ctx, np.sign, build, float_only=False)


# ---------------------------------------------------------------------------------------------------
# Clip


def _float_limits(kind: Kind) -> tuple[float, float]:
    fi = np.finfo(np_dtype(kind)) if kind is not Kind.BF16 else None
    if fi is None:
        import ml_dtypes

        fi = ml_dtypes.finfo(ml_dtypes.bfloat16)
    return float(fi.min), float(fi.max)


@lowering("Clip")
def Clip(ctx: NodeContext) -> Result:
    """Clip: ``min(max(x, lo), hi)``. Opset < 11: attributes ``min``/``max`` (defaults: the float type's
    lowest/highest value); opset >= 11: optional inputs 1 and 2 (absent: no bound).
    Constant bounds with lo <= hi: CLAMP for floats and int8/int16 (no int32 CLAMP: MAXIMUM/MINIMUM);
    lo > hi gives ``hi`` everywhere (ONNX), emitted as MAXIMUM then MINIMUM (NaN propagates);
    run-time bounds use MAXIMUM/MINIMUM."""
    tv = ctx.input(0)
    kind = tv.kind
    lo_tv: TensorValue | None
    hi_tv: TensorValue | None
    if ctx.opset < 11:
        flo, fhi = _float_limits(kind) if kind.is_float else (-math.inf, math.inf)
        lo_tv = TensorValue.constant(np.asarray(ctx.attr("min", flo), dtype=np.float32))
        hi_tv = TensorValue.constant(np.asarray(ctx.attr("max", fhi), dtype=np.float32))
    else:
        lo_tv = ctx.input(1) if ctx.has_input(1) else None
        hi_tv = ctx.input(2) if ctx.has_input(2) else None
    if tv.is_const and all(b is None or b.is_const for b in (lo_tv, hi_tv)):
        x = np.asarray(tv.const)
        if lo_tv is not None:
            x = np.maximum(x, np.asarray(lo_tv.const).astype(x.dtype))
        if hi_tv is not None:
            x = np.minimum(x, np.asarray(hi_tv.const).astype(x.dtype))
        return [x]
    if kind is Kind.BOOL:
        raise ctx.error("bool inputs are not supported")
    scalar_bounds = all(b is None or (b.is_const and np.asarray(b.const).size == 1) for b in (lo_tv, hi_tv))
    x = ctx.tensor(0)
    if scalar_bounds:
        lo = None if lo_tv is None else np.asarray(lo_tv.const).reshape(-1)[0]
        hi = None if hi_tv is None else np.asarray(hi_tv.const).reshape(-1)[0]
        if kind.is_float:
            lo_f = -math.inf if lo is None else float(lo)
            hi_f = math.inf if hi is None else float(hi)
            if not (math.isnan(lo_f) or math.isnan(hi_f)) and lo_f <= hi_f:
                return [clamp(ctx, x, lo_f, hi_f)]
        elif kind in (Kind.I8, Kind.I16):
            rlo, rhi = kind.int_range
            lo_i = rlo if lo is None else max(rlo, min(rhi, int(lo)))
            hi_i = rhi if hi is None else max(rlo, min(rhi, int(hi)))
            lo_i = min(lo_i, hi_i)  # lo > hi: every value becomes hi
            return [emit(ctx, ClampOp, [x], kind, min_val=lo_i, max_val=hi_i)]
    dom = int_domain(kind)
    (xv,) = operands(ctx, [tv], dom)
    rank = tv.rank
    for b, cls in ((lo_tv, MaximumOp), (hi_tv, MinimumOp)):
        if b is None:
            continue
        if b.is_const:
            arr = np.asarray(b.const)
            if dom.is_int:
                lim_lo, lim_hi = dom.int_range
                arr = np.clip(arr.astype(np.int64), lim_lo, lim_hi)
            bv = const(ctx, arr.reshape((1,) * (rank - arr.ndim) + arr.shape) if arr.ndim <= rank else arr, dom)
        else:
            (bv,) = operands(ctx, [b], dom)
        xv, bv = (to_rank(ctx.g, xv, len(shape_of(bv))), to_rank(ctx.g, bv, len(shape_of(xv))))
        xv = emit(ctx, cls, [xv, bv], dom)
    return [narrow(ctx, xv, kind) if dom is not kind else xv]


# ------------------------------------------------------------------------------------------------
# Sin, Cos, Tan, Asin, Acos, Atan, Sinh, Cosh, Asinh, Acosh, Atanh: TOSA 0.30 has no trigonometric ops and
# no exact composition of its ops computes them, so each is one ``tosa.custom`` ``math.<name>`` (config
# "math") whose kernel (``nnkiln.reference.custom_math``, numpy float32) the reference interpreter and the
# runtime share. Float32 only; constant inputs fold with the same function.

_TRIG_OPS = {"Sin": "sin", "Cos": "cos", "Tan": "tan", "Asin": "asin", "Acos": "acos", "Atan": "atan",
             "Sinh": "sinh", "Cosh": "cosh", "Asinh": "asinh", "Acosh": "acosh", "Atanh": "atanh"}


@lowering(*_TRIG_OPS)
def _trig(ctx: NodeContext) -> Result:
    """Sin … Atanh: one ``tosa.custom`` ``math.<name>`` (float32)."""
    from nnkiln.reference import custom_math

    name = _TRIG_OPS[ctx.op_type]
    tv = ctx.input(0)
    if tv.kind is not Kind.F32:
        raise ctx.error(f"{tv.kind.value} inputs are not supported (float32 only: a tosa.custom math.{name})")
    if tv.is_const:
        return [custom_math.trig_f32(name, np.asarray(tv.const))]
    return [math_custom(ctx, name, [ctx.tensor(0)], Kind.F32)]

