"""Quantized NNEF writer: int8 / uint8 graph inputs and outputs (``writer_quant_io``) and grouped int8
convolutions (``writer_quant_conv``).

Oracle: the original integer module (from ONNX QOperator / QDQ models imported by our ONNX frontend) run by the
reference interpreter on random codes. The written graph takes and returns *real values* (see writer_quant_io's
interface decision): each test maps codes to real values and back with the boundary tensor's graph.quant entry,
read from the written file with the reader's own rule (``common.quant.qparams_from_range``), and requires the
re-imported graph's codes to equal the original module's codes exactly.
"""

from __future__ import annotations

import os
import re
import sys

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(__file__))

import nnkiln.reference as ref  # noqa: E402
from nnkiln.frontends.common import quant as cq  # noqa: E402
from nnkiln.frontends.nnef import load_nnef  # noqa: E402
from nnkiln.frontends.nnef.writer import write_nnef  # noqa: E402
from nnkiln.ir.errors import FrontendError  # noqa: E402

onnx = pytest.importorskip("onnx")
from onnx import TensorProto as TP  # noqa: E402
from onnx import helper as oh  # noqa: E402
from onnx import numpy_helper as nh  # noqa: E402

_NP = {TP.INT8: np.int8, TP.UINT8: np.uint8}


def _model(nodes, inputs, outputs, inits):  # noqa: ANN001, ANN202
    m = oh.make_model(oh.make_graph(nodes, "m", inputs, outputs, list(inits)), opset_imports=[oh.make_opsetid("", 17)])
    m.ir_version = 10
    return m


def _import(m, shapes):  # noqa: ANN001, ANN202
    from nnkiln.onnx_backend import import_model_proto

    return import_model_proto(m, [np.zeros(s, _NP.get(i.type.tensor_type.elem_type, np.float32))
                                  for s, i in zip(shapes, m.graph.input)])


def _zp(et: int, v: int) -> np.ndarray:
    return np.array(v if et == TP.INT8 else v + 128, _NP[et])


def _qconv(r: np.random.Generator, et: int, x: str, y: str, c: int, m: int, group: int, per_channel: bool,
           xz: int, yz: int, tag: str) -> tuple[object, list]:
    """A QLinearConv (3x3, pad 1) of ``x`` [1, c, H, W] with ``group`` groups; zero points in int8 terms."""
    w = r.integers(-127, 128, (m, c // group, 3, 3)).astype(np.int8)
    ws = (r.uniform(0.004, 0.012, m) if per_channel else np.array(0.008)).astype(np.float32)
    inits = [nh.from_array(np.array(0.05, np.float32), f"{tag}xs"), nh.from_array(_zp(et, xz), f"{tag}xz"),
             nh.from_array(w, f"{tag}w"), nh.from_array(ws, f"{tag}ws"),
             nh.from_array(np.zeros(ws.shape, np.int8), f"{tag}wz"),
             nh.from_array(np.array(0.3, np.float32), f"{tag}ys"), nh.from_array(_zp(et, yz), f"{tag}yz"),
             nh.from_array(r.integers(-2000, 2000, (m,)).astype(np.int32), f"{tag}b")]
    node = oh.make_node("QLinearConv", [x] + [f"{tag}{n}" for n in ("xs", "xz", "w", "ws", "wz", "ys", "yz", "b")],
                        [y], pads=[1, 1, 1, 1], group=group)
    return node, inits


def _conv_chain(et: int, group: int, per_channel: bool):  # noqa: ANN202
    """int8 (or uint8) input → QLinearConv(group) → QLinearConv(group 1) → int8 (uint8) output."""
    r = np.random.default_rng(7 + group)
    n1, i1 = _qconv(r, et, "x", "h", 4, 6, group, per_channel, 3, -7, "a")
    n2, i2 = _qconv(r, et, "h", "y", 6, 4, 1, per_channel, -7, 2, "b")
    return _model([n1, n2], [oh.make_tensor_value_info("x", et, [1, 4, 6, 6])],
                  [oh.make_tensor_value_info("y", et, [1, 4, 6, 6])], i1 + i2), [(1, 4, 6, 6)]


def _entry(folder: str, name: str) -> tuple[float, int]:
    """(scale, int8 zero point) of ``name``'s linear_quantize entry, by the reader's rule."""
    text = open(os.path.join(folder, "graph.quant")).read()
    m = re.search(rf'"{name}": linear_quantize\(min = ([^,]+), max = ([^,]+), bits = 8\);', text)
    assert m, text
    p = cq.qparams_from_range(np.array([float(m.group(1))]), np.array([float(m.group(2))]), 8)
    assert p is not None
    return float(p[0][0]), int(p[1][0])


def _check_codes(module, folder: str, dtypes: dict[str, type], trials: int = 3,  # noqa: ANN001
                 floats: dict[str, tuple] | None = None) -> None:
    """Random codes for every integer input (``floats``: float inputs, fed as they are): the original module's
    output codes must equal the codes of the re-imported graph's real-valued outputs (``rint(y/s) + zp``, and y
    exactly on the grid)."""
    back = load_nnef(folder)
    rng = np.random.default_rng(99)
    for _ in range(trials):
        feeds = {k: (rng.standard_normal(shp) * 3).astype(np.float32) for k, shp in (floats or {}).items()}
        reals = dict(feeds)
        for name, dt in dtypes.items():
            shp = tuple(int(d) for d in re.search(rf"{name} = external\(shape = \[([^\]]*)\]",
                                                  open(os.path.join(folder, "graph.nnef")).read()).group(1).split(","))
            info = np.iinfo(dt)
            feeds[name] = rng.integers(info.min, info.max + 1, shp).astype(dt)
            s, zp = _entry(folder, name)
            zp += 128 if dt is np.uint8 else 0
            reals[name] = ((feeds[name].astype(np.int64) - zp) * s).astype(np.float32)
        a, b = ref.run(module, feeds), ref.run(back, reals)
        assert len(a) == len(b)
        for (ka, va), (kb, vb) in zip(a.items(), b.items()):
            va = np.asarray(va)
            assert va.dtype in (np.int8, np.uint8), va.dtype
            s, zp = _entry(folder, kb)
            zp += 128 if va.dtype == np.uint8 else 0
            vb = np.asarray(vb, np.float64)
            codes = np.rint(vb / s) + zp
            np.testing.assert_allclose(vb, (codes - zp) * s, rtol=1e-6, atol=0)  # on the grid
            np.testing.assert_array_equal(codes.astype(np.int64), va.astype(np.int64))
            assert len(np.unique(va)) > 10  # the codes are not saturated


def _int_convs(module) -> list[str]:  # noqa: ANN001
    return [op.name for op in module.walk() if op.name == "tosa.conv2d" and "xi8" in str(op.operands[0].type)]


# ------------------------------------------------------------------------------------------------
# int8 / uint8 graph inputs and outputs


@pytest.mark.parametrize("et", [TP.INT8, TP.UINT8], ids=["s8", "u8"])
@pytest.mark.parametrize("per_channel", [False, True], ids=["tensor", "channel"])
def test_integer_io_conv_chain(et: int, per_channel: bool, tmp_path) -> None:  # noqa: ANN001
    m, shapes = _conv_chain(et, 1, per_channel)
    module = _import(m, shapes)
    assert f"tensor<1x4x6x6x{'i8' if et == TP.INT8 else 'ui8'}>" in str(module).split("\n")[1]  # integer args
    d = str(tmp_path / "n")
    write_nnef(module, d)
    text = open(os.path.join(d, "graph.nnef")).read()
    assert "x = external(shape = [1, 4, 6, 6]);" in text  # real values, not codes
    _check_codes(module, d, {"x": _NP[et]})
    assert _int_convs(load_nnef(d)), "the re-imported graph must run integer convolutions"


def _dequant_quant(et: int, xz: int = 3, conv_xz: int | None = None):  # noqa: ANN202
    """int8 input x → DequantizeLinear → + float input g → QuantizeLinear → int8 output (and optionally x read by
    a QLinearConv with zero point ``conv_xz`` too)."""
    r = np.random.default_rng(1)
    inits = [nh.from_array(np.array(0.1, np.float32), "s"), nh.from_array(_zp(et, xz), "z"),
             nh.from_array(np.array(0.04, np.float32), "os"), nh.from_array(_zp(et, -20), "oz")]
    nodes = [oh.make_node("DequantizeLinear", ["x", "s", "z"], ["f"]), oh.make_node("Add", ["f", "g"], ["h"]),
             oh.make_node("QuantizeLinear", ["h", "os", "oz"], ["y"])]
    outs = [oh.make_tensor_value_info("y", et, [1, 4, 6, 6])]
    if conv_xz is not None:
        n, i = _qconv(r, et, "x", "y2", 4, 4, 1, False, conv_xz, 0, "c")
        nodes.append(n)
        inits += i
        outs.append(oh.make_tensor_value_info("y2", et, [1, 4, 6, 6]))
    ins = [oh.make_tensor_value_info("x", et, [1, 4, 6, 6]), oh.make_tensor_value_info("g", TP.FLOAT, [1, 4, 6, 6])]
    return _model(nodes, ins, outs, inits), [(1, 4, 6, 6), (1, 4, 6, 6)]


@pytest.mark.parametrize("et", [TP.INT8, TP.UINT8], ids=["s8", "u8"])
def test_dequantized_input_and_quantized_output(et: int, tmp_path) -> None:  # noqa: ANN001
    """The input's scale / zero point are forced by its dequantization (0.1, 3), the output is the quantize
    pattern's codes; the input is also read by an integer conv with the same zero point."""
    m, shapes = _dequant_quant(et, 3, 3)
    module = _import(m, shapes)
    assert "tosa.cast" in str(module) and "tosa.conv2d" in str(module)
    d = str(tmp_path / "n")
    write_nnef(module, d)
    s, zp = _entry(d, "x")
    assert (np.float32(s), zp) == (np.float32(0.1), 3)
    _check_codes(module, d, {"x": _NP[et]}, floats={"g": (1, 4, 6, 6)})


def test_input_read_with_two_zero_points_is_refused(tmp_path) -> None:  # noqa: ANN001
    m, shapes = _dequant_quant(TP.INT8, 3, 5)
    module = _import(m, shapes)
    with pytest.raises(FrontendError) as err:
        write_nnef(module, str(tmp_path / "n"))
    msg = str(err.value)
    assert "tosa.conv2d" in msg and "zero point 5" in msg and "one quantization" in msg


def test_int16_input_still_refused(tmp_path) -> None:  # noqa: ANN001
    from nnkiln.ir.text import parse_module

    m = parse_module("func.func @main(%a: tensor<4xi16>) -> tensor<4xi16> {\n"
                     "  %y = tosa.reverse %a {axis = 0 : i64} : (tensor<4xi16>) -> tensor<4xi16>\n"
                     "  func.return %y : tensor<4xi16>\n}\n")
    with pytest.raises(FrontendError, match="i16"):
        write_nnef(m, str(tmp_path / "n"))


# ------------------------------------------------------------------------------------------------
# grouped int8 convolution: one NNEF conv(groups = G)


@pytest.mark.parametrize("et", [TP.INT8, TP.UINT8], ids=["s8", "u8"])
@pytest.mark.parametrize("per_channel", [False, True], ids=["tensor", "channel"])
def test_grouped_qlinearconv(et: int, per_channel: bool, tmp_path) -> None:  # noqa: ANN001
    m, shapes = _conv_chain(et, 2, per_channel)
    module = _import(m, shapes)
    assert "tosa.concat" in str(module)  # the importer's per-group CONV2Ds + CONCAT
    d = str(tmp_path / "n")
    write_nnef(module, d)
    assert "groups = 2" in open(os.path.join(d, "graph.nnef")).read()
    _check_codes(module, d, {"x": _NP[et]})
    back = load_nnef(d)
    assert len(_int_convs(back)) == 3  # two groups + the second conv, all integer
    # second generation (the NNEF reader's own grouped lowering, float interface): bit-identical
    d2 = str(tmp_path / "n2")
    write_nnef(back, d2)
    assert "groups = 2" in open(os.path.join(d2, "graph.nnef")).read()
    again = load_nnef(d2)
    rng = np.random.default_rng(5)
    s, zp = _entry(d, "x")
    for _ in range(2):
        x = ((rng.integers(-128, 128, (1, 4, 6, 6)) - zp) * s).astype(np.float32)
        np.testing.assert_array_equal(ref.run(again, {"x": x})["y"], ref.run(back, {"x": x})["y"])


def test_grouped_conv_qdq_float_io(tmp_path) -> None:  # noqa: ANN001
    """A float model with a group-2 Conv quantized by onnxruntime (QDQ, per channel): float interface."""
    ort_q = pytest.importorskip("onnxruntime.quantization")
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "onnx"))
    import test_onnx_quant as toq

    r = np.random.default_rng(2)
    inits = [nh.from_array((r.standard_normal((6, 2, 3, 3)) * 0.3).astype(np.float32), "w"),
             nh.from_array((r.standard_normal(6) * 0.1).astype(np.float32), "b"),
             nh.from_array((r.standard_normal((4, 3, 1, 1)) * 0.3).astype(np.float32), "w2"),
             nh.from_array((r.standard_normal(4) * 0.1).astype(np.float32), "b2")]
    nodes = [oh.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1], group=2),
             oh.make_node("Relu", ["c"], ["r"]), oh.make_node("Conv", ["r", "w2", "b2"], ["y"], group=2)]
    f32 = oh.make_tensor_value_info
    model = _model(nodes, [f32("x", TP.FLOAT, [1, 4, 6, 6])], [f32("y", TP.FLOAT, [1, 4, 6, 6])], inits)
    fp, qp = str(tmp_path / "f.onnx"), str(tmp_path / "q.onnx")
    onnx.save(model, fp)
    ort_q.quantize_static(fp, qp, toq._Reader({"x": (1, 4, 6, 6)}), quant_format=ort_q.QuantFormat.QDQ,
                          per_channel=True, activation_type=ort_q.QuantType.QInt8,
                          weight_type=ort_q.QuantType.QInt8, reduce_range=True)
    module = _import(onnx.load(qp), [(1, 4, 6, 6)])
    assert "tosa.concat" in str(module) and _int_convs(module)
    d = str(tmp_path / "n")
    write_nnef(module, d)
    assert open(os.path.join(d, "graph.nnef")).read().count("groups = 2") == 2
    back = load_nnef(d)
    rng = np.random.default_rng(3)
    for _ in range(3):
        x = (rng.standard_normal((1, 4, 6, 6)) * 2).astype(np.float32)
        np.testing.assert_array_equal(ref.run(back, {"x": x})["y"], ref.run(module, {"x": x})["y"])
    assert len(_int_convs(back)) == 4
