"""The public TOSA 1.x path (issue 21, item 4): ``nnkiln.load("x.tosa")`` and ``nnkiln import/compile/run x.tosa``,
on unmodified ``tosa_verif_build_tests`` cases, compared with the reference results stored beside them."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import nnkiln
from nnkiln.reference import interpreter

CORPUS = Path(__file__).resolve().parents[2] / "data" / "tosa_conformance" / "positive"
CASES = [CORPUS / "add" / "add_5x3_i32", CORPUS / "abs" / sorted(os.listdir(CORPUS / "abs"))[0]]


def _case(case: Path) -> tuple[Path, dict[str, np.ndarray], dict[str, np.ndarray]]:
    """The case's ``.tosa`` file, its inputs and its expected outputs, by 1.x tensor name."""
    desc = json.loads((case / "desc.json").read_text())
    inputs = {n: np.load(case / f) for n, f in zip(desc["ifm_name"], desc["ifm_file"])}
    expected = {n: np.load(case / f) for n, f in zip(desc["ofm_name"], desc["ofm_file"])}
    return case / desc["tosa_file"], inputs, expected


@pytest.mark.parametrize("case", CASES, ids=lambda p: p.name)
def test_load_compile_run_through_the_public_api(case: Path) -> None:
    tosa, inputs, expected = _case(case)
    module = nnkiln.load(str(tosa))
    got = interpreter.run(module, inputs)
    assert sorted(got) == sorted(expected)
    for name, want in expected.items():
        np.testing.assert_array_equal(got[name], want)
    outs = nnkiln.compile(module, target="cpu").run(inputs)
    for name, want in expected.items():
        np.testing.assert_array_equal(outs[name], want)


def test_a_tosa_flatbuffer_is_recognised_by_its_identifier(tmp_path: Path) -> None:
    tosa, inputs, expected = _case(CASES[0])
    renamed = tmp_path / "model.bin"
    shutil.copy(tosa, renamed)
    assert nnkiln.frontends.detect_format(str(renamed)) == "tosa"
    got = interpreter.run(nnkiln.load(str(renamed)), inputs)
    np.testing.assert_array_equal(got["result-0"], expected["result-0"])


def test_a_file_that_is_not_a_tosa_flatbuffer_is_a_frontend_error_naming_it(tmp_path: Path) -> None:
    bad = tmp_path / "bad.tosa"
    bad.write_bytes(b"\x10\x00\x00\x00NOPE" + bytes(40))
    with pytest.raises(nnkiln.FrontendError, match="bad.tosa.*not a TOSA flatbuffer"):
        nnkiln.load(str(bad))
    with pytest.raises(nnkiln.FrontendError, match="missing.tosa.*cannot read"):
        nnkiln.load(str(tmp_path / "missing.tosa"))


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "nnkiln.cli.main", *args], capture_output=True, text=True)


def test_import_compile_run_on_the_command_line(tmp_path: Path) -> None:
    tosa, inputs, expected = _case(CASES[0])
    imported = _cli("import", str(tosa))
    assert imported.returncode == 0, imported.stderr
    assert "tosa.add" in imported.stdout and '"input-0"' in imported.stdout
    for name, value in inputs.items():
        np.save(tmp_path / f"{name}.npy", value)
    feeds = [f"--input={n}={tmp_path / n}.npy" for n in inputs]
    ran = _cli("run", str(tosa), *feeds, f"--output={tmp_path / 'direct.npz'}")
    assert ran.returncode == 0, ran.stderr
    blob = tmp_path / "m.kiln"
    compiled = _cli("compile", str(tosa), "-o", str(blob))
    assert compiled.returncode == 0, compiled.stderr
    ran_blob = _cli("run", str(blob), *feeds, f"--output={tmp_path / 'blob.npz'}")
    assert ran_blob.returncode == 0, ran_blob.stderr
    for out in ("direct.npz", "blob.npz"):
        np.testing.assert_array_equal(np.load(tmp_path / out)["result-0"], expected["result-0"])
