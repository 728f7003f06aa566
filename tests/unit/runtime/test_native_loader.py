"""The native-kernel loader: compiles, caches, and falls back cleanly."""

from __future__ import annotations

import ctypes
import subprocess
import sys

import numpy as np
import pytest

from nnkiln.runtime import native


@pytest.mark.skipif(not native.available(), reason="no C compiler on this machine")
def test_selftest_library_computes_and_is_cached(tmp_path, monkeypatch):
    monkeypatch.setenv("NNKILN_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(native, "_cache", {})
    lib = native.load("selftest")
    assert lib is not None, native.status()
    x = np.array([-1.5, 0.0, 2.0, 3.25], dtype=np.float32)
    y = np.zeros_like(x)
    lib.nk_selftest(ctypes.c_void_p(x.ctypes.data), ctypes.c_void_p(y.ctypes.data), ctypes.c_ssize_t(x.size))
    np.testing.assert_array_equal(y, x * 2 + 1)
    assert len(list(tmp_path.glob("selftest-*.so"))) == 1


def test_disabled_by_environment_gives_none():
    code = "from nnkiln.runtime import native; print(native.load('selftest') is None, native.status()['selftest'])"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env={"NNKILN_NO_NATIVE": "1", "PATH": ""}, check=True).stdout
    assert out.startswith("True disabled by NNKILN_NO_NATIVE")


def test_missing_compiler_gives_none_with_reason(monkeypatch):
    monkeypatch.setattr(native, "_cache", {})
    monkeypatch.setattr(native, "_compiler", lambda: None)
    monkeypatch.delenv("NNKILN_NO_NATIVE", raising=False)
    assert native.load("selftest") is None
    assert "no C compiler" in native.status()["selftest"]
