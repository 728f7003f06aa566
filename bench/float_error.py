"""Per-operator maximum floating-point error of the reference interpreter (TOSA 0.30 §1.7).

Every floating-point operator of the dialect is run through ``nnkiln.reference.run`` in each of its
float type modes (fp32, fp16, bf16; the conv family and MATMUL in all their accumulate modes) on random
inputs from a fixed seed. The same operator is computed in float64 by an independent numpy formula
written below (never by calling nnkiln kernels), on exactly the inputs the interpreter saw (the inputs
are rounded to the storage type first). Columns:

- ``max rel``: max |out - ref| / |ref| over elements whose |ref| is not near zero
  (|ref| > 1e-3 * max|ref| and above the type's smallest normal);
- ``max abs``: max |out - ref| over all elements;
- ``max ulp``: max |out - ref| / ulp_out(ref) over the same elements as ``max rel``, where ulp_out is
  the spacing of the OUTPUT type at |ref| (so 0.5 means correctly rounded);
- ``err/mag``: for accumulating ops, max |out - ref| / sum|terms| (sum of absolute values of the
  products/terms of that output element: the condition-independent measure); "-" otherwise.

Usage: ``python bench/float_error.py [> bench/float_error.txt]``.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import ml_dtypes
import numpy as np

from nnkiln.ir.text import parse_module
from nnkiln.reference import run

BF16 = np.dtype(ml_dtypes.bfloat16)
DTYPES = {"f32": np.dtype(np.float32), "f16": np.dtype(np.float16), "bf16": BF16}
PRECISION = {"f32": 24, "f16": 11, "bf16": 8}
EMIN = {"f32": -126, "f16": -14, "bf16": -126}
SEED = 20240530


# ----------------------------------------------------------------------------------------------
# graph building and running


def _tt(shape: Sequence[int], t: str) -> str:
    return f"tensor<{'x'.join(map(str, shape))}x{t}>" if len(shape) else f"tensor<{t}>"


def run_op(op: str, ins: Sequence[tuple[str, np.ndarray]], outs: Sequence[str], attrs: str = "") -> list[np.ndarray]:
    names = [f"%a{i}" for i in range(len(ins))]
    sig = ", ".join(f"{n}: {t}" for n, (t, _) in zip(names, ins))
    res = ", ".join(outs)
    lhs = "%r" if len(outs) == 1 else f"%r:{len(outs)}"
    rets = "%r" if len(outs) == 1 else ", ".join(f"%r#{i}" for i in range(len(outs)))
    attr = f" {{{attrs}}}" if attrs else ""
    fres = res if len(outs) == 1 else f"({res})"
    text = (f"func.func @main({sig}) -> ({res}) {{\n"
            f"  {lhs} = {op} {', '.join(names)}{attr} : ({', '.join(t for t, _ in ins)}) -> {fres}\n"
            f"  func.return {rets} : {res}\n}}\n")
    out = run(parse_module(text), {f"a{i}": v for i, (_, v) in enumerate(ins)})
    return [out[f"output{i}"] for i in range(len(outs))]


def rnd(rng: np.random.Generator, shape, lo: float, hi: float, t: str) -> np.ndarray:
    """Uniform values rounded to the storage type ``t``; returned as that dtype (bf16 as float32)."""
    x = rng.uniform(lo, hi, shape).astype(np.float32).astype(DTYPES[t])
    return x.astype(np.float32) if t == "bf16" else x


def f64(x: np.ndarray) -> np.ndarray:
    return np.asarray(x).astype(np.float64)


# ----------------------------------------------------------------------------------------------
# error measures


@dataclass
class Row:
    op: str
    types: str
    rel: float
    abs_: float
    ulp: float
    mag: float | None
    note: str = ""


def measure(op: str, types: str, out: np.ndarray, ref: np.ndarray, out_t: str,
            mag: np.ndarray | None = None, note: str = "") -> Row:
    o = f64(out).reshape(-1)
    r = np.asarray(ref, np.float64).reshape(-1)
    both_nan = np.isnan(o) & np.isnan(r)
    same_inf = np.isinf(o) & np.isinf(r) & (np.sign(o) == np.sign(r))
    ok = ~(both_nan | same_inf)
    err = np.where(ok, np.abs(o - r), 0.0)
    err = np.where(np.isnan(err), np.inf, err)
    finite_ref = np.abs(r[np.isfinite(r)])
    big = float(finite_ref.max()) if finite_ref.size else 0.0
    tiny = 2.0 ** EMIN[out_t]
    sel = ok & np.isfinite(r) & (np.abs(r) > max(1e-3 * big, tiny))
    rel = float((err[sel] / np.abs(r[sel])).max()) if sel.any() else 0.0
    if sel.any():
        e = np.floor(np.log2(np.abs(r[sel])))
        ulp = np.exp2(np.maximum(e, EMIN[out_t]) - (PRECISION[out_t] - 1))
        ulps = float((err[sel] / ulp).max())
    else:
        ulps = 0.0
    m = None
    if mag is not None:
        mg = np.asarray(mag, np.float64).reshape(-1)
        msel = ok & (mg > 0)
        m = float((err[msel] / mg[msel]).max()) if msel.any() else 0.0
    return Row(op, types, rel, float(err.max()) if err.size else 0.0, ulps, m, note)


# ----------------------------------------------------------------------------------------------
# independent float64 formulas


def ref_conv2d(x, w, b, pad, stride, dil):
    n, ih, iw, ic = x.shape
    oc, kh, kw, _ = w.shape
    xp = np.zeros((n, ih + pad[0] + pad[1], iw + pad[2] + pad[3], ic))
    xp[:, pad[0]:pad[0] + ih, pad[2]:pad[2] + iw, :] = x
    oh = (ih - 1 + pad[0] + pad[1] - (kh - 1) * dil[0]) // stride[0] + 1
    ow = (iw - 1 + pad[2] + pad[3] - (kw - 1) * dil[1]) // stride[1] + 1
    out = np.zeros((n, oh, ow, oc)) + b
    for ky in range(kh):
        for kx in range(kw):
            patch = xp[:, ky * dil[0]:ky * dil[0] + (oh - 1) * stride[0] + 1:stride[0],
                       kx * dil[1]:kx * dil[1] + (ow - 1) * stride[1] + 1:stride[1], :]
            out += patch @ w[:, ky, kx, :].T
    return out


def ref_conv3d(x, w, b, pad, stride):
    n, id_, ih, iw, ic = x.shape
    oc, kd, kh, kw, _ = w.shape
    xp = np.zeros((n, id_ + pad[0] + pad[1], ih + pad[2] + pad[3], iw + pad[4] + pad[5], ic))
    xp[:, pad[0]:pad[0] + id_, pad[2]:pad[2] + ih, pad[4]:pad[4] + iw, :] = x
    od = (id_ - 1 + pad[0] + pad[1] - (kd - 1)) // stride[0] + 1
    oh = (ih - 1 + pad[2] + pad[3] - (kh - 1)) // stride[1] + 1
    ow = (iw - 1 + pad[4] + pad[5] - (kw - 1)) // stride[2] + 1
    out = np.zeros((n, od, oh, ow, oc)) + b
    for kz in range(kd):
        for ky in range(kh):
            for kx in range(kw):
                patch = xp[:, kz:kz + (od - 1) * stride[0] + 1:stride[0], ky:ky + (oh - 1) * stride[1] + 1:stride[1],
                           kx:kx + (ow - 1) * stride[2] + 1:stride[2], :]
                out += patch @ w[:, kz, ky, kx, :].T
    return out


def ref_depthwise(x, w, b, pad):
    n, ih, iw, c = x.shape
    kh, kw, _, m = w.shape
    xp = np.zeros((n, ih + pad[0] + pad[1], iw + pad[2] + pad[3], c))
    xp[:, pad[0]:pad[0] + ih, pad[2]:pad[2] + iw, :] = x
    oh, ow = ih + pad[0] + pad[1] - kh + 1, iw + pad[2] + pad[3] - kw + 1
    out = np.zeros((n, oh, ow, c, m))
    for ky in range(kh):
        for kx in range(kw):
            out += xp[:, ky:ky + oh, kx:kx + ow, :, None] * w[ky, kx][None, None, None]
    return out.reshape(n, oh, ow, c * m) + b


def ref_transpose_conv(x, w, b, stride, oh, ow):
    n, ih, iw, ic = x.shape
    oc, kh, kw, _ = w.shape
    out = np.zeros((n, oh, ow, oc)) + b
    for iy in range(ih):
        for ix in range(iw):
            for ky in range(kh):
                for kx in range(kw):
                    oy, ox = iy * stride[0] + ky, ix * stride[1] + kx
                    if oy < oh and ox < ow:
                        out[:, oy, ox, :] += x[:, iy, ix, :] @ w[:, ky, kx, :].T
    return out


def ref_avg_pool(x, k, s, pad):
    n, ih, iw, c = x.shape
    oh = (ih + pad[0] + pad[1] - k[0]) // s[0] + 1
    ow = (iw + pad[2] + pad[3] - k[1]) // s[1] + 1
    out = np.zeros((n, oh, ow, c))
    for oy in range(oh):
        for ox in range(ow):
            y0, x0 = oy * s[0] - pad[0], ox * s[1] - pad[2]
            ys = slice(max(y0, 0), min(y0 + k[0], ih))
            xs = slice(max(x0, 0), min(x0 + k[1], iw))
            win = x[:, ys, xs, :]
            out[:, oy, ox, :] = win.sum(axis=(1, 2)) / (win.shape[1] * win.shape[2])
    return out


def ref_max_pool(x, k, s, pad):
    n, ih, iw, c = x.shape
    oh = (ih + pad[0] + pad[1] - k[0]) // s[0] + 1
    ow = (iw + pad[2] + pad[3] - k[1]) // s[1] + 1
    out = np.zeros((n, oh, ow, c))
    for oy in range(oh):
        for ox in range(ow):
            y0, x0 = oy * s[0] - pad[0], ox * s[1] - pad[2]
            win = x[:, max(y0, 0):min(y0 + k[0], ih), max(x0, 0):min(x0 + k[1], iw), :]
            out[:, oy, ox, :] = win.max(axis=(1, 2))
    return out


def ref_resize_bilinear(x, oh, ow, stride, offset, nearest=False):
    n, ih, iw, c = x.shape
    out = np.zeros((n, oh, ow, c))
    for oy in range(oh):
        y = oy * stride[0] + offset[0]
        iy = math.floor(y)
        dy = y - iy
        iy0, iy1 = max(iy, 0), min(iy + 1, ih - 1)
        for ox in range(ow):
            xx = ox * stride[1] + offset[1]
            ix = math.floor(xx)
            dx = xx - ix
            ix0, ix1 = max(ix, 0), min(ix + 1, iw - 1)
            if nearest:
                out[:, oy, ox] = x[:, iy1 if dy >= 0.5 else iy0, ix1 if dx >= 0.5 else ix0]
            else:
                out[:, oy, ox] = (x[:, iy0, ix0] * (1 - dy) * (1 - dx) + x[:, iy0, ix1] * (1 - dy) * dx
                                  + x[:, iy1, ix0] * dy * (1 - dx) + x[:, iy1, ix1] * dy * dx)
    return out


def ref_dft2(re, im, inverse):
    """Direct O(H^2 W^2) DFT in float64 from the spec formula (no FFT library)."""
    _, h, w = re.shape
    sign = 1.0 if inverse else -1.0
    ky = np.exp(sign * 2j * np.pi * np.outer(np.arange(h), np.arange(h)) / h)
    kx = np.exp(sign * 2j * np.pi * np.outer(np.arange(w), np.arange(w)) / w)
    z = re + 1j * im
    return np.einsum("hm,nmk,kw->nhw", ky, z, kx)


# ----------------------------------------------------------------------------------------------
# the cases


def elementwise_cases(rng: np.random.Generator) -> list[Row]:
    rows: list[Row] = []
    shape = (64, 64)
    unary: dict[str, tuple[float, float, Callable[[np.ndarray], np.ndarray], str]] = {
        "tosa.abs": (-10, 10, np.abs, ""),
        "tosa.negate": (-10, 10, np.negative, ""),
        "tosa.ceil": (-10, 10, np.ceil, ""),
        "tosa.floor": (-10, 10, np.floor, ""),
        "tosa.exp": (-8, 8, np.exp, ""),
        "tosa.log": (0.01, 100, np.log, ""),
        "tosa.reciprocal": (0.1, 100, lambda v: 1.0 / v, "random signs"),
        "tosa.rsqrt": (0.01, 100, lambda v: 1.0 / np.sqrt(v), ""),
        "tosa.sigmoid": (-10, 10, lambda v: 1.0 / (1.0 + np.exp(-v)), ""),
        "tosa.tanh": (-5, 5, np.tanh, ""),
    }
    for t in ("f32", "f16", "bf16"):
        tt = _tt(shape, t)
        for op, (lo, hi, fn, note) in unary.items():
            x = rnd(rng, shape, lo, hi, t)
            if op == "tosa.reciprocal":
                x = x * np.where(rng.random(shape) < 0.5, -1, 1).astype(x.dtype)
            (out,) = run_op(op, [(tt, x)], [tt])
            rows.append(measure(op, t, out, fn(f64(x)), t, note=note))
        x = rnd(rng, shape, -10, 10, t)
        (out,) = run_op("tosa.clamp", [(tt, x)], [tt], "min_val = -2.5 : f32, max_val = 3.0 : f32")
        rows.append(measure("tosa.clamp", t, out, np.clip(f64(x), -2.5, 3.0), t))
        binary: dict[str, tuple[float, float, float, float, Callable]] = {
            "tosa.add": (-10, 10, -10, 10, np.add),
            "tosa.sub": (-10, 10, -10, 10, np.subtract),
            "tosa.mul": (-10, 10, -10, 10, np.multiply),
            "tosa.maximum": (-10, 10, -10, 10, np.maximum),
            "tosa.minimum": (-10, 10, -10, 10, np.minimum),
            "tosa.pow": (0.1, 4, -2, 2, np.power),
        }
        for op, (lo1, hi1, lo2, hi2, fn) in binary.items():
            a, b = rnd(rng, shape, lo1, hi1, t), rnd(rng, shape, lo2, hi2, t)
            attrs = "shift = 0 : i64" if op == "tosa.mul" else ""
            (out,) = run_op(op, [(tt, a), (tt, b)], [tt], attrs)
            rows.append(measure(op, t, out, fn(f64(a), f64(b)), t,
                                note="base [0.1,4], exp [-2,2]" if op == "tosa.pow" else ""))
        # SELECT and the comparisons (exact: count mismatches as abs error)
        a, b = rnd(rng, shape, -2, 2, t), rnd(rng, shape, -2, 2, t)
        c = rng.random(shape) < 0.5
        (out,) = run_op("tosa.select", [(_tt(shape, "i1"), c), (tt, a), (tt, b)], [tt])
        rows.append(measure("tosa.select", t, out, np.where(c, f64(a), f64(b)), t))
        b = np.where(rng.random(shape) < 0.2, a, b)  # some equal pairs
        for op, fn in (("tosa.equal", np.equal), ("tosa.greater", np.greater), ("tosa.greater_equal", np.greater_equal)):
            (out,) = run_op(op, [(tt, a), (tt, b)], [_tt(shape, "i1")])
            mism = float(np.sum(out != fn(f64(a), f64(b))))
            rows.append(Row(op, f"{t}->i1", 0.0, mism, 0.0, None, "abs = mismatches"))
    return rows


def reduction_cases(rng: np.random.Generator) -> list[Row]:
    rows: list[Row] = []
    for t in ("f32", "f16", "bf16"):
        x = rnd(rng, (8, 256), -1, 1, t)
        tin, tout = _tt((8, 256), t), _tt((8, 1), t)
        (out,) = run_op("tosa.reduce_sum", [(tin, x)], [tout], "axis = 1 : i64")
        rows.append(measure("tosa.reduce_sum", t, out, f64(x).sum(1, keepdims=True), t,
                            mag=np.abs(f64(x)).sum(1, keepdims=True), note="256 terms in [-1,1]"))
        p = rnd(rng, (8, 32), 0.7, 1.4, t)
        (out,) = run_op("tosa.reduce_product", [(_tt((8, 32), t), p)], [_tt((8, 1), t)], "axis = 1 : i64")
        rows.append(measure("tosa.reduce_product", t, out, f64(p).prod(1, keepdims=True), t, note="32 terms in [0.7,1.4]"))
        for op, fn in (("tosa.reduce_max", np.max), ("tosa.reduce_min", np.min)):
            (out,) = run_op(op, [(tin, x)], [tout], "axis = 1 : i64")
            rows.append(measure(op, t, out, fn(f64(x), 1, keepdims=True), t))
        (out,) = run_op("tosa.argmax", [(tin, x)], [_tt((8,), "i32")], "axis = 1 : i64")
        rows.append(Row("tosa.argmax", f"{t}->i32", 0.0, float(np.sum(out != np.argmax(f64(x), 1))), 0.0, None,
                        "abs = mismatches"))
    return rows


CONV_MODES = (("f32", "f32"), ("f16", "f16"), ("f16", "f32"), ("bf16", "f32"))


def conv_cases(rng: np.random.Generator) -> list[Row]:
    rows: list[Row] = []
    for tin, tout in CONV_MODES:
        types = f"{tin}->{tout}"
        # CONV2D
        x, w, b = rnd(rng, (1, 8, 8, 16), -1, 1, tin), rnd(rng, (8, 3, 3, 16), -1, 1, tin), rnd(rng, (8,), -1, 1, tout)
        pad, stride, dil = (1, 1, 1, 1), (1, 1), (1, 1)
        attrs = ("pad = array<i64: 1, 1, 1, 1>, stride = array<i64: 1, 1>, dilation = array<i64: 1, 1>, "
                 "input_zp = 0 : i64, weight_zp = 0 : i64")
        (out,) = run_op("tosa.conv2d", [(_tt(x.shape, tin), x), (_tt(w.shape, tin), w), (_tt(b.shape, tout), b)],
                        [_tt((1, 8, 8, 8), tout)], attrs)
        ref = ref_conv2d(f64(x), f64(w), f64(b), pad, stride, dil)
        mag = ref_conv2d(np.abs(f64(x)), np.abs(f64(w)), np.abs(f64(b)), pad, stride, dil)
        rows.append(measure("tosa.conv2d", types, out, ref, tout, mag, "3x3x16 taps"))
        # CONV3D
        x, w = rnd(rng, (1, 4, 6, 6, 4), -1, 1, tin), rnd(rng, (4, 3, 3, 3, 4), -1, 1, tin)
        b = rnd(rng, (4,), -1, 1, tout)
        attrs = ("pad = array<i64: 1, 1, 1, 1, 1, 1>, stride = array<i64: 1, 1, 1>, dilation = array<i64: 1, 1, 1>, "
                 "input_zp = 0 : i64, weight_zp = 0 : i64")
        (out,) = run_op("tosa.conv3d", [(_tt(x.shape, tin), x), (_tt(w.shape, tin), w), (_tt(b.shape, tout), b)],
                        [_tt((1, 4, 6, 6, 4), tout)], attrs)
        p6 = (1, 1, 1, 1, 1, 1)
        rows.append(measure("tosa.conv3d", types, out, ref_conv3d(f64(x), f64(w), f64(b), p6, (1, 1, 1)), tout,
                            ref_conv3d(np.abs(f64(x)), np.abs(f64(w)), np.abs(f64(b)), p6, (1, 1, 1)), "3x3x3x4 taps"))
        # DEPTHWISE_CONV2D
        x, w, b = rnd(rng, (1, 8, 8, 4), -1, 1, tin), rnd(rng, (3, 3, 4, 2), -1, 1, tin), rnd(rng, (8,), -1, 1, tout)
        attrs = ("pad = array<i64: 1, 1, 1, 1>, stride = array<i64: 1, 1>, dilation = array<i64: 1, 1>, "
                 "input_zp = 0 : i64, weight_zp = 0 : i64")
        (out,) = run_op("tosa.depthwise_conv2d", [(_tt(x.shape, tin), x), (_tt(w.shape, tin), w), (_tt(b.shape, tout), b)],
                        [_tt((1, 8, 8, 8), tout)], attrs)
        rows.append(measure("tosa.depthwise_conv2d", types, out, ref_depthwise(f64(x), f64(w), f64(b), (1, 1, 1, 1)),
                            tout, ref_depthwise(np.abs(f64(x)), np.abs(f64(w)), np.abs(f64(b)), (1, 1, 1, 1)), "3x3 taps"))
        # TRANSPOSE_CONV2D, stride 2: OH = (4-1)*2 + 3 = 9
        x, w, b = rnd(rng, (1, 4, 4, 8), -1, 1, tin), rnd(rng, (4, 3, 3, 8), -1, 1, tin), rnd(rng, (4,), -1, 1, tout)
        attrs = ("out_pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 2, 2>, out_shape = array<i64: 1, 9, 9, 4>, "
                 "input_zp = 0 : i64, weight_zp = 0 : i64")
        (out,) = run_op("tosa.transpose_conv2d", [(_tt(x.shape, tin), x), (_tt(w.shape, tin), w), (_tt(b.shape, tout), b)],
                        [_tt((1, 9, 9, 4), tout)], attrs)
        rows.append(measure("tosa.transpose_conv2d", types, out, ref_transpose_conv(f64(x), f64(w), f64(b), (2, 2), 9, 9),
                            tout, ref_transpose_conv(np.abs(f64(x)), np.abs(f64(w)), np.abs(f64(b)), (2, 2), 9, 9),
                            "stride 2"))
        # FULLY_CONNECTED
        x, w, b = rnd(rng, (4, 64), -1, 1, tin), rnd(rng, (16, 64), -1, 1, tin), rnd(rng, (16,), -1, 1, tout)
        (out,) = run_op("tosa.fully_connected", [(_tt(x.shape, tin), x), (_tt(w.shape, tin), w), (_tt(b.shape, tout), b)],
                        [_tt((4, 16), tout)], "input_zp = 0 : i64, weight_zp = 0 : i64")
        rows.append(measure("tosa.fully_connected", types, out, f64(x) @ f64(w).T + f64(b), tout,
                            np.abs(f64(x)) @ np.abs(f64(w)).T + np.abs(f64(b)), "64 terms"))
        # MATMUL
        a, bm = rnd(rng, (2, 8, 64), -1, 1, tin), rnd(rng, (2, 64, 8), -1, 1, tin)
        (out,) = run_op("tosa.matmul", [(_tt(a.shape, tin), a), (_tt(bm.shape, tin), bm)], [_tt((2, 8, 8), tout)],
                        "A_zp = 0 : i64, B_zp = 0 : i64")
        rows.append(measure("tosa.matmul", types, out, f64(a) @ f64(bm), tout, np.abs(f64(a)) @ np.abs(f64(bm)), "64 terms"))
    return rows


def pool_resize_fft_cases(rng: np.random.Generator) -> list[Row]:
    rows: list[Row] = []
    for t in ("f32", "f16", "bf16"):
        x = rnd(rng, (1, 8, 8, 4), -1, 1, t)
        attrs = "kernel = array<i64: 3, 3>, stride = array<i64: 1, 1>, pad = array<i64: 1, 1, 1, 1>"
        (out,) = run_op("tosa.avg_pool2d", [(_tt(x.shape, t), x)], [_tt(x.shape, t)], attrs + ", input_zp = 0 : i64, output_zp = 0 : i64")
        ref = ref_avg_pool(f64(x), (3, 3), (1, 1), (1, 1, 1, 1))
        mag = ref_avg_pool(np.abs(f64(x)), (3, 3), (1, 1), (1, 1, 1, 1))
        rows.append(measure("tosa.avg_pool2d", t, out, ref, t, mag, "3x3 pad 1"))
        (out,) = run_op("tosa.max_pool2d", [(_tt(x.shape, t), x)], [_tt(x.shape, t)], attrs)
        rows.append(measure("tosa.max_pool2d", t, out, ref_max_pool(f64(x), (3, 3), (1, 1), (1, 1, 1, 1)), t))
        # RESIZE float: IH = IW = 5, stride 0.3 (an fp32 value), offset 0.1: OH = trunc((4 - 0.1)/0.3) + 1 = 14
        x = rnd(rng, (1, 5, 5, 2), -1, 1, t)
        st, off = float(np.float32(0.3)), float(np.float32(0.1))
        o = math.trunc((4 - off) / st) + 1
        for mode in ("BILINEAR", "NEAREST"):
            attrs = (f"output_size = array<i64: {o}, {o}>, stride = array<f32: 0.3, 0.3>, offset = array<f32: 0.1, 0.1>, "
                     f"border = array<i64: 0, 0>, shift = 0 : i64, mode = #tosa<resize_mode {mode}>")
            (out,) = run_op("tosa.resize", [(_tt(x.shape, t), x)], [_tt((1, o, o, 2), t)], attrs)
            ref = ref_resize_bilinear(f64(x), o, o, (st, st), (off, off), nearest=mode == "NEAREST")
            mag = ref_resize_bilinear(np.abs(f64(x)), o, o, (st, st), (off, off), nearest=mode == "NEAREST")
            rows.append(measure(f"tosa.resize {mode.lower()}", t, out, ref, t, mag, "stride 0.3, offset 0.1"))
    # FFT2D / RFFT2D: fp32 only
    re, im = rnd(rng, (2, 16, 16), -1, 1, "f32"), rnd(rng, (2, 16, 16), -1, 1, "f32")
    t = _tt(re.shape, "f32")
    for inverse in (False, True):
        o_re, o_im = run_op("tosa.fft2d", [(t, re), (t, im)], [t, t], f"inverse = {str(inverse).lower()}")
        ref = ref_dft2(f64(re), f64(im), inverse)
        mag = np.full(ref.shape, float((np.abs(f64(re)) + np.abs(f64(im))).sum(axis=(1, 2)).max()))
        name = "tosa.fft2d inverse" if inverse else "tosa.fft2d"
        rows.append(measure(name + " (real)", "f32", o_re, ref.real, "f32", mag, "16x16"))
        rows.append(measure(name + " (imag)", "f32", o_im, ref.imag, "f32", mag, "16x16"))
    x = rnd(rng, (2, 16, 16), -1, 1, "f32")
    o_re, o_im = run_op("tosa.rfft2d", [(t, x)], [_tt((2, 9, 9), "f32")] * 2)
    ref = ref_dft2(f64(x), np.zeros_like(f64(x)), False)[:, :9, :9]
    mag = np.full(ref.shape, float(np.abs(f64(x)).sum(axis=(1, 2)).max()))
    rows.append(measure("tosa.rfft2d (real)", "f32", o_re, ref.real, "f32", mag, "16x16"))
    rows.append(measure("tosa.rfft2d (imag)", "f32", o_im, ref.imag, "f32", mag, "16x16"))
    return rows


def cast_cases(rng: np.random.Generator) -> list[Row]:
    rows: list[Row] = []
    ints = {"i8": (np.int8, 127), "i16": (np.int16, 32767), "i32": (np.int32, 2**31 - 1)}
    for ti, (dt, hi) in ints.items():
        x_all = rng.integers(-hi - 1, hi, 4096, endpoint=True).astype(dt)
        for t in ("f32", "f16", "bf16"):
            x, note = x_all, ""
            if t == "f16" and ti == "i32":  # beyond +-65504 the result is +-inf (decision): keep in range
                x, note = rng.integers(-65504, 65504, 4096, endpoint=True).astype(dt), "inputs within +-65504"
            (out,) = run_op("tosa.cast", [(_tt(x.shape, ti), x)], [_tt(x.shape, t)])
            rows.append(measure("tosa.cast", f"{ti}->{t}", out, f64(x), t, note=note))
    for t in ("f32", "f16", "bf16"):
        x = rnd(rng, (4096,), -200, 200, t)
        (out,) = run_op("tosa.cast", [(_tt(x.shape, t), x)], [_tt(x.shape, "i32")])
        # round_to_nearest_int: half to even (np.rint) is the documented choice; ties are rare here
        rows.append(Row("tosa.cast", f"{t}->i32", 0.0, float(np.abs(f64(out) - np.rint(f64(x))).max()), 0.0, None,
                        "abs = |out - rint(in)|"))
    return rows


def data_movement_cases(rng: np.random.Generator) -> list[Row]:
    """Exact ops (copies): the error must be 0."""
    rows: list[Row] = []
    for t in ("f32", "f16", "bf16"):
        x = rnd(rng, (4, 6), -5, 5, t)
        tt = _tt(x.shape, t)
        X = f64(x)
        cases = [
            ("tosa.identity", [(tt, x)], _tt((4, 6), t), "", X),
            ("tosa.reshape", [(tt, x)], _tt((6, 4), t), "new_shape = array<i64: 6, 4>", X.reshape(6, 4)),
            ("tosa.reverse", [(tt, x)], tt, "axis = 1 : i64", X[:, ::-1]),
            ("tosa.slice", [(tt, x)], _tt((2, 3), t), "start = array<i64: 1, 2>, size = array<i64: 2, 3>", X[1:3, 2:5]),
            ("tosa.tile", [(tt, x)], _tt((8, 6), t), "multiples = array<i64: 2, 1>", np.concatenate([X, X])),
            ("tosa.transpose", [(tt, x)], _tt((6, 4), t), "perms = array<i64: 1, 0>", X.T),
            ("tosa.pad", [(tt, x)], _tt((5, 8), t), "padding = array<i64: 1, 0, 0, 2>, pad_const = 1.5 : f32",
             np.pad(X, ((1, 0), (0, 2)), constant_values=1.5)),
            ("tosa.concat", [(tt, x), (tt, x)], _tt((4, 12), t), "axis = 1 : i64", np.concatenate([X, X], 1)),
        ]
        for op, ins, out_t, attrs, ref in cases:
            (out,) = run_op(op, ins, [out_t], attrs)
            rows.append(measure(op, t, out, ref, t))
        values = rnd(rng, (2, 5, 3), -5, 5, t)
        idx = np.array([[4, 0, 2], [1, 1, 3]], np.int32)
        (out,) = run_op("tosa.gather", [(_tt(values.shape, t), values), (_tt(idx.shape, "i32"), idx)], [_tt((2, 3, 3), t)])
        rows.append(measure("tosa.gather", t, out, np.stack([f64(values)[n][idx[n]] for n in range(2)]), t))
        sidx = np.array([[4, 0, 2], [1, 3, 0]], np.int32)
        upd = rnd(rng, (2, 3, 3), -5, 5, t)
        (out,) = run_op("tosa.scatter", [(_tt(values.shape, t), values), (_tt(sidx.shape, "i32"), sidx),
                                          (_tt(upd.shape, t), upd)], [_tt(values.shape, t)])
        ref = f64(values).copy()
        for n in range(2):
            ref[n][sidx[n]] = f64(upd)[n]
        rows.append(measure("tosa.scatter", t, out, ref, t))
    return rows


def fmt(v: float | None) -> str:
    if v is None:
        return "-"
    if v == 0:
        return "0"
    return f"{v:.3g}" if 1e-3 <= abs(v) < 1e4 else f"{v:.2e}"


def main() -> int:
    rng = np.random.default_rng(SEED)
    rows: list[Row] = []
    for fn in (elementwise_cases, reduction_cases, conv_cases, pool_resize_fft_cases, cast_cases, data_movement_cases):
        rows.extend(fn(rng))
    header = ("op", "types", "max rel", "max abs", "max ulp", "err/mag", "note")
    table = [header] + [(r.op, r.types, fmt(r.rel), fmt(r.abs_), fmt(r.ulp), fmt(r.mag), r.note) for r in rows]
    widths = [max(len(row[i]) for row in table) for i in range(len(header))]
    print("TOSA 0.30 §1.7 per-operator floating-point error report: nnkiln.reference vs an independent float64")
    print(f"numpy formula on the same (storage-rounded) inputs. Seed {SEED}. ulp = spacing of the OUTPUT type at |ref|;")
    print("rel/ulp skip near-zero references (|ref| <= 1e-3 max|ref|); err/mag = |err| / sum|terms| for accumulating ops.")
    print()
    for i, row in enumerate(table):
        print("  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip())
        if i == 0:
            print("  ".join("-" * w for w in widths))
    return 0


if __name__ == "__main__":
    sys.exit(main())
