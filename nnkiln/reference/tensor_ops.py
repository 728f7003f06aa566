"""Reference kernels of the tensor operators (spec §2.3): ARGMAX, AVG_POOL2D, CONV2D, CONV3D,
DEPTHWISE_CONV2D, FFT2D, FULLY_CONNECTED, MATMUL, MAX_POOL2D, RFFT2D, TRANSPOSE_CONV2D.

Every op has a pure function (numpy arrays and Python attribute values in, arrays out) and a kernel
registered with ``@kernel("tosa.<op>")`` that only reads ``KernelCall`` attributes and calls it.

Implementation and decisions:
- Windows are computed by a loop over kernel taps. For each tap the output positions whose input
  coordinate lies inside the input form a (strided) box, so out-of-range taps are *skipped* exactly as
  the pseudocode does (no padding value is ever multiplied: a float weight of inf next to a padded
  position gives no NaN). Inside a tap the work is one matrix product (BLAS for floats).
- Integer accumulation is in int64 and exact. Integer products go through float64 BLAS when every
  partial sum is provably below 2^53 in magnitude (then float64 arithmetic is exact), else through
  int64 ``matmul``.
- REQUIRE on ``apply_add<out_t>`` (int32 or int48 accumulators, spec §3.3.1) is checked on *every*
  partial sum in the pseudocode's loop order. A cheap bound proves most graphs safe: no partial sum can
  exceed ``max|input - input_zp| * sum|weight[oc] - weight_zp|`` (plus ``|bias[oc]|`` for
  TRANSPOSE_CONV2D, whose accumulation starts at the bias); when that bound fits the accumulator only
  the final ``+ bias`` is checked, otherwise an exact ordered recomputation with cumulative sums
  checks each prefix (slow but only for graphs that come near the accumulator's range).
- Float paths compute in float32 (fp16 and bf16 inputs convert exactly) and round once to the output
  storage type (round to nearest even). For "fp16 with fp16 accumulate" this means the accumulation is
  done in fp32 and rounded at the end: TOSA MI sets no precision requirement (§1.7) and this is the
  more accurate choice. Accumulation order differs from the pseudocode (not bit-exact for floats).
- ``minimum_value<in_t>`` (used by ARGMAX and MAX_POOL2D, undefined by the spec): ``minimum<in_t>``
  for integers and ``-inf`` for floats.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from nnkiln.kinds import Kind
from nnkiln.reference.registry import KernelCall, kernel, unpredictable_if
from nnkiln.reference.scaling import apply_scale_32, reciprocal_scale

_F32 = np.float32
_EXACT_F64 = 1 << 53


# ----------------------------------------------------------------------------------------------
# Shared helpers


def op_name_of(call: KernelCall, default: str) -> str:
    """The op name for messages: the call's, unless a test built the call with a placeholder name."""
    return call.name if call.name.startswith("tosa.") else default


def attr(call: KernelCall, *names: str, default: Any = None) -> Any:
    """The first present attribute among ``names`` (spellings may differ between frontends)."""
    for name in names:
        if name in call.attrs and call.attrs[name] is not None:
            return call.attrs[name]
    if default is not None:
        return default
    raise KeyError(f"attribute {' / '.join(names)} missing")


def _ints(v: Any) -> tuple[int, ...]:
    return tuple(int(x) for x in v)


def _acc_range(kind: Kind) -> tuple[int, int]:
    return kind.int_range


def _axis_range(size_in: int, size_out: int, stride: int, offset: int) -> tuple[slice, slice] | None:
    """Outputs ``o`` in [0, size_out) whose coordinate ``o * stride + offset`` lies in [0, size_in).

    Returns (input slice, output slice) or None when no output position uses this tap.
    """
    lo = max(0, -(offset // stride))
    hi = min(size_out - 1, (size_in - 1 - offset) // stride)
    if lo > hi:
        return None
    return slice(lo * stride + offset, hi * stride + offset + 1, stride), slice(lo, hi + 1)


def _taps(
    in_sizes: Sequence[int],
    out_sizes: Sequence[int],
    kernel_sizes: Sequence[int],
    stride: Sequence[int],
    dilation: Sequence[int],
    pad_before: Sequence[int],
) -> Iterator[tuple[tuple[int, ...], tuple[slice, ...], tuple[slice, ...]]]:
    """(tap index, input slices, output slices) for each kernel tap, in row-major tap order."""
    for tap in itertools.product(*(range(k) for k in kernel_sizes)):
        ins, outs = [], []
        for d, k in enumerate(tap):
            r = _axis_range(in_sizes[d], out_sizes[d], stride[d], k * dilation[d] - pad_before[d])
            if r is None:
                break
            ins.append(r[0])
            outs.append(r[1])
        else:
            yield tap, tuple(ins), tuple(outs)


def _absmax(a: np.ndarray) -> int:
    return int(np.abs(a).max()) if a.size else 0


def _int_matmul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Exact ``a @ b`` of int64 arrays (float64 BLAS when every partial sum is below 2^53)."""
    k = a.shape[-1]
    if _absmax(a) * _absmax(b) * max(k, 1) < _EXACT_F64:
        return np.matmul(a.astype(np.float64), b.astype(np.float64)).astype(np.int64)
    return np.matmul(a, b)


def _mm2(x: np.ndarray, w_t: np.ndarray, integer: bool) -> np.ndarray:
    """``x [..., K] @ w_t [K, M]`` as one 2-D product."""
    lead = x.shape[:-1]
    x2 = x.reshape(-1, x.shape[-1])
    r = _int_matmul(x2, w_t) if integer else np.matmul(x2, w_t)
    return r.reshape(*lead, w_t.shape[-1])


def _check_prefix(acc: np.ndarray, terms: np.ndarray, lo: int, hi: int, op: str) -> None:
    """REQUIRE every running sum ``acc + terms[..., :j]`` (j >= 1) fits [lo, hi]."""
    if terms.size == 0:
        return
    pref = acc[..., None] + np.cumsum(terms, axis=-1)
    unpredictable_if((pref.min() < lo) | (pref.max() > hi), op,
                     "apply_add: accumulator fits out_t (partial sum overflow)")


def _finish_int(acc: np.ndarray, bias: np.ndarray | None, kind: Kind, out_dtype: np.dtype, op: str) -> np.ndarray:
    lo, hi = _acc_range(kind)
    if bias is not None:
        acc = acc + bias.astype(np.int64)
    unpredictable_if((acc < lo) | (acc > hi), op, "apply_add: accumulator fits out_t")
    return acc.astype(out_dtype)


# ----------------------------------------------------------------------------------------------
# ARGMAX


def argmax(x: np.ndarray, axis: int) -> np.ndarray:
    """ARGMAX (spec §2.3.1): index of the first maximum along ``axis`` as int32.

    The pseudocode starts from ``minimum_value<in_t>`` (decision: ``-inf`` for floats) and replaces
    it only on a strict ``value > max_value``: the first maximum wins, NaN is never selected, and a
    slice of only NaN / -inf (or only ``minimum<in_t>``) gives index 0.
    """
    if not np.issubdtype(x.dtype, np.integer):
        xf = x.astype(_F32)
        xf = np.where(np.isnan(xf), -np.inf, xf)
        return np.argmax(xf, axis=axis).astype(np.int32)
    return np.argmax(x, axis=axis).astype(np.int32)


@kernel("tosa.argmax")
def argmax_kernel(call: KernelCall) -> list[np.ndarray]:
    return [argmax(call.inputs[0], int(attr(call, "axis"))).astype(call.out_dtypes[0])]


# ----------------------------------------------------------------------------------------------
# Pooling


def _pool_geometry(x: np.ndarray, kernel_: Sequence[int], stride: Sequence[int], pad: Sequence[int],
                   out_hw: Sequence[int] | None) -> tuple[int, int, int, int]:
    _, ih, iw, _ = x.shape
    ky, kx = kernel_
    sy, sx = stride
    pt, pb, pl, pr = pad
    oh = (ih + pt + pb - ky) // sy + 1
    ow = (iw + pl + pr - kx) // sx + 1
    if out_hw is not None:
        oh, ow = out_hw
    return ih, iw, oh, ow


def avg_pool2d(
    x: np.ndarray,
    kernel_: Sequence[int],
    stride: Sequence[int],
    pad: Sequence[int],
    input_zp: int = 0,
    output_zp: int = 0,
    out_dtype: np.dtype | type | None = None,
    op: str = "tosa.avg_pool2d",
    out_hw: Sequence[int] | None = None,
) -> np.ndarray:
    """AVG_POOL2D (spec §2.3.2). Only input positions count toward the divisor (never padding).

    Integer (int8/int16, acc int32): ``acc = Σ(v - input_zp)`` (each partial sum REQUIREd to fit
    int32), then ``apply_scale_32(acc, reciprocal_scale(count), double_round=false)``, then
    ``clip(acc + output_zp)``. The ``+1`` in reciprocal_scale makes exact halves round away from zero
    (count 2: 0.5 → 1, -0.5 → -1, 1.5 → 2, -1.5 → -2). Float: ``acc / count`` in float32.
    """
    out_dtype = np.dtype(out_dtype if out_dtype is not None else x.dtype)
    n, _, _, c = x.shape
    ih, iw, oh, ow = _pool_geometry(x, kernel_, stride, pad, out_hw)
    taps = list(_taps((ih, iw), (oh, ow), kernel_, stride, (1, 1), (pad[0], pad[2])))
    cnt = np.zeros((oh, ow), np.int64)
    for _, _, outs in taps:
        cnt[outs] += 1
    if out_dtype.kind == "f" or not np.issubdtype(out_dtype, np.integer):
        accf = np.zeros((n, oh, ow, c), _F32)
        xf = x.astype(_F32)
        for _, ins, outs in taps:
            accf[:, outs[0], outs[1], :] += xf[:, ins[0], ins[1], :]
        return (accf / cnt[None, :, :, None].astype(_F32)).astype(out_dtype)
    lo32, hi32 = Kind.I32.int_range
    xi = x.astype(np.int64) - int(input_zp)
    check = _absmax(xi) * len(taps) > hi32
    acc = np.zeros((n, oh, ow, c), np.int64)
    for _, ins, outs in taps:
        region = acc[:, outs[0], outs[1], :]
        region += xi[:, ins[0], ins[1], :]
        if check:
            unpredictable_if((region.min() < lo32) | (region.max() > hi32), op,
                             "apply_add<int32_t>: accumulator fits int32")
    multiplier, shift = reciprocal_scale(cnt, op)
    scaled = apply_scale_32(acc, multiplier[None, :, :, None], shift[None, :, :, None], False, op)
    info = np.iinfo(out_dtype)
    return np.clip(scaled + int(output_zp), info.min, info.max).astype(out_dtype)


def max_pool2d(
    x: np.ndarray,
    kernel_: Sequence[int],
    stride: Sequence[int],
    pad: Sequence[int],
    out_hw: Sequence[int] | None = None,
) -> np.ndarray:
    """MAX_POOL2D (spec §2.3.9): ``apply_max`` over the in-range window positions (padding never
    contributes); NaN propagates. The pseudocode's loop bounds ``H, W`` are read as ``OH, OW``."""
    n, _, _, c = x.shape
    ih, iw, oh, ow = _pool_geometry(x, kernel_, stride, pad, out_hw)
    is_float = not np.issubdtype(x.dtype, np.integer)
    work = x.astype(_F32) if is_float else x
    init = -np.inf if is_float else np.iinfo(x.dtype).min
    acc = np.full((n, oh, ow, c), init, dtype=work.dtype)
    for _, ins, outs in _taps((ih, iw), (oh, ow), kernel_, stride, (1, 1), (pad[0], pad[2])):
        region = acc[:, outs[0], outs[1], :]
        np.maximum(region, work[:, ins[0], ins[1], :], out=region)
    return acc.astype(x.dtype)


def _pool_attrs(call: KernelCall) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...], tuple[int, int]]:
    oshape = call.out_shapes[0] if call.out_shapes else None
    out_hw = (oshape[1], oshape[2]) if oshape else None
    return (_ints(attr(call, "kernel")), _ints(attr(call, "stride")), _ints(attr(call, "pad")), out_hw)


@kernel("tosa.avg_pool2d")
def avg_pool2d_kernel(call: KernelCall) -> list[np.ndarray]:
    k, s, p, out_hw = _pool_attrs(call)
    izp = int(attr(call, "input_zp", default=0))
    ozp = int(attr(call, "output_zp", default=0))
    return [avg_pool2d(call.inputs[0], k, s, p, izp, ozp, call.out_dtypes[0],
                       op_name_of(call, "tosa.avg_pool2d"), out_hw)]


@kernel("tosa.max_pool2d")
def max_pool2d_kernel(call: KernelCall) -> list[np.ndarray]:
    k, s, p, out_hw = _pool_attrs(call)
    return [max_pool2d(call.inputs[0], k, s, p, out_hw).astype(call.out_dtypes[0])]


# ----------------------------------------------------------------------------------------------
# Convolutions


def _out_size(i: int, k: int, s: int, d: int, p0: int, p1: int) -> int:
    return (i - 1 + p0 + p1 - (k - 1) * d) // s + 1


def _conv_nd(
    x: np.ndarray,
    w: np.ndarray,
    bias: np.ndarray,
    pad: Sequence[int],
    stride: Sequence[int],
    dilation: Sequence[int],
    input_zp: int,
    weight_zp: int,
    out_kind: Kind,
    out_dtype: np.dtype,
    op: str,
    out_spatial: Sequence[int] | None = None,
) -> np.ndarray:
    """N-d convolution of ``x [N, *S, IC]`` with ``w [OC, *K, IC]``; ``pad`` = (before, after) pairs.

    Loop order of the pseudocode for one output: taps in row-major order, then ``ic``; bias last.
    """
    nsp = x.ndim - 2
    n = x.shape[0]
    oc = w.shape[0]
    in_sizes = x.shape[1:-1]
    ksizes = w.shape[1:-1]
    before = [pad[2 * d] for d in range(nsp)]
    if out_spatial is None:
        out_spatial = [_out_size(in_sizes[d], ksizes[d], stride[d], dilation[d], pad[2 * d], pad[2 * d + 1])
                       for d in range(nsp)]
    taps = list(_taps(in_sizes, out_spatial, ksizes, stride, dilation, before))
    every = slice(None)
    if out_kind.is_float:
        xf, wf = x.astype(_F32), w.astype(_F32)
        accf = np.zeros((n, *out_spatial, oc), _F32)
        for tap, ins, outs in taps:
            wt = wf[(every, *tap, every)]  # [OC, IC]
            accf[(every, *outs, every)] += _mm2(xf[(every, *ins, every)], wt.T, integer=False)
        accf += bias.astype(_F32)
        return accf.astype(out_dtype)
    lo, hi = _acc_range(out_kind)
    xi = x.astype(np.int64) - int(input_zp)
    wi = w.astype(np.int64) - int(weight_zp)
    acc = np.zeros((n, *out_spatial, oc), np.int64)
    bound = _absmax(xi) * int(np.abs(wi).reshape(oc, -1).sum(axis=1).max(initial=0))
    safe = bound <= hi
    for tap, ins, outs in taps:
        wt = wi[(every, *tap, every)]  # [OC, IC]
        xs = xi[(every, *ins, every)]
        region = acc[(every, *outs, every)]
        if not safe:
            for b in range(n):
                terms = xs[b][..., None, :] * wt  # [*o, OC, IC]
                _check_prefix(region[b], terms, lo, hi, op)
        region += _mm2(xs, wt.T, integer=True)
    return _finish_int(acc, bias, out_kind, out_dtype, op)


def conv2d(
    x: np.ndarray,
    w: np.ndarray,
    bias: np.ndarray,
    pad: Sequence[int],
    stride: Sequence[int],
    dilation: Sequence[int],
    input_zp: int = 0,
    weight_zp: int = 0,
    out_kind: Kind = Kind.I32,
    out_dtype: np.dtype | type | None = None,
    op: str = "tosa.conv2d",
) -> np.ndarray:
    """CONV2D (spec §2.3.3): ``input [N,IH,IW,IC]``, ``weight [OC,KH,KW,IC]``, ``bias [OC]``,
    ``pad = [top, bottom, left, right]``, ``stride``/``dilation = [y, x]`` → ``[N,OH,OW,OC]``.
    Integer: ``Σ (v - input_zp) * (w - weight_zp)`` then ``+ bias``, every partial sum REQUIREd to fit
    the int32/int48 accumulator."""
    return _conv_nd(x, w, bias, pad, stride, dilation, input_zp, weight_zp, out_kind,
                    _dtype(out_kind, out_dtype), op)


def conv3d(
    x: np.ndarray,
    w: np.ndarray,
    bias: np.ndarray,
    pad: Sequence[int],
    stride: Sequence[int],
    dilation: Sequence[int],
    input_zp: int = 0,
    weight_zp: int = 0,
    out_kind: Kind = Kind.I32,
    out_dtype: np.dtype | type | None = None,
    op: str = "tosa.conv3d",
) -> np.ndarray:
    """CONV3D (spec §2.3.4): ``input [N,ID,IH,IW,IC]``, ``weight [OC,KD,KH,KW,IC]`` (the operator's
    layout, not the DOHWI of the layout table), ``pad = [d0, d1, top, bottom, left, right]``."""
    return _conv_nd(x, w, bias, pad, stride, dilation, input_zp, weight_zp, out_kind,
                    _dtype(out_kind, out_dtype), op)


def depthwise_conv2d(
    x: np.ndarray,
    w: np.ndarray,
    bias: np.ndarray,
    pad: Sequence[int],
    stride: Sequence[int],
    dilation: Sequence[int],
    input_zp: int = 0,
    weight_zp: int = 0,
    out_kind: Kind = Kind.I32,
    out_dtype: np.dtype | type | None = None,
    op: str = "tosa.depthwise_conv2d",
) -> np.ndarray:
    """DEPTHWISE_CONV2D (spec §2.3.5): ``weight [KH,KW,C,M]`` (HWIM), output channel ``c * M + m``,
    ``bias [C*M]``. Per output the pseudocode accumulates over taps (ky, kx) then adds the bias."""
    out_dtype = _dtype(out_kind, out_dtype)
    n, ih, iw, c = x.shape
    kh, kw, _, m = w.shape
    oh = _out_size(ih, kh, stride[0], dilation[0], pad[0], pad[1])
    ow = _out_size(iw, kw, stride[1], dilation[1], pad[2], pad[3])
    taps = list(_taps((ih, iw), (oh, ow), (kh, kw), stride, dilation, (pad[0], pad[2])))
    if out_kind.is_float:
        xf, wf = x.astype(_F32), w.astype(_F32)
        accf = np.zeros((n, oh, ow, c, m), _F32)
        for (ky, kx), ins, outs in taps:
            accf[:, outs[0], outs[1]] += xf[:, ins[0], ins[1], :, None] * wf[ky, kx]
        accf = accf.reshape(n, oh, ow, c * m) + bias.astype(_F32)
        return accf.astype(out_dtype)
    lo, hi = _acc_range(out_kind)
    xi = x.astype(np.int64) - int(input_zp)
    wi = w.astype(np.int64) - int(weight_zp)
    acc = np.zeros((n, oh, ow, c, m), np.int64)
    safe = _absmax(xi) * int(np.abs(wi).sum(axis=(0, 1)).max(initial=0)) <= hi
    for (ky, kx), ins, outs in taps:
        region = acc[:, outs[0], outs[1]]
        region += xi[:, ins[0], ins[1], :, None] * wi[ky, kx]
        if not safe:
            unpredictable_if((region.min() < lo) | (region.max() > hi), op,
                             "apply_add: accumulator fits out_t (partial sum overflow)")
    return _finish_int(acc.reshape(n, oh, ow, c * m), bias, out_kind, out_dtype, op)


def transpose_conv2d(
    x: np.ndarray,
    w: np.ndarray,
    bias: np.ndarray,
    out_pad: Sequence[int],
    stride: Sequence[int],
    out_shape: Sequence[int] | None = None,
    input_zp: int = 0,
    weight_zp: int = 0,
    out_kind: Kind = Kind.I32,
    out_dtype: np.dtype | type | None = None,
    op: str = "tosa.transpose_conv2d",
) -> np.ndarray:
    """TRANSPOSE_CONV2D (spec §2.3.11) as the pseudocode's scatter: the output starts as the bias and
    input ``(iy, ix)`` with tap ``(ky, kx)`` adds to ``oy = iy * stride_y - out_pad_top + ky``,
    ``ox = ix * stride_x - out_pad_left + kx`` when inside the output. ``out_pad`` therefore *crops*
    (``OH = (IH - 1) * stride_y - out_pad_top - out_pad_bottom + KH``). For one output element the
    pseudocode adds in (iy, ix, ic) order starting from the bias; that is the order the REQUIRE on
    partial sums is checked in."""
    out_dtype = _dtype(out_kind, out_dtype)
    n, ih, iw, ic = x.shape
    oc, kh, kw, _ = w.shape
    sy, sx = stride
    pt, _, pl, _ = out_pad
    if out_shape is not None:
        oh, ow = int(out_shape[1]), int(out_shape[2])
    else:
        oh = (ih - 1) * sy - out_pad[0] - out_pad[1] + kh
        ow = (iw - 1) * sx - out_pad[2] - out_pad[3] + kw
    # For tap (ky, kx) the input index is the iteration variable: "_taps" with the roles swapped.
    taps = []
    for ky, kx in itertools.product(range(kh), range(kw)):
        ry = _axis_range(oh, ih, sy, ky - pt)
        rx = _axis_range(ow, iw, sx, kx - pl)
        if ry is not None and rx is not None:
            taps.append(((ky, kx), (ry[1], rx[1]), (ry[0], rx[0])))  # (tap, input slices, output slices)
    if out_kind.is_float:
        xf, wf = x.astype(_F32), w.astype(_F32)
        accf = np.broadcast_to(bias.astype(_F32), (n, oh, ow, oc)).copy()
        for (ky, kx), ins, outs in taps:
            accf[:, outs[0], outs[1], :] += _mm2(xf[:, ins[0], ins[1], :], wf[:, ky, kx, :].T, integer=False)
        return accf.astype(out_dtype)
    lo, hi = _acc_range(out_kind)
    xi = x.astype(np.int64) - int(input_zp)
    wi = w.astype(np.int64) - int(weight_zp)
    b64 = bias.astype(np.int64)
    acc = np.broadcast_to(b64, (n, oh, ow, oc)).copy()
    unpredictable_if((b64 < lo) | (b64 > hi), op, "bias fits out_t")
    per_oc = np.abs(b64) + _absmax(xi) * np.abs(wi).reshape(oc, -1).sum(axis=1)
    if per_oc.size == 0 or int(per_oc.max()) <= hi:
        for (ky, kx), ins, outs in taps:
            acc[:, outs[0], outs[1], :] += _mm2(xi[:, ins[0], ins[1], :], wi[:, ky, kx, :].T, integer=True)
        return acc.astype(out_dtype)
    # Exact ordered path: for each input position (iy, ix) in order, the taps it reaches form a box.
    w_t = wi.transpose(1, 2, 0, 3)  # [KH, KW, OC, IC]
    for iy, ix in itertools.product(range(ih), range(iw)):
        oy0, ox0 = iy * sy - pt, ix * sx - pl
        ky_lo, ky_hi = max(0, -oy0), min(kh, oh - oy0)
        kx_lo, kx_hi = max(0, -ox0), min(kw, ow - ox0)
        if ky_lo >= ky_hi or kx_lo >= kx_hi:
            continue
        region = acc[:, oy0 + ky_lo:oy0 + ky_hi, ox0 + kx_lo:ox0 + kx_hi, :]
        wbox = w_t[ky_lo:ky_hi, kx_lo:kx_hi]  # [kh', kw', OC, IC]
        for b in range(n):
            terms = xi[b, iy, ix][None, None, None, :] * wbox
            _check_prefix(region[b], terms, lo, hi, op)
            region[b] += terms.sum(axis=-1)
    return acc.astype(out_dtype)


def fully_connected(
    x: np.ndarray,
    w: np.ndarray,
    bias: np.ndarray,
    input_zp: int = 0,
    weight_zp: int = 0,
    out_kind: Kind = Kind.I32,
    out_dtype: np.dtype | type | None = None,
    op: str = "tosa.fully_connected",
) -> np.ndarray:
    """FULLY_CONNECTED (spec §2.3.7): ``(input - input_zp) @ (weight - weight_zp).T + bias`` with
    ``input [N,IC]``, ``weight [OC,IC]``, ``bias [OC]``; partial sums over ``ic`` REQUIREd to fit."""
    out_dtype = _dtype(out_kind, out_dtype)
    if out_kind.is_float:
        r = np.matmul(x.astype(_F32), w.astype(_F32).T) + bias.astype(_F32)
        return r.astype(out_dtype)
    lo, hi = _acc_range(out_kind)
    xi = x.astype(np.int64) - int(input_zp)
    wi = w.astype(np.int64) - int(weight_zp)
    if _absmax(xi) * int(np.abs(wi).sum(axis=1).max(initial=0)) > hi:
        for b in range(xi.shape[0]):
            _check_prefix(np.zeros(wi.shape[0], np.int64), xi[b][None, :] * wi, lo, hi, op)
    return _finish_int(_int_matmul(xi, wi.T), bias, out_kind, out_dtype, op)


def matmul(
    a: np.ndarray,
    b: np.ndarray,
    a_zp: int = 0,
    b_zp: int = 0,
    out_kind: Kind = Kind.I32,
    out_dtype: np.dtype | type | None = None,
    op: str = "tosa.matmul",
) -> np.ndarray:
    """MATMUL (spec §2.3.8): ``(A - A_zp) @ (B - B_zp)`` per batch, ``A [N,H,C]``, ``B [N,C,W]``;
    partial sums over ``c`` REQUIREd to fit the int32 / int48 accumulator; no bias."""
    out_dtype = _dtype(out_kind, out_dtype)
    if out_kind.is_float:
        return np.matmul(a.astype(_F32), b.astype(_F32)).astype(out_dtype)
    lo, hi = _acc_range(out_kind)
    ai = a.astype(np.int64) - int(a_zp)
    bi = b.astype(np.int64) - int(b_zp)
    if _absmax(ai) * int(np.abs(bi).sum(axis=1).max(initial=0)) > hi:
        for n in range(ai.shape[0]):
            terms = ai[n][:, None, :] * bi[n].T[None, :, :]  # [H, W, C]
            _check_prefix(np.zeros(terms.shape[:2], np.int64), terms, lo, hi, op)
    return _finish_int(_int_matmul(ai, bi), None, out_kind, out_dtype, op)


_KIND_DTYPES: dict[Kind, Any] = {
    Kind.I8: np.int8, Kind.I16: np.int16, Kind.I32: np.int32, Kind.I48: np.int64,
    Kind.F16: np.float16, Kind.F32: np.float32,
}


def _dtype(kind: Kind, given: np.dtype | type | None) -> np.dtype:
    if given is not None:
        return np.dtype(given)
    if kind is Kind.BF16:
        import ml_dtypes

        return np.dtype(ml_dtypes.bfloat16)
    return np.dtype(_KIND_DTYPES[kind])


def _conv_common(call: KernelCall) -> tuple[Kind, np.dtype, int, int, str]:
    return (call.out_kinds[0], call.out_dtypes[0], int(attr(call, "input_zp", default=0)),
            int(attr(call, "weight_zp", default=0)), op_name_of(call, "tosa.conv"))


@kernel("tosa.conv2d")
def conv2d_kernel(call: KernelCall) -> list[np.ndarray]:
    kind, dt, izp, wzp, op = _conv_common(call)
    x, w, b = call.inputs
    return [conv2d(x, w, b, _ints(attr(call, "pad")), _ints(attr(call, "stride")),
                   _ints(attr(call, "dilation")), izp, wzp, kind, dt, op)]


@kernel("tosa.conv3d")
def conv3d_kernel(call: KernelCall) -> list[np.ndarray]:
    kind, dt, izp, wzp, op = _conv_common(call)
    x, w, b = call.inputs
    return [conv3d(x, w, b, _ints(attr(call, "pad")), _ints(attr(call, "stride")),
                   _ints(attr(call, "dilation")), izp, wzp, kind, dt, op)]


@kernel("tosa.depthwise_conv2d")
def depthwise_conv2d_kernel(call: KernelCall) -> list[np.ndarray]:
    kind, dt, izp, wzp, op = _conv_common(call)
    x, w, b = call.inputs
    return [depthwise_conv2d(x, w, b, _ints(attr(call, "pad")), _ints(attr(call, "stride")),
                             _ints(attr(call, "dilation")), izp, wzp, kind, dt, op)]


@kernel("tosa.transpose_conv2d")
def transpose_conv2d_kernel(call: KernelCall) -> list[np.ndarray]:
    kind, dt, izp, wzp, op = _conv_common(call)
    x, w, b = call.inputs
    out_shape = call.attrs.get("out_shape") or (call.out_shapes[0] if call.out_shapes else None)
    return [transpose_conv2d(x, w, b, _ints(attr(call, "out_pad")), _ints(attr(call, "stride")),
                             _ints(out_shape) if out_shape is not None else None, izp, wzp, kind, dt, op)]


@kernel("tosa.fully_connected")
def fully_connected_kernel(call: KernelCall) -> list[np.ndarray]:
    kind, dt, izp, wzp, op = _conv_common(call)
    x, w, b = call.inputs
    return [fully_connected(x, w, b, izp, wzp, kind, dt, op)]


@kernel("tosa.matmul")
def matmul_kernel(call: KernelCall) -> list[np.ndarray]:
    a, b = call.inputs[:2]
    azp = int(attr(call, "A_zp", "a_zp", default=0))
    bzp = int(attr(call, "B_zp", "b_zp", default=0))
    return [matmul(a, b, azp, bzp, call.out_kinds[0], call.out_dtypes[0], op_name_of(call, "tosa.matmul"))]


# ----------------------------------------------------------------------------------------------
# FFT


def fft2d(real: np.ndarray, imag: np.ndarray, inverse: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """FFT2D (spec §2.3.6) over the last two axes of ``[N,H,W]``, no normalisation either way:
    forward ``Σ x·exp(-2πi(mh/H + nw/W))``, inverse with ``+``. Computed in float64 (the pseudocode's
    ``(iy*oy)/H`` is read as a real division), rounded to fp32."""
    z = real.astype(np.float64) + 1j * imag.astype(np.float64)
    h, w = z.shape[-2:]
    out = np.fft.ifft2(z) * (h * w) if inverse else np.fft.fft2(z)
    return out.real.astype(real.dtype), out.imag.astype(real.dtype)


def rfft2d(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """RFFT2D (spec §2.3.10): the forward 2-D DFT of real ``[N,H,W]`` restricted to
    ``[N, H/2 + 1, W/2 + 1]`` (both axes halved, per the argument table; the pseudocode's output shape
    ``[N,H,W]`` and its read of ``input_real`` are copy errors)."""
    h, w = x.shape[-2:]
    out = np.fft.fft2(x.astype(np.float64))[..., : h // 2 + 1, : w // 2 + 1]
    return out.real.astype(x.dtype), out.imag.astype(x.dtype)


@kernel("tosa.fft2d")
def fft2d_kernel(call: KernelCall) -> list[np.ndarray]:
    re, im = fft2d(call.inputs[0], call.inputs[1], bool(attr(call, "inverse", default=False)))
    return [re.astype(call.out_dtypes[0]), im.astype(call.out_dtypes[1])]


@kernel("tosa.rfft2d")
def rfft2d_kernel(call: KernelCall) -> list[np.ndarray]:
    re, im = rfft2d(call.inputs[0])
    return [re.astype(call.out_dtypes[0]), im.astype(call.out_dtypes[1])]
