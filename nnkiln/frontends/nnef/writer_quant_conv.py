"""Grouped int8 convolution (groups > 1, not depth-wise) for ``writer_quant`` (NNEF 1.0.3 §4.3.1 ``groups``).

Our importers lower a grouped quantized convolution (``common.quant.conv_i32_cl``) to: per group ``g``, a SLICE
of the int8 input's channels ``[g·C/G, (g+1)·C/G)``, a CONV2D by that group's filters (int32 accumulator), then a
CONCAT of the int32 accumulators along the channels and **one** RESCALE (per tensor or per output channel) to the
int8 output. This module recognises that pattern and writes one NNEF ``conv(..., groups = G)``.

Why one grouped ``conv`` and not G quantized convs + ``concat``: our reader lowers an NNEF ``conv`` with
``groups = G`` with the same ``conv_i32_cl``, i.e. exactly the original SLICE / CONV2D / CONCAT / RESCALE
arithmetic, so the weight scales (which absorb the RESCALE's multipliers, as for any conv) and the int32 bias
come back bit for bit. Per-group convs + ``concat`` would also be exact (a RESCALE acts channel by channel), but
they would give each group's output its own graph.quant entry that must equal the others' (the reader's
``concat`` RESCALEs inputs of another quantization), write G+1 ops instead of one, and re-import as a different
(longer) integer graph; the grouped ``conv`` keeps the written graph the model's own op.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from xdsl.ir import Operation, SSAValue

from nnkiln.dialects.tosa.base import Kind
from nnkiln.frontends.common.arith import shape_of
from nnkiln.frontends.nnef.writer import const_of, get, ints, kind, unsupported

if TYPE_CHECKING:
    from nnkiln.frontends.nnef.writer_quant import QuantWriter

_GEOMETRY = ("pad", "stride", "dilation", "input_zp", "weight_zp")


def _single_use_owner(v: SSAValue, name: str) -> Operation | None:
    op = v.owner
    if isinstance(op, Operation) and op.name == name and len(list(v.uses)) == 1:
        return op
    return None


def _const_codes(v: SSAValue, ops: list[Operation]) -> np.ndarray | None:
    """A constant operand's values, also through one single-use SLICE of a constant (appended to ``ops``)."""
    c = const_of(v)
    if c is not None:
        return np.asarray(c)
    sl = _single_use_owner(v, "tosa.slice")
    if sl is None:
        return None
    base = const_of(sl.operands[0])
    if base is None:
        return None
    p = dict(sl.properties.items())
    start, size = ints(p["start"]), ints(p["size"])
    ops.append(sl)
    return np.asarray(base)[tuple(slice(b, b + n) for b, n in zip(start, size))]


def _parts(qw: QuantWriter, concat: Operation) -> tuple[list[Operation], SSAValue, list[Operation]] | None:
    """(the per-group CONV2Ds in concat order, the int8 input they slice, the SLICEs) or None."""
    if int(get(dict(concat.properties.items()), "axis", -1)) != 3:  # type: ignore[arg-type]
        return None
    convs, slices = [], []
    x: SSAValue | None = None
    for i, v in enumerate(concat.operands):
        conv = _single_use_owner(v, "tosa.conv2d")
        if conv is None or kind(conv.operands[0]) is not Kind.I8:
            return None
        sl = _single_use_owner(conv.operands[0], "tosa.slice")
        if sl is None:
            return None
        src = sl.operands[0]
        if x is not None and src is not x:
            return None
        x = src
        p = dict(sl.properties.items())
        xs, ss = list(shape_of(src)), list(shape_of(sl.results[0]))
        cg = ss[3]
        if ints(p["start"]) != [0, 0, 0, i * cg] or ss[:3] != xs[:3]:
            return None
        convs.append(conv)
        slices.append(sl)
    if x is None or len(convs) < 2 or len(convs) * shape_of(slices[0].results[0])[3] != shape_of(x)[3]:
        return None
    if any(shape_of(s.results[0]) != shape_of(slices[0].results[0]) for s in slices):
        return None
    return convs, x, slices


def grouped_conv_chain(qw: QuantWriter, op: Operation) -> tuple[str, list[Operation]] | None:
    """The group's ops (input SLICEs, weight SLICEs, CONV2Ds, int32 CONCAT, RESCALE[, CLAMP]) when ``op`` is the
    CONCAT of a grouped int8 convolution, else None."""
    if op.name != "tosa.concat" or kind(op.results[0]) is not Kind.I32:
        return None
    found = _parts(qw, op)
    if found is None:
        return None
    convs, _, slices = found
    ops: list[Operation] = list(slices)
    for conv in convs:
        _const_codes(conv.operands[1], ops)  # weight SLICEs join the group (checked when written)
        ops.append(conv)
    ops.append(op)
    return ("gconv", ops) if qw._requant_tail(ops, op.results[0]) else None


def write_grouped_conv(qw: QuantWriter, ops: list[Operation]) -> None:
    """One NNEF ``conv(groups = G)`` for a grouped int8 convolution (see the module docstring)."""
    from nnkiln.frontends.nnef.writer_quant import _rescale_params

    w = qw.w
    concat = next(o for o in ops if o.name == "tosa.concat")
    convs, x, _ = _parts(qw, concat)  # type: ignore[misc]
    rescale = next(o for o in ops if o.name == "tosa.rescale")
    in_zp, out_zp, mult, shift, _ = _rescale_params(rescale)
    if in_zp != 0:
        raise unsupported(rescale, "an int32 RESCALE with an input zero point")
    props = [dict(c.properties.items()) for c in convs]
    for c, p in zip(convs[1:], props[1:]):
        if any(list(ints(p[k])) != list(ints(props[0][k])) if k in ("pad", "stride", "dilation") else
               int(get(p, k, 0) or 0) != int(get(props[0], k, 0) or 0) for k in _GEOMETRY):  # type: ignore[arg-type]
            raise unsupported(c, "the convolutions of a grouped int8 conv differ in geometry or zero points")
    xq = qw.params(x, convs[0])
    if int(get(props[0], "input_zp", 0) or 0) != xq.zp:  # type: ignore[arg-type]
        raise unsupported(convs[0], "its input zero point differs from the input tensor's quantization")
    weights, biases = [], []
    for c in convs:
        wc = _const_codes(c.operands[1], [])
        b = const_of(c.operands[2])
        if wc is None or b is None:
            raise unsupported(c, "a grouped int8 conv with a weight or bias computed at run time")
        weights.append(np.transpose(wc, (0, 3, 1, 2)))  # OHWI -> OIHW
        biases.append(np.asarray(b, np.int64).reshape(-1))
    wq = np.concatenate(weights, axis=0)
    bias = np.concatenate(biases)
    yq = qw.out_qp(ops[-1].results[0], xq.scale, out_zp)
    wname, bname = qw.acc_constants(convs[0], rescale, xq, yq, wq, int(get(props[0], "weight_zp", 0) or 0),  # type: ignore[arg-type]
                                    bias, mult, shift)
    out = w.conv(convs[0], props[0], weight=wname, bias=bname, x_name=w.name(x), groups=len(convs))
    w.quant[w.last_conv] = yq.entry()
    qw._clamp_tail(ops, out, rescale.results[0], yq)
