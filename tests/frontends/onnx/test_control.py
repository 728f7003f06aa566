"""Control flow lowerings (control.py): If → tosa.cond_if, Loop → tosa.while_loop, compared with
onnxruntime; outer-scope values captured by sub-graphs become explicit region inputs."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto as TP
from onnx import helper as oh
from onnx import numpy_helper as nh

ort = pytest.importorskip("onnxruntime")

from nnkiln.ir.errors import FrontendError  # noqa: E402
from nnkiln.ir.text import parse_module, print_module  # noqa: E402
from nnkiln.onnx_backend import import_model_proto  # noqa: E402
from nnkiln.reference import run  # noqa: E402


def _model(nodes, inputs, outputs, inits=(), opset=17):
    g = oh.make_graph(nodes, "m", inputs, outputs, list(inits))
    m = oh.make_model(g, opset_imports=[oh.make_opsetid("", opset)])
    m.ir_version = 10
    onnx.checker.check_model(m)
    return m


def _both(m, feeds):
    module = import_model_proto(m, list(feeds.values()))
    text = print_module(module)
    assert print_module(parse_module(text)) == text  # regions print → parse → print stably
    outs = run(module, feeds)
    ours = [outs[o.name] for o in m.graph.output]
    ref = ort.InferenceSession(m.SerializeToString()).run(None, feeds)
    return ours, ref, text


def _vi(name, t, shape):
    return oh.make_tensor_value_info(name, t, shape)


def _if_model():
    then_g = oh.make_graph([oh.make_node("Add", ["x", "k"], ["t"])], "then", [], [_vi("t", TP.FLOAT, [2, 3])],
                           [nh.from_array(np.full((2, 3), 10.0, np.float32), "k")])
    else_g = oh.make_graph([oh.make_node("Mul", ["x", "y"], ["e"])], "else", [], [_vi("e", TP.FLOAT, [2, 3])])
    return _model([oh.make_node("If", ["c"], ["o"], then_branch=then_g, else_branch=else_g)],
                  [_vi("c", TP.BOOL, []), _vi("x", TP.FLOAT, [2, 3]), _vi("y", TP.FLOAT, [2, 3])],
                  [_vi("o", TP.FLOAT, [2, 3])])


@pytest.mark.parametrize("cond", [True, False])
def test_if_with_captured_outer_values(cond):
    m = _if_model()
    rng = np.random.default_rng(0)
    feeds = {"c": np.array(cond), "x": rng.standard_normal((2, 3)).astype(np.float32),
             "y": rng.standard_normal((2, 3)).astype(np.float32)}
    (ours,), (ref,), text = _both(m, feeds)
    np.testing.assert_allclose(ours, ref, rtol=1e-6)
    assert "tosa.cond_if" in text
    # x and y are read by the branches: they are the cond_if's input list, the condition comes last
    line = next(ln for ln in text.splitlines() if "tosa.cond_if" in ln)
    assert "%x, %y, %c" in line


def test_if_constant_condition_is_inlined():
    then_g = oh.make_graph([oh.make_node("Neg", ["x"], ["t"])], "then", [], [_vi("t", TP.FLOAT, [3])])
    else_g = oh.make_graph([oh.make_node("Abs", ["x"], ["e"])], "else", [], [_vi("e", TP.FLOAT, [3])])
    m = _model([oh.make_node("If", ["c"], ["o"], then_branch=then_g, else_branch=else_g)],
               [_vi("x", TP.FLOAT, [3])], [_vi("o", TP.FLOAT, [3])], [nh.from_array(np.array(False), "c")])
    (ours,), (ref,), text = _both(m, {"x": np.array([-1.0, 2.0, -3.0], np.float32)})
    assert ours.tolist() == [1.0, 2.0, 3.0] == ref.tolist()
    assert "cond_if" not in text


def test_if_branches_of_different_shapes_are_not_supported():
    then_g = oh.make_graph([oh.make_node("Constant", [], ["t"], value=nh.from_array(np.zeros(2, np.float32)))],
                           "then", [], [_vi("t", TP.FLOAT, [2])])
    else_g = oh.make_graph([oh.make_node("Constant", [], ["e"], value=nh.from_array(np.zeros(3, np.float32)))],
                           "else", [], [_vi("e", TP.FLOAT, [3])])
    m = _model([oh.make_node("If", ["c"], ["o"], then_branch=then_g, else_branch=else_g)],
               [_vi("c", TP.BOOL, [])], [_vi("o", TP.FLOAT, [2])])
    with pytest.raises(FrontendError, match="not supported"):
        import_model_proto(m, [np.array(True)])


def _loop_model(with_trip: bool, with_cond: bool):
    # body: y' = y + x (x from the outer scope); s' = s + iter; cond' = y'[0] < limit
    body = oh.make_graph(
        [oh.make_node("Add", ["y_in", "x"], ["y_out"]),
         oh.make_node("Cast", ["i"], ["i32"], to=TP.INT32),
         oh.make_node("Add", ["s_in", "i32"], ["s_out"]),
         oh.make_node("ReduceSum", ["y_out"], ["tot"], keepdims=0),
         oh.make_node("Less", ["tot", "limit"], ["cond_out"])],
        "body", [_vi("i", TP.INT64, []), _vi("cond_in", TP.BOOL, []), _vi("y_in", TP.FLOAT, [2]),
                 _vi("s_in", TP.INT32, [])],
        [_vi("cond_out", TP.BOOL, []), _vi("y_out", TP.FLOAT, [2]), _vi("s_out", TP.INT32, [])])
    ins = ["M" if with_trip else "", "c" if with_cond else "", "y0", "s0"]
    inputs = [_vi("x", TP.FLOAT, [2]), _vi("y0", TP.FLOAT, [2]), _vi("limit", TP.FLOAT, [])]
    if with_trip:
        inputs.append(_vi("M", TP.INT64, []))
    if with_cond:
        inputs.append(_vi("c", TP.BOOL, []))
    return _model([oh.make_node("Loop", ins, ["y", "s"], body=body)], inputs,
                  [_vi("y", TP.FLOAT, [2]), _vi("s", TP.INT32, [])], [nh.from_array(np.array(0, np.int32), "s0")])


@pytest.mark.parametrize("with_trip,with_cond,trip,limit", [
    (True, True, 5, 100.0),   # trip count ends the loop
    (True, True, 50, 7.0),    # the condition ends the loop
    (True, True, 0, 100.0),   # zero iterations
    (False, True, 0, 9.0),    # condition only
    (True, False, 4, 0.0),    # no cond input: the body's cond_out still stops the loop (ONNX reference, ORT)
    (True, False, 4, 100.0),  # no cond input, trip count ends the loop
])
def test_loop_matches_onnxruntime(with_trip, with_cond, trip, limit):
    m = _loop_model(with_trip, with_cond)
    feeds = {"x": np.array([1.0, 0.5], np.float32), "y0": np.array([0.0, 1.0], np.float32),
             "limit": np.array(limit, np.float32)}
    if with_trip:
        feeds["M"] = np.array(trip, np.int64)
    if with_cond:
        feeds["c"] = np.array(True)
    (y, s), (ry, rs), text = _both(m, feeds)
    np.testing.assert_allclose(y, ry, rtol=1e-6)
    assert int(s) == int(rs)
    assert "tosa.while_loop" in text


def test_loop_scan_outputs_are_not_supported():
    body = oh.make_graph([oh.make_node("Identity", ["cond_in"], ["cond_out"]),
                          oh.make_node("Identity", ["y_in"], ["y_out"]),
                          oh.make_node("Identity", ["y_in"], ["scan"])], "body",
                         [_vi("i", TP.INT64, []), _vi("cond_in", TP.BOOL, []), _vi("y_in", TP.FLOAT, [1])],
                         [_vi("cond_out", TP.BOOL, []), _vi("y_out", TP.FLOAT, [1]), _vi("scan", TP.FLOAT, [1])])
    m = _model([oh.make_node("Loop", ["M", "", "y"], ["yo", "so"], body=body)],
               [_vi("M", TP.INT64, []), _vi("y", TP.FLOAT, [1])], [_vi("yo", TP.FLOAT, [1]), _vi("so", TP.FLOAT, [2, 1])])
    with pytest.raises(FrontendError, match="not supported"):
        import_model_proto(m, [np.array(2, np.int64), np.zeros(1, np.float32)])


def _scan_model(in_axis: int, in_dir: int, out_axis: int, out_dir: int):
    """state s [2]; scan inputs xs [T=4 along in_axis] x 2 (float) and ks [4] (int32); a captured outer w.
    body: s' = s * 0.5 + x * w, outputs y = s' + k (float, [2]) and c = k * 2 (int32, [])."""
    body = oh.make_graph(
        [oh.make_node("Mul", ["s", "half"], ["sh"]), oh.make_node("Mul", ["x", "w"], ["xw"]),
         oh.make_node("Add", ["sh", "xw"], ["s2"]), oh.make_node("Cast", ["k"], ["kf"], to=TP.FLOAT),
         oh.make_node("Add", ["s2", "kf"], ["y"]), oh.make_node("Add", ["k", "k"], ["c"])],
        "body", [_vi("s", TP.FLOAT, [2]), _vi("x", TP.FLOAT, [2]), _vi("k", TP.INT32, [])],
        [_vi("s2", TP.FLOAT, [2]), _vi("y", TP.FLOAT, [2]), _vi("c", TP.INT32, [])],
        [nh.from_array(np.array([0.5, 0.5], np.float32), "half")])
    xs_shape = [4, 2] if in_axis == 0 else [2, 4]
    ys_shape = [4, 2] if out_axis == 0 else [2, 4]
    node = oh.make_node("Scan", ["s0", "xs", "ks"], ["fin", "ys", "cs"], body=body, num_scan_inputs=2,
                        scan_input_axes=[in_axis, 0], scan_input_directions=[in_dir, 0],
                        scan_output_axes=[out_axis, 0], scan_output_directions=[out_dir, 1])
    return _model([oh.make_node("Neg", ["w0"], ["w"]), node],
                  [_vi("s0", TP.FLOAT, [2]), _vi("xs", TP.FLOAT, xs_shape), _vi("ks", TP.INT32, [4]),
                   _vi("w0", TP.FLOAT, [2])],
                  [_vi("fin", TP.FLOAT, [2]), _vi("ys", TP.FLOAT, ys_shape), _vi("cs", TP.INT32, [4])], opset=16)


@pytest.mark.parametrize("in_axis,in_dir,out_axis,out_dir", [(0, 0, 0, 0), (1, 1, 0, 0), (0, 0, 1, 1), (1, 0, -1, 0)])
def test_scan_matches_onnxruntime(in_axis, in_dir, out_axis, out_dir):
    m = _scan_model(in_axis, in_dir, out_axis, out_dir)
    rng = np.random.default_rng(in_axis * 4 + in_dir * 2 + out_dir)
    feeds = {"s0": rng.standard_normal(2).astype(np.float32),
             "xs": rng.standard_normal((4, 2) if in_axis == 0 else (2, 4)).astype(np.float32),
             "ks": np.array([3, -1, 7, 2], np.int32), "w0": rng.standard_normal(2).astype(np.float32)}
    ours, ref, text = _both(m, feeds)
    assert "tosa.while_loop" in text and "tosa.scatter" in text and "tosa.gather" in text
    for a, b in zip(ours, ref):
        assert a.dtype == b.dtype and a.shape == b.shape
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-6)


def test_bool_scan_tensors_are_not_supported():
    sbody = oh.make_graph([oh.make_node("Identity", ["a"], ["a2"]), oh.make_node("Not", ["b"], ["o"])], "sb",
                          [_vi("a", TP.FLOAT, [2]), _vi("b", TP.BOOL, [2])], [_vi("a2", TP.FLOAT, [2]), _vi("o", TP.BOOL, [2])])
    m = _model([oh.make_node("Scan", ["init", "xs"], ["fin", "ys"], body=sbody, num_scan_inputs=1)],
               [_vi("init", TP.FLOAT, [2]), _vi("xs", TP.BOOL, [3, 2])], [_vi("fin", TP.FLOAT, [2]), _vi("ys", TP.BOOL, [3, 2])])
    with pytest.raises(FrontendError, match="bool scan tensors are not supported"):
        import_model_proto(m, [np.zeros(2, np.float32), np.zeros((3, 2), bool)])


def test_nested_if_inside_loop_captures_through_both_levels():
    inner_then = oh.make_graph([oh.make_node("Add", ["y_in", "x"], ["t"])], "t", [], [_vi("t", TP.FLOAT, [2])])
    inner_else = oh.make_graph([oh.make_node("Sub", ["y_in", "x"], ["e"])], "e", [], [_vi("e", TP.FLOAT, [2])])
    body = oh.make_graph(
        [oh.make_node("If", ["flag"], ["y_out"], then_branch=inner_then, else_branch=inner_else),
         oh.make_node("Identity", ["cond_in"], ["cond_out"])], "body",
        [_vi("i", TP.INT64, []), _vi("cond_in", TP.BOOL, []), _vi("y_in", TP.FLOAT, [2])],
        [_vi("cond_out", TP.BOOL, []), _vi("y_out", TP.FLOAT, [2])])
    m = _model([oh.make_node("Loop", ["M", "", "y0"], ["y"], body=body)],
               [_vi("M", TP.INT64, []), _vi("flag", TP.BOOL, []), _vi("x", TP.FLOAT, [2]), _vi("y0", TP.FLOAT, [2])],
               [_vi("y", TP.FLOAT, [2])])
    for flag in (True, False):
        feeds = {"M": np.array(3, np.int64), "flag": np.array(flag), "x": np.array([1.0, 2.0], np.float32),
                 "y0": np.array([0.5, 0.5], np.float32)}
        (y,), (ry,), text = _both(m, feeds)
        np.testing.assert_allclose(y, ry, rtol=1e-6)
        assert "tosa.cond_if" in text and "tosa.while_loop" in text
