"""``gemm(a, b, out)``: ``np.matmul(out=)`` with OpenBLAS's threads used only where they pay off.

With one executor the runtime lets BLAS use all the threads (``OPENBLAS_NUM_THREADS``). For small
products (fewer than ``SMALL_FLOPS`` = 2·M·N·K, about half a millisecond on one core) waking the other
BLAS threads costs more than it saves, and far more when another process holds those cores
(measured on the 2-core machine: BERT-tiny at 2 threads took 50x longer than at 1 thread): such calls
run with one BLAS thread. When BLAS is already at one thread (several executors, or a 1-thread
setting) nothing is switched. Blocked kernels (``kernels.conv``) make their blocks at least
``min_rows`` rows when BLAS has several threads, so their GEMMs stay multi-threaded. Results do not depend on the thread count (OpenBLAS splits the output,
not the sums).

Where conv.c has its AVX-512 tiles, convolutions and every constant-weight GEMM run on our own thread pool
(``conv.native_gemm``), and OpenBLAS's threads, which spin for a while after each call, would compete with
it for the cores: measured on BERT-base at 2 threads (in-process, medians), 255 ms with OpenBLAS threading its
remaining (attention) products as before, 165 ms with them on one thread, 171 ms for the previous all-OpenBLAS
plan. So there the threshold is ``SHARED_SMALL_FLOPS`` (products below it, e.g. all of BERT-base's
attention products at 25 MFLOP, run on one BLAS thread).
"""

from __future__ import annotations


import numpy as np

SMALL_FLOPS = 2.5e7
SHARED_SMALL_FLOPS = 2e8
_funcs: tuple | None | bool = False
_shared: bool | None = None


def _pool_shares_cores() -> bool:
    """Whether our native kernels' pool takes the threaded work (conv.c's AVX-512 build, see above)."""
    global _shared
    if _shared is None:
        from nnkiln.runtime.kernels.conv import native_lib

        lib = native_lib("conv")
        _shared = bool(lib is not None and lib.nk_wide_tiles())
    return _shared


def small_flops() -> float:
    """Products below this many flops run on one BLAS thread."""
    return SHARED_SMALL_FLOPS if _pool_shares_cores() else SMALL_FLOPS


def _blas() -> tuple | None:
    global _funcs
    if _funcs is False:
        from nnkiln.runtime.blas import find_blas_thread_controls

        _funcs = find_blas_thread_controls()
    return _funcs  # type: ignore[return-value]


def blas_threads() -> int:
    """OpenBLAS's current thread count (1 if it cannot be found)."""
    funcs = _blas()
    return int(funcs[0]()) if funcs else 1  # type: ignore[operator]


def min_rows(flops_per_row: float) -> int:
    """Rows a blocked kernel should give each GEMM so that it is not "small" when BLAS has several
    threads (then the threads share every block); 1 with one BLAS thread."""
    if blas_threads() <= 1 or flops_per_row <= 0:
        return 1
    return int(-(-small_flops() // flops_per_row))


def gemm(a: np.ndarray, b: np.ndarray, out: np.ndarray) -> None:
    """``np.matmul(a, b, out=out)``; single-threaded BLAS when the product is small."""
    flops = 2.0 * out.size * a.shape[-1]
    funcs = _blas() if flops < small_flops() else None
    if not funcs:
        np.matmul(a, b, out=out)
        return
    get, set_ = funcs
    before = get()
    if before <= 1:
        np.matmul(a, b, out=out)
        return
    set_(1)
    try:
        np.matmul(a, b, out=out)
    finally:
        set_(before)


__all__ = ["SHARED_SMALL_FLOPS", "SMALL_FLOPS", "blas_threads", "gemm", "min_rows", "small_flops"]
