"""MATMUL weights written as GEMM panels (``b_panels``, blob_format "Packed GEMM weights"): the writer packs a
constant that only feeds float32 batch-1 MATMULs, the runtime reads the panels in place (native) or unpacks them
for BLAS (no native library), and a blob whose panels do not fit its MATMUL is refused.

Oracle: onnxruntime on the same ONNX model (float32, 1e-5 relative), and the reference interpreter.
"""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

import nnkiln
import nnkiln.reference
from nnkiln.blob.format import BufferDesc, Memory, pack_panels, unpack_panels
from nnkiln.blob.writer import encode
from nnkiln.errors import BlobError
from nnkiln.onnx_backend import import_model_proto
from nnkiln.runtime import load_blob

RNG = np.random.default_rng(3)


def _model(n: int, shared_with_add: bool = False):  # noqa: ANN202
    """y = relu(x [1, 6, 20] @ W [20, n]); with ``shared_with_add`` W is [1, 20, 20] and also feeds ADD(z, W)."""
    w = (RNG.standard_normal((1, 20, 20) if shared_with_add else (20, n)) * 0.2).astype(np.float32)
    nodes = [helper.make_node("MatMul", ["x", "w"], ["m"]), helper.make_node("Relu", ["m"], ["y"])]
    inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, (1, 6, 20))]
    outputs = [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)]
    if shared_with_add:
        nodes.append(helper.make_node("Add", ["z", "w"], ["y2"]))
        inputs.append(helper.make_tensor_value_info("z", TensorProto.FLOAT, (1, 20, 20)))
        outputs.append(helper.make_tensor_value_info("y2", TensorProto.FLOAT, None))
    graph = helper.make_graph(nodes, "g", inputs, outputs, initializer=[numpy_helper.from_array(w, "w")])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 9
    return m


def _paneled(exe: nnkiln.Executable) -> list:
    return [t for t in exe.blob.tasks if t.kernel == "tosa.matmul" and t.args.get("attrs", {}).get("b_panels")]


def test_pack_and_unpack_are_inverse() -> None:
    b = RNG.standard_normal((5, 37)).astype(np.float32)
    p = pack_panels(b)
    assert p.shape == (3, 5, 16) and np.all(p[2, :, 5:] == 0)
    np.testing.assert_array_equal(p[1, 3], b[3, 16:32])
    np.testing.assert_array_equal(unpack_panels(p, 37), b)


@pytest.mark.parametrize("n", [16, 37, 100])
@pytest.mark.parametrize("native", [True, False])
def test_paneled_matmul_matches_onnxruntime(n: int, native: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    ort = pytest.importorskip("onnxruntime")
    from nnkiln.runtime.kernels import conv as conv_mod

    if not native:
        monkeypatch.setattr(conv_mod, "native_lib", lambda: None)
    model = _model(n)
    x = RNG.standard_normal((1, 6, 20)).astype(np.float32)
    module = import_model_proto(model, [x])
    exe = nnkiln.compile(module)
    tasks = _paneled(exe)
    assert len(tasks) == 1
    assert exe.blob.buffers[tasks[0].ins[1]].shape == (-(-n // 16), 20, 16)
    want = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    got = exe.run({"x": x})["y"]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    ref = nnkiln.reference.run(module, {"x": x})["y"]
    np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-5)
    again = load_blob(exe.to_bytes())  # the saved blob keeps the panels and runs the same
    np.testing.assert_array_equal(again.run({"x": x})["y"], got)


def test_a_weight_also_read_by_another_op_stays_unpacked() -> None:
    x, z = (RNG.standard_normal(s).astype(np.float32) for s in ((1, 6, 20), (1, 20, 20)))
    module = import_model_proto(_model(20, shared_with_add=True), [x, z])
    exe = nnkiln.compile(module)
    matmul = next(t for t in exe.blob.tasks if t.kernel == "tosa.matmul")
    # the ADD (a row program after fuse-row-programs) reads the same constant buffer: it must stay [1, 20, 20]
    assert [t.kernel for t in exe.blob.tasks if t is not matmul and matmul.ins[1] in t.ins] == ["fused.row_program"]
    assert not _paneled(exe)
    got, want = exe.run({"x": x, "z": z}), nnkiln.reference.run(module, {"x": x, "z": z})
    for k in want:
        np.testing.assert_allclose(got[k], want[k], rtol=1e-5, atol=1e-5)


def test_panels_that_do_not_fit_the_matmul_are_refused() -> None:
    x = RNG.standard_normal((1, 6, 20)).astype(np.float32)
    exe = nnkiln.compile(import_model_proto(_model(37), [x]))
    blob = exe.blob
    task = _paneled(exe)[0]
    b = blob.buffers[task.ins[1]]
    # claim one panel fewer than the 37 output columns need (same bytes, reinterpreted as [2, 20, 16] + a tail)
    blob.buffers[task.ins[1]] = BufferDesc(Memory.CONSTANT, b.kind, (2, 20, 16), b.offset, 2 * 20 * 16 * 4)
    with pytest.raises(BlobError, match="b_panels"):
        load_blob(encode(blob))
