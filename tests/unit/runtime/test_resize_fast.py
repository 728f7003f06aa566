"""The runtime's RESIZE (``kernels.image``: sample positions computed once) against the reference interpreter
(``nnkiln.reference``, the spec's pseudocode §2.12.1): identical results, and the reference's REQUIRE errors."""

from __future__ import annotations

import numpy as np
import pytest

import nnkiln
from nnkiln.blob.format import BufferDesc, Memory
from nnkiln.dialects.tosa.ops_image import resize_output_dim
from nnkiln.ir.text import parse_module
from nnkiln.kinds import Kind
from nnkiln.reference import run
from nnkiln.runtime.kernels import image

RNG = np.random.default_rng(11)


def _module(shape, out_hw, t_in, t_out, stride, offset, shift, mode, float_attrs):
    """A RESIZE whose border makes the spec's output size ``out_hw`` (``resize_output_dim``)."""
    n, ih, iw, c = shape
    val = (lambda v: float(np.float32(v))) if float_attrs else int
    border = [o - resize_output_dim(i, val(st), val(of), 0, shift)
              for o, i, st, of in zip(out_hw, (ih, iw), stride, offset)]
    kind = "f32" if float_attrs else "i64"
    arr = lambda v: f"array<{kind}: {v[0]}, {v[1]}>"  # noqa: E731
    s = "x".join(map(str, shape))
    out = f"tensor<{n}x{out_hw[0]}x{out_hw[1]}x{c}x{t_out}>"
    return parse_module(f"""
func.func @main(%x: tensor<{s}x{t_in}>) -> {out} {{
  %y = tosa.resize %x {{output_size = array<i64: {out_hw[0]}, {out_hw[1]}>, stride = {arr(stride)}, offset = {arr(offset)}, border = array<i64: {border[0]}, {border[1]}>, shift = {shift} : i64, mode = #tosa<resize_mode {mode}>}} : (tensor<{s}x{t_in}>) -> {out}
  func.return %y : {out}
}}""")


CASES = [
    # shape, out_hw, t_in, t_out, stride, offset, shift, mode, float attrs
    ((2, 6, 8, 3), (12, 16), "f32", "f32", (0.5, 0.5), (-0.25, -0.25), 0, "BILINEAR", True),   # 2x, half pixel
    ((1, 12, 16, 4), (24, 32), "f32", "f32", (0.5, 0.5), (-0.5, -0.5), 0, "NEAREST", True),    # 2x nearest
    ((1, 20, 25, 2), (33, 47), "f32", "f32", (0.6060606, 0.5319149), (-0.5, -0.5), 0, "NEAREST", True),
    ((1, 9, 7, 5), (4, 3), "f32", "f32", (2.0, 2.0), (0.5, 0.5), 0, "BILINEAR", True),         # downscale
    ((1, 5, 6, 3), (9, 11), "i8", "i8", (1, 1), (0, 0), 1, "NEAREST", False),                  # integer
    ((2, 4, 4, 2), (7, 7), "i16", "i16", (2, 2), (0, 0), 2, "NEAREST", False),
]


@pytest.mark.parametrize("case", CASES)
def test_resize_identical_to_reference(case) -> None:  # noqa: ANN001
    shape, t_in = case[0], case[2]
    m = _module(*case)
    x = (RNG.standard_normal(shape).astype(np.float32) if t_in == "f32"
         else RNG.integers(-100, 100, shape).astype({"i8": np.int8, "i16": np.int16}[t_in]))
    want = run(m, {"x": x})
    exe = nnkiln.compile(m)
    got = exe.run({"x": x})
    for k in want:
        np.testing.assert_array_equal(got[k], want[k])
    kinds = {"f32": Kind.F32, "i8": Kind.I8, "i16": Kind.I16}
    task = next(t for t in exe.blob.tasks if t.kernel == "tosa.resize")
    bufs = exe.blob.buffers
    assert image.resize(task.args["attrs"], [bufs[task.ins[0]]], [bufs[task.outs[0]]]) is not None  # the fast path ran
    assert bufs[task.ins[0]].kind is kinds[t_in]


def test_unpredictable_geometry_falls_back_to_the_reference() -> None:
    """Sample rows past the input's last row: the fast path declines and the reference's REQUIRE error is raised."""
    b_in = BufferDesc(Memory.ARENA, Kind.F32, (1, 4, 4, 1), 0, 64)
    b_out = BufferDesc(Memory.ARENA, Kind.F32, (1, 8, 4, 1), 0, 128)
    attrs = {"output_size": [8, 4], "stride": [1.0, 1.0], "offset": [0.0, 0.0], "border": [0, 0], "shift": 0,
             "mode": "NEAREST"}
    assert image.resize(attrs, [b_in], [b_out]) is None
