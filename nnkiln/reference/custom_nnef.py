"""Kernels of the ``tosa.custom`` ops our NNEF reader makes: NNEF's RoI operations (NNEF spec §4.6) and the
1.0.5 trigonometric functions, for the reference interpreter and the runtime (numpy only, no xDSL).

Identifiers ``nnef.avg_roi_pool``, ``nnef.max_roi_pool``, ``nnef.roi_resample``; operands (input N C H W,
rois [R, 4] as (y0, x0, y1, x1), batch_index [R] or [R, 1]); ``implementation_attrs`` is a JSON object with
the NNEF attributes (``output_size``, ``method``). Semantics (§4.6): RoI pools round the coordinates,
cells have size ``ceil(r/p)`` and stride ``floor(r/p)`` from the RoI origin, clipped to the input;
``roi_resample`` samples the RoI at the ``method``'s positions (as multilinear_upsample) with bilinear
interpolation, clamped to the input (border 'replicate').

roi_resample positions (a decision; §4.6.2 only says "the interpolation methods are the same as described in
Up and Down-Sampling", §4.3.4). The RoI ``(y0, x0, y1, x1)`` is, as in RoI pooling, an extent ``r = y1 − y0``
starting at ``y0``: it plays the part of §4.3.4's input of extent ``x = r`` (offset by ``y0``) resampled to
``n`` = output_size, so the factor is ``f = n / r`` and sample ``i`` lies at ``y0 + t(i)`` with the spec's
index maps taken literally:

* 'asymmetric': ``t = i / f = i·r/n`` (the first sample at ``y0``, none reaches ``y1``);
* 'symmetric': ``t = (i − f0) / f`` with ``f0 = (f − 1)/2``, i.e. ``(i + ½)·r/n − ½``;
* 'aligned': ``t = i / g(x)`` with ``g(x) = (x·f − 1)/(x − 1) = (n − 1)/(r − 1)``, i.e. ``i·(r − 1)/(n − 1)``:
  "only the last point of the output interval maps to the last point in the input interval", and the last
  point of an extent ``r`` from ``y0`` is ``y1 − 1`` (not ``y1``: that would be a point past the RoI, and the
  three methods would disagree on what a RoI is; with the RoI ``[0, H)`` and ``n = H`` all three are the
  identity). ``n = 1`` samples ``y0``, and so does every sample when ``r = 1`` (``g`` infinite).

The weights are §4.3.4's ``(1 − u)·in[j] + u·in[j + 1]`` with ``j = floor``, ``u = frac`` of the coordinate. The
spec clamps indices to its input's extent; for a RoI whose corners need not be integers there is no cropped tensor
to clamp to, so the samples read the feature map of the RoI's batch item and clamp to *its* edges (``j = −1`` →
0, ``j + 1 = H`` → ``H − 1``; border 'replicate', the multilinear_upsample default): inside the map, samples next
to the RoI's boundary interpolate with the pixels just outside it, as RoI Align does.

NNEF 1.0.5's ``sin``, ``cos``, ``tan``, ``asin``, ``acos``, ``atan``, ``sinh``, ``cosh``, ``asinh``,
``acosh``, ``atanh`` are ``nnef.<name>``: the kernels of ``custom_math`` (one f32 operand and result).
"""

from __future__ import annotations

import json
import math

import numpy as np

from nnkiln.reference.custom_math import TRIG_FUNCTIONS, trig_f32

_DONE = False


def _attrs(call) -> dict:  # noqa: ANN001
    op = call.op
    raw = op.properties["implementation_attrs"].data if op is not None else call.attrs.get("implementation_attrs", "{}")
    return json.loads(raw or "{}")


def _roi_pool(call, is_max: bool) -> list[np.ndarray]:  # noqa: ANN001
    x, rois, bidx = (np.asarray(a) for a in call.inputs[:3])
    ph, pw = _attrs(call)["output_size"]
    r = rois.shape[0]
    out = np.zeros((r, x.shape[1], ph, pw), dtype=np.float32)
    for k in range(r):
        b = int(np.asarray(bidx).reshape(-1)[k])
        y0, x0, y1, x1 = (int(math.floor(v + 0.5)) for v in rois[k])
        rh, rw = max(y1 - y0, 1), max(x1 - x0, 1)
        sh, sw, ch, cw = rh // ph, rw // pw, -(-rh // ph), -(-rw // pw)
        for i in range(ph):
            for j in range(pw):
                ya, xa = min(max(y0 + i * sh, 0), x.shape[2]), min(max(x0 + j * sw, 0), x.shape[3])
                yb, xb = min(max(ya + ch, 0), x.shape[2]), min(max(xa + cw, 0), x.shape[3])
                cell = x[b, :, ya:yb, xa:xb]
                if cell.size:
                    out[k, :, i, j] = cell.max(axis=(1, 2)) if is_max else cell.mean(axis=(1, 2))
    return [out]


def _roi_resample(call) -> list[np.ndarray]:  # noqa: ANN001
    x, rois, bidx = (np.asarray(a) for a in call.inputs[:3])
    a = _attrs(call)
    oh, ow = a["output_size"]
    method = a.get("method", "symmetric")
    h, w = x.shape[2], x.shape[3]
    out = np.zeros((rois.shape[0], x.shape[1], oh, ow), dtype=np.float32)

    def positions(lo: float, hi: float, n: int) -> np.ndarray:
        """The input coordinates of the ``n`` samples of the RoI extent ``r = hi − lo`` (module docstring)."""
        i = np.arange(n, dtype=np.float64)
        if method == "aligned":  # i / g(r), g(r) = (r·f − 1) / (r − 1) = (n − 1) / (r − 1): the end at hi − 1
            return lo + i * (hi - lo - 1.0) / max(n - 1, 1)
        if method == "asymmetric":  # i / f, f = n / r
            return lo + i * (hi - lo) / n
        return lo + (i + 0.5) * (hi - lo) / n - 0.5  # (i − f0) / f, f0 = (f − 1) / 2

    for k in range(rois.shape[0]):
        b = int(np.asarray(bidx).reshape(-1)[k])
        y0, x0, y1, x1 = (float(v) for v in rois[k])
        ys, xs = positions(y0, y1, oh), positions(x0, x1, ow)
        for i, yy in enumerate(ys):
            for j, xx in enumerate(xs):
                fy, fx = math.floor(yy), math.floor(xx)
                uy, ux = yy - fy, xx - fx
                cy = [min(max(fy, 0), h - 1), min(max(fy + 1, 0), h - 1)]
                cx = [min(max(fx, 0), w - 1), min(max(fx + 1, 0), w - 1)]
                out[k, :, i, j] = ((1 - uy) * ((1 - ux) * x[b, :, cy[0], cx[0]] + ux * x[b, :, cy[0], cx[1]])
                                   + uy * ((1 - ux) * x[b, :, cy[1], cx[0]] + ux * x[b, :, cy[1], cx[1]]))
    return [out]



def register() -> None:
    """Register the kernels for the reference interpreter and the runtime (idempotent)."""
    global _DONE
    if _DONE:
        return
    from nnkiln.reference.registry import register_custom

    register_custom("nnef.avg_roi_pool", lambda c: _roi_pool(c, False))
    register_custom("nnef.max_roi_pool", lambda c: _roi_pool(c, True))
    register_custom("nnef.roi_resample", _roi_resample)
    for name in TRIG_FUNCTIONS:
        register_custom(f"nnef.{name}", lambda c, name=name: [trig_f32(name, c.inputs[0])])
    _DONE = True
