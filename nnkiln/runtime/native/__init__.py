"""Native kernels: a C library built at install time, loaded with ctypes, typed from ``nnkiln.h``.

Why: numpy cannot fuse a depthwise convolution with its epilogue or a chain of small elementwise operations
without materialising temporaries, and per-call overhead dominates small layers. A few hand-written C loops close
that gap.

How it is built (``native/build.py``): as a setuptools extension, by ``pip install .`` / ``pip install -e .``
(``setup.py``), into ``_nnkiln<EXT_SUFFIX>`` beside this file. Decision: plain C called through ctypes, built by
plain setuptools. The kernels use no Python API and ctypes releases the GIL around each call, so the library needs
no Python headers and no binding layer; cffi's API mode would add a runtime dependency, a CPython extension module
would tie every kernel to the C API, and compiling at first use (as before) hid build failures behind a silent
numpy fallback. A failed compile now fails the install; only an install without a C compiler builds nothing. The
file keeps setuptools' extension name (one per interpreter ABI in a shared source tree) but defines no
``PyInit_``: it is opened with ctypes, never imported.

How it is loaded (``load``): ctypes opens the library; every function that ``nnkiln.h`` declares gets its
argument and result types from the header (``native/header.py``): a function the library lacks, or a name the
header does not declare, raises instead of corrupting memory. A library built from other sources than the ``.c`` and
``.h`` files beside it (``nk_source_digest``: edited since the last build) raises too: rebuild it with
``python -m nnkiln.runtime.native.build`` (or ``pip install -e .``).

Fallback: ``load`` returns None when ``NNKILN_NO_NATIVE=1`` is set (run time) or when no library was built
(then it warns once, naming why); every caller keeps a pure-numpy path and results agree within the runtime's
float tolerance (1e-5 relative; the C code is compiled without ``-ffast-math`` so NaN/inf behave as IEEE).
``status()`` says which library loaded, with its build flags, or why none did.

Environment: ``NNKILN_NO_NATIVE=1`` disables the library at run time; ``NNKILN_NATIVE_FLAGS`` adds compiler flags
at build time (``build.py``); ``NNKILN_NATIVE_LIB`` loads the library at that path instead of the installed one
(another build of the same sources: tests of the AVX2 and scalar paths, A/B measurements).
"""

from __future__ import annotations

import ctypes
import importlib.machinery
import os
import threading
import warnings
from pathlib import Path
from typing import Any

from nnkiln import native_header as header

__all__ = ["Library", "NativeLibraryError", "UndeclaredFunction", "cpu_flags", "disabled", "library_path", "load",
           "status"]

_HERE = Path(__file__).resolve().parent
_NAME = "_nnkiln"
_REBUILD = "rebuild it: python -m nnkiln.runtime.native.build (or pip install -e .)"


class NativeLibraryError(RuntimeError):
    """The library does not match the header or the sources beside it."""


class UndeclaredFunction(AttributeError):
    """A function that ``nnkiln.h`` does not declare was asked for."""


class Library:
    """The loaded library: one attribute per function of ``nnkiln.h``, typed from it. ``path``: the file."""

    def __init__(self, path: Path):
        self.path = path
        self._dll = ctypes.CDLL(str(path))
        for name in header.functions():
            try:
                fn = getattr(self._dll, name)
            except AttributeError:
                raise NativeLibraryError(f"{path} has no {name}, which nnkiln.h declares: {_REBUILD}") from None
            fn.argtypes, fn.restype = header.signature(name)
            setattr(self, name, fn)

    def __getattr__(self, name: str) -> Any:  # only for names __init__ did not set
        raise UndeclaredFunction(f"{name} is not declared in {header.HEADER}: Python calls only what the header "
                                 "declares (declare it there, the compiler then checks its definition)")


_lock = threading.Lock()
_done = False
_lib: Library | None = None
_why = "not loaded yet"


def disabled() -> bool:
    """Whether ``NNKILN_NO_NATIVE`` disables the library."""
    return os.environ.get("NNKILN_NO_NATIVE", "") not in ("", "0")


def library_path() -> Path | None:
    """The library ``load`` opens (``NNKILN_NATIVE_LIB``, else the one built for this interpreter beside this
    file), or None when none was built."""
    override = os.environ.get("NNKILN_NATIVE_LIB")
    if override:
        return Path(override)
    for suffix in importlib.machinery.EXTENSION_SUFFIXES:
        p = _HERE / f"{_NAME}{suffix}"
        if p.exists():
            return p
    return None


def _open(path: Path) -> Library:
    from nnkiln.runtime.native.build import source_digest  # not at import: python -m ...build runs that module

    lib = Library(path)
    built = lib.nk_source_digest().decode()
    if built and any(_HERE.glob("*.c")) and built != source_digest(_HERE):
        raise NativeLibraryError(f"{path} was built from other sources than those in {_HERE} (edited since): {_REBUILD}")
    return lib


def load() -> Library | None:
    """The library, or None (then use the numpy path): disabled, or not built (warned once)."""
    global _done, _lib, _why
    if _done:
        return _lib
    with _lock:
        if not _done:
            if disabled():
                _why = "disabled by NNKILN_NO_NATIVE"
            else:
                path = library_path()
                if path is None:
                    _why = f"not built (no {_NAME} library in {_HERE}: the install found no C compiler?)"
                    warnings.warn(f"nnkiln's native kernels are {_why}; using the slower numpy fallback. Install "
                                  "nnkiln where a C compiler is available, or build them in place: "
                                  "python -m nnkiln.runtime.native.build", RuntimeWarning, stacklevel=2)
                else:
                    _lib = _open(path)
                    _why = f"loaded {path} (flags: {_lib.nk_build_flags().decode() or 'unknown'})"
            _done = True
    return _lib


def status() -> str:
    """``"loaded <path> (flags: ...)"``, or why the library is not used."""
    with _lock:
        return _why


def cpu_flags() -> set[str]:
    """The CPU's feature flags (``/proc/cpuinfo``; empty elsewhere): what a ``-march=native`` build may use."""
    try:
        with open("/proc/cpuinfo") as f:
            return set(next((line for line in f if line.startswith("flags")), "").split())
    except OSError:
        return set()
