"""ONNX Resize through constant interpolation matrices (``lowerings/resize_matrix.py``): cubic, antialias,
exclude_outside, tf_crop_and_resize and resizes of leading axes.

Oracles: the ONNX reference implementation (``onnx.reference.ReferenceEvaluator``, the operator's definition
in code) on every case, and onnxruntime where it implements the same attributes; the compiled blob must give
the reference interpreter's result.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

import nnkiln
from nnkiln.frontends.onnx.lowerings.resize_matrix import axis_matrix
from nnkiln.ir.text import print_module
from nnkiln.onnx_backend import import_model_proto, run_model

RNG = np.random.default_rng(23)


def _model(shape: tuple[int, ...], scales: list[float] | None = None, sizes: list[int] | None = None,
           roi: list[float] | None = None, opset: int = 19, **attrs: Any):  # noqa: ANN202
    inits = [numpy_helper.from_array(np.array(roi or [], np.float32), "roi"),
             numpy_helper.from_array(np.array(scales or [], np.float32), "scales")]
    names = ["x", "roi", "scales"]
    if sizes is not None:
        inits.append(numpy_helper.from_array(np.array(sizes, np.int64), "sizes"))
        names.append("sizes")
    node = helper.make_node("Resize", names, ["y"], **attrs)
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], initializer=inits)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 9
    return m


CASES = [
    # shape, scales, sizes, roi, attrs
    ((1, 2, 5, 7), [1, 1, 2.0, 1.5], None, None, {"mode": "cubic"}),
    ((1, 2, 9, 8), [1, 1, 0.5, 0.6], None, None, {"mode": "cubic", "cubic_coeff_a": -0.5, "exclude_outside": 1}),
    ((2, 3, 6, 6), None, [2, 3, 4, 9], None, {"mode": "cubic", "coordinate_transformation_mode": "align_corners"}),
    ((1, 1, 12, 10), [1, 1, 0.4, 0.7], None, None, {"mode": "cubic", "antialias": 1}),
    ((1, 1, 12, 10), [1, 1, 0.35, 0.8], None, None, {"mode": "linear", "antialias": 1}),
    ((1, 1, 4, 5), [1, 1, 2.0, 3.0], None, None, {"mode": "linear", "antialias": 1}),   # upsampling: no effect
    ((1, 1, 6, 5), [1, 1, 1.7, 0.8], None, None, {"mode": "linear", "exclude_outside": 1}),
    ((1, 2, 8, 8), None, [1, 2, 5, 6], [0, 0, 0.2, 0.1, 1, 1, 0.9, 1.2],
     {"mode": "linear", "coordinate_transformation_mode": "tf_crop_and_resize", "extrapolation_value": 7.5}),
    ((1, 1, 6, 6), None, [1, 1, 4, 4], [0, 0, -0.2, 0.3, 1, 1, 0.8, 1.1],
     {"mode": "nearest", "coordinate_transformation_mode": "tf_crop_and_resize", "extrapolation_value": -3.0}),
    ((1, 1, 7, 6), None, [1, 1, 3, 4], [0, 0, 0.1, 0.2, 1, 1, 0.9, 0.7],
     {"mode": "cubic", "coordinate_transformation_mode": "tf_crop_and_resize"}),
    ((3, 4, 5), [1.5, 0.5, 2.0], None, None, {"mode": "linear"}),                    # leading axes too
    ((4, 6, 2, 3), [0.5, 1.5, 1, 1], None, None, {"mode": "cubic", "coordinate_transformation_mode": "asymmetric"}),
]


@pytest.mark.parametrize("case", CASES, ids=[f"case{i}" for i in range(len(CASES))])
def test_matches_the_onnx_reference_and_compiles(case: tuple) -> None:
    shape, scales, sizes, roi, attrs = case
    model = _model(shape, scales, sizes, roi, **attrs)
    x = RNG.standard_normal(shape).astype(np.float32)
    want = ReferenceEvaluator(model).run(None, {"x": x})[0]
    got = run_model(model, [x])[0]
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    module = import_model_proto(model, [x])
    assert "tosa.matmul" in print_module(module) and "tosa.resize" not in print_module(module)
    np.testing.assert_allclose(next(iter(nnkiln.compile(module).run({"x": x}).values())), got, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("case", [CASES[0], CASES[1], CASES[2], CASES[7], CASES[10]])
def test_matches_onnxruntime(case: tuple) -> None:
    """(onnxruntime 1.31 refuses exclude_outside with linear mode unless antialias is set, although the
    operator allows it: that case is checked against the ONNX reference only.)"""
    ort = pytest.importorskip("onnxruntime")
    shape, scales, sizes, roi, attrs = case
    model = _model(shape, scales, sizes, roi, opset=18, **attrs)
    x = RNG.standard_normal(shape).astype(np.float32)
    want = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    np.testing.assert_allclose(run_model(model, [x])[0], want, rtol=1e-4, atol=1e-5)


def test_axis_matrices_by_hand() -> None:
    """Linear half_pixel x2 of 2 samples: outputs at x = -0.25, 0.25, 0.75, 1.25 -> edge, 3:1, 1:3, edge.
    Cubic (A = -0.75) at an integer position is the sample itself. An output outside the crop is marked."""
    w, out = axis_matrix("linear", "half_pixel", "round_prefer_floor", 2, 4, 2.0)
    np.testing.assert_allclose(w, [[1, 0.75, 0.25, 0], [0, 0.25, 0.75, 1]])
    assert not out.any()
    w, _ = axis_matrix("cubic", "asymmetric", "round_prefer_floor", 5, 5, 1.0)
    np.testing.assert_allclose(w, np.eye(5), atol=1e-12)
    w, out = axis_matrix("linear", "tf_crop_and_resize", "round_prefer_floor", 3, 3, 1.0, roi=(-0.5, 0.5))
    np.testing.assert_array_equal(out, [True, False, False])
    np.testing.assert_allclose(w[:, 0], 0)
    np.testing.assert_allclose(w.sum(axis=0)[1:], 1)
