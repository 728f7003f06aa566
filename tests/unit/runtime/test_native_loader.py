"""The native library and ``nnkiln.h``: every declared function is in the library and typed from the header, the C
sources declare nothing Python could call untyped, the loader refuses mismatched or stale libraries, and without a
library the runtime warns once and falls back."""

from __future__ import annotations

import ctypes
import re
import shutil
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

from nnkiln import native_header as header
from nnkiln.blob.format import PANEL_WIDTH
from nnkiln.runtime import native
from nnkiln.runtime.native import build

SOURCES = Path(native.__file__).parent


@pytest.mark.native
def test_every_declared_function_is_in_the_library_with_the_header_types() -> None:
    lib = native.load()
    names = header.functions()
    assert len(names) > 40  # the parser found the prototypes
    for name in names:
        fn = getattr(lib, name)
        assert ctypes.cast(fn, ctypes.c_void_p).value
        argtypes, restype = header.signature(name)
        assert list(fn.argtypes) == argtypes and fn.restype is restype, name
    x = np.array([-1.5, 0.0, 2.0, 3.25], dtype=np.float32)
    y = np.zeros_like(x)
    lib.nk_selftest(x.ctypes.data, y.ctypes.data, x.size)
    np.testing.assert_array_equal(y, x * 2 + 1)
    assert lib.nk_wino_work_floats(1000, 1000, 1000, 512, 512) == 16 * 1000 * 500 * 500 * 1024  # a long result
    assert lib.nk_source_digest().decode() == build.source_digest(SOURCES)  # a C string result


@pytest.mark.native
def test_a_name_the_header_does_not_declare_raises() -> None:
    with pytest.raises(native.UndeclaredFunction, match="not declared in .*nnkiln.h"):
        native.load().nk_not_declared_anywhere  # noqa: B018


@pytest.mark.native
def test_a_declared_function_missing_from_the_library_raises(monkeypatch: pytest.MonkeyPatch) -> None:
    extra = header.Function("nk_declared_but_not_built", "int", ())
    monkeypatch.setattr(header, "functions", lambda: {**header.parsed().functions, extra.name: extra})
    with pytest.raises(native.NativeLibraryError, match="has no nk_declared_but_not_built"):
        native.Library(native.load().path)


@pytest.mark.native
def test_a_library_built_from_other_sources_raises(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for p in SOURCES.glob("*.[ch]"):
        shutil.copy(p, tmp_path)
    path = native.load().path
    monkeypatch.setattr(native, "_HERE", tmp_path)
    native._open(path)  # the same sources: accepted
    with open(tmp_path / "conv_data.c", "a") as f:
        f.write("\n/* edited after the build */\n")
    with pytest.raises(native.NativeLibraryError, match="built from other sources"):
        native._open(path)


def test_c_sources_define_only_declared_functions() -> None:
    """Every function the .c files export is declared in the header (so Python can type it), and the other way."""
    defined = set()
    for p in SOURCES.glob("*.c"):
        text = re.sub(r"/\*.*?\*/", "", p.read_text(), flags=re.S)
        defined |= set(re.findall(r"^(?!static\b)(?!typedef\b)[A-Za-z_][\w \t*]*?\b(nk_\w+)\s*\([^;{]*\)\s*\{", text,
                                  re.M))
    assert defined == set(header.functions())


def test_shared_constants() -> None:
    assert header.define("NK_PANEL_WIDTH") == PANEL_WIDTH  # the blob format's packed panels are conv.c's
    op = header.enum("nk_op")
    assert op["ADD"] < op["EXP"] <= op["CLAMP"] < op["REDUCE_SUM"] < op["REDUCE_MIN"] < op["STORE"] < op["CHAIN"]
    ins = header.struct("nk_ins")
    assert [f for f, _ in ins._fields_] == ["op", "dst", "a", "b", "lo", "hi", "op2", "c"]
    assert ctypes.sizeof(ins) == 32


def test_parser_refuses_what_it_cannot_read() -> None:
    ok = header.parse("enum nk_x { NK_X_A = 1, NK_X_B = 3 };\n#define NK_N 0x10\nint nk_f(const float *p, long n);")
    assert dict(ok.enums["nk_x"]) == {"A": 1, "B": 3} and ok.defines == {"NK_N": 16}
    assert ok.functions["nk_f"] == header.Function("nk_f", "int", ("void*", "long"))
    for bad in ("enum nk_x { NK_X_A };", "enum nk_x { OTHER_A = 1 };", "int nk_f(struct s v);", "int nk_f(int);",
                "#define NK_S \"text\"", "#if X", "typedef int my_int;", "int nk_f(void); int nk_f(void);"):
        with pytest.raises(header.HeaderError):
            header.parse(bad)


def test_disabled_by_environment_gives_none() -> None:
    code = "from nnkiln.runtime import native; print(native.load() is None, native.status())"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={"NNKILN_NO_NATIVE": "1", "PATH": "", "PYTHONPATH": ":".join(sys.path)}).stdout
    assert out.startswith("True disabled by NNKILN_NO_NATIVE")


def test_missing_library_warns_once_and_falls_back(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NNKILN_NO_NATIVE", raising=False)
    monkeypatch.setattr(native, "library_path", lambda: None)
    monkeypatch.setattr(native, "_done", False)
    monkeypatch.setattr(native, "_lib", None)
    monkeypatch.setattr(native, "_why", "")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert native.load() is None
        assert native.load() is None
    assert len(caught) == 1 and issubclass(caught[0].category, RuntimeWarning)
    assert "not built" in str(caught[0].message) and "numpy fallback" in str(caught[0].message)
    assert native.status().startswith("not built")
