"""Reading inputs from and writing outputs to ``.npy``/``.npz`` files (no xDSL).

Same conventions as ``nnkiln.reference.interpreter.load_inputs``/``save_outputs``: ``name=file.npy``,
``file.npz`` (every array by its name) or ``name=file.npz`` (that array, or the only one); bfloat16
outputs are written as float32 (exact).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence

import ml_dtypes
import numpy as np

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


def _load(path: str):  # noqa: ANN202
    if not os.path.exists(path):
        raise InputError(f"{path}: no such file")
    try:
        return np.load(path, allow_pickle=False)
    except (OSError, ValueError, EOFError) as err:
        raise InputError(f"{path}: not a readable .npy/.npz file: {err or type(err).__name__}") from None


def load_inputs(specs: Sequence[str]) -> dict[str, np.ndarray]:
    """Read inputs given as ``name=file.npy``, ``name=file.npz`` or ``file.npz``.

    - ``name=file.npy``: the array in the file, named ``name``;
    - ``file.npz``: every array in the archive, under its name in the archive;
    - ``name=file.npz``: the archive's array called ``name``, or its only array.
    A name given twice is an ``InputError``.
    """
    result: dict[str, np.ndarray] = {}

    def put(name: str, arr: np.ndarray, spec: str) -> None:
        if not name:
            raise InputError(f"input '{spec}': empty input name")
        if name in result:
            raise InputError(f"input '{name}' is given twice (in '{spec}')")
        result[name] = arr

    for spec in specs:
        name, sep, path = spec.partition("=")
        if not sep:
            name, path = "", spec
        data = _load(path)
        if isinstance(data, np.lib.npyio.NpzFile):
            with data:
                keys = list(data.keys())
                if not name:
                    if not keys:
                        raise InputError(f"{path}: the archive holds no arrays")
                    for k in keys:
                        put(k, data[k], spec)
                elif name in keys:
                    put(name, data[name], spec)
                elif len(keys) == 1:
                    put(name, data[keys[0]], spec)
                else:
                    raise InputError(f"{path}: no array '{name}' (it has: {', '.join(keys) or 'none'})")
        else:
            if not name:
                raise InputError(f"input '{spec}': a .npy file needs a name: NAME={path}")
            put(name, np.asarray(data), spec)
    return result


def save_outputs(outputs: Mapping[str, np.ndarray], path: str) -> None:
    """Write outputs to ``path``: one ``.npy`` if it ends in ``.npy`` (one output only), else ``.npz``.

    bfloat16 arrays are written as float32 (exactly; ``.npy`` has no bfloat16 dtype). numpy appends
    ``.npz`` to a path that does not end with it.
    """
    bf16 = np.dtype(ml_dtypes.bfloat16)
    conv = {k: (v.astype(np.float32) if v.dtype == bf16 else v) for k, v in outputs.items()}
    try:
        if path.endswith(".npy"):
            if len(conv) != 1:
                raise InputError(f"{path}: a .npy file holds one array, but there are {len(conv)} outputs; use .npz")
            np.save(path, next(iter(conv.values())))
        else:
            np.savez(path, **conv)
    except OSError as err:
        raise InputError(f"{path}: cannot write: {err}") from None


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
