"""Quantized NNEF writer: an int8 AVG_POOL2D whose output an int8 CONCAT joins with other tensors.

NNEF's ``concat`` of quantized tensors needs one grid (scale and zero point) for all of its inputs, so the pool's
output must land on the grid of the other branch. Before the pool was a link of the scale solver
(``writer_quant_scales.solve_scales``), the writer refused every graph here but the two whose pool input already
shared the other branch's scale by accident: the pool's output kept its input's scale (``avg_pool`` form) while
the other branch had the scale the solver gave it.

Oracle: the original integer module run by the reference interpreter. The written graph takes and returns real
values; codes are mapped to real values and back with the written graph.quant entries (read with the reader's
rule, ``test_writer_quant_io._entry``), and the re-imported graph's codes must equal the original's exactly.
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

C = 3
_T07 = (1503238554, 31)  # a RESCALE by 0.7
_T06 = (1288490189, 31)  # a RESCALE by 0.6


def _t(h: int, w: int, et: str = "i8", c: int = C) -> str:
    return f"tensor<1x{h}x{w}x{c}x{et}>"


def _pool(res: str, src: str, hw: int, k: int, s: int, izp: int, ozp: int) -> str:
    o = (hw - k) // s + 1
    return (f"  {res} = tosa.avg_pool2d {src} {{kernel = array<i64: {k}, {k}>, stride = array<i64: {s}, {s}>, "
            f"pad = array<i64: 0, 0, 0, 0>, input_zp = {izp} : i64, output_zp = {ozp} : i64}} : "
            f"({_t(hw, hw)}) -> {_t(o, o)}\n")


def _rescale(res: str, src: str, hw: int, izp: int, ozp: int, ms: tuple[int, int]) -> str:
    return (f"  {res} = tosa.rescale {src} {{input_zp = {izp} : i64, output_zp = {ozp} : i64, multiplier = "
            f"array<i64: {ms[0]}>, shift = array<i64: {ms[1]}>, scale32 = true, double_round = false, per_channel = "
            f"false}} : ({_t(hw, hw)}) -> {_t(hw, hw)}\n")


def _max_pool(res: str, src: str) -> str:
    return (f"  {res} = tosa.max_pool2d {src} {{kernel = array<i64: 3, 3>, stride = array<i64: 1, 1>, pad = "
            f"array<i64: 0, 0, 0, 0>}} : ({_t(5, 5)}) -> {_t(3, 3)}\n")


_CAT = f"  %c = tosa.concat %p, %r {{axis = 3 : i64}} : ({_t(3, 3)}, {_t(3, 3)}) -> {_t(3, 3, c=2 * C)}\n"
_Y = f"%y: {_t(3, 3)}"

# name: (extra graph inputs, body before the concat, form of the pool: "avg_pool" / "conv" / "moved" (conv + the
# constant moving its codes to the concat's zero point)). The pool reads %x [1, 5, 5, 3] (3x3, count 9) or
# [1, 6, 6, 3] (2x2 stride 2, count 4); the concat joins %p with %r.
CASES = {
    # the other branch: a graph input rescaled by 0.7; the pool input a graph input of its own
    "input_and_rescaled_input": (_Y, _pool("%p", "%x", 5, 3, 1, 0, 0) + _rescale("%r", "%y", 3, 0, 0, _T07),
                                 "avg_pool"),
    "zero_points": (_Y, _pool("%p", "%x", 5, 3, 1, 4, 4) + _rescale("%r", "%y", 3, 2, 4, _T07), "avg_pool"),
    # the pool reads a RESCALE (zero point 7) of x; the other branch is y rescaled by 0.6 to zero point 7
    "pool_after_rescale": (_Y, _rescale("%h", "%x", 5, 0, 7, _T07) + _pool("%p", "%h", 5, 3, 1, 7, 7)
                           + _rescale("%r", "%y", 3, 0, 7, _T06), "avg_pool"),
    # the scales cannot all agree: pool(x·0.7) joins max_pool(x), so the output scale is not the input's
    "cycle": ("", _rescale("%h", "%x", 5, 0, 0, _T07) + _pool("%p", "%h", 5, 3, 1, 0, 0) + _max_pool("%r", "%x"),
              "conv"),
    # the other branch has zero point 9, the pool's output 0: its codes are moved to 9
    "zero_point_of_the_other_branch": (_Y, _pool("%p", "%x", 5, 3, 1, 0, 0) + _rescale("%r", "%y", 3, 0, 9, _T07),
                                       "moved"),
    # an even count with zero points (conv form at any scale; it was accepted before too)
    "even_count": (_Y, _pool("%p", "%x", 6, 2, 2, 5, -3) + _rescale("%r", "%y", 3, 2, -3, _T07), "conv"),
    # the same source (one scale already; accepted before too)
    "same_source": ("", _pool("%p", "%x", 5, 3, 1, 0, 0) + _max_pool("%r", "%x"), "avg_pool"),
}


def _module(case: str):  # noqa: ANN202
    extra, body, _ = CASES[case]
    hw = 6 if case == "even_count" else 5
    args = f"%x: {_t(hw, hw)}" + (f", {extra}" if extra else "")
    out = _t(3, 3, c=2 * C)
    return parse_module(f"func.func @main({args}) -> {out} {{\n{body}{_CAT}  func.return %c : {out}\n}}\n")


def _moved(text: str) -> bool:
    return re.search(r"(t\d+) = copy\(c\d+\);\n\s+t\d+ = add\(t\d+, \1\);", text) is not None


def _shape(folder: str, name: str) -> tuple[int, ...]:
    text = open(os.path.join(folder, "graph.nnef")).read()
    return tuple(int(d) for d in re.search(rf"{name} = external\(shape = \[([^\]]*)\]", text).group(1).split(","))


def _check_codes(module, folder: str, names: list[str], want_name: str = "output0") -> None:  # noqa: ANN001
    """Random int8 codes (the whole range, and codes near 0 where a mean often ends in a half): the re-imported
    graph's real-valued output, on its grid, gives back the original's codes."""
    back = load_nnef(folder)
    rng = np.random.default_rng(17)
    sy, zy = _entry(folder, want_name)
    for trial in range(8):
        lo, hi = (-128, 127) if trial < 3 else (-6, 6)
        codes = {n: rng.integers(lo, hi + 1, _shape(folder, n)).astype(np.int8) for n in names}
        reals = {}
        for n, c in codes.items():
            s, z = _entry(folder, n)
            reals[n] = ((c.astype(np.int64) - z) * s).astype(np.float32)
        want = np.asarray(ref.run(module, codes)[want_name])
        assert want.dtype == np.int8
        got = np.asarray(ref.run(back, reals)[want_name], np.float64)
        got_codes = np.rint(got / sy) + zy
        np.testing.assert_allclose(got, (got_codes - zy) * sy, rtol=1e-6, atol=0)  # on the grid
        np.testing.assert_array_equal(got_codes.astype(np.int64), want.astype(np.int64))


@pytest.mark.parametrize("case", list(CASES))
def test_pool_joined_by_concat(case: str, tmp_path) -> None:  # noqa: ANN001
    module = _module(case)
    d = str(tmp_path / "n")
    write_nnef(module, d)
    text = open(os.path.join(d, "graph.nnef")).read()
    form = CASES[case][2]
    assert ("avg_pool(" in text, "groups = 0" in text, _moved(text)) == \
        (form == "avg_pool", form != "avg_pool", form == "moved"), text
    names = ["x", "y"] if CASES[case][0] else ["x"]
    _check_codes(module, d, names)
    ops = {op.name for op in load_nnef(d).walk()}
    assert ("tosa.avg_pool2d" in ops, "tosa.depthwise_conv2d" in ops) == (form == "avg_pool", form != "avg_pool")
    if form == "avg_pool" and case != "pool_after_rescale":  # the pooled input is on the concat's grid
        assert _entry(d, "x")[0] == pytest.approx(_entry(d, "output0")[0], rel=1e-12)


_DEQ_CAT = f"""func.func @main(%x: {_t(5, 5)}, %y: {_t(3, 3)}) -> tensor<1x3x3x6xf32> {{
{_pool("%p", "%x", 5, 3, 1, 0, 0)}{_rescale("%r", "%y", 3, 0, 0, _T07)}{_CAT}  %i = tosa.cast %c : ({_t(3, 3, c=6)}) -> tensor<1x3x3x6xi32>
  %f = tosa.cast %i : (tensor<1x3x3x6xi32>) -> tensor<1x3x3x6xf32>
  %s = tosa.const {{values = dense<0.1> : tensor<1x1x1x1xf32>}} : tensor<1x1x1x1xf32>
  %o = tosa.mul %f, %s : (tensor<1x3x3x6xf32>, tensor<1x1x1x1xf32>) -> tensor<1x3x3x6xf32>
  func.return %o : tensor<1x3x3x6xf32>
}}
"""


def test_dequantized_concat_fixes_the_pool_input_scale(tmp_path) -> None:  # noqa: ANN001
    """The concat is dequantized with scale 0.1: through the pool's link the pooled graph input gets 0.1 as well
    (and y 0.1 / 0.7), so the pool stays an ``avg_pool``; float outputs equal bit for bit."""
    module = parse_module(_DEQ_CAT)
    d = str(tmp_path / "n")
    write_nnef(module, d)
    text = open(os.path.join(d, "graph.nnef")).read()
    assert "avg_pool(" in text and "groups = 0" not in text
    assert np.float32(_entry(d, "x")[0]) == np.float32(0.1)
    back = load_nnef(d)
    rng = np.random.default_rng(4)
    for _ in range(4):
        codes = {"x": rng.integers(-128, 128, (1, 5, 5, C)).astype(np.int8),
                 "y": rng.integers(-128, 128, (1, 3, 3, C)).astype(np.int8)}
        reals = {}
        for n, c in codes.items():
            s, z = _entry(d, n)
            reals[n] = ((c.astype(np.int64) - z) * s).astype(np.float32)
        np.testing.assert_array_equal(np.asarray(ref.run(back, reals)["output0"]),
                                      np.asarray(ref.run(module, codes)["output0"]))
