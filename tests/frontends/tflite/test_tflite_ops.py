"""Float lowerings of TFLite ops the generated test models do not contain, on one-operator models built in the
test (``tflite_builder``), against numpy's definition of each op (TFLite's semantics), through the reference
interpreter and the compiled program (rtol/atol 1e-5 unless stated)."""

from __future__ import annotations

import math
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import nnkiln
import nnkiln.reference

sys.path.insert(0, str(Path(__file__).resolve().parent))
from tflite_builder import build_model  # noqa: E402

RNG = np.random.default_rng(0)
F32 = np.float32


def _run(tmp_path: Path, op: str, inputs: list[tuple[str, Any]], outputs: list[tuple[str, list[int], Any]],
         feeds: dict[str, np.ndarray], options: tuple[str, dict[str, Any]] | None = None) -> list[np.ndarray]:
    path = tmp_path / f"{op.lower()}.tflite"
    path.write_bytes(build_model(op, inputs, outputs, options))
    module = nnkiln.load(str(path))
    ref = nnkiln.reference.run(module, feeds)
    comp = nnkiln.compile(module).run(feeds)
    names = [n for n, _, _ in outputs]
    for n in names:
        np.testing.assert_allclose(np.asarray(comp[n]), np.asarray(ref[n]), rtol=1e-5, atol=1e-5)
    return [np.asarray(ref[n]) for n in names]


def _x(*shape: int) -> np.ndarray:
    return RNG.uniform(-2, 2, shape).astype(F32)


def test_pack_unpack(tmp_path: Path) -> None:
    a, b = _x(2, 3), _x(2, 3)
    (y,) = _run(tmp_path, "PACK", [("a", ((2, 3), F32)), ("b", ((2, 3), F32))], [("y", [2, 2, 3], F32)],
                {"a": a, "b": b}, ("PackOptions", {"ValuesCount": 2, "Axis": 1}))
    np.testing.assert_array_equal(y, np.stack([a, b], axis=1))
    u = _run(tmp_path, "UNPACK", [("x", ((2, 3), F32))], [("u0", [2], F32), ("u1", [2], F32), ("u2", [2], F32)],
             {"x": a}, ("UnpackOptions", {"Num": 3, "Axis": 1}))
    for i in range(3):
        np.testing.assert_array_equal(u[i], a[:, i])


def test_gather(tmp_path: Path) -> None:
    x = _x(4, 5, 3)
    idx = np.array([3, 0, -1, 2], np.int32)
    (y,) = _run(tmp_path, "GATHER", [("x", ((4, 5, 3), F32)), ("i", idx)], [("y", [4, 4, 3], F32)], {"x": x},
                ("GatherOptions", {"Axis": 1}))
    np.testing.assert_array_equal(y, np.take(x, idx, axis=1))


@pytest.mark.parametrize("mode,npmode", [(0, "reflect"), (1, "symmetric")])
def test_mirror_pad(tmp_path: Path, mode: int, npmode: str) -> None:
    x = _x(1, 4, 5, 2)
    pads = np.array([[0, 0], [2, 1], [1, 2], [0, 0]], np.int32)
    (y,) = _run(tmp_path, "MIRROR_PAD", [("x", ((1, 4, 5, 2), F32)), ("p", pads)], [("y", [1, 7, 8, 2], F32)],
                {"x": x}, ("MirrorPadOptions", {"Mode": mode}))
    np.testing.assert_array_equal(y, np.pad(x, pads, mode=npmode))


def test_space_depth(tmp_path: Path) -> None:
    x = _x(1, 4, 6, 3)
    (y,) = _run(tmp_path, "SPACE_TO_DEPTH", [("x", ((1, 4, 6, 3), F32))], [("y", [1, 2, 3, 12], F32)], {"x": x},
                ("SpaceToDepthOptions", {"BlockSize": 2}))
    want = x.reshape(1, 2, 2, 3, 2, 3).transpose(0, 1, 3, 2, 4, 5).reshape(1, 2, 3, 12)
    np.testing.assert_array_equal(y, want)
    (z,) = _run(tmp_path, "DEPTH_TO_SPACE", [("x", ((1, 2, 3, 12), F32))], [("y", [1, 4, 6, 3], F32)], {"x": y},
                ("DepthToSpaceOptions", {"BlockSize": 2}))
    np.testing.assert_array_equal(z, x)


def test_strided_slice(tmp_path: Path) -> None:
    x = _x(1, 7, 6, 4)
    begin, end, strides = [np.array(v, np.int32) for v in ([0, 1, 5, 0], [1, 7, 0, 3], [1, 2, -2, 1])]
    want = x[0:1, 1:7:2, 5:0:-2, 0:3]
    (y,) = _run(tmp_path, "STRIDED_SLICE", [("x", ((1, 7, 6, 4), F32)), ("b", begin), ("e", end), ("s", strides)],
                [("y", list(want.shape), F32)], {"x": x}, ("StridedSliceOptions", {}))
    np.testing.assert_array_equal(y, want)
    want2 = x[:, 2, :, 1:]  # shrink axis 1, begin mask on axes 0 and 2
    begin2, end2, s2 = [np.array(v, np.int32) for v in ([5, 2, 3, 1], [1, 3, 0, 4], [1, 1, 1, 1])]
    (y2,) = _run(tmp_path, "STRIDED_SLICE", [("x", ((1, 7, 6, 4), F32)), ("b", begin2), ("e", end2), ("s", s2)],
                 [("y", list(want2.shape), F32)], {"x": x},
                 ("StridedSliceOptions", {"BeginMask": 0b0101, "EndMask": 0b0100, "ShrinkAxisMask": 0b0010}))
    np.testing.assert_array_equal(y2, want2)


def test_activations(tmp_path: Path) -> None:
    x = _x(2, 9)
    (y,) = _run(tmp_path, "LOG_SOFTMAX", [("x", ((2, 9), F32))], [("y", [2, 9], F32)], {"x": x})
    e = x.astype(np.float64) - x.max(-1, keepdims=True)
    np.testing.assert_allclose(y, e - np.log(np.exp(e).sum(-1, keepdims=True)), rtol=1e-5, atol=1e-5)
    (y,) = _run(tmp_path, "ELU", [("x", ((2, 9), F32))], [("y", [2, 9], F32)], {"x": x})
    np.testing.assert_allclose(y, np.where(x > 0, x, np.expm1(x)), rtol=1e-5, atol=1e-5)
    (y,) = _run(tmp_path, "HARD_SWISH", [("x", ((2, 9), F32))], [("y", [2, 9], F32)], {"x": x * 3})
    np.testing.assert_allclose(y, 3 * x * np.clip(3 * x + 3, 0, 6) / 6, rtol=1e-5, atol=1e-5)
    alpha = RNG.uniform(0, 0.5, (9,)).astype(F32)
    (y,) = _run(tmp_path, "PRELU", [("x", ((2, 9), F32)), ("a", alpha)], [("y", [2, 9], F32)], {"x": x})
    np.testing.assert_allclose(y, np.where(x >= 0, x, alpha * x), rtol=1e-6)
    erf = np.vectorize(math.erf)
    (y,) = _run(tmp_path, "GELU", [("x", ((2, 9), F32))], [("y", [2, 9], F32)], {"x": x}, ("GeluOptions", {}))
    np.testing.assert_allclose(y, 0.5 * x * (1 + erf(x / math.sqrt(2))), rtol=1e-4, atol=1e-5)


def test_arg_max_min(tmp_path: Path) -> None:
    x = _x(3, 7)
    axis = np.array([1], np.int32)
    (y,) = _run(tmp_path, "ARG_MAX", [("x", ((3, 7), F32)), ("a", axis)], [("y", [3], np.int32)], {"x": x},
                ("ArgMaxOptions", {"OutputType": 2}))
    np.testing.assert_array_equal(y, x.argmax(1))
    (y,) = _run(tmp_path, "ARG_MIN", [("x", ((3, 7), F32)), ("a", axis)], [("y", [3], np.int32)], {"x": x},
                ("ArgMinOptions", {"OutputType": 2}))
    np.testing.assert_array_equal(y, x.argmin(1))


def test_select_cast_tile_reverse(tmp_path: Path) -> None:
    c = RNG.uniform(size=(2, 5)) > 0.5
    a, b = _x(2, 5), _x(1, 5)
    (y,) = _run(tmp_path, "SELECT_V2", [("c", ((2, 5), np.bool_)), ("a", ((2, 5), F32)), ("b", ((1, 5), F32))],
                [("y", [2, 5], F32)], {"c": c, "a": a, "b": b})
    np.testing.assert_array_equal(y, np.where(c, a, b))
    (y,) = _run(tmp_path, "CAST", [("x", ((2, 5), F32))], [("y", [2, 5], np.int32)], {"x": a * 3})
    np.testing.assert_array_equal(y, np.trunc(a * 3).astype(np.int32))
    (y,) = _run(tmp_path, "TILE", [("x", ((2, 5), F32)), ("m", np.array([2, 3], np.int32))],
                [("y", [4, 15], F32)], {"x": a})
    np.testing.assert_array_equal(y, np.tile(a, (2, 3)))
    (y,) = _run(tmp_path, "REVERSE_V2", [("x", ((2, 5), F32)), ("ax", np.array([1], np.int32))],
                [("y", [2, 5], F32)], {"x": a})
    np.testing.assert_array_equal(y, a[:, ::-1])


def test_reductions_and_math(tmp_path: Path) -> None:
    x = _x(2, 3, 4)
    ax = np.array([0, 2], np.int32)
    for op, fn in (("SUM", np.sum), ("REDUCE_MAX", np.max), ("REDUCE_MIN", np.min), ("REDUCE_PROD", np.prod)):
        (y,) = _run(tmp_path, op, [("x", ((2, 3, 4), F32)), ("a", ax)], [("y", [3], F32)], {"x": x},
                    ("ReducerOptions", {"KeepDims": False}))
        np.testing.assert_allclose(y, fn(x, axis=(0, 2)), rtol=1e-5, atol=1e-6)
    b = _x(2, 3, 4) + 3
    (y,) = _run(tmp_path, "DIV", [("x", ((2, 3, 4), F32)), ("b", ((2, 3, 4), F32))], [("y", [2, 3, 4], F32)],
                {"x": x, "b": b}, ("DivOptions", {}))
    np.testing.assert_allclose(y, x / b, rtol=1e-5)
    (y,) = _run(tmp_path, "SQRT", [("x", ((2, 3, 4), F32))], [("y", [2, 3, 4], F32)], {"x": np.abs(x)})
    np.testing.assert_allclose(y, np.sqrt(np.abs(x)), rtol=1e-5)


def test_space_batch_cumsum_l2norm(tmp_path: Path) -> None:
    x = _x(1, 4, 6, 3)
    pads = np.array([[1, 1], [0, 2]], np.int32)
    (y,) = _run(tmp_path, "SPACE_TO_BATCH_ND", [("x", ((1, 4, 6, 3), F32)), ("b", np.array([2, 2], np.int32)),
                                                ("p", pads)], [("y", [4, 3, 4, 3], F32)], {"x": x})
    xp = np.pad(x, [(0, 0), (1, 1), (0, 2), (0, 0)])
    want = xp.reshape(1, 3, 2, 4, 2, 3).transpose(2, 4, 0, 1, 3, 5).reshape(4, 3, 4, 3)
    np.testing.assert_array_equal(y, want)
    (z,) = _run(tmp_path, "BATCH_TO_SPACE_ND", [("y", ((4, 3, 4, 3), F32)), ("b", np.array([2, 2], np.int32)),
                                                ("c", pads)], [("z", [1, 4, 6, 3], F32)], {"y": want})
    np.testing.assert_array_equal(z, x)
    c = _x(2, 5, 3)
    for rev, excl in ((False, False), (True, True)):
        (y,) = _run(tmp_path, "CUMSUM", [("x", ((2, 5, 3), F32)), ("a", np.array([1], np.int32))],
                    [("y", [2, 5, 3], F32)], {"x": c}, ("CumsumOptions", {"Exclusive": excl, "Reverse": rev}))
        src = c[:, ::-1] if rev else c
        ref = np.cumsum(src, axis=1) - (src if excl else 0)
        np.testing.assert_allclose(y, ref[:, ::-1] if rev else ref, rtol=1e-5, atol=1e-5)
    (y,) = _run(tmp_path, "L2_NORMALIZATION", [("x", ((2, 5, 3), F32))], [("y", [2, 5, 3], F32)], {"x": c},
                ("L2NormOptions", {}))
    np.testing.assert_allclose(y, c / np.linalg.norm(c, axis=-1, keepdims=True), rtol=1e-5, atol=1e-6)


def test_int64_output_declared(tmp_path: Path) -> None:
    """ARG_MAX with TFLite's default int64 output: computed in int32, returned as int64."""
    x = _x(3, 7)
    (y,) = _run(tmp_path, "ARG_MAX", [("x", ((3, 7), F32)), ("a", np.array([1], np.int32))], [("y", [3], np.int64)],
                {"x": x}, ("ArgMaxOptions", {"OutputType": 4}))
    assert y.dtype == np.int64
    np.testing.assert_array_equal(y, x.argmax(1))


def _np_gather_nd(params: np.ndarray, indices: np.ndarray) -> np.ndarray:
    """TFLite gather_nd (batch_dims 0), written independently of the lowering."""
    q = indices.shape[-1]
    flat = indices.reshape(-1, q)
    rows = [params[tuple(int(v) for v in t)] for t in flat]
    return np.array(rows, dtype=params.dtype).reshape(indices.shape[:-1] + params.shape[q:])


def _gather_nd_case(tmp_path: Path, params: np.ndarray, idx: np.ndarray, runtime: bool) -> None:
    want = _np_gather_nd(params, idx)
    ind_in: Any = ("i", (idx.shape, idx.dtype)) if runtime else ("i", idx)
    feeds = {"x": params, **({"i": idx} if runtime else {})}
    path = tmp_path / "gather_nd.tflite"
    path.write_bytes(build_model("GATHER_ND", [("x", (params.shape, params.dtype)), ind_in],
                                 [("y", list(want.shape), params.dtype)]))
    module = nnkiln.load(str(path))
    for got in (nnkiln.reference.run(module, feeds)["y"], nnkiln.compile(module).run(feeds)["y"]):
        got = np.asarray(got)
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("runtime", [False, True])
@pytest.mark.parametrize("dtype", [F32, np.int32, np.int8])
@pytest.mark.parametrize("idx_dtype", [np.int32, np.int64])
def test_gather_nd(tmp_path: Path, runtime: bool, dtype: Any, idx_dtype: Any) -> None:
    params = (_x(3, 4, 2) * 50).astype(dtype)
    idx = np.array([[[0, 1], [2, 3]], [[1, 0], [2, 2]]], idx_dtype)  # [2, 2, 2]: rows of shape [2]
    _gather_nd_case(tmp_path, params, idx, runtime)


@pytest.mark.parametrize("runtime", [False, True])
def test_gather_nd_full_and_leading(tmp_path: Path, runtime: bool) -> None:
    params = _x(2, 3, 4)
    _gather_nd_case(tmp_path, params, np.array([[1, 2, 3], [0, 0, 1], [1, 1, 0]], np.int32), runtime)  # scalars
    _gather_nd_case(tmp_path, params, np.array([[1], [0], [1], [1]], np.int32), runtime)  # whole [3, 4] slices


def test_gather_nd_bool_and_errors(tmp_path: Path) -> None:
    params = RNG.uniform(-1, 1, (3, 4)) > 0
    _gather_nd_case(tmp_path, params, np.array([[2, 1], [0, 3]], np.int32), runtime=False)
    path = tmp_path / "bad.tflite"
    path.write_bytes(build_model("GATHER_ND", [("x", ((3, 4), F32)), ("i", np.array([[3]], np.int32))],
                                 [("y", [1, 4], F32)]))
    with pytest.raises(nnkiln.errors.FrontendError, match="outside"):
        nnkiln.load(str(path))
    path.write_bytes(build_model("GATHER_ND", [("x", ((3, 4), F32)), ("i", ((1, 2), np.int32))],
                                 [("y", [1], F32)]))
    module = nnkiln.load(str(path))
    with pytest.raises(Exception):  # noqa: B017 - the GATHER's REQUIRE (an index outside its extent)
        nnkiln.reference.run(module, {"x": _x(3, 4), "i": np.array([[1, 4]], np.int32)})
