"""The install-time build of the native library (``native/build.py``, what ``setup.py`` runs): a compile error fails
it, extra flags come from ``NNKILN_NATIVE_FLAGS``, a missing compiler builds nothing, and flags are probed."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from setuptools import errors

from nnkiln.runtime import native
from nnkiln.runtime.native import build


def _sources(tmp_path: Path) -> Path:
    src = tmp_path / "src"
    src.mkdir()
    for p in Path(native.__file__).parent.glob("*.[ch]"):
        shutil.copy(p, src)
    return src


def test_a_syntax_error_fails_the_build(tmp_path: Path) -> None:
    src = _sources(tmp_path)
    with open(src / "eltwise_rows.c", "a") as f:  # a part conv.c #includes
        f.write("\nint this is not C;\n")
    with pytest.raises(errors.CompileError):
        build.build(src, tmp_path / "out", flags=[])
    assert not list((tmp_path / "out").rglob("_nnkiln*"))


def test_extra_flags_come_from_the_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NNKILN_NATIVE_FLAGS", "-fno-such-flag-for-nnkiln")  # given to the compiler, never dropped
    with pytest.raises(errors.CompileError):
        build.build(_sources(tmp_path), tmp_path / "out")


def test_no_compiler_builds_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CC", str(tmp_path / "no-such-cc"))
    assert build.build(_sources(tmp_path), tmp_path / "out", flags=[]) is None
    assert not (tmp_path / "out").exists() or not list((tmp_path / "out").rglob("_nnkiln*"))


class _Compiler:
    """Accepts every flag except ``rejected``."""

    def __init__(self, rejected: set[str]):
        self.rejected = rejected

    def compile(self, sources: list[str], output_dir: str, extra_postargs: list[str]) -> list[str]:
        if extra_postargs[-1] in self.rejected:
            raise errors.CompileError(f"unknown flag {extra_postargs[-1]}")
        return []


def test_flags_are_probed(tmp_path: Path) -> None:
    extra = ["-mno-avx512f"]
    assert build.compile_flags(_Compiler(set()), tmp_path, extra) == [*build.REQUIRED_FLAGS, "-march=native",
                                                                       "-fno-wrapv", *extra]
    assert build.compile_flags(_Compiler({"-march=native"}), tmp_path, []) == [*build.REQUIRED_FLAGS, "-mcpu=native",
                                                                               "-fno-wrapv"]
    assert build.compile_flags(_Compiler({"-march=native", "-mcpu=native", "-fno-wrapv"}), tmp_path, []) == \
        list(build.REQUIRED_FLAGS)
