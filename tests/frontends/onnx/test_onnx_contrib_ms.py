"""onnxruntime's com.microsoft quantized operators (contrib_microsoft.py) against onnxruntime itself.

Each case builds one contrib node with random int8/uint8 inputs and scales, runs it in onnxruntime
(the operator's owner and oracle) and in nnkiln (reference interpreter and compiled runtime), and
requires at most one quantization step of difference (the spec is "dequantize, float op, quantize";
onnxruntime's kernels use lookup tables or fixed-point paths that may round a tie differently).
"""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto as TP
from onnx import helper as oh
from onnx import numpy_helper as nh

import nnkiln
from nnkiln.errors import NnkilnError
from nnkiln.ir.text import print_module
from nnkiln.onnx_backend import import_model_proto
from nnkiln.reference import run

ort = pytest.importorskip("onnxruntime")

MS = "com.microsoft"
NP = {TP.INT8: np.int8, TP.UINT8: np.uint8}


def _model(nodes, inputs, outputs, inits, opset=17):
    g = oh.make_graph(nodes, "m", inputs, outputs, inits)
    m = oh.make_model(g, opset_imports=[oh.make_opsetid("", opset), oh.make_opsetid(MS, 1)])
    m.ir_version = 9
    return m


def _q(rng, shape, t):
    info = np.iinfo(NP[t])
    return rng.integers(info.min, info.max + 1, size=shape).astype(NP[t])


def _scalar(name, value, t=None):
    if t is None:
        return nh.from_array(np.array(value, np.float32), name)
    return nh.from_array(np.array(value, NP[t]), name)


def _compare(m, feeds, t_out=None, max_steps=1.0):
    expect = ort.InferenceSession(m.SerializeToString()).run(None, feeds)[0]
    module = import_model_proto(m, list(feeds.values()))
    text = print_module(module)
    ours = run(module, feeds)[m.graph.output[0].name]
    compiled = nnkiln.compile(module).run(feeds)[m.graph.output[0].name]
    assert ours.shape == expect.shape and ours.dtype == expect.dtype
    if np.issubdtype(ours.dtype, np.integer):
        np.testing.assert_array_equal(compiled, ours)
    else:  # float results (e.g. QGemm without y_scale): the runtime's GEMM sums in another order
        np.testing.assert_allclose(compiled, ours, rtol=1e-5, atol=1e-5 * float(np.abs(ours).max()))
    diff = np.abs(ours.astype(np.float64) - expect.astype(np.float64))
    if t_out is not None:
        assert diff.max() <= max_steps, f"{diff.max()} steps"
    return ours, expect, text


@pytest.mark.parametrize("t", [TP.INT8, TP.UINT8])
@pytest.mark.parametrize("op", ["QLinearAdd", "QLinearMul"])
def test_binary_with_broadcast(op, t):
    rng = np.random.default_rng(3)
    inits = [_scalar("as", 0.05), _scalar("az", 3, t), _scalar("bs", 0.11), _scalar("bz", -2 if t == TP.INT8 else 130, t),
             _scalar("cs", 0.09 if op == "QLinearAdd" else 0.7), _scalar("cz", 1 if t == TP.INT8 else 120, t)]
    node = oh.make_node(op, ["a", "as", "az", "b", "bs", "bz", "cs", "cz"], ["c"], domain=MS)
    m = _model([node], [oh.make_tensor_value_info("a", t, [2, 3, 4]), oh.make_tensor_value_info("b", t, [3, 1])],
               [oh.make_tensor_value_info("c", t, [2, 3, 4])], inits)
    _, _, text = _compare(m, {"a": _q(rng, (2, 3, 4), t), "b": _q(rng, (3, 1), t)}, t)
    if op == "QLinearAdd":  # integer ADD (common-scale RESCALEs), no float arithmetic
        assert "tosa.rescale" in text and "xf32" not in text.split("tosa.add")[1].split("\n")[0]


@pytest.mark.parametrize("channels_last", [0, 1])
def test_global_average_pool(channels_last):
    rng = np.random.default_rng(4)
    t = TP.UINT8
    shape = [1, 5, 6, 3] if channels_last else [1, 3, 5, 6]
    out = [1, 1, 1, 3] if channels_last else [1, 3, 1, 1]
    node = oh.make_node("QLinearGlobalAveragePool", ["x", "xs", "xz", "ys", "yz"], ["y"], domain=MS,
                        channels_last=channels_last)
    m = _model([node], [oh.make_tensor_value_info("x", t, shape)], [oh.make_tensor_value_info("y", t, out)],
               [_scalar("xs", 0.1), _scalar("xz", 128, t), _scalar("ys", 0.05), _scalar("yz", 100, t)])
    _compare(m, {"x": _q(rng, shape, t)}, t)


def test_average_pool_with_padding_excluded():
    rng = np.random.default_rng(5)
    t = TP.INT8
    node = oh.make_node("QLinearAveragePool", ["x", "xs", "xz", "ys", "yz"], ["y"], domain=MS,
                        kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    m = _model([node], [oh.make_tensor_value_info("x", t, [1, 2, 7, 7])], [oh.make_tensor_value_info("y", t, [1, 2, 4, 4])],
               [_scalar("xs", 0.02), _scalar("xz", -5, t), _scalar("ys", 0.03), _scalar("yz", 4, t)])
    _compare(m, {"x": _q(rng, [1, 2, 7, 7], t)}, t)


def test_concat_of_differently_scaled_inputs():
    rng = np.random.default_rng(6)
    t = TP.INT8
    node = oh.make_node("QLinearConcat", ["ys", "yz", "a", "as", "az", "b", "bs", "bz"], ["y"], domain=MS, axis=1)
    m = _model([node], [oh.make_tensor_value_info("a", t, [2, 3]), oh.make_tensor_value_info("b", t, [2, 2])],
               [oh.make_tensor_value_info("y", t, [2, 5])],
               [_scalar("ys", 0.07), _scalar("yz", 2, t), _scalar("as", 0.05), _scalar("az", 0, t), _scalar("bs", 0.2),
                _scalar("bz", -7, t)])
    _compare(m, {"a": _q(rng, [2, 3], t), "b": _q(rng, [2, 2], t)}, t)


@pytest.mark.parametrize("op,attrs", [("QLinearSigmoid", {}), ("QLinearLeakyRelu", {"alpha": 0.2}),
                                      ("QLinearSoftmax", {"axis": -1, "opset": 13})])
def test_activations(op, attrs):
    rng = np.random.default_rng(7)
    t = TP.UINT8
    node = oh.make_node(op, ["x", "xs", "xz", "ys", "yz"], ["y"], domain=MS, **attrs)
    ys = 1 / 256 if op != "QLinearLeakyRelu" else 0.05
    yz = 0 if op != "QLinearLeakyRelu" else 60
    m = _model([node], [oh.make_tensor_value_info("x", t, [3, 8])], [oh.make_tensor_value_info("y", t, [3, 8])],
               [_scalar("xs", 0.06), _scalar("xz", 128, t), _scalar("ys", ys), _scalar("yz", yz, t)])
    _compare(m, {"x": _q(rng, [3, 8], t)}, t)


@pytest.mark.parametrize("a_type", [TP.INT8, TP.UINT8])
@pytest.mark.parametrize("per_column", [False, True])
@pytest.mark.parametrize("quantized_output", [False, True])
def test_qgemm(per_column, quantized_output, a_type):
    """As quantize_static writes it: B [N, K] int8 with transB, int32 bias in units of a_scale·b_scale;
    the output zero point has A's type (onnxruntime's kernel constraint). B has 7-bit values, as
    quantize_static's ``reduce_range`` gives: onnxruntime's x86 u8s8 kernel sums pairs of products in
    saturating int16 (see test_onnx_quant.py), so with full-range int8 B it departs from its own spec."""
    rng = np.random.default_rng(8)
    k, n = 16, 5
    b = rng.integers(-64, 64, size=(n, k)).astype(np.int8)
    b_scale = (rng.uniform(0.005, 0.02, n) if per_column else np.array(0.01)).astype(np.float32)
    bias = rng.integers(-3000, 3000, n).astype(np.int32)
    inputs = ["a", "as", "az", "b", "bs", "bz", "c"] + (["ys", "yz"] if quantized_output else [])
    inits = [_scalar("as", 0.04), _scalar("az", 128 if a_type == TP.UINT8 else -3, a_type), nh.from_array(b, "b"),
             nh.from_array(b_scale, "bs"), nh.from_array(np.zeros(b_scale.shape, np.int8), "bz"), nh.from_array(bias, "c")]
    if quantized_output:
        inits += [_scalar("ys", 0.3), _scalar("yz", 5, a_type)]
    node = oh.make_node("QGemm", inputs, ["y"], domain=MS, transB=1)
    out_t = a_type if quantized_output else TP.FLOAT
    m = _model([node], [oh.make_tensor_value_info("a", a_type, [4, k])], [oh.make_tensor_value_info("y", out_t, [4, n])],
               inits)
    ours, expect, text = _compare(m, {"a": _q(rng, (4, k), a_type)}, a_type if quantized_output else None)
    if not quantized_output:  # float output: dequantize → float GEMM; differences are float rounding only
        np.testing.assert_allclose(ours, expect, rtol=1e-5, atol=1e-6 * float(np.abs(expect).max()))
        return
    # integer arithmetic: the matmul takes int8 operands
    lines = [ln for ln in text.splitlines() if "tosa.fully_connected" in ln or "tosa.matmul" in ln]
    assert lines and all("xi8" in ln for ln in lines), lines


def test_unknown_attribute_is_reported_with_the_node():
    node = oh.make_node("QLinearSigmoid", ["x", "xs", "xz", "ys", "yz"], ["y"], domain=MS, name="sig7", beta=2.0)
    m = _model([node], [oh.make_tensor_value_info("x", TP.INT8, [4])], [oh.make_tensor_value_info("y", TP.INT8, [4])],
               [_scalar("xs", 0.1), _scalar("xz", 0, TP.INT8), _scalar("ys", 0.1), _scalar("yz", 0, TP.INT8)])
    with pytest.raises(NnkilnError, match=r"sig7.*com\.microsoft\.QLinearSigmoid.*beta"):
        import_model_proto(m, [np.zeros(4, np.int8)])


def test_other_contrib_ops_are_listed_as_unsupported():
    node = oh.make_node("FastGelu", ["x"], ["y"], domain=MS, name="g1")
    m = _model([node], [oh.make_tensor_value_info("x", TP.FLOAT, [4])], [oh.make_tensor_value_info("y", TP.FLOAT, [4])], [])
    with pytest.raises(NnkilnError, match=r"com\.microsoft\.FastGelu x1 \(nodes: g1\)"):
        import_model_proto(m, [np.zeros(4, np.float32)])


def test_callers_model_is_not_modified():
    node = oh.make_node("QLinearAdd", ["a", "s", "z", "a", "s", "z", "s", "z"], ["c"], domain=MS)
    m = _model([node], [oh.make_tensor_value_info("a", TP.INT8, [3])], [oh.make_tensor_value_info("c", TP.INT8, [3])],
               [_scalar("s", 0.5), _scalar("z", 0, TP.INT8)])
    before = m.SerializeToString()
    import_model_proto(m, [np.zeros(3, np.int8)])
    assert m.SerializeToString() == before
