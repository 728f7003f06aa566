"""Reference kernels of the type-conversion operators (spec §2.13): CAST and RESCALE.

CAST decisions (the spec leaves them open, inventory §1.3 no. 12):
- float → int: ``round_to_nearest_int`` rounds **half to even** (``std::rint`` under the default
  rounding mode, which is what the TOSA reference model uses), then saturates to ``out_t``
  (``apply_clip``). ±inf saturate to the minimum / maximum; **NaN converts to 0** (the spec and the
  reference model leave it undefined).
- int → float: ``round_to_nearest_float`` rounds **half to even**, computed exactly from the integer
  (no double rounding through fp32 for bf16 / fp16); an int32 beyond the fp16 range gives ±inf.
- int → int: sign extension when widening, truncation to the low bits (wrap-around) when narrowing.
- → bool: ``in != 0``; bool → int: 1 / 0.

RESCALE follows the pseudocode: ``value = in - input_zp`` (in int48 / int64),
``apply_scale_32(value, multiplier[c], shift[c], double_round)`` if ``scale32`` else
``apply_scale_16``, ``c`` = last-dimension index if ``per_channel`` else 0, then
``clip(result + output_zp, minimum<out_t>, maximum<out_t>)`` (saturating). uint8 / uint16 values are
read as unsigned.
"""

from __future__ import annotations

from collections.abc import Sequence

import ml_dtypes
import numpy as np

from nnkiln.reference.registry import KernelCall, kernel
from nnkiln.reference.scaling import apply_scale_16, apply_scale_32
from nnkiln.reference.tensor_ops import attr, op_name_of

_BF16 = np.dtype(ml_dtypes.bfloat16)
_FLOAT_PRECISION = {np.dtype(np.float16): 11, _BF16: 8, np.dtype(np.float32): 24}
_FLOAT_MAX = {np.dtype(np.float16): 65504.0, _BF16: float(ml_dtypes.finfo(ml_dtypes.bfloat16).max),
              np.dtype(np.float32): float(np.finfo(np.float32).max)}


def _is_float(dt: np.dtype) -> bool:
    return dt == _BF16 or np.issubdtype(dt, np.floating)


def int_to_float(x: np.ndarray, out_dtype: np.dtype | type) -> np.ndarray:
    """round_to_nearest_float of integers (|x| < 2^53): round half to even to ``out_dtype``'s
    precision in one step, overflow to ±inf."""
    dt = np.dtype(out_dtype)
    p = _FLOAT_PRECISION[dt]
    v = x.astype(np.float64)  # exact
    mant, exp = np.frexp(v)  # v = mant * 2^exp, 0.5 <= |mant| < 1
    r = np.ldexp(np.rint(np.ldexp(mant, p)), exp - p)  # exact float64 ops, rint = half to even
    r = np.where(np.abs(r) > _FLOAT_MAX[dt], np.copysign(np.inf, r), r)
    return r.astype(np.float32).astype(dt)  # exactly representable: no further rounding


def float_to_int(x: np.ndarray, out_dtype: np.dtype | type) -> np.ndarray:
    """``apply_clip(round_to_nearest_int(in), minimum<out_t>, maximum<out_t>)``: half to even,
    saturating, ±inf saturate, NaN → 0."""
    dt = np.dtype(out_dtype)
    info = np.iinfo(dt)
    v = x.astype(np.float64)
    r = np.clip(np.rint(np.nan_to_num(v, nan=0.0, posinf=np.inf, neginf=-np.inf)), info.min, info.max)
    return r.astype(dt)


def cast(x: np.ndarray, out_dtype: np.dtype | type) -> np.ndarray:
    """CAST (spec §2.13.1) of ``x`` (storage dtype of in_t) to the storage dtype of out_t."""
    dt = np.dtype(out_dtype)
    if dt == np.bool_:
        return x != 0
    if x.dtype == np.bool_:
        return x.astype(dt)
    if _is_float(dt):
        return int_to_float(x, dt)
    if _is_float(x.dtype):
        return float_to_int(x, dt)
    # int → int: numpy's astype sign-extends when widening and keeps the low bits when narrowing
    return x.astype(dt)


@kernel("tosa.cast")
def cast_kernel(call: KernelCall) -> list[np.ndarray]:
    return [cast(call.inputs[0], call.out_dtypes[0])]


def rescale(
    x: np.ndarray,
    out_dtype: np.dtype | type,
    input_zp: int,
    output_zp: int,
    multiplier: Sequence[int],
    shift: Sequence[int],
    scale32: bool,
    double_round: bool,
    per_channel: bool,
    op: str = "tosa.rescale",
) -> np.ndarray:
    """RESCALE (spec §2.13.2); REQUIREs come from apply_scale_32 / apply_scale_16."""
    dt = np.dtype(out_dtype)
    value = x.astype(np.int64) - int(input_zp)
    mul = np.asarray(multiplier, dtype=np.int64).reshape(-1)
    sh = np.asarray(shift, dtype=np.int64).reshape(-1)
    if not per_channel:
        mul, sh = mul[:1], sh[:1]
    if scale32:
        r = apply_scale_32(value, mul, sh, bool(double_round), op)
    else:
        r = apply_scale_16(value, mul, sh, op)
    info = np.iinfo(dt)
    return np.clip(r + int(output_zp), info.min, info.max).astype(dt)


@kernel("tosa.rescale")
def rescale_kernel(call: KernelCall) -> list[np.ndarray]:
    return [rescale(
        call.inputs[0], call.out_dtypes[0],
        int(attr(call, "input_zp", default=0)), int(attr(call, "output_zp", default=0)),
        tuple(attr(call, "multiplier")), tuple(attr(call, "shift")),
        bool(attr(call, "scale32", default=False)), bool(attr(call, "double_round", default=False)),
        bool(attr(call, "per_channel", default=False)), op_name_of(call, "tosa.rescale"),
    )]
