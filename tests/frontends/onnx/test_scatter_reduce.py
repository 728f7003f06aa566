"""ScatterElements / ScatterND with a reduction (add, mul, max, min) at run-time indices (a one-hot mask of
positions x updates, ``lowerings._scatter_reduce``): imported with nnkiln, run with the reference interpreter
and compiled, compared with onnxruntime (dtype, shape, values), with duplicate and negative indices."""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx
import pytest
from onnx import helper

from nnkiln.ir.errors import FrontendError, TosaUnpredictable
from nnkiln.onnx_backend import run_model

ort = pytest.importorskip("onnxruntime")

RNG = np.random.default_rng(2024)
REDUCTIONS = ["add", "mul", "max", "min"]


def scatter_model(op: str, data: np.ndarray, indices: np.ndarray, updates: np.ndarray, **attrs: Any
                  ) -> onnx.ModelProto:
    elem = helper.np_dtype_to_tensor_dtype(data.dtype)
    ins = [helper.make_tensor_value_info("data", elem, data.shape),
           helper.make_tensor_value_info("indices", onnx.TensorProto.INT64, indices.shape),
           helper.make_tensor_value_info("updates", elem, updates.shape)]
    out = [helper.make_tensor_value_info("y", elem, data.shape)]
    node = helper.make_node(op, ["data", "indices", "updates"], ["y"], **attrs)
    m = helper.make_model(helper.make_graph([node], "g", ins, out), opset_imports=[helper.make_opsetid("", 18)])
    m.ir_version = 10
    return m


def check(m: onnx.ModelProto, data: np.ndarray, indices: np.ndarray, updates: np.ndarray, exact: bool) -> None:
    """Reference interpreter and compiled executable against onnxruntime: dtype, shape, values (float sums and
    products of several updates may round in another order: allclose)."""
    feeds = [data, indices, updates]
    want = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"]).run(
        None, dict(zip(["data", "indices", "updates"], feeds)))[0]
    for compiled in (False, True):
        got = run_model(m, feeds, compiled=compiled)[0]
        assert got.dtype == want.dtype and got.shape == want.shape
        if exact:
            np.testing.assert_array_equal(got, want)
        else:
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def values(shape: tuple[int, ...], dtype: type) -> np.ndarray:
    if np.dtype(dtype).kind == "i":
        return RNG.integers(-4, 5, size=shape).astype(dtype)
    return RNG.uniform(-2, 2, size=shape).astype(dtype)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize(("dshape", "ishape", "axis"), [
    ((8,), (12,), 0),              # 1-D, more updates than positions: duplicates
    ((4, 5), (6, 5), 0),
    ((4, 5), (4, 7), -1),
    ((3, 4, 5), (3, 6, 5), 1),     # 3-D: the mask is [before, extent, indices' extent, after]
    ((3, 4, 5), (2, 3, 4), 2),     # indices smaller off the axis: flat positions
])
def test_scatter_elements_reduction_matches_onnxruntime(reduction: str, dshape: tuple[int, ...],
                                                         ishape: tuple[int, ...], axis: int) -> None:
    d = dshape[axis]
    indices = RNG.integers(-d, d, size=ishape).astype(np.int64)  # negative ones too, with repeats
    data, updates = values(dshape, np.float32), values(ishape, np.float32)
    m = scatter_model("ScatterElements", data, indices, updates, axis=axis, reduction=reduction)
    check(m, data, indices, updates, exact=reduction in ("max", "min"))


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_scatter_elements_reduction_of_int64_is_exact(reduction: str) -> None:
    data, updates = values((5, 3), np.int64), values((7, 3), np.int64)
    indices = RNG.integers(-5, 5, size=(7, 3)).astype(np.int64)
    m = scatter_model("ScatterElements", data, indices, updates, axis=0, reduction=reduction)
    check(m, data, indices, updates, exact=True)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize(("dshape", "ishape"), [
    ((6,), (9, 1)),             # 1-D elements
    ((4, 5, 3), (7, 2)),        # slices of 3
    ((4, 5, 3), (2, 4, 3)),     # single elements, batched index tuples
    ((5, 2), (6, 1)),           # rows
])
def test_scatter_nd_reduction_matches_onnxruntime(reduction: str, dshape: tuple[int, ...],
                                                  ishape: tuple[int, ...]) -> None:
    q = ishape[-1]
    dims = np.array(dshape[:q])
    indices = (RNG.integers(0, 2 ** 20, size=ishape) % dims).astype(np.int64)
    indices[0] = indices[-1]  # a repeated target at least
    ushape = ishape[:-1] + dshape[q:]
    data, updates = values(dshape, np.float32), values(ushape, np.float32)
    m = scatter_model("ScatterND", data, indices, updates, reduction=reduction)
    check(m, data, indices, updates, exact=reduction in ("max", "min"))


def test_scatter_nd_negative_indices_count_from_the_end() -> None:
    """ONNX's reference indexes with numpy (a negative index counts from the end)."""
    data = values((4, 3), np.float32)
    indices = np.array([[-1], [3], [0], [-4]], np.int64)
    updates = values((4, 3), np.float32)
    m = scatter_model("ScatterND", data, indices, updates, reduction="max")
    want = data.copy()
    for i, u in zip(indices[:, 0], updates):
        want[i] = np.maximum(want[i], u)
    for compiled in (False, True):
        np.testing.assert_array_equal(run_model(m, [data, indices, updates], compiled=compiled)[0], want)


def test_untouched_positions_keep_data_bit_exactly() -> None:
    """Positions no update hits keep the data (−0.0, NaN and ±inf included), whatever the reduction."""
    data = np.array([-0.0, np.nan, np.inf, -np.inf, 1.0], np.float32)
    indices = np.array([4, 4], np.int64)
    updates = np.array([2.0, 3.0], np.float32)
    for reduction, last in (("add", 6.0), ("mul", 6.0), ("max", 3.0), ("min", 1.0)):
        m = scatter_model("ScatterElements", data, indices, updates, axis=0, reduction=reduction)
        got = run_model(m, [data, indices, updates])[0]
        np.testing.assert_array_equal(got, np.array([-0.0, np.nan, np.inf, -np.inf, last], np.float32))
        assert np.signbit(got[0])


@pytest.mark.parametrize("compiled", [False, True])
def test_an_index_out_of_range_fails_at_run_time(compiled: bool) -> None:
    """The mask would drop it silently: the targets pass a GATHER whose REQUIRE rejects it."""
    data, updates, indices = values((4,), np.float32), values((2,), np.float32), np.array([0, 4], np.int64)
    m = scatter_model("ScatterElements", data, indices, updates, axis=0, reduction="add")
    with pytest.raises(TosaUnpredictable, match="tosa.gather.*REQUIRE failed: 0 <= k < K"):
        run_model(m, [data, indices, updates], compiled=compiled)


def test_a_mask_above_the_budget_is_refused_at_import() -> None:
    data, updates = np.zeros((1 << 13, 1), np.float32), np.zeros((1 << 12, 1), np.float32)
    indices = np.zeros((1 << 12, 1), np.int64)
    m = scatter_model("ScatterND", data, indices, updates, reduction="add")
    with pytest.raises(FrontendError, match="one-hot mask of .* above the limit"):
        run_model(m, [data, indices, updates])
