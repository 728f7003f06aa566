"""The committed TOSA 1.x conformance corpus (bench/gen_tosa_conformance.sh) through nnkiln.

Expected outputs come from the TOSA 1.x reference model; cases that TOSA 0.30 cannot express are skipped
by the importer with a reason. Every case that is not skipped must pass (M == 0)."""

from __future__ import annotations

import os

import pytest

from nnkiln.conformance import main, run_conformance

CORPUS = os.path.join(os.path.dirname(__file__), "..", "data", "tosa_conformance")

pytestmark = pytest.mark.skipif(not os.path.isdir(CORPUS), reason="corpus missing: run bench/gen_tosa_conformance.sh")


def test_conformance_corpus() -> None:
    summary = run_conformance(CORPUS)
    print()
    print(summary.report())
    assert summary.passed + summary.failed + summary.skipped == len(summary.results) > 0
    assert summary.failed == 0, "\n".join(r.line() for r in summary.failures)


def test_cli_summary_line(capsys: pytest.CaptureFixture[str]) -> None:
    code = main([CORPUS, "--filter", r"^positive/(add|identity)/", "--no-skipped"])
    last = capsys.readouterr().out.strip().splitlines()[-1]
    import re

    m = re.fullmatch(r"(\d+) passed, (\d+) failed, (\d+) skipped", last)
    assert m, last
    assert code == (0 if m.group(2) == "0" else 1)
