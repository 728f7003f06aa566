"""Quantized (int8) ``tosa`` → float NNEF + ``graph.quant`` for ``writer`` (NNEF 1.0.3 §5.3, §7.1).

NNEF has no integer arithmetic: a quantized NNEF graph is a float graph whose tensors carry
``linear_quantize(min, max, bits = 8)`` entries, and our reader (``lowering_quant_int``) rebuilds integer
TOSA from it. This module writes an int8 tensor ``q`` with zero point ``zp`` and scale ``s`` as the NNEF
tensor of real values ``(q − zp)·s`` with the entry ``min = (−128 − zp)·s``, ``max = (127 − zp)·s``, and
chooses the scales so that the reader recomputes exactly the original integer parameters. The integer
tosa module only fixes *ratios* of scales (RESCALE multipliers) and the scales of its float boundaries
(the constants of quantize/dequantize), so:

* a dequantized tensor (CAST → SUB zp → CAST → MUL s) gets exactly ``s`` (the reader dequantizes with
  ``f32(scale)``; the written range is nudged until that f32 equals the original constant); the forced
  scale propagates backwards through data movement / pooling / clamps;
* a conv / fully_connected / matmul-with-constant output keeps its (forced or chosen) scale and the
  *weight* scale absorbs the RESCALE multiplier: ``s_w = M·2^−S·s_out/s_in`` (per channel when the RESCALE
  is), checked with the reader's own ``compute_scale_32``; the int32 bias is written as ``B·s_in·s_w`` in f32
  and must round back to ``B`` (``rint``), int8 weights as f32 grid values ``min + k·scale``;
* a standalone int8→int8 RESCALE is a ``copy`` with its own entry, the two-RESCALE ADD an ``add`` (the
  reader's ``add_common_scale`` must give the same three multipliers; a constant operand gets the scale its
  RESCALE implies and is written as ``copy(variable)`` with an entry, a run-time tensor for the reader),
  CONCAT needs one quantization;
* the free scales are solved once (``writer_quant_scales.solve_scales``, next to the ``QP`` records and the
  multiplier search): scales linked by data movement (ratio 1), int8→int8 RESCALEs (``1/t``) and common-scale
  ADDs are propagated from the dequantized values, so tensors that meet again (e.g. the inputs of a CONCAT)
  get identical ranges;
* unit-scale RESCALEs int8 → uint8 → int8 / int16 (ONNX QOperator's uint8 round trips) are exact offsets of the
  int8 codes and are not written; an int8 *constant* that is dequantized is written as its f32 values.

The quantize pattern (MUL 1/s, CLAMP, CAST to int32 — round half to even —, ADD zp, MAXIMUM −128,
MINIMUM 127, CAST to int8) is written as exact float NNEF: ``floor``/``sub``/``eq``/``select`` compute the
half-to-even rounding on f32 values, then ``clamp(r + zp, −128, 127)`` gives the codes as floats and
``(code − zp)·s`` the quantized tensor, which lies on the grid (the reader's pseudo-quantization and
quantization recover the codes with a margin of half a step).

Also written: an int8 matmul of two run-time tensors and the int32 product of two widened int8 tensors, each +
RESCALE (``matmul`` / ``mul`` between quantized tensors; the scale solver derives B's scale as ``s_C·t / s_A``),
int8 TABLEs that are exactly a quantized ``sigmoid`` / ``tanh``, and the integer softmax our reader builds
(``writer_quant_softmax``).

Also: a grouped int8 conv (the importers' per-group SLICE + CONV2D, int32 CONCAT, one RESCALE) is one NNEF
``conv(groups = G)`` (``writer_quant_conv``, which says why not per-group convs + ``concat``), and int8 / uint8
graph inputs and outputs are float tensors of *real values* ``(q − zp)·s`` with their graph.quant entries
(``writer_quant_io``: interface decision — the written graph takes and returns real values, not codes, as our
reader's float interface; an input's scale comes from the solver like any int8 tensor's, free unless
dequantized, and its zero point from the consumers that subtract one).

Also: an int8 AVG_POOL2D with any zero points (``writer_quant_pool``): ``avg_pool`` when the reader's mean of the
raw codes rounds as the original (input_zp 0, or no window with an even count), otherwise depth-wise convs of
ones whose RESCALE is ``reciprocal_scale(count)`` (one per count, assembled with ``slice`` / ``concat`` when
padding makes the count vary), plus an exact ``add`` of a constant when the output's zero point must differ from
output_zp (e.g. our reader's unsigned form, zero points −128).

Not expressible (``FrontendError`` naming the op and the reason): int8 ops outside these patterns (other
integer MUL/ADD/shifts and TABLEs, int16/int48 arithmetic, int16 graph inputs/outputs, an int8 graph input read
with two different zero points, a grouped conv whose groups differ in geometry / zero points or take run-time
weights); ``QuantWriter.verify`` re-imports the written folder and compares outputs bit for bit on random inputs
(random codes for integer inputs, fed to the re-import as their real values; integer outputs compared through the
reader's exact f32 dequantization) as a last guard.
"""

from __future__ import annotations

import math

import numpy as np
from xdsl.dialects.func import FuncOp
from xdsl.ir import Operation, SSAValue

from nnkiln.dialects.tosa.base import Kind
from nnkiln.frontends.common import quant as cq
from nnkiln.frontends.common.arith import shape_of
from nnkiln.frontends.nnef.writer import Writer, const_of, get, ints, kind, lit, unsupported
from nnkiln.frontends.nnef.writer_quant_conv import grouped_conv_chain, write_grouped_conv
from nnkiln.frontends.nnef.writer_quant_io import boundary_args
from nnkiln.frontends.nnef.writer_quant_io import graph_input as io_graph_input
from nnkiln.frontends.nnef.writer_quant_io import graph_output as io_graph_output
from nnkiln.frontends.nnef.writer_quant_io import verify as io_verify
from nnkiln.frontends.nnef.writer_quant_pool import write_avg_pool
from nnkiln.frontends.nnef.writer_quant_scales import MOVES, NUDGES, QP, m_s, make_qp, nudge, solve_scales
from nnkiln.frontends.nnef.writer_quant_scales import out_qp as scales_out_qp
from nnkiln.frontends.nnef.writer_quant_scales import solve_out as scales_solve_out
from nnkiln.frontends.nnef.writer_quant_softmax import softmax_body, write_softmax

_F32 = np.float32


def _rescaled_i8_operands(op: Operation, to_i32: bool) -> list[Operation] | None:
    """The ops of a binary int32 op whose operands are each a single-use RESCALE of an int8 tensor (to int32
    when ``to_i32``), seen through single-use reshapes: those reshapes, the RESCALEs and ``op``; else None."""
    ops: list[Operation] = []
    for v in op.operands:
        src = _through_reshapes(v, ops)
        if not (_is(src, "tosa.rescale") and kind(src.operands[0]) is Kind.I8  # type: ignore[union-attr]
                and (not to_i32 or kind(src.results[0]) is Kind.I32)  # type: ignore[union-attr]
                and _single_user(src.results[0]) is not None):  # type: ignore[union-attr]
            return None
        ops.append(src)  # type: ignore[arg-type]
    ops.append(op)
    return ops


def _through_reshapes(v: SSAValue, ops: list[Operation]) -> object:
    """The producer of ``v`` seen through single-use RESHAPEs (appended to ``ops``)."""
    src = v.owner
    while _is(src, "tosa.reshape") and _single_user(src.results[0]) is not None:  # type: ignore[union-attr]
        ops.append(src)  # type: ignore[arg-type]
        src = src.operands[0].owner  # type: ignore[union-attr]
    return src


def _single_user(v: SSAValue) -> Operation | None:
    uses = list(v.uses)
    return uses[0].operation if len(uses) == 1 else None


def _uniform_const(v: SSAValue) -> float | None:
    a = const_of(v)
    if a is None or a.size == 0 or not np.all(a == a.reshape(-1)[0]):
        return None
    return a.reshape(-1)[0].item()


def _is(op: object, name: str) -> bool:
    """``op`` is an operation named ``name`` (a value's owner may also be a block: a graph input)."""
    return isinstance(op, Operation) and op.name == name


def _rescale_params(op: Operation) -> tuple[int, int, list[int], list[int], bool]:
    p = dict(op.properties.items())
    if not bool(get(p, "scale32", True)) or bool(get(p, "double_round", False)):
        raise unsupported(op, "only scale32 RESCALEs without double rounding are rebuilt by the NNEF reader")
    return (int(get(p, "input_zp", 0)), int(get(p, "output_zp", 0)), ints(p["multiplier"]),  # type: ignore[arg-type]
            ints(p["shift"]), bool(get(p, "per_channel", False)))


_RANGE = {Kind.I8: (-128, 127), Kind.U8: (0, 255), Kind.I16: (-32768, 32767)}

class QuantWriter:
    def __init__(self, w: Writer, func: FuncOp) -> None:
        self.w = w
        self.func = func
        self.qp: dict[SSAValue, QP] = {}
        self.codes: dict[SSAValue, tuple[str, int]] = {}  # quantize outputs: NNEF name of the f32 codes, zp
        self.members: dict[Operation, Operation] = {}  # absorbed op -> anchor
        self.groups: dict[Operation, tuple[str, list[Operation]]] = {}  # anchor -> (kind, ops)
        self.forced: dict[SSAValue, tuple[float, int]] = {}  # int8 value -> (f32 scale, zp) of a dequantization
        self.views: dict[SSAValue, tuple[SSAValue, int]] = {}  # value == int8 source + offset, exactly
        self.view_ops: set[Operation] = set()
        self.target: dict[SSAValue, float] = {}  # int8 value -> intended scale (see writer_quant_scales.solve_scales)
        # int8 / uint8 graph inputs -> offset of their codes from int8 codes (writer_quant_io)
        self.arg_off: dict[SSAValue, int] = boundary_args(list(func.body.blocks[0].args))
        self.boundary_in: dict[SSAValue, tuple[float, int]] = {}  # graph input -> (scale, zero point) written
        self.boundary_out: dict[str, tuple[float, int]] = {}  # integer graph output (NNEF name) -> (scale, zp)
        w.extra_kinds = (Kind.I8,)
        self._find_groups()
        solve_scales(self)

    # -- pattern discovery ----------------------------------------------------------------------------
    def source(self, v: SSAValue) -> tuple[SSAValue, int]:
        """(int8 source, offset): ``v`` equals the int8 codes of the source plus the offset (a unit-scale
        RESCALE view, or a uint8 graph input, whose int8 codes are ``u − 128``)."""
        if v in self.views:
            return self.views[v]
        return v, self.arg_off.get(v, 0)

    def _group(self, kind_: str, ops: list[Operation]) -> None:
        order = self._order
        anchor = max(ops, key=lambda o: order[o])
        self.groups[anchor] = (kind_, ops)
        for o in ops:
            self.members[o] = anchor

    def _find_groups(self) -> None:
        block = self.func.body.blocks[0]
        self._order = {op: i for i, op in enumerate(block.ops)}
        for op in block.ops:
            self._view(op)
        for op in block.ops:
            if op in self.members or op in self.view_ops:
                continue
            chain = (self._quantize_chain(op) or self._dequant_chain(op) or self._acc_chain(op) or self._add_chain(op)
                     or self._mul_chain(op) or self._softmax_chain(op) or grouped_conv_chain(self, op))
            if chain:
                self._group(*chain)
        for anchor, (k, ops) in self.groups.items():
            if k == "dequant":
                mul = ops[-1]
                s = _uniform_const(mul.operands[1])
                zp = 0
                for o in ops[1:-1]:
                    if o.name in ("tosa.sub", "tosa.add"):
                        c = int(_uniform_const(o.operands[1]))  # type: ignore[arg-type]
                        zp += c if o.name == "tosa.sub" else -c
                src, off = self.source(ops[0].operands[0])
                zp -= off
                if src in self.forced and self.forced[src] != (s, zp):
                    raise unsupported(mul, f"the int8 tensor is dequantized with two different scales / zero points "
                                           f"{self.forced[src]} and {(s, zp)}")
                self.forced[src] = (float(s), zp)  # type: ignore[arg-type]
        for op in reversed(list(block.ops)):  # forced scales flow back through data movement
            if op in self.view_ops and op.results[0] in self.forced:
                src, off = self.views[op.results[0]]
                if off == 0 and src not in self.forced:
                    self.forced[src] = self.forced[op.results[0]]
            if op.name in MOVES and op.results and op.results[0] in self.forced and kind(op.results[0]) is Kind.I8:
                for v in op.operands:
                    if kind(v) is Kind.I8 and const_of(v) is None and v not in self.forced:
                        self.forced[v] = self.forced[op.results[0]]

    def _view(self, op: Operation) -> None:
        """A unit-scale RESCALE between int8 / uint8 / int16 (``(x − in_zp) + out_zp``, e.g. the uint8 round
        trips of ONNX QOperator models) that cannot saturate: the result is its int8 source plus an offset."""
        if op.name != "tosa.rescale" or kind(op.operands[0]) not in _RANGE or kind(op.results[0]) not in _RANGE:
            return
        p = dict(op.properties.items())
        if ints(p["multiplier"]) != [1 << 30] or ints(p["shift"]) != [30] or bool(get(p, "double_round", False)):
            return
        src, off = self.source(op.operands[0])
        if kind(src) is not Kind.I8 and src not in self.arg_off:
            return
        off += int(get(p, "output_zp", 0)) - int(get(p, "input_zp", 0))  # type: ignore[arg-type]
        lo, hi = _RANGE[kind(op.results[0])]
        if lo <= -128 + off and 127 + off <= hi:
            self.views[op.results[0]] = (src, off)
            self.view_ops.add(op)

    def _quantize_chain(self, op: Operation) -> tuple[str, list[Operation]] | None:
        if op.name != "tosa.mul" or kind(op.results[0]) is not Kind.F32 or _uniform_const(op.operands[1]) is None:
            return None
        ops, cur = [op], _single_user(op.results[0])
        if _is(cur, "tosa.clamp"):
            ops.append(cur)  # type: ignore[arg-type]
            cur = _single_user(cur.results[0])  # type: ignore[union-attr]
        if not (_is(cur, "tosa.cast") and kind(cur.results[0]) is Kind.I32):  # type: ignore[union-attr]
            return None
        ops.append(cur)  # type: ignore[arg-type]
        cur = _single_user(cur.results[0])  # type: ignore[union-attr]
        if _is(cur, "tosa.add") and _uniform_const(cur.operands[1]) is not None:  # type: ignore[union-attr]
            ops.append(cur)  # type: ignore[arg-type]
            cur = _single_user(cur.results[0])  # type: ignore[union-attr]
        bounds = []
        for nm in ("tosa.maximum", "tosa.minimum"):
            if not (_is(cur, nm) and _uniform_const(cur.operands[1]) is not None):  # type: ignore[union-attr]
                return None
            bounds.append(int(_uniform_const(cur.operands[1])))  # type: ignore[arg-type, union-attr]
            ops.append(cur)  # type: ignore[arg-type]
            cur = _single_user(cur.results[0])  # type: ignore[union-attr]
        shift = 0  # uint8 codes moved to int8: clip(r + zp, 0, 255) - 128
        if cur is not None and cur.name in ("tosa.sub", "tosa.add") and _uniform_const(cur.operands[1]) is not None:
            c = int(_uniform_const(cur.operands[1]))  # type: ignore[arg-type]
            shift = -c if cur.name == "tosa.sub" else c
            ops.append(cur)
            cur = _single_user(cur.results[0])
        if (bounds[0] + shift, bounds[1] + shift) != (-128, 127):
            return None
        if not (_is(cur, "tosa.cast") and kind(cur.results[0]) is Kind.I8):  # type: ignore[union-attr]
            return None
        ops.append(cur)  # type: ignore[arg-type]
        return "quantize", ops

    def _dequant_chain(self, op: Operation) -> tuple[str, list[Operation]] | None:
        if op.name != "tosa.cast" or not (kind(op.operands[0]) is Kind.I8 or op.operands[0] in self.views
                                          or op.operands[0] in self.arg_off):
            return None
        ops, cur = [op], _single_user(op.results[0])
        if kind(op.results[0]) is Kind.I32:
            while (cur is not None and cur.name in ("tosa.sub", "tosa.add") and cur.operands[0] is ops[-1].results[0]
                   and _uniform_const(cur.operands[1]) is not None):
                ops.append(cur)
                cur = _single_user(cur.results[0])
            if not (_is(cur, "tosa.cast") and kind(cur.results[0]) is Kind.F32):  # type: ignore[union-attr]
                return None
            ops.append(cur)  # type: ignore[arg-type]
            cur = _single_user(cur.results[0])  # type: ignore[union-attr]
        elif kind(op.results[0]) is Kind.F32:
            if (cur is not None and cur.name in ("tosa.sub", "tosa.add") and cur.operands[0] is op.results[0]
                    and _uniform_const(cur.operands[1]) is not None):
                ops.append(cur)
                cur = _single_user(cur.results[0])
        else:
            return None
        if not (_is(cur, "tosa.mul") and cur.operands[0] is ops[-1].results[0]  # type: ignore[union-attr]
                and _uniform_const(cur.operands[1]) is not None):  # type: ignore[union-attr]
            return None
        ops.append(cur)  # type: ignore[arg-type]
        return "dequant", ops

    def _requant_tail(self, ops: list[Operation], v: SSAValue) -> bool:
        cur = _single_user(v)
        while _is(cur, "tosa.reshape") and kind(cur.results[0]) is Kind.I32:  # type: ignore[union-attr]
            ops.append(cur)  # type: ignore[arg-type]
            cur = _single_user(cur.results[0])  # type: ignore[union-attr]
        if not (_is(cur, "tosa.rescale") and kind(cur.results[0]) is Kind.I8):  # type: ignore[union-attr]
            return False
        ops.append(cur)  # type: ignore[arg-type]
        nxt = _single_user(cur.results[0])  # type: ignore[union-attr]
        if _is(nxt, "tosa.clamp"):
            ops.append(nxt)  # type: ignore[arg-type]
        return True

    def _acc_chain(self, op: Operation) -> tuple[str, list[Operation]] | None:
        if op.name not in ("tosa.conv2d", "tosa.depthwise_conv2d", "tosa.fully_connected", "tosa.matmul"):
            return None
        if kind(op.operands[0]) is not Kind.I8 or kind(op.results[0]) is not Kind.I32:
            return None
        ops = [op]
        return ("acc", ops) if self._requant_tail(ops, op.results[0]) else None

    def _mul_chain(self, op: Operation) -> tuple[str, list[Operation]] | None:
        """int32 MUL of two int8 tensors widened by RESCALEs (zero points removed), then the requantization."""
        if op.name != "tosa.mul" or kind(op.results[0]) is not Kind.I32:
            return None
        ops = _rescaled_i8_operands(op, to_i32=True)
        return ("mul", ops) if ops is not None and self._requant_tail(ops, op.results[0]) else None

    def _add_chain(self, op: Operation) -> tuple[str, list[Operation]] | None:
        if op.name != "tosa.add" or kind(op.results[0]) is not Kind.I32:
            return None
        ops = _rescaled_i8_operands(op, to_i32=False)
        return ("add", ops) if ops is not None and self._requant_tail(ops, op.results[0]) else None

    def _softmax_chain(self, op: Operation) -> tuple[str, list[Operation]] | None:
        """``common.quant.softmax_i8``'s subgraph (see ``writer_quant_softmax``), then the requantization."""
        body = softmax_body(op)
        if body is None:
            return None
        ops = sorted(body[1], key=self._order.__getitem__)
        return ("softmax", ops) if self._requant_tail(ops, op.results[0]) else None

    # -- scales ---------------------------------------------------------------------------------------
    def out_qp(self, v: SSAValue, free: float, zp: int) -> QP:
        """The quantization of a produced int8 value (``writer_quant_scales.out_qp``)."""
        return scales_out_qp(self, v, free, zp)

    def publish(self, v: SSAValue, name: str, q: QP) -> None:
        self.qp[v] = q
        self.w.names[v] = name
        self.w.quant[name] = q.entry()

    def params(self, v: SSAValue, op: Operation) -> QP:
        q = self.qp.get(v)
        if q is None:
            raise unsupported(op, f"its int8 operand ({v.type}) does not come from a quantized pattern the NNEF "
                                  "writer can express")
        return q

    # -- dispatch -------------------------------------------------------------------------------------
    def handle(self, op: Operation) -> bool:
        anchor = self.members.get(op)
        if anchor is not None:
            if anchor is op:
                k, ops = self.groups[op]
                getattr(self, "g_" + k)(ops)
            return True
        if op in self.view_ops:
            src, off = self.views[op.results[0]]
            if off == 0 and kind(op.results[0]) is Kind.I8:  # back to the int8 codes: the same tensor
                self.w.names[op.results[0]] = self.w.name(src)
                self.qp[op.results[0]] = self.params(src, op)
                if src in self.codes:
                    self.codes[op.results[0]] = self.codes[src]
            return True
        if op.name == "tosa.const":
            return False
        ks = {kind(v) for v in [*op.operands, *op.results] if hasattr(v.type, "element_type")}
        if Kind.I8 not in ks:
            return False
        n = op.name.removeprefix("tosa.")
        fn = getattr(self, "i8_" + n, None)
        if fn is None:
            raise unsupported(op, "int8 arithmetic outside the quantized patterns the NNEF writer rebuilds "
                                  "(see nnkiln.frontends.nnef.writer_quant)")
        fn(op)
        return True

    # -- groups ---------------------------------------------------------------------------------------
    def g_quantize(self, ops: list[Operation]) -> None:
        w = self.w
        mul = ops[0]
        c = float(_uniform_const(mul.operands[1]))  # type: ignore[arg-type]
        clamp = next((o for o in ops if o.name == "tosa.clamp"), None)
        if clamp is not None:
            p = dict(clamp.properties.items())
            lo, hi = float(get(p, "min_val")), float(get(p, "max_val"))  # type: ignore[arg-type]
            if lo > -256.0 or hi < 256.0:
                raise unsupported(clamp, "a quantize CLAMP narrower than [-256, 256] is not the quantize pattern")
        zp = 0
        for o in ops[2:-1]:
            if o.name in ("tosa.add", "tosa.sub"):
                k = int(_uniform_const(o.operands[1]))  # type: ignore[arg-type]
                zp += k if o.name == "tosa.add" else -k
        if not -128 <= zp <= 127:
            raise unsupported(ops[-1], f"zero point {zp} outside int8")
        x = w.name(mul.operands[0])
        y = w.emit(f"mul({x}, {lit(float(_F32(c)))})")
        f = w.emit(f"floor({y})")
        d = w.emit(f"sub({y}, {f})")
        h = w.emit(f"mul({f}, 0.5)")
        fh = w.emit(f"floor({h})")
        odd = w.emit(f"ne({w.emit(f'sub({h}, {fh})')}, 0.0)")
        tie = w.emit(f"and({w.emit(f'eq({d}, 0.5)')}, {odd})")
        up = w.emit(f"or({w.emit(f'gt({d}, 0.5)')}, {tie})")
        r = w.emit(f"add({f}, {w.emit(f'select({up}, 1.0, 0.0)')})")
        rz = w.emit(f"add({r}, {lit(float(zp))})")
        codes = w.emit(f"clamp({rz}, -128.0, 127.0)")
        out = ops[-1].results[0]
        q = self.out_qp(out, 1.0 / c if c > 0 else 1.0, zp)
        real = w.emit(f"mul({w.emit(f'sub({codes}, {lit(float(zp))})')}, {lit(q.scale)})")
        self.publish(out, real, q)
        self.codes[out] = (codes, zp)

    def g_dequant(self, ops: list[Operation]) -> None:
        src, res = ops[0].operands[0], ops[-1].results[0]
        src = self.views.get(src, (src, 0))[0]
        s, zp = self.forced[src]
        c = const_of(src)
        if c is not None:  # a dequantized constant (e.g. weight-only quantization): the f32 values, exactly
            real = (c.astype(np.int64) - zp).astype(np.float32) * _F32(s)
            self.w.names[res] = self.w.variable(real.reshape(shape_of(res)))
            return
        q = self.params(src, ops[0])
        if src in self.codes:  # exact (code − zp)·s from the float codes, as the original computes it
            codes, _ = self.codes[src]
            self.w.names[res] = self.w.emit(f"mul({self.w.emit(f'sub({codes}, {lit(float(zp))})')}, {lit(s)})")
            return
        if q.zp != zp or float(_F32(q.scale)) != s:
            raise unsupported(ops[-1], f"the dequantization (scale {s}, zero point {zp}) differs from the tensor's "
                                       f"quantization (scale {q.scale}, zero point {q.zp}) the reader would use")
        self.w.names[res] = self.w.name(src)

    def _clamp_tail(self, ops: list[Operation], name: str, v: SSAValue, q: QP) -> None:
        clamp = ops[-1] if ops[-1].name == "tosa.clamp" else None
        if clamp is None:
            self.publish(v, name, q)
            return
        self.publish(clamp.operands[0], name, q)
        self.i8_clamp(clamp)

    def g_acc(self, ops: list[Operation]) -> None:
        w = self.w
        op = ops[0]
        rescale = next(o for o in ops if o.name == "tosa.rescale")
        in_zp, out_zp, mult, shift, per_channel = _rescale_params(rescale)
        if in_zp != 0:
            raise unsupported(rescale, "an int32 RESCALE with an input zero point")
        props = dict(op.properties.items())
        xv = op.operands[0]
        xq = self.params(xv, op)
        if int(get(props, "input_zp", get(props, "A_zp", 0)) or 0) != xq.zp:  # type: ignore[arg-type]
            raise unsupported(op, "its input zero point differs from the input tensor's quantization")
        wv = op.operands[1]
        wc = const_of(wv)
        if wc is None and op.name == "tosa.matmul":
            self._matmul_runtime(ops, op, rescale, xq, (in_zp, out_zp, mult, shift, per_channel))
            return
        if wc is None:
            raise unsupported(op, "an int8 weight computed at run time (the reader's integer patterns take constant "
                                  "weights)")
        wzp = int(get(props, "weight_zp", get(props, "B_zp", 0)) or 0)  # type: ignore[arg-type]
        n = op.name.removeprefix("tosa.")
        if n == "conv2d":
            wq = np.transpose(wc, (0, 3, 1, 2))
        elif n == "depthwise_conv2d":
            kh, kw, c, m = wc.shape
            wq = np.transpose(wc, (2, 3, 0, 1)).reshape(c * m, 1, kh, kw)
        elif n == "fully_connected":
            wq = wc
        else:
            if wc.shape[0] != 1:
                raise unsupported(op, "an int8 matmul with a batched constant")
            wq = np.ascontiguousarray(wc[0].T)
        y = rescale.results[0]
        yq = self.out_qp(ops[-1].results[0], xq.scale, out_zp)
        bias = np.zeros(wq.shape[0], np.int64) if n == "matmul" else const_of(op.operands[2])
        if bias is None:
            raise unsupported(op, "a bias computed at run time")
        wname, bname = self.acc_constants(op, rescale, xq, yq, wq, wzp, bias, mult, shift)
        x = w.name(xv)
        if n in ("conv2d", "depthwise_conv2d"):
            out = w.conv(op, props, weight=wname, bias=bname, x_name=x)
            self.w.quant[w.last_conv] = yq.entry()
        else:
            if n == "matmul":
                _, mm, kk = shape_of(xv)
                x = w.emit(f"reshape({x}, shape = {lit([mm, kk])})")
                self.w.quant[x] = xq.entry()
            out = w.emit(f"linear({x}, {wname}, {bname})")
            self.w.quant[out] = yq.entry()
            ysh = list(shape_of(y))
            if ysh != list(shape_of(op.results[0]))[-2:]:
                out = w.emit(f"reshape({out}, shape = {lit(ysh)})")
                self.w.quant[out] = yq.entry()
        self._clamp_tail(ops, out, y, yq)

    def acc_constants(self, op: Operation, rescale: Operation, xq: QP, yq: QP, wq: np.ndarray, wzp: int,
                      bias: np.ndarray, mult: list[int], shift: list[int]) -> tuple[str, str]:
        """The NNEF weight (int8 codes ``wq``, output channels first, as f32 grid values at scales that absorb
        the RESCALE's multipliers) and f32 bias (``B·s_in·s_w``, rounding back to ``B``) of an int8 accumulating
        op whose input / output quantizations are ``xq`` / ``yq``."""
        oc = wq.shape[0]
        if len(mult) not in (1, oc):
            raise unsupported(rescale, "per-channel multipliers that do not match the output channels")
        targets = [m * 2.0 ** -s for m, s in zip(mult, shift)]
        w_scales, pairs = [], list(zip(mult, shift))
        for ch, t in enumerate(targets):
            want = pairs[ch]
            base = t * yq.scale / xq.scale
            for k in NUDGES:
                cand = make_qp(nudge(base, k), wzp)
                if m_s(xq.scale * cand.scale / yq.scale) == want:
                    w_scales.append(cand)
                    break
            else:
                raise unsupported(rescale, f"no weight scale reproduces multiplier {want[0]} / shift {want[1]} through "
                                           "the reader's compute_scale_32")
        wname, wsc = self.weight_var(op, wq, wzp, w_scales, oc)
        acc = xq.scale * np.broadcast_to(wsc, (oc,)).astype(np.float64)
        b32 = (np.broadcast_to(np.asarray(bias, np.int64).reshape(-1), (oc,)) * acc).astype(np.float32)
        back = cq.bias_i32(b32.astype(np.float64), acc)
        if back is None or not np.array_equal(back, np.broadcast_to(np.asarray(bias, np.int64).reshape(-1), (oc,))):
            raise unsupported(op, "the int32 bias does not survive as an f32 multiple of the accumulator scale "
                                  "(|bias| too large)")
        return wname, self.w.variable(b32.reshape(1, oc))

    def _matmul_runtime(self, ops: list[Operation], op: Operation, rescale: Operation, xq: QP, rp: tuple) -> None:
        """int8 MATMUL of two run-time tensors + RESCALE → ``matmul`` between quantized tensors. The scale of B
        was solved with the others (``s_B = s_C·t / s_A``, t the RESCALE's factor) so that the reader's
        ``s_A·s_B / s_C`` gives back the RESCALE's multiplier and shift; checked here."""
        _, out_zp, mult, shift, per_channel = rp
        wv = op.operands[1]
        bq = self.params(wv, op)
        if per_channel or int(get(dict(op.properties.items()), "B_zp", 0) or 0) != bq.zp:  # type: ignore[arg-type]
            raise unsupported(op, "its right operand's zero point differs from that tensor's quantization")
        self._requantized_product(ops, rescale, xq.scale * bq.scale, (mult[0], shift[0]), out_zp,
                                  f"matmul({self.w.name(op.operands[0])}, {self.w.name(wv)})", "matmul")

    def _requantized_product(self, ops: list[Operation], rescale: Operation, s_ab: float, want: tuple[int, int],
                             out_zp: int, expr: str, what: str) -> None:
        """Write ``expr`` (a product of two quantized tensors whose scales multiply to ``s_ab``) with the output
        quantization that makes the reader's ``s_ab / s_out`` the RESCALE's (multiplier, shift) ``want``."""
        yq = self.out_qp(ops[-1].results[0], s_ab / (want[0] * 2.0 ** -want[1]), out_zp)
        if m_s(s_ab / yq.scale) != want:
            raise unsupported(rescale, f"the scales fixed by the graph give no multiplier {want[0]} / shift {want[1]} "
                                       f"for this {what}")
        out = self.w.emit(expr)
        self.w.quant[out] = yq.entry()
        self._clamp_tail(ops, out, rescale.results[0], yq)

    def g_mul(self, ops: list[Operation]) -> None:
        """int8 × int8 MUL (widened, zero points removed) + RESCALE → ``mul`` between quantized tensors, the
        output's (or B's, see the scale solver) scale making the reader's ``s_a·s_b / s_c`` the RESCALE's."""
        wide = [o for o in ops if o.name == "tosa.rescale" and kind(o.results[0]) is Kind.I32]
        rq = next(o for o in ops if o.name == "tosa.rescale" and kind(o.results[0]) is Kind.I8)
        qs = []
        for wv in wide:
            izp, ozp, m, sh, pc = _rescale_params(wv)
            q = self.params(wv.operands[0], wv)
            if ozp != 0 or pc or m[0] * 2.0 ** -sh[0] != 1.0 or q.zp != izp:
                raise unsupported(wv, "a widening RESCALE that is not (x - zero point) of its tensor's quantization")
            qs.append(q)
        in_zp, out_zp, mult, shift, pc = _rescale_params(rq)
        if in_zp != 0 or pc:
            raise unsupported(rq, "a per-channel or offset requantization of an int8 product")
        self._requantized_product(ops, rq, qs[0].scale * qs[1].scale, (mult[0], shift[0]), out_zp,
                                  f"mul({self.w.name(wide[0].operands[0])}, {self.w.name(wide[1].operands[0])})",
                                  "product")

    def g_gconv(self, ops: list[Operation]) -> None:
        write_grouped_conv(self, ops)

    def g_softmax(self, ops: list[Operation]) -> None:
        write_softmax(self, ops)

    def weight_var(self, op: Operation, codes: np.ndarray, zp: int, qs: list[QP], oc: int) -> tuple[str, np.ndarray]:
        """int8 ``codes`` (dimension 0 = output channels) as f32 grid values + their graph.quant entry."""
        sc = np.array([q.scale for q in qs], np.float64)
        lo = np.array([q.lo for q in qs], np.float64)
        hi = np.array([q.hi for q in qs], np.float64)
        shp = (-1,) + (1,) * (codes.ndim - 1)
        lo_b, sc_b, hi_b = (lo.reshape(shp), sc.reshape(shp), hi.reshape(shp)) if len(qs) > 1 else (lo[0], sc[0], hi[0])
        k = codes.astype(np.int64) + 128
        real = (lo_b + k * sc_b).astype(np.float32)
        back = np.floor((np.clip(real.astype(np.float64), lo_b, hi_b) - lo_b) / sc_b + 0.5)
        if not np.array_equal(back, k):
            raise unsupported(op, "int8 weights do not survive as f32 grid values")
        name = self.w.variable(real)
        if len(qs) == 1:
            self.w.quant[name] = qs[0].entry()
        else:
            self.w.quant[name] = (f"linear_quantize(min = {lit([float(v) for v in lo])}, "
                                  f"max = {lit([float(v) for v in hi])}, bits = 8)")
        return name, sc

    def g_add(self, ops: list[Operation]) -> None:
        """The common-scale ADD (two RESCALEs to int32, ADD, RESCALE): NNEF ``add`` of the int8 operands. A
        constant int8 operand gets the scale its RESCALE implies and becomes ``copy(variable)`` with an entry
        (a run-time tensor for the reader's integer ADD)."""
        w = self.w
        add = next(o for o in ops if o.name == "tosa.add")
        srcs: list[Operation] = []
        for v in add.operands:
            o = v.owner
            while o.name == "tosa.reshape":  # type: ignore[union-attr]
                o = o.operands[0].owner  # type: ignore[union-attr]
            srcs.append(o)  # type: ignore[arg-type]
        vals = [o.operands[0] for o in srcs]
        rp = [_rescale_params(o) for o in srcs]
        consts = [const_of(v) for v in vals]
        if all(c is not None for c in consts):
            raise unsupported(add, "a quantized ADD of two constants")
        qs: list[QP | None] = [None if c is not None else self.params(v, add) for v, c in zip(vals, consts)]
        t = [r[2][0] * 2.0 ** -r[3][0] for r in rp]

        def fits(qa: QP, qb: QP) -> bool:
            max2 = 2.0 * max(qa.scale, qb.scale)
            return all((r[0], r[1], r[4]) == (q.zp, 0, False) and
                       m_s(q.scale / max2 * (1 << cq.ADD_SHIFT)) == (r[2][0], r[3][0]) for r, q in zip(rp, (qa, qb)))

        for j in (0, 1):
            if consts[j] is None:
                continue
            i = 1 - j
            base = t[j] * qs[i].scale / t[i]  # type: ignore[union-attr]
            for k in NUDGES:
                cand = make_qp(nudge(base, k), rp[j][0])
                if fits(*((qs[0], cand) if j == 1 else (cand, qs[1]))):  # type: ignore[arg-type]
                    qs[j] = cand
                    break
            else:
                raise unsupported(add, "no scale of its constant operand reproduces the operand RESCALEs")
        qa, qb = qs
        if not fits(qa, qb):  # type: ignore[arg-type]
            raise unsupported(add, "its operand RESCALEs are not the reader's common-scale ADD for the operands' "
                                   "quantizations")
        names = []
        for v, c, q, shaped in zip(vals, consts, qs, add.operands):
            shp = list(shape_of(shaped))
            if c is not None:
                real = (q.lo + (c.astype(np.int64).reshape(shp) + 128) * q.scale).astype(np.float32)  # type: ignore[union-attr]
                nm = w.emit(f"copy({w.variable(real)})")
            elif list(shape_of(v)) != shp:
                nm = w.emit(f"reshape({w.name(v)}, shape = {lit(shp)})")
            else:
                names.append(w.name(v))
                continue
            w.quant[nm] = q.entry()  # type: ignore[union-attr]
            names.append(nm)
        rescale = next(o for o in ops if o.name == "tosa.rescale" and kind(o.results[0]) is Kind.I8)
        izp, ozp, mult, shift, pc = _rescale_params(rescale)
        if izp != 0 or pc:
            raise unsupported(rescale, "the ADD's output RESCALE has an input zero point or is per channel")
        common = 2.0 * max(qa.scale, qb.scale) / (1 << cq.ADD_SHIFT)  # type: ignore[union-attr]
        yq = self._solve_out(rescale, ops[-1].results[0], common, (mult[0], shift[0]), ozp, qa.scale)  # type: ignore[union-attr]
        out = w.emit(f"add({names[0]}, {names[1]})")
        self._clamp_tail(ops, out, rescale.results[0], yq)

    def _solve_out(self, op: Operation, v: SSAValue, in_scale: float, want: tuple[int, int], zp: int,
                   default: float) -> QP:
        """An output quantization reproducing the RESCALE's ``want`` (``writer_quant_scales.solve_out``)."""
        return scales_solve_out(self, op, v, in_scale, want, zp, default)

    # -- single int8 ops --------------------------------------------------------------------------------
    def _move(self, op: Operation) -> None:
        w = self.w
        q = self.params(op.operands[0], op)
        fn = getattr(w, "w_" + op.name.removeprefix("tosa."))
        out = fn(op, dict(op.properties.items()))
        self.publish(op.results[0], out, q)

    i8_transpose = i8_reshape = i8_identity = i8_slice = i8_tile = i8_reverse = _move

    def i8_concat(self, op: Operation) -> None:
        """One grid for all inputs. Entries whose derived scales differ in the last bits (e.g. a RESCALE output
        and an ``avg_pool`` output, both at one dequantization's f32 scale) are one grid for the reader: it moves
        each input to the output's entry (the first input's) with ``requant_i8``, which passes a ratio within
        1e-12 of 1 through and otherwise RESCALEs, exactly when the multiplier is 2^30, shift 30."""
        qs = [self.params(v, op) for v in op.operands]
        for q in qs[1:]:
            r = q.scale / qs[0].scale
            if q.zp != qs[0].zp or (abs(r - 1.0) >= 1e-12 and m_s(r) != (1 << 30, 30)):
                raise unsupported(op, "an int8 CONCAT of tensors with different quantizations")
        self._move(op)

    def i8_max_pool2d(self, op: Operation) -> None:
        q = self.params(op.operands[0], op)
        out = self.w._pool(op, dict(op.properties.items()), "max_pool", x=self.w.name(op.operands[0]))
        self.publish(op.results[0], out, q)

    def i8_avg_pool2d(self, op: Operation) -> None:
        """``avg_pool``, or depth-wise convs of ones when zero points make the reader's pool round differently
        (``writer_quant_pool``)."""
        write_avg_pool(self, op)

    def i8_table(self, op: Operation) -> None:
        """An int8 TABLE the reader builds for a quantized sigmoid / tanh: written as that op when recomputing
        the table from the tensors' quantization gives it back exactly."""
        from nnkiln.frontends.nnef.lowering_quant_int import table_codes

        tab = const_of(op.operands[1])
        xq = self.params(op.operands[0], op)
        y = op.results[0]
        if tab is None:
            raise unsupported(op, "a look-up table computed at run time")
        f = self.forced.get(y)
        cands = [(fn, f[0], f[1]) for fn in ("sigmoid", "tanh")] if f is not None else \
            [("sigmoid", 1.0 / 256, -128), ("tanh", 1.0 / 128, 0)]  # TFLite's int8 LOGISTIC / TANH outputs
        for fn, s, z in cands:
            q = self.out_qp(y, s, z)
            if np.array_equal(table_codes(fn, xq.scale, xq.zp, q.scale, q.zp), np.asarray(tab).reshape(-1)):
                self.publish(y, self.w.emit(f"{fn}({self.w.name(op.operands[0])})"), q)
                return
        raise unsupported(op, "a look-up table that is neither the sigmoid nor the tanh between its tensors' "
                              "quantizations")

    def i8_clamp(self, op: Operation) -> None:
        q = self.params(op.operands[0], op)
        p = dict(op.properties.items())
        lo, hi = int(get(p, "min_val")), int(get(p, "max_val"))  # type: ignore[arg-type]
        x = self.w.name(op.operands[0])
        if lo <= -128 and hi >= 127:
            out = self.w.emit(f"copy({x})")
        elif lo == q.zp and hi >= 127:
            out = self.w.emit(f"relu({x})")
        else:
            rl = max(lo, -128) - q.zp
            rh = min(hi, 127) - q.zp
            out = self.w.emit(f"clamp({x}, {lit(float(rl * q.scale))}, {lit(float(rh * q.scale))})")
            # the reader takes ceil(min/scale) / floor(max/scale): check the bounds come back
            if math.ceil(float(rl * q.scale) / q.scale - 1e-9) != rl or math.floor(float(rh * q.scale) / q.scale + 1e-9) != rh:
                raise unsupported(op, "the clamp bounds do not survive as real values")
        self.publish(op.results[0], out, q)

    def i8_rescale(self, op: Operation) -> None:
        if kind(op.results[0]) is not Kind.I8:
            raise unsupported(op, f"a RESCALE to {op.results[0].type} outside the quantized patterns")
        izp, ozp, mult, shift, pc = _rescale_params(op)
        q = self.params(op.operands[0], op)
        if izp != q.zp or pc:
            raise unsupported(op, "an int8 RESCALE with a per-channel scale or an input zero point different from "
                                  "the tensor's")
        yq = self._solve_out(op, op.results[0], q.scale, (mult[0], shift[0]), ozp, q.scale)
        out = self.w.emit(f"copy({self.w.name(op.operands[0])})")
        self.publish(op.results[0], out, yq)

    # -- graph inputs / outputs ---------------------------------------------------------------------------
    def graph_input(self, arg: SSAValue, name: str) -> bool:
        """Write an int8 / uint8 graph input (``writer_quant_io``); False for other inputs."""
        return io_graph_input(self, arg, name)

    def graph_output(self, v: SSAValue, name: str) -> bool:
        """Write an int8 / uint8 graph output as its real values (``writer_quant_io``); False for others."""
        return io_graph_output(self, v, name)

    # -- last guard -----------------------------------------------------------------------------------
    def verify(self, folder: str, trials: int = 2) -> None:
        """Re-import ``folder`` and compare outputs bit for bit with the original on random inputs
        (``writer_quant_io.verify``, which also says how integer inputs / outputs are compared)."""
        io_verify(self, folder, trials)
