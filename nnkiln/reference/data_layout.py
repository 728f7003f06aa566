"""Reference kernels of the data layout operators (spec §2.10). No data conversion happens.

Kernels may return views of their inputs (the interpreter never writes into kernel inputs and copies
outputs that are views). Attribute forms accepted:
- PAD ``padding``: a flat ``[rank*2]`` list (before, after per dimension) or an operand ``[rank, 2]``;
  ``pad_const`` (int or float property; default 0) already includes the zero point.
- TRANSPOSE ``perms``: a property, or a constant operand as in MLIR's TOSA dialect.
"""

from __future__ import annotations

import numpy as np

from nnkiln.reference.registry import KernelCall, kernel


@kernel("tosa.concat")
def concat(call: KernelCall) -> list[np.ndarray]:
    """CONCAT (§2.10.1): the inputs joined along ``axis``."""
    return [np.concatenate(call.inputs, axis=int(call.attrs["axis"])).astype(call.out_dtypes[0], copy=False)]


def _padding(call: KernelCall) -> list[tuple[int, int]]:
    x = call.inputs[0]
    if "padding" in call.attrs and isinstance(call.attrs["padding"], tuple):
        flat = [int(v) for v in call.attrs["padding"]]
    else:
        flat = [int(v) for v in np.asarray(call.inputs[1]).reshape(-1)]
    return [(flat[2 * i], flat[2 * i + 1]) for i in range(x.ndim)]


@kernel("tosa.pad")
def pad(call: KernelCall) -> list[np.ndarray]:
    """PAD (§2.10.2): ``pad_const`` around the input; ``padding[i] = (before, after)``.

    The spec's bounds test (``index[i] >= length(shape[i])``) is a typo for ``index1[i] >= shape1[i]``;
    the kernel implements the intended rule: positions outside the input hold ``pad_const``.
    """
    x = call.inputs[0]
    const = call.attrs.get("pad_const", 0)
    if not isinstance(const, (int, float)):
        const = 0
    out = np.full(call.out_shapes[0], const, dtype=call.out_dtypes[0])
    window = tuple(slice(b, b + n) for (b, _), n in zip(_padding(call), x.shape))
    out[window] = x
    return [out]


@kernel("tosa.reshape")
def reshape(call: KernelCall) -> list[np.ndarray]:
    """RESHAPE (§2.10.3): same elements in row-major order, new shape."""
    return [call.inputs[0].reshape(call.out_shapes[0])]


@kernel("tosa.reverse")
def reverse(call: KernelCall) -> list[np.ndarray]:
    """REVERSE (§2.10.4): the input reversed along ``axis``."""
    return [np.flip(call.inputs[0], axis=int(call.attrs["axis"]))]


@kernel("tosa.slice")
def slice_(call: KernelCall) -> list[np.ndarray]:
    """SLICE (§2.10.5): ``input1[start[i] : start[i] + size[i]]`` in every dimension."""
    start = call.attrs["start"]
    size = call.attrs["size"]
    window = tuple(slice(int(s), int(s) + int(n)) for s, n in zip(start, size))
    return [call.inputs[0][window]]


@kernel("tosa.tile")
def tile(call: KernelCall) -> list[np.ndarray]:
    """TILE (§2.10.6): the input repeated ``multiples[i]`` times along dimension i."""
    return [np.tile(call.inputs[0], tuple(int(m) for m in call.attrs["multiples"]))]


@kernel("tosa.transpose")
def transpose(call: KernelCall) -> list[np.ndarray]:
    """TRANSPOSE (§2.10.7): output dimension i is input dimension ``perms[i]``."""
    perms = call.attrs.get("perms")
    if not isinstance(perms, tuple):
        perms = tuple(int(v) for v in np.asarray(call.inputs[1]).reshape(-1))
    return [np.transpose(call.inputs[0], perms)]
