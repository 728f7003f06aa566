"""Aligned host buffers.

numpy aligns a new array to 16 bytes only (a large one usually starts 16 bytes past a page), so a buffer of
64-byte vectors would start mid cache line and every AVX-512 load or store of it would touch two lines: a
misaligned arena made MobileNetV2 measurably slower (bench/RESULTS.md). A fresh process's first arena usually
lands on a page boundary by chance; the second and later ones in a process (a server, the benchmark's model after
model) did not: four compiled one after another got offsets 48, 48, 0 and 16 modulo 64.

Large arrays made while compiling (packed GEMM weights) come from ``small_page_empty``: numpy asks the kernel to back
allocations of 4 MiB and more with huge pages (``madvise(MADV_HUGEPAGE)``), and with this machine's default
``transparent_hugepage/defrag = madvise`` the page faults then compact memory synchronously: BERT-base's compile
was slower and less steady with numpy's advice, while the model's latency did not move (bench/RESULTS.md): its
products block their weights for the caches, so TLB reach does not limit them.
"""

from __future__ import annotations

import mmap

import numpy as np

CACHE_LINE = 64
PAGE = 4096


def _layout(shape: int | tuple[int, ...], dtype: np.dtype | type) -> tuple[tuple[int, ...], np.dtype, int]:
    """(shape as a tuple, dtype, bytes) of a C-contiguous array."""
    dt = np.dtype(dtype)
    shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
    return shape, dt, int(np.prod(shape, dtype=np.int64)) * dt.itemsize


def aligned_empty(shape: int | tuple[int, ...], dtype: np.dtype | type = np.float32, align: int = CACHE_LINE
                  ) -> np.ndarray:
    """An uninitialised C-contiguous array whose first byte is ``align``-byte aligned (a view into a slightly
    larger allocation, which it keeps alive)."""
    shape, dt, nbytes = _layout(shape, dtype)
    raw = np.empty(nbytes + align, np.uint8)
    skip = -raw.ctypes.data % align
    return raw[skip:skip + nbytes].view(dt).reshape(shape)


SMALL_PAGE_MIN_BYTES = 4 << 20
"""Below this numpy gives no huge-page advice anyway: ``small_page_empty`` is then ``aligned_empty``."""


def small_page_empty(shape: int | tuple[int, ...], dtype: np.dtype | type = np.float32) -> np.ndarray:
    """An uninitialised, writable, C-contiguous, page-aligned array in an anonymous mapping of its own, which is
    never advised to use huge pages (see the module docstring) and is mapped at once (``_POPULATED``); it lives as
    long as the array (its base). Below ``SMALL_PAGE_MIN_BYTES``: ``aligned_empty`` on a page."""
    shape, dt, nbytes = _layout(shape, dtype)
    if nbytes < SMALL_PAGE_MIN_BYTES:
        return aligned_empty(shape, dt, PAGE)
    return np.frombuffer(mmap.mmap(-1, nbytes, flags=_POPULATED), dt, nbytes // dt.itemsize).reshape(shape)


_POPULATED = mmap.MAP_PRIVATE | getattr(mmap, "MAP_ANONYMOUS", getattr(mmap, "MAP_ANON", 0)) | getattr(
    mmap, "MAP_POPULATE", 0)
"""Private anonymous pages, all mapped at once where the system can (Linux's MAP_POPULATE): one call instead of a
page fault per 4 KiB page; faster than faulting page by page, and steadier than numpy's huge-page advice
(bench/RESULTS.md)."""
