"""Native CONV2D / DEPTHWISE_CONV2D kernels (native/conv.c via kernels.conv) against the
numpy fallback and the reference interpreter.

Expected values: the reference interpreter's kernels (nnkiln.reference: the spec's pseudocode, §2.3.3
CONV2D and §2.3.5 DEPTHWISE_CONV2D) followed by the post-ops one at a time, plus one hand-computed case.
Tolerances: CONV2D (GEMM, another summation order) 1e-5 relative to the output's largest magnitude;
DEPTHWISE_CONV2D: the numpy path identical (the reference's float32 operations in its order), the native
kernel within 1e-5 (the reference's sums in its order as fused multiply-adds; it skips padded taps exactly like
the reference).
Every case runs with the native kernels and with them disabled (``kernels.conv.native_lib`` -> None,
as under NNKILN_NO_NATIVE=1).
"""

from __future__ import annotations

import subprocess
import sys
import threading

import numpy as np
import pytest

from nnkiln.blob.format import BufferDesc, Memory
from nnkiln.blob.writer import BlobBuilder, encode
from nnkiln.kinds import Kind
from nnkiln.reference.registry import KernelCall, load_kernels
from nnkiln.runtime import blas, load_blob, native
from nnkiln.runtime.kernels import conv as conv_mod
from nnkiln.runtime.kernels import epilogue, winograd

F = Kind.F32
KERNELS = load_kernels(with_ir=False)
RNG = np.random.default_rng(5)
LIB = conv_mod.native_lib()
PATHS = [pytest.param(True, id="native", marks=pytest.mark.native),
         pytest.param(False, id="numpy")]
RELU6 = {"kernel": "tosa.clamp", "attrs": {"min_val": 0.0, "max_val": 6.0}}


@pytest.fixture
def path(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> bool:
    use_native = bool(request.param)
    if not use_native:
        monkeypatch.setattr(conv_mod, "native_lib", lambda: None)
    return use_native


def _f(*shape: int) -> np.ndarray:
    return RNG.standard_normal(shape).astype(np.float32)


def _ref(name: str, inputs: list[np.ndarray], attrs: dict, out_shape: tuple[int, ...]) -> np.ndarray:
    call = KernelCall(name=name, inputs=inputs, attrs=attrs, out_kinds=[F], out_dtypes=[np.dtype(np.float32)],
                      out_shapes=[out_shape], in_kinds=[F] * len(inputs))
    return np.asarray(KERNELS[name](call)[0])


def _ref_posts(e: np.ndarray, posts: list[dict], extras: list[np.ndarray]) -> np.ndarray:
    k = 0
    for p in posts:
        if p.get("operand") is not None:
            e = _ref(p["kernel"], [e, extras[k]], p.get("attrs", {}), e.shape)
            k += 1
        else:
            e = _ref(p["kernel"], [e], p.get("attrs", {}), e.shape)
    return e


def _desc(shape: tuple[int, ...]) -> BufferDesc:
    return BufferDesc(Memory.ARENA, F, tuple(shape), 0, 4 * int(np.prod(shape)))


def _kernel(depthwise: bool, attrs: dict, x: np.ndarray, w: np.ndarray, b: np.ndarray, out_shape: tuple[int, ...],
            posts: list[dict] = (), extras: list[np.ndarray] = (), const_w: bool = True):  # noqa: ANN202
    """The fast kernel as kernels.fast builds it (constants given when const_w)."""
    epi = epilogue.build(list(posts), _desc(out_shape), [_desc(e.shape) for e in extras]) if posts else None
    ib = [_desc(x.shape), _desc(w.shape), _desc(b.shape)]
    if depthwise:
        return conv_mod.depthwise(attrs, ib, [_desc(out_shape)], epi)
    return conv_mod.conv2d(attrs, ib, [_desc(out_shape)], [None, w if const_w else None, b], epi)


def _call(fn, x, w, b, out_shape, extras=()):  # noqa: ANN001, ANN202
    out = np.full(out_shape, np.nan, np.float32)
    fn([x, w, b], [out], list(extras))
    return out


def _close(a: np.ndarray, e: np.ndarray, before: np.ndarray | None = None) -> None:
    """Within 1e-5 of the largest magnitude of ``e``, or of ``before`` (the convolution's result before the post-ops:
    a sigmoid of sums of magnitude 30 carries their rounding, though it is at most 1)."""
    scale = max(float(np.nanmax(np.abs(x[np.isfinite(x)]), initial=0)) for x in (e, e if before is None else before))
    np.testing.assert_allclose(a, e, rtol=1e-5, atol=1e-5 * max(scale, 1e-30))


def _attrs(pad, stride, dil) -> dict:  # noqa: ANN001
    return {"pad": tuple(pad), "stride": tuple(stride), "dilation": tuple(dil), "input_zp": 0, "weight_zp": 0}


def _out_hw(ih, iw, kh, kw, pad, stride, dil):  # noqa: ANN001, ANN202
    return ((ih - 1 + pad[0] + pad[1] - (kh - 1) * dil[0]) // stride[0] + 1,
            (iw - 1 + pad[2] + pad[3] - (kw - 1) * dil[1]) // stride[1] + 1)


# -- CONV2D ------------------------------------------------------------------------------------------------

CONV_CASES = [
    # n, ih, iw, ic, oc, kh, kw, pad, stride, dilation
    (1, 9, 11, 5, 20, 3, 3, (1, 1, 1, 1), (1, 1), (1, 1)),
    (2, 10, 7, 13, 33, 3, 2, (0, 2, 1, 0), (2, 1), (1, 2)),     # batch 2, asymmetric pad, dilation
    (1, 12, 12, 16, 96, 1, 1, (0, 0, 0, 0), (1, 1), (1, 1)),    # 1x1 direct
    (3, 7, 5, 24, 8, 1, 1, (0, 0, 0, 0), (2, 2), (1, 1)),       # strided 1x1, OC < 16, rows not a multiple of 6
    (1, 15, 13, 3, 32, 3, 3, (1, 1, 1, 1), (2, 2), (1, 1)),     # stem-like, IC = 3
    (1, 11, 11, 3, 17, 7, 7, (3, 3, 3, 3), (2, 2), (1, 1)),     # 7x7 stem, OC = 16 + 1
    (2, 6, 6, 40, 70, 3, 3, (2, 0, 0, 3), (1, 1), (2, 2)),      # pad larger than a side, dilation 2
    (1, 4, 4, 300, 24, 3, 3, (1, 1, 1, 1), (1, 1), (1, 1)),     # long K (2700), OC = 24 (8-channel tail)
    (1, 7, 7, 80, 40, 3, 3, (1, 1, 1, 1), (1, 1), (1, 1)),      # long K (720) in k blocks, 49 rows: a 1-row tile
    (1, 7, 7, 80, 64, 3, 3, (1, 1, 1, 1), (1, 1), (1, 1)),      # k blocks, panel pairs (AVX-512): pair partial sums
    (1, 9, 9, 80, 96, 3, 3, (1, 1, 1, 1), (1, 1), (1, 1)),      # column blocks of 5 panels: pairs and a lone panel
]


@pytest.mark.parametrize("path", PATHS, indirect=True)
@pytest.mark.parametrize("case", CONV_CASES)
def test_conv2d_matches_reference(path: bool, case: tuple) -> None:
    n, ih, iw, ic, oc, kh, kw, pad, stride, dil = case
    oh, ow = _out_hw(ih, iw, kh, kw, pad, stride, dil)
    x, w, b = _f(n, ih, iw, ic), _f(oc, kh, kw, ic), _f(oc)
    attrs = _attrs(pad, stride, dil)
    e = _ref("tosa.conv2d", [x, w, b], attrs, (n, oh, ow, oc))
    for const_w in (True, False):
        fn = _kernel(False, attrs, x, w, b, (n, oh, ow, oc), const_w=const_w)
        assert fn is not None
        assert ("_native_conv" in getattr(fn, "run", fn).__qualname__) == path
        _close(_call(fn, x, w, b, (n, oh, ow, oc)), e)


EPILOGUES = [
    ([RELU6], 0),
    ([{"kernel": "tosa.add", "attrs": {}, "operand": 3}], 1),                                  # residual
    ([{"kernel": "tosa.add", "attrs": {}, "operand": 3}, {"kernel": "tosa.clamp", "attrs": {"min_val": 0.0, "max_val": 3.4e38}}], 1),
    ([{"kernel": "tosa.sub", "attrs": {}, "operand": 3}, RELU6, {"kernel": "tosa.mul", "attrs": {"shift": 0}, "operand": 4}], 2),
    ([{"kernel": "tosa.sigmoid", "attrs": {}}], 0),                                             # no C form: Python after
    # operands in the order of _extras: a residual, a per-channel scale, then single numbers (C codes 8-10)
    ([{"kernel": "tosa.add", "attrs": {}, "operand": 3}, {"kernel": "tosa.mul", "attrs": {"shift": 0}, "operand": 4},
      {"kernel": "tosa.mul", "attrs": {"shift": 0}, "operand": 5}, {"kernel": "tosa.sub", "attrs": {}, "operand": 6}], 4),
]


def _extras(shape: tuple[int, ...], nextra: int) -> list[np.ndarray]:
    """The post-ops' operands: [full, channel, one number, one number][:nextra]."""
    return [_f(*s) for s in [shape, (1, 1, 1, shape[-1]), (1, 1, 1, 1), (1, 1, 1, 1)][:nextra]]


def _check_conv_with_posts(x: np.ndarray, w: np.ndarray, b: np.ndarray, attrs: dict, shape: tuple, posts: list,
                           nextra: int) -> None:
    """The kernel of CONV2D + ``posts`` against the reference convolution followed by the post-ops."""
    extras = _extras(shape, nextra)
    conv = _ref("tosa.conv2d", [x, w, b], attrs, shape)
    e = _ref_posts(conv, posts, extras)
    got = _call(_kernel(False, attrs, x, w, b, shape, posts, extras), x, w, b, shape, extras)
    _close(got, e, conv)


@pytest.mark.parametrize("path", PATHS, indirect=True)
@pytest.mark.parametrize("posts,nextra", EPILOGUES)
@pytest.mark.parametrize("ic", [12, 40, 250])  # K = 108: tile-major; 360: panel-major; 2250: in k blocks (conv_item)
@pytest.mark.parametrize("oc", [37, 48])  # two panels and 5 channels; a pair and a full lone panel (AVX-512 tiles)
def test_conv2d_fused_epilogues(path: bool, posts: list, nextra: int, ic: int, oc: int) -> None:
    n, ih, iw = 2, 9, 8
    # sums of order 1 also for K = 2250, so that RELU6 does not bound the result far below the rounding of the sums
    x, w, b = _f(n, ih, iw, ic) * (2 if ic < 100 else 0.03), _f(oc, 3, 3, ic), _f(oc)
    attrs = _attrs((1, 1, 1, 1), (1, 1), (1, 1))
    _check_conv_with_posts(x, w, b, attrs, (n, ih, iw, oc), posts, nextra)


@pytest.mark.parametrize("path", PATHS, indirect=True)
@pytest.mark.parametrize("posts,nextra", EPILOGUES)
@pytest.mark.parametrize("oc", [16, 48, 37])  # K <= 64: a lone panel, a pair + a lone one, partial (12-row tiles)
def test_conv2d_short_sums_in_twelve_row_tiles(path: bool, posts: list, nextra: int, oc: int) -> None:
    """1x1 convolutions of 32 channels over 2·7·9 = 126 rows: pairs of 6-row tiles (tile2_12 / tile1_12 with
    AVX-512) and the 6-row tiles of the remainder, against the reference."""
    n, ih, iw, ic = 2, 7, 9, 32
    x, w, b = _f(n, ih, iw, ic) * 2, _f(oc, 1, 1, ic), _f(oc)
    attrs = _attrs((0, 0, 0, 0), (1, 1), (1, 1))
    _check_conv_with_posts(x, w, b, attrs, (n, ih, iw, oc), posts, nextra)


WINOGRAD_CASES = [
    # n, ih, iw, ic, oc, pad
    (1, 9, 11, 32, 40, (1, 1, 1, 1)),   # odd output sizes (partial tiles), 8-channel output tail
    (2, 6, 7, 36, 33, (1, 1, 1, 1)),    # batch 2, IC not a multiple of 8 (scalar transform tail), OC = 32 + 1
    (1, 8, 8, 32, 48, (0, 0, 0, 0)),    # no padding
    (1, 7, 9, 40, 32, (2, 0, 0, 1)),    # asymmetric padding
    (2, 6, 7, 136, 130, (1, 1, 1, 1)),  # IC + OC > 256: three whole-image passes instead of fused blocks
    (1, 40, 38, 32, 40, (1, 1, 1, 1)),  # 380 tiles: several fused blocks, the last one partial
]


@pytest.mark.parametrize("path", PATHS, indirect=True)
@pytest.mark.parametrize("case", WINOGRAD_CASES)
def test_conv2d_winograd_matches_reference(path: bool, case: tuple, monkeypatch: pytest.MonkeyPatch) -> None:
    """3x3 stride-1 convolutions the compiler put on Winograd F(2x2, 3x3) (``variant``; native) against the
    reference, plain and with each epilogue the C code fuses (and one it does not)."""
    n, ih, iw, ic, oc, pad = case
    oh, ow = _out_hw(ih, iw, 3, 3, pad, (1, 1), (1, 1))
    x, w, b = _f(n, ih, iw, ic), _f(oc, 3, 3, ic), _f(oc)
    attrs = {**_attrs(pad, (1, 1), (1, 1)), "variant": "winograd"}
    shape = (n, oh, ow, oc)
    e = _ref("tosa.conv2d", [x, w, b], attrs, shape)
    fn = _kernel(False, attrs, x, w, b, shape)
    assert ("native_winograd" in getattr(fn, "run", fn).__qualname__) == path
    _close(_call(fn, x, w, b, shape), e)
    for posts, nextra in EPILOGUES:
        extras = _extras(shape, nextra)
        got = _call(_kernel(False, attrs, x, w, b, shape, posts, extras), x, w, b, shape, extras)
        _close(got, _ref_posts(e, posts, extras), e)


def test_winograd_transforms_are_the_minimal_filtering_identity() -> None:
    """The packed ``U[xi]`` with independently written B^T and A^T reproduce a 2x2 block of the 3x3 correlation of a
    4x4 patch: A^T [U ⊙ (B^T d B)] A = sum_{ky,kx} d[y+ky, x+kx] g[ky, kx] (float64 check of the float32 weights)."""
    bt = np.array([[1, 0, -1, 0], [0, 1, 1, 0], [0, -1, 1, 0], [0, 1, 0, -1]], np.float64)
    at = np.array([[1, 1, 1, 0], [0, 1, -1, -1]], np.float64)
    oc, ic = 20, 3
    w = _f(oc, 3, 3, ic)
    packed = winograd.transformed_weights(w)
    panels = -(-oc // 16)
    u = packed.reshape(16, panels, ic, 16).transpose(0, 2, 1, 3).reshape(16, ic, panels * 16)[:, :, :oc]
    d = RNG.standard_normal((4, 4, ic))
    v = np.einsum("ir,rsc,js->ijc", bt, d, bt).reshape(16, ic)
    m = np.einsum("xc,xco->xo", v, u.astype(np.float64)).reshape(4, 4, oc)
    y = np.einsum("ir,rso,js->ijo", at, m, at)
    direct = np.array([[np.einsum("abc,oabc->o", d[r:r + 3, c:c + 3], w.astype(np.float64))
                        for c in range(2)] for r in range(2)])
    np.testing.assert_allclose(y, direct, rtol=1e-5, atol=1e-5)


def test_winograd_used_only_where_it_pays() -> None:
    from nnkiln.transforms.rt.select_kernel_variants import use_winograd

    assert use_winograd(1, 56, 56, 64, 64, 3, 3, (1, 1), (1, 1))
    assert use_winograd(1, 28, 28, 128, 128, 3, 3, (1, 1), (1, 1))
    assert not use_winograd(1, 7, 7, 512, 512, 3, 3, (1, 1), (1, 1))  # 16 MB of transformed weights
    assert not use_winograd(1, 15, 15, 32, 48, 3, 3, (1, 1), (1, 1))  # 3.1 M multiply-adds
    assert not use_winograd(1, 56, 56, 64, 64, 3, 3, (2, 2), (1, 1))
    assert not use_winograd(1, 56, 56, 64, 64, 3, 3, (1, 1), (2, 2))
    assert not use_winograd(1, 112, 112, 3, 64, 3, 3, (1, 1), (1, 1))  # a stem: IC = 3


@pytest.mark.parametrize("path", PATHS, indirect=True)
def test_conv2d_hand_computed(path: bool) -> None:
    """1x1 input channel, 2x2 kernel, pad bottom/right 1: out[y, x] = sum of the 2x2 window (zeros outside)
    weighted 1, 2, 3, 4, plus bias 0.5; then CLAMP(0, 10)."""
    x = np.array([1, 2, 3, 4], np.float32).reshape(1, 2, 2, 1)
    w = np.array([1, 2, 3, 4], np.float32).reshape(1, 2, 2, 1)
    b = np.array([0.5], np.float32)
    attrs = _attrs((0, 1, 0, 1), (1, 1), (1, 1))
    fn = _kernel(False, attrs, x, w, b, (1, 2, 2, 1), [{"kernel": "tosa.clamp", "attrs": {"min_val": 0.0, "max_val": 10.0}}])
    got = _call(fn, x, w, b, (1, 2, 2, 1))
    # [1*1+2*2+3*3+4*4, 2*1+0+4*3+0, 3*1+4*2, 4*1] + 0.5 = [30.5, 14.5, 11.5, 4.5] -> clamp 10
    np.testing.assert_array_equal(got.reshape(-1), np.array([10, 10, 10, 4.5], np.float32))


@pytest.mark.parametrize("path", PATHS, indirect=True)
def test_conv2d_nan_and_inf_propagate(path: bool) -> None:
    n, ih, iw, ic, oc = 1, 8, 8, 6, 20
    x, w, b = _f(n, ih, iw, ic), _f(oc, 3, 3, ic), _f(oc)
    x[0, 1, 1, 2] = np.nan
    x[0, 6, 5, 0] = np.inf
    attrs = _attrs((1, 1, 1, 1), (1, 1), (1, 1))
    shape = (n, ih, iw, oc)
    e = _ref_posts(_ref("tosa.conv2d", [x, w, b], attrs, shape), [RELU6], [])
    got = _call(_kernel(False, attrs, x, w, b, shape, [RELU6]), x, w, b, shape)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(e))
    assert np.isnan(got[0, 0:3, 0:3]).all()  # every window holding the NaN
    np.testing.assert_array_equal(np.isposinf(got), np.isposinf(e))
    fin = np.isfinite(e)
    _close(got[fin], e[fin])


@pytest.mark.parametrize("path", PATHS, indirect=True)
def test_conv2d_non_contiguous_operands(path: bool) -> None:
    n, ih, iw, ic, oc = 2, 7, 9, 5, 11
    big = _f(n, ih, iw, ic + 3)
    x = big[..., 1:ic + 1]                # a strided view
    w, b = _f(oc, 3, 3, ic), _f(oc)
    attrs = _attrs((1, 1, 0, 2), (1, 2), (1, 1))
    oh, ow = _out_hw(ih, iw, 3, 3, attrs["pad"], (1, 2), (1, 1))
    e = _ref("tosa.conv2d", [np.ascontiguousarray(x), w, b], attrs, (n, oh, ow, oc))
    fn = _kernel(False, attrs, x, w, b, (n, oh, ow, oc), const_w=False)
    outbig = np.full((n, oh, ow, oc + 2), np.nan, np.float32)
    out = outbig[..., :oc]                 # a non-contiguous output view
    fn([x, w, b], [out], [])
    _close(out, e)
    assert np.isnan(outbig[..., oc:]).all()  # nothing written outside the view


@pytest.mark.native
def test_threads_give_identical_results(monkeypatch: pytest.MonkeyPatch) -> None:
    """Threads split output rows / channel blocks, never a sum: 1, 2, 3 and 5 threads agree bit for bit (the shapes
    are above the size from which kernels use several threads); each thread takes its home range of the items
    first, then steals what is left of the others' (conv.c run_items), also over many jobs of changing thread
    counts in a row (a worker late from one job must not take the next one's items)."""
    x, w, b = _f(2, 13, 11, 24), _f(40, 3, 3, 24), _f(40)
    dx, dw, db = _f(2, 40, 40, 24), _f(3, 3, 24, 2), _f(48)
    dx1, dw1, db1 = _f(1, 60, 60, 32), _f(3, 3, 32, 1), _f(32)
    attrs = _attrs((1, 1, 1, 1), (1, 1), (1, 1))
    res = {}
    for t in (1, 2, 3, 5):
        monkeypatch.setattr(conv_mod, "kernel_threads", lambda t=t: t)
        res[t] = (_call(_kernel(False, attrs, x, w, b, (2, 13, 11, 40), [RELU6]), x, w, b, (2, 13, 11, 40)),
                  _call(_kernel(True, attrs, dx, dw, db, (2, 40, 40, 48), [RELU6]), dx, dw, db, (2, 40, 40, 48)),
                  _call(_kernel(True, attrs, dx1, dw1, db1, (1, 60, 60, 32), [RELU6]), dx1, dw1, db1, (1, 60, 60, 32)))
    for t in (2, 3, 5):
        for a, e in zip(res[t], res[1]):
            np.testing.assert_array_equal(a, e)
    assert conv_mod.native_lib().nk_pool_workers() >= 4  # the pool really ran the 5-thread jobs
    fn = _kernel(True, attrs, dx1, dw1, db1, (1, 60, 60, 32), [RELU6])
    for k in range(120):
        monkeypatch.setattr(conv_mod, "kernel_threads", lambda k=k: (2, 3, 5, 1)[k % 4])
        np.testing.assert_array_equal(_call(fn, dx1, dw1, db1, (1, 60, 60, 32)), res[1][2])


# -- DEPTHWISE_CONV2D --------------------------------------------------------------------------------------

DW_CASES = [
    # n, ih, iw, c, m, kh, kw, pad, stride, dilation
    (1, 9, 11, 20, 1, 3, 3, (1, 1, 1, 1), (1, 1), (1, 1)),     # 3x3 fast path + 4-channel tail
    (2, 9, 11, 19, 1, 3, 3, (0, 1, 1, 0), (2, 2), (1, 1)),     # batch 2, stride 2, asymmetric pad
    (1, 12, 14, 16, 1, 3, 3, (2, 2, 2, 2), (1, 1), (2, 2)),    # dilation 2 on the fast path
    (1, 6, 7, 8, 1, 3, 3, (3, 0, 0, 4), (1, 1), (1, 1)),       # pad wider than the kernel: whole rows outside
    (1, 9, 11, 5, 3, 3, 2, (2, 1, 0, 1), (1, 2), (2, 1)),      # channel multiplier 3
    (2, 8, 8, 12, 2, 5, 5, (2, 2, 2, 2), (2, 1), (1, 1)),      # multiplier 2, 5x5
    (1, 10, 10, 4, 1, 3, 3, (1, 1, 1, 1), (1, 1), (1, 1)),     # C < 8
    (1, 5, 40, 32, 1, 1, 7, (0, 0, 3, 3), (1, 3), (1, 1)),     # 1x7
    (1, 8, 9, 24, 1, 3, 3, (1, 1, 1, 1), (1, 1), (1, 1)),      # 3x3 rows inside the input, C % 8 == 0, odd pixels
    (2, 9, 10, 16, 1, 3, 3, (1, 1, 1, 1), (2, 2), (1, 1)),     # the same with stride 2
]


@pytest.mark.parametrize("path", PATHS, indirect=True)
@pytest.mark.parametrize("case", DW_CASES)
def test_depthwise_matches_reference(path: bool, case: tuple) -> None:
    n, ih, iw, c, m, kh, kw, pad, stride, dil = case
    oh, ow = _out_hw(ih, iw, kh, kw, pad, stride, dil)
    x, w, b = _f(n, ih, iw, c), _f(kh, kw, c, m), _f(c * m)
    attrs = _attrs(pad, stride, dil)
    shape = (n, oh, ow, c * m)
    e = _ref("tosa.depthwise_conv2d", [x, w, b], attrs, shape)
    fn = _kernel(True, attrs, x, w, b, shape)
    assert ("_native_depthwise" in getattr(fn, "run", fn).__qualname__) == path
    _dw_check(path, _call(fn, x, w, b, shape), e)
    extra = [_f(*shape)]
    for posts in ([RELU6], [{"kernel": "tosa.add", "attrs": {}, "operand": 3}, RELU6], [{"kernel": "tosa.tanh", "attrs": {}}]):
        ex = extra if any(p.get("operand") is not None for p in posts) else []
        e2 = _ref_posts(e, posts, ex)
        _dw_check(path, _call(_kernel(True, attrs, x, w, b, shape, posts, ex), x, w, b, shape, ex), e2)


def _dw_check(native: bool, got: np.ndarray, expected: np.ndarray) -> None:
    """Identical for the numpy path; within 1e-5 of the largest magnitude (NaN where NaN) for the native one."""
    if native:
        _close(got, expected)
    else:
        np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("path", PATHS, indirect=True)
def test_depthwise_bias_of_one_element_and_non_finite(path: bool) -> None:
    n, ih, iw, c = 1, 9, 9, 16
    x, w, b = _f(n, ih, iw, c), _f(3, 3, c, 1), _f(1)
    x[0, 4, 4, 3] = np.nan
    x[0, 0, 8, 9] = -np.inf
    attrs = _attrs((1, 1, 1, 1), (1, 1), (1, 1))
    shape = (n, ih, iw, c)
    e = _ref_posts(_ref("tosa.depthwise_conv2d", [x, w, b], attrs, shape), [RELU6], [])
    got = _call(_kernel(True, attrs, x, w, b, shape, [RELU6]), x, w, b, shape)
    _dw_check(path, got, e)          # NaN positions equal too
    assert np.isnan(got[0, 3:6, 3:6, 3]).all() and not np.isnan(got[0, :, :, 2]).any()


def test_depthwise_hand_computed() -> None:
    """2x2 input, one channel, 3x3 kernel of ones, pad 1: every output is the sum of all inputs it sees."""
    x = np.array([1, 2, 3, 4], np.float32).reshape(1, 2, 2, 1)
    w = np.ones((3, 3, 1, 1), np.float32)
    b = np.array([-1], np.float32)
    fn = _kernel(True, _attrs((1, 1, 1, 1), (1, 1), (1, 1)), x, w, b, (1, 2, 2, 1))
    np.testing.assert_array_equal(_call(fn, x, w, b, (1, 2, 2, 1)).reshape(-1), np.full(4, 9, np.float32))


# -- threads and whole blobs ----------------------------------------------------------------------------------


def test_kernel_threads_is_one_during_multi_executor_runs() -> None:
    outside = blas.kernel_threads()
    assert outside >= 1
    seen = []
    with blas.single_threaded_blas():
        seen.append(blas.kernel_threads())
        th = threading.Thread(target=lambda: seen.append(blas.kernel_threads()))
        th.start()
        th.join()
    assert seen == [1, 1]
    assert blas.kernel_threads() == outside


@pytest.mark.parametrize("path", PATHS, indirect=True)
def test_blob_conv_depthwise_chain(path: bool) -> None:
    """A blob: conv(3x3, relu6) -> depthwise(stride 2, relu6) -> conv(1x1) + residual add, against the
    reference kernels op by op."""
    x = _f(2, 10, 10, 6)
    w1, b1 = _f(24, 3, 3, 6), _f(24)
    w2, b2 = _f(3, 3, 24, 1), _f(24)
    w3, b3 = _f(24, 1, 1, 24), _f(24)
    a1 = _attrs((1, 1, 1, 1), (1, 1), (1, 1))
    a2 = _attrs((0, 1, 0, 1), (2, 2), (1, 1))
    a3 = _attrs((0, 0, 0, 0), (1, 1), (1, 1))
    bb = BlobBuilder()
    xin = bb.add_io("x", F, x.shape, output=False)
    c = [bb.add_const(a, F) for a in (w1, b1, w2, b2, w3, b3)]
    t1 = bb.add_arena(F, (2, 10, 10, 24), 0)
    t2 = bb.add_arena(F, (2, 5, 5, 24), 2 * 10 * 10 * 24 * 4)
    out = bb.add_io("y", F, (2, 5, 5, 24), output=True)
    bb.add_task("tosa.conv2d", [xin, c[0], c[1]], [t1], attrs=a1, post_ops=[RELU6])
    bb.add_task("tosa.depthwise_conv2d", [t1, c[2], c[3]], [t2], attrs=a2, post_ops=[RELU6])
    bb.add_task("tosa.conv2d", [t2, c[4], c[5], t2], [out], attrs=a3, post_ops=[{"kernel": "tosa.add", "attrs": {}, "operand": 3}])
    got = load_blob(encode(bb.finish())).run({"x": x})["y"]
    e1 = _ref_posts(_ref("tosa.conv2d", [x, w1, b1], a1, (2, 10, 10, 24)), [RELU6], [])
    e2 = _ref_posts(_ref("tosa.depthwise_conv2d", [e1, w2, b2], a2, (2, 5, 5, 24)), [RELU6], [])
    e3 = _ref("tosa.conv2d", [e2, w3, b3], a3, (2, 5, 5, 24)) + e2
    _close(got, e3)


@pytest.mark.parametrize("path", PATHS, indirect=True)
def test_blob_winograd_chain(path: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    """Winograd convolutions (the blob's ``variant``) inside a blob: the two arena-to-arena ones run bound, as one
    chain sharing a scratch buffer (padded input + transform work at an offset), against the reference op by op."""
    x = _f(1, 9, 10, 32)
    ws = [(_f(32, 3, 3, 32) * 0.2, _f(32)) for _ in range(3)]
    w4, b4 = _f(8, 1, 1, 32), _f(8)
    a3, a1 = _attrs((1, 1, 1, 1), (1, 1), (1, 1)), _attrs((0, 0, 0, 0), (1, 1), (1, 1))
    bb = BlobBuilder()
    xin = bb.add_io("x", F, x.shape, output=False)
    c = [bb.add_const(a, F) for wb in ws for a in wb] + [bb.add_const(w4, F), bb.add_const(b4, F)]
    size = 9 * 10 * 32 * 4
    t = [bb.add_arena(F, (1, 9, 10, 32), i * size) for i in range(3)]
    out = bb.add_io("y", F, (1, 9, 10, 8), output=True)
    wino = {**a3, "variant": "winograd"}
    bb.add_task("tosa.conv2d", [xin, c[0], c[1]], [t[0]], attrs=wino)
    bb.add_task("tosa.conv2d", [t[0], c[2], c[3]], [t[1]], attrs=wino, post_ops=[RELU6])
    bb.add_task("tosa.conv2d", [t[1], c[4], c[5], t[0]], [t[2]], attrs=wino,
                post_ops=[{"kernel": "tosa.add", "attrs": {}, "operand": 3}])
    bb.add_task("tosa.conv2d", [t[2], c[6], c[7]], [out], attrs=a1)
    got = load_blob(encode(bb.finish())).run({"x": x})["y"]
    e0 = _ref("tosa.conv2d", [x, *ws[0]], a3, (1, 9, 10, 32))
    e1 = _ref_posts(_ref("tosa.conv2d", [e0, *ws[1]], a3, (1, 9, 10, 32)), [RELU6], [])
    e2 = _ref("tosa.conv2d", [e1, *ws[2]], a3, (1, 9, 10, 32)) + e0
    _close(got, _ref("tosa.conv2d", [e2, w4, b4], a1, (1, 9, 10, 8)))


def test_no_native_environment_uses_numpy_path() -> None:
    code = ("from nnkiln.runtime.kernels import conv; from nnkiln.runtime import native; "
            "print(conv.native_lib() is None, native.status())")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={"NNKILN_NO_NATIVE": "1", "PATH": "", "PYTHONPATH": ":".join(sys.path)}).stdout
    assert out.startswith("True disabled by NNKILN_NO_NATIVE")


# -- MAX_POOL2D / AVG_POOL2D ----------------------------------------------------------------------------------

POOL_CASES = [
    # n, ih, iw, c, kh, kw, stride, pad
    (1, 12, 12, 64, 3, 3, (2, 2), (1, 1, 1, 1)),     # ResNet's stem pool
    (2, 9, 7, 13, 2, 3, (1, 2), (0, 1, 2, 0)),       # batch 2, asymmetric pad, channel tail
    (1, 7, 7, 20, 7, 7, (1, 1), (0, 0, 0, 0)),       # global
    (1, 5, 6, 3, 3, 3, (3, 3), (2, 2, 2, 2)),        # windows mostly in the padding
]


@pytest.mark.parametrize("path", PATHS, indirect=True)
@pytest.mark.parametrize("case", POOL_CASES)
@pytest.mark.parametrize("kind", ["tosa.max_pool2d", "tosa.avg_pool2d"])
def test_pools_identical_to_reference(path: bool, case: tuple, kind: str) -> None:
    from nnkiln.runtime.kernels import fast

    n, ih, iw, c, kh, kw, stride, pad = case
    oh, ow = _out_hw(ih, iw, kh, kw, pad, stride, (1, 1))
    x = _f(n, ih, iw, c)
    x[0, 1, 1, 0] = np.nan
    x[-1, -1, -1, -1] = -np.inf
    x[0, 0, 0, c - 1] = np.inf
    attrs = {"kernel": (kh, kw), "stride": stride, "pad": pad}
    if kind == "tosa.avg_pool2d":
        attrs.update(input_zp=0, output_zp=0, acc_type="f32")
    e = _ref(kind, [x], attrs, (n, oh, ow, c))
    fn = fast.build(kind, attrs, [_desc(x.shape)], [_desc((n, oh, ow, c))], [None])
    assert fn is not None
    assert (conv_mod.pool2d(kind == "tosa.max_pool2d", attrs, [_desc(x.shape)], [_desc((n, oh, ow, c))]) is not None) == path
    out = np.full((n, oh, ow, c), 7.0, np.float32)
    fn([x], [out], [])
    np.testing.assert_array_equal(out, e)
    if kind == "tosa.max_pool2d":
        assert np.isnan(out[0, :, :, 0]).any()


# -- FULLY_CONNECTED / MATMUL with constant weights (conv.native_gemm) ----------------------------------

WIDE = LIB is not None and bool(LIB.nk_wide_tiles())
GEMM_EPILOGUES = [
    ([], 0),
    ([RELU6], 0),
    ([{"kernel": "tosa.add", "attrs": {}, "operand": 3}], 1),                                  # full operand
    ([{"kernel": "tosa.mul", "attrs": {"shift": 0}, "operand": 3}, RELU6], 1),                 # per-channel operand
    ([{"kernel": "tosa.sigmoid", "attrs": {}}], 0),                                             # no C form
    ([{"kernel": "tosa.mul", "attrs": {"shift": 0}, "operand": 3, "scalar": True}, RELU6], 1),  # one number
]


def _gemm_fn(kind: str, shapes: tuple, const_w: np.ndarray | None, posts: list, extras: list):  # noqa: ANN202
    """The fast kernel as an executable with a native GEMM plan (small constant weights) builds it."""
    from nnkiln.runtime.kernels import fast
    from nnkiln.runtime.kernels.gemm import GemmPlan, planning

    in_shapes, out_shape = shapes
    epi = epilogue.build(list(posts), _desc(out_shape), [_desc(e.shape) for e in extras]) if posts else None
    with planning(GemmPlan(native=True, pooled=True)):
        return fast.build(kind, {}, [_desc(s) for s in in_shapes], [_desc(out_shape)],
                          [None, const_w, None][:len(in_shapes)], epi)


@pytest.mark.parametrize("path", PATHS, indirect=True)
@pytest.mark.parametrize("posts,nextra", GEMM_EPILOGUES)
@pytest.mark.parametrize("rows,k,n", [(128, 64, 96), (13, 300, 37), (1, 40, 1000), (50, 600, 48),
                                      # GEMMs of at most 4 rows (conv.c's few_rows: 4 panels, then single ones)
                                      (1, 1280, 1000), (2, 300, 37), (3, 77, 72), (4, 129, 8), (5, 64, 40)])
def test_gemm_with_constant_weights_matches_reference(path: bool, posts: list, nextra: int, rows: int, k: int, n: int,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """FULLY_CONNECTED [rows, k] x [n, k] + bias and MATMUL [1, rows, k] x [1, k, n] with constant weights: the
    native implicit GEMM where conv.c has its AVX-512 tiles (asserted: no BLAS call), BLAS otherwise; both within
    1e-5 of the reference kernels followed by the post-ops; at most 4 rows the native GEMM streams the weights
    once (few_rows), the same sums as the row tiles."""
    from nnkiln.runtime.kernels import fast

    calls: list[int] = []
    real_gemm = fast.gemm
    monkeypatch.setattr(fast, "gemm", lambda *a: calls.append(1) or real_gemm(*a))
    x, w, b = _f(rows, k), _f(n, k), _f(n)
    extras = [_f(rows, n) if p["kernel"] == "tosa.add" else _f(1, 1) if p.get("scalar") else _f(1, n)
              for p in posts if p.get("operand") is not None]
    fc = _gemm_fn("tosa.fully_connected", ([x.shape, w.shape, b.shape], (rows, n)), w, posts, extras)
    raw = _ref("tosa.fully_connected", [x, w, b], {"input_zp": 0, "weight_zp": 0}, (rows, n))
    e = _ref_posts(raw, posts, extras)
    out = np.full((rows, n), np.nan, np.float32)
    fc([x, w, b], [out], extras)
    _close(out, e, raw)  # a clamp to [0, 6] of sums of 1280 products keeps their rounding
    bm = np.ascontiguousarray(w.T).reshape(1, k, n)
    ex3 = [e.reshape(1, *e.shape) for e in extras]
    mm = _gemm_fn("tosa.matmul", ([(1, rows, k), bm.shape], (1, rows, n)), bm, posts, ex3)
    e3 = _ref_posts(_ref("tosa.matmul", [x.reshape(1, rows, k), bm], {"A_zp": 0, "B_zp": 0}, (1, rows, n)), posts, ex3)
    out3 = np.full((1, rows, n), np.nan, np.float32)
    mm([x.reshape(1, rows, k), bm], [out3], ex3)
    _close(out3, e3, raw)
    assert (not calls) == (path and WIDE), calls


def test_gemm_plan_packs_only_small_weight_sets() -> None:
    """The compiler (``select-kernel-variants``) keeps BLAS for programs whose constant GEMM weights total more than
    the target's ``native_gemm_max_bytes`` (no packed second copy of e.g. BERT-base's weights) and chooses the
    native GEMM for smaller ones on targets with wide vector units; the runtime follows the blob's choice where
    conv.c has its AVX-512 tiles."""
    from types import SimpleNamespace

    from nnkiln.blob.format import TaskDesc
    from nnkiln.runtime.kernels.gemm import SHARED_SMALL_FLOPS, SMALL_FLOPS, plan_for
    from nnkiln.transforms.rt.select_kernel_variants import gemm_plan

    limit = 64 << 20

    def blob_of(weight_bytes: list[int]) -> tuple[list, list]:
        bufs, tasks = [], []
        for nbytes in weight_bytes:
            bufs += [_desc((8, 8)), BufferDesc(Memory.CONSTANT, F, (nbytes // 4,), 0, nbytes), _desc((8, 8))]
            tasks.append(TaskDesc("compute", 0, "tosa.matmul", {}, (len(bufs) - 3, len(bufs) - 2), (len(bufs) - 1,)))
        return tasks, bufs

    def chosen(weight_bytes: list[int], wide: bool) -> str:
        tasks, bufs = blob_of(weight_bytes)
        return gemm_plan(SimpleNamespace(tasks=tasks, buffers=bufs), wide, limit)  # type: ignore[arg-type]

    assert chosen([1 << 20, 2 << 20], True) == "native" and chosen([1 << 20], False) == "blas"
    assert chosen([limit // 2, limit // 2 + 4], True) == "blas"
    assert chosen([], True) == "blas"
    small = plan_for(*blob_of([1 << 20, 2 << 20]), {"gemm": "native"})
    assert small.native == WIDE and small.small_flops == (SHARED_SMALL_FLOPS if WIDE else SMALL_FLOPS)
    assert small.pooled == WIDE
    big = plan_for(*blob_of([1 << 20]), {"gemm": "blas"})
    assert not big.native and big.small_flops == SMALL_FLOPS and not big.pooled
    assert not plan_for([], [], {}).native


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("small", [True, False])
def test_gemm_with_run_time_weights(threads: int, small: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two run-time operands: conv.c's batched product (``native_bmm``) where conv.c has its AVX-512 tiles and
    kernels may use several threads or the product is small (``_BMM_ONE_THREAD_MAX_MACS``); OpenBLAS otherwise."""
    from nnkiln.runtime.kernels import fast

    calls: list[int] = []
    real_gemm = fast.gemm
    monkeypatch.setattr(fast, "gemm", lambda *a: calls.append(1) or real_gemm(*a))
    monkeypatch.setattr(fast, "kernel_threads", lambda: threads)
    if not small:
        monkeypatch.setattr(fast, "_BMM_ONE_THREAD_MAX_MACS", 0)
    a, bm = _f(1, 20, 30), _f(1, 30, 40)
    fn = _gemm_fn("tosa.matmul", ([a.shape, bm.shape], (1, 20, 40)), None, [], [])
    out = np.empty((1, 20, 40), np.float32)
    fn([a, bm], [out], [])
    _close(out, _ref("tosa.matmul", [a, bm], {"A_zp": 0, "B_zp": 0}, (1, 20, 40)))
    assert calls == ([] if (threads > 1 or small) and WIDE else [1])


@pytest.mark.native
@pytest.mark.parametrize("flags,needs,tests", [
    ("-mno-avx512f", "avx512f", "native and (conv2d or gemm) and not other_builds"),  # what AVX2 machines run
    ("-mno-avx", "", "native and (conv2d or depthwise or pool) and not other_builds"),  # no SIMD at all: scalar C
])
def test_conv_kernels_in_other_builds(native_build, flags: str, needs: str, tests: str) -> None:  # noqa: ANN001
    """The library built for other machines (``NNKILN_NATIVE_FLAGS``) compiles and passes this file's native cases
    (loaded through ``NNKILN_NATIVE_LIB``, in a fresh process): the AVX2 tiles of a machine without AVX-512, and the
    scalar code of one without AVX (every SIMD path must stay behind the right guard)."""
    import os

    if needs and needs not in native.cpu_flags():
        pytest.skip(f"the default build has no {needs} paths to avoid")
    env = {**os.environ, "NNKILN_NATIVE_LIB": str(native_build(flags))}
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", __file__, "-k", tests],
                       capture_output=True, text=True, env=env, timeout=600)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-2000:]
    assert " passed" in r.stdout and "failed" not in r.stdout


# -- REDUCE_SUM over an outer axis (conv.reduce_sum) ---------------------------------------------------------

@pytest.mark.native
@pytest.mark.parametrize("shape,axis", [((1, 49, 1280), 1), ((2, 7, 5, 3), 1), ((2, 7, 5, 3), 2), ((3, 4, 5), 0),
                                        ((4, 1, 6), 1), ((2, 300, 2), 1)])
@pytest.mark.parametrize("posts,nextra", [([], 0), ([{"kernel": "tosa.mul", "attrs": {"shift": 0}, "operand": 1}], 1),
                                          ([{"kernel": "tosa.add", "attrs": {}, "operand": 1}, RELU6], 1)])
def test_reduce_sum_identical_to_reference(shape: tuple, axis: int, posts: list, nextra: int) -> None:
    """The rows added in numpy's order: bit-identical to the reference kernel, then the post-ops (one number, or
    one value per channel) as the reference applies them."""
    x = _f(*shape) * 10
    x.reshape(-1)[::53] = np.float32(1e-7)  # cancellations make a different order visible
    out_shape = tuple(1 if i == axis else d for i, d in enumerate(shape))
    scalar = posts and posts[0]["kernel"] == "tosa.mul"
    extras = [_f(*([1] * len(shape))) if scalar else _f(*([1] * (len(shape) - 1) + [out_shape[-1]]))][:nextra]
    epi = epilogue.build(list(posts), _desc(out_shape), [_desc(e.shape) for e in extras]) if posts else None
    fn = conv_mod.reduce_sum({"axis": axis}, [_desc(shape)], [_desc(out_shape)], epi)
    assert fn is not None
    got = np.full(out_shape, np.nan, np.float32)
    fn([x], [got], extras)
    e = _ref_posts(_ref("tosa.reduce_sum", [x], {"axis": axis}, out_shape), posts, extras)
    np.testing.assert_array_equal(got, e)


def test_reduce_sum_declines_the_innermost_axis() -> None:
    """numpy sums a contiguous axis pairwise: that reduction stays with numpy (and the row programs)."""
    assert conv_mod.reduce_sum({"axis": 2}, [_desc((2, 3, 4))], [_desc((2, 3, 1))], None) is None
    assert conv_mod.reduce_sum({"axis": 1}, [_desc((2, 3, 1))], [_desc((2, 1, 1))], None) is None


@pytest.mark.parametrize("k,stride", [(5, 1), (3, 2)])
def test_a_winograd_variant_the_geometry_does_not_allow_is_refused(k: int, stride: int) -> None:
    """A blob from elsewhere that asks for Winograd F(2x2, 3x3) on a convolution it cannot compute is invalid (it
    would run a 3x3 stride-1 transform on other weights or strides: wrong values, no error)."""
    from nnkiln.errors import BlobError

    bb = BlobBuilder()
    x = bb.add_io("x", F, (1, 12, 12, 32), output=False)
    oh = (12 - k) // stride + 1
    y = bb.add_io("y", F, (1, oh, oh, 32), output=True)
    w, b = bb.add_const(_f(32, k, k, 32), F), bb.add_const(_f(32), F)
    attrs = {**_attrs((0, 0, 0, 0), (stride, stride), (1, 1)), "variant": "winograd"}
    bb.add_task("tosa.conv2d", [x, w, b], [y], attrs=attrs)
    with pytest.raises(BlobError, match="variant winograd"):
        load_blob(encode(bb.finish()))
