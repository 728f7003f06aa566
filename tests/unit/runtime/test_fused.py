"""Fused task pairs: a 1x1 CONV2D whose result only a DEPTHWISE_CONV2D reads (the ``fuse-expansion-depthwise``
pass, kernel ``fused.conv2d_depthwise``: ``nk_pwdw_f32``), and an NCHW -> NHWC TRANSPOSE feeding a zero-padded
CONV2D (``fold-transposes-into-operands``: the convolution reads its input through ``operand_perms``,
``nk_pad_nchw_f32``).

Expected values: the same executable with the fusion disabled (the two kernels one after the other: the fused
kernel computes every value with the same operations, so results are bit-identical) and the reference
interpreter (the spec's pseudocode; the convolutions' sums in another order, so within 1e-5 of the largest
magnitude). Covered: strides 1 and 2, 3x3 and 5x5 windows, paddings, channel counts that are not multiples of
the 16-channel panels, batch 2, 1-3 threads (an image split between threads computes the rows at the boundary
twice), with and without clamps; the copy aside of an input the plan overlapped with the output, and the path
without it; the cases that must stay unfused. The transposed input: channel counts 1, 3 (the special case), 4 and 17, batch
2, strides and asymmetric padding, threads 1 and 2; a transposed input read again later, or an unpadded
convolution, stays apart.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx
import onnx.helper as oh
import pytest

import nnkiln
from nnkiln.analysis import expansion_depthwise, operand_transposes
from nnkiln.analysis.task_edits import apply_to_tasks
from nnkiln.ir.text import parse_module
from nnkiln.runtime.kernels import fused

pytestmark = pytest.mark.native
RNG = np.random.default_rng(11)


def _onnx(path: str, n: int, h: int, w: int, ci: int, c: int, k: int, s: int, pad: int, clips: tuple[bool, bool],
          read_again: bool = False, group_mult: int = 1) -> dict[str, np.ndarray]:
    """x -> 1x1 conv (ci -> c) [-> clip] -> depthwise kxk stride s [-> clip] -> y; ``read_again``: the expanded
    tensor is also an output; ``group_mult``: channel multiplier of the depthwise convolution."""
    def t(name: str, a: np.ndarray) -> onnx.TensorProto:
        return oh.make_tensor(name, 1, a.shape, a.ravel())

    cd = c * group_mult
    inits = [t("w1", (RNG.standard_normal((c, ci, 1, 1)) * 0.4).astype(np.float32)),
             t("b1", RNG.standard_normal(c).astype(np.float32)),
             t("w2", (RNG.standard_normal((cd, 1, k, k)) * 0.4).astype(np.float32)),
             t("b2", RNG.standard_normal(cd).astype(np.float32)),
             oh.make_tensor("lo", 1, [], [0.0]), oh.make_tensor("hi", 1, [], [6.0])]
    nodes = [oh.make_node("Conv", ["x", "w1", "b1"], ["e0"])]
    e = "e0"
    if clips[0]:
        nodes.append(oh.make_node("Clip", ["e0", "lo", "hi"], ["e1"]))
        e = "e1"
    nodes.append(oh.make_node("Conv", [e, "w2", "b2"], ["d"], group=c, kernel_shape=[k, k], strides=[s, s],
                              pads=[pad] * 4))
    y = "d"
    if clips[1]:
        nodes.append(oh.make_node("Clip", ["d", "lo", "hi"], ["y"]))
        y = "y"
    oh_, ow_ = (h + 2 * pad - k) // s + 1, (w + 2 * pad - k) // s + 1
    outs = [oh.make_tensor_value_info(y, 1, [n, cd, oh_, ow_])]
    if read_again:
        outs.append(oh.make_tensor_value_info(e, 1, [n, c, h, w]))
    g = oh.make_graph(nodes, "g", [oh.make_tensor_value_info("x", 1, [n, ci, h, w])], outs, inits)
    onnx.save(oh.make_model(g, opset_imports=[oh.make_opsetid("", 17)]), path)
    return {"x": RNG.standard_normal((n, ci, h, w)).astype(np.float32)}


def _fused_units(exe: nnkiln.Executable) -> list[fused.ExpansionDepthwise]:
    """The kernels the runtime bound to the blob's ``fused.conv2d_depthwise`` tasks."""
    units = [f for f in exe._fns if isinstance(f, fused.ExpansionDepthwise)]
    assert len(units) == sum(t.kernel == "fused.conv2d_depthwise" for t in exe.blob.tasks)
    return units


def _check(module, inputs: dict[str, np.ndarray], threads: int, monkeypatch: pytest.MonkeyPatch  # noqa: ANN001
           ) -> list[fused.ExpansionDepthwise]:
    monkeypatch.setattr(expansion_depthwise, "MIN_BYTES", 0)
    exe = nnkiln.compile(module, threads=threads)
    units = _fused_units(exe)
    got = exe.run(inputs)
    with monkeypatch.context() as m:
        m.setattr(expansion_depthwise, "plan", lambda tasks, buffers: [])
        apart = nnkiln.compile(module, threads=threads)
        assert not _fused_units(apart)
        expected = apart.run(inputs)
    ref = nnkiln.compile(module, pipeline="reference").run(inputs)
    for name in got:
        np.testing.assert_array_equal(got[name], expected[name])
        r = ref[name]
        np.testing.assert_allclose(got[name], r, rtol=1e-5, atol=1e-5 * float(np.abs(r).max()))
    return units


CASES = [
    # n, h, w, ci, c, k, s, pad, clips
    (1, 16, 14, 16, 96, 3, 2, 1, (True, True)),    # MobileNetV2's first expansion, smaller
    (1, 13, 11, 8, 40, 3, 1, 1, (True, True)),     # stride 1: bands keep the rows they share
    (2, 11, 9, 24, 36, 3, 1, 1, (False, True)),    # batch 2, no clamp after the 1x1 convolution
    (1, 17, 15, 8, 20, 5, 2, 2, (True, False)),    # 5x5, 20 channels (a panel and 4)
    (1, 9, 9, 4, 8, 3, 2, 0, (False, False)),      # no padding, 8 channels (half a panel)
]


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("threads", [1, 2, 3])
def test_fused_identical_to_apart_and_to_reference(case: tuple, threads: int, tmp_path,  # noqa: ANN001
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    path = str(tmp_path / "m.onnx")
    inputs = _onnx(path, *case)
    units = _check(nnkiln.load(path), inputs, threads, monkeypatch)
    assert len(units) == 1


def test_long_images_in_many_bands(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: ANN001
    """Bands of a few rows (64x64x96 expanded rows: 24 KiB each, bands of about 256 KiB) over a tall image."""
    path = str(tmp_path / "m.onnx")
    inputs = _onnx(path, 1, 96, 64, 16, 96, 3, 1, 1, (True, True))
    for threads in (1, 2):
        assert len(_check(nnkiln.load(path), inputs, threads, monkeypatch)) == 1


def _nhwc_text(h: int, w: int, ci: int, c: int) -> str:
    """The 1x1 convolution reads the graph input itself (NHWC): its input never overlaps the output."""
    def t(*shape: int) -> str:
        return "tensor<" + "x".join(map(str, shape)) + "xf32>"

    attrs = "input_zp = 0 : i64, weight_zp = 0 : i64"
    return f"""func.func @main(%x: {t(1, h, w, ci)}) -> {t(1, h // 2, w // 2, c)} {{
  %w1 = tosa.const {{values = dense<0.25> : {t(c, 1, 1, ci)}}} : {t(c, 1, 1, ci)}
  %b1 = tosa.const {{values = dense<-0.5> : {t(c)}}} : {t(c)}
  %w2 = tosa.const {{values = dense<0.125> : {t(3, 3, c, 1)}}} : {t(3, 3, c, 1)}
  %b2 = tosa.const {{values = dense<0.25> : {t(c)}}} : {t(c)}
  %e = tosa.conv2d %x, %w1, %b1 {{pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>, dilation = array<i64: 1, 1>, {attrs}}} : ({t(1, h, w, ci)}, {t(c, 1, 1, ci)}, {t(c)}) -> {t(1, h, w, c)}
  %ec = tosa.clamp %e {{min_val = 0.0 : f32, max_val = 6.0 : f32}} : ({t(1, h, w, c)}) -> {t(1, h, w, c)}
  %d = tosa.depthwise_conv2d %ec, %w2, %b2 {{pad = array<i64: 0, 1, 0, 1>, stride = array<i64: 2, 2>, dilation = array<i64: 1, 1>, {attrs}}} : ({t(1, h, w, c)}, {t(3, 3, c, 1)}, {t(c)}) -> {t(1, h // 2, w // 2, c)}
  func.return %d : {t(1, h // 2, w // 2, c)}
}}
"""


@pytest.mark.parametrize("threads", [1, 2])
def test_input_copied_aside_only_when_the_plan_overlaps_it(tmp_path, threads: int,  # noqa: ANN001
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    path = str(tmp_path / "m.onnx")
    inputs = _onnx(path, 1, 12, 12, 8, 24, 3, 2, 1, (True, True))
    (unit,) = _check(nnkiln.load(path), inputs, threads, monkeypatch)
    assert unit.copy  # three buffers in the arena: the output took the transposed input's place
    x = RNG.standard_normal((1, 12, 10, 8)).astype(np.float32)
    (unit,) = _check(parse_module(_nhwc_text(12, 10, 8, 24)), {"x": x}, threads, monkeypatch)
    assert not unit.copy


@pytest.mark.parametrize("variant", ["expanded read again", "channel multiplier 2", "too small"])
def test_left_apart(variant: str, tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: ANN001
    path = str(tmp_path / "m.onnx")
    inputs = _onnx(path, 1, 10, 10, 8, 16, 3, 1, 1, (True, True), read_again=variant == "expanded read again",
                   group_mult=2 if variant == "channel multiplier 2" else 1)
    if variant == "too small":
        exe = nnkiln.compile(nnkiln.load(path), threads=1)  # 10x10x16 floats: far below MIN_BYTES
        assert not _fused_units(exe)
        return
    assert not _check(nnkiln.load(path), inputs, 1, monkeypatch)


def _conv_onnx(path: str, n: int, c: int, h: int, w: int, pads: list[int], stride: int) -> dict[str, np.ndarray]:
    """x (NCHW) -> conv 3x3 (c -> 8, ``pads`` [top, left, bottom, right]) -> relu -> y."""
    w1 = (RNG.standard_normal((8, c, 3, 3)) * 0.3).astype(np.float32)
    inits = [oh.make_tensor("w1", 1, w1.shape, w1.ravel()), oh.make_tensor("b1", 1, [8], RNG.standard_normal(8).astype(np.float32))]
    nodes = [oh.make_node("Conv", ["x", "w1", "b1"], ["c1"], pads=pads, strides=[stride, stride]),
             oh.make_node("Relu", ["c1"], ["y"])]
    oh_, ow_ = (h + pads[0] + pads[2] - 3) // stride + 1, (w + pads[1] + pads[3] - 3) // stride + 1
    outs = [oh.make_tensor_value_info("y", 1, [n, 8, oh_, ow_])]
    g = oh.make_graph(nodes, "g", [oh.make_tensor_value_info("x", 1, [n, c, h, w])], outs, inits)
    onnx.save(oh.make_model(g, opset_imports=[oh.make_opsetid("", 17)]), path)
    return {"x": RNG.standard_normal((n, c, h, w)).astype(np.float32)}


def _transposed_units(exe: nnkiln.Executable) -> list[Any]:
    return [t for t in exe.blob.tasks if t.kernel == "tosa.conv2d" and t.args.get("operand_perms")]


@pytest.mark.parametrize("n,c,h,w,pads,stride", [
    (1, 3, 17, 15, [1, 1, 1, 1], 2),   # a stem: 3 channels
    (2, 2, 9, 12, [0, 2, 1, 0], 1),    # batch 2, two channels, asymmetric padding
    (1, 4, 10, 10, [2, 2, 2, 2], 1),
    (1, 17, 8, 11, [1, 0, 1, 0], 2),   # the general channel loop
])
@pytest.mark.parametrize("threads", [1, 2])
def test_transposed_input_identical(n: int, c: int, h: int, w: int, pads: list[int], stride: int, threads: int,
                                    tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: ANN001
    path = str(tmp_path / "c.onnx")
    inputs = _conv_onnx(path, n, c, h, w, pads, stride)
    module = nnkiln.load(path)
    exe = nnkiln.compile(module, threads=threads)
    assert len(_transposed_units(exe)) == 1
    got = exe.run(inputs)["y"]
    with monkeypatch.context() as m:
        m.setattr(operand_transposes, "plan", lambda tasks, buffers: [])
        apart = nnkiln.compile(module, threads=threads)
        assert not _transposed_units(apart)
        np.testing.assert_array_equal(got, apart.run(inputs)["y"])
    ref = nnkiln.compile(module, pipeline="reference").run(inputs)["y"]
    np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-5 * float(np.abs(ref).max()))


def test_transposed_input_left_apart(tmp_path) -> None:  # noqa: ANN001
    path = str(tmp_path / "c.onnx")
    inputs = _conv_onnx(path, 1, 3, 9, 9, [0, 0, 0, 0], 1)  # no padding: no padded copy to make
    exe = nnkiln.compile(nnkiln.load(path), threads=1)
    assert not _transposed_units(exe)
    ref = nnkiln.compile(nnkiln.load(path), pipeline="reference").run(inputs)["y"]
    np.testing.assert_allclose(exe.run(inputs)["y"], ref, rtol=1e-5, atol=1e-5 * float(np.abs(ref).max()))


def test_transposed_input_read_again_stays_apart() -> None:
    """A blob whose transposed tensor a later task reads too: the transpose must still write it."""
    from nnkiln.blob.writer import BlobBuilder, encode
    from nnkiln.kinds import Kind
    from nnkiln.runtime import load_blob

    F = Kind.F32
    x = RNG.standard_normal((1, 3, 6, 5)).astype(np.float32)
    w = (RNG.standard_normal((4, 3, 3, 3)) * 0.3).astype(np.float32)
    b = BlobBuilder()
    xi = b.add_io("x", F, x.shape, output=False)
    nhwc = b.add_arena(F, (1, 6, 5, 3), 0)
    y = b.add_io("y", F, (1, 6, 5, 4), output=True)
    z = b.add_io("z", F, (1, 6, 5, 3), output=True)
    b.add_task("tosa.transpose", [xi], [nhwc], attrs={"perms": (0, 2, 3, 1)})
    b.add_task("tosa.conv2d", [nhwc, b.add_const(w, F), b.add_const(np.zeros(4, np.float32), F)], [y],
               attrs={"pad": (1, 1, 1, 1), "stride": (1, 1), "dilation": (1, 1), "input_zp": 0, "weight_zp": 0})
    b.add_task("tosa.abs", [nhwc], [z])
    b.tasks[:] = apply_to_tasks(b.tasks, operand_transposes.plan(b.tasks, b.buffers))
    exe = load_blob(encode(b.finish()), threads=1)
    assert not _transposed_units(exe)
    got = exe.run({"x": x})
    np.testing.assert_array_equal(got["z"], np.abs(x.transpose(0, 2, 3, 1)))
