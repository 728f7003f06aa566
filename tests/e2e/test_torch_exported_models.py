"""Models built in torch and exported to ONNX (``tests/data/torch_onnx/generate.py``) by both of torch's
exporters (TorchScript, opset 17; and the default dynamo exporter, opset 20 with weights in external data
files), compiled and run; the oracle is torch's own output saved beside each model (and onnxruntime)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import nnkiln
from nnkiln.reference import run

DATA = Path(__file__).parents[1] / "data" / "torch_onnx"
MODELS = sorted(p.stem for p in DATA.glob("*.onnx"))


def _close(got: np.ndarray, want: np.ndarray) -> None:
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5 * max(1.0, float(np.abs(want).max())))


def test_all_fixtures_present():
    assert MODELS == ["audioish", "effnetish", "gptblock", "llamaish", "lstmish", "misc", "unetish", "vitish"]


@pytest.mark.parametrize("exporter", ["", "dynamo"])
@pytest.mark.parametrize("name", MODELS)
def test_compiled_model_matches_torch(name: str, exporter: str) -> None:
    x = np.load(DATA / f"{name}_x.npy")
    want = np.load(DATA / f"{name}_y.npy")
    path = DATA / exporter / f"{name}.onnx"
    module = nnkiln.load(str(path))
    got = nnkiln.compile(module).run({"x": x})["y"]
    _close(got, want)
    _close(run(module, {"x": x})["y"], want)
    ort = pytest.importorskip("onnxruntime")
    _close(got, ort.InferenceSession(str(path)).run(None, {"x": x})[0])
