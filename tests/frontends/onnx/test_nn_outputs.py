"""The optional outputs of nn ops: BatchNormalization in training mode (normalised with the batch statistics,
running mean / variance) and MaxPool's Indices (flat positions in the input, storage order 0 or 1, the first
maximum on ties). Imported with nnkiln, run with the reference interpreter and compiled, compared with
onnxruntime (dtype, shape, values)."""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from nnkiln.ir.errors import FrontendError
from nnkiln.onnx_backend import run_model

ort = pytest.importorskip("onnxruntime")

RNG = np.random.default_rng(77)


def node_model(op: str, inputs: dict[str, np.ndarray], outputs: dict[str, int], opset: int, **attrs: Any
               ) -> onnx.ModelProto:
    ins = [helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(a.dtype), a.shape)
           for n, a in inputs.items()]
    outs = [helper.make_tensor_value_info(n, t, None) for n, t in outputs.items()]
    node = helper.make_node(op, list(inputs), list(outputs), **attrs)
    m = helper.make_model(helper.make_graph([node], "g", ins, outs), opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 10
    return m


def against_ort(m: onnx.ModelProto, inputs: dict[str, np.ndarray], rtol: float = 0.0, atol: float = 0.0
                ) -> list[np.ndarray]:
    """Reference interpreter and compiled executable against onnxruntime: dtype, shape, values (exact for
    integers; within rtol/atol for floats)."""
    want = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, inputs)
    for compiled in (False, True):
        got = run_model(m, list(inputs.values()), compiled=compiled)
        assert len(got) == len(want)
        for g, w in zip(got, want):
            assert g.dtype == w.dtype and g.shape == w.shape
            if w.dtype.kind == "f":
                np.testing.assert_allclose(g, w, rtol=rtol, atol=atol)
            else:
                np.testing.assert_array_equal(g, w)
    return want


# ------------------------------------------------------------------------------------------------
# BatchNormalization, training_mode = 1


def bn_inputs(shape: tuple[int, ...]) -> dict[str, np.ndarray]:
    c = shape[1]
    return {"x": (RNG.standard_normal(shape) * 3 + 1).astype(np.float32),
            "scale": RNG.uniform(0.5, 2, c).astype(np.float32), "bias": RNG.standard_normal(c).astype(np.float32),
            "mean": RNG.standard_normal(c).astype(np.float32), "var": RNG.uniform(0.5, 2, c).astype(np.float32)}


@pytest.mark.parametrize("shape", [(2, 3), (2, 3, 5), (4, 2, 3, 3), (2, 3, 2, 2, 3)])
@pytest.mark.parametrize("momentum", [0.9, 0.25])
def test_batchnorm_training_mode_matches_onnxruntime(shape: tuple[int, ...], momentum: float) -> None:
    inputs = bn_inputs(shape)
    m = node_model("BatchNormalization", inputs, {"y": TensorProto.FLOAT, "running_mean": TensorProto.FLOAT,
                                                  "running_var": TensorProto.FLOAT},
                   opset=15, training_mode=1, momentum=momentum, epsilon=1e-3)
    against_ort(m, inputs, rtol=1e-5, atol=1e-5)


def test_batchnorm_training_mode_running_var_is_the_population_variance() -> None:
    """ONNX (opset 15): running_var = input_var · momentum + var(x) · (1 − momentum), var biased (÷ N)."""
    inputs = bn_inputs((3, 2, 4))
    m = node_model("BatchNormalization", inputs, {"y": TensorProto.FLOAT, "rm": TensorProto.FLOAT,
                                                  "rv": TensorProto.FLOAT}, opset=15, training_mode=1)
    _, rm, rv = run_model(m, list(inputs.values()))
    x = inputs["x"].astype(np.float64)
    np.testing.assert_allclose(rm, inputs["mean"] * 0.9 + x.mean(axis=(0, 2)) * 0.1, rtol=1e-5)
    np.testing.assert_allclose(rv, inputs["var"] * 0.9 + x.var(axis=(0, 2)) * 0.1, rtol=1e-5)


def test_batchnorm_training_mode_with_y_only() -> None:
    inputs = bn_inputs((2, 3, 4))
    m = node_model("BatchNormalization", inputs, {"y": TensorProto.FLOAT}, opset=15, training_mode=1)
    y = run_model(m, list(inputs.values()))[0]
    x = inputs["x"]
    mean, var = x.mean(axis=(0, 2), keepdims=True), x.var(axis=(0, 2), keepdims=True)
    want = (x - mean) / np.sqrt(var + 1e-5) * inputs["scale"][:, None] + inputs["bias"][:, None]
    np.testing.assert_allclose(y, want, rtol=1e-5, atol=1e-5)


# ------------------------------------------------------------------------------------------------
# MaxPool Indices


def pool_model(x: np.ndarray, **attrs: Any) -> onnx.ModelProto:
    return node_model("MaxPool", {"x": x}, {"y": helper.np_dtype_to_tensor_dtype(x.dtype), "i": TensorProto.INT64},
                      opset=12, **attrs)


@pytest.mark.parametrize("storage_order", [0, 1])
@pytest.mark.parametrize("attrs", [
    {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1]},
    {"kernel_shape": [2, 3], "strides": [2, 1]},
    {"kernel_shape": [3, 2], "strides": [2, 2], "pads": [1, 0, 1, 1], "ceil_mode": 1},
    {"kernel_shape": [2, 2], "dilations": [2, 2], "pads": [1, 1, 0, 0]},
    {"kernel_shape": [3, 3], "strides": [2, 2], "auto_pad": "SAME_UPPER"},
])
def test_maxpool_indices_2d_match_onnxruntime(storage_order: int, attrs: dict[str, Any]) -> None:
    x = RNG.standard_normal((2, 3, 7, 6)).astype(np.float32)
    against_ort(pool_model(x, storage_order=storage_order, **attrs), {"x": x})


@pytest.mark.parametrize("storage_order", [0, 1])
def test_maxpool_indices_take_the_first_maximum_on_ties(storage_order: int) -> None:
    x = RNG.integers(0, 3, size=(2, 2, 6, 6)).astype(np.float32)  # many equal values in a window
    x[0, 0, :2, :2] = -np.inf  # a window of only -inf next to the padding
    m = pool_model(x, kernel_shape=[3, 3], pads=[1, 1, 1, 1], strides=[1, 2], storage_order=storage_order)
    against_ort(m, {"x": x})


@pytest.mark.parametrize(("shape", "attrs"), [
    ((2, 3, 9), {"kernel_shape": [3], "strides": [2], "pads": [1, 1]}),
    ((1, 2, 4, 5, 4), {"kernel_shape": [2, 3, 2], "strides": [2, 1, 2], "pads": [0, 1, 1, 0, 1, 0]}),
])
def test_maxpool_indices_1d_and_3d_match_onnxruntime(shape: tuple[int, ...], attrs: dict[str, Any]) -> None:
    x = RNG.standard_normal(shape).astype(np.float32)
    against_ort(pool_model(x, **attrs), {"x": x})


def test_maxpool_indices_of_float16() -> None:
    x = RNG.standard_normal((1, 2, 5, 5)).astype(np.float16)
    against_ort(pool_model(x, kernel_shape=[2, 2], strides=[1, 1]), {"x": x})


def test_maxpool_indices_with_an_unknown_storage_order_are_refused() -> None:
    x = RNG.standard_normal((1, 1, 4, 4)).astype(np.float32)
    with pytest.raises(FrontendError, match="storage_order 2 is not supported"):
        run_model(pool_model(x, kernel_shape=[2, 2], storage_order=2), [x])
