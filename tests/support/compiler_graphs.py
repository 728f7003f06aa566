"""Text-MLIR tosa graphs for the compiler tests: a conv chain, a residual (ResNet-like) net, random DAGs."""

from __future__ import annotations

import random

import numpy as np

F = "f32"


def _t(shape) -> str:
    return "tensor<" + "x".join(str(d) for d in shape) + f"x{F}>"


class G:
    def __init__(self, inputs):
        self.lines: list[str] = []
        self.n = 0
        self.args = inputs

    def v(self) -> str:
        self.n += 1
        return f"%v{self.n}"

    def const(self, shape, value=0.5) -> str:
        r = self.v()
        self.lines.append(f"{r} = tosa.const {{values = dense<{value}> : {_t(shape)}}} : {_t(shape)}")
        return r

    def conv(self, x, shape, cout, k=3) -> tuple[str, tuple]:
        cin = shape[-1]
        w = self.const((cout, k, k, cin), 0.01)
        b = self.const((cout,), 0.1)
        r = self.v()
        out = (shape[0], shape[1], shape[2], cout)
        p = k // 2
        self.lines.append(
            f"{r} = tosa.conv2d {x}, {w}, {b} {{pad = array<i64: {p}, {p}, {p}, {p}>, stride = array<i64: 1, 1>, "
            f"dilation = array<i64: 1, 1>, input_zp = 0 : i64, weight_zp = 0 : i64}} : "
            f"({_t(shape)}, {_t((cout, k, k, cin))}, {_t((cout,))}) -> {_t(out)}")
        return r, out

    def unary(self, op, x, shape) -> str:
        r = self.v()
        extra = " {min_val = 0.0 : f32, max_val = 6.0 : f32}" if op == "clamp" else ""
        self.lines.append(f"{r} = tosa.{op} {x}{extra} : ({_t(shape)}) -> {_t(shape)}")
        return r

    def binary(self, op, a, b, shape) -> str:
        r = self.v()
        extra = " {shift = 0 : i64}" if op == "mul" else ""
        self.lines.append(f"{r} = tosa.{op} {a}, {b}{extra} : ({_t(shape)}, {_t(shape)}) -> {_t(shape)}")
        return r

    def text(self, outs) -> str:
        args = ", ".join(f"%x{i}: {_t(s)}" for i, s in enumerate(self.args))
        res = ", ".join(_t(s) for _, s in outs)
        body = "\n  ".join(self.lines)
        vals = ", ".join(v for v, _ in outs)
        return f"func.func @main({args}) -> ({res}) {{\n  {body}\n  func.return {vals} : {res}\n}}\n"


def chain(layers: int = 8, hw: int = 16, c: int = 8) -> str:
    """conv → clamp repeated; channel count alternates c, 2c so buffer sizes differ."""
    shape = (1, hw, hw, c)
    g = G([shape])
    x = "%x0"
    for i in range(layers):
        x, shape = g.conv(x, shape, c if i % 2 else 2 * c)
        x = g.unary("clamp", x, shape)
    return g.text([(x, shape)])


def residual(blocks: int = 4, hw: int = 16, c: int = 8) -> str:
    """ResNet-like: y = clamp(conv(clamp(conv(x))) + x), with a stem conv."""
    shape = (1, hw, hw, c)
    g = G([shape])
    x, shape = g.conv("%x0", shape, c)
    x = g.unary("clamp", x, shape)
    for _ in range(blocks):
        h, _s = g.conv(x, shape, c)
        h = g.unary("clamp", h, shape)
        h, _s = g.conv(h, shape, c)
        s = g.binary("add", h, x, shape)
        x = g.unary("clamp", s, shape)
    return g.text([(x, shape)])


def random_dag(seed: int, n_ops: int = 12) -> str:
    """Random elementwise/conv DAG on 1x4x4xC tensors; several outputs (some inputs/views among them)."""
    rng = random.Random(seed)
    shapes = [(1, 4, 4, rng.choice([2, 3, 4])) for _ in range(rng.randint(1, 2))]
    g = G(shapes)
    values = [(f"%x{i}", s) for i, s in enumerate(shapes)]
    for _ in range(n_ops):
        kind = rng.choice(["abs", "clamp", "add", "mul", "sub", "conv", "conv", "reshape"])
        x, s = rng.choice(values)
        if kind in ("abs", "clamp"):
            values.append((g.unary(kind, x, s), s))
        elif kind in ("add", "mul", "sub"):
            same = [v for v in values if v[1] == s]
            y, _ = rng.choice(same)
            values.append((g.binary(kind, x, y, s), s))
        elif kind == "conv":
            values.append(g.conv(x, s, rng.choice([2, 3, 4]), k=rng.choice([1, 3])))
        else:  # a reshape there and back: exercises views
            r = g.v()
            flat = (s[0], s[1] * s[2], s[3])
            g.lines.append(f"{r} = tosa.reshape {x} {{new_shape = array<i64: {', '.join(map(str, flat))}>}} : "
                           f"({_t(s)}) -> {_t(flat)}")
            r2 = g.v()
            g.lines.append(f"{r2} = tosa.reshape {r} {{new_shape = array<i64: {', '.join(map(str, s))}>}} : "
                           f"({_t(flat)}) -> {_t(s)}")
            values.append((r2, s))
    outs = [values[-1]] + rng.sample(values, k=min(2, len(values)))
    return g.text(outs)


def random_inputs(text_shapes, seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    return {f"x{i}": rng.standard_normal(s).astype(np.float32) for i, s in enumerate(text_shapes)}


def resnet_like(stages: int = 3, blocks: int = 2, hw: int = 32, c: int = 8, batch: int = 1) -> str:
    """ResNet-like with downsampling: per stage, a stride-2 block with a 1x1 stride-2 projection
    shortcut, then identity blocks; channels double and spatial size halves per stage."""
    shape = (batch, hw, hw, 3)
    g = G([shape])
    x, shape = g.conv("%x0", shape, c)
    x = g.unary("clamp", x, shape)
    for s in range(stages):
        for b in range(blocks):
            if b == 0 and s > 0:
                cout = shape[-1] * 2
                h, hs = g.strided_conv(x, shape, cout, 3)
                h = g.unary("clamp", h, hs)
                h, _ = g.conv(h, hs, cout)
                sc = g.pool(x, shape, hs[:3] + (shape[-1],))
                sc, _ = g.conv(sc, hs[:3] + (shape[-1],), cout, k=1)
                shape = hs
            else:
                h, _ = g.conv(x, shape, shape[-1])
                h = g.unary("clamp", h, shape)
                h, _ = g.conv(h, shape, shape[-1])
                sc = x
            x = g.unary("clamp", g.binary("add", h, sc, shape), shape)
    return g.text([(x, shape)])


def _strided_conv(self, x, shape, cout, k):
    cin = shape[-1]
    w = self.const((cout, k, k, cin), 0.01)
    b = self.const((cout,), 0.1)
    r = self.v()
    oh = shape[1] // 2
    out = (shape[0], oh, oh, cout)
    self.lines.append(
        f"{r} = tosa.conv2d {x}, {w}, {b} {{pad = array<i64: 0, 1, 0, 1>, stride = array<i64: 2, 2>, "
        f"dilation = array<i64: 1, 1>, input_zp = 0 : i64, weight_zp = 0 : i64}} : "
        f"({_t(shape)}, {_t((cout, k, k, cin))}, {_t((cout,))}) -> {_t(out)}")
    return r, out


def _pool(self, x, shape, out):
    r = self.v()
    self.lines.append(
        f"{r} = tosa.avg_pool2d {x} {{kernel = array<i64: 2, 2>, stride = array<i64: 2, 2>, pad = array<i64: 0, 0, 0, 0>, "
        f"input_zp = 0 : i64, output_zp = 0 : i64}} : ({_t(shape)}) -> {_t(out)}")
    return r


G.strided_conv = _strided_conv  # type: ignore[attr-defined]
G.pool = _pool  # type: ignore[attr-defined]


def wide(branches: int = 24, hw: int = 8, c: int = 4) -> str:
    """``branches`` independent conv → clamp branches of one input, summed left to right: as wide as a graph gets,
    with a long chain of adds at the end."""
    shape = (1, hw, hw, c)
    g = G([shape])
    outs = []
    for _ in range(branches):
        h, _s = g.conv("%x0", shape, c)
        outs.append(g.unary("clamp", h, shape))
    acc = outs[0]
    for h in outs[1:]:
        acc = g.binary("add", acc, h, shape)
    return g.text([(acc, shape)])
