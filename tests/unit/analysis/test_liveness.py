"""The memory plan does not depend on object identities: compiling the same module again gives the same blob
(every buffer's place, in the program and in the region programs of its control flow)."""

from __future__ import annotations

import json

import numpy as np
import onnx
import onnx.helper as oh
from onnx import TensorProto as TP
from onnx import numpy_helper as nh

import nnkiln
from nnkiln.blob.inspect import describe


def _vi(name: str, t: int, shape: list[int]) -> onnx.ValueInfoProto:
    return oh.make_tensor_value_info(name, t, shape)


def _loop_model() -> onnx.ModelProto:
    """y' = y + x, s' = s + i, while sum(y') < limit (at most M times)."""
    body = oh.make_graph(
        [oh.make_node("Add", ["y_in", "x"], ["y_out"]),
         oh.make_node("Cast", ["i"], ["i32"], to=TP.INT32),
         oh.make_node("Add", ["s_in", "i32"], ["s_out"]),
         oh.make_node("ReduceSum", ["y_out"], ["tot"], keepdims=0),
         oh.make_node("Less", ["tot", "limit"], ["cond_out"])],
        "body", [_vi("i", TP.INT64, []), _vi("cond_in", TP.BOOL, []), _vi("y_in", TP.FLOAT, [2]),
                 _vi("s_in", TP.INT32, [])],
        [_vi("cond_out", TP.BOOL, []), _vi("y_out", TP.FLOAT, [2]), _vi("s_out", TP.INT32, [])])
    graph = oh.make_graph(
        [oh.make_node("Loop", ["M", "c", "y0", "s0"], ["y", "s"], body=body)], "m",
        [_vi("x", TP.FLOAT, [2]), _vi("y0", TP.FLOAT, [2]), _vi("limit", TP.FLOAT, []), _vi("M", TP.INT64, []),
         _vi("c", TP.BOOL, [])],
        [_vi("y", TP.FLOAT, [2]), _vi("s", TP.INT32, [])], [nh.from_array(np.array(0, np.int32), "s0")])
    return oh.make_model(graph, opset_imports=[oh.make_opsetid("", 17)])


def _plan(described: dict) -> str:
    described.pop("metadata", None)  # compile times
    for t in described["tasks"]:
        for p in t.get("programs", []):
            p.pop("metadata", None)
    return json.dumps(described, sort_keys=True, default=str)


def test_compiles_are_identical(tmp_path) -> None:  # noqa: ANN001
    onnx.save(_loop_model(), tmp_path / "m.onnx")
    module = nnkiln.load(str(tmp_path / "m.onnx"))
    plans = {_plan(describe(nnkiln.compile(module, threads=1).blob)) for _ in range(6)}
    assert len(plans) == 1
