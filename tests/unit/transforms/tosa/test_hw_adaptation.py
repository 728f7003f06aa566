"""The level-3 HW adaptation passes keep the values of the graphs they rewrite.

Each case is a small tosa function run by the reference interpreter before and after one pass on seeded random
inputs: integer results bit-identical (dtype, shape and values), float results within 1e-5 relative (fp16: a
relative L2 error below 1e-2), and the op kinds after the pass show that the rewrite happened (or, for the
cases where it must not fire, that the function is unchanged). The last tests run each pass on the torch-exported
ONNX models of ``tests/data/torch_onnx``.
"""

from __future__ import annotations

import io
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.dialects.func import FuncOp
from xdsl.ir import SSAValue

from nnkiln.dialects.tosa.base import kind_of
from nnkiln.ir.passes import PassManager
from nnkiln.ir.text import parse_module
from nnkiln.pipelines.text import parse_pass_pipeline
from nnkiln.reference import run
from nnkiln.reference.interpreter import input_names

DATA = Path(__file__).resolve().parents[3] / "data" / "torch_onnx"

CONV = ("{{pad = array<i64: {pad}>, stride = array<i64: {stride}>, dilation = array<i64: 1, 1>, "
        "input_zp = {izp} : i64, weight_zp = {wzp} : i64}}")


def conv_attrs(pad: str = "0, 0, 0, 0", stride: str = "1, 1", izp: int = 0, wzp: int = 0) -> str:
    return CONV.format(pad=pad, stride=stride, izp=izp, wzp=wzp)


def dense(values: np.ndarray, elem: str) -> str:
    """A ``tosa.const`` line body: ``dense<...> : tensor<...>`` of ``values``."""
    shape = "x".join(str(d) for d in values.shape)
    body = np.array2string(values, separator=", ", threshold=1 << 30, max_line_width=1 << 30,
                           floatmode="unique").replace("\n", "")
    return f"dense<{body}> : tensor<{shape}x{elem}>"


def const(name: str, values: np.ndarray, elem: str) -> str:
    shape = "x".join(str(d) for d in values.shape)
    return f"  {name} = tosa.const {{values = {dense(values, elem)}}} : tensor<{shape}x{elem}>"


def inputs_for(module: ModuleOp, seed: int) -> dict[str, np.ndarray]:
    (func,) = [op for op in module.body.block.ops if isinstance(op, FuncOp)]
    rng = np.random.default_rng(seed)
    inputs = {}
    for name, arg in zip(input_names(func), func.body.blocks[0].args):
        assert isinstance(arg.type, TensorType)
        shape, kind = tuple(arg.type.get_shape()), kind_of(arg.type)
        if kind is not None and kind.is_float:
            inputs[name] = rng.standard_normal(shape).astype(np.float32)
        else:
            assert kind is not None
            lo, hi = kind.int_range
            inputs[name] = rng.integers(max(lo, -128), min(hi, 127) + 1, shape).astype(np.int64)
    return inputs


def op_counts(module: ModuleOp) -> Counter[str]:
    return Counter(op.name for op in module.walk() if op.name.startswith("tosa."))


def apply(spec: str, module: ModuleOp) -> ModuleOp:
    """``module`` after the passes of ``spec`` (a copy; the pass manager verifies after each pass)."""
    after = module.clone()
    PassManager(parse_pass_pipeline(spec), stream=io.StringIO()).run(after)
    return after


def compare(before: ModuleOp, after: ModuleOp, *, rtol: float | None = 1e-5, l2: float | None = None,
            seeds: int = 3) -> None:
    """Reference results of ``after`` equal those of ``before``: bit-exact for integers (or ``rtol=None``),
    within ``rtol`` for floats, or a relative L2 error below ``l2``; same dtypes and shapes."""
    for seed in range(seeds):
        inputs = inputs_for(before, seed)
        want, got = run(before, inputs), run(after, inputs)
        assert want.keys() == got.keys()
        for k, w in want.items():
            g = got[k]
            assert (g.dtype, g.shape) == (w.dtype, w.shape), k
            if w.dtype.kind != "f" or rtol is None and l2 is None:
                np.testing.assert_array_equal(g, w, err_msg=k)
            elif l2 is not None:
                w64, g64 = w.astype(np.float64), g.astype(np.float64)
                err = np.linalg.norm(g64 - w64) / max(np.linalg.norm(w64), 1e-30)
                assert err < l2, f"{k}: relative L2 error {err}"
            else:
                np.testing.assert_allclose(g, w, rtol=rtol, atol=rtol * float(np.abs(w).max()), err_msg=k)


def check(spec: str, text: str, *, fires: bool = True, **tolerance: float | None) -> ModuleOp:
    """Run ``spec`` on ``text``; the values must be kept, and the module must change iff ``fires``."""
    before = parse_module(text)
    after = apply(spec, before)
    assert (str(after) != str(before)) == fires, str(after)
    compare(before, after, **tolerance)  # type: ignore[arg-type]
    return after


# ----------------------------------------------------------------------------------------------
# fc-to-conv


def fc_text(n: int, ic: int, oc: int, elem: str, out: str, izp: int = 0, wzp: int = 0, seed: int = 0) -> str:
    rng = np.random.default_rng(seed)
    if elem == "i8":
        w, b = rng.integers(-100, 100, (oc, ic)), rng.integers(-1000, 1000, (oc,))
    else:
        w, b = rng.standard_normal((oc, ic)).astype(np.float32), rng.standard_normal(oc).astype(np.float32)
    return "\n".join([
        f"func.func @main(%x: tensor<{n}x{ic}x{elem}>) -> tensor<{n}x{oc}x{out}> {{",
        const("%w", w, elem), const("%b", b, out),
        f"  %y = tosa.fully_connected %x, %w, %b {{input_zp = {izp} : i64, weight_zp = {wzp} : i64}} : "
        f"(tensor<{n}x{ic}x{elem}>, tensor<{oc}x{ic}x{elem}>, tensor<{oc}x{out}>) -> tensor<{n}x{oc}x{out}>",
        f"  func.return %y : tensor<{n}x{oc}x{out}>", "}"])


@pytest.mark.parametrize("n,elem,out,izp,wzp", [(1, "f32", "f32", 0, 0), (3, "f32", "f32", 0, 0),
                                               (2, "i8", "i32", 5, -3), (1, "i8", "i32", 0, 0)])
def test_fc_to_conv(n: int, elem: str, out: str, izp: int, wzp: int) -> None:
    after = check("fc-to-conv", fc_text(n, 12, 5, elem, out, izp, wzp))
    ops = op_counts(after)
    assert ops["tosa.conv2d"] == 1 and "tosa.fully_connected" not in ops, ops
    assert f"input_zp = {izp}" in str(after) and f"weight_zp = {wzp}" in str(after)


def matmul_text(b: int, m: int, k: int, n: int, elem: str, out: str, const_b: bool = True, zps: tuple[int, int] = (0, 0)) -> str:
    rng = np.random.default_rng(1)
    rhs = (rng.integers(-100, 100, (b, k, n)) if elem == "i8" else rng.standard_normal((b, k, n)).astype(np.float32))
    a_t, b_t, o_t = f"tensor<{b}x{m}x{k}x{elem}>", f"tensor<{b}x{k}x{n}x{elem}>", f"tensor<{b}x{m}x{n}x{out}>"
    args = f"%a: {a_t}" + ("" if const_b else f", %r: {b_t}")
    return "\n".join([
        f"func.func @main({args}) -> {o_t} {{",
        *([const("%r", rhs, elem)] if const_b else []),
        f"  %y = tosa.matmul %a, %r {{A_zp = {zps[0]} : i64, B_zp = {zps[1]} : i64}} : ({a_t}, {b_t}) -> {o_t}",
        f"  func.return %y : {o_t}", "}"])


@pytest.mark.parametrize("elem,out,zps", [("f32", "f32", (0, 0)), ("i8", "i32", (-7, 4))])
def test_const_matmul_to_conv(elem: str, out: str, zps: tuple[int, int]) -> None:
    after = check("fc-to-conv", matmul_text(1, 6, 8, 3, elem, out, zps=zps))
    ops = op_counts(after)
    assert ops["tosa.conv2d"] == 1 and "tosa.matmul" not in ops, ops


@pytest.mark.parametrize("batch,const_b", [(2, True), (1, False)])
def test_matmul_stays(batch: int, const_b: bool) -> None:
    check("fc-to-conv", matmul_text(batch, 4, 8, 3, "f32", "f32", const_b=const_b), fires=False)


# ----------------------------------------------------------------------------------------------
# avgpool-to-depthwise


def pool_text(op: str, elem: str, kernel: str, stride: str, pad: str, shape: tuple[int, ...] = (1, 8, 8, 3),
              zps: str = "") -> str:
    n, h, w, c = shape
    k, s, p = ([int(v) for v in a.split(",")] for a in (kernel, stride, pad))
    oh, ow = out_size(h, k[0], s[0], p[0] + p[1]), out_size(w, k[1], s[1], p[2] + p[3])
    t_in, t_out = f"tensor<{n}x{h}x{w}x{c}x{elem}>", f"tensor<{n}x{oh}x{ow}x{c}x{elem}>"
    return "\n".join([
        f"func.func @main(%x: {t_in}) -> {t_out} {{",
        f"  %y = tosa.{op} %x {{kernel = array<i64: {kernel}>, stride = array<i64: {stride}>, "
        f"pad = array<i64: {pad}>{zps}}} : ({t_in}) -> {t_out}",
        f"  func.return %y : {t_out}", "}"])


AVG_ZP = ", input_zp = 0 : i64, output_zp = 0 : i64"


@pytest.mark.parametrize("kernel,stride", [("2, 2", "2, 2"), ("3, 3", "1, 1"), ("3, 2", "1, 2")])
def test_avgpool_to_depthwise(kernel: str, stride: str) -> None:
    after = check("avgpool-to-depthwise", pool_text("avg_pool2d", "f32", kernel, stride, "0, 0, 0, 0", zps=AVG_ZP))
    ops = op_counts(after)
    assert ops["tosa.depthwise_conv2d"] == 1 and "tosa.avg_pool2d" not in ops, ops


@pytest.mark.parametrize("elem,pad", [("f32", "1, 1, 1, 1"), ("i8", "0, 0, 0, 0")])
def test_avgpool_stays(elem: str, pad: str) -> None:
    check("avgpool-to-depthwise", pool_text("avg_pool2d", elem, "3, 3", "1, 1", pad, zps=AVG_ZP), fires=False)


# ----------------------------------------------------------------------------------------------
# scale-shift-to-depthwise


def scale_shift_text(s_shape: tuple[int, ...], b_shape: tuple[int, ...] | None, producer: str = "",
                     extra_use: bool = False, swap: bool = False) -> str:
    rng = np.random.default_rng(2)
    t = "tensor<1x4x4x6xf32>"
    lines = [f"func.func @main(%x: {t}) -> ({t}, {t}) {{"]
    src = "%x"
    if producer == "conv":
        lines += [const("%w", rng.standard_normal((6, 1, 1, 6)).astype(np.float32), "f32"),
                  const("%cb", np.zeros(6, np.float32), "f32"),
                  f"  %p = tosa.conv2d %x, %w, %cb {conv_attrs()} : ({t}, tensor<6x1x1x6xf32>, tensor<6xf32>) -> {t}"]
        src = "%p"
    elif producer == "relu":
        lines.append(f"  %p = tosa.clamp %x {{min_val = 0.0 : f32, max_val = 6.0 : f32}} : ({t}) -> {t}")
        src = "%p"
    s_t = "tensor<" + "x".join(map(str, s_shape)) + "xf32>"
    lines.append(const("%s", rng.standard_normal(s_shape).astype(np.float32), "f32"))
    a, b = (src, "%s") if not swap else ("%s", src)
    lines.append(f"  %m = tosa.mul {a}, {b} {{shift = 0 : i64}} : ({t if not swap else s_t}, "
                 f"{s_t if not swap else t}) -> {t}")
    y = "%m"
    if b_shape is not None:
        b_t = "tensor<" + "x".join(map(str, b_shape)) + "xf32>"
        lines += [const("%b", rng.standard_normal(b_shape).astype(np.float32), "f32"),
                  f"  %y = tosa.add %m, %b : ({t}, {b_t}) -> {t}"]
        y = "%y"
    other = src if extra_use else "%x"
    lines += [f"  func.return {y}, {other} : {t}, {t}", "}"]
    return "\n".join(lines)


@pytest.mark.parametrize("s_shape,b_shape,producer,extra_use,swap", [
    ((1, 1, 1, 6), (1, 1, 1, 6), "", False, False),
    ((1, 1, 1, 6), None, "relu", False, True),
    ((1, 1, 1, 1), (1, 1, 1, 6), "relu", True, False),
    ((1, 1, 1, 6), (1, 1, 1, 6), "conv", True, False),  # the conv has another user: fold-bias-add cannot fold
])
def test_scale_shift_to_depthwise(s_shape: tuple[int, ...], b_shape: tuple[int, ...] | None, producer: str,
                                  extra_use: bool, swap: bool) -> None:
    after = check("scale-shift-to-depthwise", scale_shift_text(s_shape, b_shape, producer, extra_use, swap))
    ops = op_counts(after)
    assert ops["tosa.depthwise_conv2d"] == 1 and "tosa.mul" not in ops and "tosa.add" not in ops, ops


@pytest.mark.parametrize("s_shape,producer", [((1, 4, 1, 6), ""), ((1, 1, 1, 6), "conv")])
def test_scale_shift_stays(s_shape: tuple[int, ...], producer: str) -> None:
    check("scale-shift-to-depthwise", scale_shift_text(s_shape, (1, 1, 1, 6), producer), fires=False)


# ----------------------------------------------------------------------------------------------
# expand-channels


def out_size(size: int, kernel: int, stride: int, pads: int) -> int:
    """TOSA's output size; the test's geometry must divide exactly (an ERROR_IF otherwise)."""
    span = size - 1 + pads - (kernel - 1)
    assert span % stride == 0, (size, kernel, stride, pads)
    return span // stride + 1


def conv_text(ic: int, oc: int, elem: str = "f32", izp: int = 0, wzp: int = 0, kernel: int = 3, stride: str = "1, 1",
              pad: str = "1, 1, 1, 1", hw: tuple[int, int] = (6, 6), const_w: bool = True, seed: int = 3) -> str:
    rng = np.random.default_rng(seed)
    out = "i32" if elem == "i8" else elem
    if elem == "i8":
        w, b = rng.integers(-128, 128, (oc, kernel, kernel, ic)), rng.integers(-5000, 5000, (oc,))
    else:
        w = rng.standard_normal((oc, kernel, kernel, ic)).astype(np.float32)
        b = rng.standard_normal(oc).astype(np.float32)
    h, wd = hw
    p = [int(v) for v in pad.split(",")]
    s = [int(v) for v in stride.split(",")]
    oh, ow = out_size(h, kernel, s[0], p[0] + p[1]), out_size(wd, kernel, s[1], p[2] + p[3])
    t_in, t_w, t_b = f"tensor<1x{h}x{wd}x{ic}x{elem}>", f"tensor<{oc}x{kernel}x{kernel}x{ic}x{elem}>", f"tensor<{oc}x{out}>"
    t_out = f"tensor<1x{oh}x{ow}x{oc}x{out}>"
    args = f"%x: {t_in}" + ("" if const_w else f", %w: {t_w}")
    return "\n".join([
        f"func.func @main({args}) -> {t_out} {{",
        *([const("%w", w, elem)] if const_w else []), const("%b", b, out),
        f"  %y = tosa.conv2d %x, %w, %b {conv_attrs(pad, stride, izp, wzp)} : ({t_in}, {t_w}, {t_b}) -> {t_out}",
        f"  func.return %y : {t_out}", "}"])


def depthwise_text(c: int, m: int, elem: str = "f32", izp: int = 0, wzp: int = 0, stride: str = "1, 1",
                   pad: str = "1, 1, 1, 1", hw: tuple[int, int] = (6, 6), kernel: int = 3) -> str:
    rng = np.random.default_rng(4)
    out = "i32" if elem == "i8" else elem
    if elem == "i8":
        w, b = rng.integers(-128, 128, (kernel, kernel, c, m)), rng.integers(-5000, 5000, (c * m,))
    else:
        w = rng.standard_normal((kernel, kernel, c, m)).astype(np.float32)
        b = rng.standard_normal(c * m).astype(np.float32)
    h, wd = hw
    p = [int(v) for v in pad.split(",")]
    s = [int(v) for v in stride.split(",")]
    oh, ow = out_size(h, kernel, s[0], p[0] + p[1]), out_size(wd, kernel, s[1], p[2] + p[3])
    t_in, t_w, t_b = f"tensor<1x{h}x{wd}x{c}x{elem}>", f"tensor<{kernel}x{kernel}x{c}x{m}x{elem}>", f"tensor<{c * m}x{out}>"
    t_out = f"tensor<1x{oh}x{ow}x{c * m}x{out}>"
    return "\n".join([
        f"func.func @main(%x: {t_in}) -> {t_out} {{",
        const("%w", w, elem), const("%b", b, out),
        f"  %y = tosa.depthwise_conv2d %x, %w, %b {conv_attrs(pad, stride, izp, wzp)} : ({t_in}, {t_w}, {t_b}) -> {t_out}",
        f"  func.return %y : {t_out}", "}"])


@pytest.mark.parametrize("ic,oc,elem,izp,wzp,const_w", [
    (3, 16, "f32", 0, 0, True), (16, 5, "f32", 0, 0, True), (3, 8, "f32", 0, 0, False),
    (3, 5, "i8", 7, -2, True), (20, 16, "i8", -128, 127, True), (5, 6, "i8", 3, 0, False),
])
def test_expand_conv_channels(ic: int, oc: int, elem: str, izp: int, wzp: int, const_w: bool) -> None:
    after = check("expand-channels", conv_text(ic, oc, elem, izp, wzp, const_w=const_w))
    (conv,) = [op for op in after.walk() if op.name == "tosa.conv2d"]
    _, _, _, ic2 = conv.operands[1].type.get_shape()  # type: ignore[attr-defined]
    oc2 = conv.operands[1].type.get_shape()[0]  # type: ignore[attr-defined]
    assert ic2 % 16 == 0 and oc2 % 16 == 0 and op_counts(after)["tosa.slice"] == 1
    if ic % 16:
        assert f"pad_const = {izp}" in str(after) or elem != "i8"


@pytest.mark.parametrize("c,m,elem,izp,wzp", [(3, 1, "f32", 0, 0), (6, 2, "f32", 0, 0), (5, 1, "i8", -9, 4)])
def test_expand_depthwise_channels(c: int, m: int, elem: str, izp: int, wzp: int) -> None:
    after = check("expand-channels", depthwise_text(c, m, elem, izp, wzp))
    (dw,) = [op for op in after.walk() if op.name == "tosa.depthwise_conv2d"]
    assert dw.operands[0].type.get_shape()[3] == 16  # type: ignore[attr-defined]


def test_expand_channels_option_and_aligned_noop() -> None:
    check("expand-channels", conv_text(16, 32), fires=False)
    check("expand-channels{alignment=8}", conv_text(8, 16), fires=False)
    after = check("expand-channels{alignment=4}", conv_text(3, 6))
    assert "tensor<8x3x3x4xf32>" in str(after)


# ----------------------------------------------------------------------------------------------
# split-asymmetric-strides


def strides_after(module: ModuleOp) -> list[tuple[int, ...]]:
    return [tuple(op.stride.get_values()) for op in module.walk() if hasattr(op, "stride")]  # type: ignore[attr-defined]


@pytest.mark.parametrize("text", [
    conv_text(4, 8, stride="2, 1", pad="1, 1, 1, 1", hw=(9, 6)),
    conv_text(4, 8, stride="1, 3", pad="1, 1, 1, 1", hw=(6, 7)),
    conv_text(4, 8, "i8", 5, -1, stride="2, 3", pad="0, 1, 1, 1", hw=(8, 10)),
    conv_text(3, 4, stride="4, 2", pad="0, 0, 0, 0", hw=(11, 9)),
    depthwise_text(6, 2, stride="1, 2", hw=(6, 7)),
    depthwise_text(5, 1, "i8", 3, 2, stride="3, 1", hw=(7, 5)),
    pool_text("max_pool2d", "f32", "2, 2", "2, 1", "0, 0, 0, 1", shape=(2, 8, 7, 3)),
    pool_text("max_pool2d", "i8", "3, 3", "1, 2", "1, 1, 1, 1", shape=(1, 5, 9, 4)),
    pool_text("avg_pool2d", "f32", "3, 3", "2, 1", "1, 1, 1, 1", shape=(1, 9, 6, 3), zps=AVG_ZP),
    pool_text("avg_pool2d", "i8", "3, 2", "1, 2", "1, 1, 0, 0", shape=(1, 6, 8, 3), zps=", input_zp = 4 : i64, output_zp = -3 : i64"),
])
def test_split_asymmetric_strides(text: str) -> None:
    before = strides_after(parse_module(text))
    assert all(sy != sx for sy, sx in before)
    after = check("split-asymmetric-strides", text)
    assert all(sy == sx for sy, sx in strides_after(after)), strides_after(after)
    assert op_counts(after)["tosa.slice"] >= 1


@pytest.mark.parametrize("text", [
    conv_text(3, 8, stride="1, 4", pad="0, 0, 4, 5", hw=(1, 64), kernel=1),  # a Conv1d as the importer gives it
    pool_text("max_pool2d", "f32", "1, 16", "1, 16", "0, 0, 0, 0", shape=(2, 1, 16, 16)),
    pool_text("avg_pool2d", "i8", "4, 2", "3, 2", "0, 0, 0, 0", shape=(1, 4, 6, 3), zps=AVG_ZP),  # OH = 1
])
def test_one_output_axis_takes_the_other_stride(text: str) -> None:
    after = check("split-asymmetric-strides", text)
    assert all(sy == sx for sy, sx in strides_after(after)) and "tosa.slice" not in op_counts(after)


def test_symmetric_strides_stay() -> None:
    check("split-asymmetric-strides", conv_text(4, 8, stride="2, 2", pad="1, 1, 1, 1", hw=(9, 9)), fires=False)


# ----------------------------------------------------------------------------------------------
# convert-precision-to-fp16


def small_cnn_text(c: int = 8, hw: int = 8, seed: int = 5) -> str:
    """conv 3x3 → relu (clamp) → conv 1x1 → add (residual with the first conv) → max_pool → depthwise →
    avg_pool → reduce_sum: NCE chains with and without a float32 op between them."""
    rng = np.random.default_rng(seed)
    t = f"tensor<1x{hw}x{hw}x{c}xf32>"
    h2 = hw // 2
    t2, t3 = f"tensor<1x{h2}x{h2}x{c}xf32>", "tensor<1x1x1x" + f"{c}xf32>"
    w = {k: (rng.standard_normal(s) * 0.3).astype(np.float32) for k, s in
         {"w1": (c, 3, 3, c), "w2": (c, 1, 1, c), "wd": (3, 3, c, 1), "b": (c,)}.items()}
    return "\n".join([
        f"func.func @main(%x: {t}) -> ({t3}, {t}) {{",
        *(const(f"%{k}", v, "f32") for k, v in w.items()),
        f"  %c1 = tosa.conv2d %x, %w1, %b {conv_attrs('1, 1, 1, 1')} : ({t}, tensor<{c}x3x3x{c}xf32>, tensor<{c}xf32>) -> {t}",
        f"  %r = tosa.clamp %c1 {{min_val = 0.0 : f32, max_val = 6.0 : f32}} : ({t}) -> {t}",
        f"  %c2 = tosa.conv2d %r, %w2, %b {conv_attrs()} : ({t}, tensor<{c}x1x1x{c}xf32>, tensor<{c}xf32>) -> {t}",
        f"  %a = tosa.add %c2, %c1 : ({t}, {t}) -> {t}",
        f"  %p = tosa.max_pool2d %a {{kernel = array<i64: 2, 2>, stride = array<i64: 2, 2>, pad = array<i64: 0, 0, 0, 0>}} : ({t}) -> {t2}",
        f"  %d = tosa.depthwise_conv2d %p, %wd, %b {conv_attrs('1, 1, 1, 1')} : ({t2}, tensor<3x3x{c}x1xf32>, tensor<{c}xf32>) -> {t2}",
        f"  %m = tosa.mul %d, %d {{shift = 0 : i64}} : ({t2}, {t2}) -> {t2}",
        f"  %g = tosa.avg_pool2d %m {{kernel = array<i64: {h2}, {h2}>, stride = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, "
        f"input_zp = 0 : i64, output_zp = 0 : i64}} : ({t2}) -> {t3}",
        f"  func.return %g, %a : {t3}, {t}", "}"])


def element(v: SSAValue) -> str:
    return str(v.type.element_type)  # type: ignore[attr-defined]


def function_type(module: ModuleOp) -> str:
    (func,) = [op for op in module.walk() if isinstance(op, FuncOp)]
    return str(func.function_type)


def test_convert_precision_to_fp16() -> None:
    text = small_cnn_text()
    after = check("convert-precision-to-fp16", text, rtol=None, l2=1e-2)
    assert function_type(after) == function_type(parse_module(text))  # graph inputs and outputs keep f32
    ops = list(after.walk())
    for op in ops:
        if op.name in ("tosa.conv2d", "tosa.depthwise_conv2d"):  # fp16 with fp32 accumulate
            assert [element(v) for v in (*op.operands, op.results[0])] == ["f16", "f16", "f32", "f32"], str(op)
        elif op.name in ("tosa.max_pool2d", "tosa.avg_pool2d", "tosa.add", "tosa.mul"):
            assert {element(v) for v in (*op.operands, op.results[0])} == {"f16"}, str(op)
        elif op.name == "tosa.clamp":
            assert element(op.results[0]) == "f32"  # not an NCE op: stays float32
    casts = [op for op in ops if op.name == "tosa.custom"]
    # no f16 -> f32 -> f16 round trip: no conversion reads a conversion
    assert all(getattr(c.operands[0].owner, "name", "") != "tosa.custom" for c in casts), str(after)
    # to f16: x, c1 (read by the add), the relu (read by c2), c2, d; to f32: a (a graph output), g
    assert len(casts) == 7, str(after)


def test_fp16_leaves_integer_and_broadcast_ops() -> None:
    check("convert-precision-to-fp16", conv_text(4, 8, "i8", 3, 1), fires=False)
    check("convert-precision-to-fp16", scale_shift_text((1, 1, 1, 6), (1, 1, 1, 6)), fires=False)


# ----------------------------------------------------------------------------------------------
# fuse-low-precision


def rescale(dst: str, src: str, t_in: str, t_out: str, izp: int, ozp: int, mult: list[int], shift: list[int],
            scale32: bool = True, double_round: bool = True) -> str:
    per_channel = "true" if len(mult) > 1 else "false"
    return (f"  {dst} = tosa.rescale {src} {{input_zp = {izp} : i64, output_zp = {ozp} : i64, "
            f"multiplier = array<i64: {', '.join(map(str, mult))}>, shift = array<i64: {', '.join(map(str, shift))}>, "
            f"scale32 = {str(scale32).lower()}, double_round = {str(double_round).lower()}, "
            f"per_channel = {per_channel}}} : ({t_in}) -> {t_out}")


def rescale_chain_text(first: tuple[str, int, int, list[int], list[int], bool], second_mult: list[int],
                       second_shift: list[int], src: str = "i8") -> str:
    mid, izp1, ozp1, m1, s1, scale32 = first
    t_x, t_mid, t_out = f"tensor<1x3x5x4x{src}>", f"tensor<1x3x5x4x{mid}>", "tensor<1x3x5x4xi8>"
    return "\n".join([
        f"func.func @main(%x: {t_x}) -> {t_out} {{",
        rescale("%w", "%x", t_x, t_mid, izp1, ozp1, m1, s1, scale32=scale32, double_round=scale32),
        rescale("%y", "%w", t_mid, t_out, 0, -3, second_mult, second_shift, double_round=True),
        f"  func.return %y : {t_out}", "}"])


@pytest.mark.parametrize("first,mult,shift", [
    (("i32", 5, 0, [1 << 30], [30], True), [1518500250], [33]),
    (("i32", -128, 0, [1 << 20], [20], True), [1073741824, 1518500250, 2000000000, 12345], [31, 33, 35, 20]),
    (("i16", 3, 0, [4], [2], False), [1518500250], [36]),  # a 16-bit scale: multiplier 4 = 1 << 2
    (("i32", 0, 0, [1 << 30] * 4, [30] * 4, True), [1518500250], [38]),  # per-channel identity
])
def test_fuse_low_precision_folds_widening(first: tuple[str, int, int, list[int], list[int], bool],
                                           mult: list[int], shift: list[int]) -> None:
    after = check("fuse-low-precision,dce", rescale_chain_text(first, mult, shift))
    assert op_counts(after)["tosa.rescale"] == 1, str(after)


@pytest.mark.parametrize("first,src", [
    (("i32", 5, 0, [3 << 29], [30], True), "i8"),  # scale 1.5: double rounding, not folded
    (("i8", 0, 0, [1 << 30], [30], True), "i16"),  # int16 -> int8 clips
])
def test_fuse_low_precision_keeps_inexact_chains(first: tuple[str, int, int, list[int], list[int], bool], src: str) -> None:
    check("fuse-low-precision", rescale_chain_text(first, [1518500250], [33], src=src), fires=False)


def test_fuse_low_precision_keeps_a_failing_require() -> None:
    """Scale 1 with shift 2: apply_scale_32 REQUIREs -1 <= value < 1, which most int8 values fail at run time."""
    text = rescale_chain_text(("i32", 0, 0, [4], [2], True), [1518500250], [33])
    assert str(apply("fuse-low-precision", parse_module(text))) == str(parse_module(text))


# ----------------------------------------------------------------------------------------------
# every pass on torch-exported ONNX models

LAYOUT = "canonicalize,fold-constants,propagate-transposes,cancel-transpose-pairs,canonicalize"
"""The tosa-level preparation the passes expect (constant weights, channels last), as in the pipelines."""


def onnx_module(name: str, prepare: bool) -> tuple[ModuleOp, dict[str, np.ndarray]]:
    from nnkiln.frontends.onnx import load_onnx

    module = load_onnx(str(DATA / f"{name}.onnx"))
    if prepare:
        module = apply(LAYOUT, module)
    (func,) = [op for op in module.body.block.ops if isinstance(op, FuncOp)]
    (input_name,) = input_names(func)
    return module, {input_name: np.load(DATA / f"{name}_x.npy")}


def compare_on(before: ModuleOp, after: ModuleOp, inputs: dict[str, np.ndarray], *, l2: float | None = None) -> None:
    want, got = run(before, inputs), run(after, inputs)
    assert want.keys() == got.keys()
    for k, w in want.items():
        g = got[k]
        assert (g.dtype, g.shape) == (w.dtype, w.shape), k
        if l2 is not None:
            err = np.linalg.norm(g.astype(np.float64) - w) / np.linalg.norm(w.astype(np.float64))
            assert err < l2, f"{k}: relative L2 error {err}"
        else:
            np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5 * float(np.abs(w).max()), err_msg=k)


@pytest.mark.parametrize("spec,model,prepare,rewritten", [
    ("fc-to-conv", "effnetish", False, "tosa.fully_connected"),
    ("fc-to-conv", "vitish", True, "tosa.fully_connected"),
    ("fc-to-conv", "llamaish", True, "tosa.matmul"),
    ("avgpool-to-depthwise", "misc", True, "tosa.avg_pool2d"),
    ("scale-shift-to-depthwise", "effnetish", False, "tosa.mul"),
    ("expand-channels", "effnetish", True, "tosa.conv2d"),
    ("expand-channels", "unetish", True, "tosa.conv2d"),
    ("split-asymmetric-strides", "audioish", True, "tosa.conv2d"),
    ("convert-precision-to-fp16", "effnetish", True, "tosa.conv2d"),
    ("convert-precision-to-fp16", "unetish", True, "tosa.conv2d"),
    ("fuse-low-precision", "effnetish", True, ""),
])
def test_pass_on_onnx_model(spec: str, model: str, prepare: bool, rewritten: str) -> None:
    before, inputs = onnx_module(model, prepare)
    after = apply(spec, before)
    assert (str(after) != str(before)) == bool(rewritten), spec  # a float model has no RESCALE chain: fuse-low-precision is a no-op
    if spec == "convert-precision-to-fp16":
        assert any("xf16>" in str(op.operands[0].type) for op in after.walk() if op.name == rewritten)
        compare_on(before, after, inputs, l2=1e-2)
    elif spec == "split-asymmetric-strides":
        assert all(len(set(s)) == 1 for s in strides_after(after))
        compare_on(before, after, inputs)
    else:
        compare_on(before, after, inputs)


def test_npu_adaptation_sequence_on_onnx_models() -> None:
    """All the passes in the order an NPU pipeline would run them, on three models."""
    spec = ("fc-to-conv,avgpool-to-depthwise,fold-bias-add,scale-shift-to-depthwise,split-asymmetric-strides,"
            "expand-channels,fuse-low-precision,convert-precision-to-fp16,dce")
    for model in ("effnetish", "audioish", "misc"):
        before, inputs = onnx_module(model, True)
        after = apply(spec, before)
        ops = op_counts(after)
        assert "tosa.fully_connected" not in ops and "tosa.avg_pool2d" not in ops, (model, ops)
        compare_on(before, after, inputs, l2=1e-2)


def test_fuse_low_precision_on_a_quantized_onnx_model(tmp_path: Path) -> None:
    """onnxruntime's QOperator uint8 quantization of conv → relu → max pool → gemm: its uint8 tensors are
    shifted to int8 by widening RESCALEs that fold (10 RESCALEs → 6), bit-exactly."""
    onnx = pytest.importorskip("onnx")
    quantization = pytest.importorskip("onnxruntime.quantization")
    from onnx import TensorProto, helper, numpy_helper

    from nnkiln.onnx_backend import import_model_proto

    rng = np.random.default_rng(0)
    inits = [numpy_helper.from_array((rng.standard_normal(s) * 0.3).astype(np.float32), n)
             for n, s in (("w", (8, 3, 3, 3)), ("b", (8,)), ("fw", (10, 128)), ("fb", (10,)))]
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c"], ["r"]),
             helper.make_node("MaxPool", ["r"], ["p"], kernel_shape=[2, 2], strides=[2, 2]),
             helper.make_node("Flatten", ["p"], ["f"]),
             helper.make_node("Gemm", ["f", "fw", "fb"], ["y"], transB=1)]
    graph = helper.make_graph(nodes, "m", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 10])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 10
    onnx.save(model, tmp_path / "f.onnx")

    class Reader(quantization.CalibrationDataReader):
        def __init__(self) -> None:
            self.data = iter([{"x": rng.standard_normal((1, 3, 8, 8)).astype(np.float32)} for _ in range(4)])

        def get_next(self) -> dict[str, np.ndarray] | None:
            return next(self.data, None)

    quantization.quantize_static(str(tmp_path / "f.onnx"), str(tmp_path / "q.onnx"), Reader(),
                                 quant_format=quantization.QuantFormat.QOperator,
                                 activation_type=quantization.QuantType.QUInt8,
                                 weight_type=quantization.QuantType.QInt8)
    x = rng.standard_normal((1, 3, 8, 8)).astype(np.float32)
    before = import_model_proto(onnx.load(str(tmp_path / "q.onnx")), [x])
    after = apply("fuse-low-precision,dce", before)
    assert (op_counts(before)["tosa.rescale"], op_counts(after)["tosa.rescale"]) == (10, 6), str(after)
    for seed in range(3):
        inputs = {"x": np.random.default_rng(seed).standard_normal((1, 3, 8, 8)).astype(np.float32)}
        want, got = run(before, inputs), run(after, inputs)
        for k in want:
            assert got[k].dtype == want[k].dtype
            np.testing.assert_array_equal(got[k], want[k])
