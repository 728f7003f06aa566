"""Fast kernels with fused epilogues (kernels.conv, kernels.epilogue, fast) against the reference kernels.

Expected values: the reference interpreter's kernels (nnkiln.reference: the spec's pseudocode) applied
one op at a time, as the unfused graph would. Float GEMM paths: 1e-5 relative; depthwise, elementwise
chains and reductions: identical (same float32 operations in the same order).
"""

from __future__ import annotations

import numpy as np
import pytest

from nnkiln.blob.writer import BlobBuilder, encode
from nnkiln.kinds import Kind
from nnkiln.reference import tensor_ops
from nnkiln.reference.registry import KernelCall, load_kernels
from nnkiln.runtime import load_blob
from nnkiln.runtime.kernels import conv as conv_mod

F = Kind.F32
RNG = np.random.default_rng(11)
KERNELS = load_kernels(with_ir=False)


def _ref(name: str, inputs: list[np.ndarray], attrs: dict, out_shape: tuple[int, ...]) -> np.ndarray:
    call = KernelCall(name=name, inputs=inputs, attrs=attrs, out_kinds=[F], out_dtypes=[np.dtype(np.float32)],
                      out_shapes=[out_shape], in_kinds=[F] * len(inputs))
    return np.asarray(KERNELS[name](call)[0])


def _run(kernel: str, ins: list[tuple[np.ndarray, bool]], out_shape: tuple[int, ...], attrs: dict,
         post_ops: list | None = None) -> np.ndarray:
    b = BlobBuilder()
    bufs, feed = [], {}
    for i, (a, const) in enumerate(ins):
        if const:
            bufs.append(b.add_const(a, F))
        else:
            bufs.append(b.add_io(f"in{i}", F, a.shape, output=False))
            feed[f"in{i}"] = a
    out = b.add_io("out", F, out_shape, output=True)
    b.add_task(kernel, bufs, [out], attrs=attrs, post_ops=post_ops or [])
    return load_blob(encode(b.finish())).run(feed)["out"]


def _close(a: np.ndarray, e: np.ndarray) -> None:
    np.testing.assert_allclose(a, e, rtol=1e-5, atol=1e-5 * max(float(np.abs(e).max()), 1e-30))


def _f(*shape: int) -> np.ndarray:
    return RNG.standard_normal(shape).astype(np.float32)


CONV = {"dilation": (1, 1), "input_zp": 0, "weight_zp": 0}


@pytest.mark.parametrize("n,hw,cin,cout,k,stride,pad", [
    (1, 20, 4, 8, 3, (1, 1), (1, 1, 1, 1)),     # blocked im2col (small weights), padded
    (2, 13, 3, 5, 3, (2, 2), (1, 0, 1, 0)),     # blocked, batch 2, stride 2, asymmetric pad
    (1, 6, 96, 256, 3, (1, 1), (1, 1, 1, 1)),   # large weights: one GEMM, weights used as a transposed view
    (1, 40, 8, 16, 1, (1, 1), (0, 0, 0, 0)),    # 1x1 direct in row blocks
    (2, 9, 8, 16, 1, (2, 2), (0, 0, 0, 0)),     # 1x1 strided: im2col
])
def test_conv2d_with_epilogue(n, hw, cin, cout, k, stride, pad) -> None:  # noqa: ANN001
    x, w, bias = _f(n, hw, hw, cin), _f(cout, k, k, cin) / np.float32(np.sqrt(k * k * cin)), _f(cout)
    attrs = {**CONV, "pad": pad, "stride": stride}
    conv = tensor_ops.conv2d(x, w, bias, pad, stride, (1, 1), out_kind=F)
    res, scale = _f(*conv.shape), _f(1, 1, 1, cout)
    expected = _ref("tosa.add", [conv, res], {}, conv.shape)
    expected = _ref("tosa.mul", [expected, scale], {"shift": 0}, conv.shape)
    expected = _ref("tosa.clamp", [expected], {"min_val": -0.5, "max_val": 0.75}, conv.shape)
    got = _run("tosa.conv2d", [(x, False), (w, True), (bias, True), (res, False), (scale, True)], conv.shape, attrs,
               [{"kernel": "tosa.add", "attrs": {}, "operand": 3},
                {"kernel": "tosa.mul", "attrs": {"shift": 0}, "operand": 4},
                {"kernel": "tosa.clamp", "attrs": {"min_val": -0.5, "max_val": 0.75}}])
    _close(got, expected)


@pytest.mark.parametrize("m,stride,pad", [(1, (1, 1), (1, 1, 1, 1)), (1, (2, 2), (0, 1, 0, 1)), (2, (2, 1), (1, 1, 0, 1))])
def test_depthwise_matches_reference(m, stride, pad) -> None:  # noqa: ANN001
    x, w = _f(2, 9, 8, 6), _f(3, 3, 6, m)
    bias = _f(6 * m)
    expected = tensor_ops.depthwise_conv2d(x, w, bias, pad, stride, (1, 1), out_kind=F)
    relu6 = _ref("tosa.clamp", [expected], {"min_val": 0.0, "max_val": 6.0}, expected.shape)
    got = _run("tosa.depthwise_conv2d", [(x, False), (w, True), (bias, True)], expected.shape,
               {**CONV, "pad": pad, "stride": stride}, [{"kernel": "tosa.clamp", "attrs": {"min_val": 0.0, "max_val": 6.0}}])
    _close(got, relu6)  # fused multiply-adds in the native kernel


def test_elementwise_chain_matches_reference() -> None:
    """mul(x, row[.,1]) -> add(channel const) -> sub(full) -> exp -> rsqrt -> reciprocal -> tanh, in blocks."""
    rows, c = 300, 512  # 153600 elements: several blocks of 64 Ki elements
    x, r, ch, full = _f(rows, c), _f(rows, 1), _f(1, c), _f(rows, c)
    e = _ref("tosa.mul", [x, r], {"shift": 0}, (rows, c))
    e = _ref("tosa.add", [e, ch], {}, (rows, c))
    e = _ref("tosa.sub", [e, full], {}, (rows, c))
    for name in ("tosa.exp", "tosa.rsqrt", "tosa.reciprocal", "tosa.tanh"):
        e = _ref(name, [e], {}, (rows, c))
    got = _run("tosa.mul", [(x, False), (r, False), (ch, True), (full, False)], (rows, c), {"shift": 0},
               [{"kernel": "tosa.add", "attrs": {}, "operand": 2}, {"kernel": "tosa.sub", "attrs": {}, "operand": 3},
                {"kernel": "tosa.exp", "attrs": {}}, {"kernel": "tosa.rsqrt", "attrs": {}},
                {"kernel": "tosa.reciprocal", "attrs": {}}, {"kernel": "tosa.tanh", "attrs": {}}])
    # native EXP/TANH (C expf/tanhf) may round an ulp away from numpy's; the contract is 1e-5 relative
    np.testing.assert_allclose(got, e, rtol=2e-6, atol=0)


def test_matmul_bias_epilogue_and_reductions() -> None:
    a, b, bias = _f(1, 7, 5), _f(1, 5, 9), _f(1, 1, 9)
    mm = _ref("tosa.matmul", [a, b], {"A_zp": 0, "B_zp": 0}, (1, 7, 9))
    expected = _ref("tosa.add", [mm, bias], {}, (1, 7, 9))
    got = _run("tosa.matmul", [(a, False), (b, True), (bias, True)], (1, 7, 9), {"A_zp": 0, "B_zp": 0},
               [{"kernel": "tosa.add", "attrs": {}, "operand": 2}])
    _close(got, expected)
    # identical to the reference for every axis, also where the fast path views the input as 2-D (a
    # leading size-1 block: the global average pool's [1, 49, 1280]) or the axis is the contiguous one
    for x in (_f(3, 40, 7), _f(1, 49, 130) * 100, _f(2, 3, 4, 33)):
        for name in ("tosa.reduce_sum", "tosa.reduce_max", "tosa.reduce_min"):
            for axis in range(x.ndim):
                shape = tuple(1 if i == axis else d for i, d in enumerate(x.shape))
                np.testing.assert_array_equal(_run(name, [(x, False)], shape, {"axis": axis}),
                                              _ref(name, [x], {"axis": axis}, shape))


def test_clamp_propagates_nan_and_keeps_inf_bounds() -> None:
    x = np.array([[np.nan, -np.inf, -1.0, 0.5, 7.0, np.inf]], np.float32)
    for lo, hi in ((0.0, 6.0), (0.0, float("inf")), (float("-inf"), 1.0)):
        attrs = {"min_val": lo, "max_val": hi}
        expected = _ref("tosa.clamp", [x], attrs, x.shape)
        np.testing.assert_array_equal(_run("tosa.clamp", [(x, False)], x.shape, attrs), expected)
        # as a fused post-op of an elementwise producer
        got = _run("tosa.abs", [(x, False)], x.shape, {}, [{"kernel": "tosa.clamp", "attrs": attrs}])
        np.testing.assert_array_equal(got, _ref("tosa.clamp", [_ref("tosa.abs", [x], {}, x.shape)], attrs, x.shape))


def test_scratch_is_reused_per_thread() -> None:
    a = conv_mod.scratch(100)
    b = conv_mod.scratch(50)
    assert b is a and a.size >= 100
