"""Fast integer kernels (``runtime.kernels.quantized``) against the reference kernels, bit for bit: RESCALE over
every kind pair and mode, int8 CONV2D / FULLY_CONNECTED over geometries (odd tap segments, padding, strides,
dilations, zero points), int8 / int16 MATMUL; REQUIRE violations raise the reference's error; a quantized
model gives the same integers with and without these paths; the AVX2 build passes the same cases."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from nnkiln.blob.format import BufferDesc, Memory
from nnkiln.errors import NnkilnError
from nnkiln.kinds import Kind
from nnkiln.runtime import native
from nnkiln.runtime.kernels import quantized
from nnkiln.runtime.kernels.reference import call_reference

pytestmark = pytest.mark.native
RNG = np.random.default_rng(5)
_DT = {Kind.I8: np.int8, Kind.U8: np.uint8, Kind.I16: np.int16, Kind.I32: np.int32, Kind.I48: np.int64}


def _desc(kind: Kind, shape: tuple[int, ...]) -> BufferDesc:
    return BufferDesc(Memory.ARENA, kind, tuple(shape), 0, int(np.prod(shape)) * np.dtype(_DT[kind]).itemsize)


def _values(kind: Kind, shape: tuple[int, ...], lo: int | None = None, hi: int | None = None) -> np.ndarray:
    klo, khi = kind.int_range
    return RNG.integers(klo if lo is None else lo, (khi if hi is None else hi) + 1, shape).astype(_DT[kind])


def _both(name: str, attrs: dict, ins: list[np.ndarray], in_kinds: list[Kind], out_kind: Kind,
          out_shape: tuple[int, ...], consts: list[bool]) -> tuple[np.ndarray, np.ndarray]:
    """(fast kernel's output, reference's output)."""
    ib = [_desc(k, a.shape) for k, a in zip(in_kinds, ins)]
    ob = [_desc(out_kind, out_shape)]
    fn = quantized.build(name, attrs, ib, ob, [a if c else None for a, c in zip(ins, consts)])
    assert fn is not None
    out = np.full(out_shape, 77, _DT[out_kind])
    fn(ins, [out], [])
    ref = call_reference(name, ins, attrs, in_kinds, [out_kind], [np.dtype(_DT[out_kind])], [out_shape])[0]
    return out, np.asarray(ref)


@pytest.mark.parametrize("in_kind", [Kind.I8, Kind.U8, Kind.I16, Kind.I32, Kind.I48])
@pytest.mark.parametrize("out_kind", [Kind.I8, Kind.U8, Kind.I16, Kind.I32])
@pytest.mark.parametrize("mode", ["scale32", "double_round", "scale16", "per_channel"])
def test_rescale_matches_reference(in_kind: Kind, out_kind: Kind, mode: str) -> None:
    shape = (2, 5, 7, 6)
    scale32 = mode != "scale16"
    c = shape[-1] if mode == "per_channel" else 1
    if scale32:
        mult = RNG.integers(1 << 29, 1 << 31, c)
        shift = RNG.integers(33, 40, c) if in_kind in (Kind.I32, Kind.I48) else RNG.integers(20, 40, c)
    else:
        mult = RNG.integers(1 << 13, 1 << 15, c)
        shift = RNG.integers(35, 45, c) if in_kind is Kind.I48 else RNG.integers(20, 30, c)
    lo = hi = None
    if scale32 and in_kind in (Kind.I32, Kind.I48):  # values within the apply_scale_32 REQUIRE
        lo, hi = -(1 << 29), (1 << 29)
    elif in_kind is Kind.I48:  # apply_scale_16 of values beyond int32, results within int32
        lo, hi = -(1 << 40), (1 << 40)
    x = _values(in_kind, shape, lo, hi)
    attrs = {"input_zp": 3 if in_kind in (Kind.I8, Kind.U8) else 0, "output_zp": -5 if out_kind is Kind.I8 else 0,
             "multiplier": tuple(int(v) for v in mult), "shift": tuple(int(v) for v in shift), "scale32": scale32,
             "double_round": mode == "double_round", "per_channel": mode == "per_channel"}
    got, ref = _both("tosa.rescale", attrs, [x], [in_kind], out_kind, shape, [False])
    np.testing.assert_array_equal(got, ref)


def test_rescale_require_violation_raises_the_reference_error() -> None:
    x = np.array([[1 << 20, 5]], np.int32)
    attrs = {"input_zp": 0, "output_zp": 0, "multiplier": (1 << 30,), "shift": (12,), "scale32": True,
             "double_round": False, "per_channel": False}  # |value| must be < 2^10
    with pytest.raises(NnkilnError, match="apply_scale_32"):
        _both("tosa.rescale", attrs, [x], [Kind.I32], Kind.I8, x.shape, [False])


CONVS = [  # (n, ih, iw, ic, oc, kh, kw, stride, dilation, pad, input_zp, weight_zp)
    (1, 9, 9, 3, 8, 3, 3, (1, 1), (1, 1), (1, 1, 1, 1), -5, 0),   # odd tap segment (9)
    (2, 8, 7, 4, 20, 3, 2, (2, 1), (1, 1), (1, 0, 0, 1), 0, 3),   # two panels, partial one
    (1, 12, 12, 16, 33, 1, 1, (1, 1), (1, 1), (0, 0, 0, 0), -128, 0),
    (1, 10, 11, 5, 16, 3, 3, (1, 2), (2, 2), (2, 2, 2, 2), 17, -2),  # dilation: one segment per tap
    (1, 7, 7, 64, 48, 3, 3, (2, 2), (1, 1), (1, 1, 1, 1), 127, 0),
]


@pytest.mark.parametrize("case", CONVS)
def test_int8_conv2d_matches_reference(case: tuple) -> None:
    n, ih, iw, ic, oc, kh, kw, stride, dil, pad, izp, wzp = case
    x, w = _values(Kind.I8, (n, ih, iw, ic)), _values(Kind.I8, (oc, kh, kw, ic), -100, 100)
    b = RNG.integers(-5000, 5000, oc).astype(np.int32)
    oh = (ih + pad[0] + pad[1] - (kh - 1) * dil[0] - 1) // stride[0] + 1
    ow = (iw + pad[2] + pad[3] - (kw - 1) * dil[1] - 1) // stride[1] + 1
    attrs = {"pad": pad, "stride": stride, "dilation": dil, "input_zp": izp, "weight_zp": wzp}
    got, ref = _both("tosa.conv2d", attrs, [x, w, b], [Kind.I8, Kind.I8, Kind.I32], Kind.I32, (n, oh, ow, oc),
                     [False, True, True])
    np.testing.assert_array_equal(got, ref)


@pytest.mark.parametrize("case", [((1, 9, 9, 16), (3, 3), (1, 1), (1, 1), (1, 1, 1, 1), -3, 0),
                                  ((2, 11, 10, 300), (3, 3), (2, 2), (1, 1), (0, 1, 0, 1), 127, 2),
                                  ((1, 8, 8, 24), (5, 3), (1, 2), (2, 1), (4, 4, 1, 1), 0, -1)])
def test_int8_depthwise_matches_reference(case: tuple) -> None:
    (n, ih, iw, c), (kh, kw), stride, dil, pad, izp, wzp = case
    x, w = _values(Kind.I8, (n, ih, iw, c)), _values(Kind.I8, (kh, kw, c, 1))
    b = RNG.integers(-5000, 5000, c).astype(np.int32)
    oh = (ih + pad[0] + pad[1] - (kh - 1) * dil[0] - 1) // stride[0] + 1
    ow = (iw + pad[2] + pad[3] - (kw - 1) * dil[1] - 1) // stride[1] + 1
    attrs = {"pad": pad, "stride": stride, "dilation": dil, "input_zp": izp, "weight_zp": wzp}
    got, ref = _both("tosa.depthwise_conv2d", attrs, [x, w, b], [Kind.I8, Kind.I8, Kind.I32], Kind.I32,
                     (n, oh, ow, c), [False, True, True])
    np.testing.assert_array_equal(got, ref)


def test_int8_fully_connected_matches_reference() -> None:
    x, w = _values(Kind.I8, (5, 77)), _values(Kind.I8, (40, 77))
    b = RNG.integers(-100, 100, 40).astype(np.int32)
    got, ref = _both("tosa.fully_connected", {"input_zp": -128, "weight_zp": 0}, [x, w, b],
                     [Kind.I8, Kind.I8, Kind.I32], Kind.I32, (5, 40), [False, True, True])
    np.testing.assert_array_equal(got, ref)


def test_conv_that_could_overflow_int32_stays_on_the_reference() -> None:
    k = 70000  # 255 * 127 * 70000 > 2^31
    ib = [_desc(Kind.I8, (1, k)), _desc(Kind.I8, (2, k)), _desc(Kind.I32, (2,))]
    w = np.full((2, k), 127, np.int8)
    assert quantized.build("tosa.fully_connected", {"input_zp": -128, "weight_zp": 0}, ib, [_desc(Kind.I32, (1, 2))],
                           [None, w, np.zeros(2, np.int32)]) is None


@pytest.mark.parametrize("kind,k,zps", [(Kind.I8, 64, (0, 0)), (Kind.I8, 700, (-3, 5)), (Kind.I16, 50, (0, 0))])
def test_int_matmul_matches_reference(kind: Kind, k: int, zps: tuple[int, int]) -> None:
    out_kind = Kind.I32 if kind is Kind.I8 else Kind.I48
    a, b = _values(kind, (2, 9, k)), _values(kind, (2, k, 11))
    got, ref = _both("tosa.matmul", {"A_zp": zps[0], "B_zp": zps[1]}, [a, b], [kind, kind], out_kind, (2, 9, 11),
                     [False, False])
    np.testing.assert_array_equal(got, ref)


@pytest.mark.parametrize("const_b", [False, True])
def test_int16_matmul_of_8_bit_data_matches_reference(const_b: bool) -> None:
    """int16 operands holding 8-bit values (a widened u8 activation, int8 weights): the run-time bound picks float32
    GEMMs, in k blocks when the sums could pass 2^24; full-range int16 values need float64."""
    for lo, hi, k in ((0, 255, 300), (-128, 127, 2000), (-32768, 32767, 40)):
        a = _values(Kind.I16, (1, 7, k), lo, hi)
        b = _values(Kind.I16, (1, k, 5), -128, 127)
        got, ref = _both("tosa.matmul", {"A_zp": 0, "B_zp": 0}, [a, b], [Kind.I16, Kind.I16], Kind.I48, (1, 7, 5),
                         [False, const_b])
        np.testing.assert_array_equal(got, ref)


CASTS = [(Kind.I32, Kind.I8), (Kind.I8, Kind.I32), (Kind.U8, Kind.I16), (Kind.I32, Kind.F32), (Kind.I8, Kind.F32),
         (Kind.F32, Kind.I8), (Kind.F32, Kind.U8), (Kind.F32, Kind.I16), (Kind.F32, Kind.I32), (Kind.I32, Kind.BOOL),
         (Kind.F32, Kind.BOOL), (Kind.BOOL, Kind.I32), (Kind.BOOL, Kind.F32)]


@pytest.mark.parametrize("src,dst", CASTS)
def test_cast_matches_reference(src: Kind, dst: Kind) -> None:
    dts = {**_DT, Kind.F32: np.float32, Kind.BOOL: np.bool_}
    if src is Kind.F32:  # halves (ties to even), the saturation edges, inf and NaN
        x = np.concatenate([RNG.standard_normal(50) * 300, np.arange(-6, 7) + 0.5,
                            [2147483520.0, 2147483648.0, -2147483904.0, 1e20, np.inf, -np.inf, np.nan, -0.0]])
        x = x.astype(np.float32)
    elif src is Kind.BOOL:
        x = RNG.random(40) < 0.5
    else:
        x = _values(src, (40,))
        if src is Kind.I32:  # large values round when they become float32
            x[:5] = [16777217, -16777219, 2**31 - 1, -2**31, 33554435]
    ib, ob = [BufferDesc(Memory.ARENA, src, x.shape, 0, x.nbytes)], [BufferDesc(Memory.ARENA, dst, x.shape, 0, 0)]
    fn = quantized.build("tosa.cast", {}, ib, ob, [None])
    assert fn is not None
    out = np.empty(x.shape, dts[dst])
    fn([x], [out], [])
    ref = call_reference("tosa.cast", [x], {}, [src], [dst], [np.dtype(dts[dst])], [x.shape])[0]
    np.testing.assert_array_equal(out, ref)


def test_quantized_model_same_integers_without_fast_paths(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: ANN001
    """A QLinearConv -> QLinearConv (uint8) model: RESCALEs and int8 convs on the fast paths give the same codes as
    the reference kernels."""
    import onnx
    import onnx.helper as oh

    import nnkiln
    from nnkiln.runtime.kernels import fast

    def qconv(x: str, y: str, ci: int, co: int) -> list:
        w = RNG.integers(-60, 60, (co, ci, 3, 3)).astype(np.int8)
        inits.extend([oh.make_tensor(f"{y}_w", onnx.TensorProto.INT8, w.shape, w.ravel().tolist()),
                      oh.make_tensor(f"{y}_ws", 1, [co], (RNG.random(co) * 0.01 + 0.001).astype(np.float32)),
                      oh.make_tensor(f"{y}_wz", onnx.TensorProto.INT8, [co], [0] * co),
                      oh.make_tensor(f"{y}_b", onnx.TensorProto.INT32, [co], RNG.integers(-999, 999, co).tolist()),
                      oh.make_tensor(f"{y}_s", 1, [], [0.05]), oh.make_tensor(f"{y}_z", onnx.TensorProto.UINT8, [], [7])])
        return [oh.make_node("QLinearConv", [x, "xs", "xz", f"{y}_w", f"{y}_ws", f"{y}_wz", f"{y}_s", f"{y}_z", f"{y}_b"],
                             [y], kernel_shape=[3, 3], pads=[1, 1, 1, 1])]

    inits = [oh.make_tensor("xs", 1, [], [0.02]), oh.make_tensor("xz", onnx.TensorProto.UINT8, [], [128])]
    nodes = qconv("x", "c1", 3, 8)
    inits[0:0] = []
    nodes += [oh.make_node("QLinearConv", ["c1", "c1_s", "c1_z", "c2_w", "c2_ws", "c2_wz", "c2_s", "c2_z", "c2_b"],
                           ["y"], kernel_shape=[3, 3], pads=[1, 1, 1, 1])]
    qconv("unused", "c2", 8, 16)
    g = oh.make_graph(nodes, "g", [oh.make_tensor_value_info("x", onnx.TensorProto.UINT8, [1, 3, 10, 10])],
                      [oh.make_tensor_value_info("y", onnx.TensorProto.UINT8, [1, 16, 10, 10])], inits)
    path = str(tmp_path / "q.onnx")
    onnx.save(oh.make_model(g, opset_imports=[oh.make_opsetid("", 17)]), path)
    x = {"x": RNG.integers(0, 256, (1, 3, 10, 10)).astype(np.uint8)}
    module = nnkiln.load(path)
    fast_out = nnkiln.compile(module).run(x)["y"]
    monkeypatch.setattr(fast, "quantized", type("NoQuant", (), {"OPS": frozenset()}))
    ref_out = nnkiln.compile(module).run(x)["y"]
    np.testing.assert_array_equal(fast_out, ref_out)
    assert np.unique(fast_out).size > 10  # not saturated


@pytest.mark.skipif("avx512bw" not in native.cpu_flags(), reason="the default build has no AVX-512 paths")
def test_int_kernels_built_without_avx512(native_build) -> None:  # noqa: ANN001
    """The AVX2 int16 tiles (what a machine without AVX-512 runs) pass the conv cases too (the library built with
    ``-mno-avx512f``, loaded through ``NNKILN_NATIVE_LIB`` in a fresh process)."""
    import os

    env = {**os.environ, "NNKILN_NATIVE_LIB": str(native_build("-mno-avx512f"))}
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", __file__, "-k",
                        "conv2d or fully_connected or depthwise"], capture_output=True, text=True, env=env, timeout=600)
    assert r.returncode == 0 and " passed" in r.stdout, r.stdout[-3000:] + r.stderr[-2000:]


def _run_bound(fn, ins: list[np.ndarray], out: np.ndarray) -> int:  # noqa: ANN001
    """The kernel's bound form (what chains run) on these arrays: the C call's return code."""
    import ctypes

    b = fn.bind(ins, [out], [])
    assert b is not None
    rc = 0
    for addr, args in b.calls:
        rc = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_int)(addr)(args.ctypes.data, 1) or rc
    return rc


_CAST_DT = {**_DT, Kind.BOOL: np.bool_, Kind.F32: np.float32}


@pytest.mark.parametrize("src", [Kind.I8, Kind.U8, Kind.I16, Kind.I32, Kind.BOOL, Kind.F32])
@pytest.mark.parametrize("dst", [Kind.I8, Kind.U8, Kind.I16, Kind.I32, Kind.BOOL, Kind.F32])
def test_cast_bound_form_equals_the_reference(src: Kind, dst: Kind) -> None:
    """``nk_cast`` bit for bit as the reference's CAST (and the numpy path): wrapping, rounding half to even, NaN to
    0 and saturation included."""
    if src is Kind.F32:
        x = np.concatenate([RNG.standard_normal(300) * 1e3, [0.5, 1.5, 2.5, -0.5, -1.5, 127.5, -128.5, 255.5, 1e10, -1e10,
                                                            3e9, -3e9, np.nan, np.inf, -np.inf, -0.0]]).astype(np.float32)
    elif src is Kind.BOOL:
        x = RNG.random(300) < 0.5
    else:
        x = _values(src, (300,))
    ib, ob = [BufferDesc(Memory.ARENA, src, x.shape, 0, x.nbytes)], [BufferDesc(Memory.ARENA, dst, x.shape, 0, 0)]
    fn = quantized.build("tosa.cast", {}, ib, ob, [None])
    if fn is None:
        pytest.skip(f"no fast path for {src.value} -> {dst.value}")
    ref = np.asarray(call_reference("tosa.cast", [x], {}, [src], [dst], [np.dtype(_CAST_DT[dst])], [x.shape])[0])
    plain, bound = np.zeros(x.shape, _CAST_DT[dst]), np.zeros(x.shape, _CAST_DT[dst])
    fn([x], [plain], [])
    assert _run_bound(fn, [x], bound) == 0
    np.testing.assert_array_equal(plain, ref)
    np.testing.assert_array_equal(bound, ref)


def test_rescale_bound_form_and_its_require() -> None:
    x = _values(Kind.I32, (4, 9), -(1 << 20), 1 << 20)
    attrs = {"input_zp": 0, "output_zp": 3, "multiplier": (1 << 30,), "shift": (38,), "scale32": True,
             "double_round": True, "per_channel": False}
    ib, ob = [_desc(Kind.I32, x.shape)], [_desc(Kind.I8, x.shape)]
    fn = quantized.build("tosa.rescale", attrs, ib, ob, [None])
    out = np.zeros(x.shape, np.int8)
    assert _run_bound(fn, [x], out) == 0
    ref = call_reference("tosa.rescale", [x], attrs, [Kind.I32], [Kind.I8], [np.dtype(np.int8)], [x.shape])[0]
    np.testing.assert_array_equal(out, ref)
    bad = np.array([[1 << 20, 5]], np.int32)  # |value| must be < 2^10 with shift 12: the call fails (the chain reruns)
    strict = {**attrs, "shift": (12,), "double_round": False}
    assert _run_bound(quantized.build("tosa.rescale", strict, [_desc(Kind.I32, bad.shape)], [_desc(Kind.I8, bad.shape)],
                                      [None]), [bad], np.zeros(bad.shape, np.int8)) != 0
