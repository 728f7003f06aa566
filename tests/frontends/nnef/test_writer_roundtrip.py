"""NNEF writer round trips (``write_nnef`` / ``nnkiln translate --to nnef``), issue 6 item 5.

The oracle is the original module itself: ONNX → ours → NNEF → ours (and NNEF → ours → NNEF → ours) must give
the same outputs on random inputs — bit-identical for the quantized (integer) models and for every float op
whose re-import is the same f32 arithmetic. Written documents are also parsed by the Khronos ``nnef`` package
(``.venv-nnef``; skipped when absent), and float ones executed by ``nnef.Session`` within 1e-4.
RESIZE cases: the expected sample positions follow TOSA §2.12.1 (``y = oy·stride + offset``) and NNEF §4.3.4.
"""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(__file__))

from test_lowering import KHRONOS_PY, run_khronos, run_ours  # noqa: E402

import nnkiln.reference as ref  # noqa: E402
from nnkiln.frontends.nnef import load_nnef  # noqa: E402
from nnkiln.frontends.nnef.writer import translate_main, write_nnef  # noqa: E402
from nnkiln.ir.errors import FrontendError  # noqa: E402
from nnkiln.ir.text import parse_module  # noqa: E402

onnx = pytest.importorskip("onnx")
from onnx import TensorProto as TP  # noqa: E402
from onnx import helper as oh  # noqa: E402
from onnx import numpy_helper as nh  # noqa: E402


def _model(nodes, inputs, outputs, inits=(), opset=17):  # noqa: ANN001, ANN202
    g = oh.make_graph(nodes, "m", inputs, outputs, list(inits))
    m = oh.make_model(g, opset_imports=[oh.make_opsetid("", opset)])
    m.ir_version = 10
    return m


def _vi(name: str, shape: list[int]):  # noqa: ANN202
    return oh.make_tensor_value_info(name, TP.FLOAT, shape)


def khronos_parses(folder: str) -> None:
    if not os.path.exists(KHRONOS_PY):
        return
    proc = subprocess.run([KHRONOS_PY, "-c", "import nnef, sys; nnef.load_graph(sys.argv[1])", folder],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]


def _feeds(module, seed: int, scale: float = 1.0) -> dict[str, np.ndarray]:  # noqa: ANN001
    from nnkiln.frontends.common.arith import shape_of
    from nnkiln.reference import entry_function, input_names

    f = entry_function(module)
    rng = np.random.default_rng(seed)
    return {n: (rng.standard_normal(shape_of(a)) * scale).astype(np.float32)
            for n, a in zip(input_names(f), f.body.blocks[0].args)}


def round_trip(module, folder: str, trials: int = 3, scale: float = 1.0, atol: float = 0.0):  # noqa: ANN001, ANN201
    """write → re-import → compare outputs (exact unless ``atol``); returns the re-imported module."""
    write_nnef(module, folder)
    khronos_parses(folder)
    back = load_nnef(folder)
    for t in range(trials):
        feeds = _feeds(module, 100 + t, scale)
        a, b = ref.run(module, feeds), ref.run(back, feeds)
        assert list(a) == list(b)
        for k in a:
            if atol:
                np.testing.assert_allclose(b[k], a[k], rtol=0, atol=atol)
            else:
                np.testing.assert_array_equal(b[k], a[k])
    return back


def _onnx_module(m):  # noqa: ANN001, ANN202
    from nnkiln.onnx_backend import import_model_proto

    shapes = [[d.dim_value for d in i.type.tensor_type.shape.dim] for i in m.graph.input]
    return import_model_proto(m, [np.zeros(s, np.float32) for s in shapes])


# ------------------------------------------------------------------------------------------------
# RESIZE: each TOSA form → the NNEF op chosen, bit-identical after re-import


def _resize_text(mode: str, ih: int, iw: int, oh_: int, ow: int, stride: list[float], offset: list[float],
                 border: list[int] | None = None) -> str:
    from nnkiln.dialects.tosa.ops_image import resize_output_dim

    stride = [float(np.float32(v)) for v in stride]
    offset = [float(np.float32(v)) for v in offset]
    # the border only makes the derived size equal output_size (the verifier's rule)
    border = [o - resize_output_dim(i, s, f, 0, 0) for i, o, s, f in zip((ih, iw), (oh_, ow), stride, offset)]
    st = ", ".join(repr(float(v)) for v in stride)
    of = ", ".join(repr(float(v)) for v in offset)
    return (f"func.func @main(%x: tensor<1x{ih}x{iw}x3xf32>) -> tensor<1x{oh_}x{ow}x3xf32> {{\n"
            f"  %y = tosa.resize %x {{output_size = array<i64: {oh_}, {ow}>, stride = array<f32: {st}>, "
            f"offset = array<f32: {of}>, border = array<i64: {border[0]}, {border[1]}>, shift = 0 : i64, "
            f"mode = #tosa<resize_mode {mode}>}} : (tensor<1x{ih}x{iw}x3xf32>) -> tensor<1x{oh_}x{ow}x3xf32>\n"
            f"  func.return %y : tensor<1x{oh_}x{ow}x3xf32>\n}}\n")


# (mode, IH, IW, OH, OW, stride, offset, border (recomputed from the sizes), NNEF op expected in graph.nnef)
RESIZES = {
    # half-pixel bilinear ×2: y = oy/2 − 1/4 → multilinear 'symmetric' (f0 = (f−1)/2 = 1/2 in output units)
    "bilinear_half_pixel_x2": ("BILINEAR", 4, 5, 8, 10, [0.5, 0.5], [-0.25, -0.25], [1, 1], "multilinear_upsample"),
    # asymmetric bilinear ×2: y = oy/2 → 'asymmetric'
    "bilinear_asym_x2": ("BILINEAR", 4, 4, 8, 8, [0.5, 0.5], [0.0, 0.0], [1, 1], "multilinear_upsample"),
    # align corners ×2 on 4 rows: y = oy·3/7 → 'aligned'
    # (the reader samples the input padded by one row at y + 1: with f32 positions that only gives the same
    # fractions when the stride is a power of two, so the aligned and ×3 cases use the exact expansion)
    "bilinear_aligned_x2": ("BILINEAR", 4, 4, 8, 8, [3 / 7, 3 / 7], [0.0, 0.0], [0, 0], "slice"),
    # ×3 in H only (W unchanged, stride 1)
    "bilinear_h_only_x3": ("BILINEAR", 3, 4, 9, 4, [1 / 3, 1.0], [-1 / 3, 0.0], [2, 0], "slice"),
    # ×4 in W only, half-pixel: y = ox/4 − 3/8 → multilinear 'symmetric' with factor [1, 4]
    "bilinear_w_only_x4": ("BILINEAR", 3, 2, 3, 8, [1.0, 0.25], [0.0, -0.375], [0, 0], "multilinear_upsample"),
    # non-integer factor 5 → 7: no NNEF op, exact expansion
    "bilinear_5_to_7": ("BILINEAR", 5, 5, 7, 7, [5 / 7, 5 / 7], [-1 / 7, -1 / 7], [1, 1], "slice"),
    # down-sampling bilinear by 2 with half-pixel offset (y = 2·oy + 1/2): exact expansion
    "bilinear_down_x2": ("BILINEAR", 8, 8, 4, 4, [2.0, 2.0], [0.5, 0.5], [0, 0], "slice"),
    # nearest ×2 (floor of oy/2: offset 0, d = 0 or 1/2 → rounds up at 1/2! so use offset −1/4 to get floor)
    "nearest_x2": ("NEAREST", 3, 4, 6, 8, [0.5, 0.5], [-0.25, -0.25], [1, 1], "nearest_upsample"),
    # nearest ÷2: rows 0, 2, 4, ... → nearest_downsample
    "nearest_down_x2": ("NEAREST", 6, 8, 3, 4, [2.0, 2.0], [0.0, 0.0], [0, 0], "nearest_downsample"),
    # nearest 4 → 6 (non-integer): exact gather
    "nearest_4_to_6": ("NEAREST", 4, 4, 6, 6, [2 / 3, 2 / 3], [0.0, 0.0], [2, 2], "slice"),
}


@pytest.mark.parametrize("name", sorted(RESIZES))
def test_resize_round_trip(name: str, tmp_path) -> None:  # noqa: ANN001
    mode, ih, iw, oh_, ow, stride, offset, border, expect = RESIZES[name]
    m = parse_module(_resize_text(mode, ih, iw, oh_, ow, stride, offset, border))
    m.verify()
    round_trip(m, str(tmp_path / "n"))
    text = (tmp_path / "n" / "graph.nnef").read_text()
    assert f" {expect}(" in text, text
    if expect == "slice":
        assert "upsample" not in text


def test_resize_nearest_x2_is_repetition(tmp_path) -> None:
    """Hand check of the nearest ×2 case: output row i is input row floor(i/2) (TOSA: y = i/2 − 1/4,
    d >= 1/2 picks the next row; here d ∈ {0.75, 0.25} with floor(y) = i//2 − 1 or i//2)."""
    mode, ih, iw, oh_, ow, stride, offset, border, _ = RESIZES["nearest_x2"]
    m = parse_module(_resize_text(mode, ih, iw, oh_, ow, stride, offset, border))
    x = np.arange(ih * iw * 3, dtype=np.float32).reshape(1, ih, iw, 3)
    write_nnef(m, str(tmp_path / "n"))
    (y,) = run_ours(str(tmp_path / "n"), [x])
    np.testing.assert_array_equal(y, x.repeat(2, axis=1).repeat(2, axis=2))


# ------------------------------------------------------------------------------------------------
# ONNX float models → ours → NNEF → ours


def _cnn_resize():  # noqa: ANN202
    r = np.random.default_rng(0)
    inits = [nh.from_array(r.standard_normal((6, 3, 3, 3)).astype(np.float32) * 0.3, "w"),
             nh.from_array(r.standard_normal(6).astype(np.float32) * 0.1, "b"),
             nh.from_array(r.standard_normal((6, 1, 3, 3)).astype(np.float32) * 0.3, "dw"),
             nh.from_array(np.array([], np.float32), "roi"),
             nh.from_array(np.array([1, 1, 2, 2], np.float32), "sc"),
             nh.from_array(np.array([1, 6, 6, 6], np.int64), "sz")]
    nodes = [oh.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1], strides=[2, 2]),
             oh.make_node("Relu", ["c"], ["r"]),
             oh.make_node("Resize", ["r", "roi", "sc"], ["u"], mode="linear",
                          coordinate_transformation_mode="half_pixel"),
             oh.make_node("Conv", ["u", "dw"], ["d"], group=6, pads=[1, 1, 1, 1]),
             oh.make_node("Resize", ["d", "roi", "sc"], ["n"], mode="nearest",
                          coordinate_transformation_mode="asymmetric", nearest_mode="floor"),
             oh.make_node("AveragePool", ["n"], ["a"], kernel_shape=[2, 2], strides=[2, 2]),
             oh.make_node("Resize", ["a", "roi", "", "sz"], ["v"], mode="linear",
                          coordinate_transformation_mode="align_corners"),
             oh.make_node("Sigmoid", ["v"], ["y"])]
    return _model(nodes, [_vi("x", [1, 3, 8, 8])], [_vi("y", [1, 6, 6, 6])], inits)


def _transformer_block():  # noqa: ANN202
    r = np.random.default_rng(1)
    d, t, h = 8, 5, 16
    inits = [nh.from_array((r.standard_normal((d, d)) * 0.3).astype(np.float32), n) for n in ("wq", "wk", "wv")]
    inits += [nh.from_array((r.standard_normal((d, h)) * 0.3).astype(np.float32), "w1"),
              nh.from_array((r.standard_normal((h, d)) * 0.3).astype(np.float32), "w2"),
              nh.from_array((r.standard_normal(h) * 0.1).astype(np.float32), "b1"),
              nh.from_array(np.ones(d, np.float32), "g"), nh.from_array(np.zeros(d, np.float32), "be"),
              nh.from_array(np.array(1 / np.sqrt(d), np.float32), "scale")]
    nodes = [oh.make_node("MatMul", ["x", "wq"], ["q"]), oh.make_node("MatMul", ["x", "wk"], ["k"]),
             oh.make_node("MatMul", ["x", "wv"], ["v"]),
             oh.make_node("Transpose", ["k"], ["kt"], perm=[0, 2, 1]),
             oh.make_node("MatMul", ["q", "kt"], ["s0"]), oh.make_node("Mul", ["s0", "scale"], ["s"]),
             oh.make_node("Softmax", ["s"], ["p"], axis=-1), oh.make_node("MatMul", ["p", "v"], ["att"]),
             oh.make_node("Add", ["x", "att"], ["r1"]),
             oh.make_node("LayerNormalization", ["r1", "g", "be"], ["n1"], axis=-1, epsilon=1e-5),
             oh.make_node("MatMul", ["n1", "w1"], ["f1"]), oh.make_node("Add", ["f1", "b1"], ["f2"]),
             oh.make_node("Relu", ["f2"], ["f3"]), oh.make_node("MatMul", ["f3", "w2"], ["f4"]),
             oh.make_node("Add", ["n1", "f4"], ["y"])]
    return _model(nodes, [_vi("x", [1, t, d])], [_vi("y", [1, t, d])], inits)


@pytest.mark.parametrize("builder", [_cnn_resize, _transformer_block])
def test_onnx_float_round_trip(builder, tmp_path) -> None:  # noqa: ANN001
    m = builder()
    module = _onnx_module(m)
    round_trip(module, str(tmp_path / "n"))
    if os.path.exists(KHRONOS_PY):  # the written document also runs on the Khronos executor
        x = _feeds(module, 3)["x"]
        ours = run_ours(str(tmp_path / "n"), [x])
        theirs = run_khronos(str(tmp_path / "n"), [x], str(tmp_path))
        np.testing.assert_allclose(theirs[0], ours[0], rtol=1e-4, atol=1e-5)


def test_translate_cli_onnx_to_nnef(tmp_path) -> None:  # noqa: ANN001
    path = str(tmp_path / "m.onnx")
    onnx.save(_cnn_resize(), path)
    assert translate_main(["--to", "nnef", path, "-o", str(tmp_path / "n")]) == 0
    module = _onnx_module(_cnn_resize())
    x = _feeds(module, 9)["x"]
    np.testing.assert_array_equal(run_ours(str(tmp_path / "n"), [x])[0], ref.run(module, {"x": x})["y"])


# ------------------------------------------------------------------------------------------------
# quantized: ONNX QDQ / QOperator (onnxruntime quantize_static) → integer tosa → NNEF + graph.quant → ours


def _quantized_onnx(builder, fmt: str, per_channel: bool, act: str, tmp_path):  # noqa: ANN001, ANN202
    ort_q = pytest.importorskip("onnxruntime.quantization")
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "onnx"))
    import test_onnx_quant as toq

    model, shapes = getattr(toq, builder)()
    fp, qp = str(tmp_path / "f.onnx"), str(tmp_path / "q.onnx")
    onnx.save(model, fp)
    ort_q.quantize_static(fp, qp, toq._Reader(shapes), quant_format=getattr(ort_q.QuantFormat, fmt),
                          per_channel=per_channel,
                          activation_type=ort_q.QuantType.QUInt8 if act == "u8" else ort_q.QuantType.QInt8,
                          weight_type=ort_q.QuantType.QInt8, reduce_range=per_channel)
    return onnx.load(qp)


def _int_ops(module) -> list[str]:  # noqa: ANN001
    return [op.name for op in module.walk() if op.name in ("tosa.conv2d", "tosa.fully_connected", "tosa.rescale")
            and "xi8" in str(op.operands[0].type)]


@pytest.mark.slow
@pytest.mark.parametrize("builder", ["_conv_relu_pool_gemm", "_matmul_add", "_conv_pool_matmul"])
@pytest.mark.parametrize("fmt", ["QDQ", "QOperator"])
@pytest.mark.parametrize("per_channel", [False, True])
@pytest.mark.parametrize("act", ["u8", "s8"])
def test_onnx_quantized_round_trip_bit_identical(builder, fmt, per_channel, act, tmp_path) -> None:  # noqa: ANN001
    q = _quantized_onnx(builder, fmt, per_channel, act, tmp_path)
    module = _onnx_module(q)
    back = round_trip(module, str(tmp_path / "n"), trials=4, scale=2.0)
    assert (tmp_path / "n" / "graph.quant").exists()
    assert _int_ops(back), "the re-imported model must run integer kernels"
    # second generation: ours(NNEF) → NNEF → ours is bit-identical too
    round_trip(back, str(tmp_path / "n2"), trials=2, scale=2.0)


def _residual_concat():  # noqa: ANN202
    """Conv → ReLU → depthwise conv → residual Add → Concat → AveragePool → GlobalAveragePool → Gemm."""
    r = np.random.default_rng(3)
    inits = [nh.from_array((r.standard_normal((6, 3, 3, 3)) * 0.3).astype(np.float32), "w"),
             nh.from_array((r.standard_normal(6) * 0.1).astype(np.float32), "b"),
             nh.from_array((r.standard_normal((6, 1, 3, 3)) * 0.3).astype(np.float32), "dw"),
             nh.from_array((r.standard_normal(6) * 0.1).astype(np.float32), "db"),
             nh.from_array((r.standard_normal((5, 12)) * 0.2).astype(np.float32), "fw"),
             nh.from_array((r.standard_normal(5) * 0.1).astype(np.float32), "fb")]
    nodes = [oh.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1]), oh.make_node("Relu", ["c"], ["r"]),
             oh.make_node("Conv", ["r", "dw", "db"], ["d"], group=6, pads=[1, 1, 1, 1]),
             oh.make_node("Add", ["d", "r"], ["s"]), oh.make_node("Concat", ["s", "r"], ["k"], axis=1),
             oh.make_node("AveragePool", ["k"], ["a"], kernel_shape=[2, 2], strides=[2, 2]),
             oh.make_node("GlobalAveragePool", ["a"], ["g"]), oh.make_node("Flatten", ["g"], ["f"]),
             oh.make_node("Gemm", ["f", "fw", "fb"], ["y"], transB=1)]
    return _model(nodes, [_vi("x", [1, 3, 8, 8])], [_vi("y", [1, 5])], inits), {"x": (1, 3, 8, 8)}


@pytest.mark.slow
@pytest.mark.parametrize("per_channel", [False, True])
@pytest.mark.parametrize("act", ["u8", "s8"])
def test_onnx_quantized_residual_concat_bit_identical(per_channel, act, tmp_path) -> None:  # noqa: ANN001
    """Depthwise conv, the common-scale ADD, a requantizing CONCAT and int8 average pools."""
    ort_q = pytest.importorskip("onnxruntime.quantization")
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "onnx"))
    import test_onnx_quant as toq

    model, shapes = _residual_concat()
    fp, qp = str(tmp_path / "f.onnx"), str(tmp_path / "q.onnx")
    onnx.save(model, fp)
    ort_q.quantize_static(fp, qp, toq._Reader(shapes), quant_format=ort_q.QuantFormat.QDQ, per_channel=per_channel,
                          activation_type=ort_q.QuantType.QUInt8 if act == "u8" else ort_q.QuantType.QInt8,
                          weight_type=ort_q.QuantType.QInt8, reduce_range=per_channel)
    module = _onnx_module(onnx.load(qp))
    assert "tosa.depthwise_conv2d" in str(module) and "tosa.concat" in str(module)
    back = round_trip(module, str(tmp_path / "n"), trials=4, scale=2.0)
    assert "tosa.depthwise_conv2d" in str(back)


def test_onnx_quantized_small(tmp_path) -> None:  # noqa: ANN001
    """One fast quantized case (QDQ, per-tensor, int8) outside the slow matrix."""
    q = _quantized_onnx("_conv_relu_pool_gemm", "QDQ", False, "s8", tmp_path)
    module = _onnx_module(q)
    round_trip(module, str(tmp_path / "n"), trials=3, scale=2.0)
    quant = (tmp_path / "n" / "graph.quant").read_text()
    assert "linear_quantize(" in quant and "bits = 8" in quant


# ------------------------------------------------------------------------------------------------
# NNEF (quantized, hand-converted from a QDQ model) → ours → NNEF → ours


@pytest.mark.slow
@pytest.mark.parametrize("per_channel", [False, True])
def test_nnef_quantized_round_trip(per_channel: bool, tmp_path) -> None:
    import test_quant_integer as tq

    d = str(tmp_path)
    tq._float_model(d + "/f.onnx")
    tq._quantize(d + "/f.onnx", d + "/q.onnx", per_channel)
    tq._to_nnef(d + "/q.onnx", d + "/nnef")
    first = load_nnef(d + "/nnef")
    back = round_trip(first, d + "/out", trials=4)
    assert _int_ops(back)
    if per_channel:
        assert "min = [" in (tmp_path / "out" / "graph.quant").read_text()


QUANT_NNEF = """version 1.0;
graph G( x, z ) -> ( y, c )
{
  x = external<scalar>(shape = [1, 4, 6, 6]);
  z = external<scalar>(shape = [1, 4, 6, 6]);
  w = variable<scalar>(shape = [4, 4, 1, 1], label = 'w');
  b = variable<scalar>(shape = [1, 4], label = 'b');
  a = conv(x, w, b);
  s = add(a, z);
  r = clamp(s, -0.5, 1.0);
  c = concat([r, s], axis = 1);
  p = avg_pool(r, size = [1, 1, 2, 2], stride = [1, 1, 2, 2], border = 'ignore');
  y = transpose(p, axes = [0, 2, 3, 1]);
}
"""


def test_nnef_quantized_add_clamp_concat_pool(tmp_path) -> None:  # noqa: ANN001
    """Hand-written quantized NNEF using the reader's other integer patterns (ADD, CLAMP, CONCAT, pools)."""
    from nnkiln.frontends.nnef.tensor_file import write_tensor

    src = tmp_path / "src"
    src.mkdir()
    (src / "graph.nnef").write_text(QUANT_NNEF)
    rng = np.random.default_rng(4)
    s_w = 0.01
    wq = rng.integers(-100, 100, (4, 4, 1, 1))
    (src / "w.dat").write_bytes(write_tensor((wq * s_w).astype(np.float32)))
    (src / "b.dat").write_bytes(write_tensor((rng.standard_normal((1, 4)) * 0.1).astype(np.float32)))

    def rng_of(s: float, z: int) -> str:
        return f"min = {(-128 - z) * s!r}, max = {(127 - z) * s!r}, bits = 8"

    (src / "graph.quant").write_text("\n".join([
        f'"x": linear_quantize({rng_of(0.02, 0)});', f'"z": linear_quantize({rng_of(0.03, 5)});',
        f'"w": linear_quantize({rng_of(s_w, 0)});', f'"a": linear_quantize({rng_of(0.05, -3)});',
        f'"s": linear_quantize({rng_of(0.04, 2)});', f'"c": linear_quantize({rng_of(0.04, 2)});',
        f'"p": linear_quantize({rng_of(0.04, 2)});']) + "\n")
    first = load_nnef(str(src))
    assert "tosa.add" in str(first) and "i8" in str(first)
    round_trip(first, str(tmp_path / "out"), trials=4, scale=2.0)


QUANT_SOFTMAX_NNEF = """version 1.0;
graph G( x ) -> ( y, z )
{
  x = external(shape = [2, 6, 3, 5]);
  y = softmax(x, axes = [1]);
  z = softmax(x, axes = [1, 3]);
}
"""


def _quant_softmax(tmp_path):  # noqa: ANN001, ANN202
    src = tmp_path / "src"
    src.mkdir()
    (src / "graph.nnef").write_text(QUANT_SOFTMAX_NNEF)

    def rng_of(s: float, z: int) -> str:
        return f"min = {(-128 - z) * s!r}, max = {(127 - z) * s!r}, bits = 8"

    (src / "graph.quant").write_text(f'"x": linear_quantize({rng_of(0.07, 3)});\n'
                                     f'"y": linear_quantize({rng_of(1 / 256, -128)});\n'
                                     f'"z": linear_quantize({rng_of(1 / 255, -128)});\n')
    return load_nnef(str(src))


def test_nnef_quantized_softmax_round_trip(tmp_path) -> None:  # noqa: ANN001
    """A quantized softmax is integer arithmetic after import (``softmax_i8``: no exp, no reciprocal) and is
    written back as ``softmax`` with the same quantization, bit-identical after re-import; the float reading
    of the same document (no graph.quant) agrees within one output step."""
    first = _quant_softmax(tmp_path)
    names = [op.name for op in first.walk()]
    assert names.count("tosa.gather") == 2 and "tosa.exp" not in names and "tosa.reciprocal" not in names
    back = round_trip(first, str(tmp_path / "out"), trials=4, scale=3.0)
    text = (tmp_path / "out" / "graph.nnef").read_text()
    assert text.count("softmax(") == 2 and "axes = [1, 3]" in text
    assert [op.name for op in back.walk()].count("tosa.gather") == 2
    (tmp_path / "float").mkdir()
    (tmp_path / "float" / "graph.nnef").write_text(QUANT_SOFTMAX_NNEF)
    feeds = _feeds(first, 7, 3.0)
    q, f = ref.run(first, feeds), ref.run(load_nnef(str(tmp_path / "float")), feeds)
    # graph inputs are pseudo-quantized first: compare with the float softmax of the quantized input
    x = np.clip(np.floor(feeds["x"] / np.float32(0.07) + 0.5) + 3, -128, 127)
    f = ref.run(load_nnef(str(tmp_path / "float")), {"x": ((x - 3) * np.float32(0.07)).astype(np.float32)})
    np.testing.assert_allclose(q["y"], f["y"], rtol=0, atol=1 / 256 + 1e-7)
    np.testing.assert_allclose(q["z"], f["z"], rtol=0, atol=1 / 255 + 1e-7)


def test_nnef_quantized_softmax_with_a_foreign_table_is_refused(tmp_path) -> None:  # noqa: ANN001
    from nnkiln.ir.elements import from_numpy
    from nnkiln.ir.errors import FrontendError

    module = _quant_softmax(tmp_path)
    gather = next(op for op in module.walk() if op.name == "tosa.gather")
    table_op = gather.operands[0].owner
    table = np.asarray(ref_const(table_op)).copy()
    table.reshape(-1)[5] += table.reshape(-1)[5] // 1000 + 2  # an exp table of no quantization
    table_op.properties["values"] = from_numpy(table, table_op.results[0].type)
    with pytest.raises(FrontendError, match="tosa.gather.*exp table of a quantized softmax"):
        write_nnef(module, str(tmp_path / "out"))


def ref_const(op):  # noqa: ANN001, ANN201
    from nnkiln.ir.elements import to_numpy

    return to_numpy(op.properties["values"])


# ------------------------------------------------------------------------------------------------
# what cannot be written fails with the op and the reason


@pytest.mark.parametrize("text, op, why", [
    ("func.func @main(%a: tensor<4xi32>, %b: tensor<4xi32>) -> tensor<4xi32> {\n"
     "  %y = tosa.bitwise_and %a, %b : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>\n"
     "  func.return %y : tensor<4xi32>\n}\n", "tosa.bitwise_and", "bitwise"),
    ("func.func @main(%a: tensor<4xi32>, %b: tensor<4xi32>) -> tensor<4xi32> {\n"
     "  %y = tosa.add %a, %b : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>\n"
     "  func.return %y : tensor<4xi32>\n}\n", "tosa.add", "scalar"),
    ("func.func @main(%a: tensor<4xf32>) -> tensor<4xi32> {\n"
     "  %y = tosa.cast %a : (tensor<4xf32>) -> tensor<4xi32>\n"
     "  func.return %y : tensor<4xi32>\n}\n", "tosa.cast", "conversion"),
    ("func.func @main(%a: tensor<1x8xf32>) -> tensor<1x8xf32> {\n"
     "  %c = tosa.const {values = dense<3> : tensor<1x8xi8>} : tensor<1x8xi8>\n"
     "  %t = tosa.const {values = dense<1> : tensor<256xi8>} : tensor<256xi8>\n"
     "  %y = tosa.table %c, %t : (tensor<1x8xi8>, tensor<256xi8>) -> tensor<1x8xi8>\n"
     "  %f = tosa.cast %y : (tensor<1x8xi8>) -> tensor<1x8xf32>\n"
     "  %z = tosa.add %a, %f : (tensor<1x8xf32>, tensor<1x8xf32>) -> tensor<1x8xf32>\n"
     "  func.return %z : tensor<1x8xf32>\n}\n", "tosa.table", "int8"),
])
def test_unsupported_ops_name_op_and_reason(text: str, op: str, why: str, tmp_path) -> None:  # noqa: ANN001
    m = parse_module(text)
    with pytest.raises(FrontendError) as err:
        write_nnef(m, str(tmp_path / "n"))
    assert op in str(err.value) and why in str(err.value)


def test_float_ops_written_exactly(tmp_path) -> None:  # noqa: ANN001
    """Ops added for the inventory: logical_xor, cast bool→int32, reduce_all/any, gather with constant
    indices, conv3d, reverse, tile, reduce_product (mul chain: f32 rounding order may differ), pad with a
    non-zero constant."""
    text = """func.func @main(%x: tensor<1x4x5xf32>, %v: tensor<1x3x4x4x2xf32>) -> (tensor<1x4x1xi32>, tensor<1x4x1xi1>, tensor<1x3x5xf32>, tensor<1x3x4x4x3xf32>, tensor<1x4x10xf32>, tensor<1x4x1xf32>, tensor<1x6x5xf32>) {
  %z = tosa.const {values = dense<0.0> : tensor<1x1x1xf32>} : tensor<1x1x1xf32>
  %g = tosa.greater %x, %z : (tensor<1x4x5xf32>, tensor<1x1x1xf32>) -> tensor<1x4x5xi1>
  %r = tosa.reverse %g {axis = 2 : i64} : (tensor<1x4x5xi1>) -> tensor<1x4x5xi1>
  %xo = tosa.logical_xor %g, %r : (tensor<1x4x5xi1>, tensor<1x4x5xi1>) -> tensor<1x4x5xi1>
  %all = tosa.reduce_all %xo {axis = 2 : i64} : (tensor<1x4x5xi1>) -> tensor<1x4x1xi1>
  %any = tosa.reduce_any %xo {axis = 2 : i64} : (tensor<1x4x5xi1>) -> tensor<1x4x1xi1>
  %fa = tosa.cast %all : (tensor<1x4x1xi1>) -> tensor<1x4x1xi32>
  %idx = tosa.const {values = dense<[[3, 0, 3]]> : tensor<1x3xi32>} : tensor<1x3xi32>
  %ga = tosa.gather %x, %idx : (tensor<1x4x5xf32>, tensor<1x3xi32>) -> tensor<1x3x5xf32>
  %w = tosa.const {values = dense<0.25> : tensor<3x2x3x3x2xf32>} : tensor<3x2x3x3x2xf32>
  %b = tosa.const {values = dense<[0.5, -1.0, 2.0]> : tensor<3xf32>} : tensor<3xf32>
  %c3 = tosa.conv3d %v, %w, %b {pad = array<i64: 1, 0, 1, 1, 1, 1>, stride = array<i64: 1, 1, 1>, dilation = array<i64: 1, 1, 1>, input_zp = 0 : i64, weight_zp = 0 : i64} : (tensor<1x3x4x4x2xf32>, tensor<3x2x3x3x2xf32>, tensor<3xf32>) -> tensor<1x3x4x4x3xf32>
  %t = tosa.tile %x {multiples = array<i64: 1, 1, 2>} : (tensor<1x4x5xf32>) -> tensor<1x4x10xf32>
  %pr = tosa.reduce_product %x {axis = 2 : i64} : (tensor<1x4x5xf32>) -> tensor<1x4x1xf32>
  %pd = tosa.pad %x {padding = array<i64: 0, 0, 1, 1, 0, 0>, pad_const = -2.5 : f32} : (tensor<1x4x5xf32>) -> tensor<1x6x5xf32>
  func.return %fa, %any, %ga, %c3, %t, %pr, %pd : tensor<1x4x1xi32>, tensor<1x4x1xi1>, tensor<1x3x5xf32>, tensor<1x3x4x4x3xf32>, tensor<1x4x10xf32>, tensor<1x4x1xf32>, tensor<1x6x5xf32>
}
"""
    m = parse_module(text)
    m.verify()
    round_trip(m, str(tmp_path / "n"), atol=1e-6)
    x = np.array([[[1, -1, 2, -2, 3], [1, 1, 1, 1, 1], [-1, 2, -3, 2, -1], [0.5, -0.5, 0.5, -0.5, 0.5]]], np.float32)
    v = np.zeros((1, 3, 4, 4, 2), np.float32)
    outs = run_ours(str(tmp_path / "n"), [x, v])
    # g = x > 0 per row; xor with its reverse; all/any along the row (by hand)
    g = x > 0
    xo = g ^ g[:, :, ::-1]
    np.testing.assert_array_equal(outs[0][0, :, 0], xo.all(axis=2)[0].astype(np.int32))
    np.testing.assert_array_equal(outs[1][0, :, 0], xo.any(axis=2)[0])
    np.testing.assert_array_equal(outs[2][0], x[0, [3, 0, 3]])
    np.testing.assert_array_equal(outs[3][0, 0, 0, 0], [0.5, -1.0, 2.0])  # zero input: the bias
    np.testing.assert_array_equal(outs[4], np.concatenate([x, x], axis=2))
    np.testing.assert_allclose(outs[5][0, :, 0], [12.0, 1.0, -12.0, 0.03125], rtol=1e-6)  # row products by hand
    assert np.all(outs[6][0, [0, 5]] == -2.5) and np.array_equal(outs[6][0, 1:5], x[0])


def test_qdq_around_float_sigmoid(tmp_path) -> None:  # noqa: ANN001
    """Q → DQ → Sigmoid → Q → DQ: the float op between two quantizations stays float; the quantize codes
    (round half to even, as TOSA CAST) are written as exact float NNEF arithmetic."""
    inits = [nh.from_array(np.array(0.05, np.float32), "s1"), nh.from_array(np.array(3, np.int8), "z1"),
             nh.from_array(np.array(1 / 256, np.float32), "s2"), nh.from_array(np.array(-128, np.int8), "z2")]
    nodes = [oh.make_node("QuantizeLinear", ["x", "s1", "z1"], ["q1"]),
             oh.make_node("DequantizeLinear", ["q1", "s1", "z1"], ["d1"]),
             oh.make_node("Sigmoid", ["d1"], ["g"]),
             oh.make_node("QuantizeLinear", ["g", "s2", "z2"], ["q2"]),
             oh.make_node("DequantizeLinear", ["q2", "s2", "z2"], ["y"])]
    module = _onnx_module(_model(nodes, [_vi("x", [2, 50])], [_vi("y", [2, 50])], inits))
    round_trip(module, str(tmp_path / "n"), trials=4, scale=3.0)
    # ties: x/0.05 = k + 0.5 exactly representable values round half to even (2.5 → 2, 3.5 → 4)
    x = np.zeros((2, 50), np.float32)
    x[0, :4] = np.array([0.125, 0.175, -0.125, -0.175], np.float32)
    a = ref.run(module, {"x": x})["y"]
    b = run_ours(str(tmp_path / "n"), [x])[0]
    np.testing.assert_array_equal(a, b)


def test_roi_customs_are_written_back(tmp_path) -> None:  # noqa: ANN001
    """The reader's ``nnef.<roi op>`` customs become the standard operations again."""
    src = tmp_path / "src"
    src.mkdir()
    (src / "graph.nnef").write_text(
        "version 1.0;\ngraph G( x, rois, idx ) -> ( y, z )\n{\n"
        "    x = external(shape = [2, 3, 8, 8]);\n    rois = external(shape = [4, 4]);\n"
        "    idx = external<integer>(shape = [4]);\n"
        "    y = avg_roi_pool(x, rois, idx, output_size = [2, 2]);\n"
        "    z = roi_resample(x, rois, idx, output_size = [3, 3], method = 'symmetric');\n}\n")
    first = load_nnef(str(src))
    write_nnef(first, str(tmp_path / "out"))
    khronos_parses(str(tmp_path / "out"))
    text = (tmp_path / "out" / "graph.nnef").read_text()
    assert "avg_roi_pool(" in text and "roi_resample(" in text
    rng = np.random.default_rng(0)
    feeds = {"x": rng.standard_normal((2, 3, 8, 8)).astype(np.float32),
             "rois": np.array([[0, 0, 4, 4], [1, 1, 7, 6], [2, 0, 8, 8], [0, 3, 5, 7]], np.float32),
             "idx": np.array([0, 1, 1, 0], np.int32)}
    a, b = ref.run(first, feeds), ref.run(load_nnef(str(tmp_path / "out")), feeds)
    for k in a:
        np.testing.assert_array_equal(a[k], b[k])


def test_verification_catches_a_different_reimport(tmp_path, monkeypatch) -> None:  # noqa: ANN001
    """The last guard: if the written graph.quant did not rebuild the same integer arithmetic (simulated by
    widening every written range by 2 %), write_nnef raises instead of leaving a different model behind."""
    from nnkiln.frontends.nnef import writer_quant
    from nnkiln.frontends.nnef.writer import lit

    q = _quantized_onnx("_conv_relu_pool_gemm", "QDQ", False, "s8", tmp_path)
    module = _onnx_module(q)
    monkeypatch.setattr(writer_quant.QP, "entry", lambda self: (
        f"linear_quantize(min = {lit(self.lo * 1.02)}, max = {lit(self.hi * 1.02)}, bits = 8)"))
    with pytest.raises(FrontendError, match="re-imports with different results"):
        write_nnef(module, str(tmp_path / "n"))


QUANT_UNIFORM = """func.func @main(%x: tensor<1x8xf32>) -> tensor<1x8xf32> {
  %c = tosa.const {values = dense<4.0> : tensor<1x1xf32>} : tensor<1x1xf32>
  %m = tosa.mul %x, %c : (tensor<1x8xf32>, tensor<1x1xf32>) -> tensor<1x8xf32>
  %k = tosa.clamp %m {min_val = -1.0e6 : f32, max_val = 1.0e6 : f32} : (tensor<1x8xf32>) -> tensor<1x8xf32>
  %i = tosa.cast %k : (tensor<1x8xf32>) -> tensor<1x8xi32>
  %z = tosa.const {values = dense<3> : tensor<1x1xi32>} : tensor<1x1xi32>
  %a = tosa.add %i, %z : (tensor<1x8xi32>, tensor<1x1xi32>) -> tensor<1x8xi32>
  %lo = tosa.const {values = dense<-128> : tensor<1x1xi32>} : tensor<1x1xi32>
  %hi = tosa.const {values = dense<127> : tensor<1x1xi32>} : tensor<1x1xi32>
  %b = tosa.maximum %a, %lo : (tensor<1x8xi32>, tensor<1x1xi32>) -> tensor<1x8xi32>
  %d = tosa.minimum %b, %hi : (tensor<1x8xi32>, tensor<1x1xi32>) -> tensor<1x8xi32>
  %q = tosa.cast %d : (tensor<1x8xi32>) -> tensor<1x8x!quant.uniform<i8:f32, 0.25:3>>
  %r = tosa.rescale %q {input_zp = 3 : i64, output_zp = -1 : i64, multiplier = array<i64: 1073741824>, shift = array<i64: 31>, scale32 = true, double_round = false, per_channel = false} : (tensor<1x8x!quant.uniform<i8:f32, 0.25:3>>) -> tensor<1x8x!quant.uniform<i8:f32, 0.5:-1>>
  %w = tosa.cast %r : (tensor<1x8x!quant.uniform<i8:f32, 0.5:-1>>) -> tensor<1x8xi32>
  %m1 = tosa.const {values = dense<-1> : tensor<1x1xi32>} : tensor<1x1xi32>
  %s = tosa.sub %w, %m1 : (tensor<1x8xi32>, tensor<1x1xi32>) -> tensor<1x8xi32>
  %f = tosa.cast %s : (tensor<1x8xi32>) -> tensor<1x8xf32>
  %h = tosa.const {values = dense<0.5> : tensor<1x1xf32>} : tensor<1x1xf32>
  %y = tosa.mul %f, %h : (tensor<1x8xf32>, tensor<1x1xf32>) -> tensor<1x8xf32>
  func.return %y : tensor<1x8xf32>
}
"""


def test_quant_uniform_types_and_requantization(tmp_path) -> None:  # noqa: ANN001
    """Hand-written integer tosa with !quant.uniform types: quantize (scale 1/4, zp 3), RESCALE ×1/2 to zp −1,
    dequantize ×0.5. Expected by hand: x·4 = [0.4, 0.5, −1.5, 12, −160, 160, 2.4, −2.5] → round half to even
    [0, 0, −2, 12, −160, 160, 2, −2] → +3, clip → [3, 3, 1, 15, −128, 127, 5, 1]; RESCALE (q−3)·2^30 >> 31
    rounding half up → [0, 0, −1, 6, −65, 62, 1, −1] → −1 → [−1, −1, −2, 5, −66, 61, 0, −2]; dequantize
    (w + 1)·0.5."""
    m = parse_module(QUANT_UNIFORM)
    m.verify()
    round_trip(m, str(tmp_path / "n"), trials=4, scale=20.0)
    x = np.array([[0.1, 0.125, -0.375, 3.0, -40.0, 40.0, 0.6, -0.625]], np.float32)
    (y,) = run_ours(str(tmp_path / "n"), [x])
    np.testing.assert_array_equal(y[0], [0.0, 0.0, -0.5, 3.0, -32.5, 31.0, 0.5, -0.5])
    # the quantized input tensor is written with the range of scale 1/4, zero point 3: [(−128−3)/4, (127−3)/4]
    assert "min = -32.75, max = 31.0, bits = 8" in (tmp_path / "n" / "graph.quant").read_text()


WEIGHT_ONLY = """func.func @main(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %c = tosa.const {values = dense<[[-128, -3, 0, 127]]> : tensor<1x4xi8>} : tensor<1x4xi8>
  %i = tosa.cast %c : (tensor<1x4xi8>) -> tensor<1x4xi32>
  %z = tosa.const {values = dense<-3> : tensor<1x1xi32>} : tensor<1x1xi32>
  %d = tosa.sub %i, %z : (tensor<1x4xi32>, tensor<1x1xi32>) -> tensor<1x4xi32>
  %f = tosa.cast %d : (tensor<1x4xi32>) -> tensor<1x4xf32>
  %s = tosa.const {values = dense<0.1> : tensor<1x1xf32>} : tensor<1x1xf32>
  %w = tosa.mul %f, %s : (tensor<1x4xf32>, tensor<1x1xf32>) -> tensor<1x4xf32>
  %y = tosa.add %x, %w : (tensor<2x4xf32>, tensor<1x4xf32>) -> tensor<2x4xf32>
  func.return %y : tensor<2x4xf32>
}
"""


def test_dequantized_int8_constant(tmp_path) -> None:  # noqa: ANN001
    """An int8 constant dequantized in the graph (weight-only quantization) is written as its f32 values
    ``f32(c − zp)·f32(0.1)`` with c − zp = [−125, 0, 3, 130]."""
    m = parse_module(WEIGHT_ONLY)
    m.verify()
    round_trip(m, str(tmp_path / "n"))
    (y,) = run_ours(str(tmp_path / "n"), [np.zeros((2, 4), np.float32)])
    want = np.array([-125, 0, 3, 130], np.float32) * np.float32(0.1)
    np.testing.assert_array_equal(y, np.stack([want, want]))
