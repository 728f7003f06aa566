"""Random inputs and the output report of the command line (no xDSL).

``random_array`` makes the deterministic random inputs of ``--random-inputs``; ``report_outputs`` prints one
summary line per output and saves them. Reading and writing ``.npy``/``.npz`` files is ``nnkiln.arrayfiles``
(shared with the reference interpreter).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import ml_dtypes
import numpy as np

from nnkiln.arrayfiles import save_outputs
from nnkiln.errors import InputError
from nnkiln.kinds import Kind
from nnkiln.limits import max_tensor_bytes

MAX_RANDOM_INPUT_BYTES = 1 << 32
"""``--random-inputs`` refuses to draw a tensor larger than this (4 GiB) or than the tensor budget
(``nnkiln.limits``): a clear error, not a MemoryError."""


def random_array(name: str, kind: Kind, shape: Sequence[int], rng: np.random.Generator) -> np.ndarray:
    """A deterministic random input: standard normal for floats, 0/1 for bool, integers in [-128, 127]
    clipped to the kind's range otherwise (so integer and quantized models see plausible values)."""
    from nnkiln.blob.format import storage_dtype

    shape = tuple(int(d) for d in shape)
    dtype = np.float32 if kind.is_float else storage_dtype(kind)
    nbytes = int(np.prod(shape, dtype=object)) * 8  # drawn as 8-byte values, then converted
    limit = min(MAX_RANDOM_INPUT_BYTES, max_tensor_bytes())
    if nbytes > limit:
        raise InputError(f"input '{name}' of shape {list(shape)} would take {nbytes} bytes while drawn (8 per element); "
                         f"random inputs are limited to {limit} bytes (give it with --input, or raise "
                         "NNKILN_MAX_TENSOR_BYTES)")
    if kind.is_float:
        return rng.standard_normal(shape).astype(np.float32)
    if kind is Kind.BOOL:
        return rng.integers(0, 2, shape).astype(np.bool_)
    lo, hi = kind.int_range
    return rng.integers(max(lo, -128), min(hi, 127) + 1, shape).astype(dtype)


def report_outputs(outputs: Mapping[str, np.ndarray], print_values: bool = False, path: str | None = None) -> None:
    """Print one summary line per output (dtype, shape, min/max/mean), optionally the values, and save them."""
    for name, arr in outputs.items():
        a = np.asarray(arr)
        stats = ""
        if a.size and (a.dtype.kind in "biuf" or a.dtype == np.dtype(ml_dtypes.bfloat16)):
            # no float64 copy of a large output: bool and bfloat16 widen to 1 and 4 bytes only
            af = a.view(np.uint8) if a.dtype.kind == "b" else a.astype(np.float32) if a.dtype.kind == "V" or \
                a.dtype == np.dtype(ml_dtypes.bfloat16) else a
            stats = f" min={float(af.min()):.6g} max={float(af.max()):.6g} mean={float(af.mean(dtype=np.float64)):.6g}"
        print(f"{name}: {a.dtype}{list(a.shape)}{stats}")
        if print_values:
            print(np.array2string(a, threshold=64))
    if path:
        save_outputs(outputs, path)
        print(f"outputs saved to {path}")
