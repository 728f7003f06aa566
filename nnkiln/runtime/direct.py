"""Direct runs: ``Executable.run`` for a program that is one chain of bound native calls, with the least Python.

Why: after a network's worth of kernels the interpreter's code and data are out of the caches, and every Python or
numpy operation of a run costs far more than it does warm (an order of magnitude for ``np.prod``,
``arr.ctypes.data``, a view or a trivial ctypes call: bench/RESULTS.md). The usual path (``convert_input``,
``aligned_empty``, ``Chain.run_io``'s pointer patches) spent a few percent of MobileNetV2's run outside the
kernels, long enough that the pool's workers, which spin 200 us after a job (``NK_SPIN_NS``), went to sleep
between runs and the first kernel of the next run waited for them to wake.

What: a run whose arguments need no conversion (exact dtypes, shapes and C-contiguous strides, or int64 token ids
for an int32 input) checks them with a few attribute reads, allocates the outputs, and makes one ctypes call,
``nk_run_bound_io`` (``native/conv.c``), given the arrays themselves (``ctypes.py_object``): the C side reads their
data pointers, narrows int64 inputs into int32 buffers of this object (checking the range), writes the chain's
patched argument slots, and runs the chain. Anything else (other dtypes, non-contiguous arrays, a failing call, a
value out of range) returns None and ``Executable.run`` takes the usual path, which converts, checks, recomputes
everything and reports the problem: results and errors are the same either way.

The data pointer of an ndarray is a field of the object (numpy's ``PyArrayObject.data``); its offset is found by
looking for known addresses among the first words of probe arrays (``data_offset``). Where it is not found on all
probes (another Python implementation, a changed layout), direct runs are off.
"""

from __future__ import annotations

import ctypes
import math
import sys
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from nnkiln import native_header as header
from nnkiln.alloc import aligned_empty
from nnkiln.blob.format import IODesc
from nnkiln.runtime import blas
from nnkiln.runtime.kernels.bound import Chain

IO_MAX = header.define("NK_IO_MAX")
"""Inputs plus outputs a direct run can take (``nk_run_bound_io``'s object parameters)."""

SMALL_OUTPUT_BYTES = 1 << 16
"""Outputs below this size come from ``np.empty`` (16-byte aligned: their stores are too few for the alignment to
matter); larger ones from ``aligned_empty`` (64 bytes, see ``nnkiln.alloc``)."""

_I64 = np.dtype(np.int64)
_OFFSET: int | None | bool = False  # not looked for yet


def data_offset() -> int | None:
    """The byte offset of an ndarray's data pointer inside the array object, or None when it cannot be trusted."""
    global _OFFSET
    if _OFFSET is False:
        _OFFSET = None
        if sys.implementation.name == "cpython":
            base = np.arange(24, dtype=np.int64)
            probes = [np.empty(3, np.float32), base[5:], base.reshape(4, 6).T, np.zeros((2, 3), np.uint8)]
            word = ctypes.sizeof(ctypes.c_void_p)
            for k in range(2, 8):  # after the object header; PyArrayObject has more fields than this
                if all(ctypes.c_void_p.from_address(id(p) + k * word).value == p.ctypes.data for p in probes):
                    _OFFSET = k * word
                    break
    return _OFFSET


def _runner() -> Any:
    from nnkiln.runtime.kernels.conv import native_lib

    lib = native_lib()
    return lib.nk_run_bound_io if lib is not None else None


def _c_strides(shape: tuple[int, ...], itemsize: int) -> tuple[int, ...]:
    out, step = [], itemsize
    for d in reversed(shape):
        out.append(step)
        step *= d
    return tuple(reversed(out))


def _exact_int_range(io: IODesc, dt: np.dtype) -> bool:
    """An integer input whose storage dtype holds exactly its kind's range (else the usual path checks it)."""
    return dt.kind in "iu" and io.kind.int_range == (int(np.iinfo(dt).min), int(np.iinfo(dt).max))


def direct_run(chain: Chain, inputs: Sequence[tuple[IODesc, np.dtype]],
               outputs: Sequence[tuple[str, tuple[int, ...], np.dtype]], lock: Any, threads: int) -> DirectRun | None:
    """The ``DirectRun`` of a program that is the one ``chain``, or None where direct runs cannot apply (no native
    runner or trusted data offset, more than ``IO_MAX`` inputs and outputs, an integer input of a narrower kind)."""
    offset, fn = data_offset(), _runner()
    if offset is None or fn is None or len(inputs) + len(outputs) > IO_MAX:
        return None
    if any(io.kind.is_int and not _exact_int_range(io, dt) for io, dt in inputs):
        return None
    return DirectRun(chain, inputs, outputs, lock, threads, fn, offset)


class DirectRun:
    """``run(inputs) -> outputs | None`` straight into ``chain`` (see the module docstring; made by ``direct_run``).
    ``inputs``: the blob's inputs and their storage dtypes; ``outputs``: the output names, shapes and dtypes."""

    def __init__(self, chain: Chain, inputs: Sequence[tuple[IODesc, np.dtype]],
                 outputs: Sequence[tuple[str, tuple[int, ...], np.dtype]], lock: Any, threads: int, fn: Any,
                 offset: int):
        # per input: (name, shape, dtype, C strides, int64 strides or None, index of its narrowing buffer or -1)
        self._ins: list[tuple[str, tuple[int, ...], np.dtype, tuple[int, ...], tuple[int, ...] | None, int]] = []
        self._narrowed: list[np.ndarray] = []
        conv: list[tuple[int, ...]] = []
        for k, (io, dt) in enumerate(inputs):
            shape = tuple(io.shape)
            wide = None
            if dt == np.int32:  # int64 token ids are narrowed in C, their range checked
                buf = aligned_empty(shape, np.int32)
                self._narrowed.append(buf)
                conv.append((k, buf.ctypes.data, buf.size, *io.kind.int_range))
                wide = _c_strides(shape, 8)
            self._ins.append((io.name, shape, np.dtype(dt), _c_strides(shape, dt.itemsize), wide, len(conv) - 1
                              if wide is not None else -1))
        self._outs = [(name, tuple(shape), np.dtype(dt),
                       math.prod(shape) * np.dtype(dt).itemsize < SMALL_OUTPUT_BYTES) for name, shape, dt in outputs]
        self._names = [name for name, _, _, _ in self._outs]
        self._nin, self._nobj = len(self._ins), len(self._ins) + len(self._outs)
        patches = []
        for arr, k, is_input, index, off in chain._io_patches:
            slot = (ctypes.addressof(arr) if isinstance(arr, ctypes.Array) else arr.ctypes.data) + 8 * k
            patches.append((slot, index if is_input else self._nin + index, off))
        self._conv_all = np.array(conv, np.int64).reshape(-1, 5)
        self._patch = np.array(patches, np.int64).reshape(-1, 3)
        self._patch_p, self._npatch = self._patch.ctypes.data, len(patches)
        self._chain, self._fn, self._offset = chain, fn, offset
        self._lock, self._threads = lock, threads
        self._pad = (None,) * (IO_MAX - self._nobj)

    def __call__(self, inputs: Mapping[str, Any]) -> dict[str, np.ndarray] | None:
        if type(inputs) is not dict or len(inputs) != self._nin:
            return None
        objs: list[Any] = []
        narrow: list[int] = []
        for name, shape, dt, strides, wide, conv in self._ins:
            a = inputs.get(name)
            if type(a) is not np.ndarray or a.shape != shape:
                return None
            if a.dtype is dt and a.strides == strides:
                objs.append(a)
            elif wide is not None and a.dtype is _I64 and a.strides == wide:
                objs.append(a)
                narrow.append(conv)
            else:
                return None
        outs = [np.empty(shape, dt) if small else aligned_empty(shape, dt) for _, shape, dt, small in self._outs]
        if narrow:
            conv = self._conv_all[narrow] if len(narrow) < len(self._conv_all) else self._conv_all
            conv_p, nconv = conv.ctypes.data, len(narrow)
        else:
            conv_p, nconv = None, 0
        chain = self._chain
        with self._lock:
            rc = self._fn(chain._fns, chain._argp, chain.n, 1 if blas._multi else self._threads, conv_p, nconv,
                          self._patch_p, self._npatch, self._offset, self._nobj, *objs, *outs, *self._pad)
        if rc:
            return None
        return dict(zip(self._names, outs))


__all__ = ["DirectRun", "IO_MAX", "data_offset", "direct_run"]
