"""Resize and Upsample via TOSA RESIZE (conventions of the shape family: see ``_shape_common``).
"""

from __future__ import annotations

import math

import numpy as np

from nnkiln.dialects.tosa.base import Kind
from nnkiln.dialects.tosa.ops_image import ResizeMode, ResizeOp, resize_output_dim
from nnkiln.frontends.common.arith import etype
from nnkiln.frontends.common.broadcast import reshape
from nnkiln.frontends.common.layout import NCHW_TO_NHWC, NHWC_TO_NCHW, transpose
from nnkiln.frontends.onnx.importer import NodeContext
from nnkiln.frontends.onnx.lowerings import lowering
from nnkiln.frontends.onnx.lowerings._shape_common import Result, norm_axis, require_nonempty

# ------------------------------------------------------------------------------------------------
# Resize / Upsample


def _onnx_coord(mode: str, out_size: int, in_size: int, scale: float) -> np.ndarray:
    """ONNX's coordinate transformation (x_original per output index), in float64 like ONNX's reference."""
    x = np.arange(out_size, dtype=np.float64)
    width = scale * in_size  # ONNX uses the real-valued output width in these formulas
    if mode == "half_pixel":
        return (x + 0.5) / scale - 0.5
    if mode == "pytorch_half_pixel":
        return (x + 0.5) / scale - 0.5 if width != 1 else np.full(out_size, -0.5)
    if mode == "align_corners":
        return x * (in_size - 1) / (width - 1) if width != 1 else np.zeros(out_size)
    if mode == "asymmetric":
        return x / scale
    if mode == "tf_half_pixel_for_nn":
        return (x + 0.5) / scale
    if mode == "half_pixel_symmetric":
        return _symmetric_offset(out_size, in_size, scale) + (x + 0.5) / scale - 0.5
    raise ValueError(mode)


def _symmetric_offset(out_size: int, in_size: int, scale: float) -> float:
    """half_pixel_symmetric's shift: ``in/2 * (1 - out / (scale * in))``."""
    return in_size / 2 * (1 - out_size / (scale * in_size))


def _onnx_nearest(coord: np.ndarray, nearest_mode: str, in_size: int) -> np.ndarray:
    if nearest_mode == "round_prefer_floor":
        idx = np.where(coord == np.floor(coord) + 0.5, np.floor(coord), np.round(coord))
    elif nearest_mode == "round_prefer_ceil":
        idx = np.where(coord == np.floor(coord) + 0.5, np.ceil(coord), np.round(coord))
    elif nearest_mode == "floor":
        idx = np.floor(coord)
    elif nearest_mode == "ceil":
        idx = np.ceil(coord)
    else:
        raise ValueError(nearest_mode)
    return np.clip(idx, 0, in_size - 1).astype(np.int64)


def _tosa_positions(out_size: int, stride: float, offset: float) -> np.ndarray:
    """RESIZE's float-mode sample positions (fp32, as §2.12.1 computes them)."""
    o = np.arange(out_size, dtype=np.float32)
    return o * np.float32(stride) + np.float32(offset)


def _tosa_nearest(out_size: int, in_size: int, stride: float, offset: float) -> np.ndarray | None:
    pos = _tosa_positions(out_size, stride, offset)
    i = np.floor(pos).astype(np.int64)
    d = pos - i.astype(np.float32)
    i0, i1 = np.maximum(i, 0), np.minimum(i + 1, in_size - 1)
    if np.any(i0 > i1):
        return None
    return np.where(d >= np.float32(0.5), i1, i0)


def _resize_axis(mode: str, ctm: str, nearest_mode: str, in_size: int, out_size: int,
                 scale: float) -> tuple[float, float] | None:
    """(stride, offset) of RESIZE's float mode reproducing ONNX on one axis, or None.

    The stride is ``1 / scale`` (``(in - 1) / (out - 1)`` for align_corners) and the offset the
    transformation's constant term, both rounded to fp32. Nearest: the ONNX rounding rule is
    emulated by moving the offset (floor: −0.5; ceil: +0.5 − ε; round_prefer_floor: −ε) and the
    candidate is accepted only if RESIZE's index for every output position equals ONNX's index.
    Linear: accepted when RESIZE's fp32 positions are within 1e-6 of ONNX's and no position needs a
    sample beyond the last row (ONNX clamps coordinates to the edge, as RESIZE does for iy < 0 and
    iy + 1 > IH - 1)."""
    coord = _onnx_coord(ctm, out_size, in_size, scale)
    width = scale * in_size
    if ctm == "align_corners":
        stride = (in_size - 1) / (width - 1) if width != 1 else 1.0
        offset = 0.0
    elif ctm in ("half_pixel", "pytorch_half_pixel"):
        stride = 1.0 / scale
        offset = 0.5 / scale - 0.5
        if ctm == "pytorch_half_pixel" and width == 1:
            stride, offset = 1.0, -0.5
    elif ctm == "asymmetric":
        stride, offset = 1.0 / scale, 0.0
    elif ctm == "half_pixel_symmetric":
        stride = 1.0 / scale
        offset = _symmetric_offset(out_size, in_size, scale) + 0.5 / scale - 0.5
    else:  # tf_half_pixel_for_nn
        stride, offset = 1.0 / scale, 0.5 / scale
    if stride > in_size:
        stride = float(in_size)  # any stride is fine when every position is checked below
        if out_size > 1:
            return None
    if mode == "nearest":
        want = _onnx_nearest(coord, nearest_mode, in_size)
        eps = 2.0 ** -12
        shifts = {"round_prefer_ceil": [0.0], "round_prefer_floor": [0.0, -eps],
                  "floor": [-0.5], "ceil": [0.5 - eps, 0.5 - 2 * eps]}[nearest_mode]
        for sh in shifts:
            got = _tosa_nearest(out_size, in_size, stride, offset + sh)
            if got is not None and np.array_equal(got, want):
                return stride, offset + sh
        return None
    pos = _tosa_positions(out_size, stride, offset).astype(np.float64)
    if np.any(np.abs(pos - coord) > 1e-6 * max(1.0, in_size)):
        return None
    if np.any(np.floor(pos) > in_size - 1):
        return None
    return stride, offset


_INT_SHIFT = 11
"""Integer RESIZE modes: positions in units of 2^-11 (the largest shift, finest offsets)."""


def _int_nearest_params(ctm: str, nearest_mode: str, in_size: int, out_size: int, scale: float,
                        stride: float, offset: float) -> tuple[int, int] | None:
    """int16 (stride, offset) for RESIZE's integer NEAREST mode (shift 11) reproducing ONNX's
    indices exactly, from the float-mode parameters rounded to 2^-11 (tried with small offset
    nudges); each candidate is checked index by index."""
    want = _onnx_nearest(_onnx_coord(ctm, out_size, in_size, scale), nearest_mode, in_size)
    unit = 1 << _INT_SHIFT
    s_i = int(round(stride * unit))
    if not 0 < s_i < (16 << _INT_SHIFT):
        return None
    o = np.arange(out_size, dtype=np.int64)
    for nudge in (0, -1, 1, -2, 2):
        o_i = int(round(offset * unit)) + nudge
        if not -(16 << _INT_SHIFT) < o_i < (16 << _INT_SHIFT):
            continue
        pos = o * s_i + o_i
        i = pos >> _INT_SHIFT
        d = pos - (i << _INT_SHIFT)
        i0, i1 = np.maximum(i, 0), np.minimum(i + 1, in_size - 1)
        if np.any(i0 > i1):
            continue
        if np.array_equal(np.where(d >= unit // 2, i1, i0), want):
            return s_i, o_i
    return None


def _resize_common(ctx: NodeContext, mode: str, ctm: str, nearest_mode: str, scl: list[float],
                   out: list[int]) -> list[Result]:
    """RESIZE for output sizes ``out`` with ONNX coordinate scales ``scl`` (one per axis)."""
    data = ctx.input(0)
    rank = data.rank
    if mode not in ("nearest", "linear", "bilinear"):
        raise ctx.error(f"mode '{mode}' is not supported (TOSA RESIZE has NEAREST and BILINEAR)")
    mode = "linear" if mode == "bilinear" else mode
    if ctm not in ("half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric", "tf_half_pixel_for_nn",
                   "half_pixel_symmetric"):
        raise ctx.error(f"coordinate_transformation_mode '{ctm}' is not supported")
    if len(out) != rank:
        raise ctx.error(f"scales/sizes have {len(out)} values for rank {rank}")
    if rank < 2 or any(o != i for o, i in zip(out[:-2], data.shape[:-2])):
        raise ctx.error(f"resizing dimensions other than the last two ({list(data.shape)} -> {out}) is not "
                        "supported (TOSA RESIZE resizes H and W of NHWC)")
    require_nonempty(ctx, out)
    if data.kind not in (Kind.F32, Kind.F16, Kind.BF16) and not (mode == "nearest" and data.kind in (Kind.I8, Kind.I16)):
        raise ctx.error(f"{data.kind.value} input is not supported for mode {mode}")
    params = []
    for a in (rank - 2, rank - 1):
        p = _resize_axis(mode, ctm, nearest_mode, data.shape[a], out[a], scl[a])
        if p is None:
            raise ctx.error(f"axis {a} ({data.shape[a]} -> {out[a]}, mode {mode}, {ctm}, {nearest_mode}) is not "
                            "supported: RESIZE's stride/offset cannot reproduce ONNX's sample positions")
        params.append(p)
    shift = 0
    if not data.kind.is_float:
        shift = _INT_SHIFT
        iparams = []
        for a, (st, of) in zip((rank - 2, rank - 1), params):
            ip = _int_nearest_params(ctm, nearest_mode, data.shape[a], out[a], scl[a], st, of)
            if ip is None:
                raise ctx.error(f"axis {a} ({data.shape[a]} -> {out[a]}, {ctm}, {nearest_mode}) is not supported "
                                f"for {data.kind.value}: RESIZE's int16 stride/offset cannot reproduce ONNX's indices")
            iparams.append(ip)
        params = iparams
    lead = data.shape[:-2]
    n = math.prod(lead)
    x = reshape(ctx.g, ctx.tensor(0), (n, 1, data.shape[-2], data.shape[-1]))
    x = transpose(ctx.g, x, NCHW_TO_NHWC)
    if shift:
        stride = [int(p[0]) for p in params]
        offset = [int(p[1]) for p in params]
    else:
        stride = [float(np.float32(p[0])) for p in params]
        offset = [float(np.float32(p[1])) for p in params]
    border = [o - resize_output_dim(i, st, of, 0, shift)
              for o, i, st, of in zip(out[-2:], data.shape[-2:], stride, offset)]
    r = ctx.g.value(
        ResizeOp, [x], etype(x),
        output_size=[out[-2], out[-1]],
        stride=stride, offset=offset, border=border, shift=shift,
        mode=ResizeMode.NEAREST if mode == "nearest" else ResizeMode.BILINEAR,
    )
    r = transpose(ctx.g, r, NHWC_TO_NCHW)
    return [reshape(ctx.g, r, tuple(lead) + (out[-2], out[-1]))]


@lowering("Resize")
def Resize(ctx: NodeContext) -> list[Result]:
    """Resize (opsets 10, 11, 13, 18, 19) on the last two axes via RESIZE's float mode (NCHW viewed
    as ``[N*C, 1, H, W]`` and transposed to NHWC). Supported: nearest (round_prefer_floor/ceil,
    floor, ceil) and linear with half_pixel, half_pixel_symmetric, pytorch_half_pixel,
    align_corners, asymmetric, tf_half_pixel_for_nn, and keep_aspect_ratio_policy stretch /
    not_larger / not_smaller, when RESIZE's fp32 stride/offset reproduce ONNX's sample positions
    (checked per output index at import; ``border`` is chosen so RESIZE's size rule gives ONNX's
    output size). Cubic, antialias, exclude_outside, tf_crop_and_resize and resizes of other axes than the
    last two (float32) are constant interpolation matrices (``resize_matrix``)."""
    data = ctx.input(0)
    mode = ctx.attr("mode", "nearest")
    ctm = ctx.attr("coordinate_transformation_mode", "half_pixel" if ctx.opset >= 11 else "asymmetric")
    nearest_mode = ctx.attr("nearest_mode", "round_prefer_floor" if ctx.opset >= 11 else "floor")
    if ctx.opset < 11:
        ctm = "asymmetric"
        nearest_mode = "floor"
    antialias = bool(int(ctx.attr("antialias", 0)))
    exclude_outside = bool(int(ctx.attr("exclude_outside", 0)))
    policy = ctx.attr("keep_aspect_ratio_policy", "stretch")
    cubic_a = float(ctx.attr("cubic_coeff_a", -0.75))
    extrapolation = float(ctx.attr("extrapolation_value", 0.0))
    rank = data.rank
    if mode not in ("nearest", "linear", "bilinear", "cubic"):
        raise ctx.error(f"mode '{mode}' is not supported")
    if ctx.opset < 11:
        scl = [float(s) for s in np.asarray(ctx.const(1, "scales")).reshape(-1)]
        out = [int(math.floor(i * s)) for i, s in zip(data.shape, scl)]
        return _resize_common(ctx, mode, ctm, nearest_mode, scl, out)
    scales_in = np.asarray(ctx.const(2, "scales")).reshape(-1) if ctx.has_input(2) else np.zeros(0)
    sizes_in = np.asarray(ctx.const(3, "sizes")).reshape(-1) if ctx.has_input(3) else np.zeros(0)
    axes = ctx.attr("axes")
    ax = list(range(rank)) if axes is None else [norm_axis(ctx, int(a), rank) for a in axes]
    scl = [1.0] * rank
    out = list(data.shape)
    if scales_in.size:
        for a, s in zip(ax, scales_in):
            scl[a] = float(s)
            out[a] = int(math.floor(data.shape[a] * float(s)))
    elif sizes_in.size:
        if policy == "stretch":
            for a, s in zip(ax, sizes_in):
                out[a] = int(s)
                scl[a] = int(s) / data.shape[a]
        elif policy in ("not_larger", "not_smaller"):
            ratios = [int(s) / data.shape[a] for a, s in zip(ax, sizes_in)]
            r = min(ratios) if policy == "not_larger" else max(ratios)
            for a in ax:
                scl[a] = r
                out[a] = int(np.round(r * data.shape[a]))
        else:
            raise ctx.error(f"keep_aspect_ratio_policy '{policy}' is not supported")
    else:
        raise ctx.error("one of scales and sizes is required")
    roi = None
    if ctm == "tf_crop_and_resize":
        if not ctx.has_input(1):
            raise ctx.error("coordinate_transformation_mode 'tf_crop_and_resize' needs the roi input")
        given = np.asarray(ctx.const(1, "roi"), np.float64).reshape(-1)
        if given.size != 2 * len(ax):
            raise ctx.error(f"roi has {given.size} values, expected {2 * len(ax)} (starts and ends)")
        roi = np.concatenate([np.zeros(rank), np.ones(rank)])
        for k, a in enumerate(ax):
            roi[a], roi[a + rank] = given[k], given[k + len(ax)]
    if (mode == "cubic" or antialias or exclude_outside or roi is not None
            or any(o != i for o, i in zip(out[:-2], data.shape[:-2]))):
        from nnkiln.frontends.onnx.lowerings.resize_matrix import resize_by_matrices

        return resize_by_matrices(ctx, mode, ctm, nearest_mode, scl, out, cubic_a, exclude_outside, antialias,
                                  roi, extrapolation)
    return _resize_common(ctx, mode, ctm, nearest_mode, scl, out)


@lowering("Upsample")
def Upsample(ctx: NodeContext) -> list[Result]:
    """Upsample (opset 7: scales attribute; 9: scales input): asymmetric coordinates, nearest uses
    floor (ONNX's reference) and linear interpolates."""
    mode = ctx.attr("mode", "nearest")
    if ctx.opset < 9:
        scales = [float(s) for s in ctx.attr("scales")]
    else:
        scales = [float(s) for s in np.asarray(ctx.const(1, "scales")).reshape(-1)]
    out = [int(math.floor(i * s)) for i, s in zip(ctx.input(0).shape, scales)]
    return _resize_common(ctx, mode, "asymmetric", "floor", scales, out)
