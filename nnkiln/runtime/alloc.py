"""Aligned host buffers.

numpy aligns a new array to 16 bytes only (a large one usually starts 16 bytes past a page), so a buffer of
64-byte vectors would start mid cache line and every AVX-512 load or store of it would touch two lines.
Measured on the 2-core AVX-512 EPYC (MobileNetV2, batch 1, four executables interleaved in one process, their
arenas at chosen offsets from a 2 MiB boundary): offsets 0 and 4096 took 7.60 ms at 1 thread and 4.44-4.47 ms at
2, offsets 16 and 48 took 7.83-7.87 and 4.58-4.60 ms (3% slower). A fresh process's first arena usually lands on a
page boundary by chance; the second and later ones in a process (a server, the benchmark's model after model)
did not: four compiled one after another got offsets 48, 48, 0 and 16 modulo 64.
"""

from __future__ import annotations

import numpy as np

CACHE_LINE = 64
PAGE = 4096


def aligned_empty(shape: int | tuple[int, ...], dtype: np.dtype | type = np.float32, align: int = CACHE_LINE
                  ) -> np.ndarray:
    """An uninitialised C-contiguous array whose first byte is ``align``-byte aligned (a view into a slightly
    larger allocation, which it keeps alive)."""
    dt = np.dtype(dtype)
    shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
    nbytes = int(np.prod(shape, dtype=np.int64)) * dt.itemsize
    raw = np.empty(nbytes + align, np.uint8)
    skip = -raw.ctypes.data % align
    return raw[skip:skip + nbytes].view(dt).reshape(shape)
