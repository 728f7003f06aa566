"""Reference kernels of the elementwise operators: binary (spec §2.5), unary (§2.6), ternary (§2.7)
and comparison (§2.8).

Decisions:
- Broadcasting: operands have equal ranks (checked by the verifier), so numpy broadcasting is exactly
  ``apply_broadcast`` (§3.2.4).
- Integer arithmetic runs in int64, then is range-checked (REQUIRE) or truncated as the pseudocode says.
- fp16 and bf16 values are computed in float32 and rounded once to the storage type (round to nearest
  even). For + − × and ÷ of 16-bit formats this equals the correctly rounded result; for the other
  functions the spec sets no precision requirement (§1.7, MI).
- MAXIMUM/MINIMUM follow ``apply_max``/``apply_min`` literally: NaN if either operand is NaN, else
  ``a >= b ? a : b`` (so ``max(-0, +0)`` is ``-0``, the first operand) and ``a < b ? a : b``.
- Comparisons of a NaN are false; ``-0 == +0`` (Table 5).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from nnkiln.kinds import Kind
from nnkiln.reference.registry import KernelCall, kernel, unpredictable_if
from nnkiln.reference.scaling import apply_lookup, count_leading_zeros, rounding_right_shift

_INT32_MIN = -(1 << 31)
_INT32_MAX = (1 << 31) - 1


def _wide(x: np.ndarray) -> np.ndarray:
    return x.astype(np.int64)


def _f32(x: np.ndarray) -> np.ndarray:
    return x if x.dtype == np.float32 else x.astype(np.float32)


def _float_op(call: KernelCall, fn: Callable[..., np.ndarray]) -> list[np.ndarray]:
    """Apply ``fn`` to the inputs in float32 and round the result to the output storage type."""
    with np.errstate(all="ignore"):
        res = fn(*[_f32(x) for x in call.inputs])
    return [np.asarray(res).astype(call.out_dtypes[0], copy=False)]


def _range(call: KernelCall, slot: int = 0) -> tuple[int, int]:
    return call.out_kinds[slot].int_range


def _checked(call: KernelCall, value: np.ndarray, rule: str) -> np.ndarray:
    """REQUIRE the int64 ``value`` fits the output type, then narrow it."""
    lo, hi = _range(call)
    unpredictable_if((value < lo) | (value > hi), call.name, rule)
    return value.astype(call.out_dtypes[0])


def _is_float(call: KernelCall) -> bool:
    return call.out_kinds[0].is_float


# ----------------------------------------------------------------------------------------------
# §2.5 binary


@kernel("tosa.add")
def add(call: KernelCall) -> list[np.ndarray]:
    """ADD (§2.5.1): ``apply_add``; int32 overflow is unpredictable."""
    if _is_float(call):
        return _float_op(call, np.add)
    a, b = call.inputs
    return [_checked(call, _wide(a) + _wide(b), "apply_add: result fits int32")]


@kernel("tosa.sub")
def sub(call: KernelCall) -> list[np.ndarray]:
    """SUB (§2.5.16): ``apply_sub``; int32 overflow is unpredictable."""
    if _is_float(call):
        return _float_op(call, np.subtract)
    a, b = call.inputs
    return [_checked(call, _wide(a) - _wide(b), "apply_sub: result fits int32")]


@kernel("tosa.arithmetic_right_shift")
def arithmetic_right_shift(call: KernelCall) -> list[np.ndarray]:
    """ARITHMETIC_RIGHT_SHIFT (§2.5.2): floor shift, +1 when ``round`` and bit (shift-1) is set."""
    a, b = (_wide(x) for x in call.inputs)
    bits = call.out_kinds[0].bits
    unpredictable_if((b < 0) | (b > bits - 1), call.name, f"0 <= shift <= {bits - 1} for {call.out_kinds[0].value}")
    result = a >> b
    if call.attrs.get("round", False):
        result = result + ((b > 0) & (((a >> np.maximum(b - 1, 0)) & 1) != 0))
    lo, hi = _range(call)
    return [np.clip(result, lo, hi).astype(call.out_dtypes[0])]


@kernel("tosa.bitwise_and")
def bitwise_and(call: KernelCall) -> list[np.ndarray]:
    """BITWISE_AND (§2.5.3)."""
    a, b = call.inputs
    return [np.bitwise_and(a, b).astype(call.out_dtypes[0], copy=False)]


@kernel("tosa.bitwise_or")
def bitwise_or(call: KernelCall) -> list[np.ndarray]:
    """BITWISE_OR (§2.5.4)."""
    a, b = call.inputs
    return [np.bitwise_or(a, b).astype(call.out_dtypes[0], copy=False)]


@kernel("tosa.bitwise_xor")
def bitwise_xor(call: KernelCall) -> list[np.ndarray]:
    """BITWISE_XOR (§2.5.5)."""
    a, b = call.inputs
    return [np.bitwise_xor(a, b).astype(call.out_dtypes[0], copy=False)]


@kernel("tosa.intdiv")
def intdiv(call: KernelCall) -> list[np.ndarray]:
    """INTDIV (§2.5.6): truncates toward zero; REQUIRE divisor != 0 and the quotient fits."""
    a, b = (_wide(x) for x in call.inputs)
    unpredictable_if(b == 0, call.name, "value2 != 0")
    q = np.abs(a) // np.abs(b)
    q = np.where((a < 0) != (b < 0), -q, q)
    _, hi = _range(call)
    unpredictable_if(q > hi, call.name, "(int64_t)value1 / value2 <= maximum<int32_t>")
    return [q.astype(call.out_dtypes[0])]


@kernel("tosa.logical_and")
def logical_and(call: KernelCall) -> list[np.ndarray]:
    """LOGICAL_AND (§2.5.7)."""
    return [np.logical_and(*call.inputs)]


@kernel("tosa.logical_or")
def logical_or(call: KernelCall) -> list[np.ndarray]:
    """LOGICAL_OR (§2.5.10)."""
    return [np.logical_or(*call.inputs)]


@kernel("tosa.logical_xor")
def logical_xor(call: KernelCall) -> list[np.ndarray]:
    """LOGICAL_XOR (§2.5.11): ``value1 != value2``."""
    return [np.not_equal(*call.inputs)]


@kernel("tosa.logical_left_shift")
def logical_left_shift(call: KernelCall) -> list[np.ndarray]:
    """LOGICAL_LEFT_SHIFT (§2.5.8): REQUIRE 0 <= shift <= 31 for every type; the result keeps the low
    bits of the type (shifts past the width give 0)."""
    a, b = (_wide(x) for x in call.inputs)
    unpredictable_if((b < 0) | (b > 31), call.name, "0 <= value2 <= 31")
    # |a| < 2^31 and b <= 31: the int64 product never overflows; astype keeps the low bits.
    return [(a << b).astype(call.out_dtypes[0])]


_UNSIGNED = {Kind.I8: np.uint8, Kind.I16: np.uint16, Kind.I32: np.uint32}


@kernel("tosa.logical_right_shift")
def logical_right_shift(call: KernelCall) -> list[np.ndarray]:
    """LOGICAL_RIGHT_SHIFT (§2.5.9): ``(unsigned in_out_t)value1 >> value2``, REQUIRE 0 <= shift <= 31."""
    a, b = call.inputs
    bw = _wide(b)
    unpredictable_if((bw < 0) | (bw > 31), call.name, "0 <= value2 <= 31")
    unsigned = a.astype(_UNSIGNED[call.out_kinds[0]]).astype(np.uint64)
    result = unsigned >> bw.astype(np.uint64)
    return [result.astype(_UNSIGNED[call.out_kinds[0]]).astype(call.out_dtypes[0])]


def _apply_max(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    out = np.where(a >= b, a, b)
    if out.dtype.kind == "f":
        out = np.where(np.isnan(a) | np.isnan(b), np.float32(np.nan), out)
    return out


def _apply_min(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    out = np.where(a < b, a, b)
    if out.dtype.kind == "f":
        out = np.where(np.isnan(a) | np.isnan(b), np.float32(np.nan), out)
    return out


@kernel("tosa.maximum")
def maximum(call: KernelCall) -> list[np.ndarray]:
    """MAXIMUM (§2.5.12): ``apply_max`` (NaN propagates)."""
    if _is_float(call):
        return _float_op(call, _apply_max)
    return [_apply_max(*call.inputs).astype(call.out_dtypes[0], copy=False)]


@kernel("tosa.minimum")
def minimum(call: KernelCall) -> list[np.ndarray]:
    """MINIMUM (§2.5.13): ``apply_min`` (NaN propagates)."""
    if _is_float(call):
        return _float_op(call, _apply_min)
    return [_apply_min(*call.inputs).astype(call.out_dtypes[0], copy=False)]


@kernel("tosa.mul")
def mul(call: KernelCall) -> list[np.ndarray]:
    """MUL (§2.5.14).

    int32 with shift > 0: ``(product + (1 << (shift-1))) >> shift`` with REQUIRE that it fits int32
    (round half up), computed by ``scaling.rounding_right_shift`` so that it never overflows int64
    even for shift 63. Otherwise the result is the low 32 bits of the product
    (no REQUIRE). For i8/i16 inputs the shift must be 0 (ERROR_IF, checked by the verifier).
    """
    if _is_float(call):
        return _float_op(call, np.multiply)
    a, b = call.inputs[:2]
    product = _wide(a) * _wide(b)
    if "shift" in call.attrs:
        shift = int(call.attrs["shift"] or 0)
    else:  # shift given as a (constant) operand, as in MLIR's later TOSA dialects
        shift = int(call.inputs[2].reshape(-1)[0]) if len(call.inputs) > 2 else 0
    if call.in_kinds[0] is Kind.I32 and shift > 0:
        result = rounding_right_shift(product, shift)
        unpredictable_if((result < _INT32_MIN) | (result > _INT32_MAX), call.name, "shifted product fits int32")
        return [result.astype(np.int32)]
    return [product.astype(np.int32)]


@kernel("tosa.pow")
def pow_(call: KernelCall) -> list[np.ndarray]:
    """POW (§2.5.15): ``a ** b`` (float only; IEEE pow special cases, as numpy)."""
    return _float_op(call, np.power)


@kernel("tosa.table")
def table(call: KernelCall) -> list[np.ndarray]:
    """TABLE (§2.5.17): int8 ``table[value + 128]`` (256 entries); int16 ``apply_lookup`` (513 entries)
    giving a 16.7 fixed-point int32. A wrong table length is a REQUIRE (unpredictable)."""
    x, tab = call.inputs[:2]
    tab = tab.reshape(-1)
    if call.in_kinds[0] is Kind.I8:
        unpredictable_if(tab.size != 256, call.name, "length(table) == 256")
        return [tab[x.astype(np.int32) + 128].astype(call.out_dtypes[0], copy=False)]
    return [np.asarray(apply_lookup(tab, x, call.name)).astype(call.out_dtypes[0], copy=False)]


# ----------------------------------------------------------------------------------------------
# §2.6 unary


@kernel("tosa.abs")
def abs_(call: KernelCall) -> list[np.ndarray]:
    """ABS (§2.6.1): int32 ``apply_sub(0, v)`` for negatives (ABS(INT32_MIN) is unpredictable);
    floats: -0 → +0, ±inf → +inf."""
    if _is_float(call):
        return _float_op(call, np.abs)
    (x,) = call.inputs
    unpredictable_if(x == _INT32_MIN, call.name, "apply_sub(0, value1): result fits int32")
    return [np.abs(x).astype(call.out_dtypes[0], copy=False)]


@kernel("tosa.bitwise_not")
def bitwise_not(call: KernelCall) -> list[np.ndarray]:
    """BITWISE_NOT (§2.6.2)."""
    return [np.invert(call.inputs[0]).astype(call.out_dtypes[0], copy=False)]


@kernel("tosa.ceil")
def ceil(call: KernelCall) -> list[np.ndarray]:
    """CEIL (§2.6.3): ±inf, ±0 and NaN are kept."""
    return _float_op(call, np.ceil)


@kernel("tosa.clz")
def clz(call: KernelCall) -> list[np.ndarray]:
    """CLZ (§2.6.4): ``count_leading_zeros`` of the 32-bit pattern; clz(0) = 32, negatives → 0."""
    return [count_leading_zeros(call.inputs[0]).astype(call.out_dtypes[0])]


@kernel("tosa.exp")
def exp(call: KernelCall) -> list[np.ndarray]:
    """EXP (§2.6.5): -inf → +0, ±0 → 1, +inf → +inf."""
    return _float_op(call, np.exp)


@kernel("tosa.floor")
def floor(call: KernelCall) -> list[np.ndarray]:
    """FLOOR (§2.6.6): ±inf, ±0 and NaN are kept."""
    return _float_op(call, np.floor)


@kernel("tosa.log")
def log(call: KernelCall) -> list[np.ndarray]:
    """LOG (§2.6.7): ``apply_log``: ±0 → -inf, negatives and -inf → NaN."""
    return _float_op(call, np.log)


@kernel("tosa.logical_not")
def logical_not(call: KernelCall) -> list[np.ndarray]:
    """LOGICAL_NOT (§2.6.8)."""
    return [np.logical_not(call.inputs[0])]


@kernel("tosa.negate")
def negate(call: KernelCall) -> list[np.ndarray]:
    """NEGATE (§2.6.9): ``clip(apply_sub<acc_t>(0, v - input1_zp) + output_zp)`` with acc_t = int32, so
    int8/int16 saturate and int32 INT32_MIN (zp 0) is unpredictable; floats flip the sign (±0 ↔ ∓0)."""
    if _is_float(call):
        return _float_op(call, np.negative)
    (x,) = call.inputs
    value = _wide(x) - int(call.attrs.get("input1_zp", 0) or 0)
    value = -value
    unpredictable_if((value < _INT32_MIN) | (value > _INT32_MAX), call.name, "apply_sub<int32_t>(0, value) fits int32")
    value = value + int(call.attrs.get("output_zp", 0) or 0)
    lo, hi = _range(call)
    return [np.clip(value, lo, hi).astype(call.out_dtypes[0])]


@kernel("tosa.reciprocal")
def reciprocal(call: KernelCall) -> list[np.ndarray]:
    """RECIPROCAL (§2.6.10): ``1.0 / x`` (±0 → ±inf, ±inf → ±0)."""
    return _float_op(call, lambda x: np.float32(1.0) / x)


def _rsqrt(x: np.ndarray) -> np.ndarray:
    return np.where(x < 0, np.float32(np.nan), np.float32(1.0) / np.sqrt(x))


@kernel("tosa.rsqrt")
def rsqrt(call: KernelCall) -> list[np.ndarray]:
    """RSQRT (§2.6.11): negatives → NaN, else ``1 / sqrt(x)`` (-0 → -inf, +0 → +inf, +inf → +0)."""
    return _float_op(call, _rsqrt)


# ----------------------------------------------------------------------------------------------
# §2.7 ternary, §2.8 comparison


@kernel("tosa.select")
def select(call: KernelCall) -> list[np.ndarray]:
    """SELECT (§2.7.1): ``input1 ? input2 : input3`` with broadcasting."""
    cond, a, b = call.inputs
    return [np.where(cond.astype(np.bool_, copy=False), a, b).astype(call.out_dtypes[0], copy=False)]


def _compare(call: KernelCall, fn: Callable[[np.ndarray, np.ndarray], np.ndarray]) -> list[np.ndarray]:
    a, b = call.inputs
    if a.dtype.kind != "i":
        a, b = _f32(a), _f32(b)  # exact for fp16/bf16; numpy comparisons with NaN are false
    with np.errstate(invalid="ignore"):
        return [np.asarray(fn(a, b), dtype=np.bool_)]


@kernel("tosa.equal")
def equal(call: KernelCall) -> list[np.ndarray]:
    """EQUAL (§2.8.1): false when either operand is NaN; -0 == +0."""
    return _compare(call, np.equal)


@kernel("tosa.greater")
def greater(call: KernelCall) -> list[np.ndarray]:
    """GREATER (§2.8.2): false when either operand is NaN."""
    return _compare(call, np.greater)


@kernel("tosa.greater_equal")
def greater_equal(call: KernelCall) -> list[np.ndarray]:
    """GREATER_EQUAL (§2.8.3): false when either operand is NaN."""
    return _compare(call, np.greater_equal)
