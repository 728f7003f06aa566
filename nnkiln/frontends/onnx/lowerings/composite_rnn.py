"""RNN, GRU and LSTM (family ``composite``): the recurrence unrolled over the static sequence length.

Per direction, the input projection of every step is one MATMUL ([1, S·B, I] × Wᵀ), the recurrent
projection one MATMUL per step ([1, B, H] × Rᵀ); gates are SLICEs of the sum, activations are the
TOSA ops of the ONNX activation functions (SIGMOID, TANH, CLAMP/MAXIMUM, EXP, ...), ``clip`` is a
CLAMP of the gate pre-activations. ``reverse`` runs the steps backwards; ``bidirectional`` runs
both and CONCATenates. Outputs Y [S, D, B, H] (``layout`` 0) or [B, S, D, H] (``layout`` 1), Y_h,
and for LSTM Y_c. Weights may be constants (transposed at import) or run-time values (TRANSPOSE).

``sequence_lens`` must be constant; lengths shorter than the sequence are supported in the forward
direction (steps past a batch entry's length keep its state and emit zeros, with SELECT), not in
the reverse direction (each entry would need its own reversal).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from xdsl.ir import SSAValue

from nnkiln.dialects.tosa.base import Kind
from nnkiln.frontends.common.broadcast import reshape
from nnkiln.frontends.common.layout import transpose
from nnkiln.frontends.common.nn import slice_value
from nnkiln.frontends.onnx.importer import NodeContext
from nnkiln.frontends.onnx.lowerings import lowering
from nnkiln.frontends.onnx.lowerings._composite_common import (
    Result,
    add,
    bmm,
    concat,
    const_k,
    float_input,
    full,
    greater,
    kind_v,
    maximum,
    minimum,
    mul,
    output_used,
    reciprocal,
    select,
    shape_of,
    sub,
    unary,
    val,
)

Act = Callable[[SSAValue], SSAValue]

_DEFAULT_ALPHA = {"LeakyRelu": 0.01, "ThresholdedRelu": 1.0, "ScaledTanh": 1.0, "HardSigmoid": 0.2, "Elu": 1.0,
                  "Affine": 1.0}
_DEFAULT_BETA = {"ScaledTanh": 1.0, "HardSigmoid": 0.5, "Affine": 0.0}


def _activation(ctx: NodeContext, name: str, alpha: float | None, beta: float | None) -> Act:
    """The ONNX recurrent activation ``name`` as a composition of TOSA ops."""
    from nnkiln.dialects.tosa.ops_activation import SigmoidOp, TanhOp
    from nnkiln.dialects.tosa.ops_elementwise_unary import AbsOp, ExpOp, LogOp

    g = ctx.g
    a = _DEFAULT_ALPHA.get(name, 0.0) if alpha is None else alpha
    b = _DEFAULT_BETA.get(name, 0.0) if beta is None else beta

    def c(x: SSAValue, v: float) -> SSAValue:
        return full(g, v, kind_v(x), len(shape_of(x)))

    table: dict[str, Act] = {
        "Sigmoid": lambda x: unary(g, SigmoidOp, x),
        "Tanh": lambda x: unary(g, TanhOp, x),
        "Relu": lambda x: maximum(g, x, c(x, 0.0)),
        "Affine": lambda x: add(g, mul(g, x, c(x, a)), c(x, b)),
        "LeakyRelu": lambda x: select(g, greater(g, c(x, 0.0), x), mul(g, x, c(x, a)), x),
        "ThresholdedRelu": lambda x: select(g, greater(g, x, c(x, a)), x, c(x, 0.0)),
        "ScaledTanh": lambda x: mul(g, unary(g, TanhOp, mul(g, x, c(x, b))), c(x, a)),
        "HardSigmoid": lambda x: maximum(g, minimum(g, add(g, mul(g, x, c(x, a)), c(x, b)), c(x, 1.0)), c(x, 0.0)),
        "Elu": lambda x: select(g, greater(g, c(x, 0.0), x),
                                mul(g, sub(g, unary(g, ExpOp, x), c(x, 1.0)), c(x, a)), x),
        "Softsign": lambda x: mul(g, x, reciprocal(g, add(g, unary(g, AbsOp, x), c(x, 1.0)))),
        "Softplus": lambda x: unary(g, LogOp, add(g, unary(g, ExpOp, x), c(x, 1.0))),
    }
    for key, fn in table.items():
        if key.lower() == name.lower():
            return fn
    raise ctx.error(f"activation '{name}' is not supported")


def _activations(ctx: NodeContext, defaults: Sequence[str], dirs: int) -> list[list[Act]]:
    """Per direction, the activation functions (``activations`` lists forward then reverse)."""
    names = ctx.attr("activations")
    per = len(defaults)
    if names is None:
        names = list(defaults) * dirs
    names = [str(n) for n in names]
    if len(names) != per * dirs:
        raise ctx.error(f"activations {names} must list {per} functions per direction")
    alphas = ctx.attr("activation_alpha")
    betas = ctx.attr("activation_beta")

    def param(lst: list[float] | None, i: int) -> float | None:
        # decision: parameters are positional per activation when the list covers them all
        if lst is None or len(lst) != len(names):
            if lst:
                raise ctx.error("activation_alpha/beta must have one entry per activation")
            return None
        return float(lst[i])

    acts = [_activation(ctx, n, param(alphas, i), param(betas, i)) for i, n in enumerate(names)]
    return [acts[d * per:(d + 1) * per] for d in range(dirs)]


class _Recurrence:
    """Shared set-up of the three ops: inputs in [S, B, ·] layout, weights per direction."""

    def __init__(self, ctx: NodeContext, gates: int, acts: Sequence[str]):
        self.ctx = ctx
        g = self.g = ctx.g
        xv = float_input(ctx, 0, "X")
        self.kind = xv.kind
        self.layout = int(ctx.attr("layout", 0))
        direction = str(ctx.attr("direction", "forward"))
        if direction not in ("forward", "reverse", "bidirectional"):
            raise ctx.error(f"direction '{direction}' is not supported")
        self.directions = ["forward", "reverse"] if direction == "bidirectional" else [direction]
        wv, rv = ctx.input(1), ctx.input(2)
        self.hidden = int(ctx.attr("hidden_size", rv.shape[-1]))
        h = self.hidden
        if wv.shape[0] != len(self.directions) or wv.shape[1] != gates * h or rv.shape[1:] != (gates * h, h):
            raise ctx.error(f"W {list(wv.shape)} / R {list(rv.shape)} do not match {gates} gates of {h} "
                            f"in {len(self.directions)} direction(s)")
        x = val(ctx, xv)
        if self.layout == 1:
            x = transpose(g, x, (1, 0, 2))
        self.seq, self.batch, self.input_size = shape_of(x)
        self.x = x
        clip = ctx.attr("clip")
        self.clip = None if clip is None else float(clip)
        self.acts = _activations(ctx, acts, len(self.directions))
        self.lens: np.ndarray | None = None
        if ctx.has_input(4):
            lens = np.asarray(ctx.const(4, "sequence_lens"), dtype=np.int64).reshape(-1)
            if lens.size != self.batch or np.any(lens < 1) or np.any(lens > self.seq):
                raise ctx.error(f"sequence_lens {lens.tolist()} must be in [1, {self.seq}] for each of {self.batch} entries")
            if np.any(lens != self.seq):
                if "reverse" in self.directions:
                    raise ctx.error("sequence_lens shorter than the sequence in the reverse direction is not supported")
                self.lens = lens

    def weight_t(self, i: int, d: int) -> SSAValue:
        """Input ``i`` (W or R) of direction ``d`` transposed to [in, gates·H]."""
        v = self.ctx.input(i)
        if v.is_const:
            return const_k(self.g, np.asarray(v.const)[d].T, self.kind)
        w = slice_value(self.g, val(self.ctx, v), (d, 0, 0), (1, *v.shape[1:]))
        return transpose(self.g, reshape(self.g, w, v.shape[1:]), (1, 0))

    def bias(self, d: int, gates: int) -> tuple[SSAValue | None, SSAValue | None]:
        """(Wb, Rb) of direction ``d`` as [1, gates·H] values, or None without B."""
        if not self.ctx.has_input(3):
            return None, None
        v = self.ctx.input(3)
        n = gates * self.hidden
        if v.is_const:
            arr = np.asarray(v.const)[d]
            return const_k(self.g, arr[:n].reshape(1, n), self.kind), const_k(self.g, arr[n:].reshape(1, n), self.kind)
        b = val(self.ctx, v)
        wb = reshape(self.g, slice_value(self.g, b, (d, 0), (1, n)), (1, n))
        rb = reshape(self.g, slice_value(self.g, b, (d, n), (1, n)), (1, n))
        return wb, rb

    def initial(self, i: int, d: int) -> SSAValue:
        """initial_h / initial_c of direction ``d`` as [B, H] (zeros if absent)."""
        g, h, b = self.g, self.hidden, self.batch
        if not self.ctx.has_input(i):
            return const_k(g, np.zeros((b, h)), self.kind)
        v = val(self.ctx, self.ctx.input(i))
        if self.layout == 1:
            v = transpose(g, v, (1, 0, 2))
        return reshape(g, slice_value(g, v, (d, 0, 0), (1, b, h)), (b, h))

    def input_proj(self, d: int, wb: SSAValue | None) -> SSAValue:
        """X·Wᵀ (+ Wb) for all steps: [S, B, gates·H]."""
        g = self.g
        wt = self.weight_t(1, d)
        s, b, i = self.seq, self.batch, self.input_size
        y = bmm(g, reshape(g, self.x, (1, s * b, i)), reshape(g, wt, (1, *shape_of(wt))))
        y = reshape(g, y, (s, b, shape_of(wt)[1]))
        if wb is not None:
            y = add(g, y, wb)
        return y

    def per_direction(self, gates: int) -> tuple[list[SSAValue], list[SSAValue], list[SSAValue | None]]:
        """For each direction: the input projection with the input bias ``Wb`` folded in, ``Rᵀ``, and the
        recurrence bias ``Rb`` (kept apart: GRU's ``linear_before_reset`` applies it inside the gate)."""
        projs, rts, rbs = [], [], []
        for d in range(len(self.directions)):
            wb, rb = self.bias(d, gates)
            projs.append(self.input_proj(d, wb))
            rts.append(self.weight_t(2, d))
            rbs.append(rb)
        return projs, rts, rbs

    def step_x(self, xw: SSAValue, t: int) -> SSAValue:
        s, b, n = shape_of(xw)
        return reshape(self.g, slice_value(self.g, xw, (t, 0, 0), (1, b, n)), (b, n))

    def rec(self, hprev: SSAValue, rt: SSAValue) -> SSAValue:
        g = self.g
        b, h = shape_of(hprev)
        return reshape(g, bmm(g, reshape(g, hprev, (1, b, h)), reshape(g, rt, (1, *shape_of(rt)))), (b, shape_of(rt)[1]))

    def gate(self, v: SSAValue, k: int) -> SSAValue:
        b = shape_of(v)[0]
        return slice_value(self.g, v, (0, k * self.hidden), (b, self.hidden))

    def clipped(self, v: SSAValue) -> SSAValue:
        if self.clip is None:
            return v
        c = self.clip
        return maximum(self.g, minimum(self.g, v, full(self.g, c, self.kind, 2)), full(self.g, -c, self.kind, 2))

    def mask(self, t: int) -> SSAValue | None:
        if self.lens is None:
            return None
        return const_k(self.g, (t < self.lens).reshape(self.batch, 1), Kind.BOOL)

    def run(self, step: Callable[[int, SSAValue, list[SSAValue]], list[SSAValue]], states0: Callable[[int], list[SSAValue]]
            ) -> tuple[SSAValue, list[SSAValue]]:
        """Unroll ``step(d, x_t, states) -> new states`` (states[0] is H) over time per direction.
        Returns Y [S, D, B, H] and the final states stacked as [D, B, H] each."""
        g = self.g
        ys: list[SSAValue] = []
        finals: list[list[SSAValue]] = []
        zero = const_k(g, np.zeros((self.batch, self.hidden)), self.kind)
        for d, direction in enumerate(self.directions):
            states = states0(d)
            outs: list[SSAValue | None] = [None] * self.seq
            order = range(self.seq) if direction == "forward" else range(self.seq - 1, -1, -1)
            for t in order:
                new = step(d, t, states)
                m = self.mask(t)
                if m is not None:
                    outs[t] = select(g, m, new[0], zero)
                    new = [select(g, m, n, o) for n, o in zip(new, states)]
                else:
                    outs[t] = new[0]
                states = new
            steps = [reshape(g, o, (1, 1, self.batch, self.hidden)) for o in outs if o is not None]
            ys.append(concat(g, steps, 0))
            finals.append(states)
        y = concat(g, ys, 1)
        stacked = [concat(g, [reshape(g, f[i], (1, self.batch, self.hidden)) for f in finals], 0)
                   for i in range(len(finals[0]))]
        return y, stacked

    def outputs(self, y: SSAValue, finals: Sequence[SSAValue]) -> Result:
        g = self.g
        if self.layout == 1:
            y = transpose(g, y, (2, 0, 1, 3))
            finals = [transpose(g, f, (1, 0, 2)) for f in finals]
        outs: Result = [y if output_used(self.ctx, 0) else None]
        for i, f in enumerate(finals):
            outs.append(f if output_used(self.ctx, i + 1) else None)
        return outs


def _one_minus(g, x: SSAValue) -> SSAValue:  # noqa: ANN001
    return sub(g, full(g, 1.0, kind_v(x), len(shape_of(x))), x)


@lowering("RNN")
def RNN(ctx: NodeContext) -> Result:
    """RNN (opsets 7, 14, 22): ``H_t = f(X_t·Wᵀ + H_{t−1}·Rᵀ + Wb + Rb)`` (default f = Tanh),
    unrolled (see the module docstring)."""
    r = _Recurrence(ctx, 1, ["Tanh"])
    g = ctx.g
    projs, rts, rbs = r.per_direction(1)

    def step(d: int, t: int, states: list[SSAValue]) -> list[SSAValue]:
        pre = add(g, r.step_x(projs[d], t), r.rec(states[0], rts[d]))
        if rbs[d] is not None:
            pre = add(g, pre, rbs[d])
        return [r.acts[d][0](r.clipped(pre))]

    y, finals = r.run(step, lambda d: [r.initial(5, d)])
    return r.outputs(y, finals)


@lowering("GRU")
def GRU(ctx: NodeContext) -> Result:
    """GRU (opsets 7, 14, 22), gates z, r, h: ``z = f(x·Wzᵀ + H·Rzᵀ + Wbz + Rbz)``, r likewise,
    ``h = g(x·Whᵀ + (r ⊙ H)·Rhᵀ + Rbh + Wbh)`` or with ``linear_before_reset``
    ``h = g(x·Whᵀ + r ⊙ (H·Rhᵀ + Rbh) + Wbh)``, ``H' = (1 − z) ⊙ h + z ⊙ H``."""
    r = _Recurrence(ctx, 3, ["Sigmoid", "Tanh"])
    g = ctx.g
    lbr = bool(ctx.attr("linear_before_reset", 0))
    hsz = r.hidden
    projs, rts, rbs = r.per_direction(3)

    def step(d: int, t: int, states: list[SSAValue]) -> list[SSAValue]:
        f, gg = r.acts[d]
        hprev = states[0]
        xt = r.step_x(projs[d], t)
        rt = rts[d]
        rb = rbs[d]
        rt_zr = slice_value(g, rt, (0, 0), (shape_of(rt)[0], 2 * hsz))
        rt_h = slice_value(g, rt, (0, 2 * hsz), (shape_of(rt)[0], hsz))
        hr = r.rec(hprev, rt_zr)
        if rb is not None:
            hr = add(g, hr, slice_value(g, rb, (0, 0), (1, 2 * hsz)))
        zr = add(g, slice_value(g, xt, (0, 0), (r.batch, 2 * hsz)), hr)
        z = f(r.clipped(r.gate(zr, 0)))
        rg = f(r.clipped(r.gate(zr, 1)))
        rbh = None if rb is None else slice_value(g, rb, (0, 2 * hsz), (1, hsz))
        if lbr:
            hh = r.rec(hprev, rt_h)
            if rbh is not None:
                hh = add(g, hh, rbh)
            hh = mul(g, rg, hh)
        else:
            hh = r.rec(mul(g, rg, hprev), rt_h)
            if rbh is not None:
                hh = add(g, hh, rbh)
        cand = gg(r.clipped(add(g, r.gate(xt, 2), hh)))
        return [add(g, mul(g, _one_minus(g, z), cand), mul(g, z, hprev))]

    y, finals = r.run(step, lambda d: [r.initial(5, d)])
    return r.outputs(y, finals)


@lowering("LSTM")
def LSTM(ctx: NodeContext) -> Result:
    """LSTM (opsets 7, 14, 22), gates i, o, f, c with peepholes P = [Pi, Po, Pf]:
    ``i = f(x·Wiᵀ + H·Riᵀ + b_i + Pi ⊙ C)``, ``f`` likewise (``input_forget``: f = 1 − i),
    ``c̃ = g(...)``, ``C' = f ⊙ C + i ⊙ c̃``, ``o = f(... + Po ⊙ C')``, ``H' = o ⊙ h(C')``."""
    r = _Recurrence(ctx, 4, ["Sigmoid", "Tanh", "Tanh"])
    g = ctx.g
    input_forget = bool(ctx.attr("input_forget", 0))
    hsz = r.hidden
    projs, rts, peeps = [], [], []
    for d in range(len(r.directions)):
        wb, rb = r.bias(d, 4)
        bias = wb if rb is None else (rb if wb is None else add(g, wb, rb))
        projs.append(r.input_proj(d, None) if bias is None else add(g, r.input_proj(d, None), bias))
        rts.append(r.weight_t(2, d))
        if ctx.has_input(7):
            pv = ctx.input(7)
            if pv.is_const:
                pp = [const_k(g, np.asarray(pv.const)[d, k * hsz:(k + 1) * hsz].reshape(1, hsz), r.kind) for k in range(3)]
            else:
                p = val(ctx, pv)
                pp = [slice_value(g, p, (d, k * hsz), (1, hsz)) for k in range(3)]
            peeps.append(pp)
        else:
            peeps.append(None)

    def step(d: int, t: int, states: list[SSAValue]) -> list[SSAValue]:
        f, gg, hh = r.acts[d]
        hprev, cprev = states
        pre = add(g, r.step_x(projs[d], t), r.rec(hprev, rts[d]))
        pi, po, pf = peeps[d] if peeps[d] is not None else (None, None, None)
        ig = r.gate(pre, 0)
        if pi is not None:
            ig = add(g, ig, mul(g, pi, cprev))
        i = f(r.clipped(ig))
        if input_forget:
            fo = _one_minus(g, i)
        else:
            fg = r.gate(pre, 2)
            if pf is not None:
                fg = add(g, fg, mul(g, pf, cprev))
            fo = f(r.clipped(fg))
        c = gg(r.clipped(r.gate(pre, 3)))
        cnew = add(g, mul(g, fo, cprev), mul(g, i, c))
        og = r.gate(pre, 1)
        if po is not None:
            og = add(g, og, mul(g, po, cnew))
        o = f(r.clipped(og))
        return [mul(g, o, hh(cnew)), cnew]

    y, finals = r.run(step, lambda d: [r.initial(5, d), r.initial(6, d)])
    return r.outputs(y, finals)


__all__ = ["RNN", "GRU", "LSTM"]
