"""Fast float32 kernels writing straight into their output views.

``build(name, attrs, in_bufs, out_bufs, const_views)`` returns ``fn(ins, outs)`` or ``None`` when no
fast path applies (then the reference kernel runs). A fast path applies only when every operand and
result is float32, the zero points are 0 and the shapes agree with the op's geometry (checked once,
when the executable is built, so a tampered blob cannot make a strided view read out of bounds).

Numerics against ``nnkiln.reference`` (float32 everywhere, like the reference):
- CONV2D: im2col (a zero-padded copy of the input, a strided window view copied to
  ``[N*OH*OW, KH*KW*IC]``) times the weights ``[KH*KW*IC, OC]`` with ``np.matmul(out=)``, then ``+ bias``.
  A 1x1/stride-1/unpadded convolution uses the input directly. Accumulation order differs from the
  reference's per-tap products (within 1e-5 relative). Decision: padded positions contribute
  ``0 * w``; the reference skips them, which only differs for non-finite weights.
- DEPTHWISE_CONV2D, AVG/MAX_POOL2D: the reference's per-tap loops, done in place in the output view
  with one reusable scratch (same operations in the same order: bit-identical).
- FULLY_CONNECTED, MATMUL: ``np.matmul(out=)`` (+ bias); elementwise ops with ``out=``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from itertools import product
from typing import Any

import numpy as np

from nnkiln.backend.blob_format import BufferDesc
from nnkiln.kinds import Kind

FastFn = Callable[[Sequence[np.ndarray], Sequence[np.ndarray]], None]
_F32 = np.float32


def clamp_bounds(attrs: dict[str, Any]) -> tuple[np.float32, np.float32] | None:
    """(min, max) of a float32 CLAMP, or None if the attributes are absent or min > max."""
    lo = next((attrs[k] for k in ("min_val", "min_fp") if attrs.get(k) is not None), None)
    hi = next((attrs[k] for k in ("max_val", "max_fp") if attrs.get(k) is not None), None)
    if not isinstance(lo, (int, float)) or not isinstance(hi, (int, float)):
        return None
    lo_f, hi_f = _F32(lo), _F32(hi)
    if not lo_f <= hi_f:  # the reference raises tosa_unpredictable: let it
        return None
    return lo_f, hi_f


def _ints(v: Any, n: int) -> tuple[int, ...] | None:
    if not isinstance(v, (tuple, list)) or len(v) != n or not all(isinstance(x, int) and not isinstance(x, bool) for x in v):
        return None
    return tuple(v)


def _axis_range(size_in: int, size_out: int, stride: int, offset: int) -> tuple[slice, slice] | None:
    lo = max(0, -(offset // stride))
    hi = min(size_out - 1, (size_in - 1 - offset) // stride)
    if lo > hi:
        return None
    return slice(lo * stride + offset, hi * stride + offset + 1, stride), slice(lo, hi + 1)


def _taps(in_hw: tuple[int, int], out_hw: tuple[int, int], k: tuple[int, int], stride: tuple[int, int],
          dilation: tuple[int, int], pad_before: tuple[int, int]) -> list[tuple[tuple[int, int], tuple[slice, slice], tuple[slice, slice]]]:
    """(tap, input slices, output slices) per kernel tap in row-major order (as the reference)."""
    out = []
    for ky, kx in product(range(k[0]), range(k[1])):
        ry = _axis_range(in_hw[0], out_hw[0], stride[0], ky * dilation[0] - pad_before[0])
        rx = _axis_range(in_hw[1], out_hw[1], stride[1], kx * dilation[1] - pad_before[1])
        if ry is not None and rx is not None:
            out.append(((ky, kx), (ry[0], rx[0]), (ry[1], rx[1])))
    return out


def _out_size(i: int, k: int, s: int, d: int, p0: int, p1: int) -> int:
    return (i - 1 + p0 + p1 - (k - 1) * d) // s + 1


def _conv2d(attrs: dict[str, Any], ib: Sequence[BufferDesc], ob: Sequence[BufferDesc],
            consts: Sequence[np.ndarray | None]) -> FastFn | None:
    pad, stride, dil = _ints(attrs.get("pad"), 4), _ints(attrs.get("stride"), 2), _ints(attrs.get("dilation"), 2)
    if pad is None or stride is None or dil is None or len(ib) != 3 or len(ob) != 1:
        return None
    if min(stride) < 1 or min(dil) < 1 or min(pad) < 0:
        return None
    xs, ws, bs, os_ = ib[0].shape, ib[1].shape, ib[2].shape, ob[0].shape
    if len(xs) != 4 or len(ws) != 4 or len(os_) != 4:
        return None
    n, ih, iw, ic = xs
    oc, kh, kw, wic = ws
    if wic != ic or os_[0] != n or os_[3] != oc or bs not in ((oc,), (1,)):
        return None
    pt, pb, pl, pr = pad
    oh, ow = _out_size(ih, kh, stride[0], dil[0], pt, pb), _out_size(iw, kw, stride[1], dil[1], pl, pr)
    if (oh, ow) != os_[1:3] or oh < 1 or ow < 1:
        return None
    if (oh - 1) * stride[0] + (kh - 1) * dil[0] + 1 > ih + pt + pb or (ow - 1) * stride[1] + (kw - 1) * dil[1] + 1 > iw + pl + pr:
        return None
    wconst = consts[1]
    wmat = (np.ascontiguousarray(wconst.reshape(oc, kh * kw * ic).T) if wconst is not None else None)
    direct = kh == kw == 1 and stride == (1, 1) and not any(pad)
    sy, sx = stride
    dy, dx = dil

    def run(ins: Sequence[np.ndarray], outs: Sequence[np.ndarray]) -> None:
        x, w, b = ins
        out = outs[0]
        wm = wmat if wmat is not None else w.reshape(oc, -1).T
        o2 = out.reshape(n * oh * ow, oc)
        if direct:
            cols = x.reshape(n * ih * iw, ic)
        else:
            if any(pad):
                xp = np.zeros((n, ih + pt + pb, iw + pl + pr, ic), _F32)
                xp[:, pt:pt + ih, pl:pl + iw, :] = x
            else:
                xp = np.ascontiguousarray(x)
            s0, s1, s2, s3 = xp.strides
            win = np.lib.stride_tricks.as_strided(
                xp, (n, oh, ow, kh, kw, ic), (s0, s1 * sy, s2 * sx, s1 * dy, s2 * dx, s3), writeable=False)
            cols = win.reshape(n * oh * ow, kh * kw * ic)
        np.matmul(cols, wm, out=o2)
        np.add(out, b, out=out)

    return run


def _depthwise(attrs: dict[str, Any], ib: Sequence[BufferDesc], ob: Sequence[BufferDesc],
               consts: Sequence[np.ndarray | None]) -> FastFn | None:
    pad, stride, dil = _ints(attrs.get("pad"), 4), _ints(attrs.get("stride"), 2), _ints(attrs.get("dilation"), 2)
    if pad is None or stride is None or dil is None or len(ib) != 3 or len(ob) != 1:
        return None
    if min(stride) < 1 or min(dil) < 1 or min(pad) < 0:
        return None
    xs, ws, os_ = ib[0].shape, ib[1].shape, ob[0].shape
    if len(xs) != 4 or len(ws) != 4 or len(os_) != 4:
        return None
    n, ih, iw, c = xs
    kh, kw, wc, m = ws
    oh, ow = _out_size(ih, kh, stride[0], dil[0], pad[0], pad[1]), _out_size(iw, kw, stride[1], dil[1], pad[2], pad[3])
    if wc != c or os_ != (n, oh, ow, c * m) or ib[2].shape not in ((c * m,), (1,)):
        return None
    taps = _taps((ih, iw), (oh, ow), (kh, kw), stride, dil, (pad[0], pad[2]))

    def run(ins: Sequence[np.ndarray], outs: Sequence[np.ndarray]) -> None:
        x, w, b = ins
        out = outs[0]
        o5 = out.reshape(n, oh, ow, c, m)
        o5.fill(0)
        tmp = np.empty((n, oh, ow, c, m), _F32)
        for (ky, kx), (iy, ix), (oy, ox) in taps:
            r = o5[:, oy, ox]
            t = tmp[:, oy, ox]
            np.multiply(x[:, iy, ix, :, None], w[ky, kx], out=t)
            np.add(r, t, out=r)
        np.add(out, b, out=out)

    return run


def _pool(max_pool: bool, attrs: dict[str, Any], ib: Sequence[BufferDesc], ob: Sequence[BufferDesc]) -> FastFn | None:
    k, stride, pad = _ints(attrs.get("kernel"), 2), _ints(attrs.get("stride"), 2), _ints(attrs.get("pad"), 4)
    if k is None or stride is None or pad is None or len(ib) != 1 or len(ob) != 1:
        return None
    if min(stride) < 1 or min(k) < 1 or min(pad) < 0:
        return None
    if not max_pool and (attrs.get("input_zp", 0) or attrs.get("output_zp", 0)):
        return None
    xs, os_ = ib[0].shape, ob[0].shape
    if len(xs) != 4 or len(os_) != 4 or xs[0] != os_[0] or xs[3] != os_[3]:
        return None
    n, ih, iw, c = xs
    oh, ow = os_[1], os_[2]
    taps = _taps((ih, iw), (oh, ow), k, stride, (1, 1), (pad[0], pad[2]))
    cnt = np.zeros((oh, ow), np.int64)
    for _, _, (oy, ox) in taps:
        cnt[oy, ox] += 1
    if not max_pool and not cnt.all():
        return None  # a window with no input: the reference decides (division by zero)
    cnt_f = cnt[None, :, :, None].astype(_F32)

    def run(ins: Sequence[np.ndarray], outs: Sequence[np.ndarray]) -> None:
        x, out = ins[0], outs[0]
        out.fill(-np.inf if max_pool else 0)
        for _, (iy, ix), (oy, ox) in taps:
            r = out[:, oy, ox, :]
            if max_pool:
                np.maximum(r, x[:, iy, ix, :], out=r)
            else:
                np.add(r, x[:, iy, ix, :], out=r)
        if not max_pool:
            np.divide(out, cnt_f, out=out)

    return run


def _fully_connected(attrs: dict[str, Any], ib: Sequence[BufferDesc], ob: Sequence[BufferDesc]) -> FastFn | None:
    if len(ib) != 3 or len(ob) != 1:
        return None
    xs, ws, bs, os_ = ib[0].shape, ib[1].shape, ib[2].shape, ob[0].shape
    if len(xs) != 2 or len(ws) != 2 or xs[1] != ws[1] or os_ != (xs[0], ws[0]) or bs not in ((ws[0],), (1,)):
        return None

    def run(ins: Sequence[np.ndarray], outs: Sequence[np.ndarray]) -> None:
        x, w, b = ins
        np.matmul(x, w.T, out=outs[0])
        np.add(outs[0], b, out=outs[0])

    return run


def _matmul(attrs: dict[str, Any], ib: Sequence[BufferDesc], ob: Sequence[BufferDesc]) -> FastFn | None:
    if len(ib) != 2 or len(ob) != 1:
        return None
    a, b, o = ib[0].shape, ib[1].shape, ob[0].shape
    if len(a) != 3 or len(b) != 3 or a[0] != b[0] or a[2] != b[1] or o != (a[0], a[1], b[2]):
        return None

    def run(ins: Sequence[np.ndarray], outs: Sequence[np.ndarray]) -> None:
        np.matmul(ins[0], ins[1], out=outs[0])

    return run


def _broadcastable(ib: Sequence[BufferDesc], ob: Sequence[BufferDesc]) -> bool:
    if len(ob) != 1:
        return False
    try:
        return np.broadcast_shapes(*(b.shape for b in ib)) == ob[0].shape
    except ValueError:
        return False


def _sigmoid(x: np.ndarray, out: np.ndarray) -> None:
    np.negative(x, out=out)
    np.exp(out, out=out)
    np.add(out, _F32(1), out=out)
    np.divide(_F32(1), out, out=out)


_BINARY: dict[str, Callable[..., Any]] = {
    "tosa.add": np.add, "tosa.sub": np.subtract, "tosa.maximum": np.maximum, "tosa.minimum": np.minimum,
}
ELEMENTWISE = ("tosa.add", "tosa.sub", "tosa.maximum", "tosa.minimum", "tosa.mul", "tosa.abs", "tosa.negate",
               "tosa.exp", "tosa.tanh", "tosa.sigmoid", "tosa.clamp")
"""Fast paths that are correct when the output aliases an input (numpy ufuncs handle overlap)."""
_UNARY: dict[str, Callable[..., Any]] = {
    "tosa.abs": np.abs, "tosa.negate": np.negative, "tosa.exp": np.exp, "tosa.tanh": np.tanh,
    "tosa.sigmoid": _sigmoid,
}


def build(name: str, attrs: dict[str, Any], ib: Sequence[BufferDesc], ob: Sequence[BufferDesc],
          consts: Sequence[np.ndarray | None]) -> FastFn | None:
    """A fast float32 implementation of ``name`` for these operands, or ``None``."""
    if not all(b.kind is Kind.F32 for b in (*ib, *ob)):
        return None
    if any(attrs.get(z, 0) for z in ("input_zp", "weight_zp", "output_zp", "A_zp", "B_zp", "input1_zp", "input2_zp")):
        return None
    if name == "tosa.conv2d":
        return _conv2d(attrs, ib, ob, consts)
    if name == "tosa.depthwise_conv2d":
        return _depthwise(attrs, ib, ob, consts)
    if name in ("tosa.max_pool2d", "tosa.avg_pool2d"):
        return _pool(name == "tosa.max_pool2d", attrs, ib, ob)
    if name == "tosa.fully_connected":
        return _fully_connected(attrs, ib, ob)
    if name == "tosa.matmul":
        return _matmul(attrs, ib, ob)
    if name in _BINARY and len(ib) == 2 and _broadcastable(ib, ob):
        fn = _BINARY[name]

        def binary(ins: Sequence[np.ndarray], outs: Sequence[np.ndarray]) -> None:
            fn(ins[0], ins[1], out=outs[0])

        return binary
    if name == "tosa.mul" and len(ib) == 2 and not attrs.get("shift", 0) and _broadcastable(ib, ob):
        def mul(ins: Sequence[np.ndarray], outs: Sequence[np.ndarray]) -> None:
            np.multiply(ins[0], ins[1], out=outs[0])

        return mul
    if name in _UNARY and len(ib) == 1 and len(ob) == 1 and ib[0].shape == ob[0].shape:
        ufn = _UNARY[name]

        def unary(ins: Sequence[np.ndarray], outs: Sequence[np.ndarray]) -> None:
            with np.errstate(all="ignore"):
                ufn(ins[0], out=outs[0])

        return unary
    if name == "tosa.clamp" and len(ib) == 1 and len(ob) == 1 and ib[0].shape == ob[0].shape:
        bounds = clamp_bounds(attrs)
        if bounds is None:
            return None
        lo, hi = bounds

        def clamp(ins: Sequence[np.ndarray], outs: Sequence[np.ndarray]) -> None:
            np.maximum(ins[0], lo, out=outs[0])
            np.minimum(outs[0], hi, out=outs[0])

        return clamp
    return None


__all__ = ["build", "clamp_bounds"]
