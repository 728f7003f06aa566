"""GridSample (lowerings/grid_sample.py) on random grids reaching far outside [-1, 1] (several reflections),
against ONNX's reference implementation (``onnx.reference``, the operator's definition) for every mode,
padding mode and align_corners, 2-D and 3-D, and against onnxruntime where it implements the case."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from onnx import TensorProto as TP
from onnx import helper as oh
from onnx.reference import ReferenceEvaluator

from nnkiln.ir.text import print_module
from nnkiln.onnx_backend import import_model_proto
from nnkiln.reference import run


def _model(xs, gs, out, **attrs):
    node = oh.make_node("GridSample", ["x", "grid"], ["y"], **attrs)
    g = oh.make_graph([node], "m", [oh.make_tensor_value_info("x", TP.FLOAT, xs), oh.make_tensor_value_info("grid", TP.FLOAT, gs)],
                      [oh.make_tensor_value_info("y", TP.FLOAT, out)])
    m = oh.make_model(g, opset_imports=[oh.make_opsetid("", 20)])
    m.ir_version = 9
    return m


CASES = list(itertools.product(["nearest", "linear", "cubic"], ["zeros", "border", "reflection"], [0, 1]))


@pytest.mark.parametrize("mode,padding,align", CASES)
def test_2d_against_the_onnx_reference(mode, padding, align):
    rng = np.random.default_rng(hash((mode, padding, align)) % 2**32)
    xs, gs = [2, 3, 4, 5], [2, 6, 7, 2]
    x = rng.standard_normal(xs).astype(np.float32)
    grid = (rng.uniform(-3.5, 3.5, gs)).astype(np.float32)
    grid[0, 0, :3] = [[-1, -1], [1, 1], [0, 0]]  # corners and centre exactly
    m = _model(xs, gs, [2, 3, 6, 7], mode=mode, padding_mode=padding, align_corners=align)
    module = import_model_proto(m, [x, grid])
    assert "tosa.gather" in print_module(module)
    got = run(module, {"x": x, "grid": grid})["y"]
    want = ReferenceEvaluator(m).run(None, {"x": x, "grid": grid})[0]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("mode", ["nearest", "linear"])
@pytest.mark.parametrize("padding", ["zeros", "border", "reflection"])
def test_3d_volumetric_against_the_onnx_reference(mode, padding):
    rng = np.random.default_rng(3)
    xs, gs = [1, 2, 3, 4, 5], [1, 2, 3, 4, 3]
    x = rng.standard_normal(xs).astype(np.float32)
    grid = rng.uniform(-2.5, 2.5, gs).astype(np.float32)
    m = _model(xs, gs, [1, 2, 2, 3, 4], mode=mode, padding_mode=padding, align_corners=0)
    got = run(import_model_proto(m, [x, grid]), {"x": x, "grid": grid})["y"]
    want = ReferenceEvaluator(m).run(None, {"x": x, "grid": grid})[0]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("mode", ["nearest", "linear", "cubic"])
def test_2d_inside_the_grid_against_onnxruntime(mode):
    """Coordinates within [-1, 1] (where onnxruntime's out-of-range handling plays no part)."""
    ort = pytest.importorskip("onnxruntime")
    rng = np.random.default_rng(5)
    xs, gs = [1, 4, 6, 6], [1, 5, 5, 2]
    x = rng.standard_normal(xs).astype(np.float32)
    grid = rng.uniform(-1, 1, gs).astype(np.float32)
    m = _model(xs, gs, [1, 4, 5, 5], mode=mode, padding_mode="zeros", align_corners=0)
    got = run(import_model_proto(m, [x, grid]), {"x": x, "grid": grid})["y"]
    want = ort.InferenceSession(m.SerializeToString()).run(None, {"x": x, "grid": grid})[0]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_non_float_input_is_a_clear_error():
    node = oh.make_node("GridSample", ["x", "grid"], ["y"], name="gs1")
    g = oh.make_graph([node], "m", [oh.make_tensor_value_info("x", TP.INT32, [1, 1, 2, 2]),
                                    oh.make_tensor_value_info("grid", TP.FLOAT, [1, 1, 1, 2])],
                      [oh.make_tensor_value_info("y", TP.INT32, [1, 1, 1, 1])])
    m = oh.make_model(g, opset_imports=[oh.make_opsetid("", 16)])
    with pytest.raises(Exception, match="gs1.*only float32"):
        import_model_proto(m, [np.zeros((1, 1, 2, 2), np.int32), np.zeros((1, 1, 1, 2), np.float32)])


def test_compiled_equals_reference():
    import nnkiln

    rng = np.random.default_rng(9)
    xs, gs = [1, 3, 5, 5], [1, 4, 4, 2]
    x = rng.standard_normal(xs).astype(np.float32)
    grid = rng.uniform(-2, 2, gs).astype(np.float32)
    module = import_model_proto(_model(xs, gs, [1, 3, 4, 4], mode="cubic", padding_mode="reflection"), [x, grid])
    want = run(module, {"x": x, "grid": grid})["y"]
    np.testing.assert_allclose(nnkiln.compile(module).run({"x": x, "grid": grid})["y"], want, rtol=1e-5, atol=1e-6)
