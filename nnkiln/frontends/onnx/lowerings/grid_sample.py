"""GridSample (opsets 16, 20): sampling at run-time coordinates, composed from elementwise TOSA and GATHER.

TOSA 0.30 has no sampling op, but every step of ONNX's definition (the reference implementation
``onnx.reference.ops.op_grid_sample``, which follows PyTorch's ``grid_sampler``) is expressible:

1. Per spatial dimension ``d`` of size ``L``, the normalized coordinate ``n`` (the grid's last axis lists
   them in reverse order: x = width first) is denormalized: ``(n + 1) / 2 · (L - 1)`` with
   ``align_corners``, else ``((n + 1) · L - 1) / 2`` (``/ 2`` is an exact multiplication by 0.5).
2. ``nearest``: the coordinate is rounded half to even (CAST to int32 and back; values of magnitude
   >= 2^23 are already integers and pass unchanged).
3. A coordinate outside ``[lo, hi]`` (``[0, L - 1]`` with align_corners, else ``[-0.5, L - 0.5]``) is
   clamped to ``[0, L - 1]`` (``border``) or reflected into ``[lo, hi]`` (``reflection``: the reflection
   count is ``floor(dx · 1/range)``; reflection is continuous, so a count one off at an exact multiple
   of the range gives the same point).
4. Taps: nearest 1, linear 2, cubic 4 per dimension (Keys' cubic, a = -0.75), at ``floor(x) + k`` with
   weights from ``x - floor(x)``; a tap's index is checked per dimension: ``zeros`` gives the tap the
   value 0 outside ``[0, L)``, ``border`` clamps it, ``reflection`` reflects it (then truncates).
5. Each tap is one GATHER of the channels-last data ``[N, prod(spatial), C]`` at the linear index, times
   its weight; the taps are summed. Float32 only; the linear index must stay below 2^24 (exact in f32).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from xdsl.ir import SSAValue

from nnkiln.dialects.tosa.base import Kind, element_type
from nnkiln.frontends.common.arith import shape_of, trunc_toward_zero
from nnkiln.frontends.common.broadcast import reshape
from nnkiln.frontends.common.layout import transpose
from nnkiln.frontends.onnx.importer import NodeContext
from nnkiln.frontends.onnx.lowerings import lowering

F32 = element_type(Kind.F32)
BOOL = element_type(Kind.BOOL)
CUBIC_A = -0.75


class _Coords:
    """Float32 arithmetic on ``[N, P, 1]`` coordinate tensors (P = output positions)."""

    def __init__(self, ctx: NodeContext, shape: tuple[int, ...]):
        self.ctx = ctx
        self.g = ctx.g
        self.shape = shape

    def c(self, value: float) -> SSAValue:
        return self.g.const(np.full((1,) * len(self.shape), value, np.float32))

    def _v(self, v: SSAValue | float) -> SSAValue:
        return v if isinstance(v, SSAValue) else self.c(v)

    def op(self, cls: type, *args: SSAValue | float, result=F32, **attrs: object) -> SSAValue:  # noqa: ANN001
        return self.g.value(cls, [self._v(a) for a in args], result, **attrs)

    def add(self, a: SSAValue | float, b: SSAValue | float) -> SSAValue:
        from nnkiln.dialects.tosa.ops_elementwise_binary import AddOp

        return self.op(AddOp, a, b)

    def sub(self, a: SSAValue | float, b: SSAValue | float) -> SSAValue:
        from nnkiln.dialects.tosa.ops_elementwise_binary import SubOp

        return self.op(SubOp, a, b)

    def mul(self, a: SSAValue | float, b: SSAValue | float) -> SSAValue:
        from nnkiln.dialects.tosa.ops_elementwise_binary import MulOp

        return self.op(MulOp, a, b, shift=0)

    def floor(self, a: SSAValue) -> SSAValue:
        from nnkiln.dialects.tosa.ops_elementwise_unary import FloorOp

        return self.op(FloorOp, a)

    def less(self, a: SSAValue | float, b: SSAValue | float) -> SSAValue:
        from nnkiln.dialects.tosa.ops_comparison import GreaterOp

        return self.op(GreaterOp, b, a, result=BOOL)

    def select(self, cond: SSAValue, a: SSAValue | float, b: SSAValue | float) -> SSAValue:
        from nnkiln.dialects.tosa.ops_elementwise_ternary import SelectOp

        return self.op(SelectOp, cond, a, b)

    def clamp(self, a: SSAValue, lo: float, hi: float) -> SSAValue:
        from nnkiln.dialects.tosa.ops_activation import ClampOp

        return self.op(ClampOp, a, min_val=float(lo), max_val=float(hi))

    def rint(self, a: SSAValue) -> SSAValue:
        """Round half to even: CAST to int32 rounds to nearest even; |a| >= 2^23 is integral already."""
        from nnkiln.dialects.tosa.ops_elementwise_unary import AbsOp
        from nnkiln.dialects.tosa.ops_type_conversion import CastOp

        big = float(1 << 23)
        r = self.op(CastOp, self.op(CastOp, self.clamp(a, -big, big), result=element_type(Kind.I32)))
        return self.select(self.less(self.op(AbsOp, a), big), r, a)

    def reflect(self, x: SSAValue, lo: float, hi: float) -> SSAValue:
        span = hi - lo
        if span <= 0:  # a size-1 dimension with align_corners: every point reflects onto it
            return self.clamp(x, lo, hi)
        below, above = self.less(x, lo), self.less(hi, x)
        out = []
        for dx, near, far in ((self.sub(lo, x), lo, hi), (self.sub(x, hi), hi, lo)):
            n = self.floor(self.mul(dx, np.float32(1 / span)))
            r = self.sub(dx, self.mul(n, span))
            odd = self.less(0.25, self.sub(n, self.mul(self.floor(self.mul(n, 0.5)), 2.0)))
            toward = self.add(near, r) if near == lo else self.sub(near, r)
            back = self.sub(far, r) if far == hi else self.add(far, r)
            out.append(self.select(odd, back, toward))
        return self.select(below, out[0], self.select(above, out[1], x))


def _cubic_weights(f: _Coords, t: SSAValue) -> list[SSAValue]:
    """Keys' cubic convolution weights for taps at offsets -1, 0, 1, 2 from ``t = x - floor(x)``."""
    a = CUBIC_A

    def far(s: SSAValue) -> SSAValue:  # |s| in [1, 2): ((a·s - 5a)·s + 8a)·s - 4a
        return f.sub(f.mul(f.add(f.mul(f.sub(f.mul(s, a), 5 * a), s), 8 * a), s), 4 * a)

    def near(s: SSAValue) -> SSAValue:  # |s| in [0, 1): ((a + 2)·s - (a + 3))·s·s + 1
        return f.add(f.mul(f.mul(f.sub(f.mul(s, a + 2), a + 3), s), s), 1.0)

    one_minus = f.sub(1.0, t)
    return [far(f.add(t, 1.0)), near(t), near(one_minus), far(f.sub(2.0, t))]


def _tap_index(f: _Coords, i: SSAValue, size: int, lo: float, hi: float, padding: str) -> tuple[SSAValue, SSAValue | None]:
    """(index clamped into [0, size), validity mask or None) of an integral tap coordinate ``i``."""
    if padding == "zeros":
        valid = f.op(_logical_and(), f.less(-0.5, i), f.less(i, size - 0.5), result=BOOL)
        return f.clamp(i, 0, size - 1), valid
    if padding == "reflection":
        i = trunc_toward_zero(f.g, f.reflect(i, lo, hi))
    return f.clamp(i, 0, size - 1), None


def _not_less(f: _Coords, a: SSAValue | float, b: SSAValue | float) -> SSAValue:
    """``a >= b`` (false for NaN, like the reference's comparisons)."""
    from nnkiln.dialects.tosa.ops_comparison import GreaterEqualOp

    return f.op(GreaterEqualOp, a, b, result=BOOL)


def _logical_and() -> type:
    from nnkiln.dialects.tosa.ops_elementwise_binary import LogicalAndOp

    return LogicalAndOp


@lowering("GridSample")
def GridSample(ctx: NodeContext) -> list[SSAValue]:
    """GridSample (opsets 16, 20); see the module docstring."""
    from nnkiln.dialects.tosa.ops_data_layout import SliceOp
    from nnkiln.dialects.tosa.ops_scatter_gather import GatherOp
    from nnkiln.dialects.tosa.ops_type_conversion import CastOp

    x, grid = ctx.tensor(0), ctx.tensor(1)
    xs, gs = shape_of(x), shape_of(grid)
    if x.type.element_type != F32 or grid.type.element_type != F32:  # type: ignore[attr-defined]
        raise ctx.error("only float32 X and grid are supported")
    spatial = xs[2:]
    if len(xs) < 3 or len(gs) != len(xs) or gs[0] != xs[0] or gs[-1] != len(spatial):
        raise ctx.error(f"X {list(xs)} and grid {list(gs)} do not match: grid must be [N, *out, {len(xs) - 2}]")
    mode = str(ctx.attr("mode", "linear" if ctx.opset >= 20 else "bilinear"))
    mode = {"bilinear": "linear", "bicubic": "cubic"}.get(mode, mode)
    padding = str(ctx.attr("padding_mode", "zeros"))
    align = bool(ctx.attr("align_corners", 0))
    if mode not in ("nearest", "linear", "cubic") or padding not in ("zeros", "border", "reflection"):
        raise ctx.error(f"mode '{mode}' / padding_mode '{padding}' is not a GridSample mode")
    n, c, out = xs[0], xs[1], gs[1:-1]
    p, k = math.prod(out), math.prod(spatial)
    if k >= 1 << 24:
        raise ctx.error(f"an input of {k} spatial positions is not supported (indices computed in float32 must stay "
                        "below 2^24)")
    f = _Coords(ctx, (n, p, 1))
    g2 = reshape(ctx.g, grid, [n, p, len(spatial)])
    data = reshape(ctx.g, transpose(ctx.g, x, [0, *range(2, len(xs)), 1]), [n, k, c])

    taps_per_dim: list[list[tuple[SSAValue, SSAValue | None, SSAValue | None]]] = []  # (index, weight, valid)
    for d, size in enumerate(spatial):
        coord = ctx.g.value(SliceOp, [g2], F32, start=[0, 0, len(spatial) - 1 - d], size=[n, p, 1])
        u = f.add(coord, 1.0)
        v = f.mul(f.mul(u, 0.5), float(size - 1)) if align else f.mul(f.sub(f.mul(u, float(size)), 1.0), 0.5)
        lo, hi = (0.0, float(size - 1)) if align else (-0.5, size - 0.5)
        if mode == "nearest":
            v = f.rint(v)
        if padding == "border":  # only coordinates outside [lo, hi] are clamped (it matters for cubic taps)
            inside = f.op(_logical_and(), _not_less(f, v, lo), _not_less(f, hi, v), result=BOOL)
            v = f.select(inside, v, f.clamp(v, 0, size - 1))
        elif padding == "reflection":
            v = f.reflect(v, lo, hi)
        taps: list[tuple[SSAValue, SSAValue | None, SSAValue | None]] = []
        if mode == "nearest":
            idx, valid = _tap_index(f, trunc_toward_zero(ctx.g, v), size, lo, hi, padding)
            taps.append((idx, None, valid))
        else:
            base = f.floor(v)
            t = f.sub(v, base)
            weights = [f.sub(1.0, t), t] if mode == "linear" else _cubic_weights(f, t)
            offsets = [0, 1] if mode == "linear" else [-1, 0, 1, 2]
            for off, w in zip(offsets, weights):
                idx, valid = _tap_index(f, f.add(base, float(off)) if off else base, size, lo, hi, padding)
                taps.append((idx, w, valid))
        taps_per_dim.append(taps)

    strides = [math.prod(spatial[d + 1:]) for d in range(len(spatial))]
    total: SSAValue | None = None
    for combo in _product(taps_per_dim):
        lin: SSAValue | None = None
        weight: SSAValue | None = None
        valid: SSAValue | None = None
        for (idx, w, ok), stride in zip(combo, strides):
            term = f.mul(idx, float(stride)) if stride != 1 else idx
            lin = term if lin is None else f.add(lin, term)
            if w is not None:
                weight = w if weight is None else f.mul(weight, w)
            if ok is not None:
                valid = ok if valid is None else f.op(_logical_and(), valid, ok, result=BOOL)
        if valid is not None:
            weight = f.select(valid, weight if weight is not None else 1.0, 0.0)
        assert lin is not None
        indices = reshape(ctx.g, ctx.g.value(CastOp, [lin], element_type(Kind.I32)), [n, p])
        picked = ctx.g.value(GatherOp, [data, indices], F32)
        term = f.mul(picked, weight) if weight is not None else picked
        total = term if total is None else f.add(total, term)
    assert total is not None
    y = reshape(ctx.g, total, [n, *out, c])
    return [transpose(ctx.g, y, [0, len(out) + 1, *range(1, len(out) + 1)])]


def _product(lists: Sequence[list]) -> list[tuple]:
    combos: list[tuple] = [()]
    for options in lists:
        combos = [c + (o,) for c in combos for o in options]
    return combos
