"""The ONNX reader: large initializers are read from the file's bytes without going through the protobuf
parser (``_strip_large_raw_data``); values, errors and hostile inputs behave as with the plain parser."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

import nnkiln
from nnkiln.errors import FrontendError
from nnkiln.frontends.onnx.reader import INLINE_MIN_BYTES, read_model, tensor_to_numpy

ort = pytest.importorskip("onnxruntime")


def _model(tmp_path: Path) -> tuple[str, dict[str, np.ndarray]]:
    """y = (x @ W + b) + cast(idx_table[0, :256]): a large float weight, a small bias, a large int64 table."""
    rng = np.random.default_rng(0)
    inits = {"W": rng.standard_normal((256, 256)).astype(np.float32),      # 256 KiB: read from the file bytes
             "b": rng.standard_normal(256).astype(np.float32),             # 1 KiB: parsed as usual
             "table": rng.integers(-5, 5, (64, 256)).astype(np.int64)}     # 128 KiB int64
    nodes = [helper.make_node("MatMul", ["x", "W"], ["xw"]), helper.make_node("Add", ["xw", "b"], ["s"]),
             helper.make_node("Gather", ["table", "zero"], ["row"], axis=0),
             helper.make_node("Cast", ["row"], ["rowf"], to=TensorProto.FLOAT),
             helper.make_node("Add", ["s", "rowf"], ["y"])]
    zero = numpy_helper.from_array(np.array(0, np.int64), "zero")
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 256])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 256])],
                              [numpy_helper.from_array(v, k) for k, v in inits.items()] + [zero])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 10
    path = tmp_path / "m.onnx"
    path.write_bytes(m.SerializeToString())
    return str(path), inits


def test_large_initializers_are_read_from_the_file_bytes(tmp_path: Path) -> None:
    path, inits = _model(tmp_path)
    model = read_model(path)
    assert model.inline is not None
    by_name = {t.name: t for t in model.proto.graph.initializer}
    assert by_name["W"].data_location == TensorProto.EXTERNAL and not by_name["W"].HasField("raw_data")
    assert by_name["b"].HasField("raw_data")  # small: parsed as usual
    for name, want in inits.items():
        got = tensor_to_numpy(by_name[name], path, inline=model.inline)
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_array_equal(got, want)
    x = np.random.default_rng(1).standard_normal((4, 256)).astype(np.float32)
    want = ort.InferenceSession(path).run(None, {"x": x})[0]
    module = nnkiln.load(path)
    np.testing.assert_allclose(nnkiln.reference.run(module, {"x": x})["y"], want, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(nnkiln.compile(module).run({"x": x})["y"], want, rtol=1e-5, atol=1e-5)


def test_a_model_cannot_point_into_the_file_bytes_itself(tmp_path: Path) -> None:
    """Only the reader's own per-read token reads from the file bytes; a model naming such a location is
    rejected like any other non-file location."""
    t = numpy_helper.from_array(np.zeros(4, np.float32), "w")
    t.ClearField("raw_data")
    t.data_location = TensorProto.EXTERNAL
    for k, v in (("location", "\0nnkiln-inline-0000000000000000"), ("offset", "0"), ("length", "16")):
        e = t.external_data.add()
        e.key, e.value = k, v
    graph = helper.make_graph([helper.make_node("Add", ["x", "w"], ["y"])], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])], [t])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    path = tmp_path / "m.onnx"
    path.write_bytes(m.SerializeToString())
    with pytest.raises(FrontendError, match="location must be a relative file name"):
        nnkiln.load(str(path))


@pytest.mark.parametrize("cut", [0.5, 0.9, 0.999])
def test_truncated_files_are_invalid_protobufs(tmp_path: Path, cut: float) -> None:
    path, _ = _model(tmp_path)
    data = Path(path).read_bytes()
    assert len(data) > 2 * INLINE_MIN_BYTES
    Path(path).write_bytes(data[: int(len(data) * cut)])
    with pytest.raises(FrontendError, match="not a valid ONNX protobuf|holds no ONNX graph"):
        nnkiln.load(path)


def test_invalid_utf8_names_and_negative_dims_are_frontend_errors(tmp_path) -> None:  # noqa: ANN001
    """Found by the fuzzer (seed 20261129, onnx cases 14206, 19050, 8779): protobuf hands a string field holding
    invalid UTF-8 to Python as bytes (TypeError in the importer); a declared shape [0, -3] crashed the zero-size
    input check (ValueError): non-positive declared dimensions are unknown ones."""
    import onnx
    from onnx import TensorProto as TP
    from onnx import helper as oh

    import nnkiln
    from nnkiln.errors import FrontendError

    g = oh.make_graph([oh.make_node("Relu", ["x"], ["y"], name="n0")], "g",
                      [oh.make_tensor_value_info("x", TP.FLOAT, [2])], [oh.make_tensor_value_info("y", TP.FLOAT, [2])])
    data = oh.make_model(g, opset_imports=[oh.make_opsetid("", 17)]).SerializeToString()
    assert data.count(b"Relu") == 1
    (tmp_path / "bad.onnx").write_bytes(data.replace(b"Relu", b"R\xffl\xfe"))
    with pytest.raises(FrontendError, match="bad.onnx: node 'n0': .* is not valid UTF-8"):
        nnkiln.load(str(tmp_path / "bad.onnx"))
    g = oh.make_graph([oh.make_node("Relu", ["x"], ["y"])], "g", [oh.make_tensor_value_info("x", TP.FLOAT, [0, -3])],
                      [oh.make_tensor_value_info("y", TP.FLOAT, None)])
    onnx.save(oh.make_model(g, opset_imports=[oh.make_opsetid("", 17)]), tmp_path / "neg.onnx")
    # dim_value -1 is what some exporters write for an unknown dimension: like a missing one, it is compiled as 1
    with pytest.warns(nnkiln.NnkilnWarning, match=r"symbolic dimension\(s\) 0, 1"):
        module = nnkiln.load(str(tmp_path / "neg.onnx"))
    assert "tensor<1x1xf32>" in str(module)


def test_sizes_over_the_limits_inside_lowerings_are_frontend_errors(tmp_path) -> None:  # noqa: ANN001
    """Found by the fuzzer (seed 20261130, onnx cases 12656, 14836, 542): a float4 initializer (ValueError), a Resize
    to [1, 1, 2^20, 2^20] (64 GiB of coordinates computed at import) and a ConvTranspose dilation of 2^31 (a 2 TiB
    dilated kernel): each is now refused before anything is allocated, naming the file and the node."""
    import numpy as np
    import onnx
    from onnx import TensorProto as TP
    from onnx import helper as oh

    import nnkiln
    from nnkiln.errors import FrontendError

    def load(nodes: list, inits: list, name: str, shape: tuple = (1, 1, 4, 4)) -> None:
        g = oh.make_graph(nodes, "g", [oh.make_tensor_value_info("x", TP.FLOAT, list(shape))],
                          [oh.make_tensor_value_info("y", TP.FLOAT, None)], inits)
        onnx.save(oh.make_model(g, opset_imports=[oh.make_opsetid("", 21)]), tmp_path / name)
        nnkiln.load(str(tmp_path / name))

    with pytest.raises(FrontendError, match=r"f4.onnx: node 'w': a constant of element type float4_e2m1fn has no"):
        load([oh.make_node("Cast", ["w"], ["wf"], to=TP.FLOAT), oh.make_node("Add", ["x", "wf"], ["y"])],
             [oh.make_tensor("w", TP.FLOAT4E2M1, [4], [0.5, 1.0, 1.5, 2.0])], "f4.onnx")
    with pytest.raises(FrontendError, match=r"resize.onnx: node 'r': Resize: the result: .* over TOSA's limit"):
        load([oh.make_node("Resize", ["x", "", "", "sizes"], ["y"], name="r", mode="nearest")],
             [oh.make_tensor("sizes", TP.INT64, [4], [1, 1, 1 << 20, 1 << 20])], "resize.onnx")
    w = np.ones((1, 1, 2, 2), np.float32)
    with pytest.raises(FrontendError, match=r"deconv.onnx: node 'd': .* dilated by \[1, 2147483648\]"):
        load([oh.make_node("ConvTranspose", ["x", "w"], ["y"], name="d", dilations=[1, 1 << 31])],
             [onnx.numpy_helper.from_array(w, "w")], "deconv.onnx")
