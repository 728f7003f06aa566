"""Elementwise ONNX ops: arithmetic, math, activations, comparison, logic, bit ops, Cast (default domain,
opsets 7..latest).

Conventions of this family:

- Broadcasting: ONNX broadcasts numpy-style; TOSA needs equal ranks, so run-time operands go through
  ``broadcast.to_rank`` / ``equal_ranks`` and constants are reshaped with numpy at import.
- Constant folding: when every input is an import-time constant, the result is computed with numpy
  using the ONNX semantics of the op (integer ``Div`` truncates, ``Cast`` float->int truncates, ...).
- Integer types: TOSA 0.30's ADD/SUB/MUL/MAXIMUM/MINIMUM/INTDIV/ABS/comparisons are int32 only.
  int8/int16/uint8/uint16 operands are widened to int32 exactly (CAST for int8/int16; an identity
  RESCALE for uint8, ``uint16 - 32768`` via RESCALE with ``input_zp = 32768`` for uint16), computed in
  int32 and narrowed back with ONNX's wrap-around (two's complement) semantics: CAST int32->int8/int16
  truncates to the low bits (TOSA CAST pseudocode ``truncate``), uint8/uint16 are masked with
  BITWISE_AND first and then rescaled. int64 run-time values are carried as int32 (importer decision);
  int32 overflow is a TOSA REQUIRE (unpredictable), whereas ONNX wraps.
- Float deviations (all within ONNX's rtol 1e-3 / atol 1e-7; none for the ops not listed):
  * ``Div`` (float): TOSA 0.30 has no float division. ``a / b`` is ``a * RECIPROCAL(b)``: two roundings
    (error <= ~1.5 ulp instead of 0.5 ulp); if ``1/b`` is subnormal (|b| > 2^126 for fp32) precision
    is lost further.  ``Mean`` multiplies the sum by ``1/n``, ``Softsign`` and ``Celu`` likewise.
  * ``Sqrt``: ``RECIPROCAL(RSQRT(x))`` (two roundings; exact special values: +-0, +inf, NaN for
    negatives).  ``pow(x, 0.5)`` was rejected because it maps -0 to +0 and -inf to +inf.
  * ``Round``: exact (round half to even, signed zeros kept) by FLOOR/compare/SELECT.
  * Activations composed of EXP/LOG/TANH (Elu, Selu, Celu, Softplus, Mish, Gelu(tanh)) are exact
    compositions of the ONNX formulas up to the rounding of each TOSA op.
- Cast fp16 -> fp32 (not a TOSA 0.30 CAST mode) is composed exactly from integer CASTs (``_f16_to_f32``).
- Not supported (errors say "not supported"): the other float->float Casts (fp32 -> fp16/bf16 needs
  rounding at an exponent-dependent bit position, which TOSA 0.30 cannot express without one SELECT per
  exponent band; bf16 -> fp32 values exceed the int32 range of the integer split used for fp16), float Mod (a - b *
  floor(a / b) is not exact with a reciprocal), Gelu with approximate="none" (needs erf, which no
  finite composition of TOSA ops computes exactly), integer Pow, int32 base or exponent
  conversions that are not exact, uint32/uint64/double/string/float8/int4 tensors.
  Sin/Cos/Tan/Erf/... have no lowering at all, so the importer's support check reports them.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np
from xdsl.ir import SSAValue

from nnkiln.dialects.tosa.base import Kind, element_type, kind_of
from nnkiln.dialects.tosa.ops_activation import ClampOp, SigmoidOp, TanhOp
from nnkiln.dialects.tosa.ops_comparison import EqualOp, GreaterEqualOp, GreaterOp
from nnkiln.dialects.tosa.ops_elementwise_binary import (
    AddOp,
    ArithmeticRightShiftOp,
    BitwiseAndOp,
    BitwiseOrOp,
    BitwiseXorOp,
    IntDivOp,
    LogicalAndOp,
    LogicalLeftShiftOp,
    LogicalOrOp,
    LogicalXorOp,
    MaximumOp,
    MinimumOp,
    MulOp,
    PowOp,
    SubOp,
)
from nnkiln.dialects.tosa.ops_elementwise_ternary import SelectOp
from nnkiln.dialects.tosa.ops_elementwise_unary import (
    AbsOp,
    BitwiseNotOp,
    CeilOp,
    ExpOp,
    FloorOp,
    LogicalNotOp,
    LogOp,
    NegateOp,
    ReciprocalOp,
    RsqrtOp,
)
from nnkiln.dialects.tosa.ops_type_conversion import CastOp, RescaleOp
from nnkiln.frontends.common.broadcast import reshape, to_rank
from nnkiln.frontends.onnx.importer import NodeContext, TensorValue
from nnkiln.frontends.onnx.lowerings import lowering
from nnkiln.ir.elements import dtype_of

Result = list[TensorValue | SSAValue | np.ndarray]

_SMALL_INTS = (Kind.I8, Kind.I16, Kind.U8, Kind.U16)
_TOSA_INTS = (Kind.I8, Kind.I16, Kind.I32)

# ---------------------------------------------------------------------------------------------------
# small helpers


def _np_dtype(kind: Kind) -> np.dtype:
    return dtype_of(element_type(kind))


def _kind(v: SSAValue) -> Kind:
    k = kind_of(v.type)
    assert k is not None
    return k


def _shape(v: SSAValue) -> tuple[int, ...]:
    return tuple(v.type.get_shape())  # type: ignore[attr-defined]


def _emit(ctx: NodeContext, cls: type, operands: Sequence[SSAValue], kind: Kind, **attrs: object) -> SSAValue:
    return ctx.g.value(cls, list(operands), element_type(kind), **attrs)


def _const_array(ctx: NodeContext, arr: np.ndarray, kind: Kind) -> np.ndarray:
    """``arr`` converted to the numpy storage dtype of ``kind``; integers must fit."""
    arr = np.asarray(arr)
    dtype = _np_dtype(kind)
    if kind.is_int and arr.dtype.kind in "iub" and arr.size:
        lo, hi = kind.int_range
        if int(arr.min()) < lo or int(arr.max()) > hi:
            raise ctx.error(f"a constant does not fit {kind.value} (TOSA 0.30 has no 64-bit integers); not supported")
    if kind is Kind.BOOL:
        return arr.astype(np.bool_)
    return arr.astype(dtype)


def _const(ctx: NodeContext, arr: np.ndarray, kind: Kind) -> SSAValue:
    return ctx.g.const(_const_array(ctx, arr, kind))


def _scalar(ctx: NodeContext, value: float | int | bool, kind: Kind, rank: int) -> SSAValue:
    """A ``tosa.const`` holding ``value`` with shape ``[1] * rank``."""
    return _const(ctx, np.full((1,) * rank, value), kind)


def _value_kind(tvs: Sequence[TensorValue]) -> Kind:
    """The element kind of an op's operands: the first run-time operand's, else the first constant's."""
    for tv in tvs:
        if not tv.is_const:
            return tv.kind
    return tvs[0].kind


def _rescale(ctx: NodeContext, v: SSAValue, out_kind: Kind, input_zp: int = 0, output_zp: int = 0) -> SSAValue:
    """An exact (identity-scale) RESCALE: ``clip(in - input_zp + output_zp)``; multiplier 2^30, shift 30.

    RESCALE takes ranks 1..4 only, so other ranks are flattened around it.
    """
    shape = _shape(v)
    flat = shape if 1 <= len(shape) <= 4 else (int(np.prod(shape, dtype=np.int64)),)
    if flat != shape and (_kind(v) in (Kind.U8, Kind.U16) or out_kind in (Kind.U8, Kind.U16)):
        raise ctx.error(f"unsigned tensors of rank {len(shape)} are not supported (RESCALE takes ranks 1..4 "
                        "and RESHAPE has no unsigned types)")
    x = reshape(ctx.g, v, flat)
    y = _emit(ctx, RescaleOp, [x], out_kind, input_zp=input_zp, output_zp=output_zp, multiplier=[1 << 30],
              shift=[30], scale32=True, double_round=False, per_channel=False)
    return reshape(ctx.g, y, shape)


def _widen(ctx: NodeContext, v: SSAValue) -> SSAValue:
    """A run-time integer value as int32, exactly."""
    k = _kind(v)
    if k is Kind.I32:
        return v
    if k in (Kind.I8, Kind.I16, Kind.BOOL):
        return _emit(ctx, CastOp, [v], Kind.I32)
    if k is Kind.U8:
        return _emit(ctx, CastOp, [_rescale(ctx, v, Kind.I16)], Kind.I32)
    if k is Kind.U16:
        shifted = _emit(ctx, CastOp, [_rescale(ctx, v, Kind.I16, input_zp=32768)], Kind.I32)
        return _emit(ctx, AddOp, [shifted, _scalar(ctx, 32768, Kind.I32, len(_shape(v)))], Kind.I32)
    raise ctx.error(f"{k.value} values cannot be widened to int32; not supported")


def _narrow(ctx: NodeContext, v: SSAValue, kind: Kind) -> SSAValue:
    """An int32 value converted to ``kind`` with wrap-around (ONNX's two's complement semantics)."""
    if kind is Kind.I32:
        return v
    if kind in (Kind.I8, Kind.I16):
        return _emit(ctx, CastOp, [v], kind)  # CAST narrowing truncates to the low bits
    rank = len(_shape(v))
    if kind is Kind.U8:
        low = _emit(ctx, BitwiseAndOp, [v, _scalar(ctx, 0xFF, Kind.I32, rank)], Kind.I32)
        return _rescale(ctx, _emit(ctx, CastOp, [low], Kind.I16), Kind.U8)
    if kind is Kind.U16:
        low = _emit(ctx, BitwiseAndOp, [v, _scalar(ctx, 0xFFFF, Kind.I32, rank)], Kind.I32)
        centred = _emit(ctx, SubOp, [low, _scalar(ctx, 32768, Kind.I32, rank)], Kind.I32)
        return _rescale(ctx, _emit(ctx, CastOp, [centred], Kind.I16), Kind.U16, output_zp=32768)
    if kind is Kind.BOOL:
        return _emit(ctx, CastOp, [v], Kind.BOOL)
    raise ctx.error(f"int32 values cannot be narrowed to {kind.value}; not supported")


def _operands(ctx: NodeContext, tvs: Sequence[TensorValue], kind: Kind) -> list[SSAValue]:
    """The operands as IR values of equal rank in ``kind`` (constants converted with numpy; run-time
    integers of another kind widened to int32 when ``kind`` is int32)."""
    rank = max(tv.rank for tv in tvs)
    out = []
    for tv in tvs:
        if tv.is_const:
            arr = np.asarray(tv.const)
            out.append(_const(ctx, arr.reshape((1,) * (rank - arr.ndim) + arr.shape), kind))
            continue
        v = ctx.importer.materialize(tv)
        if tv.kind is not kind:
            if kind is Kind.I32 and (tv.kind.is_int or tv.kind is Kind.BOOL):
                v = _widen(ctx, v)
            elif kind.is_float and tv.kind in _TOSA_INTS:
                v = _emit(ctx, CastOp, [v], kind)
            else:
                raise ctx.error(f"operands of types {tv.kind.value} and {kind.value} are not supported")
        out.append(to_rank(ctx.g, v, rank))
    return out


def _all_const(ctx: NodeContext) -> bool:
    present = [v for v in ctx.inputs if v is not None]
    return bool(present) and all(v.is_const for v in present)


def _consts(ctx: NodeContext) -> list[np.ndarray]:
    return [np.asarray(v.const) for v in ctx.inputs if v is not None]


def _inputs(ctx: NodeContext) -> list[TensorValue]:
    return [v for v in ctx.inputs if v is not None]


def _require_float(ctx: NodeContext, kind: Kind) -> None:
    if not kind.is_float:
        raise ctx.error(f"{kind.value} inputs are not supported (TOSA 0.30 computes this op on floats only)")


def _int_domain(kind: Kind) -> Kind:
    """The kind integer arithmetic runs in: int32 for every integer kind."""
    return Kind.I32 if kind.is_int else kind


# ---------------------------------------------------------------------------------------------------
# building blocks in a fixed kind


def _bin(ctx: NodeContext, cls: type, a: SSAValue, b: SSAValue, kind: Kind | None = None) -> SSAValue:
    return _emit(ctx, cls, [a, b], kind if kind is not None else _kind(a))


def _un(ctx: NodeContext, cls: type, a: SSAValue) -> SSAValue:
    return _emit(ctx, cls, [a], _kind(a))


def _mul(ctx: NodeContext, a: SSAValue, b: SSAValue) -> SSAValue:
    return _emit(ctx, MulOp, [a, b], _kind(a))


def _cmp(ctx: NodeContext, cls: type, a: SSAValue, b: SSAValue) -> SSAValue:
    return _emit(ctx, cls, [a, b], Kind.BOOL)


def _select(ctx: NodeContext, c: SSAValue, a: SSAValue, b: SSAValue) -> SSAValue:
    return _emit(ctx, SelectOp, [c, a, b], _kind(a))


def _s(ctx: NodeContext, value: float | int, like: SSAValue) -> SSAValue:
    return _scalar(ctx, value, _kind(like), len(_shape(like)))


def _clamp(ctx: NodeContext, x: SSAValue, lo: float, hi: float) -> SSAValue:
    return _emit(ctx, ClampOp, [x], _kind(x), min_val=float(lo), max_val=float(hi))


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
    if _all_const(ctx):
        a, b = _consts(ctx)[:2]
        with np.errstate(all="ignore"):
            return [np.asarray(fold(a, b))]
    tvs = [ctx.input(0), ctx.input(1)]
    kind = _value_kind(tvs)
    if kind is Kind.BOOL:
        raise ctx.error("bool operands are not supported")
    dom = _int_domain(kind)
    a, b = _operands(ctx, tvs, dom)
    out = fn(a, b, dom)
    return [_narrow(ctx, out, kind) if dom is not kind else out]


@lowering("Add")
def Add(ctx: NodeContext) -> Result:
    """Add: ADD (integers in int32, wrapped back)."""
    return _arith(ctx, lambda a, b, k: _bin(ctx, AddOp, a, b), np.add)


@lowering("Sub")
def Sub(ctx: NodeContext) -> Result:
    """Sub: SUB (integers in int32, wrapped back)."""
    return _arith(ctx, lambda a, b, k: _bin(ctx, SubOp, a, b), np.subtract)


@lowering("Mul")
def Mul(ctx: NodeContext) -> Result:
    """Mul: MUL with shift 0 (int32 keeps the low 32 bits)."""
    return _arith(ctx, lambda a, b, k: _mul(ctx, a, b), np.multiply)


@lowering("Div")
def Div(ctx: NodeContext) -> Result:
    """Div: integers INTDIV (truncation toward zero, as ONNX); floats ``a * RECIPROCAL(b)`` (TOSA 0.30 has
    no float division; see the module docstring for the precision); a constant divisor is inverted with
    numpy at import (same rounding as RECIPROCAL)."""
    if _all_const(ctx):
        a, b = _consts(ctx)[:2]
        return [_np_div(a, b)]
    a_tv, b_tv = ctx.input(0), ctx.input(1)
    kind = _value_kind([a_tv, b_tv])
    if kind.is_float and b_tv.is_const:
        with np.errstate(divide="ignore"):
            inv = (np.asarray(1, dtype=_np_dtype(kind)) / np.asarray(b_tv.const).astype(_np_dtype(kind)))
        a, r = _operands(ctx, [a_tv, TensorValue.constant(np.asarray(inv))], kind)
        return [_mul(ctx, a, r)]

    def build(a: SSAValue, b: SSAValue, k: Kind) -> SSAValue:
        if k.is_float:
            return _mul(ctx, a, _un(ctx, ReciprocalOp, b))
        return _bin(ctx, IntDivOp, a, b)

    return _arith(ctx, build, _np_div)


def _np_pow(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    with np.errstate(all="ignore"):
        return np.power(a.astype(np.float64), b.astype(np.float64)).astype(a.dtype)


@lowering("Pow")
def Pow(ctx: NodeContext) -> Result:
    """Pow: POW (float base; an integer exponent is CAST to the base's float type, exact for
    |y| < 2^24). POW takes ranks 1..4: rank-0 operands are reshaped to [1]. Integer bases are not
    supported (TOSA has no integer power; a float round trip is not exact)."""
    if _all_const(ctx):
        a, b = _consts(ctx)[:2]
        return [_np_pow(a, b)]
    x_tv, y_tv = ctx.input(0), ctx.input(1)
    kind = x_tv.kind
    if not kind.is_float:
        raise ctx.error("integer bases are not supported (TOSA 0.30 POW is float-only and a float round trip is not exact)")
    if not y_tv.is_const and not (y_tv.kind.is_float and y_tv.kind is kind) and y_tv.kind not in _TOSA_INTS:
        raise ctx.error(f"exponents of type {y_tv.kind.value} with a {kind.value} base are not supported")
    x, y = _operands(ctx, [x_tv, y_tv], kind)
    shape = _shape(x)
    rank = len(shape)
    if rank == 0:
        x, y = reshape(ctx.g, x, (1,)), reshape(ctx.g, y, (1,))
    elif rank > 4:
        raise ctx.error(f"rank {rank} is not supported (TOSA POW takes ranks 1..4)")
    out = _bin(ctx, PowOp, x, y)
    return [reshape(ctx.g, out, ()) if rank == 0 else out]


def _variadic(ctx: NodeContext, cls: type, fold: Callable[[np.ndarray, np.ndarray], np.ndarray]) -> list[SSAValue | np.ndarray | TensorValue]:
    tvs = _inputs(ctx)
    if not tvs:
        raise ctx.error("at least one input is required")
    if all(tv.is_const for tv in tvs):
        acc = np.asarray(tvs[0].const)
        for tv in tvs[1:]:
            acc = fold(acc, np.asarray(tv.const))
        return [np.asarray(acc)]
    kind = _value_kind(tvs)
    if kind is Kind.BOOL:
        raise ctx.error("bool operands are not supported")
    if len(tvs) == 1:
        return [tvs[0]]
    dom = _int_domain(kind)
    vals = _operands(ctx, tvs, dom)
    acc = vals[0]
    for v in vals[1:]:
        acc = _emit(ctx, cls, [acc, v], dom)
    return [_narrow(ctx, acc, kind) if dom is not kind else acc]


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
    tvs = _inputs(ctx)
    if tvs and all(tv.is_const for tv in tvs):
        acc = np.asarray(tvs[0].const)
        for tv in tvs[1:]:
            acc = acc + np.asarray(tv.const)
        return [(acc / len(tvs)).astype(acc.dtype)]
    (total,) = _variadic(ctx, AddOp, np.add)
    if len(tvs) == 1:
        return [total]
    assert isinstance(total, SSAValue)
    _require_float(ctx, _kind(total))
    return [_mul(ctx, total, _s(ctx, 1.0 / len(tvs), total))]


def _np_mod(a: np.ndarray, b: np.ndarray, fmod: int) -> np.ndarray:
    with np.errstate(all="ignore"):
        if np.result_type(a, b).kind in "iu":
            b_safe = np.where(b == 0, 1, b)
            return (np.fmod(a, b_safe) if fmod else np.mod(a, b_safe)).astype(np.result_type(a, b))
        return np.fmod(a, b) if fmod else np.mod(a, b)


@lowering("Mod")
def Mod(ctx: NodeContext) -> Result:
    """Mod (integers): ``r = a - b * INTDIV(a, b)`` (fmod=1: sign of a); fmod=0 adds ``b`` where ``r != 0``
    and ``r``, ``b`` have different signs (sign of b). Float Mod is not supported (not exact in TOSA)."""
    fmod = int(ctx.attr("fmod", 0))
    if _all_const(ctx):
        a, b = _consts(ctx)[:2]
        return [_np_mod(a, b, fmod)]
    kind = _value_kind([ctx.input(0), ctx.input(1)])
    if kind.is_float:
        raise ctx.error("float Mod is not supported: a - b * floor(a / b) is not exact without a float division")

    def build(a: SSAValue, b: SSAValue, k: Kind) -> SSAValue:
        q = _bin(ctx, IntDivOp, a, b)
        r = _bin(ctx, SubOp, a, _mul(ctx, b, q))
        if fmod:
            return r
        zero = _s(ctx, 0, r)
        nonzero = _un(ctx, LogicalNotOp, _cmp(ctx, EqualOp, r, zero))
        signs_differ = _bin(ctx, LogicalXorOp, _cmp(ctx, GreaterOp, zero, r), _cmp(ctx, GreaterOp, zero, b))
        fix = _bin(ctx, LogicalAndOp, nonzero, signs_differ)
        return _select(ctx, fix, _bin(ctx, AddOp, r, b), r)

    return _arith(ctx, build, lambda a, b: _np_mod(a, b, fmod))


# ---------------------------------------------------------------------------------------------------
# unary math


def _unary(ctx: NodeContext, fold: Callable[[np.ndarray], np.ndarray],
           build: Callable[[SSAValue, Kind], SSAValue], float_only: bool = True) -> Result:
    if _all_const(ctx):
        x = _consts(ctx)[0]
        with np.errstate(all="ignore"):
            return [np.asarray(fold(x)).astype(x.dtype) if x.dtype != np.bool_ else np.asarray(fold(x))]
    tv = ctx.input(0)
    if float_only:
        _require_float(ctx, tv.kind)
    return [build(ctx.tensor(0), tv.kind)]


def _float_unary(name: str, cls: type, fold: Callable[[np.ndarray], np.ndarray]) -> None:
    def lower(ctx: NodeContext) -> Result:
        return _unary(ctx, fold, lambda x, k: _un(ctx, cls, x))

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
            return _un(ctx, NegateOp, x)
        return _narrow(ctx, _un(ctx, NegateOp, _widen(ctx, x)), k)

    return _unary(ctx, np.negative, build, float_only=False)


@lowering("Abs")
def Abs(ctx: NodeContext) -> Result:
    """Abs: ABS (int8/int16 via int32, wrapped back; unsigned values are their own absolute value)."""
    def build(x: SSAValue, k: Kind) -> SSAValue:
        if k in (Kind.U8, Kind.U16):
            return x
        if k.is_float or k is Kind.I32:
            return _un(ctx, AbsOp, x)
        return _narrow(ctx, _un(ctx, AbsOp, _widen(ctx, x)), k)

    return _unary(ctx, np.abs, build, float_only=False)


@lowering("Sqrt")
def Sqrt(ctx: NodeContext) -> Result:
    """Sqrt: ``RECIPROCAL(RSQRT(x))`` — two roundings; +-0, +inf and NaN (negatives) are exact."""
    return _unary(ctx, np.sqrt, lambda x, k: _un(ctx, ReciprocalOp, _un(ctx, RsqrtOp, x)))


def _round_half_even(ctx: NodeContext, x: SSAValue) -> SSAValue:
    """Exact round half to even: ``f = FLOOR(x)``, ``d = x - f`` (exact), round up when ``d > 0.5`` or
    ``d == 0.5`` and ``f`` is odd; a zero result takes the sign of ``x`` (``x * 0``)."""
    f = _un(ctx, FloorOp, x)
    d = _bin(ctx, SubOp, x, f)
    half = _s(ctx, 0.5, x)
    half_f = _un(ctx, FloorOp, _mul(ctx, f, half))
    odd = _cmp(ctx, GreaterOp, _bin(ctx, SubOp, f, _bin(ctx, AddOp, half_f, half_f)), _s(ctx, 0.0, x))
    tie_up = _bin(ctx, LogicalAndOp, _cmp(ctx, EqualOp, d, half), odd)
    up = _bin(ctx, LogicalOrOp, _cmp(ctx, GreaterOp, d, half), tie_up)
    r = _select(ctx, up, _bin(ctx, AddOp, f, _s(ctx, 1.0, x)), f)
    zero = _s(ctx, 0.0, x)
    return _select(ctx, _cmp(ctx, EqualOp, r, zero), _mul(ctx, x, zero), r)


@lowering("Round")
def Round(ctx: NodeContext) -> Result:
    """Round: round half to even, composed exactly (see ``_round_half_even``)."""
    return _unary(ctx, np.round, lambda x, k: _round_half_even(ctx, x))


@lowering("Sign")
def Sign(ctx: NodeContext) -> Result:
    """Sign: ``x > 0 ? 1 : (x < 0 ? -1 : x * 0)`` (floats: NaN stays NaN, zeros keep their sign);
    integers compare in int32."""
    def build(x: SSAValue, k: Kind) -> SSAValue:
        if k.is_float:
            zero = _s(ctx, 0.0, x)
            inner = _select(ctx, _cmp(ctx, GreaterOp, zero, x), _s(ctx, -1.0, x), _mul(ctx, x, zero))
            return _select(ctx, _cmp(ctx, GreaterOp, x, zero), _s(ctx, 1.0, x), inner)
        w = _widen(ctx, x)
        zero = _s(ctx, 0, w)
        inner = _select(ctx, _cmp(ctx, GreaterOp, zero, w), _s(ctx, -1, w), zero)
        out = _select(ctx, _cmp(ctx, GreaterOp, w, zero), _s(ctx, 1, w), inner)
        return _narrow(ctx, out, k)

    return _unary(ctx, np.sign, build, float_only=False)


# ---------------------------------------------------------------------------------------------------
# activations


@lowering("Relu")
def Relu(ctx: NodeContext) -> Result:
    """Relu: floats CLAMP(0, +inf); int8/int16 CLAMP(0, max); int32 MAXIMUM(x, 0)."""
    def build(x: SSAValue, k: Kind) -> SSAValue:
        if k.is_float:
            return _clamp(ctx, x, 0.0, math.inf)
        if k in (Kind.I8, Kind.I16):
            return _emit(ctx, ClampOp, [x], k, min_val=0, max_val=k.int_range[1])
        if k is Kind.I32:
            return _bin(ctx, MaximumOp, x, _s(ctx, 0, x))
        raise ctx.error(f"{k.value} inputs are not supported")

    return _unary(ctx, lambda x: np.maximum(x, 0), build, float_only=False)


@lowering("LeakyRelu")
def LeakyRelu(ctx: NodeContext) -> Result:
    """LeakyRelu: ``SELECT(x >= 0, x, x * alpha)``."""
    alpha = float(ctx.attr("alpha", 0.01))
    return _unary(ctx, lambda x: np.where(x >= 0, x, x * np.asarray(alpha, x.dtype)),
                  lambda x, k: _select(ctx, _cmp(ctx, GreaterEqualOp, x, _s(ctx, 0.0, x)), x,
                                       _mul(ctx, x, _s(ctx, alpha, x))))


@lowering("PRelu")
def PRelu(ctx: NodeContext) -> Result:
    """PRelu: ``SELECT(x < 0, x * slope, x)`` (slope broadcast to x)."""
    if _all_const(ctx):
        x, s = _consts(ctx)[:2]
        return [np.where(x < 0, x * s, x).astype(x.dtype)]
    tvs = [ctx.input(0), ctx.input(1)]
    kind = tvs[0].kind
    if not (kind.is_float or kind is Kind.I32):
        raise ctx.error(f"{kind.value} inputs are not supported")
    x, s = _operands(ctx, tvs, kind)
    zero = _s(ctx, 0, x)
    return [_select(ctx, _cmp(ctx, GreaterOp, zero, x), _mul(ctx, x, s), x)]


def _expm1_times(ctx: NodeContext, x: SSAValue, factor: float) -> SSAValue:
    """``(EXP(x) - 1) * factor``."""
    e = _bin(ctx, SubOp, _un(ctx, ExpOp, x), _s(ctx, 1.0, x))
    return e if factor == 1.0 else _mul(ctx, e, _s(ctx, factor, x))


@lowering("Elu")
def Elu(ctx: NodeContext) -> Result:
    """Elu: ``SELECT(x > 0, x, (EXP(x) - 1) * alpha)``."""
    alpha = float(ctx.attr("alpha", 1.0))
    return _unary(ctx, lambda x: np.where(x > 0, x, (np.exp(x) - 1) * alpha),
                  lambda x, k: _select(ctx, _cmp(ctx, GreaterOp, x, _s(ctx, 0.0, x)), x, _expm1_times(ctx, x, alpha)))


@lowering("Selu")
def Selu(ctx: NodeContext) -> Result:
    """Selu: ``SELECT(x > 0, x * gamma, (EXP(x) - 1) * (alpha * gamma))``."""
    alpha = float(ctx.attr("alpha", 1.67326319217681884765625))
    gamma = float(ctx.attr("gamma", 1.05070102214813232421875))
    ag = float(np.float32(alpha) * np.float32(gamma))
    return _unary(ctx, lambda x: np.where(x > 0, x * gamma, (np.exp(x) - 1) * ag),
                  lambda x, k: _select(ctx, _cmp(ctx, GreaterOp, x, _s(ctx, 0.0, x)), _mul(ctx, x, _s(ctx, gamma, x)),
                                       _expm1_times(ctx, x, ag)))


@lowering("Celu")
def Celu(ctx: NodeContext) -> Result:
    """Celu: ``MAXIMUM(x, 0) + MINIMUM(0, (EXP(x * (1/alpha)) - 1) * alpha)``."""
    alpha = float(ctx.attr("alpha", 1.0))

    def build(x: SSAValue, k: Kind) -> SSAValue:
        zero = _s(ctx, 0.0, x)
        scaled = x if alpha == 1.0 else _mul(ctx, x, _s(ctx, 1.0 / alpha, x))
        neg = _bin(ctx, MinimumOp, zero, _expm1_times(ctx, scaled, alpha))
        return _bin(ctx, AddOp, _bin(ctx, MaximumOp, x, zero), neg)

    return _unary(ctx, lambda x: np.maximum(x, 0) + np.minimum(0, alpha * (np.exp(x / alpha) - 1)), build)


@lowering("ThresholdedRelu")
def ThresholdedRelu(ctx: NodeContext) -> Result:
    """ThresholdedRelu: ``SELECT(x > alpha, x, 0)``."""
    alpha = float(ctx.attr("alpha", 1.0))
    return _unary(ctx, lambda x: np.where(x > alpha, x, 0),
                  lambda x, k: _select(ctx, _cmp(ctx, GreaterOp, x, _s(ctx, alpha, x)), x, _s(ctx, 0.0, x)))


def _hard_sigmoid(ctx: NodeContext, x: SSAValue, alpha: float, beta: float) -> SSAValue:
    lin = _bin(ctx, AddOp, _mul(ctx, x, _s(ctx, alpha, x)), _s(ctx, beta, x))
    return _clamp(ctx, lin, 0.0, 1.0)


@lowering("HardSigmoid")
def HardSigmoid(ctx: NodeContext) -> Result:
    """HardSigmoid: ``CLAMP(x * alpha + beta, 0, 1)``."""
    alpha = float(ctx.attr("alpha", 0.2))
    beta = float(ctx.attr("beta", 0.5))
    return _unary(ctx, lambda x: np.clip(x * alpha + beta, 0, 1),
                  lambda x, k: _hard_sigmoid(ctx, x, alpha, beta))


@lowering("HardSwish")
def HardSwish(ctx: NodeContext) -> Result:
    """HardSwish: ``x * CLAMP(x * (1/6) + 0.5, 0, 1)``."""
    return _unary(ctx, lambda x: x * np.clip(x / 6 + 0.5, 0, 1),
                  lambda x, k: _mul(ctx, x, _hard_sigmoid(ctx, x, 1.0 / 6.0, 0.5)))


def _softplus(ctx: NodeContext, x: SSAValue) -> SSAValue:
    return _un(ctx, LogOp, _bin(ctx, AddOp, _un(ctx, ExpOp, x), _s(ctx, 1.0, x)))


@lowering("Softplus")
def Softplus(ctx: NodeContext) -> Result:
    """Softplus: ``LOG(EXP(x) + 1)`` (the ONNX formula; overflows to inf for large x like ONNX's)."""
    return _unary(ctx, lambda x: np.log(np.exp(x) + 1), lambda x, k: _softplus(ctx, x))


@lowering("Softsign")
def Softsign(ctx: NodeContext) -> Result:
    """Softsign: ``x * RECIPROCAL(ABS(x) + 1)``."""
    return _unary(ctx, lambda x: x / (1 + np.abs(x)),
                  lambda x, k: _mul(ctx, x, _un(ctx, ReciprocalOp, _bin(ctx, AddOp, _un(ctx, AbsOp, x), _s(ctx, 1.0, x)))))


@lowering("Mish")
def Mish(ctx: NodeContext) -> Result:
    """Mish: ``x * TANH(LOG(EXP(x) + 1))``."""
    return _unary(ctx, lambda x: x * np.tanh(np.log(np.exp(x) + 1)),
                  lambda x, k: _mul(ctx, x, _un(ctx, TanhOp, _softplus(ctx, x))))


@lowering("Gelu")
def Gelu(ctx: NodeContext) -> Result:
    """Gelu: approximate="tanh": ``0.5 * x * (1 + TANH(sqrt(2/pi) * (x + 0.044715 * x^3)))``;
    approximate="none" needs erf and is not supported."""
    approx = ctx.attr("approximate", "none")
    if approx != "tanh":
        raise ctx.error(f'approximate="{approx}" is not supported: erf has no exact composition of TOSA 0.30 ops')
    c = math.sqrt(2.0 / math.pi)

    def fold(x: np.ndarray) -> np.ndarray:
        return 0.5 * x * (1 + np.tanh(c * (x + 0.044715 * x ** 3)))

    def build(x: SSAValue, k: Kind) -> SSAValue:
        x3 = _mul(ctx, _mul(ctx, x, x), x)
        inner = _mul(ctx, _bin(ctx, AddOp, x, _mul(ctx, x3, _s(ctx, 0.044715, x))), _s(ctx, c, x))
        t = _bin(ctx, AddOp, _un(ctx, TanhOp, inner), _s(ctx, 1.0, x))
        return _mul(ctx, _mul(ctx, x, _s(ctx, 0.5, x)), t)

    return _unary(ctx, fold, build)


# ---------------------------------------------------------------------------------------------------
# Clip


def _float_limits(kind: Kind) -> tuple[float, float]:
    fi = np.finfo(_np_dtype(kind)) if kind is not Kind.BF16 else None
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
    consts = all(b is None or (b.is_const and np.asarray(b.const).size == 1) for b in (lo_tv, hi_tv))
    x = ctx.tensor(0)
    if consts:
        lo = None if lo_tv is None else np.asarray(lo_tv.const).reshape(-1)[0]
        hi = None if hi_tv is None else np.asarray(hi_tv.const).reshape(-1)[0]
        if kind.is_float:
            lo_f = -math.inf if lo is None else float(lo)
            hi_f = math.inf if hi is None else float(hi)
            if not (math.isnan(lo_f) or math.isnan(hi_f)) and lo_f <= hi_f:
                return [_clamp(ctx, x, lo_f, hi_f)]
        elif kind in (Kind.I8, Kind.I16):
            rlo, rhi = kind.int_range
            lo_i = rlo if lo is None else max(rlo, min(rhi, int(lo)))
            hi_i = rhi if hi is None else max(rlo, min(rhi, int(hi)))
            lo_i = min(lo_i, hi_i)  # lo > hi: every value becomes hi
            return [_emit(ctx, ClampOp, [x], kind, min_val=lo_i, max_val=hi_i)]
    dom = _int_domain(kind)
    (xv,) = _operands(ctx, [tv], dom)
    rank = tv.rank
    for b, cls in ((lo_tv, MaximumOp), (hi_tv, MinimumOp)):
        if b is None:
            continue
        if b.is_const:
            arr = np.asarray(b.const)
            if dom.is_int:
                lim_lo, lim_hi = dom.int_range
                arr = np.clip(arr.astype(np.int64), lim_lo, lim_hi)
            bv = _const(ctx, arr.reshape((1,) * (rank - arr.ndim) + arr.shape) if arr.ndim <= rank else arr, dom)
        else:
            (bv,) = _operands(ctx, [b], dom)
        xv, bv = (to_rank(ctx.g, xv, len(_shape(bv))), to_rank(ctx.g, bv, len(_shape(xv))))
        xv = _emit(ctx, cls, [xv, bv], dom)
    return [_narrow(ctx, xv, kind) if dom is not kind else xv]


# ---------------------------------------------------------------------------------------------------
# logic and comparison


def _logical(ctx: NodeContext, cls: type, fold: Callable[[np.ndarray, np.ndarray], np.ndarray]) -> Result:
    if _all_const(ctx):
        a, b = _consts(ctx)[:2]
        return [np.asarray(fold(a.astype(bool), b.astype(bool)))]
    tvs = [ctx.input(0), ctx.input(1)]
    if _value_kind(tvs) is not Kind.BOOL:
        raise ctx.error("non-bool inputs are not supported")
    a, b = _operands(ctx, tvs, Kind.BOOL)
    return [_emit(ctx, cls, [a, b], Kind.BOOL)]


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
    if _all_const(ctx):
        return [np.logical_not(_consts(ctx)[0])]
    if ctx.input(0).kind is not Kind.BOOL:
        raise ctx.error("non-bool inputs are not supported")
    return [_un(ctx, LogicalNotOp, ctx.tensor(0))]


def _compare(ctx: NodeContext, cls: type, swap: bool, fold: Callable[[np.ndarray, np.ndarray], np.ndarray]) -> Result:
    if _all_const(ctx):
        a, b = _consts(ctx)[:2]
        return [np.asarray(fold(a, b))]
    tvs = [ctx.input(0), ctx.input(1)]
    kind = _value_kind(tvs)
    if kind is Kind.BOOL:
        if cls is not EqualOp:
            raise ctx.error("bool operands are not supported")
        a, b = _operands(ctx, tvs, Kind.BOOL)
        return [_un(ctx, LogicalNotOp, _emit(ctx, LogicalXorOp, [a, b], Kind.BOOL))]
    a, b = _operands(ctx, tvs, _int_domain(kind))
    if swap:
        a, b = b, a
    return [_cmp(ctx, cls, a, b)]


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
    if _all_const(ctx):
        c, a, b = _consts(ctx)[:3]
        return [np.where(c, a, b)]
    cond = ctx.input(0)
    tvs = [ctx.input(1), ctx.input(2)]
    kind = _value_kind(tvs)
    dom = Kind.I32 if kind in (Kind.U8, Kind.U16) else kind
    rank = max(cond.rank, tvs[0].rank, tvs[1].rank)
    (c,) = _operands(ctx, [cond], Kind.BOOL)
    c = to_rank(ctx.g, c, rank)
    a, b = _operands(ctx, tvs, dom)
    a, b = to_rank(ctx.g, a, rank), to_rank(ctx.g, b, rank)
    out = _emit(ctx, SelectOp, [c, a, b], dom)
    return [_narrow(ctx, out, kind) if dom is not kind else out]


@lowering("IsNaN")
def IsNaN(ctx: NodeContext) -> Result:
    """IsNaN: ``NOT(EQUAL(x, x))``."""
    if _all_const(ctx):
        return [np.isnan(_consts(ctx)[0])]
    _require_float(ctx, ctx.input(0).kind)
    x = ctx.tensor(0)
    return [_un(ctx, LogicalNotOp, _cmp(ctx, EqualOp, x, x))]


@lowering("IsInf")
def IsInf(ctx: NodeContext) -> Result:
    """IsInf: ``EQUAL(x, +inf)`` / ``EQUAL(x, -inf)`` per detect_positive/detect_negative (OR of both)."""
    pos = int(ctx.attr("detect_positive", 1))
    neg = int(ctx.attr("detect_negative", 1))

    def fold(x: np.ndarray) -> np.ndarray:
        return (np.isposinf(x) & bool(pos)) | (np.isneginf(x) & bool(neg))

    if _all_const(ctx):
        return [fold(_consts(ctx)[0])]
    tv = ctx.input(0)
    _require_float(ctx, tv.kind)
    if not pos and not neg:
        return [np.zeros(tv.shape, dtype=np.bool_)]
    x = ctx.tensor(0)
    parts = []
    if pos:
        parts.append(_cmp(ctx, EqualOp, x, _s(ctx, math.inf, x)))
    if neg:
        parts.append(_cmp(ctx, EqualOp, x, _s(ctx, -math.inf, x)))
    return [parts[0] if len(parts) == 1 else _emit(ctx, LogicalOrOp, parts, Kind.BOOL)]


# ---------------------------------------------------------------------------------------------------
# bit operations


def _bitwise(ctx: NodeContext, cls: type, fold: Callable[[np.ndarray, np.ndarray], np.ndarray]) -> Result:
    if _all_const(ctx):
        a, b = _consts(ctx)[:2]
        return [np.asarray(fold(a, b))]
    tvs = [ctx.input(0), ctx.input(1)]
    kind = _value_kind(tvs)
    if not kind.is_int:
        raise ctx.error(f"{kind.value} inputs are not supported")
    dom = kind if kind in _TOSA_INTS else Kind.I32
    a, b = _operands(ctx, tvs, dom)
    out = _emit(ctx, cls, [a, b], dom)
    return [_narrow(ctx, out, kind) if dom is not kind else out]


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
    if _all_const(ctx):
        return [np.invert(_consts(ctx)[0])]
    tv = ctx.input(0)
    if not tv.kind.is_int:
        raise ctx.error(f"{tv.kind.value} inputs are not supported")
    x = ctx.tensor(0)
    if tv.kind in _TOSA_INTS:
        return [_un(ctx, BitwiseNotOp, x)]
    return [_narrow(ctx, _un(ctx, BitwiseNotOp, _widen(ctx, x)), tv.kind)]


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
    if _all_const(ctx):
        x, y = _consts(ctx)[:2]
        return [_np_bitshift(x, y, left)]
    tvs = [ctx.input(0), ctx.input(1)]
    kind = _value_kind(tvs)
    if kind not in _WIDTH:
        raise ctx.error(f"{kind.value} inputs are not supported")
    width = _WIDTH[kind]
    x, y = _operands(ctx, tvs, Kind.I32)
    zero = _s(ctx, 0, y)
    bad = _bin(ctx, LogicalOrOp, _cmp(ctx, GreaterOp, zero, y), _cmp(ctx, GreaterEqualOp, y, _s(ctx, width, y)))
    if left:
        ys = _select(ctx, bad, zero, y)
        shifted = _emit(ctx, LogicalLeftShiftOp, [x, ys], Kind.I32)
        zero_x = _s(ctx, 0, x)
        out = _select(ctx, to_rank(ctx.g, bad, len(_shape(shifted))), zero_x, shifted)
    else:
        ys = _select(ctx, bad, _s(ctx, width - 1, y), y)
        out = _emit(ctx, ArithmeticRightShiftOp, [x, ys], Kind.I32, round=False)
    return [_narrow(ctx, out, kind)]


# ---------------------------------------------------------------------------------------------------
# Cast, CastLike


def _onnx_target(ctx: NodeContext, to: int) -> tuple[Kind, np.dtype]:
    import onnx
    from onnx import helper

    from nnkiln.frontends.onnx.importer import kind_of_onnx_type

    kind = kind_of_onnx_type(to)
    if kind is None:
        name = onnx.TensorProto.DataType.Name(to) if to in onnx.TensorProto.DataType.values() else str(to)
        raise ctx.error(f"casting to {name} is not supported (no TOSA 0.30 equivalent)")
    return kind, np.dtype(helper.tensor_dtype_to_np_dtype(to))


def _f16_to_f32(ctx: NodeContext, x: SSAValue) -> SSAValue:
    """fp16 -> fp32 exactly without a float->float CAST: split ``x`` into integer pieces.

    ``n1 = CAST<i32>(x)`` (an integer within 1 of x; |x| <= 65504 fits), ``f1 = x - n1`` (exact in fp16,
    a multiple of 2^-24 with |f1| < 1), ``m2 = f1 * 2^15`` (exact, < 32768), ``n2 = CAST<i32>(m2)``,
    ``f2 = m2 - n2`` (a multiple of 2^-9), ``n3 = f2 * 2^9`` (an integer). Then
    ``x = n1 + n2 * 2^-15 + n3 * 2^-24`` and every partial sum is representable in fp32 (for |x| >= 1,
    f1 is a multiple of 2^-10 so n3 = 0; for |x| < 1 the sum spans < 24 bits), so the fp32 additions
    are exact. NaN, +-inf and -0 (lost by the integer split) are restored with SELECT.
    """
    rank = len(_shape(x))

    def c16(v: float) -> SSAValue:
        return _scalar(ctx, v, Kind.F16, rank)

    def c32(v: float) -> SSAValue:
        return _scalar(ctx, v, Kind.F32, rank)

    n1 = _emit(ctx, CastOp, [x], Kind.I32)
    f1 = _bin(ctx, SubOp, x, _emit(ctx, CastOp, [n1], Kind.F16))
    m2 = _mul(ctx, f1, c16(2.0 ** 15))
    n2 = _emit(ctx, CastOp, [m2], Kind.I32)
    f2 = _bin(ctx, SubOp, m2, _emit(ctx, CastOp, [n2], Kind.F16))
    n3 = _emit(ctx, CastOp, [_mul(ctx, f2, c16(2.0 ** 9))], Kind.I32)
    r = _emit(ctx, CastOp, [n1], Kind.F32)
    r = _bin(ctx, AddOp, r, _mul(ctx, _emit(ctx, CastOp, [n2], Kind.F32), c32(2.0 ** -15)))
    r = _bin(ctx, AddOp, r, _mul(ctx, _emit(ctx, CastOp, [n3], Kind.F32), c32(2.0 ** -24)))
    r = _select(ctx, _un(ctx, LogicalNotOp, _cmp(ctx, EqualOp, x, x)), c32(math.nan), r)
    r = _select(ctx, _cmp(ctx, EqualOp, x, c16(math.inf)), c32(math.inf), r)
    r = _select(ctx, _cmp(ctx, EqualOp, x, c16(-math.inf)), c32(-math.inf), r)
    neg_zero = _bin(ctx, LogicalAndOp, _cmp(ctx, EqualOp, x, c16(0.0)),
                    _cmp(ctx, GreaterOp, c16(0.0), _un(ctx, ReciprocalOp, x)))
    return _select(ctx, neg_zero, c32(-0.0), r)


def _np_cast(x: np.ndarray, dtype: np.dtype) -> np.ndarray:
    if dtype == np.bool_:
        return x.astype(np.bool_)
    if x.dtype.kind == "f" and dtype.kind in "iu":
        with np.errstate(invalid="ignore"):
            return np.trunc(x.astype(np.float64)).astype(dtype)
    return x.astype(dtype)


def _cast(ctx: NodeContext, tv: TensorValue, target: Kind, dtype: np.dtype) -> Result:
    """ONNX Cast to ``target`` (exact; see the module docstring for what is not supported)."""
    if tv.is_const:
        return [_np_cast(np.asarray(tv.const), dtype)]
    src = tv.kind
    x = ctx.importer.materialize(tv)
    if src is target:
        return [x]
    if src is Kind.F16 and target is Kind.F32:
        return [_f16_to_f32(ctx, x)]
    if src.is_float and target.is_float:
        raise ctx.error(f"casting {src.value} to {target.value} is not supported (not a TOSA 0.30 CAST mode; "
                        "no exact composition)")
    if target is Kind.BOOL:
        if src.is_float:
            return [_un(ctx, LogicalNotOp, _cmp(ctx, EqualOp, x, _s(ctx, 0.0, x)))]
        v = x if src in _TOSA_INTS else _widen(ctx, x)
        return [_emit(ctx, CastOp, [v], Kind.BOOL)]
    if src.is_float:
        # ONNX truncates toward zero; CAST rounds to nearest, so round first: CEIL below 0, FLOOR above.
        t = _select(ctx, _cmp(ctx, GreaterOp, _s(ctx, 0.0, x), x), _un(ctx, CeilOp, x), _un(ctx, FloorOp, x))
        if target in _TOSA_INTS:
            return [_emit(ctx, CastOp, [t], target)]
        return [_narrow(ctx, _emit(ctx, CastOp, [t], Kind.I32), target)]
    # src is an integer or bool
    if target.is_float:
        v = x if src in _TOSA_INTS else _widen(ctx, x)
        return [_emit(ctx, CastOp, [v], target)]
    if src in _TOSA_INTS + (Kind.BOOL,) and target in _TOSA_INTS:
        return [_emit(ctx, CastOp, [x], target)]
    return [_narrow(ctx, _widen(ctx, x), target)]


@lowering("Cast")
def Cast(ctx: NodeContext) -> Result:
    """Cast: CAST, with ONNX's float->int truncation composed as ``SELECT(x < 0, CEIL, FLOOR)`` before
    CAST (exact), int64 targets carried as int32, float->bool as ``x != 0``, bool->float via int32.
    fp16->fp32 is composed exactly (``_f16_to_f32``); other float<->float casts are not supported
    (see the module docstring)."""
    to = ctx.attr("to")
    if to is None:
        raise ctx.error("attribute 'to' is required")
    ctx.attr("saturate")
    ctx.attr("round_mode")
    target, dtype = _onnx_target(ctx, int(to))
    return _cast(ctx, ctx.input(0), target, dtype)


@lowering("CastLike")
def CastLike(ctx: NodeContext) -> Result:
    """CastLike: Cast to the element type of input 1."""
    ctx.attr("saturate")
    ctx.attr("round_mode")
    like = ctx.input(1)
    dtype = np.asarray(like.const).dtype if like.is_const else _np_dtype(like.kind)
    return _cast(ctx, ctx.input(0), like.kind, np.dtype(dtype))
