"""Quantized NNEF → integer TOSA: IR inspection and 1-LSB comparison with onnxruntime.

Oracle: a float ONNX model (conv + relu + max_pool + gemm) is quantized by onnxruntime's quantize_static
(QDQ, int8 activations and weights, per-tensor and per-channel); the QDQ parameters are converted to NNEF
by hand here (graph.nnef, .dat, graph.quant: ``linear_quantize(min = (-128 - zp)·s, max = (127 - zp)·s,
bits = 8)``); onnxruntime runs the quantized ONNX model and our integer NNEF lowering must agree within
1 LSB of the output scale.
"""

from __future__ import annotations

import os

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

from nnkiln.frontends.nnef.loader import load_nnef  # noqa: E402
from nnkiln.frontends.nnef.tensor_file import ItemType, write_tensor  # noqa: E402
from nnkiln.reference import run  # noqa: E402

RNG = np.random.default_rng(7)


def _float_model(path: str) -> None:
    w1 = RNG.normal(0, 0.4, (4, 3, 3, 3)).astype(np.float32)
    b1 = RNG.normal(0, 0.1, (4,)).astype(np.float32)
    w2 = RNG.normal(0, 0.2, (64, 5)).astype(np.float32)
    b2 = RNG.normal(0, 0.1, (5,)).astype(np.float32)
    nodes = [
        helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c1"], ["r1"]),
        helper.make_node("MaxPool", ["r1"], ["p1"], kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Flatten", ["p1"], ["f"]),
        helper.make_node("Gemm", ["f", "w2", "b2"], ["y"]),
    ]
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 5])],
                          [numpy_helper.from_array(a, n) for a, n in ((w1, "w1"), (b1, "b1"), (w2, "w2"), (b2, "b2"))])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    onnx.save(m, path)


class _Reader:
    def __init__(self, n: int) -> None:
        self.data = [{"x": RNG.uniform(-1, 1, (1, 3, 8, 8)).astype(np.float32)} for _ in range(n)]

    def get_next(self):  # noqa: ANN201
        return self.data.pop() if self.data else None


def _quantize(fp: str, qp: str, per_channel: bool) -> None:
    from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_static

    class R(_Reader, CalibrationDataReader):
        pass

    quantize_static(fp, qp, R(16), quant_format=QuantFormat.QDQ, activation_type=QuantType.QInt8,
                    weight_type=QuantType.QInt8, per_channel=per_channel)


def _qdq_params(qp: str) -> tuple[dict, dict]:
    """(activation quantization by float tensor name, weights: name -> (int values, scale, zp, axis))."""
    m = onnx.load(qp)
    inits = {i.name: numpy_helper.to_array(i) for i in m.graph.initializer}
    acts, weights = {}, {}
    for n in m.graph.node:
        if n.op_type == "QuantizeLinear":
            acts[n.input[0]] = (float(inits[n.input[1]]), int(inits[n.input[2]]))
        if n.op_type == "DequantizeLinear" and n.input[0] in inits:
            axis = next((a.i for a in n.attribute if a.name == "axis"), 1)
            weights[n.output[0]] = (inits[n.input[0]], np.asarray(inits[n.input[1]]).reshape(-1),
                                    np.asarray(inits[n.input[2]]).reshape(-1) if len(n.input) > 2 else None, axis)
    return acts, weights


def _float_of_dq(m, name: str) -> str:  # noqa: ANN001
    """The float tensor a DequantizeLinear output stands for (its QuantizeLinear input)."""
    prod = {o: n for n in m.graph.node for o in n.output}
    n = prod.get(name)
    if n is not None and n.op_type == "DequantizeLinear":
        q = prod.get(n.input[0])
        if q is not None and q.op_type == "QuantizeLinear":
            return q.input[0]
    return name


def _rng(s: float, z: int) -> str:
    return f"min = {repr(float((-128 - z) * s))}, max = {repr(float((127 - z) * s))}"


def _to_nnef(qp: str, folder: str) -> tuple[float, int]:
    """Write the NNEF model of the QDQ model; returns the output (scale, zp)."""
    m = onnx.load(qp)
    acts, weights = _qdq_params(qp)
    by_op = {n.op_type: n for n in m.graph.node if n.op_type not in ("QuantizeLinear", "DequantizeLinear")}
    conv, relu, gemm = by_op["Conv"], by_op.get("Relu"), by_op["Gemm"]
    os.makedirs(folder, exist_ok=True)
    w1q, w1s, w1z, _ = weights[conv.input[1]]
    b1q, b1s, _, _ = weights[conv.input[2]]
    w2q, w2s, w2z, w2axis = weights[gemm.input[1]]
    b2q, b2s, _, _ = weights[gemm.input[2]]
    quant = []
    # conv filter: per-tensor → a linear-quantized .dat (codes q + 128); per-channel → float .dat + graph.quant
    if w1s.size == 1:
        s, z = float(w1s[0]), int(w1z[0])
        real = (w1q.astype(np.float64) - z) * s
        dat = write_tensor(real, item_type=ItemType.LINEAR_QUANTIZED, bits=8, min=(-128 - z) * s, max=(127 - z) * s)
    else:
        real = (w1q.astype(np.float64) - w1z.reshape(-1, 1, 1, 1)) * w1s.reshape(-1, 1, 1, 1)
        dat = write_tensor(real.astype(np.float32))
        lo = [float((-128 - z) * s) for s, z in zip(w1s, w1z)]
        hi = [float((127 - z) * s) for s, z in zip(w1s, w1z)]
        quant.append(f'"w1": linear_quantize(min = {lo}, max = {hi}, bits = 8);')
    with open(os.path.join(folder, "w1.dat"), "wb") as f:
        f.write(dat)
    # gemm weight [K, N] (axis 1 per channel) → NNEF linear filter [N, K]
    zz = np.zeros_like(w2s, dtype=np.int64) if w2z is None else w2z.astype(np.int64)
    real2 = ((w2q.astype(np.float64) - zz.reshape(1, -1)) * w2s.reshape(1, -1)).T
    with open(os.path.join(folder, "w2.dat"), "wb") as f:
        f.write(write_tensor(np.ascontiguousarray(real2).astype(np.float32)))
    lo2 = [float((-128 - z) * s) for s, z in zip(w2s, zz)]
    hi2 = [float((127 - z) * s) for s, z in zip(w2s, zz)]
    quant.append(f'"w2": linear_quantize(min = {lo2 if len(lo2) > 1 else lo2[0]}, '
                 f'max = {hi2 if len(hi2) > 1 else hi2[0]}, bits = 8);')
    for name, bq, bs in (("b1", b1q, b1s), ("b2", b2q, b2s)):
        with open(os.path.join(folder, f"{name}.dat"), "wb") as f:
            f.write(write_tensor((bq.astype(np.float64) * bs).astype(np.float32).reshape(1, -1)))
    conv_out = conv.output[0]
    pool_in = relu.output[0] if relu is not None else conv_out
    names = {"x": "x", conv_out: "c1", pool_in: "r1"}
    pool = by_op["MaxPool"]
    names[pool.output[0]] = "p1"
    if relu is None:  # ORT folds the ReLU into the conv output's range (min = 0): quantize c1 and r1 alike
        names = {"x": "x", conv_out: "c1", pool.output[0]: "p1"}
        quant.append(f'"r1": linear_quantize({_rng(*acts[conv_out])}, bits = 8);')
    for onnx_name, nn in names.items():
        if onnx_name in acts:
            quant.append(f'"{nn}": linear_quantize({_rng(*acts[onnx_name])}, bits = 8);')
    out_name = gemm.output[0]
    y_sz = acts[out_name]
    quant.append(f'"y": linear_quantize({_rng(*y_sz)}, bits = 8);')
    flat_src = _float_of_dq(m, by_op["Flatten"].output[0]) if "Flatten" in by_op else None
    if flat_src in acts:
        quant.append(f'"f": linear_quantize({_rng(*acts[flat_src])}, bits = 8);')
    n_out = w2q.shape[1]
    graph = f"""version 1.0;
graph G( x ) -> ( y )
{{
  x = external<scalar>(shape = [1, 3, 8, 8]);
  w1 = variable<scalar>(shape = [4, 3, 3, 3], label = 'w1');
  b1 = variable<scalar>(shape = [1, 4], label = 'b1');
  c1 = conv(x, w1, b1, padding = [(1, 1), (1, 1)]);
  r1 = relu(c1);
  p1 = max_pool(r1, size = [1, 1, 2, 2], stride = [1, 1, 2, 2], border = 'ignore');
  f = reshape(p1, shape = [1, -1]);
  w2 = variable<scalar>(shape = [{n_out}, 64], label = 'w2');
  b2 = variable<scalar>(shape = [1, {n_out}], label = 'b2');
  y = linear(f, w2, b2);
}}
"""
    with open(os.path.join(folder, "graph.nnef"), "w") as f:
        f.write(graph)
    with open(os.path.join(folder, "graph.quant"), "w") as f:
        f.write("\n".join(quant) + "\n")
    return y_sz


def _ops(module) -> list:  # noqa: ANN001
    return [op for op in module.walk() if op.name.startswith("tosa.")]


@pytest.fixture(scope="module", params=[False, True], ids=["per_tensor", "per_channel"])
def quantized(request, tmp_path_factory):  # noqa: ANN001, ANN201
    d = tmp_path_factory.mktemp("q")
    fp, qp = str(d / "f.onnx"), str(d / "q.onnx")
    _float_model(fp)
    _quantize(fp, qp, request.param)
    y_sz = _to_nnef(qp, str(d / "nnef"))
    return qp, str(d / "nnef"), y_sz, request.param


def test_conv_is_int8_with_i32_accumulator_and_rescale(quantized) -> None:  # noqa: ANN001
    _, folder, _, per_channel = quantized
    module = load_nnef(folder)
    ops = _ops(module)
    convs = [op for op in ops if op.name == "tosa.conv2d"]
    assert len(convs) == 1
    conv = convs[0]
    assert str(conv.operands[0].type.element_type) == "i8"
    assert str(conv.operands[1].type.element_type) == "i8"
    assert str(conv.operands[2].type.element_type) == "i32"
    assert str(conv.results[0].type.element_type) == "i32"
    users = [u.operation for u in conv.results[0].uses]
    resc = [u for u in users if u.name == "tosa.rescale"]
    assert resc and str(resc[0].results[0].type.element_type) == "i8"
    assert bool(resc[0].properties["per_channel"].value.data) == per_channel
    fcs = [op for op in ops if op.name == "tosa.fully_connected"]
    assert len(fcs) == 1 and str(fcs[0].operands[0].type.element_type) == "i8"
    pools = [op for op in ops if op.name == "tosa.max_pool2d"]
    assert len(pools) == 1 and str(pools[0].operands[0].type.element_type) == "i8"
    # no float arithmetic after the input's quantization prologue (pseudo-quantize, then to int8)
    start = ops.index(conv)
    float_compute = [op.name for op in ops[start:] if op.name in ("tosa.floor", "tosa.matmul", "tosa.maximum")
                     and str(op.results[0].type.element_type) == "f32"]
    assert float_compute == []


def test_within_one_lsb_of_onnxruntime(quantized) -> None:  # noqa: ANN001
    qp, folder, (ys, _), per_channel = quantized
    module = load_nnef(folder)
    opts = ort.SessionOptions()
    # onnxruntime's optimised x86 u8*s8 kernels saturate 16-bit pair sums with full-range int8 weights
    # (documented by onnxruntime), so its fused run is not exact; the unfused run is the QDQ semantics.
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    sess = ort.InferenceSession(qp, opts, providers=["CPUExecutionProvider"])
    worst = 0.0
    for _ in range(8):
        x = RNG.uniform(-1.2, 1.2, (1, 3, 8, 8)).astype(np.float32)
        want = sess.run(None, {"x": x})[0]
        got = np.asarray(run(module, {"x": x})["y"])
        worst = max(worst, float(np.max(np.abs(got - want)) / ys))
    print(f"max difference: {worst:.3f} LSB")
    assert worst <= 1.0 + 1e-3


def test_logarithmic_stays_float(tmp_path) -> None:  # noqa: ANN001
    (tmp_path / "graph.nnef").write_text("version 1.0;\ngraph G( x ) -> ( y )\n{\n  x = external<scalar>(shape = [1, 2]);\n"
                                         "  y = relu(x);\n}\n")
    (tmp_path / "graph.quant").write_text('"x": logarithmic_quantize(max = 4.0, bits = 4);\n')
    module = load_nnef(str(tmp_path))
    kinds = {str(op.results[0].type.element_type) for op in _ops(module) if op.results}
    assert "i8" not in kinds
    out = np.asarray(run(module, {"x": np.array([[3.0, -1.0]], np.float32)})["y"])
    np.testing.assert_allclose(out, [[4.0, 0.0]])  # 3 → 2^round(log2 3) = 4


def test_zero_point_linear_quantize_is_accepted(tmp_path) -> None:  # noqa: ANN001
    """NNEF 1.0.5's algorithm (see quant_v105): relu(1.3) = 1.3 → round(1.3/0.5) = 3 → 1.5; relu(-1) = 0."""
    (tmp_path / "graph.nnef").write_text("version 1.0;\ngraph G( x ) -> ( y )\n{\n  x = external<scalar>(shape = [1, 2]);\n"
                                         "  y = relu(x);\n}\n")
    (tmp_path / "graph.quant").write_text(
        '"y": zero_point_linear_quantize(zero_point = 0, scale = 0.5, bits = 8, signed = true, symmetric = false);\n')
    for lenient in (False, True):
        out = np.asarray(run(load_nnef(str(tmp_path), lenient=lenient), {"x": np.array([[1.3, -1.0]], np.float32)})["y"])
        np.testing.assert_allclose(out, [[1.5, 0.0]])
