"""ONNX Erf (lowerings/approx.py): the documented approximation, its measured error, and the lowering.

The expected values are ``math.erf`` in float64 (the exact function); the bound checked is the one
stated in the module docstring.
"""

from __future__ import annotations

import math

import numpy as np
import onnx
from onnx import TensorProto, helper

import nnkiln
from nnkiln.frontends.onnx.lowerings.approx import COEFFICIENTS, MAX_ABS_ERROR, erf_f32, fit_coefficients
from nnkiln.reference.interpreter import run as ref_run


def _exact(x: np.ndarray) -> np.ndarray:
    return np.array([math.erf(float(v)) for v in x.astype(np.float64)])


def test_measured_error_bound() -> None:
    """Every float32 in [0, 8] with a step of 2^12 in the bit pattern, log-spaced values up to 1e30,
    the negatives, and the special values: |approx - erf| <= MAX_ABS_ERROR (1.4e-7)."""
    bits = np.arange(0, np.float32(8).view(np.int32), 1 << 12, dtype=np.int32)
    x = np.concatenate([bits.view(np.float32), np.geomspace(1e-30, 1e30, 20000).astype(np.float32),
                        np.array([0.0, 1.1936859, 3.9, 4.0, 4.1, 1e38], np.float32)])
    x = np.concatenate([x, -x])
    err = np.abs(erf_f32(x).astype(np.float64) - _exact(x))
    assert err.max() <= MAX_ABS_ERROR, (err.max(), x[err.argmax()])
    normal = np.abs(x) >= np.finfo(np.float32).tiny
    rel = err[normal] / np.abs(_exact(x[normal]))
    assert rel.max() < 1e-6


def test_special_values() -> None:
    x = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 10.0, -10.0], np.float32)
    y = erf_f32(x)
    assert y[0] == 0 and not np.signbit(y[0]) and y[1] == 0 and np.signbit(y[1])
    assert np.isnan(y[4])
    # |x| >= 4 takes the value at 4 (1 - 2^-24 = 0.99999994: within the error bound, never above 1)
    np.testing.assert_array_equal(y[[2, 3, 5, 6]], np.float32([1, -1, 1, -1]) * erf_f32(np.float32(4.0)))
    assert 1 - erf_f32(np.float32(4.0)) <= MAX_ABS_ERROR


def test_coefficients_are_reproducible() -> None:
    np.testing.assert_allclose(fit_coefficients(), COEFFICIENTS, rtol=1e-6)


def test_lowering_runs_the_documented_formula(tmp_path) -> None:  # noqa: ANN001
    node = helper.make_node("Erf", ["x"], ["y"])
    graph = helper.make_graph([node], "erf", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 50])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3, 50])])
    path = tmp_path / "erf.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=9), path)
    module = nnkiln.load(str(path))
    x = np.linspace(-5, 5, 150, dtype=np.float32).reshape(3, 50)
    got = ref_run(module, {"x": x})["y"]
    np.testing.assert_array_equal(got, erf_f32(x))  # the graph is exactly the documented op sequence
    assert np.abs(got.astype(np.float64) - _exact(x.reshape(-1)).reshape(3, 50)).max() <= MAX_ABS_ERROR
    compiled = nnkiln.compile(module).run({"x": x})["y"]  # native kernels may round TANH differently
    np.testing.assert_allclose(compiled, got, rtol=1e-6, atol=1e-7)


def test_gelu_none_against_the_exact_formula(tmp_path) -> None:  # noqa: ANN001
    """Gelu(approximate="none") = 0.5·x·(1 + erf(x/√2)): within the erf bound (scaled by 0.5·|x|) plus float32
    rounding of the exact value computed in float64 with ``math.erf``."""
    node = helper.make_node("Gelu", ["x"], ["y"])
    graph = helper.make_graph([node], "gelu", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4000])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4000])])
    path = tmp_path / "gelu.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)], ir_version=9), path)
    module = nnkiln.load(str(path))
    x = np.concatenate([np.linspace(-10, 10, 3000), np.random.default_rng(0).standard_normal(1000) * 3]).astype(np.float32)
    xd = x.astype(np.float64)
    exact = 0.5 * xd * (1 + _exact(xd / np.sqrt(2)))
    bound = 0.5 * np.abs(xd) * MAX_ABS_ERROR + 4 * np.abs(exact) * 2.0 ** -24 + 1e-30
    # the reference interpreter and the compiled runtime (whose TANH may round differently) both obey it
    for got in (ref_run(module, {"x": x})["y"], nnkiln.compile(module).run({"x": x})["y"]):
        err = np.abs(got.astype(np.float64) - exact)
        assert (err <= bound).all(), float(np.max(err / bound))


def test_float16_erf_and_gelu_are_rounded_once_from_float32(tmp_path) -> None:  # noqa: ANN001
    """float16 Erf and Gelu(approximate="none") are widened exactly, computed in float32 and rounded once: the
    float16 rounding of the exact value, or one unit off where the float32 error reaches a rounding boundary;
    Gelu's float32 error ``0.5·|x|·1.4e-7`` is absolute (it matters only for tiny results, x < -4)."""
    x = np.concatenate([np.linspace(-6, 6, 2001), np.random.default_rng(1).standard_normal(500) * 2,
                        [0.0, -0.0, np.inf, -np.inf, np.nan]]).astype(np.float16)
    xd = x.astype(np.float64)
    with np.errstate(invalid="ignore"):
        gelu = 0.5 * xd * (1 + _exact(np.nan_to_num(xd, nan=0.0) / np.sqrt(2)))
    gelu[np.isinf(xd) & (xd < 0)] = np.nan  # -inf · 0 (ONNX: NaN, as 0.5·x·(1 + erf(x/√2)) in IEEE arithmetic)
    for op, opset, exact in (("Erf", 17, _exact(xd)), ("Gelu", 20, gelu)):
        exact = np.where(np.isnan(xd), np.nan, exact)
        graph = helper.make_graph([helper.make_node(op, ["x"], ["y"])], op,
                                  [helper.make_tensor_value_info("x", TensorProto.FLOAT16, [x.size])],
                                  [helper.make_tensor_value_info("y", TensorProto.FLOAT16, [x.size])])
        path = tmp_path / f"{op}.onnx"
        onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=9), path)
        module = nnkiln.load(str(path))
        with np.errstate(invalid="ignore", over="ignore"):
            nearest = exact.astype(np.float16)
        fin = np.isfinite(xd)
        ulp = np.abs(np.spacing(nearest[fin])).astype(np.float64)
        if op == "Gelu":
            ulp = ulp + 0.5 * np.abs(xd[fin]) * MAX_ABS_ERROR
        for got in (ref_run(module, {"x": x})["y"], nnkiln.compile(module).run({"x": x})["y"]):
            assert got.dtype == np.float16
            err = np.abs(got[fin].astype(np.float64) - nearest[fin].astype(np.float64))
            assert (err <= ulp).all(), (op, float(x[fin][np.argmax(err - ulp)]))
            assert (err == 0).mean() >= (0.97 if op == "Erf" else 0.85), (op, float((err == 0).mean()))
            assert (np.signbit(got[fin]) == np.signbit(nearest[fin]))[np.abs(nearest[fin]) > 0].all()
            assert np.isnan(got[np.isnan(xd)]).all()
