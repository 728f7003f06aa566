"""int8 RSQRT as TFLite's reference kernel computes it (``RsqrtEvalQuantized``), tabulated at import for the 256
input codes and applied by one TABLE.

Per code, with ``v = q - zp_in``: ``v <= 0`` gives 127 (TFLite maps 0 to the largest output and rejects negative
inputs; the table has to hold something for them), else ``GetInvSqrtQuantizedMultiplierExp(v)`` (gemmlowp
Newton-Raphson on Q3.28 with five iterations, times √2/2), ``data = MultiplyByQuantizedMultiplier(1, m, e + 20)``,
``out = MultiplyByQuantizedMultiplier(data, M, E - 20) + zp_out`` with ``(M, E) = QuantizeMultiplier(1 /
(√s_in · s_out))``, clamped. Transcribed from TFLite's algorithm; not yet checked against TFLite's own outputs (no
int8 RSQRT in the generated test models).
"""

from __future__ import annotations

import math

import numpy as np

from nnkiln.frontends.tflite.lowerings._common import quantize_multiplier
from nnkiln.frontends.tflite.lowerings.softmax_int8 import INT32_MAX, rounding_divide_by_pot, srdhm

INT32_MIN = -(1 << 31)


def _sat_shl(x: int, n: int) -> int:
    return max(INT32_MIN, min(INT32_MAX, x << n))


def mbqm(x: int, m: int, shift: int) -> int:
    """TFLite's int32 ``MultiplyByQuantizedMultiplier(x, m, shift)`` (shift > 0: left)."""
    left, right = max(shift, 0), max(-shift, 0)
    return rounding_divide_by_pot(srdhm(x * (1 << left), m), right)


def inv_sqrt_multiplier_exp(value: int) -> tuple[int, int]:
    """TFLite's ``GetInvSqrtQuantizedMultiplierExp(value, kReverseShift = -1)``."""
    if value <= 1:
        return INT32_MAX, 0
    shift = 11
    while value >= 1 << 29:
        value //= 4
        shift += 1
    max_left_shift_bits = (32 - value.bit_length()) - 1
    pairs = max_left_shift_bits // 2 - 1
    shift -= pairs
    value <<= 2 * pairs
    half_input = rounding_divide_by_pot(value >> 1, 1)  # F3
    half_three = (1 << 28) + (1 << 27)
    x = 1 << 28  # F3 one
    for _ in range(5):
        x3 = _sat_shl(srdhm(srdhm(x, x), x), 6)  # F9 -> F3
        x = _sat_shl(srdhm(half_three, x) - srdhm(half_input, x3), 3)  # F6 -> F3
    x = srdhm(x, 1518500250)
    if shift < 0:
        x <<= -shift
        shift = 0
    return x, -shift


def rsqrt_table(s_in: float, zp_in: int, s_out: float, zp_out: int) -> np.ndarray:
    """The int8 outputs of TFLite's RSQRT for the input codes -128..127."""
    m_out, e_out = quantize_multiplier(1.0 / (math.sqrt(float(np.float32(s_in))) * float(np.float32(s_out))))
    k_shift = 20
    table = []
    for code in range(-128, 128):
        v = code - zp_in
        if v <= 0:
            table.append(127)
            continue
        m, e = inv_sqrt_multiplier_exp(v)
        data = mbqm(1, m, e + k_shift)
        out = mbqm(data, m_out, e_out - k_shift) + zp_out
        table.append(max(-128, min(127, out)))
    return np.array(table, np.int64)
