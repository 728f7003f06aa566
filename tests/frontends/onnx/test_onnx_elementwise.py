"""ONNX elementwise lowerings: imported with nnkiln, run with the reference interpreter, compared with
onnxruntime (float ops) or with hand-computed values from the ONNX operator definitions."""

from __future__ import annotations

import math
from typing import Any

import ml_dtypes
import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import nnkiln
from nnkiln.ir.errors import FrontendError
from nnkiln.onnx_backend import import_model_proto, run_model

ort = pytest.importorskip("onnxruntime")


def _elem(dtype: Any) -> int:
    return helper.np_dtype_to_tensor_dtype(np.dtype(dtype))


def make_model(op: str, inputs: list[np.ndarray | None], out_type: int | None = None, opset: int = 18,
               consts: dict[int, np.ndarray] | None = None, **attrs: Any) -> onnx.ModelProto:
    """One-node model; ``inputs[i]`` is a graph input (None: an omitted optional input), ``consts[i]``
    an initializer."""
    consts = consts or {}
    names, graph_inputs, inits = [], [], []
    n = max(len(inputs), max(consts, default=-1) + 1)
    for i in range(n):
        if i in consts:
            names.append(f"c{i}")
            inits.append(numpy_helper.from_array(np.asarray(consts[i]), f"c{i}"))
        elif i < len(inputs) and inputs[i] is not None:
            a = inputs[i]
            names.append(f"x{i}")
            graph_inputs.append(helper.make_tensor_value_info(f"x{i}", _elem(a.dtype), a.shape))
        else:
            names.append("")
    first = next(a for a in list(inputs) + list(consts.values()) if a is not None)
    out = helper.make_tensor_value_info("y", out_type if out_type is not None else _elem(first.dtype), None)
    node = helper.make_node(op, names, ["y"], **attrs)
    graph = helper.make_graph([node], "g", graph_inputs, [out], initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 10
    return model


def run(model: onnx.ModelProto, inputs: list[np.ndarray | None]) -> np.ndarray:
    return run_model(model, [a for a in inputs if a is not None])[0]


def run_ort(model: onnx.ModelProto, inputs: list[np.ndarray | None]) -> np.ndarray:
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    feed = {i.name: a for i, a in zip(sess.get_inputs(), [a for a in inputs if a is not None])}
    return sess.run(None, feed)[0]


def check(op: str, inputs: list[np.ndarray | None], expected: Any, **kw: Any) -> np.ndarray:
    got = run(make_model(op, inputs, **kw), inputs)
    exp = np.asarray(expected)
    assert got.shape == exp.shape
    if exp.dtype.kind == "f":
        np.testing.assert_allclose(got.astype(np.float64), exp.astype(np.float64), rtol=1e-6, atol=0, equal_nan=True)
    else:
        np.testing.assert_array_equal(got.astype(np.int64), exp.astype(np.int64))
    return got


RNG = np.random.default_rng(7)


def rand(*shape: int, lo: float = -3.0, hi: float = 3.0) -> np.ndarray:
    return RNG.uniform(lo, hi, size=shape).astype(np.float32)


# ---------------------------------------------------------------------------------------------------
# float ops against onnxruntime

FLOAT_UNARY = [
    ("Relu", {}), ("Sigmoid", {}), ("Tanh", {}), ("Exp", {}), ("Neg", {}), ("Abs", {}), ("Ceil", {}), ("Floor", {}),
    ("LeakyRelu", {"alpha": 0.2}), ("LeakyRelu", {}), ("Elu", {"alpha": 0.5}), ("Selu", {}),
    ("Selu", {"alpha": 2.0, "gamma": 3.0}), ("Celu", {"alpha": 2.0}), ("Celu", {}), ("ThresholdedRelu", {"alpha": 0.5}),
    ("HardSigmoid", {"alpha": 0.3, "beta": 0.4}), ("HardSwish", {}), ("Softplus", {}), ("Softsign", {}),
    ("Mish", {}), ("Gelu", {"approximate": "tanh"}), ("Sign", {}), ("Round", {}), ("Reciprocal", {}),
]


@pytest.mark.parametrize(("op", "attrs"), FLOAT_UNARY, ids=[f"{o}-{i}" for i, (o, _) in enumerate(FLOAT_UNARY)])
def test_float_unary_matches_onnxruntime(op: str, attrs: dict[str, Any]) -> None:
    x = rand(2, 3, 4)
    opset = 20 if op == "Gelu" else 18
    model = make_model(op, [x], opset=opset, **attrs)
    np.testing.assert_allclose(run(model, [x]), run_ort(model, [x]), rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("op", ["Sqrt", "Log"])
def test_positive_domain_unary(op: str) -> None:
    x = rand(3, 5, lo=0.01, hi=50.0)
    model = make_model(op, [x])
    np.testing.assert_allclose(run(model, [x]), run_ort(model, [x]), rtol=1e-5)


@pytest.mark.parametrize("op", ["Add", "Sub", "Mul", "Div", "Max", "Min", "Pow", "PRelu"])
def test_float_binary_with_rank_broadcast(op: str) -> None:
    a = rand(2, 3, 4, lo=0.5, hi=2.0)
    b = rand(4, lo=0.5, hi=2.0)
    model = make_model(op, [a, b])
    got = run(model, [a, b])
    assert got.shape == (2, 3, 4)
    np.testing.assert_allclose(got, run_ort(model, [a, b]), rtol=1e-5)


def test_broadcast_reshape_is_emitted_for_lower_rank_input() -> None:
    a, b = rand(2, 3), rand(3)
    text = str(import_model_proto(make_model("Add", [a, b]), [a, b]))
    assert "tosa.reshape" in text and "tosa.add" in text


def test_div_by_constant_uses_reciprocal_constant() -> None:
    a = rand(4)
    model = make_model("Div", [a], consts={1: np.array([2.0, 4.0, 0.5, -8.0], np.float32)})
    text = str(import_model_proto(model, [a]))
    assert "tosa.reciprocal" not in text and "tosa.mul" in text
    np.testing.assert_array_equal(run(model, [a]), a / np.array([2.0, 4.0, 0.5, -8.0], np.float32))


def test_variadic_sum_mean_max() -> None:
    a, b, c = rand(3, 1), rand(1, 4), rand(4)
    for op in ("Sum", "Mean", "Max", "Min"):
        model = make_model(op, [a, b, c])
        np.testing.assert_allclose(run(model, [a, b, c]), run_ort(model, [a, b, c]), rtol=1e-6)
    check("Max", [a], a)


def test_float16_activation() -> None:
    x = rand(8).astype(np.float16)
    model = make_model("Celu", [x], alpha=1.0)
    expected = np.maximum(0, x.astype(np.float32)) + np.minimum(0, np.exp(x.astype(np.float32)) - 1)
    np.testing.assert_allclose(run(model, [x]).astype(np.float32), expected, rtol=2e-3, atol=1e-3)


# ---------------------------------------------------------------------------------------------------
# exactness of compositions (hand-computed expectations)


def test_round_half_to_even_keeps_signed_zero() -> None:
    x = np.array([0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 0.49999997, 2.5000002, -0.2, -0.0, 1e30, math.inf, -math.inf,
                  math.nan, 3.0, -7.5], np.float32)
    expected = np.array([0, 2, 2, -0.0, -2, -2, 0, 3, -0.0, -0.0, 1e30, math.inf, -math.inf, math.nan, 3, -8], np.float32)
    got = check("Round", [x], expected)
    assert list(np.signbit(got[[3, 8, 9]])) == [True, True, True]


def test_sqrt_special_values() -> None:
    x = np.array([0.0, -0.0, 4.0, math.inf, -1.0, 2.25], np.float32)
    got = check("Sqrt", [x], np.array([0.0, -0.0, 2.0, math.inf, math.nan, 1.5], np.float32))
    assert np.signbit(got[1])


def test_sign_float_and_int() -> None:
    check("Sign", [np.array([-2.5, 0.0, 3.0, math.nan], np.float32)], np.array([-1, 0, 1, math.nan], np.float32))
    check("Sign", [np.array([-7, 0, 9], np.int32)], np.array([-1, 0, 1], np.int32))
    check("Sign", [np.array([-128, 0, 127], np.int8)], np.array([-1, 0, 1], np.int8))


def test_isnan_isinf() -> None:
    x = np.array([1.0, math.nan, math.inf, -math.inf, 0.0], np.float32)
    check("IsNaN", [x], [False, True, False, False, False])
    check("IsInf", [x], [False, False, True, True, False])
    check("IsInf", [x], [False, False, True, False, False], detect_negative=0)
    check("IsInf", [x], [False, False, False, True, False], detect_positive=0)


# ---------------------------------------------------------------------------------------------------
# integers: wrap-around through int32, truncating division, Mod signs


def test_small_int_add_wraps_like_onnx() -> None:
    # 100 + 100 = 200 wraps to 200 - 256 = -56 in int8
    check("Add", [np.array([100, -100, 5], np.int8), np.array([100, -100, 6], np.int8)], np.array([-56, 56, 11], np.int8))
    # uint8: 200 + 100 = 300 -> 44; uint16: 60000 + 10000 = 70000 -> 4464
    check("Add", [np.array([200, 5], np.uint8), np.array([100, 3], np.uint8)], np.array([44, 8], np.uint8))
    check("Add", [np.array([60000, 1], np.uint16), np.array([10000, 2], np.uint16)], np.array([4464, 3], np.uint16))
    check("Sub", [np.array([3], np.uint8), np.array([5], np.uint8)], np.array([254], np.uint8))
    # int16: 300 * 300 = 90000 = 65536 + 24464
    check("Mul", [np.array([300, -2], np.int16), np.array([300, 7], np.int16)], np.array([24464, -14], np.int16))


def test_integer_div_truncates_toward_zero() -> None:
    a = np.array([-7, 7, -7, 7, 0], np.int32)
    b = np.array([2, -2, -2, 2, 5], np.int32)
    check("Div", [a, b], np.array([-3, -3, 3, 3, 0], np.int32))
    check("Div", [a.astype(np.int8), b.astype(np.int8)], np.array([-3, -3, 3, 3, 0], np.int8))
    check("Div", [np.array([250, 7], np.uint8), np.array([3, 2], np.uint8)], np.array([83, 3], np.uint8))


def test_integer_mod_signs() -> None:
    a = np.array([-7, 7, -7, 7, 6], np.int32)
    b = np.array([3, -3, -3, 3, 3], np.int32)
    check("Mod", [a, b], np.array([2, -2, -1, 1, 0], np.int32))  # sign of the divisor
    check("Mod", [a, b], np.array([-1, 1, -1, 1, 0], np.int32), fmod=1)  # sign of the dividend
    check("Mod", [a.astype(np.int16), b.astype(np.int16)], np.array([2, -2, -1, 1, 0], np.int16))


def test_neg_abs_int8_wrap() -> None:
    x = np.array([-128, -5, 0, 127], np.int8)
    check("Neg", [x], np.array([-128, 5, 0, -127], np.int8))
    check("Abs", [x], np.array([-128, 5, 0, 127], np.int8))
    check("Abs", [np.array([0, 255], np.uint8)], np.array([0, 255], np.uint8))


def test_int_max_min_and_compare() -> None:
    a = np.array([-3, 100, 7], np.int8)
    b = np.array([4, -100, 7], np.int8)
    check("Max", [a, b], np.array([4, 100, 7], np.int8))
    check("Min", [a, b], np.array([-3, -100, 7], np.int8))
    check("Less", [a, b], [True, False, False])
    check("LessOrEqual", [a, b], [True, False, True])
    check("Greater", [a, b], [False, True, False])
    check("GreaterOrEqual", [a, b], [False, True, True])
    check("Equal", [a, b], [False, False, True])
    check("Greater", [np.array([200, 3], np.uint8), np.array([100, 4], np.uint8)], [True, False])


def test_relu_integer_types() -> None:
    check("Relu", [np.array([-5, 0, 7], np.int8)], np.array([0, 0, 7], np.int8))
    check("Relu", [np.array([-5, 0, 70000], np.int32)], np.array([0, 0, 70000], np.int32))
    check("Relu", [np.array([-math.inf, math.inf, -0.5], np.float32)], np.array([0, math.inf, 0], np.float32))


def test_bitshift_and_bitwise() -> None:
    check("BitShift", [np.array([255, 1], np.uint8), np.array([1, 7], np.uint8)], np.array([254, 128], np.uint8),
          direction="LEFT")
    check("BitShift", [np.array([255, 16], np.uint8), np.array([4, 2], np.uint8)], np.array([15, 4], np.uint8),
          direction="RIGHT")
    check("BitwiseNot", [np.array([0, 200], np.uint8)], np.array([255, 55], np.uint8), opset=18)
    check("BitwiseAnd", [np.array([0xF0, 0x0F], np.uint8), np.array([0x3C, 0x3C], np.uint8)],
          np.array([0x30, 0x0C], np.uint8), opset=18)


def test_logic_ops() -> None:
    a = np.array([True, True, False, False])
    b = np.array([True, False, True, False])
    check("And", [a, b], a & b)
    check("Or", [a, b], a | b)
    check("Xor", [a, b], a ^ b)
    check("Not", [a], ~a)
    check("Equal", [a, b], [True, False, False, True])


def test_where_with_uint8_values_and_broadcast() -> None:
    c = np.array([[True], [False]])
    x = np.array([1, 2, 3], np.uint8)
    y = np.array([[250, 251, 252], [253, 254, 255]], np.uint8)
    check("Where", [c, x, y], np.array([[1, 2, 3], [253, 254, 255]], np.uint8))


# ---------------------------------------------------------------------------------------------------
# Clip across opsets


def test_clip_opset6_attributes() -> None:
    x = np.array([-3.0, -0.5, 0.5, 3.0, math.inf], np.float32)
    check("Clip", [x], np.array([-1.0, -0.5, 0.5, 2.0, 2.0], np.float32), opset=6, min=-1.0, max=2.0)
    # no max attribute: the default is the float type's largest value (not +inf)
    got = check("Clip", [x], np.array([0.0, 0.0, 0.5, 3.0, np.finfo(np.float32).max], np.float32), opset=6, min=0.0)
    assert np.isfinite(got[-1])


def test_clip_optional_inputs() -> None:
    x = np.array([-3.0, -0.5, 0.5, 3.0], np.float32)
    lo, hi = np.array(-1.0, np.float32), np.array(1.0, np.float32)
    check("Clip", [x], np.array([-1.0, -0.5, 0.5, 1.0], np.float32), opset=13, consts={1: lo, 2: hi})
    check("Clip", [x, None], np.array([-3.0, -0.5, 0.5, 1.0], np.float32), opset=13, consts={2: hi})
    # min > max: every value becomes max
    check("Clip", [x], np.full(4, -1.0, np.float32), opset=13, consts={1: hi, 2: lo})
    # run-time bounds
    check("Clip", [x, lo, hi], np.array([-1.0, -0.5, 0.5, 1.0], np.float32), opset=13)


def test_clip_integer_types() -> None:
    check("Clip", [np.array([-100, 5, 100], np.int32)], np.array([-10, 5, 20], np.int32), opset=13,
          consts={1: np.array(-10, np.int32), 2: np.array(20, np.int32)})
    check("Clip", [np.array([-100, 5, 100], np.int8)], np.array([-10, 5, 20], np.int8), opset=13,
          consts={1: np.array(-10, np.int8), 2: np.array(20, np.int8)})
    check("Clip", [np.array([1, 50, 255], np.uint8)], np.array([10, 50, 200], np.uint8), opset=13,
          consts={1: np.array(10, np.uint8), 2: np.array(200, np.uint8)})


# ---------------------------------------------------------------------------------------------------
# Cast


def test_cast_float_to_int_truncates() -> None:
    x = np.array([2.7, -2.7, -0.5, 3.0, 0.5, -3.5], np.float32)
    check("Cast", [x], np.array([2, -2, 0, 3, 0, -3], np.int32), out_type=TensorProto.INT32, to=TensorProto.INT32)
    check("Cast", [x], np.array([2, -2, 0, 3, 0, -3], np.int64), out_type=TensorProto.INT64, to=TensorProto.INT64)
    check("Cast", [x], np.array([2, -2, 0, 3, 0, -3], np.int8), out_type=TensorProto.INT8, to=TensorProto.INT8)
    check("Cast", [np.array([200.9, 0.2], np.float32)], np.array([200, 0], np.uint8), out_type=TensorProto.UINT8,
          to=TensorProto.UINT8)


def test_cast_bool_and_int_conversions() -> None:
    f = np.array([0.0, -0.0, math.nan, 2.0], np.float32)
    check("Cast", [f], [False, False, True, True], out_type=TensorProto.BOOL, to=TensorProto.BOOL)
    b = np.array([True, False])
    check("Cast", [b], np.array([1.0, 0.0], np.float32), out_type=TensorProto.FLOAT, to=TensorProto.FLOAT)
    check("Cast", [b], np.array([1, 0], np.uint8), out_type=TensorProto.UINT8, to=TensorProto.UINT8)
    # 200 (int32) -> -56 (int8): discard the high bits (ONNX Cast rules)
    check("Cast", [np.array([200, -1], np.int32)], np.array([-56, -1], np.int8), out_type=TensorProto.INT8,
          to=TensorProto.INT8)
    check("Cast", [np.array([200, 7], np.uint8)], np.array([-56, 7], np.int8), out_type=TensorProto.INT8,
          to=TensorProto.INT8)
    check("Cast", [np.array([-1, 300], np.int16)], np.array([255, 44], np.uint8), out_type=TensorProto.UINT8,
          to=TensorProto.UINT8)
    check("Cast", [np.array([-3, 16777217], np.int32)], np.array([-3.0, 16777216.0], np.float32),
          out_type=TensorProto.FLOAT, to=TensorProto.FLOAT)


def test_castlike_uses_second_input_type() -> None:
    x = np.array([1.9, -1.9], np.float32)
    model = make_model("CastLike", [x], out_type=TensorProto.INT32, consts={1: np.array([0], np.int32)})
    np.testing.assert_array_equal(run(model, [x]), np.array([1, -1], np.int32))


# ---------------------------------------------------------------------------------------------------
# constant folding, Pow forms, unsupported cases


def test_constant_inputs_fold_at_import() -> None:
    a = np.array([7, -7], np.int64)
    b = np.array([2, 2], np.int64)
    x = np.array([1, 1], np.int64)
    node1 = helper.make_node("Div", ["a", "b"], ["q"])
    node2 = helper.make_node("Add", ["x", "q"], ["y"])
    graph = helper.make_graph([node1, node2], "g", [helper.make_tensor_value_info("x", TensorProto.INT64, [2])],
                              [helper.make_tensor_value_info("y", TensorProto.INT64, [2])],
                              initializer=[numpy_helper.from_array(a, "a"), numpy_helper.from_array(b, "b")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    text = str(import_model_proto(model, [x]))
    assert "tosa.intdiv" not in text and text.count("tosa.add") == 1
    np.testing.assert_array_equal(run_model(model, [x])[0], np.array([4, -2]))  # 7/2 = 3, -7/2 = -3 (truncation)


def test_pow_forms() -> None:
    x = rand(3, lo=0.5, hi=2.0)
    check("Pow", [x], x.astype(np.float64) ** 3, consts={1: np.array(3, np.int64)})
    check("Pow", [x, np.array([2, 3, 1], np.int32)], x.astype(np.float64) ** np.array([2, 3, 1]))
    s = np.array(2.0, np.float32)
    check("Pow", [s], np.array(8.0, np.float32), consts={1: np.array(3.0, np.float32)})


@pytest.mark.parametrize(("op", "inputs", "attrs"), [
    ("Gelu", [rand(3).astype(ml_dtypes.bfloat16)], {"approximate": "none"}),
    ("Mod", [rand(3).astype(ml_dtypes.bfloat16), rand(3).astype(ml_dtypes.bfloat16)], {"fmod": 1}),
    ("Cast", [rand(3)], {"to": TensorProto.FLOAT8E4M3FN}),
    ("Pow", [np.array([2, 3], np.uint8), np.array([2, 2], np.int32)], {}),
])
def test_not_supported_cases_are_reported(op: str, inputs: list[np.ndarray], attrs: dict[str, Any]) -> None:
    opset = 20 if op == "Gelu" else 18
    out_type = TensorProto.FLOAT8E4M3FN if op == "Cast" else None
    model = make_model(op, inputs, opset=opset, out_type=out_type, **attrs)
    with pytest.raises(FrontendError, match="not supported"):
        import_model_proto(model, inputs)


def test_cast_float16_to_float_is_exact() -> None:
    # every finite fp16 value (all 63488 of them) plus the specials, compared bit for bit with the exact widening
    bits = np.arange(0, 1 << 16, dtype=np.uint32).astype(np.uint16)
    x = bits.view(np.float16)
    got = run(make_model("Cast", [x], out_type=TensorProto.FLOAT, to=TensorProto.FLOAT), [x])
    exact = x.astype(np.float32)
    nan = np.isnan(exact)
    assert np.array_equal(np.isnan(got), nan)
    np.testing.assert_array_equal(got[~nan].view(np.uint32), exact[~nan].view(np.uint32))


# -- Sin ... Atanh: tosa.custom math.<name> ------------------------------------------------------------------

_TRIG_DOMAIN = {"Asin": (-1.0, 1.0), "Acos": (-1.0, 1.0), "Atanh": (-0.999, 0.999), "Acosh": (1.0, 50.0),
                "Tan": (-1.5, 1.5), "Sinh": (-20.0, 20.0), "Cosh": (-20.0, 20.0)}


@pytest.mark.parametrize("op", ["Sin", "Cos", "Tan", "Asin", "Acos", "Atan", "Sinh", "Cosh", "Asinh", "Acosh", "Atanh"])
def test_trigonometric_ops_match_onnxruntime(op: str) -> None:
    lo, hi = _TRIG_DOMAIN.get(op, (-10.0, 10.0))
    x = rand(3, 4, 5, lo=lo, hi=hi)
    x.reshape(-1)[:3] = [np.nan, lo, hi]
    model = make_model(op, [x])
    got, want = run(model, [x]), run_ort(model, [x])
    np.testing.assert_allclose(got, want, rtol=2e-6, atol=1e-7, equal_nan=True)
    assert "math." + op.lower() in str(import_model_proto(model))  # one tosa.custom, not a composition
    folded = run(make_model(op, [], consts={0: x}), [])  # a constant input folds with the same kernel
    np.testing.assert_array_equal(folded, got)


def test_trigonometric_ops_outside_their_domain_give_nan_not_warnings() -> None:
    x = np.array([2.0, -2.0, 0.5, 1.0, -1.0], np.float32)
    with np.errstate(all="raise"):
        acos = run(make_model("Acos", [x]), [x])
        acosh = run(make_model("Acosh", [x]), [x])
        atanh = run(make_model("Atanh", [x]), [x])
    assert np.isnan(acos[:2]).all() and np.isnan(acosh[1:3]).all()
    assert atanh[3] == np.inf and atanh[4] == -np.inf


def test_trigonometric_op_refuses_integer_input() -> None:
    x = np.arange(4, dtype=np.int32)
    with pytest.raises(FrontendError, match="Sin: i32 inputs are not supported"):
        import_model_proto(make_model("Sin", [x]))


def test_compiled_trigonometric_blob_runs_in_a_fresh_process(tmp_path) -> None:  # noqa: ANN001
    """The runtime finds the math.* kernels on its own: a saved blob runs with numpy alone."""
    import subprocess
    import sys

    import nnkiln

    x = rand(2, 7)
    path = tmp_path / "cos.onnx"
    onnx.save(make_model("Cos", [x]), path)
    exe = nnkiln.compile(nnkiln.load(str(path)))
    got = exe.run({"x0": x})["y"]
    np.testing.assert_allclose(got, np.cos(x), rtol=2e-6, atol=1e-7)
    exe.save(tmp_path / "cos.kiln")
    np.save(tmp_path / "x.npy", x)
    code = ("import sys, numpy as np; from nnkiln.runtime import load_blob; "
            f"y = load_blob({str(tmp_path / 'cos.kiln')!r}).run({{'x0': np.load({str(tmp_path / 'x.npy')!r})}})['y']; "
            f"np.save({str(tmp_path / 'y.npy')!r}, y); assert not any(m.startswith('xdsl') for m in sys.modules)")
    subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True)
    np.testing.assert_array_equal(np.load(tmp_path / "y.npy"), got)


@pytest.mark.parametrize("fmod", [0, 1])
@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_float_mod_matches_numpy_and_onnxruntime(fmod: int, dtype: type) -> None:
    """Float Mod (a tosa.custom math.fmod / math.mod): exact remainders with broadcasting, signed zeros, and the
    edge cases (b = 0, infinite a, infinite b) as numpy's fmod / mod, which is what ONNX specifies."""
    a = (rand(3, 4, 5, lo=-50, hi=50)).astype(dtype)
    a.reshape(-1)[:6] = [np.inf, -np.inf, np.nan, 0.0, -0.0, 7.5]
    b = (rand(4, 1, lo=-6, hi=6)).astype(dtype)
    b.reshape(-1)[:3] = [0.0, np.inf, -2.5]
    model = make_model("Mod", [a, b], fmod=fmod)
    got = run(model, [a, b])
    with np.errstate(all="ignore"):
        want = (np.fmod if fmod else np.mod)(a, b)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)
    assert np.array_equal(np.signbit(got), np.signbit(want))
    if dtype is np.float32 and fmod == 1:  # onnxruntime implements float Mod with fmod = 1 only
        np.testing.assert_array_equal(got, run_ort(model, [a, b]))


@pytest.mark.parametrize("to,dtype", [(TensorProto.FLOAT16, np.float16), (TensorProto.BFLOAT16, ml_dtypes.bfloat16)])
def test_float_narrowing_cast_rounds_to_nearest_even(to: int, dtype: type) -> None:
    """f32 -> f16 / bf16 (a tosa.custom math.cast): ties to even, overflow to inf, NaN and signed zeros kept,
    subnormals (f16), bit for bit as numpy / ml_dtypes; back to f32 the same way."""
    x = rand(64, lo=-70000, hi=70000)
    x[:8] = [np.nan, np.inf, -np.inf, -0.0, 1e-6, 65520.0, 1.0 + 2.0 ** -11, 3.4e38]
    got = run(make_model("Cast", [x], out_type=to, to=to), [x])
    want = x.astype(dtype)
    assert got.dtype == want.dtype
    assert got.view(np.uint16).tolist() == want.view(np.uint16).tolist()
    back = run(make_model("Cast", [want], out_type=TensorProto.FLOAT, to=TensorProto.FLOAT), [want])
    assert back.view(np.uint32).tolist() == want.astype(np.float32).view(np.uint32).tolist()


@pytest.mark.parametrize("src,to,dst", [(np.float32, TensorProto.INT32, np.int32), (np.int32, TensorProto.FLOAT, np.float32),
                                        (np.int8, TensorProto.UINT8, np.uint8), (np.uint16, TensorProto.INT16, np.int16)])
def test_bitcast_reads_the_same_bits(src: type, to: int, dst: type) -> None:
    """BitCast (a tosa.custom math.bitcast): numpy's view, NaN payloads included; a constant folds the same way;
    types carried in 32 bits refuse."""
    raw = RNG.integers(0, 2**32, 24, dtype=np.uint64).astype(np.uint32)
    x = raw.view(np.float32).reshape(2, 3, 4) if src is np.float32 else raw.astype(src).reshape(2, 3, 4)
    if src is np.float32:
        x.reshape(-1)[0] = np.float32(np.nan)
    got = run(make_model("BitCast", [x], out_type=to, opset=26, to=to), [x])
    assert got.dtype == np.dtype(dst) and got.shape == x.shape
    assert got.tobytes() == np.ascontiguousarray(x).tobytes()  # bit for bit (NaN payloads too)
    folded = run(make_model("BitCast", [], out_type=to, opset=26, consts={0: x}, to=to), [])
    assert folded.dtype == got.dtype and folded.tobytes() == got.tobytes()


def test_bitcast_of_a_64_bit_type_is_refused() -> None:
    x = np.arange(4, dtype=np.float32)
    with pytest.raises(FrontendError, match="int64 values are carried as i32"):
        import_model_proto(make_model("BitCast", [x], out_type=TensorProto.INT64, opset=26, to=TensorProto.INT64))


def test_integer_pow_matches_onnxruntime_and_wraps_like_numpy() -> None:
    """Pow with an int32 base (a tosa.custom math.pow_int): onnxruntime agrees where the result fits; larger
    powers wrap to 32 bits (numpy's integer power); negative exponents truncate 1/a^n; a float exponent's
    power is truncated toward zero; a constant base folds with the same kernel."""
    a = np.array([[2, -3, 5, 1, -1, 7], [0, 4, -2, 3, 10, -1]], np.int32)
    b = np.array([[3, 3, 0, -4, -3, 2], [5, -1, 7, 4, 2, 6]], np.int32)
    model = make_model("Pow", [a, b])
    got = run(model, [a, b])
    np.testing.assert_array_equal(got, run_ort(model, [a, b]))
    big = np.array([3, 7, -5], np.int32), np.array([25, 13, 19], np.int32)
    assert run(make_model("Pow", list(big)), list(big)).tolist() == np.power(*[v.astype(np.int64) for v in big]).astype(np.int32).tolist()
    fexp = np.array([2.5, 0.5, -1.0], np.float32)
    base = np.array([4, 9, 2], np.int32)
    model = make_model("Pow", [base, fexp])
    assert run(model, [base, fexp]).tolist() == [32, 3, 0] == run_ort(model, [base, fexp]).tolist()
    folded = run(make_model("Pow", [None, b], consts={0: a}), [b])
    np.testing.assert_array_equal(folded, got)


_SPECIAL = np.array([np.inf, -np.inf, np.nan, -0.0, 0.0, 1e-45, -1e-45, -3.5e38, 3.5e38, -1.0, 2.0, -7.25],
                    np.float32)


@pytest.mark.parametrize("alpha", [0.01, 0.2, 1.0, 2.5, 0.0, -0.5])
def test_leaky_relu_matches_the_formula_bit_for_bit(alpha: float) -> None:
    """LeakyRelu is ``x >= 0 ? x : x * alpha`` (ONNX); the MAXIMUM / MINIMUM forms (0 < alpha <= 1, alpha > 1) must
    give the same bits, special values included; other alphas keep the SELECT."""
    x = np.concatenate([_SPECIAL, np.random.default_rng(1).standard_normal(52).astype(np.float32)]).reshape(4, 16)
    m = make_model("LeakyRelu", [x], alpha=alpha)
    want = np.where(x >= 0, x, x * np.float32(alpha))
    compiled = next(iter(nnkiln.compile(import_model_proto(m, [x])).run({"x0": x}).values()))
    for got in (run(m, [x]), compiled):  # the reference interpreter, the compiled program
        np.testing.assert_array_equal(got, want)
        assert np.array_equal(np.signbit(got), np.signbit(want))
    text = str(import_model_proto(m, [x]))
    assert ("tosa.select" in text) == (not (0 < alpha <= 1 or alpha > 1))


@pytest.mark.parametrize("slopes", [[0.1, 0.5, 1.0], [1.5, 2.0, 3.0], [0.5, -0.5, 2.0], [0.0, 0.3, 0.3]])
def test_prelu_constant_slopes_match_the_formula_bit_for_bit(slopes: list[float]) -> None:
    x = np.concatenate([_SPECIAL, np.random.default_rng(2).standard_normal(24).astype(np.float32)]).reshape(1, 3, 12)
    s = np.array(slopes, np.float32).reshape(3, 1)
    m = make_model("PRelu", [x], consts={1: s})
    want = np.where(x < 0, x * s, x)
    compiled = next(iter(nnkiln.compile(import_model_proto(m, [x])).run({"x0": x}).values()))
    for got in (run(m, [x]), compiled):
        np.testing.assert_array_equal(got, want)
        assert np.array_equal(np.signbit(got), np.signbit(want))
    same_side = all(0 < v <= 1 for v in slopes) or all(v > 1 for v in slopes)
    assert ("tosa.select" in str(import_model_proto(m, [x]))) == (not same_side)
