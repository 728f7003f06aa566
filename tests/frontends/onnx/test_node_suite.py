"""ONNX's backend node tests through nnkiln, against the explicit expectation list.

Each case must pass (outputs within ONNX's own tolerances of the suite's numpy-computed expectations)
unless ``node_expectations.txt`` lists it as one that cannot, with the reason. A listed case must end
as listed: "unsupported" (a clear importer error, never a wrong result or a crash), or, for the few
cases whose expected data is itself outside ONNX's tolerance, "failed" with the explanation in a
comment next to it. A listed case that starts passing must be removed from the list.
"""

from __future__ import annotations

import functools
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from node_suite import load_cases, read_expectations, run_case  # noqa: E402

pytestmark = pytest.mark.slow


@functools.cache
def _cases() -> dict:
    return {c.name: c for c in load_cases()}


def _names() -> list[str]:
    try:
        return sorted(_cases())
    except Exception:  # onnx missing: collect nothing
        return []


@pytest.mark.parametrize("name", _names())
def test_node_case(name: str) -> None:
    expected = read_expectations()
    result = run_case(_cases()[name])
    if name in expected:
        listed_status = expected[name].split(":", 1)[0]
        assert result.status != "passed", f"{name} now passes: remove it from node_expectations.txt"
        assert result.status == listed_status, (
            f"{name}: listed as {listed_status}, got {result.status}: {result.reason}")
    else:
        assert result.status == "passed", f"{name}: {result.status}: {result.reason}"


COMPILED_ONLY: dict[str, str] = {}
"""Cases that pass with the reference interpreter but not compiled, and why."""


def _passing_names() -> list[str]:
    try:
        expected = read_expectations()
        return [n for n in _names() if n not in expected]
    except Exception:
        return []


@pytest.mark.parametrize("name", _passing_names())
def test_node_case_compiled(name: str) -> None:
    """The same case compiled for the cpu target (passes, buffers, blob, runtime kernels) and run: the
    runtime's fast kernels must meet the same tolerances as the reference interpreter."""
    result = run_case(_cases()[name], compiled=True)
    if name in COMPILED_ONLY:
        assert result.status != "passed", f"{name} now passes compiled: remove it from COMPILED_ONLY"
        assert "not supported by the compiler" in result.reason, result.reason
    else:
        assert result.status == "passed", f"{name} (compiled): {result.status}: {result.reason}"
