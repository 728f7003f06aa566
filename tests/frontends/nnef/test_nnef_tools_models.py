"""Models converted to NNEF by an independent tool (nnef-tools, Khronos) import, compile and run like the
original ONNX model under onnxruntime. Skipped when .venv-nnef has no nnef-tools (tests/run.py installs it)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[3]
PY = ROOT / ".venv-nnef" / "bin" / "python"


def _has_nnef_tools() -> bool:
    if not PY.exists():
        return False
    return subprocess.run([str(PY), "-c", "import nnef_tools.convert"], capture_output=True).returncode == 0


pytestmark = [pytest.mark.slow, pytest.mark.skipif(not _has_nnef_tools(), reason="no nnef-tools in .venv-nnef")]


def test_small_resnet_converted_by_nnef_tools_matches_onnxruntime(tmp_path: Path):
    ort = pytest.importorskip("onnxruntime")
    import nnkiln

    onnx_path = ROOT / "examples" / "small_resnet.onnx"
    out = tmp_path / "small_resnet_nnef"
    r = subprocess.run(
        [str(PY), "-m", "nnef_tools.convert", "--input-format", "onnx", "--output-format", "nnef",
         "--input-model", str(onnx_path), "--output-model", str(out), "--input-shapes", "{'input': (1,3,32,32)}"],
        capture_output=True, text=True, cwd=tmp_path, timeout=300, env={**os.environ, "PYTHONWARNINGS": "ignore"},
    )
    assert r.returncode == 0, r.stderr[-2000:]
    x = np.load(ROOT / "examples" / "input.npy")
    want = ort.InferenceSession(str(onnx_path)).run(None, {"input": x})[0]
    module = nnkiln.load(str(out))
    (name,) = nnkiln.reference.input_names(nnkiln.reference.entry_function(module))
    got_ref = next(iter(nnkiln.reference.run(module, {name: x}).values()))
    got_blob = next(iter(nnkiln.compile(module).run({name: x}).values()))
    np.testing.assert_allclose(got_ref, want, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(got_blob, want, rtol=1e-4, atol=1e-5)
