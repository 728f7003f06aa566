"""Every declared input is accepted (issue 20, item 3): a zero-size input, which carries no data and which the
program does not read, is still taken by the reference interpreter and by the compiled program (saved and loaded),
its shape and element type checked, and ignored; results as onnxruntime's with every input fed."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto as TP
from onnx import helper as oh

import nnkiln
import nnkiln.reference
from nnkiln.errors import InputError

ort = pytest.importorskip("onnxruntime")


def _model(path: Path) -> None:
    g = oh.make_graph([oh.make_node("Concat", ["x", "e"], ["c"], axis=0), oh.make_node("Relu", ["c"], ["y"])], "g",
                      [oh.make_tensor_value_info("x", TP.FLOAT, [3, 2]), oh.make_tensor_value_info("e", TP.FLOAT, [0, 2])],
                      [oh.make_tensor_value_info("y", TP.FLOAT, [3, 2])])
    onnx.save(oh.make_model(g, opset_imports=[oh.make_opsetid("", 17)]), path)


def test_zero_size_input_accepted_checked_and_ignored(tmp_path: Path) -> None:
    _model(tmp_path / "m.onnx")
    x = np.random.default_rng(0).standard_normal((3, 2)).astype(np.float32)
    feed = {"x": x, "e": np.zeros((0, 2), np.float32)}
    want = ort.InferenceSession(str(tmp_path / "m.onnx")).run(None, feed)[0]
    module = nnkiln.load(str(tmp_path / "m.onnx"))
    exe = nnkiln.compile(module, threads=1)
    exe.save(tmp_path / "m.kiln")
    loaded = nnkiln.Executable.load(tmp_path / "m.kiln")
    assert [n for n, _, _ in loaded.ignored_inputs] == ["e"]
    runs = (lambda f: nnkiln.reference.run(module, f), exe.run, loaded.run)
    for run in runs:
        got = run(feed)["y"]
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(run({"x": x})["y"], want)  # not needed: may be left out
        with pytest.raises(InputError, match="input 'e' has shape \\[1, 2\\]"):
            run({"x": x, "e": np.zeros((1, 2), np.float32)})
        with pytest.raises(InputError, match="input 'e'"):
            run({"x": x, "e": np.zeros((0, 2), np.bool_)})
