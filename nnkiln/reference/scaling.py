"""Bit-exact integer scaling helpers of TOSA 0.30 (spec §1.9.2, §1.9.5, §3.3.1), vectorised in numpy.

Every function takes array-likes (Python ints or numpy integer arrays; multipliers and shifts
broadcast against the values, which is how per-channel RESCALE uses them) and returns ``int64``
arrays. Every REQUIRE of the pseudocode is checked and raises ``TosaUnpredictable`` through
``unpredictable_if``; so is the implicit conversion of an argument to its declared parameter type
(``int32_t value`` of ``apply_scale_32``, ``int48_t value`` and ``int16_t multiplier`` of
``apply_scale_16``, ``uint32_t`` of ``reciprocal_scale``): a value outside that type cannot reach the
function in a valid graph, so it is treated as unpredictable rather than silently wrapped.

Exactness: ``(x + (1 << (s - 1))) >> s`` is computed as ``((x >> (s - 1)) + 1) >> 1``, which is the
same integer for every ``x`` and ``1 <= s <= 63`` (floor((x + 2^(s-1)) / 2^s) = floor((floor(x / 2^(s-1))
+ 1) / 2)) but never adds the rounding constant, so nothing overflows ``int64`` even at shift 62 or
63 (``rounding_right_shift``). ``apply_scale_32``'s product is at most 2^31 * (2^31 - 1) < 2^62 and
``apply_scale_16``'s at most 2^47 * (2^15 - 1) < 2^62.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from nnkiln.reference.registry import unpredictable_if

INT16_MIN, INT16_MAX = -(1 << 15), (1 << 15) - 1
INT32_MIN, INT32_MAX = -(1 << 31), (1 << 31) - 1
INT48_MIN, INT48_MAX = -(1 << 47), (1 << 47) - 1
UINT32_MAX = (1 << 32) - 1

TABLE16_SIZE = 513
"""Entries of an int16 TABLE (spec §2.5.17): 512 intervals plus the end point."""


def _i64(x: ArrayLike) -> np.ndarray:
    arr = np.asarray(x)
    if arr.dtype.kind not in "iub":
        raise TypeError(f"expected integers, got {arr.dtype}")
    if arr.dtype == np.uint64:
        unpredictable_if(arr > np.iinfo(np.int64).max, "scaling", "value fits int64")
    return arr.astype(np.int64)


def rounding_right_shift(x: ArrayLike, shift: ArrayLike) -> np.ndarray:
    """``(x + (1 << (shift - 1))) >> shift`` exactly (arithmetic shift, i.e. round half up).

    Valid for any int64 ``x`` and ``1 <= shift <= 63`` without forming ``x + round`` (which can
    overflow int64, e.g. MUL's 2^62 product with shift 63). ``shift`` broadcasts against ``x``.
    """
    v = _i64(x)
    s = _i64(shift)
    if np.any((s < 1) | (s > 63)):
        raise ValueError(f"rounding_right_shift needs 1 <= shift <= 63, got {s}")
    return (np.right_shift(v, s - 1) + 1) >> 1


def count_leading_zeros(a: ArrayLike) -> np.ndarray:
    """count_leading_zeros (spec §3.3.1) of ``int32_t`` values: clz(0) = 32, negative → 0.

    Inputs outside the int32 range (e.g. ``uint32_t`` values as ``reciprocal_scale`` passes them)
    are taken modulo 2^32 as two's-complement int32, as the C conversion does.
    """
    v = _i64(a)
    v32 = ((v + (1 << 31)) & UINT32_MAX) - (1 << 31)
    # bit length of positive values: frexp is exact for |v| < 2^53
    _, exp = np.frexp(np.where(v32 > 0, v32, 1).astype(np.float64))
    clz = 32 - exp.astype(np.int64)
    return np.where(v32 < 0, 0, np.where(v32 == 0, 32, clz)).astype(np.int64)


def apply_scale_32(
    value: ArrayLike,
    multiplier: ArrayLike,
    shift: ArrayLike,
    double_round: bool = False,
    op_name: str = "apply_scale_32",
) -> np.ndarray:
    """apply_scale_32 (spec §1.9.2): ``(value * multiplier + round) >> shift``, round half up.

    With ``double_round`` and ``shift > 31`` the rounding constant moves by ±2^30 (toward
    +inf for ``value >= 0``, toward -inf for ``value < 0``). REQUIREs: ``multiplier >= 0``,
    ``2 <= shift <= 62``, ``-(1 << (shift - 2)) <= value < (1 << (shift - 2))``, plus value in int32
    and multiplier in int32 (the parameter types).
    """
    v = _i64(value)
    m = _i64(multiplier)
    s = _i64(shift)
    unpredictable_if(m < 0, op_name, "apply_scale_32: multiplier >= 0")
    unpredictable_if(m > INT32_MAX, op_name, "apply_scale_32: multiplier fits int32_t")
    unpredictable_if((s < 2) | (s > 62), op_name, "apply_scale_32: 2 <= shift <= 62")
    unpredictable_if((v < INT32_MIN) | (v > INT32_MAX), op_name, "apply_scale_32: value fits int32_t")
    s_safe = np.clip(s, 2, 62)
    bound = np.left_shift(np.int64(1), s_safe - 2)
    unpredictable_if(
        (v < -bound) | (v >= bound), op_name,
        "apply_scale_32: value >= (-1 << (shift - 2)) && value < (1 << (shift - 2))",
    )
    prod = v * m
    if double_round:
        extra = np.where(v >= 0, np.int64(1 << 30), np.int64(-(1 << 30)))
        prod = prod + np.where(s_safe > 31, extra, np.int64(0))
    return (np.right_shift(prod, s_safe - 1) + 1) >> 1


def apply_scale_16(
    value: ArrayLike,
    multiplier: ArrayLike,
    shift: ArrayLike,
    op_name: str = "apply_scale_16",
) -> np.ndarray:
    """apply_scale_16 (spec §1.9.2): ``(value * multiplier + (1 << (shift - 1))) >> shift``.

    REQUIREs: ``multiplier >= 0``, ``2 <= shift <= 62``, the result fits int32; plus value in int48
    and multiplier in int16 (the parameter types).
    """
    v = _i64(value)
    m = _i64(multiplier)
    s = _i64(shift)
    unpredictable_if(m < 0, op_name, "apply_scale_16: multiplier >= 0")
    unpredictable_if(m > INT16_MAX, op_name, "apply_scale_16: multiplier fits int16_t")
    unpredictable_if((s < 2) | (s > 62), op_name, "apply_scale_16: 2 <= shift <= 62")
    unpredictable_if((v < INT48_MIN) | (v > INT48_MAX), op_name, "apply_scale_16: value fits int48_t")
    s_safe = np.clip(s, 2, 62)
    result = (np.right_shift(v * m, s_safe - 1) + 1) >> 1
    unpredictable_if(
        (result < INT32_MIN) | (result > INT32_MAX), op_name,
        "apply_scale_16: result >= minimum<int32_t> && result <= maximum<int32_t>",
    )
    return result


def reciprocal_scale(value: ArrayLike, op_name: str = "reciprocal_scale") -> tuple[np.ndarray, np.ndarray]:
    """reciprocal_scale (spec §1.9.2): (multiplier, shift) with multiplier * 2^-shift ≈ 1/value.

    ``k = 32 - clz(value - 1)``, ``multiplier = (((1 << 30) + 1) << k) / value``, ``shift = 30 + k``.
    The ``+1`` makes the multiplier slightly larger than 2^shift / value, so AVG_POOL2D's exact
    halves round away from zero. REQUIRE: ``value > 0`` (and value fits uint32_t).
    """
    v = _i64(value)
    unpredictable_if(v <= 0, op_name, "reciprocal_scale: value > 0")
    unpredictable_if(v > UINT32_MAX, op_name, "reciprocal_scale: value fits uint32_t")
    k = 32 - count_leading_zeros(v - 1)
    numerator = np.left_shift(np.int64((1 << 30) + 1), k)  # k <= 32: < 2^63
    multiplier = numerator // v
    return multiplier.astype(np.int64), (30 + k).astype(np.int64)


def apply_lookup(table: ArrayLike, value: ArrayLike, op_name: str = "tosa.table") -> np.ndarray:
    """apply_lookup (spec §1.9.5): 513-entry int16 table, 9.7 fixed-point index, 16.7 result.

    ``v = clip(value, -32768, 32767)``, ``index = (v + 32768) >> 7``, ``fraction = v & 0x7f``,
    result ``(table[index] << 7) + (table[index + 1] - table[index]) * fraction``.
    REQUIREs: the table has 513 entries (TABLE's ``length(table) == TABLE_SIZE``), its entries fit
    int16 and every used slope fits int16.
    """
    t = _i64(table).reshape(-1)
    unpredictable_if(t.size != TABLE16_SIZE, op_name, f"length(table) == {TABLE16_SIZE}")
    unpredictable_if((t < INT16_MIN) | (t > INT16_MAX), op_name, "table entries fit int16_t")
    v = np.clip(_i64(value), INT16_MIN, INT16_MAX)
    index = (v + 32768) >> 7
    fraction = v & 0x7F
    base = t[index]
    slope = t[index + 1] - base
    unpredictable_if(
        (slope < INT16_MIN) | (slope > INT16_MAX), op_name,
        "apply_lookup: slope >= minimum<int16_t> && slope <= maximum<int16_t>",
    )
    return (base << 7) + slope * fraction
