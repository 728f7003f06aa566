"""propagate-transposes and fold-bias-add: reference results before and after on random NCHW-wrapped graphs.

Expected values come from the reference interpreter on the UNTRANSFORMED graph (the spec semantics);
the transformed graph must reproduce them: bit-exact for int32 graphs and for float graphs without
reductions (moving transposes only moves elements), 1e-5 relative for float reductions (the summation
order may follow the new layout) and for fold-bias-add (documented rounding change).
"""

from __future__ import annotations

import random

import numpy as np
import pytest
from xdsl.context import Context

from nnkiln.ir.text import parse_module
from nnkiln.reference.interpreter import run as ref_run
from nnkiln.transforms.tosa.cancel_transpose_pairs import CancelTransposePairs
from nnkiln.transforms.tosa.fold_bias_add import FoldBiasAdd
from nnkiln.transforms.tosa.propagate_transposes import PropagateTransposes, _reshape_plan

TO_NCHW, TO_NHWC = (0, 3, 1, 2), (0, 2, 3, 1)


def _t(shape: tuple[int, ...], et: str) -> str:
    return "tensor<" + "x".join(str(d) for d in shape) + f"x{et}>"


class _Graph:
    """A random chain in NCHW between an NHWC input transposed in and NHWC outputs transposed out."""

    def __init__(self, rng: random.Random, et: str, reductions: bool):
        self.rng, self.et, self.n = rng, et, 0
        self.lines: list[str] = []
        self.reductions = reductions

    def v(self) -> str:
        self.n += 1
        return f"%v{self.n}"

    def emit(self, text: str) -> str:
        r = self.v()
        self.lines.append(f"{r} = {text}")
        return r

    def const(self, shape: tuple[int, ...]) -> str:
        vals = np.array([self.rng.randint(-3, 3) for _ in range(int(np.prod(shape)))]).reshape(shape)
        body = np.array2string(vals if self.et == "i32" else vals.astype(float) / 2, separator=", ",
                               threshold=10**6).replace("\n", "")
        return self.emit(f"tosa.const {{values = dense<{body}> : {_t(shape, self.et)}}} : {_t(shape, self.et)}")

    def transpose(self, x: str, shape: tuple[int, ...], perm: tuple[int, ...]) -> tuple[str, tuple[int, ...]]:
        out = tuple(shape[p] for p in perm)
        r = self.emit(f"tosa.transpose {x} {{perms = array<i64: {', '.join(map(str, perm))}>}} : "
                      f"({_t(shape, self.et)}) -> {_t(out, self.et)}")
        return r, out

    def step(self, x: str, s: tuple[int, ...], other: str) -> tuple[str, tuple[int, ...]]:
        """One random layout-agnostic op on the NCHW value ``x``; ``other`` is another NCHW value of shape s."""
        t, et = _t(s, self.et), self.et
        kinds = ["add_const", "mul_other", "slice", "pad", "concat", "sub_const"] + (["clamp"] if et == "f32" else [])
        if self.reductions:
            kinds.append("reduce")
        kind = self.rng.choice(kinds)
        if kind == "add_const":
            c = self.const((1, s[1], 1, 1))
            return self.emit(f"tosa.add {x}, {c} : ({t}, {_t((1, s[1], 1, 1), et)}) -> {t}"), s
        if kind == "sub_const":
            c = self.const((1, 1, 1, s[3]))
            return self.emit(f"tosa.sub {c}, {x} : ({_t((1, 1, 1, s[3]), et)}, {t}) -> {t}"), s
        if kind == "mul_other":
            return self.emit(f"tosa.mul {x}, {other} {{shift = 0 : i64}} : ({t}, {t}) -> {t}"), s
        if kind == "clamp":
            return self.emit(f"tosa.clamp {x} {{min_val = -2.0 : f32, max_val = 3.0 : f32}} : ({t}) -> {t}"), s
        if kind == "reduce":
            axis = self.rng.randrange(4)
            out = tuple(1 if i == axis else d for i, d in enumerate(s))
            r = self.emit(f"tosa.reduce_sum {x} {{axis = {axis} : i64}} : ({t}) -> {_t(out, et)}")
            return self.emit(f"tosa.add {x}, {r} : ({t}, {_t(out, et)}) -> {t}"), s  # back to shape s
        if kind == "slice":
            start = [0, self.rng.randrange(2), self.rng.randrange(2), 0]
            out = (s[0], s[1] - start[1], s[2] - start[2], s[3])
            return self.emit(f"tosa.slice {x} {{start = array<i64: {', '.join(map(str, start))}>, size = array<i64: "
                             f"{', '.join(map(str, out))}>}} : ({t}) -> {_t(out, et)}"), out
        if kind == "pad":
            pad = [0, 0] + [self.rng.randrange(2) for _ in range(6)]
            out = tuple(d + pad[2 * i] + pad[2 * i + 1] for i, d in enumerate(s))
            pc = "0 : i32" if et == "i32" else "0.0 : f32"
            return self.emit(f"tosa.pad {x} {{padding = array<i64: {', '.join(map(str, pad))}>, pad_const = {pc}}} : "
                             f"({t}) -> {_t(out, et)}"), out
        axis = self.rng.choice([1, 2, 3])
        out = tuple(2 * d if i == axis else d for i, d in enumerate(s))
        return self.emit(f"tosa.concat {x}, {x} {{axis = {axis} : i64}} : ({t}, {t}) -> {_t(out, et)}"), out

    def build(self) -> tuple[str, tuple[int, ...]]:
        shape = (1, self.rng.randint(2, 4), self.rng.randint(2, 4), self.rng.randint(2, 5))
        x, s = self.transpose("%x", shape, TO_NCHW)
        y, _ = self.transpose("%y", shape, TO_NCHW)
        for _ in range(self.rng.randint(2, 6)):
            x, s2 = self.step(x, s, y)
            if s2 != s:  # shapes changed: rebuild the second operand from x itself
                y, s = x, s2
        out, oshape = self.transpose(x, s, TO_NHWC)
        body = "\n    ".join(self.lines)
        text = (f"func.func @main(%x: {_t(shape, self.et)}, %y: {_t(shape, self.et)}) -> {_t(oshape, self.et)} {{\n"
                f"    {body}\n    func.return {out} : {_t(oshape, self.et)}\n}}")
        return text, shape


def _inputs(shape: tuple[int, ...], et: str, seed: int) -> dict[str, np.ndarray]:
    r = np.random.default_rng(seed)
    if et == "i32":
        return {"x": r.integers(-5, 5, shape).astype(np.int32), "y": r.integers(-5, 5, shape).astype(np.int32)}
    return {"x": r.standard_normal(shape).astype(np.float32), "y": r.standard_normal(shape).astype(np.float32)}


def _count(module, name: str) -> int:  # noqa: ANN001
    return sum(1 for o in module.walk() if o.name == name)


@pytest.mark.parametrize("seed", range(40))
@pytest.mark.parametrize("et", ["i32", "f32"])
def test_random_graphs_same_results(seed: int, et: str) -> None:
    rng = random.Random(seed)
    text, shape = _Graph(rng, et, reductions=(seed % 2 == 0)).build()
    before = parse_module(text)
    inputs = _inputs(shape, et, seed)
    expected = ref_run(before, inputs)
    after = parse_module(text)
    PropagateTransposes().apply(Context(), after)
    CancelTransposePairs().apply(Context(), after)
    after.verify()
    got = ref_run(after, inputs)
    for k, v in expected.items():
        if et == "i32" or seed % 2:
            np.testing.assert_array_equal(got[k], v)
        else:
            np.testing.assert_allclose(got[k], v, rtol=1e-5, atol=1e-5 * max(float(np.abs(v).max()), 1e-30))
    # every transpose in the chain was moved to the ends and cancelled: at most the input ones remain
    assert _count(after, "tosa.transpose") <= 2, text


def test_resnet_block_leaves_no_transpose_pairs() -> None:
    """conv -> NCHW -> add(residual) -> clamp -> NHWC -> conv: all inner transposes disappear."""
    text = """
func.func @main(%x: tensor<1x4x4x2xf32>) -> tensor<1x4x4x2xf32> {
  %w = tosa.const {values = dense<0.5> : tensor<2x1x1x2xf32>} : tensor<2x1x1x2xf32>
  %b = tosa.const {values = dense<0.25> : tensor<2xf32>} : tensor<2xf32>
  %c = tosa.conv2d %x, %w, %b {pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>, dilation = array<i64: 1, 1>, input_zp = 0 : i64, weight_zp = 0 : i64} : (tensor<1x4x4x2xf32>, tensor<2x1x1x2xf32>, tensor<2xf32>) -> tensor<1x4x4x2xf32>
  %t = tosa.transpose %c {perms = array<i64: 0, 3, 1, 2>} : (tensor<1x4x4x2xf32>) -> tensor<1x2x4x4xf32>
  %r = tosa.transpose %x {perms = array<i64: 0, 3, 1, 2>} : (tensor<1x4x4x2xf32>) -> tensor<1x2x4x4xf32>
  %a = tosa.add %t, %r : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %k = tosa.clamp %a {min_val = 0.0 : f32, max_val = 6.0 : f32} : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %u = tosa.transpose %k {perms = array<i64: 0, 2, 3, 1>} : (tensor<1x2x4x4xf32>) -> tensor<1x4x4x2xf32>
  %d = tosa.conv2d %u, %w, %b {pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>, dilation = array<i64: 1, 1>, input_zp = 0 : i64, weight_zp = 0 : i64} : (tensor<1x4x4x2xf32>, tensor<2x1x1x2xf32>, tensor<2xf32>) -> tensor<1x4x4x2xf32>
  func.return %d : tensor<1x4x4x2xf32>
}"""
    m = parse_module(text)
    x = {"x": np.arange(32, dtype=np.float32).reshape(1, 4, 4, 2) / 8 - 2}
    expected = next(iter(ref_run(m, x).values()))
    PropagateTransposes().apply(Context(), m)
    m.verify()
    assert _count(m, "tosa.transpose") == 0
    np.testing.assert_array_equal(next(iter(ref_run(m, x).values())), expected)


@pytest.mark.parametrize("x_shape,perm,out_shape,expected", [
    # NHWC [1,2,3,4] -> NCHW, merge H,W: reshape x to [1,6,4], transpose (0,2,1)
    ((1, 2, 3, 4), (0, 3, 1, 2), (1, 4, 6), ((1, 6, 4), (0, 2, 1))),
    # a pure split of the last axis of a 2-D transpose: [3,4] -T-> [4,3] -> [4,3,1]
    ((3, 4), (1, 0), (2, 2, 3), ((3, 2, 2), (1, 2, 0))),
])
def test_reshape_plan(x_shape, perm, out_shape, expected) -> None:  # noqa: ANN001
    assert _reshape_plan(x_shape, perm, out_shape) == expected
    x = np.arange(int(np.prod(x_shape))).reshape(x_shape)
    sx, q = expected
    np.testing.assert_array_equal(np.transpose(x.reshape(sx), q), np.transpose(x, perm).reshape(out_shape))


def test_reshape_plan_refuses_mixed_groups() -> None:
    # [2,3] -T-> [3,2] -> [2,3]: the groups are not a pure split or merge of T's dimensions
    assert _reshape_plan((2, 3), (1, 0), (2, 3)) is None


def test_fold_bias_add_matches_reference() -> None:
    text = """
func.func @main(%x: tensor<1x5x5x3xf32>) -> tensor<1x5x5x4xf32> {
  %w = tosa.const {values = dense<[[[[0.5, -1.0, 2.0]]], [[[1.5, 0.25, -0.5]]], [[[-2.0, 1.0, 0.75]]], [[[0.125, 3.0, -1.25]]]]> : tensor<4x1x1x3xf32>} : tensor<4x1x1x3xf32>
  %b = tosa.const {values = dense<[0.1, -0.2, 0.3, -0.4]> : tensor<4xf32>} : tensor<4xf32>
  %c = tosa.conv2d %x, %w, %b {pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>, dilation = array<i64: 1, 1>, input_zp = 0 : i64, weight_zp = 0 : i64} : (tensor<1x5x5x3xf32>, tensor<4x1x1x3xf32>, tensor<4xf32>) -> tensor<1x5x5x4xf32>
  %s = tosa.const {values = dense<[[[[1.5, -0.7, 2.25, 0.9]]]]> : tensor<1x1x1x4xf32>} : tensor<1x1x1x4xf32>
  %m = tosa.mul %c, %s {shift = 0 : i64} : (tensor<1x5x5x4xf32>, tensor<1x1x1x4xf32>) -> tensor<1x5x5x4xf32>
  %t = tosa.const {values = dense<[[[[0.3, 0.1, -0.6, 2.0]]]]> : tensor<1x1x1x4xf32>} : tensor<1x1x1x4xf32>
  %a = tosa.add %m, %t : (tensor<1x5x5x4xf32>, tensor<1x1x1x4xf32>) -> tensor<1x5x5x4xf32>
  func.return %a : tensor<1x5x5x4xf32>
}"""
    m = parse_module(text)
    x = {"x": np.random.default_rng(0).standard_normal((1, 5, 5, 3)).astype(np.float32)}
    expected = next(iter(ref_run(m, x).values()))
    FoldBiasAdd().apply(Context(), m)
    m.verify()
    assert _count(m, "tosa.mul") == 0 and _count(m, "tosa.add") == 0
    got = next(iter(ref_run(m, x).values()))
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5 * float(np.abs(expected).max()))
