"""Quantization parameters and the scale solver of ``writer_quant`` (NNEF 1.0.3 §5.3, ``linear_quantize``).

A written int8 tensor's quantization is a ``QP``: the ``min``/``max`` of its ``linear_quantize(.., bits = 8)``
entry and the scale / zero point our reader derives from them (``common.quant.qparams_from_range``), so every
check made while writing uses the reader's own numbers. ``m_s`` is the (multiplier, shift) the reader's
``common.quant.rescale`` computes for a real scale; ``nudge`` steps a float64 scale by ulps, which is how the
writer searches, among the scales that are equal for all practical purposes, one that gives back an exact
multiplier (``NUDGES``: the steps tried, nearest first).

The integer module only fixes *ratios* of scales, so the free ones are solved once, before writing
(``solve_scales``): scales linked without a RESCALE of their own — data movement (``MOVES``, ratio 1), unit-scale
RESCALE views (ratio 1), int8→int8 RESCALEs (``1/t``, t the RESCALE's factor) and the common-scale ADD — are
propagated from the dequantized (forced) values and the fixed softmax inputs, then from the first value of each
other component (0.05), so tensors that meet again (e.g. the inputs of a CONCAT) get identical ranges; the right
operand B of a run-time product gets ``s_C·t / s_A``. An int8 AVG_POOL2D's input and output are a *soft* link
(ratio 1): its ``avg_pool`` form keeps the scale, but its conv form (``writer_quant_pool``) takes any output
scale, so the link is only followed into a component nothing has assigned yet (after all fixed scales, and after
each component's hard links) and never overrides a scale: an AVG_POOL2D output that a CONCAT joins with another
branch gets that branch's scale, and its input too when free (so the pool stays an ``avg_pool``); when both
sides are fixed otherwise (a dequantization, or a cycle through a RESCALE), the pool takes the conv form. ``out_qp`` gives a produced tensor its quantization (the
forced one or the solved target), ``solve_out`` the output quantization that reproduces a RESCALE's
(multiplier, shift) from a given input scale.
"""

from __future__ import annotations

import dataclasses
import math
from typing import TYPE_CHECKING

import numpy as np
from xdsl.ir import Operation, SSAValue

from nnkiln.dialects.tosa.base import Kind
from nnkiln.frontends.common import quant as cq
from nnkiln.frontends.nnef.writer import const_of, ints, kind, lit, unsupported
from nnkiln.frontends.nnef.writer_quant_softmax import input_scale as softmax_input_scale
from nnkiln.ir.errors import FrontendError

if TYPE_CHECKING:
    from nnkiln.frontends.nnef.writer_quant import QuantWriter

_F32 = np.float32

# int8 data movement: the output has the input's quantization (ratio 1 in the solver)
MOVES = ("tosa.transpose", "tosa.reshape", "tosa.identity", "tosa.slice", "tosa.tile", "tosa.reverse",
         "tosa.max_pool2d", "tosa.clamp", "tosa.concat")


@dataclasses.dataclass
class QP:
    """One int8 tensor's quantization as the reader sees it: ``scale`` is derived from ``lo``/``hi``."""

    lo: float
    hi: float
    scale: float
    zp: int

    def entry(self) -> str:
        return f"linear_quantize(min = {lit(self.lo)}, max = {lit(self.hi)}, bits = 8)"


def make_qp(s: float, zp: int) -> QP:
    """The ``QP`` of the range ``[(−128 − zp)·s, (127 − zp)·s]`` (its scale as the reader derives it)."""
    lo, hi = (-128 - zp) * s, (127 - zp) * s
    p = cq.qparams_from_range(np.array([lo]), np.array([hi]), 8)
    if p is None or int(p[1][0]) != zp:
        raise FrontendError(f"internal: scale {s} with zero point {zp} does not survive linear_quantize's range")
    return QP(lo, hi, float(p[0][0]), zp)


def m_s(scale: float) -> tuple[int, int]:
    """(multiplier, shift) exactly as the reader's ``common.quant.rescale`` computes them."""
    return (1 << 30, 30) if scale == 1.0 else cq.compute_scale_32(scale)


def nudge(s: float, k: int) -> float:
    """``s`` moved by ``k`` ulps (up when ``k > 0``)."""
    for _ in range(abs(k)):
        s = math.nextafter(s, math.inf if k > 0 else -math.inf)
    return s


NUDGES = (0, 1, -1, 2, -2, 3, -3, 5, -5, 8, -8, 16, -16, 64, -64, 256, -256)


def solve_scales(qw: QuantWriter) -> None:
    """Scales of the int8 values: RESCALE-free links (data movement: ratio 1; int8→int8 RESCALE: 1/t;
    common-scale ADD: t_b/t_a between the operands and ``2·max(s_a, s_b)/2^20/t`` to the output) are
    propagated from the dequantized (forced) values, then from the first value of each other component, into
    ``qw.target``; AVG_POOL2D input ↔ output (ratio 1) only bridges into unassigned components (module
    docstring)."""
    edges: dict[SSAValue, list[tuple[SSAValue, float]]] = {}

    def link(a: SSAValue, b: SSAValue, r: float) -> None:  # s_b = s_a · r
        edges.setdefault(a, []).append((b, r))
        edges.setdefault(b, []).append((a, 1.0 / r))

    def tval(o: Operation) -> float:
        p = dict(o.properties.items())
        return ints(p["multiplier"])[0] * 2.0 ** -ints(p["shift"])[0]

    block = qw.func.body.blocks[0]
    pools: list[tuple[SSAValue, SSAValue]] = []  # (input, output) of the int8 AVG_POOL2Ds: soft links, ratio 1
    order: list[SSAValue] = list(qw.arg_off)
    derived: dict[SSAValue, tuple[SSAValue, SSAValue, float]] = {}  # B of A·B: (A, C, s_A·s_B / s_C)
    for op in block.ops:
        if op in qw.groups and qw.groups[op][0] == "acc":  # keyed by its last op
            gops = qw.groups[op][1]
            if gops[0].name == "tosa.matmul" and const_of(gops[0].operands[1]) is None:
                rq = next(o for o in gops if o.name == "tosa.rescale")
                derived[gops[0].operands[1]] = (gops[0].operands[0], gops[-1].results[0], tval(rq))
        if op in qw.groups and qw.groups[op][0] == "mul":
            gops = qw.groups[op][1]
            wide = [o for o in gops if o.name == "tosa.rescale" and kind(o.results[0]) is Kind.I32]
            rq = next(o for o in gops if o.name == "tosa.rescale" and kind(o.results[0]) is Kind.I8)
            derived[wide[1].operands[0]] = (wide[0].operands[0], gops[-1].results[0], tval(rq))
        for r in op.results:
            if hasattr(r.type, "element_type") and kind(r) is Kind.I8 and const_of(r) is None:
                order.append(r)
        if op in qw.view_ops:
            src, off = qw.views[op.results[0]]
            if off == 0 and kind(op.results[0]) is Kind.I8:
                link(src, op.results[0], 1.0)
        elif op in qw.groups and qw.groups[op][0] == "add":
            ops = qw.groups[op][1]
            add = next(o for o in ops if o.name == "tosa.add")
            srcs = []
            for v in add.operands:
                o = v.owner
                while o.name == "tosa.reshape":  # type: ignore[union-attr]
                    o = o.operands[0].owner  # type: ignore[union-attr]
                srcs.append(o)
            ta, tb = tval(srcs[0]), tval(srcs[1])  # type: ignore[arg-type]
            rq = next(o for o in ops if o.name == "tosa.rescale" and kind(o.results[0]) is Kind.I8)
            a, b = srcs[0].operands[0], srcs[1].operands[0]  # type: ignore[union-attr]
            r_out = 2.0 * max(1.0, tb / ta) / (1 << cq.ADD_SHIFT) / tval(rq)  # s_out / s_a
            if const_of(a) is None and const_of(b) is None:
                link(a, b, tb / ta)
            if const_of(a) is None:
                link(a, ops[-1].results[0], r_out)
            elif const_of(b) is None:
                link(b, ops[-1].results[0], r_out * ta / tb)
        elif op in qw.members:
            continue
        elif op.name in MOVES and op.results and kind(op.results[0]) is Kind.I8:
            for v in op.operands:
                if kind(v) is Kind.I8 and const_of(v) is None:
                    link(v, op.results[0], 1.0)
        elif op.name == "tosa.rescale" and kind(op.operands[0]) is Kind.I8 and kind(op.results[0]) is Kind.I8:
            link(op.operands[0], op.results[0], 1.0 / tval(op))
        elif op.name == "tosa.avg_pool2d" and kind(op.results[0]) is Kind.I8 and const_of(op.operands[0]) is None:
            pools.append((op.operands[0], op.results[0]))
    fixed = [softmax_input_scale(ops) for k, ops in qw.groups.values() if k == "softmax"]

    def spread(v0: SSAValue) -> None:  # the hard links, from an assigned value
        todo = [v0]
        while todo:
            v = todo.pop()
            for u, r in edges.get(v, []):
                if u not in qw.target:
                    qw.target[u] = qw.target[v] * r
                    todo.append(u)

    def bridge() -> None:  # pool links into components nothing has assigned yet, then their hard links
        grown = True
        while grown:
            grown = False
            for a, b in pools:
                for u, v in ((a, b), (b, a)):
                    if u in qw.target and v not in qw.target:
                        qw.target[v] = qw.target[u]
                        spread(v)
                        grown = True

    def seed(v0: SSAValue, s0: float) -> None:
        if v0 in qw.target:
            return
        a_c_t = derived.get(v0)
        if a_c_t is not None and a_c_t[0] in qw.target and a_c_t[1] in qw.target:
            s0 = qw.target[a_c_t[1]] * a_c_t[2] / qw.target[a_c_t[0]]  # s_B = s_C·t / s_A
        qw.target[v0] = s0
        spread(v0)

    for v0, s0 in [(v, s) for v, (s, _) in qw.forced.items()] + [f for f in fixed if f]:
        seed(v0, s0)  # every fixed scale before any pool link: a link never overrides one
    bridge()
    for v0 in order:
        if v0 not in qw.target:
            seed(v0, 0.05)
            bridge()


def out_qp(qw: QuantWriter, v: SSAValue, free: float, zp: int) -> QP:
    """The quantization of a produced int8 value: the forced one (dequantized later) or ``free``."""
    f = qw.forced.get(v)
    if f is None:
        return make_qp(qw.target.get(v, free), zp)
    s, fzp = f
    if fzp != zp:
        raise FrontendError(f"cannot export to NNEF 1.0.3: an int8 tensor with zero point {zp} is dequantized "
                            f"with zero point {fzp}")
    for k in NUDGES:
        q = make_qp(nudge(s, k), zp)
        if float(_F32(q.scale)) == s:
            return q
    raise FrontendError(f"internal: no linear_quantize range reproduces the f32 scale {s}")


def solve_out(qw: QuantWriter, op: Operation, v: SSAValue, in_scale: float, want: tuple[int, int], zp: int,
               default: float) -> QP:
    """An output quantization with ``m_s(in_scale / out.scale) == want``. A dequantized (forced) output
    keeps its f32 scale; within the float64 scales that round to it, the one the RESCALE implies is
    preferred (a reader's f32 dequantization constant loses the last bits of e.g. 1/255)."""
    t = want[0] * 2.0 ** -want[1]
    if v in qw.forced:
        s32, fzp = qw.forced[v]
        for k in NUDGES:
            q = make_qp(nudge(in_scale / t, k), zp)
            if fzp == zp and float(_F32(q.scale)) == s32 and m_s(in_scale / q.scale) == want:
                return q
        q = out_qp(qw, v, default, zp)
        if m_s(in_scale / q.scale) != want:
            raise unsupported(op, "the RESCALE multiplier is inconsistent with the scales fixed by the graph's "
                                  "quantize / dequantize constants")
        return q
    bases = ([qw.target[v]] if v in qw.target else []) + [in_scale / t]
    for base in bases:  # the solved target first, so that tensors linked by data movement agree exactly
        for k in NUDGES:
            q = make_qp(nudge(base, k), zp)
            if m_s(in_scale / q.scale) == want:
                return q
    raise unsupported(op, f"no output scale reproduces multiplier {want[0]} / shift {want[1]}")
