"""Integer scaling helpers (spec §1.9.2, §1.9.5, §3.3.1). Expected values are worked out by hand
from the pseudocode in the comments."""

from __future__ import annotations

import numpy as np
import pytest

from nnkiln.ir.errors import TosaUnpredictable
from nnkiln.reference.scaling import (
    apply_lookup,
    apply_scale_16,
    apply_scale_32,
    count_leading_zeros,
    reciprocal_scale,
    rounding_right_shift,
)
from nnkiln.reference.tensor_ops import avg_pool2d


def _list(a: np.ndarray) -> list[int]:
    return [int(v) for v in np.asarray(a).reshape(-1)]


# ----------------------------------------------------------------------------------------------
# count_leading_zeros


def test_clz() -> None:
    assert _list(count_leading_zeros([0, 1, -1, 0x7FFFFFFF, 0x00010000, 255, -(1 << 31)])) == [
        32, 31, 0, 1, 15, 24, 0]


# ----------------------------------------------------------------------------------------------
# apply_scale_32


def test_apply_scale_32_shift31_round_half_up() -> None:
    # multiplier 2^30, shift 31 = scale 0.5. (v * 2^30 + 2^30) >> 31:
    # 1 -> 2^31 >> 31 = 1; -1 -> 0 >> 31 = 0; 3 -> 2^32 >> 31 = 2; -3 -> -2^31 >> 31 = -1
    assert _list(apply_scale_32([1, -1, 3, -3, 4, -4], 1 << 30, 31)) == [1, 0, 2, -1, 2, -2]


def test_apply_scale_32_double_round_only_above_31() -> None:
    # shift 31: double_round adds nothing
    assert _list(apply_scale_32([1, -1, 3, -3], 1 << 30, 31, True)) == [1, 0, 2, -1]


def test_apply_scale_32_shift32_double_round_ties() -> None:
    # multiplier 2^30, shift 32 = scale 0.25; round = 2^31
    # v = 2: (2^31 + 2^31) >> 32 = 1;  v = -2: (-2^31 + 2^31) >> 32 = 0
    # v = 1: (2^30 + 2^31) >> 32 = 0;  v = 6: (6*2^30 + 2^31) >> 32 = 8*2^30 / 2^32 = 2
    assert _list(apply_scale_32([2, -2, 1, 6], 1 << 30, 32)) == [1, 0, 0, 2]
    # double_round: round += 2^30 for v >= 0, -= 2^30 for v < 0
    # v = 2: 2^31 + 2^31 + 2^30 -> 1;  v = -2: -2^31 + 2^31 - 2^30 = -2^30 -> floor(-1/4) = -1
    # v = 1: 2^30 + 2^31 + 2^30 = 2^32 -> 1 (two-stage rounding: 0.25 -> 0.5 -> 1)
    # v = -1: -2^30 + 2^31 - 2^30 = 0 -> 0
    assert _list(apply_scale_32([2, -2, 1, -1], 1 << 30, 32, True)) == [1, -1, 1, 0]


def test_apply_scale_32_shift62_extremes() -> None:
    m = (1 << 31) - 1
    # v = 2^31 - 1: (2^31-1)^2 + 2^61 = 2^62 + 2^61 - 2^32 + 1 -> >> 62 = 1
    # v = -2^31: -2^62 + 2^31 + 2^61 = -2^61 + 2^31 -> floor = -1
    # v = 2^30: 2^61 - 2^30 + 2^61 = 2^62 - 2^30 -> 0
    assert _list(apply_scale_32([(1 << 31) - 1, -(1 << 31), 1 << 30], m, 62)) == [1, -1, 0]
    # double_round at 62: v = 2^30 gets +2^30 -> 2^62 -> 1
    assert _list(apply_scale_32([1 << 30], m, 62, True)) == [1]


def test_apply_scale_32_negative_values_floor() -> None:
    # unity scale (2^30, 30): identity for any value within +-2^28
    vals = [-(1 << 28), -5, 0, 7, (1 << 28) - 1]
    assert _list(apply_scale_32(vals, 1 << 30, 30)) == vals
    # scale 3/4 (3 * 2^29, 31): v = -2 -> (-6*2^29 + 2^30) >> 31 = -4*2^29 / 2^31 = -1 (-1.5 -> -1)
    assert _list(apply_scale_32([-2, 2, -1], 3 << 29, 31)) == [-1, 2, -1]


def test_apply_scale_32_per_channel_broadcast() -> None:
    v = np.array([[4, 4], [-4, -4]])
    r = apply_scale_32(v, np.array([1 << 30, 1 << 30]), np.array([30, 32]))
    assert r.tolist() == [[4, 1], [-4, -1]]


@pytest.mark.parametrize(
    ("value", "multiplier", "shift"),
    [
        (0, -1, 31),  # multiplier >= 0
        (0, 1 << 30, 1),  # 2 <= shift
        (0, 1 << 30, 63),  # shift <= 62
        (1 << 29, 1 << 30, 31),  # value < 1 << (shift - 2)
        (-(1 << 29) - 1, 1 << 30, 31),  # value >= -(1 << (shift - 2))
        (1 << 31, 1 << 30, 62),  # value fits int32_t
    ],
)
def test_apply_scale_32_require(value: int, multiplier: int, shift: int) -> None:
    with pytest.raises(TosaUnpredictable):
        apply_scale_32([value], multiplier, shift)


def test_apply_scale_32_value_bounds_inclusive() -> None:
    # exactly at the bounds: -(1 << 29) and (1 << 29) - 1 with shift 31 are allowed
    assert _list(apply_scale_32([-(1 << 29), (1 << 29) - 1], 1 << 30, 31)) == [-(1 << 28), 1 << 28]


# ----------------------------------------------------------------------------------------------
# apply_scale_16


def test_apply_scale_16() -> None:
    # unity (2^14, 14): -3 -> (-3*2^14 + 2^13) >> 14 = floor(-2.5) = -3
    assert _list(apply_scale_16([-3, 0, 9], 1 << 14, 14)) == [-3, 0, 9]
    # scale 0.5 (2^14, 15): 5 -> 6*2^14 / 2^15 = 3; -5 -> -4*2^14 / 2^15 = -2
    assert _list(apply_scale_16([5, -5], 1 << 14, 15)) == [3, -2]
    # int48 input: (2^47 - 1 + 2^16) >> 17 = 2^30
    assert _list(apply_scale_16([(1 << 47) - 1], 1, 17)) == [1 << 30]


def test_apply_scale_16_require() -> None:
    # (2^47 - 1 + 2^15) >> 16 = 2^31: does not fit int32
    with pytest.raises(TosaUnpredictable):
        apply_scale_16([(1 << 47) - 1], 1, 16)
    with pytest.raises(TosaUnpredictable):
        apply_scale_16([1], -1, 16)
    with pytest.raises(TosaUnpredictable):
        apply_scale_16([1], 1, 63)


# ----------------------------------------------------------------------------------------------
# reciprocal_scale


def test_reciprocal_scale() -> None:
    # count 1: k = 32 - clz(0) = 0 -> (2^30 + 1, 30); count 2: k = 1 -> (2^30 + 1, 31)
    # count 3: k = 2, (2^30 + 1) * 4 / 3 = 4294967300 / 3 = 1431655766 -> shift 32
    # count 4: k = 2 -> (2^30 + 1, 32); count 5: k = 3, 8589934600 / 5 = 1717986920 -> 33
    m, s = reciprocal_scale([1, 2, 3, 4, 5])
    assert _list(m) == [(1 << 30) + 1, (1 << 30) + 1, 1431655766, (1 << 30) + 1, 1717986920]
    assert _list(s) == [30, 31, 32, 32, 33]


def test_reciprocal_scale_require() -> None:
    with pytest.raises(TosaUnpredictable):
        reciprocal_scale([0])


# ----------------------------------------------------------------------------------------------
# AVG_POOL2D rounding through reciprocal_scale


def test_avg_pool_ties_round_away_from_zero() -> None:
    # kernel [1, 2] over W = 2: count 2, scale (2^30 + 1, 31)
    # sums 1, -1, 3, -3 -> 0.5 -> 1, -0.5 -> -1, 1.5 -> 2, -1.5 -> -2
    # e.g. -3: (-3 * (2^30 + 1) + 2^30) >> 31 = (-2^31 - 3) >> 31 = -2
    x = np.array([[0, 1], [0, -1], [1, 2], [-1, -2]], np.int8).reshape(4, 1, 2, 1)
    out = avg_pool2d(x, (1, 2), (1, 1), (0, 0, 0, 0))
    assert out.dtype == np.int8
    assert out.reshape(-1).tolist() == [1, -1, 2, -2]


def test_avg_pool_count_three() -> None:
    # count 3: (4 * 1431655766 + 2^31) >> 32 = 7874106712 >> 32 = 1 (1.333 -> 1)
    #          (5 * 1431655766 + 2^31) >> 32 = 9305762478 >> 32 = 2 (1.667 -> 2)
    x = np.array([[1, 1, 2], [1, 2, 2]], np.int8).reshape(2, 1, 3, 1)
    out = avg_pool2d(x, (1, 3), (1, 1), (0, 0, 0, 0))
    assert out.reshape(-1).tolist() == [1, 2]


def test_avg_pool_padding_not_counted_and_zero_points() -> None:
    # input [[1, 2], [3, 4]] stored with input_zp = 5 (stored = real + 5); kernel 2x2, pad top/left 1
    # windows: {1} -> 1; {1, 2} -> 1.5 -> 2; {1, 3} -> 2; {1, 2, 3, 4} -> 2.5 -> 3
    # (count 4: (10 * (2^30 + 1) + 2^31) >> 32 = 12884901898 >> 32 = 3); output_zp = -1
    x = (np.array([[1, 2], [3, 4]]) + 5).astype(np.int8).reshape(1, 2, 2, 1)
    out = avg_pool2d(x, (2, 2), (1, 1), (1, 0, 1, 0), input_zp=5, output_zp=-1)
    assert out.reshape(2, 2).tolist() == [[0, 1], [1, 2]]


def test_avg_pool_output_saturates() -> None:
    # average 127 with output_zp 10 -> clip(137) = 127
    x = np.full((1, 1, 2, 1), 127, np.int8)
    out = avg_pool2d(x, (1, 2), (1, 1), (0, 0, 0, 0), output_zp=10)
    assert out.reshape(-1).tolist() == [127]


# ----------------------------------------------------------------------------------------------
# apply_lookup (int16 TABLE)


def _linear_table() -> np.ndarray:
    # t[k] = 64 k - 16384: the interpolated 16.7 result is 64 * clip(value)
    return (64 * np.arange(513) - 16384).astype(np.int16)


def test_apply_lookup_interpolation() -> None:
    t = _linear_table()
    # value 200: index (200 + 32768) >> 7 = 257, fraction 72: 64 * 128 + 64 * 72 = 12800
    # value -1: index 255, fraction 127: -64 * 128 + 64 * 127 = -64
    # 40000 clips to 32767: index 511, fraction 127: 16320 * 128 + 64 * 127 = 2097088
    # -40000 clips to -32768: index 0, fraction 0: -16384 * 128 = -2097152
    r = apply_lookup(t, np.array([0, 200, -1, 40000, -40000]))
    assert _list(r) == [0, 12800, -64, 2097088, -2097152]


def test_apply_lookup_negative_slope() -> None:
    t = np.zeros(513, np.int16)
    t[256], t[257] = 100, -200
    # value 64: index 256, fraction 64: 100 * 128 + (-300) * 64 = -6400
    assert _list(apply_lookup(t, [64])) == [-6400]


def test_apply_lookup_require_slope_and_length() -> None:
    t = np.zeros(513, np.int16)
    t[256], t[257] = -20000, 20000  # slope 40000 does not fit int16
    # value -1: index 255, fraction 127, slope t[256] - t[255] = -20000 fits: 0 * 128 - 20000 * 127
    assert _list(apply_lookup(t, [-1])) == [-2540000]
    with pytest.raises(TosaUnpredictable):
        apply_lookup(t, [5])
    with pytest.raises(TosaUnpredictable):
        apply_lookup(np.zeros(512, np.int16), [0])


# ----------------------------------------------------------------------------------------------
# rounding_right_shift (MUL with shift up to 63)


def test_rounding_right_shift_no_overflow() -> None:
    # (x + 2^62) >> 63 for x = 2^62 is 2^63 >> 63 = 1 (the sum overflows int64 if formed)
    x = np.array([1 << 62, (1 << 62) - 1, -(1 << 62), -(1 << 62) - 1, 3, -3], np.int64)
    assert _list(rounding_right_shift(x[:4], 63)) == [1, 0, 0, -1]
    assert _list(rounding_right_shift(x[4:], 1)) == [2, -1]
