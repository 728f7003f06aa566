"""Optional native kernels: small C files compiled on first use with the machine's C compiler.

Why: numpy cannot fuse a depthwise convolution with its epilogue or a chain of small elementwise
operations without materialising temporaries, and per-call overhead dominates small layers. A few
hand-written C loops close that gap. The same approach as tinygrad's clang backend: no build step at
install time, no extra Python dependency.

How: ``load("depthwise")`` compiles ``nnkiln/runtime/native/depthwise.c`` into a shared library in a
cache directory (``$NNKILN_CACHE_DIR``, else ``$XDG_CACHE_HOME/nnkiln``, else ``~/.cache/nnkiln``),
keyed by a hash of the source, the flags, the compiler and the CPU, written atomically (parallel test
workers may race) and loaded with :mod:`ctypes`. Each C file is its own library, so a broken file
never disables another.

Fallback: ``load`` returns ``None`` when ``NNKILN_NO_NATIVE=1`` is set, no C compiler is found, or
compilation fails; every caller keeps a pure-numpy path and results agree within the runtime's float
tolerance (1e-5 relative; the C code is compiled without ``-ffast-math`` so NaN/inf behave as IEEE).
``status()`` says which libraries loaded and why others did not (``nnkiln inspect`` / bug reports).

``NNKILN_NATIVE_FLAGS`` appends compiler flags (part of the cache key), e.g. ``-mno-avx512f`` to build and
test the AVX2 paths on a machine with AVX-512.
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import platform
import re
import shutil
import subprocess
import tempfile
import threading
from pathlib import Path

__all__ = ["load", "status", "available"]

_HERE = Path(__file__).resolve().parent
FLAGS: tuple[str, ...] = ("-O3", "-march=native", "-fPIC", "-shared", "-fopenmp", "-fno-math-errno", "-std=c11")
_lock = threading.Lock()
_cache: dict[str, ctypes.CDLL | None] = {}
_why: dict[str, str] = {}


def _compiler() -> str | None:
    for name in (os.environ.get("CC"), "cc", "gcc", "clang"):
        if name and shutil.which(name):
            return shutil.which(name)
    return None


def _cache_dir() -> Path:
    if os.environ.get("NNKILN_CACHE_DIR"):
        return Path(os.environ["NNKILN_CACHE_DIR"])
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "nnkiln"


def _cpu_id() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            return next((line for line in f if line.startswith("flags")), "")
    except OSError:
        return platform.processor()


def _flags() -> tuple[str, ...]:
    return FLAGS + tuple(os.environ.get("NNKILN_NATIVE_FLAGS", "").split())


def _build(name: str) -> ctypes.CDLL:
    source = _HERE / f"{name}.c"
    flags = _flags()
    cc = _compiler()
    if cc is None:
        raise OSError("no C compiler (cc, gcc or clang) on PATH")
    text = source.read_bytes()
    for inc in re.findall(rb'^#include "([A-Za-z0-9_]+\.c)"', text, re.M):  # local parts: in the cache key too
        text += b"\0" + (_HERE / inc.decode()).read_bytes()
    key = hashlib.sha256(b"\0".join([text, " ".join(flags).encode(), cc.encode(), platform.machine().encode(), _cpu_id().encode()])).hexdigest()[:16]
    out_dir = _cache_dir()
    target = out_dir / f"{name}-{key}.so"
    if not target.exists():
        out_dir.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(suffix=".so", dir=out_dir)
        os.close(fd)
        try:
            done = subprocess.run([cc, *flags, str(source), "-o", tmp, "-lm"], capture_output=True, text=True, timeout=120)
            if done.returncode != 0:
                raise OSError(f"{cc} failed on {source.name}: {done.stderr.strip()[:500]}")
            os.replace(tmp, target)
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)
    return ctypes.CDLL(str(target))


def load(name: str) -> ctypes.CDLL | None:
    """The compiled library for ``native/<name>.c``, or ``None`` (then use the numpy path)."""
    with _lock:
        if name in _cache:
            return _cache[name]
        lib: ctypes.CDLL | None = None
        if os.environ.get("NNKILN_NO_NATIVE", "") not in ("", "0"):
            _why[name] = "disabled by NNKILN_NO_NATIVE"
        else:
            try:
                lib = _build(name)
                _why[name] = "loaded"
            except (OSError, subprocess.SubprocessError) as err:
                _why[name] = f"not available: {err}"
        _cache[name] = lib
        return lib


def available() -> bool:
    """Whether native kernels can be used at all on this machine (compiler present, not disabled)."""
    return os.environ.get("NNKILN_NO_NATIVE", "") in ("", "0") and _compiler() is not None


def status() -> dict[str, str]:
    """For each library asked for so far: ``"loaded"`` or why not."""
    with _lock:
        return dict(_why)
