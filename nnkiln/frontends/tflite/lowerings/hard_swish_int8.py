"""int8 HARD_SWISH as TFLite's reference kernel computes it (``reference_ops::HardSwish``, 16-bit fixed point),
tabulated at import for the 256 input codes and applied by one TABLE.

The steps, transcribed from TFLite's documented algorithm (``HardSwishPrepare`` and
``kernels/internal/reference/hard_swish.h``): the input ``v = q - zp_in`` on a "hires" scale ``v·2^7``; the
output multiplier ``(s_in/128)/s_out`` and the "reluish" multiplier ``(s_in/128)/(3/32768)`` quantized
(``QuantizeMultiplier``, float32 ratios) and narrowed to int16 (``DownScaleInt32ToInt16Multiplier``); the reluish
value rescaled to [-1, 1] (int16 ``SaturatingRoundingDoublingHighMul``, saturating shifts,
``RoundingDivideByPOT``), moved to [0, 1] by ``(r + 2^15) >> 1``, multiplied (``SaturatingDoublingHighMul``,
truncating) with the pre-shifted output value, divided by ``2^-e_out`` with rounding, plus ``zp_out``, clamped.

Not yet checked against TFLite's own outputs (no HARD_SWISH in the generated int8 test models).
"""

from __future__ import annotations

import numpy as np

from nnkiln.frontends.tflite.lowerings._common import quantize_multiplier
from nnkiln.frontends.tflite.lowerings.softmax_int8 import rounding_divide_by_pot

I16_MIN, I16_MAX = -(1 << 15), (1 << 15) - 1


def _sat16(v: int) -> int:
    return max(I16_MIN, min(I16_MAX, v))


def _srdhm16(a: int, b: int) -> int:
    if a == b == I16_MIN:
        return I16_MAX
    ab = a * b
    v = ab + ((1 << 14) if ab >= 0 else 1 - (1 << 14))
    q = abs(v) >> 15
    return q if v >= 0 else -q


def _sdhm16(a: int, b: int) -> int:
    """``SaturatingDoublingHighMul`` (int16, truncating division)."""
    if a == b == I16_MIN:
        return I16_MAX
    ab = a * b
    q = abs(ab) >> 15
    return q if ab >= 0 else -q


def _to_int16_multiplier(m32: int) -> int:
    if m32 >= (1 << 31) - 1 - (1 << 15):
        return I16_MAX
    return (m32 + (1 << 15)) >> 16


def hard_swish_table(s_in: float, zp_in: int, s_out: float, zp_out: int) -> np.ndarray:
    """The int8 outputs of TFLite's HARD_SWISH for the input codes -128..127."""
    hires = np.float32(1.0 / 128.0) * np.float32(s_in)
    out_m32, out_e = quantize_multiplier(float(hires / np.float32(s_out)))
    out_m = _to_int16_multiplier(out_m32)
    rel_m32, rel_e = quantize_multiplier(float(hires / np.float32(3.0 / 32768.0)))
    rel_m = _to_int16_multiplier(rel_m32)
    if out_e > 0:
        raise ValueError("HARD_SWISH output multiplier above 1 (TFLite refuses it too)")
    table = []
    for code in range(-128, 128):
        v = code - zp_in
        hi = _sat16(v * (1 << 7))
        pre = _srdhm16(hi, out_m)
        r = hi
        if rel_e > 0:
            r = _sat16(r << (rel_e - 1))
        r = _srdhm16(r, rel_m)
        if rel_e > 0:
            r = _sat16(r << 1)
        if rel_e < 0:
            r = rounding_divide_by_pot(r, -rel_e)
        r = (r + (1 << 15)) >> 1
        y = rounding_divide_by_pot(_sdhm16(r, pre), -out_e) + zp_out
        table.append(max(-128, min(127, y)))
    return np.array(table, np.int64)
