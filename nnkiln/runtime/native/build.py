"""Building the native kernels' library: a setuptools extension, compiled at install time.

What: ``conv.c`` (which ``#include``s the other kernel files: one translation unit, one thread pool) and
``info.c`` become ``nnkiln/runtime/native/_nnkiln<EXT_SUFFIX>``, a plain C shared library that the runtime
loads with ctypes (see ``native/__init__.py`` for why). ``setup.py`` hands ``command()`` to setuptools as its
``build_ext``, so ``pip install .`` puts the library in the wheel and ``pip install -e .`` beside the sources, where
the package finds it; ``python -m nnkiln.runtime.native.build`` rebuilds it in place after a .c or .h file changed
(the loader refuses a library built from other sources).

Flags: setuptools' compiler command (Python's own ``CC``, ``CFLAGS`` and ``-fPIC``: the architecture of the
interpreter that loads the library) followed by ``-O3 -std=c11 -fno-math-errno`` (never ``-ffast-math``: NaN and
inf stay IEEE), then of each group of ``CANDIDATE_FLAGS`` the first flag the compiler accepts on a tiny file
(probed like pybind11's ``has_flag``, so that gcc, clang and Apple clang all take the command), then the
``NNKILN_NATIVE_FLAGS`` environment variable (read at build time, split like a shell command line: e.g.
``-mno-avx512f`` to build the AVX2 paths on an AVX-512 machine, ``-march=x86-64-v3`` for a library that runs on
every AVX2 machine). ``-march=native`` tunes the library for the building machine's CPU: it may not run on an
older one. Linked with ``-lm``.

Rules:

* a failed compile fails the build: errors are never swallowed (the extension is ``optional`` only so that
  setuptools accepts its absence below; ``build_extensions`` does not filter errors as it would for one);
* without a GCC-compatible C compiler (the compiler executable not found, or MSVC) nothing is built and the build
  says why; the runtime then warns once and uses its numpy fallback;
* always recompiled: the flags come from the environment, which setuptools' up-to-date check does not see;
* ``NK_SOURCE_DIGEST`` (``source_digest`` of the sources) and ``NK_BUILD_FLAGS`` are compiled in (``info.c``).

Only the standard library is imported at module level: ``setup.py`` loads this file by path, before nnkiln's
dependencies exist, and the loader imports ``source_digest`` where setuptools may be absent.
"""

from __future__ import annotations

import functools
import hashlib
import os
import shlex
import shutil
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
"""The directory holding the ``nnkiln`` package (an in-place build's output root)."""
EXTENSION = "nnkiln.runtime.native._nnkiln"
UNITS = ("conv.c", "info.c")
"""The translation units; every other .c file is #included by conv.c."""
REQUIRED_FLAGS = ("-O3", "-std=c11", "-fno-math-errno")
CANDIDATE_FLAGS = (("-march=native", "-mcpu=native"), ("-fno-wrapv",))
"""Each group gives its first flag the compiler accepts, if any. ``-fno-wrapv`` undoes Python's ``-fwrapv``
(``CFLAGS``), which changes the kernels' code."""


def source_digest(directory: Path) -> str:
    """A digest of the ``.c`` and ``.h`` files in ``directory`` (names and contents)."""
    h = hashlib.sha256()
    for p in sorted(directory.glob("*.[ch]")):
        h.update(p.name.encode() + b"\0" + p.read_bytes() + b"\0")
    return h.hexdigest()[:16]


def extension(directory: str = "nnkiln/runtime/native") -> Any:
    """The setuptools ``Extension`` of the library built from the sources in ``directory`` (relative to the
    working directory in ``setup.py``)."""
    from setuptools import Extension

    parts = sorted(p.name for p in Path(directory).glob("*.[ch]") if p.name not in UNITS)
    return Extension(EXTENSION, sources=[f"{directory}/{u}" for u in UNITS], depends=[f"{directory}/{p}" for p in parts],
                     libraries=["m"], optional=True)


def _c_string(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def unusable(compiler: Any) -> str | None:
    """Why setuptools' ``compiler`` cannot build the library (None: it can try)."""
    if compiler.compiler_type != "unix":
        return f"the {compiler.compiler_type} compiler is not supported: the kernels need gcc or clang"
    exe = compiler.compiler_so[0]
    if shutil.which(exe) is None:
        return f"no C compiler: {exe!r} not found (the CC environment variable chooses another)"
    return None


def has_flag(compiler: Any, flag: str, tmp: Path) -> bool:
    """Whether ``compiler`` compiles a tiny C file with ``flag`` (and the required flags)."""
    from setuptools.errors import CompileError

    tmp.mkdir(parents=True, exist_ok=True)
    src = tmp / "nk_flag_probe.c"
    src.write_text("int nk_flag_probe(void) { return 0; }\n")
    try:
        compiler.compile([str(src)], output_dir=str(tmp), extra_postargs=[*REQUIRED_FLAGS, flag])
    except CompileError:
        return False
    return True


def compile_flags(compiler: Any, tmp: Path, extra: Sequence[str]) -> list[str]:
    """The library's compiler flags for ``compiler`` (see the module docstring)."""
    flags = list(REQUIRED_FLAGS)
    for group in CANDIDATE_FLAGS:
        flags += next(([f] for f in group if has_flag(compiler, f, tmp)), [])
    return flags + list(extra)


@functools.cache
def command() -> type:
    """setuptools' ``build_ext`` with the library's rules (see the module docstring), for ``setup.py``'s
    ``cmdclass``; its option ``native_flags`` holds the extra flags (None: ``NNKILN_NATIVE_FLAGS``). Made here so
    that setuptools is imported only to build."""
    from setuptools.command.build_ext import build_ext

    class BuildNative(build_ext):
        def initialize_options(self) -> None:
            super().initialize_options()
            self.native_flags: Sequence[str] | None = None

        def finalize_options(self) -> None:
            super().finalize_options()
            self.force = True

        def build_extensions(self) -> None:
            self.check_extensions_list(self.extensions)
            for ext in self.extensions:  # no error filtering, even for the optional extension
                self.build_extension(ext)

        def build_extension(self, ext: Any) -> None:
            if ext.name != EXTENSION:
                super().build_extension(ext)
                return
            why = unusable(self.compiler)
            if why is not None:
                self.warn(f"nnkiln's native kernels are not built ({why}); the runtime will use its numpy fallback")
                return
            extra = shlex.split(os.environ.get("NNKILN_NATIVE_FLAGS", "")) if self.native_flags is None else self.native_flags
            flags = compile_flags(self.compiler, Path(self.build_temp) / "flag-probes", extra)
            ext.extra_compile_args = flags
            ext.define_macros = [("NK_SOURCE_DIGEST", _c_string(source_digest(Path(ext.sources[0]).parent))),
                                 ("NK_BUILD_FLAGS", _c_string(" ".join(flags)))]
            super().build_extension(ext)

    return BuildNative


def build(source_dir: Path = HERE, output_root: Path = ROOT, flags: Sequence[str] | None = None) -> Path | None:
    """Build the library from the sources in ``source_dir`` as an install does, into
    ``output_root/nnkiln/runtime/native/`` (by default: in place). Returns its path, or None when no usable
    compiler was found (nothing written). ``flags``: the extra flags (None: ``NNKILN_NATIVE_FLAGS``). Raises
    setuptools' ``CompileError`` / ``LinkError`` when the compiler fails."""
    from setuptools import Distribution

    dist = Distribution({"name": "nnkiln", "ext_modules": [extension(str(source_dir))],
                         "cmdclass": {"build_ext": command()}})
    cmd = dist.get_command_obj("build_ext")
    with tempfile.TemporaryDirectory(prefix="nnkiln-build-") as tmp:
        cmd.build_lib, cmd.build_temp, cmd.native_flags = str(output_root), tmp, flags
        cmd.ensure_finalized()
        cmd.run()
    path = Path(cmd.get_ext_fullpath(EXTENSION))
    return path if path.exists() else None


def main() -> int:
    path = build()
    if path is None:
        print("no usable C compiler: nothing built", file=sys.stderr)
        return 1
    print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
