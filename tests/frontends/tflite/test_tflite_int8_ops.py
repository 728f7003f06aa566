"""int8 lowerings against a numpy transcription of TFLite's reference integer kernels (``QuantizeMultiplier``,
``MultiplyByQuantizedMultiplier`` = ``SaturatingRoundingDoublingHighMul`` then ``RoundingDivideByPOT``), on
one-operator models built in the test: bit-exact, through the reference interpreter and compiled."""

from __future__ import annotations

import math
import sys
from pathlib import Path
from typing import Any

import numpy as np

import nnkiln
import nnkiln.reference

sys.path.insert(0, str(Path(__file__).resolve().parent))
from tflite_builder import build_model  # noqa: E402

RNG = np.random.default_rng(1)
I8 = np.int8


def quantize_multiplier(real: float) -> tuple[int, int]:
    """TFLite's ``QuantizeMultiplier``: (Q31 multiplier, exponent)."""
    if real == 0:
        return 0, 0
    q, e = math.frexp(real)
    m = math.floor(q * (1 << 31) + 0.5)  # TfLiteRound, q > 0
    if m == 1 << 31:
        m //= 2
        e += 1
    return m, e


def srdhm(a: np.ndarray, b: int) -> np.ndarray:
    """``SaturatingRoundingDoublingHighMul``: (a·b + nudge) / 2^31, C++ division truncating toward zero."""
    out = []
    for x in a.ravel():
        ab = int(x) * b
        v = ab + ((1 << 30) if ab >= 0 else 1 - (1 << 30))
        out.append((abs(v) >> 31) * (1 if v >= 0 else -1))
    return np.array(out, dtype=np.int64).reshape(a.shape)


def rdbpot(x: np.ndarray, exp: int) -> np.ndarray:
    mask = (1 << exp) - 1
    rem = x & mask
    thr = (mask >> 1) + (x < 0)
    return (x >> exp) + (rem > thr)


def mbqm(x: np.ndarray, real: float) -> np.ndarray:
    """TFLite's ``MultiplyByQuantizedMultiplier(x, QuantizeMultiplier(real))``."""
    m, e = quantize_multiplier(real)
    left, right = max(e, 0), max(-e, 0)
    return rdbpot(srdhm(x.astype(np.int64) * (1 << left), m), right)


def _run(tmp_path: Path, op: str, inputs: list[tuple[str, Any]], out: tuple[str, list[int]],
         feeds: dict[str, np.ndarray], options: Any, quant: dict[str, Any]) -> np.ndarray:
    path = tmp_path / f"{op.lower()}.tflite"
    path.write_bytes(build_model(op, inputs, [(out[0], out[1], I8)], options, quant))
    module = nnkiln.load(str(path))
    ref = np.asarray(nnkiln.reference.run(module, feeds)[out[0]])
    comp = np.asarray(nnkiln.compile(module).run(feeds)[out[0]])
    np.testing.assert_array_equal(comp, ref)
    return ref


def test_srdhm_matches_definition() -> None:
    """The numpy transcription: C++ integer division truncates toward zero."""
    a = np.array([-(1 << 20) - 3, -5, 0, 7, 1 << 25])
    m = 1518500250
    want = [int((int(x) * m + ((1 << 30) if int(x) * m >= 0 else 1 - (1 << 30))) / (1 << 31)) for x in a]
    assert list(srdhm(a, m)) == want


def test_batch_matmul_int8(tmp_path: Path) -> None:
    a = RNG.integers(-128, 128, (2, 5, 7)).astype(I8)
    b = RNG.integers(-128, 128, (2, 7, 3)).astype(I8)
    sa, za, sb, zb, so, zo = 0.02, 3, 0.015, -7, 0.37, -5
    y = _run(tmp_path, "BATCH_MATMUL", [("a", ((2, 5, 7), I8)), ("b", ((2, 7, 3), I8))], ("y", [2, 5, 3]),
             {"a": a, "b": b}, ("BatchMatMulOptions", {}),
             {"a": ([sa], [za], 0), "b": ([sb], [zb], 0), "y": ([so], [zo], 0)})
    acc = np.matmul(a.astype(np.int64) - za, b.astype(np.int64) - zb)
    real = float(np.float32(sa)) * float(np.float32(sb)) / float(np.float32(so))
    want = np.clip(mbqm(acc, real) + zo, -128, 127)
    np.testing.assert_array_equal(y, want)


def test_transpose_conv_int8_per_channel(tmp_path: Path) -> None:
    x = RNG.integers(-128, 128, (1, 3, 4, 2)).astype(I8)
    w = RNG.integers(-127, 128, (3, 3, 3, 2)).astype(I8)
    bias = RNG.integers(-500, 500, (3,)).astype(np.int32)
    sx, zx, so, zo = 0.05, -2, 0.4, 4
    sw = [0.01, 0.02, 0.013]
    out = [1, 6, 8, 3]
    y = _run(tmp_path, "TRANSPOSE_CONV",
             [("shape", np.array(out, np.int32)), ("w", w), ("x", ((1, 3, 4, 2), I8)), ("b", bias)], ("y", out),
             {"x": x}, ("TransposeConvOptions", {"Padding": 0, "StrideH": 2, "StrideW": 2}),
             {"x": ([sx], [zx], 0), "w": (sw, [0, 0, 0], 0), "b": ([sx * s for s in sw], [0, 0, 0], 0),
              "y": ([so], [zo], 0)})
    # TFLite reference: scatter (x - zx)·w into the full output, crop the SAME padding, add bias, requantize
    full = np.zeros((1, (3 - 1) * 2 + 3, (4 - 1) * 2 + 3, 3), np.int64)
    xi = x.astype(np.int64) - zx
    for iy in range(3):
        for ix in range(4):
            full[0, iy * 2:iy * 2 + 3, ix * 2:ix * 2 + 3, :] += np.einsum("c,okjc->kjo", xi[0, iy, ix], w.astype(np.int64))
    pad_h = max((3 - 1) * 2 + 3 - 6, 0) // 2
    pad_w = max((4 - 1) * 2 + 3 - 8, 0) // 2
    acc = full[:, pad_h:pad_h + 6, pad_w:pad_w + 8, :] + bias
    want = np.empty(acc.shape, np.int64)
    for c in range(3):
        real = float(np.float32(sx)) * float(np.float32(sw[c])) / float(np.float32(so))
        want[..., c] = mbqm(acc[..., c], real)
    want = np.clip(want + zo, -128, 127)
    np.testing.assert_array_equal(y, want)


def test_add_int8_matches_tflite_arithmetic(tmp_path: Path) -> None:
    a = RNG.integers(-128, 128, (1, 4, 4, 8)).astype(I8)
    b = RNG.integers(-128, 128, (1, 1, 1, 8)).astype(I8)
    s1, z1, s2, z2, so, zo = 0.031, 5, 0.017, -11, 0.043, 2
    y = _run(tmp_path, "ADD", [("a", ((1, 4, 4, 8), I8)), ("b", ((1, 1, 1, 8), I8))], ("y", [1, 4, 4, 8]),
             {"a": a, "b": b}, ("AddOptions", {"FusedActivationFunction": 1}),
             {"a": ([s1], [z1], 0), "b": ([s2], [z2], 0), "y": ([so], [zo], 0)})
    f1, f2, fo = (float(np.float32(v)) for v in (s1, s2, so))
    twice = 2 * max(f1, f2)
    sa = mbqm((a.astype(np.int64) - z1) << 20, f1 / twice)
    sb = mbqm((b.astype(np.int64) - z2) << 20, f2 / twice)
    raw = mbqm(sa + sb, twice / ((1 << 20) * fo)) + zo
    want = np.clip(raw, max(-128, zo), 127)
    np.testing.assert_array_equal(y, want)


def test_mul_int8_all_code_pairs(tmp_path: Path) -> None:
    """All 65536 code pairs: the scale's exponent (-6) makes TFLite's double rounding differ from a single
    rounding on about 1/128 of the products, so this pins the double-rounding RESCALE."""
    a = np.arange(-128, 128, dtype=np.int64).astype(I8).reshape(256, 1)
    b = np.arange(-128, 128, dtype=np.int64).astype(I8).reshape(1, 256)
    s1, z1, s2, z2, so, zo = 0.021, -3, 0.019, 6, 0.047, 1
    y = _run(tmp_path, "MUL", [("a", ((256, 1), I8)), ("b", ((1, 256), I8))], ("y", [256, 256]),
             {"a": a, "b": b}, ("MulOptions", {}), {"a": ([s1], [z1], 0), "b": ([s2], [z2], 0), "y": ([so], [zo], 0)})
    f1, f2, fo = (float(np.float32(v)) for v in (s1, s2, so))
    acc = (a.astype(np.int64) - z1) * (b.astype(np.int64) - z2)
    want = np.clip(mbqm(acc, f1 * f2 / fo) + zo, -128, 127)
    np.testing.assert_array_equal(y, want)


def _softmax_tflite_rows(x: np.ndarray, s_in: float, beta: float) -> np.ndarray:
    """TFLite's ``reference_ops::Softmax`` int8 → int8 row by row in Python integers (exp tables from the
    lowering's transcription of gemmlowp, checked against ``math.exp`` in ``test_softmax_exp_table``)."""
    from nnkiln.frontends.tflite.lowerings.softmax_int8 import rounding_divide_by_pot, softmax_tables
    from nnkiln.frontends.tflite.lowerings.softmax_int8 import srdhm as sr

    exps, acc = softmax_tables(s_in, beta)
    out = np.empty(x.shape, np.int64)
    for r, row in enumerate(x.reshape(-1, x.shape[-1])):
        ks = int(row.max()) - row.astype(np.int64)
        total = int(sum(int(acc[k]) for k in ks))
        clz = 32 - total.bit_length()
        a = (total << clz) - (1 << 31)
        half = (a + (1 << 31)) // 2  # RoundingHalfSum(a, One = 2^31 - 1)
        y = 1515870810 + sr(half, -1010580540)
        for _ in range(3):
            y = y + (sr(y, (1 << 29) - sr(half, y)) << 2)
        scale = y << 1
        for c, k in enumerate(ks):
            u = rounding_divide_by_pot(sr(scale, int(exps[k])), 12 - clz + 23)
            out.reshape(-1, x.shape[-1])[r, c] = min(127, max(-128, u - 128))
    return out


def test_softmax_exp_table() -> None:
    from nnkiln.frontends.tflite.lowerings.softmax_int8 import softmax_tables

    exps, _ = softmax_tables(0.05, 1.0)
    want = np.exp(-0.05 * np.arange(256)) * 2.0**31
    # gemmlowp's polynomial and the Q5.26 input rounding are accurate to a few 1e-7 of one
    assert np.max(np.abs(exps - np.minimum(want, 2**31 - 1))) < 2**31 * 1e-6


def test_softmax_int8_gemmlowp(tmp_path: Path) -> None:
    """Rows of several lengths and spreads: the lowering equals TFLite's integer algorithm on every value."""
    for s_in, shape in ((0.05, (6, 10)), (0.17, (3, 37)), (0.013, (2, 300))):
        x = RNG.integers(-128, 128, shape).astype(I8)
        y = _run(tmp_path, "SOFTMAX", [("x", (shape, I8))], ("y", list(shape)), {"x": x},
                 ("SoftmaxOptions", {"Beta": 1.0}), {"x": ([s_in], [3], 0), "y": ([1 / 256], [-128], 0)})
        np.testing.assert_array_equal(y, _softmax_tflite_rows(x, float(np.float32(s_in)), 1.0))


def test_leaky_relu_int8_all_codes(tmp_path: Path) -> None:
    """TFLite's ``QuantizeLeakyRelu`` on every int8 code."""
    x = np.arange(-128, 128, dtype=np.int64).astype(I8).reshape(1, 256)
    s_in, z_in, s_out, z_out, alpha = 0.031, 7, 0.027, -20, 0.2
    y = _run(tmp_path, "LEAKY_RELU", [("x", ((1, 256), I8))], ("y", [1, 256]), {"x": x},
             ("LeakyReluOptions", {"Alpha": alpha}), {"x": ([s_in], [z_in], 0), "y": ([s_out], [z_out], 0)})
    fi, fo, fa = float(np.float32(s_in)), float(np.float32(s_out)), float(np.float32(alpha))
    v = x.astype(np.int64) - z_in
    want = np.where(v >= 0, mbqm(v, fi / fo), mbqm(v, fi * fa / fo)) + z_out
    np.testing.assert_array_equal(y, np.clip(want, -128, 127))


def test_mean_int8(tmp_path: Path) -> None:
    """TFLite's ``QuantizedMeanOrSum`` (1/count folded into the multiplier its way) over H and W."""
    x = RNG.integers(-128, 128, (1, 5, 7, 64)).astype(I8)
    s_in, z_in, s_out, z_out = 0.04, -9, 0.013, 6
    y = _run(tmp_path, "MEAN", [("x", ((1, 5, 7, 64), I8)), ("ax", np.array([1, 2], np.int32))], ("y", [1, 64]),
             {"x": x}, ("ReducerOptions", {"KeepDims": False}), {"x": ([s_in], [z_in], 0), "y": ([s_out], [z_out], 0)})
    n = 35
    m, e = quantize_multiplier(float(np.float32(s_in)) / float(np.float32(s_out)))
    k = min(n.bit_length() - 1, 32, 31 + e)
    m, e = (m << k) // n, e - k
    total = (x.astype(np.int64) - z_in).sum(axis=(1, 2))
    want = rdbpot(srdhm(total * (1 << max(e, 0)), m), max(-e, 0)) + z_out
    np.testing.assert_array_equal(y, np.clip(want, -128, 127))


def test_hard_swish_int8_table(tmp_path: Path) -> None:
    """The int8 HARD_SWISH (TFLite's fixed-point arithmetic, tabulated) runs as a TABLE and stays within one step
    of the correctly rounded float hard-swish (not checked against TFLite itself: no oracle model yet)."""
    x = np.arange(-128, 128, dtype=np.int64).astype(I8).reshape(1, 256)
    si, zi, so, zo = 0.05, -10, 0.03, -100
    y = _run(tmp_path, "HARD_SWISH", [("x", ((1, 256), I8))], ("y", [1, 256]), {"x": x}, None,
             {"x": ([si], [zi], 0), "y": ([so], [zo], 0)})
    v = (np.arange(-128, 128) - zi) * si
    ideal = np.clip(np.round(v * np.clip(v + 3, 0, 6) / 6 / so) + zo, -128, 127)
    assert np.max(np.abs(y.reshape(-1) - ideal)) <= 1


def test_squared_difference_and_sub_int8(tmp_path: Path) -> None:
    a = RNG.integers(-128, 128, (1, 6, 64)).astype(I8)
    b = RNG.integers(-128, 128, (1, 6, 1)).astype(I8)
    s1, z1, s2, z2, so, zo = 0.021, 4, 0.033, -6, 0.09, -120
    q = {"a": ([s1], [z1], 0), "b": ([s2], [z2], 0), "y": ([so], [zo], 0)}
    feeds = {"a": a, "b": b}
    ins = [("a", ((1, 6, 64), I8)), ("b", ((1, 6, 1), I8))]
    f1, f2, fo = (float(np.float32(v)) for v in (s1, s2, so))
    twice = 2 * max(f1, f2)
    y = _run(tmp_path, "SQUARED_DIFFERENCE", ins, ("y", [1, 6, 64]), feeds, None, q)
    d = mbqm((a.astype(np.int64) - z1) << 7, f1 / twice) - mbqm((b.astype(np.int64) - z2) << 7, f2 / twice)
    want = np.clip(mbqm(d * d, twice * twice / ((1 << 14) * fo)) + zo, -128, 127)
    np.testing.assert_array_equal(y, want)
    y = _run(tmp_path, "SUB", ins, ("y", [1, 6, 64]), feeds, ("SubOptions", {}), q)
    d = mbqm((a.astype(np.int64) - z1) << 20, f1 / twice) - mbqm((b.astype(np.int64) - z2) << 20, f2 / twice)
    want = np.clip(mbqm(d, twice / ((1 << 20) * fo)) + zo, -128, 127)
    np.testing.assert_array_equal(y, want)


def test_rsqrt_abs_int8_tables(tmp_path: Path) -> None:
    """int8 RSQRT (TFLite's Newton-Raphson inverse square root, tabulated) within one step of the correctly
    rounded value on positive inputs; int8 ABS exactly ``MultiplyByQuantizedMultiplier(|q - zp|) + zp_out``."""
    x = np.arange(-128, 128, dtype=np.int64).astype(I8).reshape(1, 256)
    si, zi, so, zo = 0.02, -128, 0.05, -128
    y = _run(tmp_path, "RSQRT", [("x", ((1, 256), I8))], ("y", [1, 256]), {"x": x}, None,
             {"x": ([si], [zi], 0), "y": ([so], [zo], 0)}).reshape(-1)
    v = (np.arange(-128, 128) - zi) * float(np.float32(si))
    pos = v > 0
    ideal = np.clip(np.round(1 / np.sqrt(v[pos]) / so) + zo, -128, 127)
    assert np.max(np.abs(y[pos] - ideal)) <= 1
    si, zi, so, zo = 0.02, 5, 0.013, -128
    y = _run(tmp_path, "ABS", [("x", ((1, 256), I8))], ("y", [1, 256]), {"x": x}, None,
             {"x": ([si], [zi], 0), "y": ([so], [zo], 0)}).reshape(-1)
    want = mbqm(np.abs(np.arange(-128, 128) - zi), float(np.float32(si)) / float(np.float32(so))) + zo
    np.testing.assert_array_equal(y, np.clip(want, -128, 127))


def _resize_bilinear_int8_ref(x: np.ndarray, oh: int, ow: int, align: bool, half: bool) -> np.ndarray:
    """TFLite's ``ResizeBilinearInteger`` in Python integers."""
    _, h, w, _ = x.shape

    def scale(i: int, o: int) -> int:
        if align and o > 1:
            return ((1 << 10) * (i - 1) + (o - 1) // 2) // (o - 1)
        return ((1 << 10) * i + o // 2) // o

    def interp(v: int, s: int, size: int) -> tuple[int, int, int]:
        sv = v * s + s // 2 - (1 << 9) if half else v * s
        return sv, max(int(sv / 1024), 0), min((sv + 1023) // 1024, size - 1)

    out = np.zeros((1, oh, ow, x.shape[3]), np.int64)
    xs = x.astype(np.int64)
    for y in range(oh):
        iy, y0, y1 = interp(y, scale(h, oh), h)
        for xx in range(ow):
            ix, x0, x1 = interp(xx, scale(w, ow), w)
            o = (xs[0, y0, x0] * (1024 - (iy - 1024 * y0)) * (1024 - (ix - 1024 * x0))
                 + xs[0, y1, x0] * (iy - 1024 * y0) * (1024 - (ix - 1024 * x0))
                 + xs[0, y0, x1] * (1024 - (iy - 1024 * y0)) * (ix - 1024 * x0)
                 + xs[0, y1, x1] * (iy - 1024 * y0) * (ix - 1024 * x0))
            r = np.where(o > 0, o + (1 << 19), o - (1 << 19))
            out[0, y, xx] = np.sign(r) * (np.abs(r) // (1 << 20))
    return out


def test_resize_bilinear_int8(tmp_path: Path) -> None:
    x = RNG.integers(-128, 128, (1, 5, 7, 3)).astype(I8)
    for align, half, (oh, ow) in ((False, False, (10, 14)), (False, True, (9, 11)), (True, False, (8, 13))):
        y = _run(tmp_path, "RESIZE_BILINEAR", [("x", ((1, 5, 7, 3), I8)), ("s", np.array([oh, ow], np.int32))],
                 ("y", [1, oh, ow, 3]), {"x": x},
                 ("ResizeBilinearOptions", {"AlignCorners": align, "HalfPixelCenters": half}),
                 {"x": ([0.1], [2], 0), "y": ([0.1], [2], 0)})
        np.testing.assert_array_equal(y, _resize_bilinear_int8_ref(x, oh, ow, align, half))


def test_average_pool_int8_same_padding(tmp_path: Path) -> None:
    """TFLite's int8 AveragePool: raw code sums over the valid window, ``(acc ± count/2) / count``."""
    x = RNG.integers(-128, 128, (1, 7, 6, 4)).astype(I8)
    y = _run(tmp_path, "AVERAGE_POOL_2D", [("x", ((1, 7, 6, 4), I8))], ("y", [1, 4, 3, 4]), {"x": x},
             ("Pool2DOptions", {"Padding": 0, "StrideH": 2, "StrideW": 2, "FilterHeight": 3, "FilterWidth": 3}),
             {"x": ([0.1], [0], 0), "y": ([0.1], [0], 0)})
    want = np.zeros((1, 4, 3, 4), np.int64)
    for oy in range(4):
        for ox in range(3):
            y0, x0 = oy * 2 - 1, ox * 2  # SAME: total padding H 2, W 1 → 1 and 0 before
            win = x[0, max(y0, 0):min(y0 + 3, 7), max(x0, 0):min(x0 + 3, 6)].astype(np.int64)
            acc, cnt = win.sum(axis=(0, 1)), win.shape[0] * win.shape[1]
            want[0, oy, ox] = np.where(acc > 0, (acc + cnt // 2) // cnt, -((-acc + cnt // 2) // cnt))
    np.testing.assert_array_equal(y, want)


def test_quantize_float_to_int8_rounds_half_away(tmp_path: Path) -> None:
    """float → int8 QUANTIZE: ties (x/s = k + 0.5 exactly) round away from zero, as TFLite's ``TfLiteRound``."""
    s, z = 0.25, 3
    x = np.array([[0.125, -0.125, 0.375, -0.375, 10.0, -100.0, 40.0, 0.0]], np.float32)
    path = tmp_path / "q.tflite"
    path.write_bytes(build_model("QUANTIZE", [("x", ((1, 8), np.float32))], [("y", [1, 8], I8)], None,
                                {"y": ([s], [z], 0)}))
    module = nnkiln.load(str(path))
    y = np.asarray(nnkiln.reference.run(module, {"x": x})["y"])
    np.testing.assert_array_equal(np.asarray(nnkiln.compile(module).run({"x": x})["y"]), y)
    np.testing.assert_array_equal(y.reshape(-1), [4, 2, 5, 1, 43, -128, 127, 3])


def test_prelu_int8(tmp_path: Path) -> None:
    x = RNG.integers(-128, 128, (1, 4, 5, 6)).astype(I8)
    alpha = RNG.integers(-128, 128, (1, 1, 6)).astype(I8)
    si, zi, sa, za, so, zo = 0.03, -4, 0.002, -100, 0.025, 9
    y = _run(tmp_path, "PRELU", [("x", ((1, 4, 5, 6), I8)), ("a", alpha)], ("y", [1, 4, 5, 6]), {"x": x}, None,
             {"x": ([si], [zi], 0), "a": ([sa], [za], 0), "y": ([so], [zo], 0)})
    fi, fa, fo = (float(np.float32(v)) for v in (si, sa, so))
    v = x.astype(np.int64) - zi
    av = np.broadcast_to(alpha.astype(np.int64) - za, v.shape)
    want = np.where(v >= 0, mbqm(v, fi / fo), mbqm(v * av, fi * fa / fo)) + zo
    np.testing.assert_array_equal(y, np.clip(want, -128, 127))


def test_sum_int8(tmp_path: Path) -> None:
    x = RNG.integers(-128, 128, (2, 3, 40)).astype(I8)
    s_in, z_in, s_out, z_out = 0.01, 3, 0.2, -7
    y = _run(tmp_path, "SUM", [("x", ((2, 3, 40), I8)), ("ax", np.array([2], np.int32))], ("y", [2, 3]),
             {"x": x}, ("ReducerOptions", {"KeepDims": False}), {"x": ([s_in], [z_in], 0), "y": ([s_out], [z_out], 0)})
    total = (x.astype(np.int64) - z_in).sum(axis=2)
    want = mbqm(total, float(np.float32(s_in)) / float(np.float32(s_out))) + z_out
    np.testing.assert_array_equal(y, np.clip(want, -128, 127))
