"""Best-effort control of numpy's OpenBLAS thread count (no extra dependency).

With several executor threads each running BLAS calls, OpenBLAS's own worker threads oversubscribe
the cores (many times slower: bench/RESULTS.md). While a multi-executor
run is in progress the runtime limits BLAS to one thread per call. If the OpenBLAS library or its
symbols cannot be found, nothing changes.

``kernel_threads()`` is the thread count our own native kernels (``kernels.conv``) may use for one
call: 1 while a multi-executor run is in progress (``single_threaded_blas`` is active: the executors
are the parallelism and the cores are taken); inside ``thread_budget(n)`` (an executable's run, with the
thread count it was compiled for) ``n``; otherwise ``default_threads()``: OpenBLAS's thread count (which
follows ``OPENBLAS_NUM_THREADS``/``OMP_NUM_THREADS``). Never more than the CPUs this process may run on.
``thread_budget`` also sets OpenBLAS's count to ``n`` for its duration (a cheap call: bench/RESULTS.md). The
budget and OpenBLAS's count are process-wide: executables run at the same time from several Python
threads share the last one set.
"""

from __future__ import annotations

import ctypes
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager

_lock = threading.Lock()
_funcs: tuple[object, object] | None | bool = False
_multi = 0  # multi-executor runs in progress (inside single_threaded_blas)
_budget = 0  # the thread count of the executable running now (inside thread_budget), 0: none
try:
    _CPUS = max(1, len(os.sched_getaffinity(0)))
except (AttributeError, OSError):
    _CPUS = max(1, os.cpu_count() or 1)


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


def controls() -> tuple[object, object] | None:
    """OpenBLAS's (get, set) thread-count functions, found once per process (None: not found)."""
    global _funcs
    if _funcs is False:
        with _lock:
            if _funcs is False:
                _funcs = find_blas_thread_controls()
    return _funcs or None  # type: ignore[return-value]


def kernel_threads() -> int:
    """Threads a native kernel may use now (see the module docstring)."""
    if _multi:
        return 1
    return _budget or default_threads()


def usable_cpus() -> int:
    """The CPUs this process may run on."""
    return _CPUS


def default_threads() -> int:
    """The thread count outside any ``thread_budget``: OpenBLAS's, at most the usable CPUs."""
    funcs = controls()
    n = int(funcs[0]()) if funcs else _CPUS  # type: ignore[operator,index]
    return max(1, min(n, _CPUS))


@contextmanager
def single_threaded_blas() -> Iterator[None]:
    global _multi
    funcs = controls()
    with _lock:
        _multi += 1
    try:
        if not funcs:
            yield
            return
        get, set_ = funcs  # type: ignore[misc]
        before = get()  # type: ignore[operator]
        set_(1)  # type: ignore[operator]
        try:
            yield
        finally:
            set_(before)  # type: ignore[operator]
    finally:
        with _lock:
            _multi -= 1


@contextmanager
def thread_budget(n: int, blas: bool = True) -> Iterator[None]:
    """Kernels started inside use ``n`` threads (at most the usable CPUs): ``kernel_threads()`` returns it and
    OpenBLAS runs with it; both are restored on exit. Inside ``single_threaded_blas`` nothing changes.

    ``blas=False``: OpenBLAS is left alone, for runs that never call it (every unit native). Changing its thread
    count around every run cost more than the call: its worker, woken by the change back, spins on the other core
    meanwhile (MobileNetV2 at 1 thread: bench/RESULTS.md)."""
    global _budget
    if _multi:  # inside a multi-executor run (a region program's run): one thread, as every kernel there
        yield
        return
    n = max(1, min(int(n), _CPUS))
    funcs = controls() if blas else None
    outer = _budget
    before = int(funcs[0]()) if funcs else n  # type: ignore[index,operator]
    if before != n:
        funcs[1](n)  # type: ignore[index,operator]
    _budget = n
    try:
        yield
    finally:
        _budget = outer
        if before != n:
            funcs[1](before)  # type: ignore[index,operator]
