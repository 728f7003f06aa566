"""Reference kernels of GATHER and SCATTER (spec §2.11).

Both index along K of a ``[N, K, C]`` tensor with int32 ``indices [N, W]``. An index outside
``[0, K)`` is a REQUIRE failure (unpredictable, not an error); SCATTER writing one position twice
(a repeated index within a batch) is unpredictable too.
"""

from __future__ import annotations

import numpy as np

from nnkiln.reference.registry import KernelCall, kernel, unpredictable_if


def _check_indices(call: KernelCall, indices: np.ndarray, k: int) -> np.ndarray:
    idx = indices.astype(np.int64)
    unpredictable_if((idx < 0) | (idx >= k), call.name, f"0 <= k < K (K = {k})")
    return idx


@kernel("tosa.gather")
def gather(call: KernelCall) -> list[np.ndarray]:
    """GATHER (§2.11.1): ``output[n, w, c] = values[n, indices[n, w], c]``."""
    values, indices = call.inputs
    idx = _check_indices(call, indices, values.shape[1])
    batch = np.arange(values.shape[0])[:, None]
    return [values[batch, idx]]


@kernel("tosa.scatter")
def scatter(call: KernelCall) -> list[np.ndarray]:
    """SCATTER (§2.11.2): ``values_out = values_in`` with ``values_out[n, indices[n, w], c] = input[n, w, c]``."""
    values_in, indices, data = call.inputs
    idx = _check_indices(call, indices, values_in.shape[1])
    if idx.shape[1] > 1:
        ordered = np.sort(idx, axis=1)
        unpredictable_if(ordered[:, 1:] == ordered[:, :-1], call.name, "output_modified[n, k, c] == false (an index repeats)")
    out = np.array(values_in, copy=True)
    batch = np.arange(values_in.shape[0])[:, None]
    out[batch, idx] = data
    return [out]
