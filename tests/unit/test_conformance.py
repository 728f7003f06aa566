"""``nnkiln conformance``'s expected results: as the corpus script names them, as ``tosa_verif_run_tests`` names them,
computed by the TOSA reference model when it is installed, or skipped with the reason said once."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from nnkiln import conformance

CORPUS = Path(__file__).parents[1] / "data" / "tosa_conformance" / "positive" / "add"


@pytest.fixture
def case(tmp_path: Path) -> Path:
    src = sorted(p for p in CORPUS.iterdir() if (p / "ref-result-0.npy").exists())[0]
    dst = tmp_path / src.name
    shutil.copytree(src, dst)
    return dst


def test_results_as_tosa_verif_run_tests_names_them(case: Path) -> None:
    os.rename(case / "ref-result-0.npy", case / "ref-result-0.runner.tosa_refmodel_sut_run.npy")
    assert conformance.run_case(str(case)).status is conformance.Status.PASS
    wrong = np.load(case / "ref-result-0.runner.tosa_refmodel_sut_run.npy")
    np.save(case / "ref-result-0.runner.tosa_refmodel_sut_run.npy", wrong + 1)  # the file is really compared
    assert conformance.run_case(str(case)).status is conformance.Status.FAIL


def test_without_results_nor_reference_model_skipped_and_said_once(case: Path, monkeypatch: pytest.MonkeyPatch,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    os.remove(case / "ref-result-0.npy")
    monkeypatch.setattr(conformance, "reference_model", lambda: None)
    result = conformance.run_case(str(case))
    assert result.status is conformance.Status.SKIP and result.reason == conformance.NO_EXPECTED
    assert conformance.main([str(case.parent)]) == 0
    out = capsys.readouterr().out
    assert out.count("tosa-tools") == 2  # the note once, and the case's own line
    assert out.strip().splitlines()[-1] == "0 passed, 0 failed, 1 skipped"


@pytest.mark.parametrize("status,offset,expected", [
    ("TosaReturnCode.TOSA_VALID", 0, conformance.Status.PASS),
    ("TosaReturnCode.TOSA_VALID", 1, conformance.Status.FAIL),
    ("TosaReturnCode.TOSA_UNPREDICTABLE", 0, conformance.Status.SKIP),
])
def test_results_computed_by_the_reference_model(case: Path, monkeypatch: pytest.MonkeyPatch, status: str,
                                                 offset: int, expected: conformance.Status) -> None:
    """The reference model gets the graph's bytes and the inputs in ``ifm_file`` order; its outputs are compared as
    files would be (a stand-in module: the real one lives in the tosa-tools oracle venv)."""
    want = np.load(case / "ref-result-0.npy")
    os.remove(case / "ref-result-0.npy")
    seen = []

    def run(graph: bytes, inputs: list[np.ndarray]) -> tuple[list[np.ndarray], str]:
        seen.append((graph, inputs))
        return [want + offset], status

    monkeypatch.setattr(conformance, "reference_model", lambda: SimpleNamespace(run=run))
    assert conformance.run_case(str(case)).status is expected
    graph, inputs = seen[0]
    assert graph == (case / "test.tosa").read_bytes()
    assert [a.tolist() for a in inputs] == [np.load(case / f"input-{i}.npy").tolist() for i in range(len(inputs))]


TOOLS = Path(__file__).parents[1] / "data" / "tosa_conformance" / "tools_2026_8"
"""Cases written by tosa-tools 2026.8 (``tosa_verif_build_tests``, ``tosa_verif_run_tests`` with both runners)."""


def test_bfloat16_data_stored_as_two_byte_void_is_read_as_bfloat16() -> None:
    result = conformance.run_case(str(TOOLS / "abs_52_bf16"))
    assert result.status is conformance.Status.PASS, result.reason


def test_dot_product_checked_with_the_compliance_runners_float64_results(tmp_path: Path) -> None:
    """An fp16 MATMUL: against the float16 result of the plain runner, 483 of 1170 elements differ beyond rtol 1e-3
    (both sides round differently); against the compliance runner's float64 result and bound, it meets 1.x's rule.
    Moving the float64 reference by 5 % of its bound (about 102 error units, abs_bound is 84) makes it fail: the
    files are really used."""
    src = TOOLS / "matmul_3x30x42_f16xf16_outf16_s1"
    assert conformance.run_case(str(src)).status is conformance.Status.PASS
    case = tmp_path / src.name
    shutil.copytree(src, case)
    ref = case / "ref-result-0.runner.tosa_refmodel_compliance_sut_run.npy"
    np.save(ref, np.load(ref) + 0.05 * np.load(case / ("bounds_" + ref.name)))
    result = conformance.run_case(str(case))
    assert result.status is conformance.Status.FAIL and "units of the bound" in result.reason


def _dp(got: list[float], ref: list[float], bnd: list[float], **info: float) -> str:
    return conformance.compare_dot_product(np.array(got, np.float16), np.array(ref), np.array(bnd),
                                           {"ksb": 4, **info})


def test_dot_product_rule_by_hand() -> None:
    """fp16 output, ksb 4: the error unit is bnd * 2^-11 (bnd 2048: one unit = 1.0), abs_bound 2 * ksb = 8, variance
    bound 4 * 0.4 * ksb = 6.4 per element."""
    b = [2048.0, 2048.0]
    assert _dp([16, 20], [17, 20], b) == ""  # errors -1, 0
    assert "units of the bound" in _dp([10, 20], [19, 20], b)  # -9
    assert "variance" in _dp([13, 16], [17, 20], b)  # -4, -4: 32 > 6.4 * 2
    many = dict(got=[18.0] * 100, ref=[20.0] * 100, bnd=[2048.0] * 100)  # -2 each: variance 400 <= 640
    assert _dp(**many, s=1) == ""
    assert "bias" in _dp(**many, s=3)  # |sum| 200 > sqrt(10 * 6.4 * 100) = 80, checked for sets 3..5
    assert _dp([0.0], [0.0], [0.0]) == "" and "zero bound" in _dp([1.0], [0.0], [0.0])
    assert _dp([float("nan")], [float("nan")], [1.0]) == "" and "NaN" in _dp([1.0], [float("nan")], [1.0])
    assert _dp([1.0], [5000.0], [1e6]) == ""  # the bound overflows fp16: no limit
