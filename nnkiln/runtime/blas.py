"""Best-effort control of numpy's OpenBLAS thread count (no extra dependency).

With several executor threads each running BLAS calls, OpenBLAS's own worker threads oversubscribe
the cores (measured: ResNet-18-like, 2 cores, 2 executors: 10x slower). While a multi-executor
run is in progress the runtime limits BLAS to one thread per call. If the OpenBLAS library or its
symbols cannot be found, nothing changes.
"""

from __future__ import annotations

import ctypes
import threading
from collections.abc import Iterator
from contextlib import contextmanager

_lock = threading.Lock()
_funcs: tuple[object, object] | None | bool = False


def find_blas_thread_controls() -> tuple[object, object] | None:
    import numpy  # noqa: F401  (loads the library)

    try:
        with open("/proc/self/maps") as f:
            paths = {line.split()[-1] for line in f if "openblas" in line.lower() and line.split()[-1].startswith("/")}
    except OSError:
        return None
    for path in paths:
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            continue
        for prefix in ("scipy_openblas", "openblas"):
            for suffix in ("64_", ""):
                get = getattr(lib, f"{prefix}_get_num_threads{suffix}", None)
                set_ = getattr(lib, f"{prefix}_set_num_threads{suffix}", None)
                if get is not None and set_ is not None:
                    get.restype = ctypes.c_int
                    set_.argtypes = [ctypes.c_int]
                    return get, set_
    return None


@contextmanager
def single_threaded_blas() -> Iterator[None]:
    global _funcs
    with _lock:
        if _funcs is False:
            _funcs = find_blas_thread_controls()
    if not _funcs:
        yield
        return
    get, set_ = _funcs  # type: ignore[misc]
    before = get()  # type: ignore[operator]
    set_(1)  # type: ignore[operator]
    try:
        yield
    finally:
        set_(before)  # type: ignore[operator]
