"""Fixtures of the runtime tests."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def native_build(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], Path]:
    """``native_build(flags)``: the native library built from the package's sources with these extra flags (as
    ``NNKILN_NATIVE_FLAGS`` would give them), once per session and flags; checked to load, reporting those flags,
    where ``NNKILN_NATIVE_LIB`` points to it."""
    from nnkiln.runtime.native import build

    built: dict[str, Path] = {}

    def make(flags: str) -> Path:
        if flags not in built:
            path = build.build(output_root=tmp_path_factory.mktemp("native"), flags=shlex.split(flags))
            assert path is not None, "no usable C compiler"
            code = "from nnkiln.runtime import native; native.load(); print(native.status())"
            out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                                 env={**os.environ, "NNKILN_NATIVE_LIB": str(path)}).stdout
            assert str(path) in out and flags in out, out
            built[flags] = path
        return built[flags]

    return make
