"""``gemm(a, b, out)``: ``np.matmul(out=)`` with OpenBLAS's threads used only where they pay off.

With one executor the runtime lets BLAS use all the threads (``OPENBLAS_NUM_THREADS``). For small
products (fewer than ``SMALL_FLOPS`` = 2·M·N·K, about half a millisecond on one core) waking the other
BLAS threads costs more than it saves, and far more when another process holds those cores
(bench/RESULTS.md): such calls run with one BLAS thread. When BLAS is already at one thread (several
executors, or a 1-thread setting) nothing is switched. Blocked kernels (``kernels.conv``) make their blocks
at least ``min_rows`` rows when BLAS has several threads, so their GEMMs stay multi-threaded. Results do not
depend on the thread count (OpenBLAS splits the output, not the sums).

Plans (``GemmPlan``, chosen per executable by ``plan_for``): MATMULs whose constant weights the blob holds as
GEMM panels (``b_panels``, written for the cpu target) run on conv.c's implicit GEMM reading them in place.
Other FULLY_CONNECTED / MATMUL ops with constant weights run there too where conv.c has its AVX-512 tiles,
with their weights packed once at load time, a second copy of them: so only while those weights total at
most the target's ``native_gemm_max_bytes`` (``select-kernel-variants``; a second copy of BERT-base's weights
took its runtime peak past onnxruntime's). Such an executable runs its convolutions and GEMMs on our
thread pool, and OpenBLAS's threads, which spin for a while after each call, would compete with it for the
cores: there BLAS products below ``SHARED_SMALL_FLOPS`` run on one thread (OpenBLAS threading BERT-base's
attention products made it much slower at 2 threads: bench/RESULTS.md). Every other executable keeps OpenBLAS
for its GEMMs with ``SMALL_FLOPS``. In such a pooled executable the products of two run-time operands
(attention's) also run on conv.c (``conv.native_bmm``) when kernels may use several threads, their batches
shared by the pool's threads.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from nnkiln.blob.format import BufferDesc, Memory, TaskDesc
from nnkiln.runtime.blas import controls

SMALL_FLOPS = 2.5e7
SHARED_SMALL_FLOPS = 2e8


@dataclass
class GemmPlan:
    """How one executable runs its GEMMs (see the module docstring)."""

    native: bool = False  # constant-weight FULLY_CONNECTED / MATMUL on conv.c, weights packed at load
    small_flops: float = SMALL_FLOPS  # BLAS products below this run on one thread
    pooled: bool = False  # GEMMs run on conv.c's thread pool (then so do products of two run-time operands)
    packed: dict[tuple[int, tuple[int, ...], str], np.ndarray] = field(default_factory=dict)  # by (address, shape, kind)

    def packed_weights(self, w: np.ndarray, layout: str) -> np.ndarray:
        """``conv.pack_gemm_weights(w, layout)``, once per constant (kernels are built more than once per task)."""
        from nnkiln.runtime.kernels.conv import pack_gemm_weights

        return self.cached(w, layout, lambda: pack_gemm_weights(w, layout))

    def cached(self, w: np.ndarray, kind: str, make: Callable[[], np.ndarray]) -> np.ndarray:
        """``make()``, a load-time rearrangement of the constant ``w`` (packed panels, transformed weights), once
        per constant and ``kind`` within one executable: tasks sharing a constant (``split-batch``'s per-sample
        copies of a layer) share it. Outside ``planning`` nothing is kept (addresses are reused)."""
        if self is _DEFAULT:
            return make()
        key = (w.ctypes.data, w.shape, kind)
        out = self.packed.get(key)
        if out is None:
            out = self.packed[key] = make()
        return out


_DEFAULT = GemmPlan()
_current = threading.local()


def plan_for(tasks: Sequence[TaskDesc], buffers: Sequence[BufferDesc], metadata: dict[str, Any]) -> GemmPlan:
    """The plan of an executable: native GEMMs for constant weights held as they are where the compiler chose them
    (the blob's metadata ``gemm = "native"``, ``select-kernel-variants``) and conv.c has its AVX-512 tiles here
    (weights the blob holds as GEMM panels, ``b_panels``, always run natively, needing no copy); BLAS's one-thread
    threshold is ``SHARED_SMALL_FLOPS`` whenever native GEMMs run."""
    from nnkiln.runtime.kernels.conv import native_gemm_available, native_lib

    gemms = [t for t in tasks if t.kernel in ("tosa.fully_connected", "tosa.matmul") and len(t.ins) > 1
             and buffers[t.ins[1]].memory is Memory.CONSTANT]
    paneled = any(t.args.get("attrs", {}).get("b_panels") for t in gemms)
    native = metadata.get("gemm") == "native" and native_gemm_available()
    shared = native or (paneled and native_lib() is not None)
    return GemmPlan(native=native, small_flops=SHARED_SMALL_FLOPS if shared else SMALL_FLOPS, pooled=shared)


@contextmanager
def planning(plan: GemmPlan) -> Iterator[None]:
    """Kernels built inside follow ``plan`` (``current_plan``)."""
    before = getattr(_current, "plan", None)
    _current.plan = plan
    try:
        yield
    finally:
        _current.plan = before


def current_plan() -> GemmPlan:
    return getattr(_current, "plan", None) or _DEFAULT


def blas_threads() -> int:
    """OpenBLAS's current thread count (1 if it cannot be found)."""
    funcs = controls()
    return int(funcs[0]()) if funcs else 1  # type: ignore[operator]


def min_rows(flops_per_row: float) -> int:
    """Rows a blocked kernel should give each GEMM so that it is not "small" when BLAS has several
    threads (then the threads share every block); 1 with one BLAS thread."""
    if blas_threads() <= 1 or flops_per_row <= 0:
        return 1
    return int(-(-SMALL_FLOPS // flops_per_row))


def gemm(a: np.ndarray, b: np.ndarray, out: np.ndarray, small_flops: float = SMALL_FLOPS) -> None:
    """``np.matmul(a, b, out=out)``; single-threaded BLAS when the product is below ``small_flops``."""
    flops = 2.0 * out.size * a.shape[-1]
    funcs = controls() if flops < small_flops else None
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


__all__ = ["SHARED_SMALL_FLOPS", "SMALL_FLOPS", "GemmPlan", "blas_threads", "current_plan",
           "gemm", "min_rows", "plan_for", "planning"]
