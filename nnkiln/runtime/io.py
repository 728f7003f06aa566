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

MAX_RANDOM_INPUT_BYTES = 1 << 32
"""``--random-inputs`` refuses to make a tensor larger than this (4 GiB): a clear error, not a MemoryError."""


def random_array(name: str, kind: Kind, shape: Sequence[int], rng: np.random.Generator) -> np.ndarray:
    """A deterministic random input: standard normal for floats, 0/1 for bool, integers in [-128, 127]
    clipped to the kind's range otherwise (so integer and quantized models see plausible values)."""
    from nnkiln.blob.format import storage_dtype

    shape = tuple(int(d) for d in shape)
    dtype = np.float32 if kind.is_float else storage_dtype(kind)
    nbytes = int(np.prod(shape, dtype=object)) * np.dtype(dtype).itemsize
    if nbytes > MAX_RANDOM_INPUT_BYTES:
        raise InputError(f"input '{name}' of shape {list(shape)} would take {nbytes} bytes; random inputs are "
                         f"limited to {MAX_RANDOM_INPUT_BYTES} bytes (give it with --input)")
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
            af = a.astype(np.float64)
            stats = f" min={af.min():.6g} max={af.max():.6g} mean={af.mean():.6g}"
        print(f"{name}: {a.dtype}{list(a.shape)}{stats}")
        if print_values:
            print(np.array2string(a, threshold=64))
    if path:
        save_outputs(outputs, path)
        print(f"outputs saved to {path}")
