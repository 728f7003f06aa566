"""NNEF ``roi_resample`` / ``*_roi_align`` (spec §4.6.2) sample positions, pinned to the spec's text.

§4.6.2: "The interpolation methods are the same as described in Up and Down-Sampling" (§4.3.4). Read with the
RoI ``(y0, x0, y1, x1)`` as an extent ``r = y1 − y0`` from ``y0`` (RoI pooling's ``r_H``), resampled to ``n``:
factor ``f = n / r``, and §4.3.4's index maps for output index ``i`` (coordinate ``y0 + t``):

* 'asymmetric': ``t = i / f``;
* 'symmetric': ``f0 = (f − 1)/2``, ``t = (i − f0) / f``;
* 'aligned': ``g(x) = (x·f − 1)/(x − 1)`` with ``x = r``, ``t = i / g(x)``.

``output = (1 − u)·in[j] + u·in[j + 1]`` per axis (``j = floor``, ``u = frac``), indices clamped to the feature
map (border 'replicate'). The oracles here: literal numbers worked out by hand from those formulas (on a ramp
``10·y + x``, which bilinear interpolation reproduces exactly away from the edges), and a small numpy model
written from the formulas above (not from ``nnkiln.reference.custom_nnef``).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import nnkiln.reference as ref
from nnkiln.frontends.nnef import load_nnef

H = W = 8


def _graph(tmp_path, call: str, n_rois: int, out: str = "y"):  # noqa: ANN001, ANN202
    d = tmp_path / "g"
    d.mkdir(exist_ok=True)
    (d / "graph.nnef").write_text(
        f"version 1.0;\ngraph G( x, rois, idx ) -> ( {out} )\n{{\n"
        f"    x = external(shape = [2, 2, {H}, {W}]);\n    rois = external(shape = [{n_rois}, 4]);\n"
        f"    idx = external<integer>(shape = [{n_rois}]);\n    {out} = {call};\n}}\n")
    return load_nnef(str(d))


def _run(module, x: np.ndarray, rois: list[list[float]], idx: list[int]) -> np.ndarray:  # noqa: ANN001
    feeds = {"x": x.astype(np.float32), "rois": np.array(rois, np.float32), "idx": np.array(idx, np.int32)}
    return np.asarray(next(iter(ref.run(module, feeds).values())))


def _ramp() -> np.ndarray:
    yy, xx = np.meshgrid(np.arange(H), np.arange(W), indexing="ij")
    x = np.zeros((2, 2, H, W))
    x[0, 0], x[0, 1] = 10 * yy + xx, -(10 * yy + xx)
    x[1, 0], x[1, 1] = 100 + 10 * yy + xx, 3 * yy - 2 * xx
    return x


# ------------------------------------------------------------------------------------------------
# hand-computed: RoI (1, 2, 5, 6) of an 8x8 map, output 3x3: r = 4, n = 3, f = 3/4
#   asymmetric: t = i·4/3            -> y = 1, 2.3333, 3.6667     x = 2, 3.3333, 4.6667
#   symmetric:  f0 = −1/8, t = (i + 1/8)·4/3 -> y = 1.1667, 2.5, 3.8333   x = 2.1667, 3.5, 4.8333
#   aligned:    g = (3 − 1)/(4 − 1) = 2/3, t = 1.5·i -> y = 1, 2.5, 4   x = 2, 3.5, 5
# and the ramp 10·y + x gives the output 10·y_i + x_j.

HAND = {
    "asymmetric": ([1, 7 / 3, 11 / 3], [2, 10 / 3, 14 / 3]),
    "symmetric": ([7 / 6, 2.5, 23 / 6], [13 / 6, 3.5, 29 / 6]),
    "aligned": ([1, 2.5, 4], [2, 3.5, 5]),
}


@pytest.mark.parametrize("method", list(HAND))
def test_hand_computed_positions(method: str, tmp_path) -> None:  # noqa: ANN001
    m = _graph(tmp_path, f"roi_resample(x, rois, idx, output_size = [3, 3], method = '{method}')", 1)
    got = _run(m, _ramp(), [[1, 2, 5, 6]], [0])
    ys, xs = HAND[method]
    want = 10 * np.array(ys)[:, None] + np.array(xs)[None, :]
    np.testing.assert_allclose(got[0, 0], want, rtol=0, atol=2e-5)
    np.testing.assert_allclose(got[0, 1], -want, rtol=0, atol=2e-5)


def test_aligned_ends_on_the_last_point_of_the_roi(tmp_path) -> None:  # noqa: ANN001
    """'aligned' maps the last output point to the last point of the RoI's extent, y1 − 1 (x1 − 1): the RoI
    (0, 0, 4, 4) resampled to 4x4 is the 4x4 corner itself, the RoI (2, 1, 7, 5) to 2x2 is its four corner
    pixels (rows 2 and 6, columns 1 and 4)."""
    x = _ramp()
    m = _graph(tmp_path, "roi_resample(x, rois, idx, output_size = [4, 4], method = 'aligned')", 2)
    got = _run(m, x, [[0, 0, 4, 4], [0, 0, 4, 4]], [0, 1])
    np.testing.assert_allclose(got[0], x[0, :, :4, :4], rtol=0, atol=1e-5)
    np.testing.assert_allclose(got[1], x[1, :, :4, :4], rtol=0, atol=1e-5)
    m2 = _graph(tmp_path, "roi_resample(x, rois, idx, output_size = [2, 2], method = 'aligned')", 1)
    np.testing.assert_allclose(_run(m2, x, [[2, 1, 7, 5]], [1])[0], x[1][:, [2, 6]][:, :, [1, 4]], rtol=0, atol=1e-5)


@pytest.mark.parametrize("method", list(HAND))
def test_whole_map_at_its_own_size_is_the_identity(method: str, tmp_path) -> None:  # noqa: ANN001
    """The RoI [0, H) x [0, W) resampled to H x W: t = i for every method (f = 1, f0 = 0, g = 1)."""
    x = np.random.default_rng(2).standard_normal((2, 2, H, W))
    m = _graph(tmp_path, f"roi_resample(x, rois, idx, output_size = [{H}, {W}], method = '{method}')", 2)
    got = _run(m, x, [[0, 0, H, W], [0, 0, H, W]], [1, 0])
    np.testing.assert_allclose(got, x[[1, 0]], rtol=0, atol=1e-6)


# ------------------------------------------------------------------------------------------------
# the numpy model of the spec's formulas, on random maps and RoIs (fractional, at and past the edges)


def _spec_t(method: str, i: int, r: float, n: int) -> float:
    f = n / r
    if method == "asymmetric":
        return i / f
    if method == "symmetric":
        f0 = (f - 1) / 2
        return (i - f0) / f
    if i == 0 or r == 1:  # 'aligned': t = i / g; i = 0 (g may be 0/0 when n = 1) and g = ±∞ (r = 1) give 0
        return 0.0
    g = (r * f - 1) / (r - 1)
    return i / g


def _spec_resample(x: np.ndarray, roi: list[float], b: int, n: tuple[int, int], method: str) -> np.ndarray:
    y0, x0, y1, x1 = roi
    out = np.zeros((x.shape[1], n[0], n[1]))
    for i in range(n[0]):
        cy = y0 + _spec_t(method, i, y1 - y0, n[0])
        jy, uy = math.floor(cy), cy - math.floor(cy)
        ry = [min(max(jy, 0), H - 1), min(max(jy + 1, 0), H - 1)]
        for k in range(n[1]):
            cx = x0 + _spec_t(method, k, x1 - x0, n[1])
            jx, ux = math.floor(cx), cx - math.floor(cx)
            rx = [min(max(jx, 0), W - 1), min(max(jx + 1, 0), W - 1)]
            top = (1 - ux) * x[b, :, ry[0], rx[0]] + ux * x[b, :, ry[0], rx[1]]
            bottom = (1 - ux) * x[b, :, ry[1], rx[0]] + ux * x[b, :, ry[1], rx[1]]
            out[:, i, k] = (1 - uy) * top + uy * bottom
    return out


ROIS = [[0.0, 0.0, 8.0, 8.0], [1.25, 2.5, 6.75, 7.0], [3.0, 0.5, 4.0, 2.0], [-1.5, 5.0, 3.0, 9.5],
        [2.0, 2.0, 2.5, 6.0], [0.5, 0.5, 7.5, 1.0]]


@pytest.mark.parametrize("method", list(HAND))
@pytest.mark.parametrize("size", [(3, 5), (1, 4), (9, 2)], ids=["3x5", "1x4", "9x2"])
def test_against_the_spec_model(method: str, size: tuple[int, int], tmp_path) -> None:  # noqa: ANN001
    rng = np.random.default_rng(5)
    x = rng.standard_normal((2, 2, H, W))
    idx = [int(v) for v in rng.integers(0, 2, len(ROIS))]
    m = _graph(tmp_path, f"roi_resample(x, rois, idx, output_size = [{size[0]}, {size[1]}], method = '{method}')",
               len(ROIS))
    got = _run(m, x, ROIS, idx)
    for k, (roi, b) in enumerate(zip(ROIS, idx)):
        np.testing.assert_allclose(got[k], _spec_resample(x, roi, b, size, method), rtol=0, atol=2e-5,
                                   err_msg=f"roi {roi}")


@pytest.mark.parametrize("pool", ["avg", "max"])
@pytest.mark.parametrize("method", ["aligned", "symmetric"])
def test_roi_align_is_resample_then_pool(pool: str, method: str, tmp_path) -> None:  # noqa: ANN001
    """§4.6.2's compounds: roi_resample to output_size·sampling_rate, then a pool of sampling_rate windows."""
    rng = np.random.default_rng(9)
    x = rng.standard_normal((2, 2, H, W))
    idx = [int(v) for v in rng.integers(0, 2, len(ROIS))]
    m = _graph(tmp_path, f"{pool}_roi_align(x, rois, idx, output_size = [2, 3], sampling_rate = [2, 2], "
                         f"resize_method = '{method}')", len(ROIS))
    got = _run(m, x, ROIS, idx)
    for k, (roi, b) in enumerate(zip(ROIS, idx)):
        fine = _spec_resample(x, roi, b, (4, 6), method).reshape(2, 2, 2, 3, 2)
        want = fine.mean(axis=(2, 4)) if pool == "avg" else fine.max(axis=(2, 4))
        np.testing.assert_allclose(got[k], want, rtol=0, atol=2e-5, err_msg=f"roi {roi}")
