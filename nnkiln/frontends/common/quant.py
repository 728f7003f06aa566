"""Quantization arithmetic shared by frontends (spec §1.9.2 "precision scaling").

``compute_scale_32`` / ``compute_scale_16`` turn a real scale into TOSA's (multiplier, shift) pair as
the TOSA lowerings document's ``computeMultiplierAndShift`` does: scale = m·2^-n with 1 <= m < 2 (via
frexp), multiplier = round(m·2^30) (2^14 for 16-bit) with shift = 30 + n (14 + n), the multiplier
renormalised when rounding reaches 2^31, and shifts outside [2, 62] clamped by moving the surplus into
the multiplier (scales below 2^-32 saturate to the smallest representable).
"""

from __future__ import annotations

import math


def _compute_scale(scale: float, bits: int) -> tuple[int, int]:
    if not (scale > 0.0 and math.isfinite(scale)):
        raise ValueError(f"scale must be positive and finite, got {scale}")
    frac_bits = bits - 2
    mantissa, exponent = math.frexp(scale)  # scale = mantissa * 2**exponent, 0.5 <= mantissa < 1
    multiplier = math.floor(mantissa * (1 << (frac_bits + 1)) + 0.5)  # std::round: half away from zero
    if multiplier == 1 << (frac_bits + 1):
        multiplier //= 2
        exponent += 1
    shift = frac_bits + 1 - exponent
    # multiplier is now in [2^frac_bits, 2^(frac_bits+1)); scale ~= multiplier * 2^-shift
    while shift > 62:
        multiplier = (multiplier + 1) >> 1
        shift -= 1
    while shift < 2:
        if multiplier << 1 >= 1 << (bits - 1):
            raise ValueError(f"scale {scale} is too large for a {bits}-bit multiplier")
        multiplier <<= 1
        shift += 1
    return int(multiplier), int(shift)


def compute_scale_32(scale: float) -> tuple[int, int]:
    """(multiplier, shift) with a 32-bit multiplier: scale ≈ multiplier · 2^-shift."""
    return _compute_scale(scale, 32)


def compute_scale_16(scale: float) -> tuple[int, int]:
    """(multiplier, shift) with a 16-bit multiplier: scale ≈ multiplier · 2^-shift."""
    return _compute_scale(scale, 16)
