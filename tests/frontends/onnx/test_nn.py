"""ONNX nn-family lowerings (conv, pools, gemm/matmul, normalisations, softmax): imported with nnkiln,
run with the reference interpreter, compared with onnxruntime or with values computed by hand from the
ONNX operator definitions."""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from nnkiln.ir.errors import FrontendError
from nnkiln.ir.text import print_module
from nnkiln.onnx_backend import import_model_proto, run_model

ort = pytest.importorskip("onnxruntime")

F = TensorProto.FLOAT
RNG = np.random.default_rng(1234)


def rand(*shape: int) -> np.ndarray:
    return RNG.standard_normal(shape).astype(np.float32)


def model_of(nodes: list[Any], inputs: dict[str, np.ndarray], outputs: list[str],
             inits: dict[str, np.ndarray] | None = None, opset: int = 18) -> onnx.ModelProto:
    g_inputs = [helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(a.dtype), a.shape)
                for n, a in inputs.items()]
    g_outputs = [helper.make_tensor_value_info(n, F, None) for n in outputs]
    init = [numpy_helper.from_array(np.asarray(a), n) for n, a in (inits or {}).items()]
    graph = helper.make_graph(nodes, "g", g_inputs, g_outputs, initializer=init)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 10
    return model


def one_node(op: str, inputs: dict[str, np.ndarray], inits: dict[str, np.ndarray] | None = None,
             n_out: int = 1, opset: int = 18, order: list[str] | None = None, **attrs: Any) -> onnx.ModelProto:
    names = order or [*inputs, *(inits or {})]
    outs = [f"y{i}" for i in range(n_out)]
    return model_of([helper.make_node(op, names, outs, **attrs)], inputs, outs, inits, opset)


def ours(model: onnx.ModelProto, inputs: dict[str, np.ndarray]) -> list[np.ndarray]:
    return run_model(model, list(inputs.values()))


def theirs(model: onnx.ModelProto, inputs: dict[str, np.ndarray]) -> list[np.ndarray]:
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return sess.run(None, inputs)


def against_ort(model: onnx.ModelProto, inputs: dict[str, np.ndarray], rtol: float = 1e-4,
                atol: float = 1e-5) -> list[np.ndarray]:
    got, want = ours(model, inputs), theirs(model, inputs)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.shape == w.shape
        np.testing.assert_allclose(g, w, rtol=rtol, atol=atol)
    return got


def ir_text(model: onnx.ModelProto, inputs: dict[str, np.ndarray]) -> str:
    return print_module(import_model_proto(model, list(inputs.values())))


# ------------------------------------------------------------------------------------------------
# model level


def test_small_cnn_matches_onnxruntime() -> None:
    """conv + batchnorm + relu + maxpool + flatten + gemm (a LeNet-like block)."""
    x = {"x": rand(2, 3, 8, 8)}
    inits = {
        "w": rand(4, 3, 3, 3) * 0.5, "b": rand(4),
        "scale": rand(4), "bias": rand(4), "mean": rand(4), "var": np.abs(rand(4)) + 0.5,
        "fw": rand(10, 64) * 0.2, "fb": rand(10),
    }
    nodes = [
        helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1]),
        helper.make_node("BatchNormalization", ["c", "scale", "bias", "mean", "var"], ["bn"], epsilon=1e-3),
        helper.make_node("Relu", ["bn"], ["r"]),
        helper.make_node("MaxPool", ["r"], ["p"], kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Flatten", ["p"], ["f"]),
        helper.make_node("Gemm", ["f", "fw", "fb"], ["y"], transB=1),
    ]
    model = model_of(nodes, x, ["y"], inits, opset=13)
    (y,) = against_ort(model, x)
    assert y.shape == (2, 10)


def test_depthwise_conv_model_matches_onnxruntime() -> None:
    """group == C with channel multiplier 2, stride 2, SAME_UPPER, then a pointwise conv."""
    x = {"x": rand(1, 4, 9, 9)}
    inits = {"dw": rand(8, 1, 3, 3), "db": rand(8), "pw": rand(5, 8, 1, 1)}
    nodes = [
        helper.make_node("Conv", ["x", "dw", "db"], ["d"], group=4, strides=[2, 2], auto_pad="SAME_UPPER"),
        helper.make_node("Conv", ["d", "pw"], ["y"]),
    ]
    model = model_of(nodes, x, ["y"], inits, opset=11)
    (y,) = against_ort(model, x)
    assert y.shape == (1, 5, 5, 5)
    text = ir_text(model, x)
    assert "tosa.depthwise_conv2d" in text and text.count("tosa.conv2d") == 1


# ------------------------------------------------------------------------------------------------
# Conv, ConvTranspose


@pytest.mark.parametrize("attrs", [
    dict(group=2, pads=[0, 1, 2, 0], strides=[2, 1]),
    dict(dilations=[2, 1], pads=[2, 0, 0, 1], strides=[1, 3]),
    dict(auto_pad="SAME_LOWER", strides=[2, 2]),
    dict(auto_pad="VALID", strides=[3, 2]),
])
def test_conv2d_variants(attrs: dict[str, Any]) -> None:
    group = attrs.get("group", 1)
    x = {"x": rand(2, 4, 7, 8)}
    model = one_node("Conv", x, {"w": rand(6, 4 // group, 3, 2), "b": rand(6)}, **attrs)
    against_ort(model, x)


def test_grouped_conv_splits_and_concats() -> None:
    x = {"x": rand(1, 6, 5, 5)}
    model = one_node("Conv", x, {"w": rand(4, 2, 3, 3)}, group=3, kernel_shape=[3, 3])
    # 6 channels / 3 groups, 4 outputs is not divisible by groups → the model is invalid
    with pytest.raises(FrontendError):
        ours(model, x)
    model = one_node("Conv", x, {"w": rand(6, 2, 3, 3)}, group=3)
    against_ort(model, x)
    text = ir_text(model, x)
    assert text.count("tosa.conv2d") == 3 and "tosa.concat" in text


def test_conv_dynamic_weight() -> None:
    x = {"x": rand(1, 3, 6, 6), "w": rand(2, 3, 3, 3)}
    against_ort(one_node("Conv", x, pads=[1, 1, 1, 1]), x)


def test_conv1d_and_conv3d() -> None:
    x1 = {"x": rand(2, 3, 11)}
    against_ort(one_node("Conv", x1, {"w": rand(4, 3, 3)}, strides=[2], pads=[1, 2]), x1)
    x3 = {"x": rand(1, 2, 5, 6, 4)}
    against_ort(one_node("Conv", x3, {"w": rand(3, 2, 3, 2, 2), "b": rand(3)}, pads=[1, 0, 1, 1, 0, 1]), x3)


def test_grouped_and_depthwise_strided_conv3d_and_3d_pools() -> None:
    """CONV3D has no grouped form: per-group CONV3Ds; strides trim the input along several axes of a rank-5
    tensor (SLICE takes rank <= 4, so the slices go one axis at a time)."""
    x = {"x": rand(1, 4, 7, 6, 5)}
    for group in (2, 4):
        model = one_node("Conv", x, {"w": rand(8, 4 // group, 3, 2, 2), "b": rand(8)}, group=group,
                         strides=[2, 2, 3], pads=[1, 0, 1, 0, 1, 0])
        against_ort(model, x)
        assert ir_text(model, x).count("tosa.conv3d") == group
    against_ort(one_node("MaxPool", x, kernel_shape=[2, 3, 2], strides=[2, 2, 2]), x)
    against_ort(one_node("AveragePool", x, kernel_shape=[3, 2, 2], strides=[2, 3, 2], pads=[1, 0, 1, 1, 0, 0]), x)


def test_conv_hand_computed_trimmed_rows() -> None:
    """Stride 2 over 4 values with a kernel of 1: ONNX floor division reads rows 0 and 2 only."""
    x = {"x": np.arange(4, dtype=np.float32).reshape(1, 1, 1, 4)}
    model = one_node("Conv", x, {"w": np.full((1, 1, 1, 1), 2.0, np.float32)}, strides=[1, 3])
    (y,) = ours(model, x)
    np.testing.assert_array_equal(y, [[[[0.0, 6.0]]]])  # 2·x[0], 2·x[3]


@pytest.mark.parametrize("attrs", [
    dict(strides=[2, 2], pads=[1, 0, 1, 0], output_padding=[1, 1]),  # output_padding beyond pad_end
    dict(strides=[3, 2], output_shape=[10, 8]),
    dict(strides=[2, 2], auto_pad="SAME_UPPER"),
    dict(dilations=[2, 1], pads=[1, 1, 0, 0]),
    dict(group=2, strides=[1, 2]),
])
def test_convtranspose_variants(attrs: dict[str, Any]) -> None:
    group = attrs.get("group", 1)
    x = {"x": rand(1, 4, 3, 4)}
    model = one_node("ConvTranspose", x, {"w": rand(4, 6 // group, 3, 3), "b": rand(6)}, **attrs)
    against_ort(model, x)


def test_convtranspose_hand_computed() -> None:
    """1-D: x = [1, 2], w = [1, 10], stride 2 → [1, 10, 2, 20]; output_padding 1 adds a bias-only row."""
    x = {"x": np.array([[[1.0, 2.0]]], np.float32)}
    model = one_node("ConvTranspose", x, {"w": np.array([[[1.0, 10.0]]], np.float32),
                                          "b": np.array([0.5], np.float32)}, strides=[2], output_padding=[1])
    (y,) = ours(model, x)
    np.testing.assert_array_equal(y, [[[1.5, 10.5, 2.5, 20.5, 0.5]]])


# ------------------------------------------------------------------------------------------------
# pools


def test_maxpool_hand_computed_ceil_mode() -> None:
    x = {"x": np.arange(25, dtype=np.float32).reshape(1, 1, 5, 5)}
    model = one_node("MaxPool", x, kernel_shape=[2, 2], strides=[2, 2], ceil_mode=1)
    (y,) = ours(model, x)
    # windows start at rows/cols 0, 2, 4; the last one is partial (1 element wide)
    np.testing.assert_array_equal(y, [[[[6, 8, 9], [16, 18, 19], [21, 23, 24]]]])


def test_averagepool_divisors_hand_computed() -> None:
    x = {"x": np.ones((1, 1, 3, 3), np.float32)}
    # count_include_pad = 0: padding is not counted → all ones
    (y0,) = ours(one_node("AveragePool", x, kernel_shape=[2, 2], pads=[1, 1, 1, 1], strides=[2, 2]), x)
    np.testing.assert_array_equal(y0, np.ones((1, 1, 2, 2)))
    # count_include_pad = 1: corner windows hold 1 input of 4 → 0.25; edges 2 of 4 → 0.5
    (y1,) = ours(one_node("AveragePool", x, kernel_shape=[2, 2], pads=[1, 1, 1, 1], strides=[2, 2],
                          count_include_pad=1), x)
    np.testing.assert_array_equal(y1, [[[[0.25, 0.5], [0.5, 1.0]]]])


@pytest.mark.parametrize("op,attrs", [
    ("AveragePool", dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1], ceil_mode=1, count_include_pad=1)),
    ("AveragePool", dict(kernel_shape=[3, 2], strides=[2, 1], pads=[1, 0, 0, 1], ceil_mode=1)),
    ("MaxPool", dict(kernel_shape=[3, 3], strides=[2, 2], auto_pad="SAME_UPPER")),
    ("MaxPool", dict(kernel_shape=[2, 3], strides=[1, 2], dilations=[2, 2], pads=[1, 1, 1, 1])),
    ("AveragePool", dict(kernel_shape=[2, 2], strides=[2, 1], dilations=[2, 3], pads=[1, 1, 1, 1], opset=19)),
    ("LpPool", dict(kernel_shape=[2, 2], strides=[2, 2], p=2, pads=[1, 0, 1, 0])),
    ("LpPool", dict(kernel_shape=[3, 2], strides=[1, 2], p=3, pads=[1, 1, 0, 1])),
    ("LpPool", dict(kernel_shape=[2, 2], p=4, ceil_mode=1, strides=[2, 2])),
    ("LpPool", dict(kernel_shape=[2, 3], p=1, dilations=[2, 1])),
])
def test_pools_match_onnxruntime(op: str, attrs: dict[str, Any]) -> None:
    x = {"x": rand(2, 3, 8, 7)}
    attrs = dict(attrs)
    against_ort(one_node(op, x, opset=attrs.pop("opset", 18), **attrs), x)


def test_pool_3d_and_global() -> None:
    x = {"x": rand(1, 2, 5, 6, 4)}
    against_ort(one_node("LpPool", x, kernel_shape=[2, 2, 2], p=3), x)  # rank 5: the root POW on a flat view
    against_ort(one_node("MaxPool", x, kernel_shape=[2, 3, 2], strides=[2, 1, 2], pads=[1, 1, 0, 0, 1, 0]), x)
    against_ort(one_node("AveragePool", x, kernel_shape=[3, 2, 2], strides=[1, 2, 2]), x)
    against_ort(one_node("GlobalAveragePool", x), x)
    against_ort(one_node("GlobalMaxPool", x), x)


# ------------------------------------------------------------------------------------------------
# Gemm, MatMul


def test_gemm_all_attributes_hand_formula() -> None:
    a, b, c = rand(4, 3), rand(5, 4), rand(1, 5)
    x = {"a": a, "b": b, "c": c}  # dynamic B → MATMUL
    (y,) = ours(one_node("Gemm", x, transA=1, transB=1, alpha=0.5, beta=-2.0), x)
    np.testing.assert_allclose(y, 0.5 * a.T @ b.T - 2.0 * c, rtol=1e-5, atol=1e-6)
    xa = {"a": a}  # constant B and a per-element C → FULLY_CONNECTED + ADD
    c2 = rand(3, 5)
    model = one_node("Gemm", xa, {"b": b, "c": c2}, transA=1, transB=1, alpha=0.5, beta=-2.0)
    (y2,) = ours(model, xa)
    np.testing.assert_allclose(y2, 0.5 * a.T @ b.T - 2.0 * c2, rtol=1e-5, atol=1e-6)
    assert "tosa.fully_connected" in ir_text(model, xa)


@pytest.mark.parametrize("sa,sb", [
    ((2, 1, 3, 4), (3, 4, 5)),
    ((3, 4), (2, 4, 5)),
    ((2, 3, 3, 4), (4, 5)),
    ((4,), (2, 4, 5)),
    ((2, 3, 4), (4,)),
    ((4,), (4,)),
])
def test_matmul_broadcasting(sa: tuple[int, ...], sb: tuple[int, ...]) -> None:
    a, b = rand(*sa), rand(*sb)
    x = {"a": a, "b": b}
    (y,) = ours(one_node("MatMul", x), x)
    np.testing.assert_allclose(y, np.matmul(a, b), rtol=1e-5, atol=1e-6)  # numpy matmul is the definition


def test_int_matmul_not_supported() -> None:
    x = {"a": np.ones((2, 2), np.int32), "b": np.ones((2, 2), np.int32)}
    with pytest.raises(FrontendError, match="not supported"):
        ours(one_node("MatMul", x), x)


# ------------------------------------------------------------------------------------------------
# normalisations


def test_batchnorm_folds_to_mul_add() -> None:
    x = {"x": rand(2, 3, 4)}
    scale, bias = np.array([1, 2, 3], np.float32), np.array([0, 1, -1], np.float32)
    mean, var = np.array([0.5, 0, 1], np.float32), np.array([1, 4, 0.25], np.float32)
    model = one_node("BatchNormalization", x, {"s": scale, "b": bias, "m": mean, "v": var}, epsilon=0.0)
    (y,) = ours(model, x)
    want = (x["x"] - mean[:, None]) / np.sqrt(var[:, None]) * scale[:, None] + bias[:, None]
    np.testing.assert_allclose(y, want, rtol=1e-5, atol=1e-6)
    text = ir_text(model, x)
    assert "tosa.mul" in text and "tosa.add" in text and "tosa.rsqrt" not in text


def test_batchnorm_opset9_saved_statistics_not_supported() -> None:
    """Opset 9-13's training outputs (mean, var, saved mean, saved var); training_mode = 1 of opset 14+ is
    supported (test_nn_outputs)."""
    x = {"x": rand(2, 3, 4)}
    p = {k: np.ones(3, np.float32) for k in ("s", "b", "m", "v")}
    with pytest.raises(FrontendError, match="training statistics output.* not supported"):
        ours(one_node("BatchNormalization", x, p, n_out=5, opset=9), x)


def test_instance_group_layer_norm_match_onnxruntime() -> None:
    x = {"x": rand(2, 4, 3, 5)}
    against_ort(one_node("InstanceNormalization", x, {"s": rand(4), "b": rand(4)}, epsilon=1e-3), x)
    against_ort(one_node("GroupNormalization", x, {"s": rand(4), "b": rand(4)}, opset=21, num_groups=2), x)
    model = one_node("LayerNormalization", x, {"s": rand(3, 5), "b": rand(5)}, n_out=3, opset=17, axis=2)
    mean, inv = ours(model, x)[1:]
    assert mean.shape == (2, 4, 1, 1) and inv.shape == (2, 4, 1, 1)
    against_ort(model, x)


def test_mvn_and_lrn_match_onnxruntime() -> None:
    x = {"x": rand(2, 5, 3, 4)}
    against_ort(one_node("MeanVarianceNormalization", x, opset=13), x)
    against_ort(one_node("LRN", x, size=3, alpha=0.01, beta=0.6, bias=2.0), x)


# ------------------------------------------------------------------------------------------------
# Softmax, LogSoftmax, Hardmax, Flatten, Dropout


def _softmax_def(x: np.ndarray, axes: tuple[int, ...]) -> np.ndarray:
    e = np.exp(x - x.max(axis=axes, keepdims=True))
    return e / e.sum(axis=axes, keepdims=True)


def test_softmax_axis_semantics_by_opset() -> None:
    x = {"x": rand(2, 3, 4)}
    (old,) = ours(one_node("Softmax", x, opset=11, axis=1), x)  # coerced to [2, 12]
    np.testing.assert_allclose(old, _softmax_def(x["x"], (1, 2)), rtol=1e-5, atol=1e-7)
    (new,) = ours(one_node("Softmax", x, opset=13, axis=1), x)  # axis 1 only
    np.testing.assert_allclose(new, _softmax_def(x["x"], (1,)), rtol=1e-5, atol=1e-7)
    (log,) = ours(one_node("LogSoftmax", x, opset=13), x)
    np.testing.assert_allclose(log, np.log(_softmax_def(x["x"], (2,))), rtol=1e-5, atol=1e-6)


def test_softmax_large_values_do_not_overflow() -> None:
    x = {"x": np.array([[1000.0, 1001.0, 1002.0]], np.float32)}
    (y,) = ours(one_node("Softmax", x, opset=13), x)
    e = np.exp([-2.0, -1.0, 0.0])
    np.testing.assert_allclose(y, [e / e.sum()], rtol=1e-6)


def test_hardmax_first_maximum_wins() -> None:
    x = {"x": np.array([[3, 1, 3, 2], [0, 5, 5, 5]], np.float32)}
    (y,) = ours(one_node("Hardmax", x, opset=13), x)
    np.testing.assert_array_equal(y, [[1, 0, 0, 0], [0, 1, 0, 0]])


def test_flatten_and_dropout() -> None:
    x = {"x": rand(2, 3, 4)}
    (f,) = ours(one_node("Flatten", x, axis=-1), x)
    assert f.shape == (6, 4)
    np.testing.assert_array_equal(f, x["x"].reshape(6, 4))
    y, mask = ours(one_node("Dropout", x, n_out=2, opset=13), x)
    np.testing.assert_array_equal(y, x["x"])
    assert mask.dtype == np.bool_ and mask.all() and mask.shape == (2, 3, 4)
