"""Reference kernels of the reduction operators (spec §2.9).

Every reduction keeps the rank: the output has ``shape[axis] == 1``.

Decisions:
- REDUCE_SUM int32: the spec accumulates with ``apply_add`` in index order, so each *partial* sum must
  fit int32 (REQUIRE), not only the total. The kernel checks the running (cumulative) sums in int64.
- Floating-point REDUCE_SUM / REDUCE_PRODUCT accumulate in float32 and round once to the storage type
  (fp16/bf16); the summation order is numpy's (the spec sets no bit-exact float requirement, §1.7).
- REDUCE_MAX / REDUCE_MIN propagate NaN (``apply_max``/``apply_min``).
"""

from __future__ import annotations

import numpy as np

from nnkiln.reference.registry import KernelCall, kernel, unpredictable_if


def _axis(call: KernelCall) -> int:
    return int(call.attrs["axis"])


@kernel("tosa.reduce_all")
def reduce_all(call: KernelCall) -> list[np.ndarray]:
    """REDUCE_ALL (§2.9.1): logical AND along ``axis`` (initial value true)."""
    return [np.all(call.inputs[0], axis=_axis(call), keepdims=True)]


@kernel("tosa.reduce_any")
def reduce_any(call: KernelCall) -> list[np.ndarray]:
    """REDUCE_ANY (§2.9.2): logical OR along ``axis`` (initial value false)."""
    return [np.any(call.inputs[0], axis=_axis(call), keepdims=True)]


def _float_input(x: np.ndarray) -> np.ndarray:
    return x if x.dtype == np.float32 else x.astype(np.float32)


@kernel("tosa.reduce_max")
def reduce_max(call: KernelCall) -> list[np.ndarray]:
    """REDUCE_MAX (§2.9.3): maximum along ``axis``; NaN propagates."""
    x = call.inputs[0]
    if call.out_kinds[0].is_float:
        x = _float_input(x)
    return [np.max(x, axis=_axis(call), keepdims=True).astype(call.out_dtypes[0], copy=False)]


@kernel("tosa.reduce_min")
def reduce_min(call: KernelCall) -> list[np.ndarray]:
    """REDUCE_MIN (§2.9.4): minimum along ``axis``; NaN propagates."""
    x = call.inputs[0]
    if call.out_kinds[0].is_float:
        x = _float_input(x)
    return [np.min(x, axis=_axis(call), keepdims=True).astype(call.out_dtypes[0], copy=False)]


@kernel("tosa.reduce_product")
def reduce_product(call: KernelCall) -> list[np.ndarray]:
    """REDUCE_PRODUCT (§2.9.5): product along ``axis`` (floats only)."""
    x = _float_input(call.inputs[0])
    with np.errstate(all="ignore"):
        out = np.prod(x, axis=_axis(call), keepdims=True, dtype=np.float32)
    return [out.astype(call.out_dtypes[0], copy=False)]


@kernel("tosa.reduce_sum")
def reduce_sum(call: KernelCall) -> list[np.ndarray]:
    """REDUCE_SUM (§2.9.6): sum along ``axis``; int32 partial sums must fit (REQUIRE)."""
    x = call.inputs[0]
    axis = _axis(call)
    if call.out_kinds[0].is_float:
        with np.errstate(all="ignore"):
            out = np.sum(_float_input(x), axis=axis, keepdims=True, dtype=np.float32)
        return [out.astype(call.out_dtypes[0], copy=False)]
    lo, hi = call.out_kinds[0].int_range
    running = np.cumsum(x, axis=axis, dtype=np.int64)
    unpredictable_if((running < lo) | (running > hi), call.name, "apply_add: every partial sum fits int32")
    total = np.take(running, [x.shape[axis] - 1], axis=axis)
    return [total.astype(call.out_dtypes[0])]
