"""Weights stored as ONNX external data (what torch's default exporter writes): read from files inside the
model's folder only, with exact sizes; every hostile variant is a FrontendError naming the tensor."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto as TP
from onnx import helper as oh
from onnx import numpy_helper as nh

import nnkiln
from nnkiln.errors import NnkilnError
from nnkiln.reference import run

W = np.arange(12, dtype=np.float32).reshape(3, 4) / 7


def _model() -> onnx.ModelProto:
    g = oh.make_graph([oh.make_node("MatMul", ["x", "w"], ["y"])], "m", [oh.make_tensor_value_info("x", TP.FLOAT, [2, 3])],
                      [oh.make_tensor_value_info("y", TP.FLOAT, [2, 4])], [nh.from_array(W, "w")])
    m = oh.make_model(g, opset_imports=[oh.make_opsetid("", 17)])
    m.ir_version = 9
    return m


def _external(folder: Path, location: str = "w.bin", offset: int = 0, length: int | None = None,
              data: bytes | None = None) -> Path:
    """The model with ``w`` pointing at ``location``; ``data`` (default: w's bytes at ``offset``) written there
    when the location is inside ``folder``."""
    m = _model()
    t = m.graph.initializer[0]
    t.ClearField("raw_data")
    t.ClearField("float_data")
    t.data_location = TP.EXTERNAL
    entries = {"location": location, "offset": str(offset)}
    if length is not None:
        entries["length"] = str(length)
    for k, v in entries.items():
        e = t.external_data.add()
        e.key, e.value = k, v
    target = folder / location
    if location and not os.path.isabs(location) and ".." not in location:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data if data is not None else b"\0" * offset + W.tobytes())
    path = folder / "m.onnx"
    path.write_bytes(m.SerializeToString())
    return path


def _run(path: Path) -> np.ndarray:
    x = np.ones((2, 3), np.float32)
    return run(nnkiln.load(str(path)), {"x": x})["y"]


def test_external_weights_equal_internal_ones(tmp_path: Path):
    want = np.ones((2, 3), np.float32) @ W
    np.testing.assert_allclose(_run(_external(tmp_path)), want, rtol=1e-6)
    np.testing.assert_allclose(_run(_external(tmp_path / "b", "sub/dir/w.bin", offset=128, length=48)), want, rtol=1e-6)


def test_onnx_save_with_external_data_round_trips(tmp_path: Path):
    m = _model()
    onnx.save_model(m, tmp_path / "saved.onnx", save_as_external_data=True, all_tensors_to_one_file=True,
                    location="saved.onnx.data", size_threshold=0)
    assert (tmp_path / "saved.onnx.data").exists()
    np.testing.assert_allclose(_run(tmp_path / "saved.onnx"), np.ones((2, 3), np.float32) @ W, rtol=1e-6)


@pytest.mark.parametrize("location,why", [("../w.bin", "outside the model's folder"), ("/etc/passwd", "relative file name"),
                                          ("", "relative file name"), ("missing.bin", "cannot read")])
def test_bad_locations(tmp_path: Path, location: str, why: str):
    (tmp_path / "inner").mkdir()
    path = _external(tmp_path / "inner", location)
    if location == "missing.bin":
        (tmp_path / "inner" / "missing.bin").unlink()
    with pytest.raises(NnkilnError, match=f"tensor 'w'.*{why}"):
        nnkiln.load(str(path))


def test_symbolic_link_leading_out_is_refused(tmp_path: Path):
    (tmp_path / "outside.bin").write_bytes(W.tobytes())
    (tmp_path / "m").mkdir()
    path = _external(tmp_path / "m", "link.bin")
    (tmp_path / "m" / "link.bin").unlink()
    os.symlink(tmp_path / "outside.bin", tmp_path / "m" / "link.bin")
    with pytest.raises(NnkilnError, match="outside the model's folder"):
        nnkiln.load(str(path))


@pytest.mark.parametrize("kwargs,why", [({"data": W.tobytes()[:40]}, "the file has 40 bytes; 48 are needed"),
                                        ({"length": 44}, "do not fit the 48 bytes"),
                                        ({"offset": 8, "data": W.tobytes()}, "48 are needed at offset 8")])
def test_sizes_must_match(tmp_path: Path, kwargs: dict, why: str):
    with pytest.raises(NnkilnError, match=why):
        nnkiln.load(str(_external(tmp_path, **kwargs)))


def test_in_memory_model_with_external_data_is_a_clear_error(tmp_path: Path):
    from nnkiln.onnx_backend import import_model_proto

    m = onnx.load(str(_external(tmp_path)), load_external_data=False)
    with pytest.raises(NnkilnError, match="must be loaded from its file"):
        import_model_proto(m, [np.ones((2, 3), np.float32)])
