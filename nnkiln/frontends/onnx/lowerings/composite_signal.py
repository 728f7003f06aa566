"""ONNX signal-processing lowerings (family ``composite``): DFT as one MATMUL with a constant DFT
matrix (float64, rounded once), the Hann/Hamming/Blackman windows and MelWeightMatrix (constants
computed at import). Split from ``composite`` (shared helpers there)."""

from __future__ import annotations

import math

import numpy as np

from nnkiln.frontends.common.broadcast import reshape
from nnkiln.frontends.common.layout import transpose
from nnkiln.frontends.onnx.importer import NodeContext
from nnkiln.frontends.onnx.lowerings import lowering
from nnkiln.frontends.onnx.lowerings._composite_common import Result, bmm, const_k, float_input, scalar_const, val

# ------------------------------------------------------------------------------------------------
# DFT, windows, MelWeightMatrix


def _dft_matrix(n_in: int, length: int, comp_in: int, inverse: bool, onesided: bool) -> tuple[np.ndarray, int, int]:
    """The real matrix W [n_in·comp_in, n_out·comp_out] with ``out = in @ W`` for interleaved
    (re, im) pairs, computed in float64; angles use ``(f·k) mod L`` so they are exact."""
    k = np.arange(n_in)[:, None]
    if inverse and onesided:
        # irfft: Hermitian extension of frequencies 0 .. L//2 (imaginary parts of DC and Nyquist unused)
        t = np.arange(length)[None, :]
        nf = length // 2 + 1
        ang = 2 * np.pi * ((k * t) % length) / length
        coef = np.where((k == 0) | ((length % 2 == 0) & (k == length // 2)), 1.0, 2.0) * (k < nf)
        wr = coef * np.cos(ang) / length
        wi = -coef * np.sin(ang) / length
        wi = np.where((k == 0) | ((length % 2 == 0) & (k == length // 2)), 0.0, wi)
        rows = [wr] if comp_in == 1 else [wr, wi]
        w = np.stack(rows, axis=1).reshape(n_in * comp_in, length)  # one output component
        return w, length, 1
    n_out = length // 2 + 1 if (onesided and not inverse) else length
    f = np.arange(n_out)[None, :]
    ang = 2 * np.pi * ((k * f) % length) / length
    valid = (k < length).astype(np.float64)
    cos, sin = np.cos(ang) * valid, np.sin(ang) * valid
    if inverse:
        # (xr + i xi)(cos + i sin) / L
        rr, ri, ir, ii = cos / length, sin / length, -sin / length, cos / length
    else:
        # (xr + i xi)(cos − i sin)
        rr, ri, ir, ii = cos, -sin, sin, cos
    if comp_in == 1:
        w = np.stack([rr, ri], axis=2).reshape(n_in, n_out * 2)
    else:
        w = np.stack([np.stack([rr, ri], axis=2), np.stack([ir, ii], axis=2)], axis=1).reshape(n_in * 2, n_out * 2)
    return w, n_out, 2


@lowering("DFT")
def DFT(ctx: NodeContext) -> Result:
    """DFT (opsets 17, 20) as one MATMUL with a constant DFT matrix computed in float64 and rounded
    once to the input type. Inexact: fp32 accumulation gives errors of a few ulp of Σ|x| (so outputs
    whose true value is 0 are off by ~1e-6 for inputs ~100 — more than ONNX's atol 1e-7, whose own
    expected data for ``test_dft_inverse`` carries a float32 FFT's rounding of 1.9e-7 there). The signal axis is
    TRANSPOSEd next to the (re[, im]) axis; ``dft_length`` truncates (zero rows) or zero-pads (no
    rows needed); ``onesided`` keeps L//2+1 frequencies, and with ``inverse`` it is irfft (real
    output). ``axis`` is an attribute (default 1) before opset 20, a constant input (default −2)
    after; ``dft_length`` must be constant."""
    xv = float_input(ctx, 0)
    rank = xv.rank
    inverse = bool(ctx.attr("inverse", 0))
    onesided = bool(ctx.attr("onesided", 0))
    if ctx.opset >= 20:
        axis = int(scalar_const(ctx, 2, "axis")) if ctx.has_input(2) else -2
    else:
        axis = int(ctx.attr("axis", 1))
    axis = axis % rank
    comp = xv.shape[-1]
    if comp not in (1, 2) or axis == rank - 1:
        raise ctx.error(f"input shape {list(xv.shape)} / axis {axis}: the last dimension must be 1 or 2 and not the axis")
    n = xv.shape[axis]
    if ctx.has_input(1):
        length = int(scalar_const(ctx, 1, "dft_length"))
    else:
        length = 2 * (n - 1) if (inverse and onesided) else n
    w, n_out, comp_out = _dft_matrix(n, length, comp, inverse, onesided)
    g = ctx.g
    perm = [d for d in range(rank - 1) if d != axis] + [axis, rank - 1]
    x = transpose(g, val(ctx, xv), perm) if perm != list(range(rank)) else val(ctx, xv)
    rest = [xv.shape[d] for d in perm[:-2]]
    p = math.prod(rest)
    x = reshape(g, x, (1, p, n * comp))
    y = bmm(g, x, const_k(g, w.reshape(1, *w.shape), xv.kind))
    y = reshape(g, y, (*rest, n_out, comp_out))
    inv = np.argsort(perm)
    return [transpose(g, y, list(inv)) if list(inv) != list(range(rank)) else y]


def _window(ctx: NodeContext, fn: str) -> np.ndarray:
    size = int(scalar_const(ctx, 0, "size"))
    periodic = int(ctx.attr("periodic", 1))
    dtype = int(ctx.attr("output_datatype", 1))
    from onnx.helper import tensor_dtype_to_np_dtype

    n = np.arange(size, dtype=np.float64)
    denom = size if periodic else size - 1
    if fn == "hann":
        w = np.sin(np.pi * n / denom) ** 2
    elif fn == "hamming":
        a = 25.0 / 46.0
        w = a - (1 - a) * np.cos(2 * np.pi * n / denom)
    else:
        w = 0.42 - 0.5 * np.cos(2 * np.pi * n / denom) + 0.08 * np.cos(4 * np.pi * n / denom)
    return w.astype(tensor_dtype_to_np_dtype(dtype))


@lowering("HannWindow")
def HannWindow(ctx: NodeContext) -> Result:
    """HannWindow (opset 17): ``sin²(πn/N)`` (N = size if periodic else size − 1), an import-time
    constant computed in float64 and rounded to ``output_datatype`` (``size`` must be constant)."""
    return [_window(ctx, "hann")]


@lowering("HammingWindow")
def HammingWindow(ctx: NodeContext) -> Result:
    """HammingWindow (opset 17): ``α − (1 − α)·cos(2πn/N)``, α = 25/46; import-time constant."""
    return [_window(ctx, "hamming")]


@lowering("BlackmanWindow")
def BlackmanWindow(ctx: NodeContext) -> Result:
    """BlackmanWindow (opset 17): ``0.42 − 0.5·cos(2πn/N) + 0.08·cos(4πn/N)``; import-time constant."""
    return [_window(ctx, "blackman")]


@lowering("MelWeightMatrix")
def MelWeightMatrix(ctx: NodeContext) -> Result:
    """MelWeightMatrix (opset 17): an import-time constant [dft_length/2 + 1, num_mel_bins] of
    triangular filters between mel-spaced bin edges (mel = 2595·log10(1 + f/700), num_mel_bins + 2
    edges mapped to bins ⌊(dft_length + 1)·f / sample_rate⌋), as onnx's reference computes them."""
    from onnx.helper import tensor_dtype_to_np_dtype

    bins = int(scalar_const(ctx, 0, "num_mel_bins"))
    dft_length = int(scalar_const(ctx, 1, "dft_length"))
    rate = scalar_const(ctx, 2, "sample_rate")
    lo = float(scalar_const(ctx, 3, "lower_edge_hertz"))
    hi = float(scalar_const(ctx, 4, "upper_edge_hertz"))
    dtype = tensor_dtype_to_np_dtype(int(ctx.attr("output_datatype", 1)))
    lo_mel = 2595 * np.log1p(lo / 700) / np.log(10)
    hi_mel = 2595 * np.log1p(hi / 700) / np.log(10)
    edges = np.arange(bins + 2) * ((hi_mel - lo_mel) / (bins + 2)) + lo_mel
    hz = 700 * np.expm1(edges / 2595 * np.log(10))
    idx = (((dft_length + 1) * hz) // rate).astype(np.int64)
    out = np.zeros((dft_length // 2 + 1, bins))
    for i in range(bins):
        left, center, right = int(idx[i]), int(idx[i + 1]), int(idx[i + 2])
        if center == left:
            out[center, i] = 1.0
        else:
            for j in range(left, center + 1):
                out[j, i] = (j - left) / (center - left)
        if right > center:
            for j in range(center, right):
                out[j, i] = (right - j) / (right - center)
    return [out.astype(dtype)]
