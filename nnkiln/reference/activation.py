"""Reference kernels of the activation functions (spec §2.4): CLAMP, SIGMOID, TANH.

Float computation is in float32 and rounded once to the storage type (fp16/bf16: round to nearest
even); TOSA MI sets no precision requirement (§1.7). Integer sigmoid/tanh are TABLE ops (§2.4.2-3).
"""

from __future__ import annotations

import numpy as np

from nnkiln.reference.registry import KernelCall, kernel, unpredictable_if
from nnkiln.reference.tensor_ops import attr, op_name_of

_F32 = np.float32


def clamp(x: np.ndarray, min_val: float | int, max_val: float | int, op: str = "tosa.clamp") -> np.ndarray:
    """CLAMP (spec §2.4.1): ``apply_clip<in_out_t>(value, min_val, max_val)`` in the stored domain
    (no zero point is involved). ``apply_clip`` REQUIREs ``min_val <= max_val``; NaN inputs stay NaN
    (``apply_max``/``apply_min`` propagate NaN). For fp16/bf16 the bounds are first rounded to the
    tensor's type (they are ``in_out_t`` attributes)."""
    if np.issubdtype(x.dtype, np.integer):
        lo, hi = int(min_val), int(max_val)
        unpredictable_if(lo > hi, op, "apply_clip: min_val <= max_val")
        return np.clip(x.astype(np.int64), lo, hi).astype(x.dtype)
    lo_f = np.asarray(min_val, dtype=np.float64).astype(x.dtype).astype(_F32)
    hi_f = np.asarray(max_val, dtype=np.float64).astype(x.dtype).astype(_F32)
    unpredictable_if(lo_f > hi_f, op, "apply_clip: min_val <= max_val")
    xf = x.astype(_F32)
    # apply_max(value, min_val) then apply_min(value, max_val); np.maximum/minimum propagate NaN.
    return np.minimum(np.maximum(xf, lo_f), hi_f).astype(x.dtype)


def sigmoid(x: np.ndarray) -> np.ndarray:
    """SIGMOID (spec §2.4.2): ``1 / (1 + exp(-x))`` (float types only)."""
    with np.errstate(over="ignore"):
        xf = x.astype(_F32)
        return (_F32(1) / (_F32(1) + np.exp(-xf))).astype(x.dtype)


def tanh(x: np.ndarray) -> np.ndarray:
    """TANH (spec §2.4.3): hyperbolic tangent (float types only)."""
    return np.tanh(x.astype(_F32)).astype(x.dtype)


@kernel("tosa.clamp")
def clamp_kernel(call: KernelCall) -> list[np.ndarray]:
    lo = attr(call, "min_val", "min_int", "min_fp")
    hi = attr(call, "max_val", "max_int", "max_fp")
    return [clamp(call.inputs[0], lo, hi, op_name_of(call, "tosa.clamp")).astype(call.out_dtypes[0])]


@kernel("tosa.sigmoid")
def sigmoid_kernel(call: KernelCall) -> list[np.ndarray]:
    return [sigmoid(call.inputs[0]).astype(call.out_dtypes[0])]


@kernel("tosa.tanh")
def tanh_kernel(call: KernelCall) -> list[np.ndarray]:
    return [tanh(call.inputs[0]).astype(call.out_dtypes[0])]
