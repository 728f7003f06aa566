"""Zero-size values (TOSA 0.30 has no zero-size tensors, spec §1.8.1): they exist only at import. A node whose
outputs are all zero-size by ONNX's shape inference gets empty values; Concat drops zero-size inputs; a node on
known inputs folds with ONNX's semantics (a reduction over an empty axis gives its identity); a zero-size graph
output is returned empty with its declared type and place (module attribute and blob metadata ``empty_outputs``).
Results compared with onnxruntime's (dtype, shape, values) through the reference interpreter, the compiled program
and the program saved and loaded."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto as TP
from onnx import helper as oh

import nnkiln
import nnkiln.reference
from nnkiln.errors import BlobError

ort = pytest.importorskip("onnxruntime")
RNG = np.random.default_rng(7)


def _save(path: Path, nodes: list, inputs: list, outputs: list, inits: tuple = ()) -> str:
    g = oh.make_graph(nodes, "g", inputs, outputs, list(inits))
    onnx.save(oh.make_model(g, opset_imports=[oh.make_opsetid("", 18)]), path)
    return str(path)


def _check_all_runs(path: str, feed: dict[str, np.ndarray], tmp: Path) -> dict[str, np.ndarray]:
    sess = ort.InferenceSession(path)
    want = dict(zip([o.name for o in sess.get_outputs()], sess.run(None, feed)))
    module = nnkiln.load(path)
    exe = nnkiln.compile(module, threads=1)
    exe.save(tmp / "m.kiln")
    runs = {"reference": lambda f: nnkiln.reference.run(module, f), "compiled": exe.run,
            "loaded": nnkiln.Executable.load(tmp / "m.kiln").run}
    for how, run in runs.items():
        got = run(feed)
        assert list(got) == list(want), how  # every output, in the model's order
        for name, w in want.items():
            g = got[name]
            assert g.dtype == w.dtype and g.shape == w.shape, (how, name, g.dtype, g.shape, w.dtype, w.shape)
            np.testing.assert_allclose(g, w, rtol=1e-6, err_msg=f"{how} {name}")
    return want


def test_an_empty_split_piece_is_dropped_by_concat(tmp_path: Path) -> None:
    """Split of a run-time value into [4, 0, 2] pieces; the empty one is concatenated back."""
    nodes = [oh.make_node("Split", ["x", "sizes"], ["a", "e", "b"], axis=1),
             oh.make_node("Concat", ["b", "e", "a"], ["y"], axis=1)]
    path = _save(tmp_path / "m.onnx", nodes, [oh.make_tensor_value_info("x", TP.FLOAT, [2, 6])],
                 [oh.make_tensor_value_info("y", TP.FLOAT, [2, 6])], [oh.make_tensor("sizes", TP.INT64, [3], [4, 0, 2])])
    _check_all_runs(path, {"x": RNG.standard_normal((2, 6)).astype(np.float32)}, tmp_path)


def test_a_zero_size_output_keeps_its_type_and_place(tmp_path: Path) -> None:
    """Outputs: a normal one, a Slice past the end (int64, [3, 0]), another normal one."""
    nodes = [oh.make_node("Relu", ["x"], ["r"]), oh.make_node("Cast", ["x"], ["i"], to=TP.INT64),
             oh.make_node("Slice", ["i", "st", "en", "ax"], ["e"]), oh.make_node("Neg", ["x"], ["n"])]
    inits = [oh.make_tensor("st", TP.INT64, [1], [10]), oh.make_tensor("en", TP.INT64, [1], [20]),
             oh.make_tensor("ax", TP.INT64, [1], [1])]
    path = _save(tmp_path / "m.onnx", nodes, [oh.make_tensor_value_info("x", TP.FLOAT, [3, 4])],
                 [oh.make_tensor_value_info(n, t, None) for n, t in (("r", TP.FLOAT), ("e", TP.INT64), ("n", TP.FLOAT))],
                 inits)
    want = _check_all_runs(path, {"x": RNG.standard_normal((3, 4)).astype(np.float32)}, tmp_path)
    assert want["e"].shape == (3, 0) and want["e"].dtype == np.int64
    assert nnkiln.Executable.load(tmp_path / "m.kiln").empty_outputs == [("e", "int64", (3, 0), 1)]


@pytest.mark.parametrize("op", ["ReduceSum", "ReduceProd", "ReduceMax", "ReduceMin", "ReduceL2", "ReduceLogSumExp"])
def test_a_reduction_over_an_empty_axis_is_its_identity(tmp_path: Path, op: str) -> None:
    """The input [2, 0, 3] (declared, carries no data) reduced over axis 1 gives a [2, 1, 3] constant, added to a
    run-time value so the program computes something."""
    nodes = [oh.make_node(op, ["e", "axes"], ["r"], keepdims=1), oh.make_node("Add", ["r", "x"], ["y"])]
    path = _save(tmp_path / "m.onnx", nodes, [oh.make_tensor_value_info("e", TP.FLOAT, [2, 0, 3]),
                                              oh.make_tensor_value_info("x", TP.FLOAT, [2, 1, 3])],
                 [oh.make_tensor_value_info("y", TP.FLOAT, [2, 1, 3])], [oh.make_tensor("axes", TP.INT64, [1], [1])])
    _check_all_runs(path, {"e": np.zeros((2, 0, 3), np.float32), "x": RNG.standard_normal((2, 1, 3)).astype(np.float32)},
                    tmp_path)


def test_a_run_time_shape_with_a_zero_size_input_is_still_refused(tmp_path: Path) -> None:
    """ReduceSum of an empty input over run-time ``axes``: the output shape depends on the axes' values, so the
    load asks for them (no guessed shape)."""
    nodes = [oh.make_node("ReduceSum", ["e", "axes"], ["y"], keepdims=1)]
    path = _save(tmp_path / "m.onnx", nodes, [oh.make_tensor_value_info("e", TP.FLOAT, [2, 0, 3]),
                                              oh.make_tensor_value_info("axes", TP.INT64, [1])],
                 [oh.make_tensor_value_info("y", TP.FLOAT, None)])
    with pytest.raises(nnkiln.errors.FrontendError, match="graph input 'axes'"):
        nnkiln.load(path)


def test_the_blob_reader_validates_empty_outputs(tmp_path: Path) -> None:
    from nnkiln.blob.reader import decode
    from nnkiln.blob.writer import encode

    nodes = [oh.make_node("Relu", ["x"], ["r"]), oh.make_node("Slice", ["x", "st", "en", "ax"], ["e"])]
    inits = [oh.make_tensor("st", TP.INT64, [1], [9]), oh.make_tensor("en", TP.INT64, [1], [9]),
             oh.make_tensor("ax", TP.INT64, [1], [0])]
    path = _save(tmp_path / "m.onnx", nodes, [oh.make_tensor_value_info("x", TP.FLOAT, [3])],
                 [oh.make_tensor_value_info("r", TP.FLOAT, None), oh.make_tensor_value_info("e", TP.FLOAT, None)], inits)
    blob = decode(nnkiln.compile(nnkiln.load(path), threads=1).to_bytes())
    assert blob.metadata["empty_outputs"] == [{"name": "e", "dtype": "float32", "shape": [0], "index": 1}]
    for bad in ([{"name": "e", "dtype": "float32", "shape": [2], "index": 1}],  # not zero-size
                [{"name": "e", "dtype": "complex64", "shape": [0], "index": 1}],
                [{"name": "e", "dtype": "float32", "shape": [0], "index": "1"}], {"e": 1}):
        blob.metadata["empty_outputs"] = bad
        with pytest.raises(BlobError, match="empty_outputs"):
            decode(encode(blob))
