"""The bundled examples: reproducible from their scripts, and the README's main job gives the right numbers."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"


def _script(name: str):  # noqa: ANN202
    sys.path.insert(0, str(EXAMPLES))
    try:
        return __import__(name)
    finally:
        sys.path.pop(0)


def test_tiny_cnn_mlir_is_what_its_script_writes():
    assert _script("make_tiny_cnn").build() == (EXAMPLES / "tiny_cnn.mlir").read_text()


def test_small_resnet_onnx_is_what_its_script_writes():
    assert _script("make_small_resnet").build().SerializeToString() == (EXAMPLES / "small_resnet.onnx").read_bytes()


def test_readme_main_job_matches_onnxruntime(tmp_path: Path):
    ort = pytest.importorskip("onnxruntime")
    blob = tmp_path / "small_resnet.kiln"
    out = tmp_path / "out.npz"
    cli = [sys.executable, "-m", "nnkiln.cli.main"]
    r = subprocess.run([*cli, "compile", str(EXAMPLES / "small_resnet.onnx"), "--shape", "input=1,3,32,32", "-o", str(blob)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    r = subprocess.run([*cli, "run", str(blob), "--input", f"input={EXAMPLES / 'input.npy'}", "-o", str(out)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    got = np.load(out)["logits"]
    x = np.load(EXAMPLES / "input.npy")
    want = ort.InferenceSession(str(EXAMPLES / "small_resnet.onnx")).run(None, {"input": x})[0]
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def test_tiny_cnn_blob_is_bit_exact_with_the_reference():
    import nnkiln
    from nnkiln.reference import run

    module = nnkiln.load(str(EXAMPLES / "tiny_cnn.mlir"))
    x = np.random.default_rng(3).integers(-128, 128, (1, 16, 16, 3)).astype(np.int8)
    want = run(module, {"image": x})["logits"]
    got = nnkiln.compile(module).run({"image": x})["logits"]
    np.testing.assert_array_equal(got, want)
