"""Tensor operators (spec §2.3): hand-computed cases, and comparisons with naive float64 loops
written here straight from the pseudocode (integer data, so float64 is exact)."""

from __future__ import annotations

import itertools

import ml_dtypes
import numpy as np
import pytest

from nnkiln.dialects.tosa.base import Kind
from nnkiln.ir.errors import TosaUnpredictable
from nnkiln.reference.registry import KERNELS, KernelCall
from nnkiln.reference.tensor_ops import (
    argmax,
    avg_pool2d,
    conv2d,
    conv3d,
    depthwise_conv2d,
    fft2d,
    fully_connected,
    matmul,
    max_pool2d,
    transpose_conv2d,
)

RNG = np.random.default_rng(1234)


def _call(op: str, inputs: list[np.ndarray], attrs: dict, kinds: list[Kind], dtypes: list, shapes=None):
    call = KernelCall(name="test", inputs=inputs, attrs=attrs, out_kinds=kinds,
                      out_dtypes=[np.dtype(d) for d in dtypes], out_shapes=shapes or [])
    return KERNELS[op](call)


# ----------------------------------------------------------------------------------------------
# naive references (pseudocode loops)


def naive_conv2d(x, w, b, pad, stride, dil, izp=0, wzp=0):
    n, ih, iw, ic = x.shape
    oc, kh, kw, _ = w.shape
    oh = (ih - 1 + pad[0] + pad[1] - (kh - 1) * dil[0]) // stride[0] + 1
    ow = (iw - 1 + pad[2] + pad[3] - (kw - 1) * dil[1]) // stride[1] + 1
    out = np.zeros((n, oh, ow, oc))
    for b_, oy, ox, o in itertools.product(range(n), range(oh), range(ow), range(oc)):
        acc = 0.0
        for ky, kx, c in itertools.product(range(kh), range(kw), range(ic)):
            y = oy * stride[0] - pad[0] + ky * dil[0]
            xx = ox * stride[1] - pad[2] + kx * dil[1]
            if 0 <= y < ih and 0 <= xx < iw:
                acc += (float(x[b_, y, xx, c]) - izp) * (float(w[o, ky, kx, c]) - wzp)
        out[b_, oy, ox, o] = acc + float(b[o])
    return out


def naive_conv3d(x, w, b, pad, stride, dil):
    n, id_, ih, iw, ic = x.shape
    oc, kd, kh, kw, _ = w.shape
    isz, ksz = (id_, ih, iw), (kd, kh, kw)
    osz = [(isz[d] - 1 + pad[2 * d] + pad[2 * d + 1] - (ksz[d] - 1) * dil[d]) // stride[d] + 1 for d in range(3)]
    out = np.zeros((n, *osz, oc))
    for b_, od, oy, ox, o in itertools.product(range(n), *(range(s) for s in osz), range(oc)):
        acc = 0.0
        for kd_, ky, kx, c in itertools.product(range(kd), range(kh), range(kw), range(ic)):
            pos = [o_ * stride[d] - pad[2 * d] + k * dil[d] for d, (o_, k) in enumerate(zip((od, oy, ox), (kd_, ky, kx)))]
            if all(0 <= pos[d] < isz[d] for d in range(3)):
                acc += float(x[b_, pos[0], pos[1], pos[2], c]) * float(w[o, kd_, ky, kx, c])
        out[b_, od, oy, ox, o] = acc + float(b[o])
    return out


def naive_depthwise(x, w, b, pad, stride, dil):
    n, ih, iw, c = x.shape
    kh, kw, _, m = w.shape
    oh = (ih - 1 + pad[0] + pad[1] - (kh - 1) * dil[0]) // stride[0] + 1
    ow = (iw - 1 + pad[2] + pad[3] - (kw - 1) * dil[1]) // stride[1] + 1
    out = np.zeros((n, oh, ow, c * m))
    for b_, oy, ox, ci, mi in itertools.product(range(n), range(oh), range(ow), range(c), range(m)):
        acc = 0.0
        for ky, kx in itertools.product(range(kh), range(kw)):
            y = oy * stride[0] - pad[0] + ky * dil[0]
            xx = ox * stride[1] - pad[2] + kx * dil[1]
            if 0 <= y < ih and 0 <= xx < iw:
                acc += float(x[b_, y, xx, ci]) * float(w[ky, kx, ci, mi])
        out[b_, oy, ox, ci * m + mi] = acc + float(b[ci * m + mi])
    return out


def naive_transpose(x, w, b, out_pad, stride):
    n, ih, iw, ic = x.shape
    oc, kh, kw, _ = w.shape
    oh = (ih - 1) * stride[0] - out_pad[0] - out_pad[1] + kh
    ow = (iw - 1) * stride[1] - out_pad[2] - out_pad[3] + kw
    out = np.zeros((n, oh, ow, oc)) + b.astype(np.float64)
    for b_, iy, ix, o, c, ky, kx in itertools.product(range(n), range(ih), range(iw), range(oc), range(ic),
                                                      range(kh), range(kw)):
        oy = iy * stride[0] - out_pad[0] + ky
        ox = ix * stride[1] - out_pad[2] + kx
        if 0 <= oy < oh and 0 <= ox < ow:
            out[b_, oy, ox, o] += float(x[b_, iy, ix, c]) * float(w[o, ky, kx, c])
    return out


def naive_pool(x, kernel, stride, pad, fn):
    n, ih, iw, c = x.shape
    oh = (ih + pad[0] + pad[1] - kernel[0]) // stride[0] + 1
    ow = (iw + pad[2] + pad[3] - kernel[1]) // stride[1] + 1
    out = np.zeros((n, oh, ow, c))
    for b_, oy, ox, ci in itertools.product(range(n), range(oh), range(ow), range(c)):
        vals = []
        for ky, kx in itertools.product(range(kernel[0]), range(kernel[1])):
            y, xx = oy * stride[0] - pad[0] + ky, ox * stride[1] - pad[2] + kx
            if 0 <= y < ih and 0 <= xx < iw:
                vals.append(float(x[b_, y, xx, ci]))
        out[b_, oy, ox, ci] = fn(vals)
    return out


# ----------------------------------------------------------------------------------------------
# CONV2D


def test_conv2d_hand() -> None:
    x = np.arange(1, 10, dtype=np.int8).reshape(1, 3, 3, 1)
    w = np.array([[1, 0], [0, -1]], np.int8).reshape(1, 2, 2, 1)
    b = np.array([10], np.int32)
    out = conv2d(x, w, b, (0, 0, 0, 0), (1, 1), (1, 1))
    # each output: x[y, x] - x[y+1, x+1] = -4, plus bias 10
    assert out.dtype == np.int32
    assert out.reshape(2, 2).tolist() == [[6, 6], [6, 6]]


def test_conv2d_zero_points_pad_like_input_zp() -> None:
    # single input 5 with input_zp 3, 3x3 weights all 2 with weight_zp 1, pad 1: only the centre tap
    # is inside the input: (5 - 3) * (2 - 1) = 2
    x = np.array([5], np.int8).reshape(1, 1, 1, 1)
    w = np.full((1, 3, 3, 1), 2, np.int8)
    out = conv2d(x, w, np.array([0], np.int32), (1, 1, 1, 1), (1, 1), (1, 1), input_zp=3, weight_zp=1)
    assert out.reshape(-1).tolist() == [2]


@pytest.mark.parametrize(
    ("pad", "stride", "dil"),
    [((0, 0, 0, 0), (1, 1), (1, 1)), ((1, 2, 2, 1), (2, 1), (1, 2)), ((2, 2, 0, 3), (1, 3), (2, 1))],
)
def test_conv2d_int_matches_naive(pad, stride, dil) -> None:
    x = RNG.integers(-128, 128, (2, 7, 8, 3)).astype(np.int8)
    w = RNG.integers(-128, 128, (4, 3, 2, 3)).astype(np.int8)
    b = RNG.integers(-1000, 1000, (4,)).astype(np.int32)
    # pick pads so the division is exact, as the verifier requires
    ih, iw = 7, 8
    pad = list(pad)
    while (ih - 1 + pad[0] + pad[1] - 2 * dil[0]) % stride[0]:
        pad[1] += 1
    while (iw - 1 + pad[2] + pad[3] - 1 * dil[1]) % stride[1]:
        pad[3] += 1
    got = conv2d(x, w, b, pad, stride, dil, input_zp=-3, weight_zp=7)
    want = naive_conv2d(x, w, b, pad, stride, dil, -3, 7)
    np.testing.assert_array_equal(got, want.astype(np.int64))


def test_conv2d_int16x8_int48_and_float() -> None:
    x = RNG.integers(-32768, 32768, (1, 4, 4, 2)).astype(np.int16)
    w = RNG.integers(-128, 128, (3, 2, 2, 2)).astype(np.int8)
    b = RNG.integers(-(1 << 40), 1 << 40, (3,)).astype(np.int64)
    got = conv2d(x, w, b, (1, 0, 0, 1), (1, 1), (1, 1), out_kind=Kind.I48)
    assert got.dtype == np.int64
    want = naive_conv2d(x, w, np.zeros(3), (1, 0, 0, 1), (1, 1), (1, 1)).astype(np.int64) + b
    np.testing.assert_array_equal(got, want)
    xf = RNG.standard_normal((1, 5, 5, 2)).astype(np.float32)
    wf = RNG.standard_normal((3, 3, 3, 2)).astype(np.float32)
    bf = RNG.standard_normal(3).astype(np.float32)
    got = conv2d(xf, wf, bf, (1, 1, 1, 1), (2, 2), (1, 1), out_kind=Kind.F32)
    np.testing.assert_allclose(got, naive_conv2d(xf, wf, bf, (1, 1, 1, 1), (2, 2), (1, 1)), rtol=1e-5, atol=1e-5)


def test_conv2d_float_skips_padding_taps() -> None:
    # weight inf on a tap that only ever sees padding: skipped taps never multiply (no 0 * inf = NaN)
    x = np.ones((1, 1, 1, 1), np.float32)
    w = np.zeros((1, 3, 3, 1), np.float32)
    w[0, 0, 0, 0] = np.inf
    w[0, 1, 1, 0] = 2.0
    out = conv2d(x, w, np.zeros(1, np.float32), (1, 1, 1, 1), (1, 1), (1, 1), out_kind=Kind.F32)
    assert out.reshape(-1).tolist() == [2.0]


def test_conv2d_bf16_to_fp32_and_fp16_kernel() -> None:
    x = np.array([1.5, -2.0], np.float32).astype(ml_dtypes.bfloat16).reshape(1, 1, 1, 2)
    w = np.array([2.0, 0.25], np.float32).astype(ml_dtypes.bfloat16).reshape(1, 1, 1, 2)
    out = _call("tosa.conv2d", [x, w, np.array([1.0], np.float32)],
                {"pad": (0, 0, 0, 0), "stride": (1, 1), "dilation": (1, 1), "input_zp": 0, "weight_zp": 0},
                [Kind.F32], [np.float32])
    assert out[0].reshape(-1).tolist() == [1.5 * 2.0 - 2.0 * 0.25 + 1.0]
    xh = np.array([0.5], np.float16).reshape(1, 1, 1, 1)
    wh = np.array([3.0], np.float16).reshape(1, 1, 1, 1)
    out = _call("tosa.conv2d", [xh, wh, np.array([0.25], np.float16)],
                {"pad": (0, 0, 0, 0), "stride": (1, 1), "dilation": (1, 1), "input_zp": 0, "weight_zp": 0},
                [Kind.F16], [np.float16])
    assert out[0].dtype == np.float16 and out[0].reshape(-1).tolist() == [1.75]


def test_conv2d_kernel_overflow_require() -> None:
    # 1x1 conv with IC = 40000: (127 - (-128)) * (127 - (-128)) * 40000 > 2^31 - 1
    x = np.full((1, 1, 1, 40000), 127, np.int8)
    w = np.full((1, 1, 1, 40000), 127, np.int8)
    with pytest.raises(TosaUnpredictable):
        conv2d(x, w, np.zeros(1, np.int32), (0, 0, 0, 0), (1, 1), (1, 1), input_zp=-128, weight_zp=-128)


def test_conv2d_bias_overflow_require() -> None:
    x = np.ones((1, 1, 1, 1), np.int8)
    w = np.ones((1, 1, 1, 1), np.int8)
    with pytest.raises(TosaUnpredictable):
        conv2d(x, w, np.array([(1 << 31) - 1], np.int32), (0, 0, 0, 0), (1, 1), (1, 1))


# ----------------------------------------------------------------------------------------------
# CONV3D / DEPTHWISE / TRANSPOSE


def test_conv3d_matches_naive() -> None:
    x = RNG.integers(-128, 128, (1, 4, 5, 3, 2)).astype(np.int8)
    w = RNG.integers(-128, 128, (3, 2, 3, 2, 2)).astype(np.int8)
    b = RNG.integers(-50, 50, (3,)).astype(np.int32)
    pad, stride, dil = (1, 0, 1, 1, 0, 1), (1, 2, 1), (2, 1, 1)
    got = conv3d(x, w, b, pad, stride, dil)
    np.testing.assert_array_equal(got, naive_conv3d(x, w, b, pad, stride, dil).astype(np.int64))


def test_depthwise_hand() -> None:
    # x[0, 0, kx, c]: [[1, 2], [3, 4]]; w[0, 0] = [[1, 2], [3, 4]], w[0, 1] = [[5, 6], [7, 8]] (c x m)
    # out[c*M+m] = x[0,c] w[0,c,m] + x[1,c] w[1,c,m]: c0: 1+15=16, 2+18=20; c1: 6+28=34, 8+32=40
    x = np.array([[1, 2], [3, 4]], np.int8).reshape(1, 1, 2, 2)
    w = np.array([[[1, 2], [3, 4]], [[5, 6], [7, 8]]], np.int8).reshape(1, 2, 2, 2)
    out = depthwise_conv2d(x, w, np.zeros(4, np.int32), (0, 0, 0, 0), (1, 1), (1, 1))
    assert out.reshape(-1).tolist() == [16, 20, 34, 40]


def test_depthwise_matches_naive() -> None:
    x = RNG.integers(-128, 128, (2, 6, 5, 3)).astype(np.int8)
    w = RNG.integers(-128, 128, (3, 2, 3, 2)).astype(np.int8)
    b = RNG.integers(-50, 50, (6,)).astype(np.int32)
    pad, stride, dil = (2, 1, 0, 1), (1, 2), (2, 1)
    got = depthwise_conv2d(x, w, b, pad, stride, dil)
    np.testing.assert_array_equal(got, naive_depthwise(x, w, b, pad, stride, dil).astype(np.int64))
    xf, wf, bf = x.astype(np.float32) / 8, w.astype(np.float32) / 8, b.astype(np.float32)
    got = depthwise_conv2d(xf, wf, bf, pad, stride, dil, out_kind=Kind.F32)
    np.testing.assert_allclose(got, naive_depthwise(xf, wf, bf, pad, stride, dil), rtol=1e-5)


def test_transpose_conv_hand() -> None:
    x = np.array([[1, 2], [3, 4]], np.int8).reshape(1, 2, 2, 1)
    w = np.array([[1, 10], [100, 100]], np.int8).reshape(1, 2, 2, 1)
    b = np.array([5], np.int32)
    # stride 2: each input pixel stamps the kernel at (2 iy, 2 ix)
    out = transpose_conv2d(x, w, b, (0, 0, 0, 0), (2, 2))
    assert out.reshape(4, 4).tolist() == [
        [6, 15, 7, 25], [105, 105, 205, 205], [8, 35, 9, 45], [305, 305, 405, 405]]
    # stride 1: overlapping stamps; OH = 1 + 2 = 3
    out = transpose_conv2d(x, w, b, (0, 0, 0, 0), (1, 1))
    # [0,0]=1, [0,1]=10+2, [0,2]=20, [1,0]=100+3, [1,1]=100+200+30+4, [1,2]=200+40,
    # [2,0]=300, [2,1]=300+400, [2,2]=400; plus bias 5
    assert out.reshape(3, 3).tolist() == [[6, 17, 25], [108, 339, 245], [305, 705, 405]]
    # out_pad crops: top 1, left 1 -> OH = 1 - 1 + 2 = 2, rows/cols 1.. of the uncropped result
    out = transpose_conv2d(x, w, b, (1, 0, 1, 0), (1, 1))
    assert out.reshape(2, 2).tolist() == [[339, 245], [705, 405]]


@pytest.mark.parametrize(("out_pad", "stride"), [((0, 0, 0, 0), (2, 3)), ((1, 2, 0, 1), (2, 2)), ((0, 1, 2, 0), (1, 1))])
def test_transpose_conv_matches_naive(out_pad, stride) -> None:
    x = RNG.integers(-128, 128, (2, 3, 4, 2)).astype(np.int8)
    w = RNG.integers(-128, 128, (3, 3, 3, 2)).astype(np.int8)
    b = RNG.integers(-50, 50, (3,)).astype(np.int32)
    got = transpose_conv2d(x, w, b, out_pad, stride, input_zp=4, weight_zp=-2)
    want = naive_transpose(x.astype(np.int64) - 4, w.astype(np.int64) + 2, b, out_pad, stride)
    np.testing.assert_array_equal(got, want.astype(np.int64))
    xf, wf = x.astype(np.float32), w.astype(np.float32)
    got = transpose_conv2d(xf, wf, b.astype(np.float32), out_pad, stride, out_kind=Kind.F32)
    np.testing.assert_allclose(got, naive_transpose(xf, wf, b, out_pad, stride), rtol=1e-6)


def test_transpose_conv_kernel_uses_out_shape() -> None:
    x = np.ones((1, 1, 1, 1), np.int8)
    w = np.ones((1, 2, 2, 1), np.int8)
    out = _call("tosa.transpose_conv2d", [x, w, np.zeros(1, np.int32)],
                {"out_pad": (0, 0, 0, 0), "stride": (1, 1), "out_shape": (1, 2, 2, 1), "input_zp": 0,
                 "weight_zp": 0}, [Kind.I32], [np.int32])
    assert out[0].reshape(-1).tolist() == [1, 1, 1, 1]


# ----------------------------------------------------------------------------------------------
# FULLY_CONNECTED / MATMUL and partial-sum overflow


def test_fully_connected() -> None:
    x = np.array([[1, 2, 3], [-1, 0, 1]], np.int8)
    w = np.array([[1, 1, 1], [2, 0, -1]], np.int8)
    b = np.array([100, -100], np.int32)
    # with input_zp 1, weight_zp -1: x' = [[0,1,2],[-2,-1,0]], w' = [[2,2,2],[3,1,0]]
    # row 0: [0+2+4, 0+1+0] = [6, 1]; row 1: [-4-2+0, -6-1+0] = [-6, -7]
    out = fully_connected(x, w, b, input_zp=1, weight_zp=-1)
    assert out.tolist() == [[106, -99], [94, -107]]


def _ordered_fc(first: int, second: int, n_first: int, n_second: int) -> np.ndarray:
    x = np.full((1, n_first + n_second), 127, np.int8)
    w = np.concatenate([np.full(n_first, first), np.full(n_second, second)]).astype(np.int8).reshape(1, -1)
    return fully_connected(x, w, np.zeros(1, np.int32), input_zp=-128)


def test_fully_connected_partial_sum_overflow_in_order() -> None:
    # x - zp = 255; products 255 * 127 = 32385 and 255 * -128 = -32640.
    # positives first: 66312 * 32385 = 2147514120 > 2^31 - 1 although the final sum fits: unpredictable
    with pytest.raises(TosaUnpredictable):
        _ordered_fc(127, -128, 66312, 65793)
    # negatives first: -65793 * 32640 = -2147483520 >= -2^31, then up to 30600: valid
    assert _ordered_fc(-128, 127, 65793, 66312).tolist() == [[30600]]


def test_matmul_int8_zero_points() -> None:
    a = np.array([[[1, 2], [3, 4]]], np.int8)
    b = np.array([[[5, 6], [7, 8]]], np.int8)
    # A - 1 = [[0,1],[2,3]], B - 2 = [[3,4],[5,6]] -> [[5,6],[21,26]]
    out = _call("tosa.matmul", [a, b], {"A_zp": 1, "B_zp": 2}, [Kind.I32], [np.int32])
    assert out[0].tolist() == [[[5, 6], [21, 26]]]


def test_matmul_int16_int48_limit() -> None:
    # (-32768)^2 = 2^30 per term; 131071 terms = 2^47 - 2^30 fits int48; 131072 terms = 2^47 does not
    a = np.full((1, 1, 131071), -32768, np.int16)
    b = np.full((1, 131071, 1), -32768, np.int16)
    out = matmul(a, b, out_kind=Kind.I48)
    assert out.dtype == np.int64 and out.tolist() == [[[(1 << 47) - (1 << 30)]]]
    with pytest.raises(TosaUnpredictable):
        matmul(np.full((1, 1, 131072), -32768, np.int16), np.full((1, 131072, 1), -32768, np.int16),
               out_kind=Kind.I48)


def test_matmul_float() -> None:
    a = RNG.standard_normal((2, 3, 4)).astype(np.float32)
    b = RNG.standard_normal((2, 4, 5)).astype(np.float32)
    out = matmul(a, b, out_kind=Kind.F32)
    np.testing.assert_allclose(out, np.einsum("nhc,ncw->nhw", a.astype(np.float64), b.astype(np.float64)),
                               rtol=1e-5, atol=1e-6)


# ----------------------------------------------------------------------------------------------
# pooling / ARGMAX


def test_max_pool() -> None:
    x = RNG.integers(-128, 128, (2, 5, 6, 3)).astype(np.int8)
    got = max_pool2d(x, (2, 3), (1, 3), (1, 0, 2, 1))
    np.testing.assert_array_equal(got, naive_pool(x, (2, 3), (1, 3), (1, 0, 2, 1), max).astype(np.int8))
    # padding never contributes: all -128 stays -128 (not a padded 0)
    x = np.full((1, 2, 2, 1), -128, np.int8)
    assert max_pool2d(x, (2, 2), (1, 1), (1, 1, 1, 1)).reshape(-1).tolist() == [-128] * 9


def test_max_pool_nan_propagates() -> None:
    x = np.array([1.0, np.nan, 3.0, 2.0], np.float32).reshape(1, 1, 4, 1)
    out = max_pool2d(x, (1, 2), (1, 2), (0, 0, 0, 0)).reshape(-1)
    assert np.isnan(out[0]) and out[1] == 3.0


def test_avg_pool_float_matches_naive() -> None:
    x = RNG.standard_normal((1, 5, 4, 2)).astype(np.float32)
    got = avg_pool2d(x, (3, 2), (2, 2), (1, 1, 1, 1))
    np.testing.assert_allclose(got, naive_pool(x, (3, 2), (2, 2), (1, 1, 1, 1), lambda v: sum(v) / len(v)),
                               rtol=1e-5)


def test_avg_pool_int16_kernel() -> None:
    x = np.array([-32768, -32767], np.int16).reshape(1, 1, 2, 1)
    # sum -65535 over 2 = -32767.5 -> away from zero -> -32768
    out = _call("tosa.avg_pool2d", [x], {"kernel": (1, 2), "stride": (1, 1), "pad": (0, 0, 0, 0),
                                         "input_zp": 0, "output_zp": 0}, [Kind.I16], [np.int16])
    assert out[0].reshape(-1).tolist() == [-32768]


def test_argmax() -> None:
    assert argmax(np.array([1, 3, 3, 2], np.int8), 0).tolist() == 1
    x = np.array([[np.nan, 1, np.nan, 5, 5], [-np.inf, -np.inf, np.nan, -np.inf, -np.inf],
                  [np.nan] * 5, [-np.inf, np.nan, -3.4e38, 0, 0]], np.float32)
    assert argmax(x, 1).tolist() == [3, 0, 0, 3]
    x = np.array([[1, 9], [7, 2], [7, 9]], np.int16)
    out = _call("tosa.argmax", [x], {"axis": 0}, [Kind.I32], [np.int32])
    assert out[0].dtype == np.int32 and out[0].tolist() == [1, 0]


# ----------------------------------------------------------------------------------------------
# FFT


def _naive_dft(re, im, sign):
    n, h, w = re.shape
    out = np.zeros((n, h, w), complex)
    for b, oy, ox in itertools.product(range(n), range(h), range(w)):
        for iy, ix in itertools.product(range(h), range(w)):
            a = sign * 2 * np.pi * (iy * oy / h + ix * ox / w)
            out[b, oy, ox] += complex(re[b, iy, ix], im[b, iy, ix]) * complex(np.cos(a), np.sin(a))
    return out


def test_fft2d_forward_inverse_unnormalised() -> None:
    re = RNG.standard_normal((2, 2, 4)).astype(np.float32)
    im = RNG.standard_normal((2, 2, 4)).astype(np.float32)
    fr, fi = fft2d(re, im, False)
    want = _naive_dft(re, im, -1)
    np.testing.assert_allclose(fr, want.real, atol=1e-5)
    np.testing.assert_allclose(fi, want.imag, atol=1e-5)
    ir, ii = fft2d(re, im, True)
    want = _naive_dft(re, im, +1)
    np.testing.assert_allclose(ir, want.real, atol=1e-5)
    np.testing.assert_allclose(ii, want.imag, atol=1e-5)


def test_rfft2d_halves_both_axes() -> None:
    x = RNG.standard_normal((1, 4, 8)).astype(np.float32)
    out = _call("tosa.rfft2d", [x], {}, [Kind.F32, Kind.F32], [np.float32, np.float32])
    assert out[0].shape == (1, 3, 5) and out[1].shape == (1, 3, 5)
    want = _naive_dft(x, np.zeros_like(x), -1)[:, :3, :5]
    np.testing.assert_allclose(out[0], want.real, atol=1e-5)
    np.testing.assert_allclose(out[1], want.imag, atol=1e-5)


# ----------------------------------------------------------------------------------------------
# exact ordered paths (taken when the cheap bound cannot prove the accumulator safe)


def test_conv2d_exact_path_without_overflow() -> None:
    # x - zp = 255 on 70000 channels, weights alternate 127 / -128: the bound 255 * sum|w| exceeds
    # int32 but the running sum alternates +32385, -32640: final 35000 * (-255) = -8925000
    x = np.full((1, 1, 2, 70000), 127, np.int8)
    w = np.tile(np.array([127, -128], np.int8), 35000).reshape(1, 1, 1, 70000)
    out = conv2d(x, w, np.array([0], np.int32), (0, 0, 0, 0), (1, 1), (1, 1), input_zp=-128)
    assert out.reshape(-1).tolist() == [-8925000, -8925000]


def test_transpose_conv_exact_path_from_bias() -> None:
    # the accumulation starts at the bias (2^31 - 1); each output receives `count` terms of -1
    big = (1 << 31) - 1
    x = np.ones((1, 2, 2, 1), np.int8)
    w = np.full((1, 2, 2, 1), -1, np.int8)
    out = transpose_conv2d(x, w, np.array([big], np.int32), (0, 0, 0, 0), (1, 1))
    counts = [[1, 2, 1], [2, 4, 2], [1, 2, 1]]
    assert out.reshape(3, 3).tolist() == [[big - c for c in row] for row in counts]
    with pytest.raises(TosaUnpredictable):
        transpose_conv2d(x, -w, np.array([big], np.int32), (0, 0, 0, 0), (1, 1))
