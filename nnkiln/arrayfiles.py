"""Reading inputs from and writing outputs to ``.npy``/``.npz`` files: the command line's convention (no xDSL).

``name=file.npy``, ``file.npz`` (every array by its name) or ``name=file.npz`` (that array, or the only one);
bfloat16 outputs are written as float32 (exact). One implementation, shared by the reference interpreter
(``nnkiln.reference.load_inputs``/``save_outputs``) and the runtime's command line (``nnkiln.runtime.io``), which
is why it lives in neither.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence

import ml_dtypes
import numpy as np

from nnkiln.errors import InputError


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


__all__ = ["load_inputs", "save_outputs"]
