"""The fallback kernel: the reference interpreter's numeric kernel, its result copied into the output view.

Used for every op without a fast path and for every integer mode (so integer graphs are bit-exact
with ``nnkiln.reference.run`` by construction).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from nnkiln.errors import NotExecutableError
from nnkiln.kinds import Kind
from nnkiln.reference.registry import KernelCall, load_kernels

_KERNELS = load_kernels(with_ir=False)


def reference_kernel(name: str) -> Callable[[KernelCall], list[np.ndarray]]:
    fn = _KERNELS.get(name)
    if fn is None:
        raise NotExecutableError(f"no runtime kernel for '{name}'")
    return fn


def call_reference(name: str, inputs: Sequence[np.ndarray], attrs: dict[str, Any], in_kinds: Sequence[Kind],
                   out_kinds: Sequence[Kind], out_dtypes: Sequence[np.dtype],
                   out_shapes: Sequence[tuple[int, ...]]) -> list[np.ndarray]:
    """Run the reference kernel ``name`` and return its results."""
    call = KernelCall(name=name, inputs=list(inputs), attrs=dict(attrs), out_kinds=list(out_kinds),
                      out_dtypes=list(out_dtypes), out_shapes=[tuple(s) for s in out_shapes],
                      in_kinds=list(in_kinds))
    return reference_kernel(name)(call)


def store(out: np.ndarray, value: np.ndarray) -> None:
    """Write a kernel result into its output view (same element count; reshaped if needed)."""
    value = np.asarray(value)
    if value.shape != out.shape:
        value = value.reshape(out.shape)
    np.copyto(out, value, casting="unsafe")
