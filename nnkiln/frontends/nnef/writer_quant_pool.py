"""int8 AVG_POOL2D with any zero points for ``writer_quant`` (TOSA 0.30 §2.3.2; NNEF 1.0.3 ``avg_pool``, ``conv``).

TOSA: ``y = clip(apply_scale_32(Σ (x − input_zp), reciprocal_scale(n)) + output_zp)`` over the ``n`` taps of each
window inside the input (padding is neither summed nor counted). ``reciprocal_scale``'s multiplier is a little
above ``2^shift / n``, so this is ``R(m − input_zp) + output_zp``: ``m`` the mean of the codes, ``R`` rounding to
nearest with halves away from zero. ``R`` does not commute with integer shifts at halves —
``R(m − c) = R(m) − c`` except when ``m`` is a half lying between 0 and ``c`` (m = 0.5, c = 3: −3 against −2) —
and halves need an even ``n``.

What our reader can compute (``lowering_quant_int``): a quantized ``avg_pool(border = 'ignore')`` of a tensor with
zero point ``z`` is AVG_POOL2D on the raw codes with zero points 0, ``R(m)``, then a RESCALE to the output's
quantization (``+ Z − z`` when the scales are equal); a depth-wise ``conv`` subtracts ``z``, adds its int32 bias,
RESCALEs with the multiplier of its scales and adds the output's zero point. The output's zero point ``Z`` is the
one of a dequantization of the output, else the one its consumers subtract (``writer_quant_io.consumer_zps``:
convolutions, RESCALEs, ... through data movement), else the one of the tensors a CONCAT joins it with (their
producers' — a RESCALE's output_zp, a graph input's, a tensor already written —, since an NNEF ``concat`` of
quantized tensors needs one grid), else free. ``z + output_zp − input_zp`` keeps real values: an
importer's pool has ``input_zp = z``, so that is ``output_zp``; our reader's unsigned form (``input_zp = output_zp
= −128``) keeps ``z``, and so do its consumers. The pool is written in one of two forms, both bit-exact:

* ``avg_pool`` when ``Z = z + output_zp − input_zp`` (or is free) and ``input_zp = 0`` or every window counts an
  odd number of taps (no halves): the reader's ``R(m) + output_zp − input_zp`` is the original's. The output
  keeps the input's scale (a RESCALE of multiplier 2^30, shift 30, checked) unless a dequantization or the scale
  solver fixes another one (the solver links the pool's input and output, softly: ``writer_quant_scales``; it
  gives the output another scale only when a CONCAT joins it with a branch whose scale is fixed otherwise). The
  importers' pools (zero points 0) take this form.
* otherwise depth-wise ``conv``s (``groups = 0``) of ones (int8 code 1, zero point 0) with the bias
  ``n·(z − input_zp)``: the reader's accumulator is ``Σ (x − z) + n·(z − input_zp) = Σ (x − input_zp)`` over the
  same taps (its CONV2D pads with the zero point, adding 0), the weight scale is chosen
  (``QuantWriter.acc_constants``) so that its RESCALE has exactly ``reciprocal_scale(n)``'s multiplier and shift,
  and the conv output's zero point is ``output_zp``: AVG_POOL2D's arithmetic step for step. When padding makes
  ``n`` vary over the output, there is one conv per distinct ``n`` and the output is put back together from
  ``slice``s of them (bands of rows × bands of columns of constant ``n``) with ``concat``, every piece at the
  conv output's quantization, so the reader's slices and concats move codes unchanged (a free ``Z`` is
  ``output_zp``). A RESCALE cannot move codes to another zero point (it keeps real values), so when
  ``Z ≠ output_zp`` the result is ``add``ed to a constant (``copy(variable)``) of real value ``(output_zp − Z)·s``
  at the same scale: the reader's common-scale ADD of equal scales is exact integer arithmetic
  (``(y − output_zp)·2^19 + (output_zp − Z)·2^19``, rescaled by ``2^−19``, ``+ Z``), which gives the codes ``y``
  with the entry's zero point ``Z``.

Nothing is refused for its zero points or padding; the conv form is only a larger graph (a float reader sees box
filters of weight ≈ 1/n plus a constant: the same real values).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from xdsl.ir import Operation, SSAValue

from nnkiln.dialects.tosa.base import Kind
from nnkiln.frontends.common import quant as cq
from nnkiln.frontends.common.arith import shape_of
from nnkiln.frontends.nnef.writer import get, ints, kind, lit, unsupported
from nnkiln.frontends.nnef.writer_quant_io import consumer_zps, input_zero_point
from nnkiln.frontends.nnef.writer_quant_scales import NUDGES, QP, m_s, make_qp, nudge

if TYPE_CHECKING:
    from nnkiln.frontends.nnef.writer_quant import QuantWriter

_UNIT = (1 << 30, 30)  # m_s(1.0): a RESCALE that only moves the zero point


def reciprocal_scale(n: int) -> tuple[int, int]:
    """TOSA 0.30 §1.9.2 ``reciprocal_scale(n)``: (multiplier, shift) with ``multiplier·2^−shift ≈ 1/n``."""
    k = (n - 1).bit_length()  # 32 − count_leading_zeros(n − 1)
    return (((1 << 30) + 1) << k) // n, 30 + k


def tap_counts(size: int, kernel: int, stride: int, pad_before: int, out: int) -> list[int]:
    """The taps inside the input of each of the ``out`` windows along one axis."""
    return [min(o * stride - pad_before + kernel, size) - max(o * stride - pad_before, 0) for o in range(out)]


def _bands(counts: list[int]) -> list[tuple[int, int, int]]:
    """(begin, end, count) of the runs of equal ``counts``."""
    runs: list[tuple[int, int, int]] = []
    for i, c in enumerate(counts):
        if runs and runs[-1][2] == c:
            runs[-1] = (runs[-1][0], i + 1, c)
        else:
            runs.append((i, i + 1, c))
    return runs


def write_avg_pool(qw: QuantWriter, op: Operation) -> None:
    """Write an int8 AVG_POOL2D (the two forms of the module docstring)."""
    p = dict(op.properties.items())
    izp, ozp = int(get(p, "input_zp", 0) or 0), int(get(p, "output_zp", 0) or 0)  # type: ignore[arg-type]
    xv, yv = op.operands[0], op.results[0]
    q = qw.params(xv, op)
    (ky, kx), (sy, sx), pad = ints(p["kernel"]), ints(p["stride"]), ints(p["pad"])
    _, ih, iw, _ = shape_of(xv)
    _, oh, ow, _ = shape_of(yv)
    rows, cols = tap_counts(ih, ky, sy, pad[0], oh), tap_counts(iw, kx, sx, pad[2], ow)
    z_keep = q.zp + ozp - izp  # the output zero point that keeps real values
    no_halves = izp == 0 or all(r * c % 2 for r in set(rows) for c in set(cols))
    z = _output_zero_point(qw, yv, z_keep if no_halves and -128 <= z_keep <= 127 else ozp)
    if z == z_keep and no_halves:
        yq = _pool_out_qp(qw, yv, q, z)
        if yq is not None:
            qw.publish(yv, qw.w._pool(op, p, "avg_pool", x=qw.w.name(xv)), yq)
            return
    yq = qw.out_qp(yv, q.scale, z)
    convq, kq = (yq, None) if z == ozp else _shift_qps(op, yq, ozp)
    y = _write_as_convs(qw, op, q, convq, izp, _bands(rows), _bands(cols))
    if kq is not None:  # the codes at zero point Z: add a constant of real value (output_zp − Z)·s
        real = np.full((1, 1, 1, 1), kq.lo + (kq.zp + ozp - z + 128) * kq.scale, np.float32)
        k = _entry(qw, kq, f"copy({qw.w.variable(real)})")
        y = qw.w.emit(f"add({y}, {k})")
    qw.publish(yv, y, yq)


def _output_zero_point(qw: QuantWriter, v: SSAValue, free: int) -> int:
    """The zero point the pool's output must have: a dequantization's, else the one its consumers subtract
    (``writer_quant_io.consumer_zps``; consumers that disagree report it themselves), else the one of the tensors
    an int8 CONCAT joins it with (``_peer_zps``: one grid for all of them), else ``free``."""
    forced = qw.forced.get(v)
    if forced is not None:
        return forced[1]
    found: list[tuple[int, Operation]] = []
    consumer_zps(qw, v, 0, set(), found)
    zps = {z for z, _ in found}
    if not zps:
        _peer_zps(qw, v, set(), zps)
    return zps.pop() if len(zps) == 1 else free


_THROUGH = ("tosa.transpose", "tosa.reshape", "tosa.identity", "tosa.slice", "tosa.tile", "tosa.reverse",
            "tosa.max_pool2d", "tosa.clamp")  # int8 data movement with one tensor operand (MOVES but CONCAT)


def _peer_zps(qw: QuantWriter, v: SSAValue, seen: set[SSAValue], out: set[int]) -> None:
    """The zero points of the other operands of the int8 CONCATs that ``v`` reaches through data movement."""
    if v in seen:
        return
    seen.add(v)
    for use in v.uses:
        op = use.operation
        if op.name == "tosa.concat":
            for i, u in enumerate(op.operands):
                zp = None if i == use.index else _producer_zp(qw, u)
                if zp is not None:
                    out.add(zp)
            _peer_zps(qw, op.results[0], seen, out)
        elif op.name in _THROUGH and kind(op.results[0]) is Kind.I8:
            _peer_zps(qw, op.results[0], seen, out)


def _producer_zp(qw: QuantWriter, u: SSAValue) -> int | None:
    """The int8 zero point ``u`` is written with when it is already known: written before, the output of a RESCALE
    (its output_zp), a graph input (``writer_quant_io.input_zero_point``), through data movement; else None."""
    while True:
        if u in qw.qp:
            return qw.qp[u].zp
        if u in qw.arg_off:
            return input_zero_point(qw, u) if qw.arg_off[u] == 0 else None
        o = u.owner
        if not isinstance(o, Operation) or kind(u) is not Kind.I8:
            return None
        if o.name == "tosa.rescale" and o not in qw.view_ops:
            return int(get(dict(o.properties.items()), "output_zp", 0) or 0)  # type: ignore[arg-type]
        if o.name not in _THROUGH:
            return None
        u = o.operands[0]


def _pool_out_qp(qw: QuantWriter, v: SSAValue, q: QP, zp: int) -> QP | None:
    """The output quantization of the ``avg_pool`` form — the input's scale (a RESCALE of multiplier 2^30, shift
    30), zero point ``zp`` — or None: a dequantization fixes another scale, or the scale solver gives the output
    another one (the pool's link input ↔ output is the solver's only soft link: a CONCAT with a tensor whose scale
    is fixed otherwise, ``writer_quant_scales.solve_scales``). The solved scale is tried first, stepped by the
    ``NUDGES`` its peers are searched with, so the grid is the very one of the tensors it meets again."""
    forced = qw.forced.get(v)
    target = qw.target.get(v) if forced is None else None
    cands = [make_qp(nudge(target, k), zp) for k in NUDGES] if target is not None else []
    cands += [q] if zp == q.zp else []
    cands += [make_qp(nudge(q.scale, k), zp) for k in NUDGES]
    for c in cands:
        if m_s(q.scale / c.scale) != _UNIT:
            continue
        if forced is not None and (float(np.float32(c.scale)), c.zp) != forced:
            continue
        if target is not None and m_s(target / c.scale) != _UNIT:
            return None  # the solver's scale is not the input's: the conv form takes any output scale
        return c
    return None


def _shift_qps(op: Operation, yq: QP, ozp: int) -> tuple[QP, QP]:
    """The quantizations of the conv output (zero point ``ozp``) and of the constant added to it (codes
    ``ozp − yq.zp`` from its zero point), at ``yq``'s scale such that the reader's common-scale ADD into ``yq``
    is exact: operand RESCALEs by 2^19 (2^30, shift 11), output RESCALE by 2^−19 (2^30, shift 49)."""
    d = ozp - yq.zp
    kzp = 0 if -128 <= d <= 127 else -128 if d > 0 else 127
    for k in NUDGES:
        a, b = make_qp(nudge(yq.scale, k), ozp), make_qp(nudge(yq.scale, k), kzp)
        max2 = 2.0 * max(a.scale, b.scale)
        if (m_s(a.scale / max2 * (1 << cq.ADD_SHIFT)) == m_s(b.scale / max2 * (1 << cq.ADD_SHIFT)) == (1 << 30, 11)
                and m_s(max2 / (1 << cq.ADD_SHIFT) / yq.scale) == (1 << 30, 49)):
            return a, b
    raise unsupported(op, f"no scale makes the reader's ADD an exact move from zero point {ozp} to {yq.zp}")


def _write_as_convs(qw: QuantWriter, op: Operation, q: QP, yq: QP, izp: int, rows: list[tuple[int, int, int]],
                    cols: list[tuple[int, int, int]]) -> str:
    """The ``conv`` form at the output quantization ``yq``: one depth-wise conv of ones per distinct tap count,
    then slices + concats; returns the NHWC result's name."""
    w = qw.w
    p = dict(op.properties.items())
    (ky, kx), stride, pad = ints(p["kernel"]), ints(p["stride"]), ints(p["pad"])
    c = shape_of(op.operands[0])[3]
    xt = w.transpose(w.name(op.operands[0]), (0, 3, 1, 2))
    padding = lit([(pad[0], pad[1]), (pad[2], pad[3])])
    convs: dict[int, str] = {}
    for n in sorted({r[2] * k[2] for r in rows for k in cols}):
        mult, shift = reciprocal_scale(n)
        ones = np.ones((c, 1, ky, kx), np.int8)
        bias = np.full(c, n * (q.zp - izp), np.int64)
        wname, bname = qw.acc_constants(op, op, q, yq, ones, 0, bias, [mult], [shift])
        convs[n] = _entry(qw, yq, f"conv({xt}, {wname}, {bname}, padding = {padding}, stride = {lit(stride)}, "
                                  "dilation = [1, 1], groups = 0)")
    bands = []
    for r0, r1, rn in rows:
        pieces = [convs[rn * cn] if len(rows) == len(cols) == 1 else
                  _entry(qw, yq, f"slice({convs[rn * cn]}, axes = [2, 3], begin = {lit([r0, c0])}, "
                                 f"end = {lit([r1, c1])})") for c0, c1, cn in cols]
        bands.append(pieces[0] if len(pieces) == 1 else _entry(qw, yq, f"concat([{', '.join(pieces)}], axis = 3)"))
    y = bands[0] if len(bands) == 1 else _entry(qw, yq, f"concat([{', '.join(bands)}], axis = 2)")
    return _entry(qw, yq, f"transpose({y}, axes = [0, 2, 3, 1])")


def _entry(qw: QuantWriter, q: QP, expr: str) -> str:
    """Emit ``expr`` with the graph.quant entry of ``q``."""
    name = qw.w.emit(expr)
    qw.w.quant[name] = q.entry()
    return name
