"""Quantized NNEF writer: int8 AVG_POOL2D with non-zero zero points (``writer_quant_pool``).

Oracle: the original integer module run by the reference interpreter (TOSA 0.30 §2.3.2: ``Σ (x − input_zp)``
over the taps inside the input, ``reciprocal_scale(count)``, ``+ output_zp``, clip). The written graph takes and
returns real values (``writer_quant_io``); codes are mapped to real values and back with the boundary entries,
read from the written graph.quant by the reader's rule, and the re-imported graph's codes must equal the
original's exactly. TOSA 0.30's AVG_POOL2D is int8 only, so a "uint8 pool" is the int8 pool between the unit-scale
uint8 ↔ int8 RESCALEs of a uint8 model (uint8 graph input and output), or our reader's own unsigned form
(``input_zp = output_zp = −128``, from an NNEF 1.0.5 ``signed = false`` graph).

The even-count pools read from the graph input (and our reader's unsigned form) also check that the inputs hit
the case the plain ``avg_pool`` form would get wrong (the mean of the raw codes rounded before the zero point is
removed), so the exactness is not an accident of the data.
"""

from __future__ import annotations

import os
import re
import sys

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(__file__))

from test_writer_quant_io import _entry  # noqa: E402  (the graph.quant entry reader, shared)

import nnkiln.reference as ref  # noqa: E402
from nnkiln.frontends.nnef import load_nnef  # noqa: E402
from nnkiln.frontends.nnef.writer import write_nnef  # noqa: E402
from nnkiln.ir.text import parse_module  # noqa: E402
from nnkiln.reference.tensor_ops import avg_pool2d as ref_avg_pool2d  # noqa: E402

# (H, W, kernel, stride, pad [top, bottom, left, right]) and the form the writer must choose for zero points
# that are not 0: counts 4 (even, no padding): one conv; 4 / 6 / 9 (padding): three convs + slices; 9 (odd): the
# avg_pool itself; 1 / 3 / 9 with padding (all odd): the avg_pool itself.
GEOMETRIES = {
    "2x2s2": ((6, 6), (2, 2), (2, 2), (0, 0, 0, 0), "conv"),
    "3x3p1": ((5, 5), (3, 3), (1, 1), (1, 1, 1, 1), "conv"),
    "3x3": ((5, 5), (3, 3), (1, 1), (0, 0, 0, 0), "avg_pool"),
    "3x3s2p2": ((5, 7), (3, 3), (2, 2), (2, 2, 0, 0), "avg_pool"),
}
C = 3


def _out_hw(hw, k, s, p):  # noqa: ANN001, ANN202
    return (hw[0] + p[0] + p[1] - k[0]) // s[0] + 1, (hw[1] + p[2] + p[3] - k[1]) // s[1] + 1


def _t(hw: tuple[int, int], et: str) -> str:
    return f"tensor<1x{hw[0]}x{hw[1]}x{C}x{et}>"


def _pool(src: str, hw, k, s, p, izp: int, ozp: int) -> tuple[str, tuple[int, int]]:  # noqa: ANN001
    o = _out_hw(hw, k, s, p)
    return (f"  %p = tosa.avg_pool2d {src} {{kernel = array<i64: {k[0]}, {k[1]}>, stride = array<i64: {s[0]}, {s[1]}>, "
            f"pad = array<i64: {', '.join(map(str, p))}>, input_zp = {izp} : i64, output_zp = {ozp} : i64}} : "
            f"({_t(hw, 'i8')}) -> {_t(o, 'i8')}\n"), o


def _rescale(res: str, src: str, hw, a: str, b: str, izp: int, ozp: int, mult: int = 1 << 30,  # noqa: ANN001
             shift: int = 30) -> str:
    return (f"  {res} = tosa.rescale {src} {{input_zp = {izp} : i64, output_zp = {ozp} : i64, multiplier = "
            f"array<i64: {mult}>, shift = array<i64: {shift}>, scale32 = true, double_round = false, per_channel = "
            f"false}} : ({_t(hw, a)}) -> {_t(hw, b)}\n")


def _module(et: str, geometry: str, izp: int, ozp: int, pre_zp: int | None = None):  # noqa: ANN202
    """``x`` → [a RESCALE ×0.7 to zero point ``pre_zp``] → AVG_POOL2D(input_zp, output_zp) → output; for ``u8``
    the pool sits between the unit-scale uint8 ↔ int8 RESCALEs (zero points in int8 terms)."""
    hw, k, s, p, _ = GEOMETRIES[geometry]
    o = _out_hw(hw, k, s, p)
    xt = "ui8" if et == "u8" else "i8"
    body, src = "", "%x"
    if et == "u8":
        body += _rescale("%v", "%x", hw, "ui8", "i8", 128, 0)
        src = "%v"
    if pre_zp is not None:
        body += _rescale("%w", src, hw, "i8", "i8", izp + 9, pre_zp, mult=1503238554, shift=31)
        src = "%w"
    pool, _ = _pool(src, hw, k, s, p, izp, ozp)
    body += pool
    res = "%p"
    if et == "u8":
        body += _rescale("%y", "%p", o, "i8", "ui8", 0, 128)
        res = "%y"
    return parse_module(f"func.func @main(%x: {_t(hw, xt)}) -> {_t(o, xt)} {{\n{body}"
                        f"  func.return {res} : {_t(o, xt)}\n}}\n")


def _moved(text: str) -> bool:
    """The conv form's result is added to a constant (``copy(variable)``): codes moved to another zero point."""
    return re.search(r"(t\d+) = copy\(c\d+\);\n\s+t\d+ = add\(t\d+, \1\);", text) is not None


def _inputs(rng: np.random.Generator, shape: tuple[int, ...], dt: type, near: tuple[int, int]) -> list[np.ndarray]:
    """Codes over the whole range and codes (int8 terms) in ``near``, where the rounding of halves differs."""
    off = 128 if dt is np.uint8 else 0
    whole = [rng.integers(-128, 128, shape) for _ in range(3)]
    close = [rng.integers(near[0], near[1] + 1, shape) for _ in range(6)]
    return [(c + off).astype(dt) for c in whole + close]


def _check_codes(module, folder: str, dt: type, izp: int, ozp: int, geometry: str,  # noqa: ANN001
                 pooled_input: bool = True) -> None:
    """The re-imported graph's output codes equal the original's on every input. When the pool reads the input
    (``pooled_input``), some input of a conv-form case is one where averaging the raw codes (the reader's plain
    pool) rounds differently, and none is for an avg_pool-form case."""
    back = load_nnef(folder)
    hw, k, s, p, form = GEOMETRIES[geometry]
    sx, zx = _entry(folder, "x")
    sy, zy = _entry(folder, "output0")
    off = 128 if dt is np.uint8 else 0
    rng = np.random.default_rng(11)
    hazard = False
    for codes in _inputs(rng, (1, *hw, C), dt, (min(0, izp) - 3, max(0, izp) + 3)):
        want = np.asarray(ref.run(module, {"x": codes})["output0"])
        assert want.dtype == dt
        got = np.asarray(ref.run(back, {"x": ((codes.astype(np.int64) - zx - off) * sx).astype(np.float32)})["output0"],
                         np.float64)
        got_codes = np.rint(got / sy) + zy + off
        np.testing.assert_allclose(got, (got_codes - zy - off) * sy, rtol=1e-6, atol=0)  # on the grid
        np.testing.assert_array_equal(got_codes.astype(np.int64), want.astype(np.int64))
        if izp and pooled_input:
            raw = ref_avg_pool2d((codes.astype(np.int64) - off).astype(np.int8), k, s, p, 0, 0, np.int8)
            naive = np.clip(raw.astype(np.int64) - izp + ozp, -128, 127) + off
            hazard |= bool(np.any(naive != want.astype(np.int64)))
    assert hazard == (form == "conv" and izp != 0 and pooled_input)


# ------------------------------------------------------------------------------------------------
# int8 / uint8 pools written from tosa


@pytest.mark.parametrize("geometry", list(GEOMETRIES))
@pytest.mark.parametrize("et, izp, ozp", [("s8", 37, -5), ("s8", -20, 9), ("u8", 12, 3)], ids=["s8", "s8neg", "u8"])
def test_avg_pool_with_zero_points(et: str, izp: int, ozp: int, geometry: str, tmp_path) -> None:  # noqa: ANN001
    module = _module(et, geometry, izp, ozp)
    d = str(tmp_path / "n")
    write_nnef(module, d)
    text = open(os.path.join(d, "graph.nnef")).read()
    form = GEOMETRIES[geometry][4]
    assert (("avg_pool(" in text), ("groups = 0" in text)) == ((form == "avg_pool"), (form == "conv")), text
    if geometry == "3x3p1":  # counts 4, 6 and 9: one conv each, the output assembled from their slices
        assert text.count("conv(") == 3 and text.count("slice(") == 9
    _check_codes(module, d, np.uint8 if et == "u8" else np.int8, izp, ozp, geometry)
    names = {op.name for op in load_nnef(d).walk()}  # integer pools / convs in the re-import
    assert ("tosa.depthwise_conv2d" in names, "tosa.avg_pool2d" in names) == (form == "conv", form == "avg_pool")


@pytest.mark.parametrize("geometry", ["2x2s2", "3x3p1", "3x3"])
def test_pool_input_zero_point_differs_from_input_zp(geometry: str, tmp_path) -> None:  # noqa: ANN001
    """The pooled tensor's zero point (−50, set by the RESCALE before the pool) is not the pool's input_zp (6):
    the conv form's bias ``n·(z − input_zp)`` makes up the difference. Nothing downstream asks for a zero point,
    so the output keeps output_zp (conv form) or ``z + output_zp − input_zp`` (avg_pool form), no constant added."""
    module = _module("s8", geometry, 6, 4, pre_zp=-50)
    d = str(tmp_path / "n")
    write_nnef(module, d)
    text = open(os.path.join(d, "graph.nnef")).read()
    assert not _moved(text)
    _check_codes(module, d, np.int8, 6, 4, geometry, pooled_input=False)


_CONSUMED = """func.func @main(%x: {x}) -> {y} {{
{pre}{pool}{post}  func.return %y : {y}
}}
"""


@pytest.mark.parametrize("geometry", ["2x2s2", "3x3"])
def test_unsigned_form_keeps_the_zero_point_its_consumer_subtracts(geometry: str, tmp_path) -> None:  # noqa: ANN001
    """Our reader's unsigned form inside an integer graph: a RESCALE gives the codes zero point 12, the pool
    averages them with input_zp = output_zp = −128 and the next RESCALE reads the result with zero point 12.
    Count 4: depth-wise conv at output_zp −128 and the constant moving its codes to zero point 12; count 9 (odd):
    the avg_pool itself, whose output keeps zero point 12."""
    hw, k, s, p, form = GEOMETRIES[geometry]
    pool, o = _pool("%w", hw, k, s, p, -128, -128)
    text = _CONSUMED.format(x=_t(hw, "i8"), y=_t(o, "i8"), pool=pool,
                            pre=_rescale("%w", "%x", hw, "i8", "i8", 5, 12, mult=1503238554, shift=31),
                            post=_rescale("%y", "%p", o, "i8", "i8", 12, 3, mult=1503238554, shift=31))
    module = parse_module(text)
    d = str(tmp_path / "n")
    write_nnef(module, d)
    written = open(os.path.join(d, "graph.nnef")).read()
    assert ("groups = 0" in written, _moved(written)) == ((form == "conv"),) * 2
    sx, zx = _entry(d, "x")
    sy, zy = _entry(d, "output0")
    back = load_nnef(d)
    rng = np.random.default_rng(8)
    for codes in _inputs(rng, (1, *hw, C), np.int8, (-128, -100)):
        want = np.asarray(ref.run(module, {"x": codes})["output0"])
        got = np.asarray(ref.run(back, {"x": ((codes.astype(np.int64) - zx) * sx).astype(np.float32)})["output0"])
        np.testing.assert_array_equal(np.rint(np.asarray(got, np.float64) / sy).astype(np.int64) + zy, want)


_DEQUANT = """func.func @main(%x: tensor<1x5x5x3xi8>) -> ({results}) {{
  %p = tosa.avg_pool2d %x {{kernel = array<i64: 3, 3>, stride = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, input_zp = {izp} : i64, output_zp = {ozp} : i64}} : (tensor<1x5x5x3xi8>) -> tensor<1x3x3x3xi8>
  %i = tosa.cast %p : (tensor<1x3x3x3xi8>) -> tensor<1x3x3x3xi32>
  %z = tosa.const {{values = dense<{dzp}> : tensor<1x1x1x1xi32>}} : tensor<1x1x1x1xi32>
  %d = tosa.sub %i, %z : (tensor<1x3x3x3xi32>, tensor<1x1x1x1xi32>) -> tensor<1x3x3x3xi32>
  %f = tosa.cast %d : (tensor<1x3x3x3xi32>) -> tensor<1x3x3x3xf32>
  %s = tosa.const {{values = dense<0.1> : tensor<1x1x1x1xf32>}} : tensor<1x1x1x1xf32>
  %y = tosa.mul %f, %s : (tensor<1x3x3x3xf32>, tensor<1x1x1x1xf32>) -> tensor<1x3x3x3xf32>
{pin}  func.return {returned}
}}
"""

# the input dequantized too, with scale 0.05 (and the zero point the pool subtracts): its scale is no longer free
_PIN = """  %xi = tosa.cast %x : (tensor<1x5x5x3xi8>) -> tensor<1x5x5x3xi32>
  %xz = tosa.const {{values = dense<{izp}> : tensor<1x1x1x1xi32>}} : tensor<1x1x1x1xi32>
  %xd = tosa.sub %xi, %xz : (tensor<1x5x5x3xi32>, tensor<1x1x1x1xi32>) -> tensor<1x5x5x3xi32>
  %xf = tosa.cast %xd : (tensor<1x5x5x3xi32>) -> tensor<1x5x5x3xf32>
  %xs = tosa.const {{values = dense<0.05> : tensor<1x1x1x1xf32>}} : tensor<1x1x1x1xf32>
  %x2 = tosa.mul %xf, %xs : (tensor<1x5x5x3xf32>, tensor<1x1x1x1xf32>) -> tensor<1x5x5x3xf32>
"""


@pytest.mark.parametrize("pinned", [False, True], ids=["free_input", "pinned_input"])
@pytest.mark.parametrize("izp, ozp, dzp", [(0, 0, 0), (7, -3, -3), (7, -3, 20)], ids=["zp0", "zp", "other_zp"])
def test_dequantized_pool_output(izp: int, ozp: int, dzp: int, pinned: bool, tmp_path) -> None:  # noqa: ANN001
    """The pool's output is dequantized with scale 0.1. With a free input scale, the solver's pool link gives
    the input that scale too, so an odd count with ``z + output_zp − input_zp`` equal to the dequantization's zero
    point is the plain ``avg_pool`` (before the link: depth-wise convs, and earlier still refused). With the input
    dequantized at 0.05 as well (``pinned``), the avg_pool form (which keeps the input's scale) cannot be used even
    for an odd count: depth-wise convs take the scale. With the dequantization's zero point not the pool's
    output_zp (20 against −3), a constant is added to move the codes to that zero point."""
    f3, f5 = "tensor<1x3x3x3xf32>", "tensor<1x5x5x3xf32>"
    module = parse_module(_DEQUANT.format(
        izp=izp, ozp=ozp, dzp=dzp, results=f"{f3}, {f5}" if pinned else f3,
        pin=_PIN.format(izp=izp) if pinned else "", returned=f"%y, %x2 : {f3}, {f5}" if pinned else f"%y : {f3}"))
    d = str(tmp_path / "n")
    write_nnef(module, d)
    text = open(os.path.join(d, "graph.nnef")).read()
    conv_form = pinned or dzp != ozp
    assert ("groups = 0" in text, "avg_pool(" in text) == (conv_form, not conv_form), text
    assert _moved(text) == (dzp != ozp)
    sx, zx = _entry(d, "x")
    assert np.float32(sx) == np.float32(0.05 if pinned else 0.1)
    back = load_nnef(d)
    rng = np.random.default_rng(3)
    for codes in _inputs(rng, (1, 5, 5, 3), np.int8, (-10, 10)):
        want = ref.run(module, {"x": codes})
        got = ref.run(back, {"x": ((codes.astype(np.int64) - zx) * sx).astype(np.float32)})
        assert list(got) == list(want)
        for k in want:
            np.testing.assert_array_equal(np.asarray(got[k]), np.asarray(want[k]))


# ------------------------------------------------------------------------------------------------
# our reader's unsigned form (NNEF 1.0.5 uint8 → AVG_POOL2D with zero points −128) written back as NNEF 1.0.3


_NNEF_POOLS = {"2x2s2": "size = [1, 1, 2, 2], stride = [1, 1, 2, 2]",
               "3x3p1": "size = [1, 1, 3, 3], padding = [(0, 0), (0, 0), (1, 1), (1, 1)]"}


@pytest.mark.parametrize("geometry", list(_NNEF_POOLS))
def test_reader_uint8_pool_round_trip(geometry: str, tmp_path) -> None:  # noqa: ANN001
    """nnef-tools' uint8 pool (zero point 140): our reader averages the unsigned codes (input_zp = output_zp =
    −128, halves round up) and keeps the zero point 140 (int8 12) on the output; written as NNEF 1.0.3 (no
    unsigned entries) that is the conv form plus the constant moving output_zp −128 to 12, bit-exact."""
    pool = _NNEF_POOLS[geometry]
    (hw, _), k, st, p, _ = GEOMETRIES[geometry]
    src = tmp_path / "u8"
    src.mkdir()
    (src / "graph.nnef").write_text(f"version 1.0;\ngraph G( x ) -> ( y )\n{{\n"
                                    f"  x = external(shape = [1, 3, {hw}, {hw}]);\n"
                                    f"  y = avg_pool(x, {pool}, border = 'ignore');\n}}\n")
    (src / "graph.quant").write_text("".join(
        f'"{n}": zero_point_linear_quantize(zero_point = 140, scale = 0.05, bits = 8, signed = false, '
        'symmetric = false);\n' for n in "xy"))
    first = load_nnef(str(src))
    (pool_op,) = [op for op in first.walk() if op.name == "tosa.avg_pool2d"]
    assert pool_op.properties["input_zp"].value.data == pool_op.properties["output_zp"].value.data == -128
    d = str(tmp_path / "n")
    write_nnef(first, d)
    text = open(os.path.join(d, "graph.nnef")).read()
    assert "groups = 0" in text and "avg_pool(" not in text and _moved(text)
    back = load_nnef(d)
    rng = np.random.default_rng(5)
    hazard = False
    for u in [rng.integers(0, 256, (1, 3, hw, hw)) for _ in range(3)] + \
             [rng.integers(120, 136, (1, 3, hw, hw)) for _ in range(6)]:
        x = ((u - 140) * 0.05).astype(np.float32)
        want = np.asarray(ref.run(first, {"x": x})["y"])
        np.testing.assert_array_equal(np.asarray(ref.run(back, {"x": x})["y"]), want)
        # the signed mean of the int8 codes (halves away from zero), dequantized as the reader does
        mean = ref_avg_pool2d(np.transpose(u - 128, (0, 2, 3, 1)).astype(np.int8), k, st, p, 0, 0, np.int8)
        signed = (np.transpose(mean, (0, 3, 1, 2)).astype(np.int64) - 12).astype(np.float32) * np.float32(0.05)
        hazard |= bool(np.any(signed != want))
    assert hazard, "the inputs must include a negative half, where the signed avg_pool would round down"
