"""ONNX Resize as constant interpolation matrices: the modes TOSA 0.30's RESIZE cannot express.

RESIZE (§2.12.1) has NEAREST and BILINEAR on H and W of NHWC with one stride/offset per axis. ONNX Resize also
has cubic interpolation (``cubic_coeff_a``), ``exclude_outside``, ``antialias`` (a filter widened by 1/scale
when downsampling), ``tf_crop_and_resize`` (an ROI, ``extrapolation_value`` outside the input) and any set of
axes. All of them are separable: along one axis every output sample is a fixed linear combination of input
samples, so the resize is one MATMUL per resized axis with a constant ``[in, out]`` matrix, computed here in
float64 from the operator's definition (onnx.ai Resize; the reference implementation in
``onnx.reference.ops.op_resize`` is the oracle of the tests):

* ``x_original`` per output index by ``coordinate_transformation_mode`` (``shape_resize._onnx_coord``; for
  ``tf_crop_and_resize`` from the ROI ``[start, end]`` of the axis: ``start·(in-1) + j·(end-start)·(in-1)/
  (width-1)``, or ``(end-start)·(in-1)/2 + start·(in-1)`` when ``width = scale·in`` is 1, with the float32
  roundings of ONNX's reference, see ``axis_matrix``);
* ``ratio = x - floor(x)``, or 1 when ``x`` is an integer (the left neighbour is preferred); the n taps are
  ``x - ratio - n/2 + 1 + (0 .. n-1)``;
* coefficients: nearest (the ``nearest_mode`` choice between the two taps), linear ``[1-ratio, ratio]``, cubic
  Keys' kernel ``k(t)`` (``(A+2)|t|³ - (A+3)|t|² + 1`` for ``|t| <= 1``, ``A|t|³ - 5A|t|² + 8A|t| - 4A`` for
  ``|t| < 2``) at the taps' distances; with ``antialias`` (linear and cubic) the kernel is evaluated at
  ``min(scale, 1)·(offset - ratio)`` over ``2·ceil``-wide support and normalised to sum 1;
* taps outside the input take the edge sample, or, with ``exclude_outside``, weigh 0 and the rest is
  renormalised;
* ``tf_crop_and_resize``: an output index whose ``x_original`` lies outside ``[0, in-1]`` is
  ``extrapolation_value`` (its matrix column is zero and a constant is added; interpolating a constant gives
  the constant, so an output is the extrapolation value if any of its axes is outside).

Lowering: per resized axis (last first), the axis is moved last (TRANSPOSE), the tensor viewed as
``[1, rows, in]`` and multiplied by the constant ``[1, in, out]`` (MATMUL, fp32), then moved back. Numerics:
fp32 products and sums of fp32-rounded weights, within ~1e-6 relative of the float64 reference. Only float32
data (fp16 MATMUL would accumulate in fp16).
"""

from __future__ import annotations

import math

import numpy as np

from nnkiln.dialects.tosa.base import Kind
from nnkiln.frontends.common.broadcast import reshape
from nnkiln.frontends.common.layout import transpose
from nnkiln.frontends.onnx.importer import NodeContext
from nnkiln.frontends.onnx.lowerings._composite_common import bmm
from nnkiln.frontends.onnx.lowerings._shape_common import Result, require_nonempty


def _keys(t: np.ndarray, a: float) -> np.ndarray:
    """Keys' cubic convolution kernel with parameter ``a`` at distances ``t``."""
    t = np.abs(t)
    near = ((a + 2) * t - (a + 3)) * t * t + 1
    far = ((a * t - 5 * a) * t + 8 * a) * t - 4 * a
    return np.where(t <= 1, near, np.where(t < 2, far, 0.0))


def _coefficients(mode: str, nearest_mode: str, ratio: float, scale: float, cubic_a: float,
                  antialias: bool) -> np.ndarray:
    """The taps' weights for one output sample (taps at offsets ``1 - n/2 .. n/2`` from ``x - ratio``)."""
    if mode == "nearest":
        if ratio == 1.0:
            return np.array([0.0, 1.0])
        up = {"round_prefer_floor": ratio > 0.5, "round_prefer_ceil": ratio >= 0.5, "floor": False,
              "ceil": True}[nearest_mode]
        return np.array([0.0, 1.0]) if up else np.array([1.0, 0.0])
    half = 1 if mode == "linear" else 2
    if antialias:
        s = min(scale, 1.0)
        start = int(math.floor(-half / s)) + 1
        offsets = np.arange(start, 2 - start, dtype=np.float64)
        args = s * (offsets - ratio)
        w = np.clip(1 - np.abs(args), 0, 1) if mode == "linear" else _keys(args, cubic_a)
        return w / w.sum()
    if mode == "linear":
        return np.array([1 - ratio, ratio])
    return _keys(np.array([ratio + 1, ratio, 1 - ratio, 2 - ratio]), cubic_a)


def axis_matrix(mode: str, ctm: str, nearest_mode: str, in_size: int, out_size: int, scale: float,
                cubic_a: float = -0.75, exclude_outside: bool = False, antialias: bool = False,
                roi: tuple[float, float] = (0.0, 1.0)) -> tuple[np.ndarray, np.ndarray]:
    """(W [in, out] float64, outside [out] bool): output ``j`` = ``sum_i x[i]·W[i, j]``, or the extrapolation
    value where ``outside[j]`` (``tf_crop_and_resize`` only)."""
    from nnkiln.frontends.onnx.lowerings.shape_resize import _onnx_coord

    width = scale * in_size
    if ctm == "tf_crop_and_resize":
        # the ROI is float32; ONNX's reference rounds ``end - start`` and ``start·(in-1)`` to float32 (and the
        # whole position for a single output) before the float64 arithmetic: a half-way position such as
        # 0.3·5 = 1.5 then stays half-way, which decides nearest-mode ties
        start, end = np.float32(roi[0]), np.float32(roi[1])
        base = start * np.float32(in_size - 1)
        if width != 1:
            j = np.arange(out_size, dtype=np.float64)
            x = j * float(end - start) * (in_size - 1) / (width - 1) + float(base)
        else:
            x = np.full(out_size, float((end - start) * np.float32(in_size - 1) / np.float32(2) + base))
        outside = (x < 0) | (x > in_size - 1)
    else:
        x = _onnx_coord(ctm, out_size, in_size, scale)
        outside = np.zeros(out_size, bool)
    w = np.zeros((in_size, out_size))
    for j in range(out_size):
        if outside[j]:
            continue
        xj = float(x[j])
        ratio = 1.0 if xj.is_integer() else xj - math.floor(xj)
        c = _coefficients(mode, nearest_mode, ratio, scale, cubic_a, antialias)
        n = c.size
        taps = int(round(xj - ratio)) - n // 2 + 1 + np.arange(n)
        if exclude_outside:
            c = np.where((taps < 0) | (taps >= in_size), 0.0, c)
            c = c / c.sum()
        np.add.at(w[:, j], np.clip(taps, 0, in_size - 1), c)
    return w, outside


def resize_by_matrices(ctx: NodeContext, mode: str, ctm: str, nearest_mode: str, scl: list[float],
                       out: list[int], cubic_a: float, exclude_outside: bool, antialias: bool,
                       roi: np.ndarray | None, extrapolation: float) -> list[Result]:
    """Resize input 0 to ``out`` (coordinate scales ``scl``; ``roi`` = starts then ends, per axis) through
    one constant-matrix MATMUL per resized axis (see the module docstring)."""
    data = ctx.input(0)
    mode = "linear" if mode == "bilinear" else mode
    if data.kind is not Kind.F32:
        raise ctx.error(f"mode '{mode}' (interpolation matrices) is supported for float32 data, not "
                        f"{data.kind.value}")
    rank = data.rank
    require_nonempty(ctx, out)
    x = ctx.tensor(0)
    shape = list(data.shape)
    outside_masks: dict[int, np.ndarray] = {}
    for a in reversed(range(rank)):
        pair = (float(roi[a]), float(roi[a + rank])) if roi is not None else (0.0, 1.0)
        w, outside = axis_matrix(mode, ctm, nearest_mode, shape[a], out[a], scl[a], cubic_a, exclude_outside,
                                 antialias, pair)
        if out[a] == shape[a] and not outside.any() and np.array_equal(w, np.eye(shape[a])):
            continue  # this axis is not resized
        if outside.any():
            outside_masks[a] = outside
        perm = [i for i in range(rank) if i != a] + [a]
        moved = transpose(ctx.g, x, perm) if a != rank - 1 else x
        rows = math.prod(shape) // shape[a]
        lhs = reshape(ctx.g, moved, (1, rows, shape[a]))
        y = bmm(ctx.g, lhs, ctx.g.const(w.astype(np.float32).reshape(1, shape[a], out[a])))
        moved_shape = [shape[i] for i in perm[:-1]] + [out[a]]
        y = reshape(ctx.g, y, tuple(moved_shape))
        x = transpose(ctx.g, y, [int(i) for i in np.argsort(perm)]) if a != rank - 1 else y
        shape[a] = out[a]
    if outside_masks:
        from nnkiln.dialects.tosa.ops_elementwise_binary import AddOp

        inside = np.ones([out[a] if a in outside_masks else 1 for a in range(rank)], bool)
        for a, m in outside_masks.items():
            inside &= ~m.reshape([-1 if i == a else 1 for i in range(rank)])
        extra = np.where(inside, 0.0, extrapolation).astype(np.float32)
        x = ctx.g.value(AddOp, [x, ctx.g.const(extra)], x.type.element_type)  # type: ignore[attr-defined]
    return [x]
