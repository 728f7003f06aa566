"""ONNX shape/data-layout and reduction lowerings: imported with nnkiln, run with the reference
interpreter, compared with onnxruntime (or with values from the ONNX operator definitions)."""

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

RNG = np.random.default_rng(7)


def rand(*shape: int) -> np.ndarray:
    return RNG.standard_normal(shape).astype(np.float32)


def node_model(op: str, inputs: dict[str, np.ndarray], inits: dict[str, np.ndarray] | None = None,
               n_out: int = 1, opset: int = 18, out_type: int = TensorProto.FLOAT,
               order: list[str] | None = None, **attrs: Any) -> onnx.ModelProto:
    inits = inits or {}
    names = order if order is not None else [*inputs, *inits]
    outs = [f"y{i}" for i in range(n_out)]
    g_in = [helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(a.dtype), a.shape)
            for n, a in inputs.items()]
    g_out = [helper.make_tensor_value_info(n, out_type, None) for n in outs]
    init = [numpy_helper.from_array(np.asarray(a), n) for n, a in inits.items()]
    graph = helper.make_graph([helper.make_node(op, names, outs, **attrs)], "g", g_in, g_out, initializer=init)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 10
    return model


def check(model: onnx.ModelProto, inputs: dict[str, np.ndarray], rtol: float = 1e-4, atol: float = 1e-6) -> list[np.ndarray]:
    got = run_model(model, list(inputs.values()))
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    want = sess.run(None, inputs)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.shape == w.shape
        if w.dtype.kind == "f":
            np.testing.assert_allclose(g, w, rtol=rtol, atol=atol)
        else:
            np.testing.assert_array_equal(g.astype(np.int64), w.astype(np.int64))
    return got


def ir_of(model: onnx.ModelProto, inputs: dict[str, np.ndarray]) -> str:
    return print_module(import_model_proto(model, list(inputs.values())))


I64 = np.int64


# ---- reshape family ---------------------------------------------------------------------------


def test_reshape_zero_and_minus_one() -> None:
    x = {"x": rand(2, 3, 4)}
    check(node_model("Reshape", x, {"s": np.array([0, -1, 2], I64)}), x)


def test_reshape_allowzero_copies_nothing() -> None:
    x = {"x": rand(2, 3, 4)}
    m = node_model("Reshape", x, {"s": np.array([0, 24], I64)}, allowzero=1)
    with pytest.raises(FrontendError):
        run_model(m, [x["x"]])


def test_squeeze_unsqueeze_attr_and_input_forms() -> None:
    x = {"x": rand(1, 3, 1, 5)}
    check(node_model("Squeeze", x, {"a": np.array([-2], I64)}, opset=13), x)
    check(node_model("Squeeze", x, opset=11, axes=[0]), x)
    check(node_model("Unsqueeze", x, {"a": np.array([5, 0], I64)}, opset=13), x)
    check(node_model("Unsqueeze", x, opset=11, axes=[1, -1]), x)


def test_transpose_default_reverses() -> None:
    x = {"x": rand(2, 3, 4)}
    check(node_model("Transpose", x), x)
    check(node_model("Transpose", x, perm=[1, 2, 0]), x)


def test_concat_with_constant_operand() -> None:
    x = {"x": rand(2, 3)}
    check(node_model("Concat", x, {"c": rand(2, 2)}, axis=-1), x)


@pytest.mark.parametrize("opset,attrs,n,inits", [
    (18, {"num_outputs": 3, "axis": 1}, 3, {}),
    (13, {"axis": 1}, 2, {"s": np.array([3, 5], I64)}),
    (11, {"axis": 1, "split": [1, 7]}, 2, {}),
])
def test_split_forms(opset: int, attrs: dict[str, Any], n: int, inits: dict[str, np.ndarray]) -> None:
    x = {"x": rand(2, 8)}
    check(node_model("Split", x, inits, n_out=n, opset=opset, **attrs), x)


def test_split_uneven_num_outputs() -> None:
    # opset 18: chunks of ceil(7/4) = 2, the last one smaller: sizes 2, 2, 2, 1
    x = {"x": np.arange(7, dtype=np.float32)}
    got = run_model(node_model("Split", x, n_out=4, num_outputs=4), [x["x"]])
    assert [g.tolist() for g in got] == [[0, 1], [2, 3], [4, 5], [6]]


# ---- slice ----------------------------------------------------------------------------------


@pytest.mark.parametrize("starts,ends,axes,steps", [
    ([0, 0, 3], [20, 10, 4], [0, 1, 2], [1, 1, 1]),
    ([20, 10, 4], [0, 0, 1], [0, 1, 2], [-1, -3, -2]),
    ([1, -1000], [1000, 1000], [0, -1], [2, 1]),
    ([-1], [-1000], [1], [-1]),
])
def test_slice(starts: list[int], ends: list[int], axes: list[int], steps: list[int]) -> None:
    x = {"x": rand(20, 10, 5)}
    inits = {"s": np.array(starts, I64), "e": np.array(ends, I64), "a": np.array(axes, I64), "t": np.array(steps, I64)}
    check(node_model("Slice", x, inits), x)


def test_slice_rank5_collapses_full_dims() -> None:
    x = {"x": rand(2, 3, 4, 5, 6)}
    inits = {"s": np.array([1, 2], I64), "e": np.array([3, 5], I64), "a": np.array([2, 4], I64)}
    model = node_model("Slice", x, inits)
    check(model, x)
    assert "tosa.slice" in ir_of(model, x)


def test_slice_opset9_attributes() -> None:
    x = {"x": rand(4, 6)}
    check(node_model("Slice", x, opset=9, starts=[1, -4], ends=[3, 100], axes=[0, 1]), x)


# ---- expand / tile / pad --------------------------------------------------------------------


def test_expand_bidirectional() -> None:
    x = {"x": rand(3, 1)}
    check(node_model("Expand", x, {"s": np.array([2, 1, 6], I64)}), x)


def test_tile_rank5() -> None:
    x = {"x": rand(1, 2, 1, 2, 3)}
    check(node_model("Tile", x, {"r": np.array([2, 1, 3, 1, 2], I64)}), x)


@pytest.mark.parametrize("mode", ["constant", "edge", "reflect", "wrap"])
def test_pad_modes(mode: str) -> None:
    x = {"x": rand(1, 3, 4, 5)}
    inits = {"p": np.array([0, 0, 2, 1, 0, 0, 1, 3], I64), "v": np.array(1.5, np.float32)}
    check(node_model("Pad", x, inits, mode=mode), x)


def test_pad_negative_and_axes() -> None:
    x = {"x": rand(3, 4, 5)}
    inits = {"p": np.array([1, -1, -2, 2], I64), "v": np.array(0.0, np.float32), "a": np.array([0, -1], I64)}
    check(node_model("Pad", x, inits), x)


def test_pad_opset2_attributes() -> None:
    x = {"x": rand(2, 3)}
    check(node_model("Pad", x, opset=10, pads=[0, 1, 1, 0], value=-3.0, mode="constant"), x)


# ---- gather / scatter -----------------------------------------------------------------------


def test_gather_dynamic_negative_indices() -> None:
    x = {"x": rand(5, 4, 3), "i": np.array([[0, -1], [2, -5]], I64)}
    model = node_model("Gather", x, axis=0)
    check(model, x)
    assert "tosa.gather" in ir_of(model, x)


def test_gather_constant_indices_axis1() -> None:
    x = {"x": rand(5, 4, 3)}
    check(node_model("Gather", x, {"i": np.array([3, -4, 1], I64)}, axis=1), x)


def test_gather_scalar_index_drops_axis() -> None:
    x = {"x": rand(5, 4)}
    check(node_model("Gather", x, {"i": np.array(-2, I64)}, axis=1), x)


def test_gather_elements_and_nd() -> None:
    x = {"x": rand(3, 3)}
    check(node_model("GatherElements", x, {"i": np.array([[-1, -2, 0], [2, 0, 0]], I64)}, axis=0), x)
    y = {"x": rand(2, 2, 3)}
    check(node_model("GatherND", y, {"i": np.array([[1], [0]], I64)}, batch_dims=1), y)
    check(node_model("GatherND", y, {"i": np.array([[[0, 1]], [[1, 0]]], I64)}), y)


def test_scatter_elements_and_nd() -> None:
    x = {"x": rand(3, 3), "u": rand(2, 3)}
    check(node_model("ScatterElements", x, {"i": np.array([[1, 0, 2], [0, 2, -2]], I64)},
                     order=["x", "i", "u"], axis=0), x)
    y = {"x": rand(4, 4, 4), "u": rand(2, 4, 4)}
    check(node_model("ScatterND", y, {"i": np.array([[0], [2]], I64)}, order=["x", "i", "u"]), y)


@pytest.mark.parametrize("reduction", ["add", "mul", "max", "min"])
def test_scatter_reductions_with_repeated_constant_indices(reduction: str) -> None:
    """Updates applied in index order, in rounds of distinct targets: equal to onnxruntime's sequential
    result (here exactly, the combinations being single float operations per round)."""
    x = {"x": rand(2, 5), "u": rand(2, 4)}
    m = node_model("ScatterElements", x, {"i": np.array([[1, 1, 4, 1], [0, -1, 4, 0]], I64)}, order=["x", "i", "u"],
                   axis=1, reduction=reduction)
    check(m, x, rtol=0, atol=0)
    y = {"x": rand(4, 3), "u": rand(3, 3)}
    check(node_model("ScatterND", y, {"i": np.array([[2], [0], [2]], I64)}, order=["x", "i", "u"],
                     reduction=reduction), y, rtol=0, atol=0)


def test_scatter_reduction_of_int8_data_is_refused_by_name() -> None:
    x = {"x": np.zeros((1, 5), np.int8), "u": np.ones((1, 2), np.int8)}
    m = node_model("ScatterElements", x, {"i": np.array([[1, 1]], I64)}, order=["x", "i", "u"], axis=1,
                   reduction="add", out_type=TensorProto.INT8)
    with pytest.raises(FrontendError, match="reduction 'add' of i8 tensors is not supported"):
        run_model(m, list(x.values()))


def test_gather_nd_with_run_time_indices() -> None:
    x = {"x": rand(3, 5, 4), "i": np.array([[0, 4], [1, -1], [2, 2]], I64)}
    m = node_model("GatherND", x)
    check(m, x, rtol=0, atol=0)
    assert "tosa.gather" in ir_of(m, x)
    check(node_model("GatherND", {"x": rand(2, 3, 4, 2), "i": np.array([[[2, -1]], [[0, 3]]], I64)}, batch_dims=1),
          {"x": rand(2, 3, 4, 2), "i": np.array([[[2, -1]], [[0, 3]]], I64)}, rtol=0, atol=0)
    y = {"x": rand(4, 3), "i": np.array([[3], [-4], [1]], I64)}  # whole rows
    check(node_model("GatherND", y), y, rtol=0, atol=0)


def test_gather_elements_and_scatters_with_run_time_indices() -> None:
    x = {"x": rand(3, 4), "i": np.array([[-1, 0], [2, 1], [0, 3]], I64)}
    check(node_model("GatherElements", x, axis=1), x, rtol=0, atol=0)
    y = {"x": rand(3, 5), "i": np.array([[0, 3], [4, -4], [1, 2]], I64), "u": rand(3, 2)}
    check(node_model("ScatterElements", y, axis=1), y, rtol=0, atol=0)
    z = {"x": rand(4, 3, 2), "i": np.array([[3], [-4]], I64), "u": rand(2, 3, 2)}
    check(node_model("ScatterND", z), z, rtol=0, atol=0)


def test_run_time_index_out_of_range_is_a_clean_run_error() -> None:
    import nnkiln
    from nnkiln.ir.errors import NnkilnError

    # [1, 5] is outside the [3, 5] grid, though its flat position 10 is inside the 15 rows
    x = {"x": rand(3, 5, 4), "i": np.array([[0, 4], [1, 5], [2, 2]], I64)}
    exe = nnkiln.compile(import_model_proto(node_model("GatherND", x), list(x.values())))
    with pytest.raises(NnkilnError, match="REQUIRE"):
        exe.run({"x": x["x"], "i": x["i"]})
    y = {"x": rand(3, 4), "i": np.array([[0, 4], [1, 0], [2, -5]], I64)}  # 4 and -5 outside the axis of 4
    for idx in (np.array([[0, 4], [1, 0], [2, 1]], I64), np.array([[0, 1], [1, 0], [2, -5]], I64)):
        exe = nnkiln.compile(import_model_proto(node_model("GatherElements", y, axis=1), list(y.values())))
        with pytest.raises(NnkilnError, match="REQUIRE"):
            exe.run({"x": y["x"], "i": idx})
    z = {"x": rand(3, 5), "i": np.array([[0, 5], [4, 1], [1, 2]], I64), "u": rand(3, 2)}
    exe = nnkiln.compile(import_model_proto(node_model("ScatterElements", z, axis=1), list(z.values())))
    with pytest.raises(NnkilnError, match="REQUIRE"):
        exe.run(z)


def test_extreme_run_time_indices_name_the_index_not_the_arithmetic() -> None:
    """Indices at the ends of int32 (valid ONNX int64 values narrowed to the int32 inputs) fail the GATHER /
    SCATTER REQUIRE on the index (``0 <= k < K``), not an int32 ADD or MUL on the way to a flat position."""
    import nnkiln
    from nnkiln.ir.errors import NnkilnError

    top, bottom = 2**31 - 1, -2**31
    g = {"x": rand(6, 4), "i": np.array([[0, 1]], I64)}
    gather = nnkiln.compile(import_model_proto(node_model("Gather", g, axis=0), list(g.values())))
    nd = {"x": rand(3, 5, 4), "i": np.array([[0, 4], [1, 1]], I64)}
    gather_nd = nnkiln.compile(import_model_proto(node_model("GatherND", nd), list(nd.values())))
    el = {"x": rand(3, 4), "i": np.array([[0, 1], [1, 0], [2, 1]], I64)}
    gather_el = nnkiln.compile(import_model_proto(node_model("GatherElements", el, axis=0), list(el.values())))
    for value in (top, bottom):
        with pytest.raises(NnkilnError, match=r"0 <= k < K"):
            gather.run({"x": g["x"], "i": np.array([[0, value]], I64)})
        with pytest.raises(NnkilnError, match=r"0 <= k < K"):
            gather_nd.run({"x": nd["x"], "i": np.array([[0, 4], [value, 1]], I64)})
        with pytest.raises(NnkilnError, match=r"0 <= k < K"):
            gather_el.run({"x": el["x"], "i": np.array([[0, 1], [value, 0], [2, 1]], I64)})
    np.testing.assert_array_equal(gather.run({"x": g["x"], "i": np.array([[-6, 5]], I64)})["y0"][0],
                                  g["x"][[0, 5]])  # the extremes of the valid range still work


# ---- layout ops, generators -----------------------------------------------------------------


@pytest.mark.parametrize("op,mode", [("DepthToSpace", "DCR"), ("DepthToSpace", "CRD"), ("SpaceToDepth", None)])
def test_depth_space(op: str, mode: str | None) -> None:
    x = {"x": rand(1, 8, 2, 4)}
    attrs = {"blocksize": 2} | ({"mode": mode} if mode else {})
    check(node_model(op, x, opset=13, **attrs), x)


def test_range_folds() -> None:
    x = {"x": rand(2)}
    m = helper.make_model(helper.make_graph(
        [helper.make_node("Range", ["a", "b", "c"], ["r"]), helper.make_node("Shape", ["r"], ["s"]),
         helper.make_node("Reshape", ["x", "k"], ["y"])],
        "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None),
         helper.make_tensor_value_info("r", TensorProto.INT32, None)],
        initializer=[numpy_helper.from_array(np.array(v, np.int32), n) for n, v in (("a", 10), ("b", 6), ("c", -3))]
        + [numpy_helper.from_array(np.array([1, 2], I64), "k")]), opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 10
    got = run_model(m, [x["x"]])
    assert got[1].tolist() == [10, 7]  # ceil((6 - 10) / -3) = 2 elements


@pytest.mark.parametrize("upper,k", [(1, 0), (0, -1), (1, 2)])
def test_trilu(upper: int, k: int) -> None:
    x = {"x": rand(2, 3, 4)}
    check(node_model("Trilu", x, {"k": np.array(k, I64)}, upper=upper), x)


def test_eyelike() -> None:
    x = {"x": rand(3, 4)}
    check(node_model("EyeLike", x, k=1), x)


def test_onehot_float_indices_truncate() -> None:
    x = {"i": np.array([[1.7, -0.5], [-1.2, 9.0]], np.float32)}
    inits = {"d": np.array(4, I64), "v": np.array([-1.0, 2.0], np.float32)}
    got = run_model(node_model("OneHot", x, inits, opset=11, axis=1), [x["i"]])[0]
    # truncation toward zero: [[1, 0], [-1 -> 3, 9 (out of range: all off)]]; out[i, d, j] = on iff idx[i, j] == d
    want = np.full((2, 4, 2), -1.0, np.float32)
    want[0, 1, 0] = want[0, 0, 1] = want[1, 3, 0] = 2.0
    np.testing.assert_array_equal(got, want)


def test_onehot_int_indices() -> None:
    x = {"i": np.array([0, -1, 5, 2], I64)}
    check(node_model("OneHot", x, {"d": np.array(4, I64), "v": np.array([0.0, 1.0], np.float32)}, opset=11), x)


def test_compress_constant_condition() -> None:
    x = {"x": rand(3, 4)}
    check(node_model("Compress", x, {"c": np.array([True, False, True, True])}, axis=1), x)


def test_nonzero_dynamic_unsupported() -> None:
    x = {"x": rand(3)}
    with pytest.raises(FrontendError, match=r"input 0 \(X\) must be a constant .*: the output shape depends on its "
                                            r"values .*graph input 'x'"):
        run_model(node_model("NonZero", x, out_type=TensorProto.INT64), [x["x"]], specialize=False)
    got = run_model(node_model("NonZero", x, out_type=TensorProto.INT64), [x["x"]])[0]  # bound: folds
    assert got.dtype == np.int64
    np.testing.assert_array_equal(got, np.array(np.nonzero(x["x"])))


@pytest.mark.parametrize("exclusive,reverse", [(0, 0), (1, 0), (0, 1), (1, 1)])
def test_cumsum(exclusive: int, reverse: int) -> None:
    x = {"x": rand(3, 7)}
    check(node_model("CumSum", x, {"a": np.array(1, I64)}, exclusive=exclusive, reverse=reverse), x)
    xi = {"x": RNG.integers(-100, 100, (5, 2)).astype(np.int32)}
    check(node_model("CumSum", xi, {"a": np.array(0, I64)}, out_type=TensorProto.INT32,
                     exclusive=exclusive, reverse=reverse), xi)


# ---- resize ---------------------------------------------------------------------------------


@pytest.mark.parametrize("mode,ctm,nearest,scales", [
    ("nearest", "half_pixel", "round_prefer_floor", [1, 1, 2, 3]),
    ("nearest", "asymmetric", "floor", [1, 1, 2, 2]),
    ("nearest", "align_corners", "round_prefer_ceil", [1, 1, 1.5, 2.5]),
    ("nearest", "half_pixel", "ceil", [1, 1, 3, 2]),
    ("linear", "half_pixel", None, [1, 1, 2, 2]),
    ("linear", "align_corners", None, [1, 1, 2, 3]),
    ("linear", "asymmetric", None, [1, 1, 4, 2]),
    ("linear", "pytorch_half_pixel", None, [1, 1, 2, 0.5]),
])
def test_resize_scales(mode: str, ctm: str, nearest: str | None, scales: list[float]) -> None:
    x = {"x": rand(2, 3, 4, 4)}
    attrs: dict[str, Any] = {"mode": mode, "coordinate_transformation_mode": ctm}
    if nearest:
        attrs["nearest_mode"] = nearest
    inits = {"roi": np.zeros(0, np.float32), "s": np.array(scales, np.float32)}
    model = node_model("Resize", x, inits, opset=13, **attrs)
    check(model, x)
    assert "tosa.resize" in ir_of(model, x)


def test_resize_sizes_linear() -> None:
    x = {"x": rand(1, 2, 3, 5)}
    inits = {"roi": np.zeros(0, np.float32), "s": np.zeros(0, np.float32), "z": np.array([1, 2, 7, 9], I64)}
    check(node_model("Resize", x, inits, opset=13, mode="linear"), x)


def test_resize_cubic_of_int8_is_unsupported() -> None:
    x = {"x": RNG.integers(-128, 128, (1, 1, 4, 4)).astype(np.int8)}
    inits = {"roi": np.zeros(0, np.float32), "s": np.array([1, 1, 2, 2], np.float32)}
    with pytest.raises(FrontendError, match="float32 data, not i8"):
        run_model(node_model("Resize", x, inits, opset=13, mode="cubic", out_type=TensorProto.INT8), [x["x"]])


def test_upsample_opset9() -> None:
    x = {"x": rand(1, 2, 2, 3)}
    # Upsample (asymmetric, floor): output[i, j] = x[floor(i / 2), floor(j / 3)]
    got = run_model(node_model("Upsample", x, {"s": np.array([1, 1, 2, 3], np.float32)}, opset=9), [x["x"]])[0]
    np.testing.assert_array_equal(got, np.repeat(np.repeat(x["x"], 2, axis=2), 3, axis=3))


# ---- reductions -----------------------------------------------------------------------------


REDUCE_OPS = ["ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2",
              "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare"]


@pytest.mark.parametrize("op", REDUCE_OPS)
@pytest.mark.parametrize("keepdims", [0, 1])
def test_reduce_axes_input(op: str, keepdims: int) -> None:
    x = {"x": np.abs(rand(3, 4, 5)) + 0.5}
    check(node_model(op, x, {"a": np.array([2, 0], I64)}, keepdims=keepdims), x, rtol=1e-4)


@pytest.mark.parametrize("op", REDUCE_OPS)
def test_reduce_axes_attribute_rank5(op: str) -> None:
    x = {"x": np.abs(rand(2, 3, 2, 2, 3)) + 0.5}
    check(node_model(op, x, opset=11 if op != "ReduceSum" else 11, axes=[1, -1], keepdims=0), x, rtol=1e-4)


def test_reduce_all_axes_and_noop() -> None:
    x = {"x": rand(3, 4)}
    check(node_model("ReduceMean", x), x)
    model = node_model("ReduceSum", x, {"a": np.zeros(0, I64)}, opset=13, noop_with_empty_axes=1)
    np.testing.assert_array_equal(run_model(model, [x["x"]])[0], x["x"])


def test_reduce_int32_sum_and_bool_max() -> None:
    xi = {"x": RNG.integers(-50, 50, (3, 4)).astype(np.int32)}
    check(node_model("ReduceSum", xi, {"a": np.array([1], I64)}, opset=13, out_type=TensorProto.INT32), xi)
    xb = {"x": np.array([[True, False], [False, False]])}
    got = run_model(node_model("ReduceMax", xb, {"a": np.array([1], I64)}, opset=20, out_type=TensorProto.BOOL),
                    [xb["x"]])[0]
    assert got.tolist() == [[True], [False]]


@pytest.mark.parametrize("op", ["ArgMax", "ArgMin"])
@pytest.mark.parametrize("last", [0, 1])
@pytest.mark.parametrize("keepdims", [0, 1])
def test_argmax_argmin(op: str, last: int, keepdims: int) -> None:
    x = {"x": np.array([[1, 3, 3, 0], [2, 2, -1, -1], [5, 5, 5, 5]], np.float32)}
    check(node_model(op, x, out_type=TensorProto.INT64, axis=1, keepdims=keepdims, select_last_index=last), x)


def test_argmin_int8_extremes() -> None:
    # BITWISE_NOT reverses the int8 order exactly, including -128 and 127
    x = {"x": np.array([[127, -128, -127, -128], [0, 1, -1, 0]], np.int8)}
    check(node_model("ArgMin", x, out_type=TensorProto.INT64, axis=1), x)


def test_argmax_rank5_last_index() -> None:
    x = {"x": RNG.integers(0, 3, (2, 3, 2, 4, 2)).astype(np.float32)}
    check(node_model("ArgMax", x, out_type=TensorProto.INT64, axis=3, keepdims=0, select_last_index=1), x)


@pytest.mark.parametrize("ctm,nearest", [("asymmetric", "floor"), ("half_pixel", "round_prefer_floor"),
                                         ("align_corners", "round_prefer_ceil")])
def test_resize_nearest_int8(ctm: str, nearest: str) -> None:
    x = {"x": RNG.integers(-128, 128, (1, 2, 3, 4)).astype(np.int8)}
    inits = {"roi": np.zeros(0, np.float32), "s": np.array([1, 1, 2, 1.5], np.float32)}
    model = node_model("Resize", x, inits, opset=13, out_type=TensorProto.INT8, mode="nearest",
                       coordinate_transformation_mode=ctm, nearest_mode=nearest)
    check(model, x)
    assert "shift = 11" in ir_of(model, x)
