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
