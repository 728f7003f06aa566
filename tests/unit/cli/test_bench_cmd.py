"""``nnkiln bench``: the JSON it prints (with onnxruntime compared on the same inputs), batch binding, clear errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from nnkiln.cli.main import main

pytest.importorskip("onnxruntime")
EXAMPLES = Path(__file__).parents[3] / "examples"


def _json(capsys: pytest.CaptureFixture[str], argv: list[str]) -> dict:
    assert main(argv) == 0
    return json.loads(capsys.readouterr().out)


def test_json_with_onnxruntime_compared(capsys: pytest.CaptureFixture[str]) -> None:
    r = _json(capsys, ["bench", str(EXAMPLES / "small_resnet.onnx"), "--runs", "4", "--warmup", "1", "--json",
                       "--compare", "onnxruntime", "--threads", "1", "--batch", "3"])
    assert r["runs"] == 4 and r["batch"] == 3 and r["threads"] == 1
    assert 0 < r["min_ms"] <= r["median_ms"] <= r["p90_ms"]
    assert r["throughput_per_s"] == pytest.approx(3e3 / r["median_ms"], rel=1e-3)
    ort = r["onnxruntime"]
    assert ort["runs"] == 4 and 0 < ort["min_ms"] <= ort["median_ms"] <= ort["p90_ms"]
    assert ort["outputs_match"] is True and ort["max_abs_diff"] < 1e-4


def test_a_blob_and_other_formats(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["compile", str(EXAMPLES / "tiny_cnn.mlir"), "-o", str(tmp_path / "t.kiln")]) == 0
    capsys.readouterr()
    r = _json(capsys, ["bench", str(tmp_path / "t.kiln"), "--runs", "2", "--json"])
    assert r["runs"] == 2 and r["compile_seconds"] == 0.0 and "onnxruntime" not in r


@pytest.mark.parametrize("argv,message", [
    (["--compare", "onnxruntime"], "needs an ONNX model"),
    (["--batch", "2"], "binds symbolic dimensions of ONNX inputs"),
])
def test_clear_errors(capsys: pytest.CaptureFixture[str], argv: list[str], message: str) -> None:
    assert main(["bench", str(EXAMPLES / "tiny_cnn.mlir"), "--runs", "1", *argv]) == 2
    assert message in capsys.readouterr().err
