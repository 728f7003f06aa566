"""``gemm(a, b, out)``: ``np.matmul(out=)`` with OpenBLAS's threads used only where they pay off.

With one executor the runtime lets BLAS use all the threads (``OPENBLAS_NUM_THREADS``). For small
products (fewer than ``SMALL_FLOPS`` = 2·M·N·K, about half a millisecond on one core) waking the other
BLAS threads costs more than it saves, and far more when another process holds those cores
(measured on the 2-core machine: BERT-tiny at 2 threads took 50x longer than at 1 thread): such calls
run with one BLAS thread. When BLAS is already at one thread (several executors, or a 1-thread
setting) nothing is switched. Results do not depend on the thread count (OpenBLAS splits the output,
not the sums).
"""

from __future__ import annotations


import numpy as np

SMALL_FLOPS = 2.5e7
_funcs: tuple | None | bool = False


def _blas() -> tuple | None:
    global _funcs
    if _funcs is False:
        from nnkiln.runtime.blas import _find

        _funcs = _find()
    return _funcs  # type: ignore[return-value]


def gemm(a: np.ndarray, b: np.ndarray, out: np.ndarray) -> None:
    """``np.matmul(a, b, out=out)``; single-threaded BLAS when the product is small."""
    flops = 2.0 * out.size * a.shape[-1]
    funcs = _blas() if flops < SMALL_FLOPS else None
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


__all__ = ["SMALL_FLOPS", "gemm"]
