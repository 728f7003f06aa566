"""The integer softmax of ``common.quant.softmax_i8`` → a quantized NNEF ``softmax`` for ``writer_quant``.

Our reader lowers ``softmax`` between two 8-bit quantized tensors to ``softmax_i8`` (an int32 exp table
indexed by ``max − x`` through GATHER, sums, CLZ normalisation, INT_DIV, RESCALE). The writer recognises that
subgraph by its shape — the ops computed from one int8 tensor up to the INT_DIV, used nowhere else, with one
GATHER and one CLZ — and writes it back as ``softmax(x, axes)`` when the table recomputed from the written
quantization of ``x`` is the graph's table (up to ``_TABLE_TOLERANCE_BITS``) and the output quantization reproduces the RESCALE's
multiplier; otherwise it reports the GATHER or the RESCALE as not expressible. ``QuantWriter.verify`` still
re-imports the folder and compares bit for bit.
"""

from __future__ import annotations

import math
from collections import Counter
from typing import TYPE_CHECKING

import numpy as np
from xdsl.ir import Operation, SSAValue

from nnkiln.dialects.tosa.base import Kind
from nnkiln.frontends.common import quant as cq
from nnkiln.frontends.common.arith import shape_of
from nnkiln.frontends.nnef.writer import const_of, get, kind, unsupported

if TYPE_CHECKING:
    from nnkiln.frontends.nnef.writer_quant import QuantWriter

_MAX_OPS = 64
_TABLE_TOLERANCE_BITS = 20
"""The table may differ from the one recomputed at the written scale by 2^-20 of its largest entry: an int8
tensor's scale comes back from a quantize pattern as ``1 / f32(1/s)``, a few ulps from the ``s`` the table was
built with, which moves entries of a 2^30-scaled table by a few units (the probabilities by < 2^-26)."""


def softmax_body(div: Operation) -> tuple[SSAValue, list[Operation]] | None:
    """The int8 input and the ops of a ``softmax_i8`` subgraph ending at the INT_DIV ``div`` (unordered), or
    None if ``div`` is not such an op."""
    if div.name != "tosa.intdiv" or kind(div.results[0]) is not Kind.I32:
        return None
    seen: set[Operation] = set()
    sources: set[SSAValue] = set()
    todo = [div]
    while todo:
        op = todo.pop()
        if op in seen:
            continue
        seen.add(op)
        if len(seen) > _MAX_OPS:
            return None
        for v in op.operands:
            owner = v.owner
            if kind(v) is Kind.I8 and not (isinstance(owner, Operation) and owner.name == "tosa.reduce_max"):
                sources.add(v)
            elif not isinstance(owner, Operation):
                return None
            elif owner.name != "tosa.const":
                todo.append(owner)
    names = Counter(op.name for op in seen)
    if len(sources) != 1 or names["tosa.gather"] != 1 or names["tosa.clz"] != 1 or not names["tosa.reduce_max"]:
        return None
    if any(u.operation not in seen for op in seen if op is not div for r in op.results for u in r.uses):
        return None
    return next(iter(sources)), list(seen)


def input_scale(ops: list[Operation]) -> tuple[SSAValue, float] | None:
    """The softmax's int8 input and a scale that rebuilds its exp table exactly, for the scale solver (the
    scale of a tensor that is never dequantized is otherwise free, but a softmax's table fixes it): every
    entry ``T[k] = round(2^B·exp(-k·s))``, k >= 1, bounds s to ``(-ln((T[k]+½)/2^B)/k, -ln((T[k]-½)/2^B)/k]``;
    the middle of the intersection is taken. None if the table bounds nothing or no scale fits."""
    div = next(o for o in ops if o.name == "tosa.intdiv")
    x, _ = softmax_body(div)  # type: ignore[misc]
    table = const_of(next(o for o in ops if o.name == "tosa.gather").operands[0])
    if table is None:
        return None
    t = np.asarray(table, np.float64).reshape(-1)
    if t.size != 256 or t[0] < 2 or t[0] != 2.0 ** round(math.log2(t[0])):
        return None
    k = np.arange(1, 256)[t[1:] >= 1]
    if k.size == 0:
        return None
    with np.errstate(divide="ignore"):
        lo = float(np.max(-np.log((t[k] + 0.5) / t[0]) / k))
        hi = float(np.min(-np.log((t[k] - 0.5) / t[0]) / k))
    return (x, (lo + hi) / 2) if 0 < lo <= hi else None


def write_softmax(qw: QuantWriter, ops: list[Operation]) -> None:
    """Write the group (``softmax_body``'s ops, then the requantization tail) as a quantized ``softmax``."""
    from nnkiln.frontends.nnef.writer_quant import _rescale_params

    div = next(o for o in ops if o.name == "tosa.intdiv")
    x, _ = softmax_body(div)  # type: ignore[misc]
    xq = qw.params(x, div)
    axes = sorted({int(get(dict(o.properties.items()), "axis")) for o in ops if o.name == "tosa.reduce_max"})  # type: ignore[arg-type]
    gather = next(o for o in ops if o.name == "tosa.gather")
    bits = cq.softmax_fraction_bits(math.prod(shape_of(x)[a] for a in axes))
    table = const_of(gather.operands[0])
    if bits is None or table is None or np.abs(np.asarray(table, np.int64).reshape(-1) - cq.softmax_exp_table(
            xq.scale, sum(bits))).max() > 1 << max(0, sum(bits) - _TABLE_TOLERANCE_BITS):
        raise unsupported(gather, "an int32 GATHER that is not the exp table of a quantized softmax at its input's "
                                  "quantization")
    rescale = next(o for o in ops if o.name == "tosa.rescale")
    in_zp, out_zp, mult, shift, per_channel = _rescale_params(rescale)
    if in_zp or per_channel:
        raise unsupported(rescale, "a per-channel or offset requantization of a softmax")
    p15 = 2.0 ** -15
    yq = qw._solve_out(rescale, ops[-1].results[0], p15, (mult[0], shift[0]), out_zp,
                       p15 / (mult[0] * 2.0 ** -shift[0]))
    out = qw.w.emit(f"softmax({qw.w.name(x)}, axes = [{', '.join(str(a) for a in axes)}])")
    qw.w.quant[out] = yq.entry()
    qw._clamp_tail(ops, out, rescale.results[0], yq)
