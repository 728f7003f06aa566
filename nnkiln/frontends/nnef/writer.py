"""``write_nnef(module, folder)``: a ``tosa``-level module → an NNEF 1.0.3 container (graph.nnef, one ``.dat``
per written constant, and ``graph.quant`` for quantized graphs).

Every tosa op becomes standard NNEF operations in flat syntax (no fragment definitions, so any NNEF 1.0.3
consumer reads the result). TOSA layouts are kept: the feature-map ops are wrapped in explicit ``transpose``
ops (NHWC → NCHW and back) and their weights are stored in NNEF's layouts. Constants become ``variable``s
(label ``c<N>``), written lazily: only constants read by a written op get a ``.dat``. Inputs are
``external``s named like the function arguments (``nnkiln.name``), outputs ``copy``s named like the results.
NNEF arithmetic is defined on ``scalar`` tensors only; ``integer``/``logical`` tensors can only be moved
(copy, reshape, transpose, concat, slice, select). Float tensors are written as ``scalar`` (f32 ``.dat``).

Inventory of the 69 TOSA 0.30 operators (how each is written; "exact" = re-importing gives the same
values bit for bit on our reference interpreter; ✗ = ``FrontendError`` naming the op and the reason):

=====================  =========================================================================================
tosa op                NNEF 1.0.3
=====================  =========================================================================================
ABS                    ``abs`` (float) — exact; integer ✗ (NNEF arithmetic is scalar-only)
ADD, SUB               ``add``/``sub`` (float) — exact; int32 ✗ except inside a quantized pattern (see below)
ARGMAX                 ``argmax_reduce`` + ``squeeze`` (float input, integer result) — exact
ARITHMETIC_RIGHT_SHIFT ✗ integer bit manipulation has no NNEF operation
AVG_POOL2D             ``avg_pool(border = 'ignore')`` in NCHW (TOSA excludes padding from the divisor) — exact
                       up to the summation order; int8: quantized pattern (any zero points, ``writer_quant_pool``)
BITWISE_AND/OR/XOR/NOT ✗ no bitwise operations in NNEF
CAST                   bool→int32 ``select(x, 1, 0)`` — exact; float↔int, int→int and int→bool ✗ (no conversion
                       operation in NNEF), except the quantize / dequantize patterns of quantized graphs
CEIL, FLOOR            ``ceil``/``floor`` — exact
CLAMP                  ``clamp(x, min, max)`` with scalar bounds (float); int8 after a RESCALE: quantized pattern
CLZ                    ✗ integer bit manipulation
CONCAT                 ``concat`` (any element type) — exact
COND_IF, WHILE_LOOP    ✗ NNEF graphs have no run-time control flow (``if`` is compile time only)
CONST                  ``variable`` + ``.dat`` (float32, int32 ``<integer>``, bool ``<logical>``); int8/int32
                       weights and biases of quantized patterns: quantized float ``.dat`` + graph.quant
CONV2D                 ``conv`` in NCHW, weights OIHW — exact up to summation order; int8: quantized pattern
                       (a grouped int8 conv, per-group CONV2Ds + int32 CONCAT + RESCALE: ``conv(groups = G)``)
CONV3D                 ``conv`` with 3 spatial axes (NCDHW, weights OIDHW) — float only
CUSTOM                 ``nnef.<op>`` customs made by our NNEF reader (RoI pooling / resampling) are written back
                       as that standard operation with its attributes; other customs ✗
DEPTHWISE_CONV2D       ``conv(groups = 0)`` with weights ``[C·M, 1, KH, KW]``; int8: quantized pattern
EQUAL, GREATER,        ``eq``/``gt``/``ge`` (float operands) — exact; integer operands ✗
GREATER_EQUAL
EXP, LOG, TANH,        ``exp``/``log``/``tanh``/``sigmoid``/``rsqrt``/``rcp`` — exact on our interpreter (same
SIGMOID, RSQRT,        f32 formula after re-import)
RECIPROCAL
FFT2D, RFFT2D          ✗ NNEF has no Fourier transforms or complex tensors
FULLY_CONNECTED        ``linear`` (bias as ``[1, OC]``); int8: quantized pattern
GATHER                 constant indices: ``slice``s + ``concat`` (exact); run-time indices ✗ (no gather in 1.0.3)
IDENTITY               ``copy`` — exact
INTDIV                 ✗ integer division
LOGICAL_AND/OR/NOT     ``and``/``or``/``not`` — exact
LOGICAL_XOR            ``or(and(a, not(b)), and(not(a), b))`` — exact
LOGICAL_LEFT_SHIFT,    ✗ integer bit manipulation
LOGICAL_RIGHT_SHIFT
MATMUL                 ``matmul`` of rank-3 tensors (float, zero points 0) — exact up to summation order; int8
                       with a constant right operand of batch 1 (+ RESCALE): ``linear`` with a zero bias
                       (quantized pattern); int8 of two run-time tensors + RESCALE: ``matmul`` between
                       quantized tensors, B's scale solved as ``s_C·t / s_A`` (quantized attention)
MAX_POOL2D             ``max_pool(border = 'ignore')`` in NCHW — exact; int8: quantized pattern
MAXIMUM, MINIMUM       ``max``/``min`` (float) — exact; int32 ✗ except inside the quantize pattern
MUL                    ``mul`` (float, shift 0) — exact; int32 product of two widened int8 tensors + RESCALE:
                       ``mul`` between quantized tensors (quantized pattern); other integer MULs ✗
NEGATE                 ``neg`` (float, zero points 0) — exact
PAD                    ``box`` of size 1 with ``border = 'constant'`` (+ ``pad_const · (1 − box(ones))`` when
                       the constant is not 0) — exact for float; other element types ✗
POW                    ``pow`` — exact
REDUCE_ALL, REDUCE_ANY ``ne(min_reduce / max_reduce(select(x, 1.0, 0.0)), 0.0)`` — exact
REDUCE_MAX, REDUCE_MIN ``max_reduce``/``min_reduce`` (float) — exact
REDUCE_SUM             ``sum_reduce`` (float) — exact up to summation order
REDUCE_PRODUCT         ``mul`` of unit ``slice``s in axis order — equal up to f32 rounding order (NNEF has no
                       product reduction)
RESCALE                int32 → int8 after CONV/FC/MATMUL/ADD, int8 → int8 (``copy`` with its own graph.quant
                       entry), and unit-scale int8 ↔ uint8 / int16 round trips (dropped: exact identities) —
                       quantized patterns (below); other RESCALEs ✗
RESHAPE, TRANSPOSE,    ``reshape``/``transpose``/``slice``/``copy`` (any element type) — exact
SLICE
RESIZE                 float: ``nearest_upsample`` / ``nearest_downsample`` / ``multilinear_upsample``
                       (symmetric, asymmetric or aligned, replicate border) when the TOSA sample positions and
                       f32 fractions are exactly those of the NNEF op (power-of-two bilinear factors), otherwise
                       an exact expansion (taps gathered by ``slice``/``concat``, TOSA's bilinear formula with
                       constant f32 weights in TOSA's evaluation order) — exact; int8/int16 ✗ (``writer_resize``)
REVERSE                ``concat`` of unit ``slice``s in reverse order (any element type) — exact
SCATTER                ✗ no scatter in NNEF 1.0.3
SELECT                 ``select`` (any element type) — exact
TABLE                  int8 tables the reader builds for a quantized sigmoid / tanh (recomputed from the tensors'
                       quantization and compared entry by entry): ``sigmoid`` / ``tanh``; other tables ✗
TILE                   ``concat`` of copies (any element type) — exact
TRANSPOSE_CONV2D       ``deconv`` in NCHW with weights ``[IC, OC, KH, KW]`` and ``output_shape`` — float only
=====================  =========================================================================================

Quantized graphs (``writer_quant``): int8 tosa made of the integer patterns our frontends emit (the ONNX QDQ
fusions and the NNEF reader's integer path, both built from ``frontends.common.quant``) is written as float
NNEF with ``graph.quant`` ``linear_quantize(min, max, bits = 8)`` entries, such that our reader rebuilds the
same integer arithmetic: quantize (MUL/CLAMP/CAST/ADD/MAXIMUM/MINIMUM[/SUB]/CAST, int8 or uint8 codes),
dequantize (CAST/SUB/CAST/MUL), CONV2D / DEPTHWISE_CONV2D / FULLY_CONNECTED / MATMUL (constant or run-time B) + RESCALE
(+ CLAMP, per-tensor or per-channel), int8 MAX_POOL2D / AVG_POOL2D (``writer_quant_pool``), the two-RESCALE ADD (a
constant operand included), int8→int8 RESCALE, CLAMP, CONCAT at one quantization, and int8 data movement
(TRANSPOSE / RESHAPE / IDENTITY / SLICE / TILE / REVERSE), grouped int8 convolutions (``writer_quant_conv``), and
int8 / uint8 graph inputs and outputs, written as float tensors of real values ``(q − zp)·s`` with their entries
(``writer_quant_io``: the written graph takes and returns real values, as our reader's interface). Scales are
solved from the RESCALE multipliers and the dequantize constants (``writer_quant_scales``) so that our reader
recomputes every multiplier, shift, zero point, bias and clamp bound exactly; each is checked while writing, and
afterwards the folder is re-imported and run on random inputs against the original — any difference is a
``FrontendError``, never a silently different model.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
from collections.abc import Sequence

import numpy as np
from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.func import FuncOp, ReturnOp
from xdsl.ir import Operation, SSAValue

from nnkiln.dialects.tosa.base import Kind, kind_of
from nnkiln.frontends.common.arith import shape_of
from nnkiln.frontends.nnef.tensor_file import write_tensor
from nnkiln.ir.elements import to_numpy
from nnkiln.ir.errors import FrontendError

FLOAT_KINDS = (Kind.F32,)


def lit(v: object) -> str:
    """An NNEF literal for a Python value (floats always with a point; ±inf as ±FLT_MAX)."""
    if isinstance(v, (bool, np.bool_)):
        return "true" if v else "false"
    if isinstance(v, (float, np.floating)):
        v = float(v)
        if math.isinf(v):
            v = float(np.finfo(np.float32).max) * (1 if v > 0 else -1)
        r = repr(v)
        return r if ("." in r or "e" in r or "n" in r) else r + ".0"
    if isinstance(v, str):
        return f"'{v}'"
    if isinstance(v, tuple):
        return "(" + ", ".join(lit(i) for i in v) + ")"
    if isinstance(v, list):
        return "[" + ", ".join(lit(i) for i in v) + "]"
    return str(int(v)) if isinstance(v, (int, np.integer)) else str(v)


def get(props: dict, key: str, default: object = None) -> object:
    """A property's Python value (IntegerAttr / FloatAttr / StringAttr / enum)."""
    a = props.get(key)
    if a is None:
        return default
    if hasattr(a, "value") and hasattr(a.value, "data"):
        return a.value.data
    if hasattr(a, "data"):
        return a.data
    return a


def ints(a: object) -> list[int]:
    if hasattr(a, "get_values"):
        return [int(v) for v in a.get_values()]  # type: ignore[union-attr]
    return [int(v) for v in a]  # type: ignore[union-attr]


def const_of(v: SSAValue) -> np.ndarray | None:
    owner = v.owner
    if isinstance(owner, Operation) and owner.name == "tosa.const":
        return to_numpy(owner.properties["values"])  # type: ignore[arg-type]
    return None


def kind(v: SSAValue) -> Kind:
    return kind_of(v.type)  # type: ignore[arg-type]


def unsupported(op: Operation, why: str) -> FrontendError:
    return FrontendError(f"cannot export {op.name} to NNEF 1.0.3: {why}")


def runs(idx: Sequence[int]) -> list[tuple[int, int]]:
    """Maximal runs of consecutive ascending indices as (begin, end)."""
    out: list[tuple[int, int]] = []
    for i in idx:
        i = int(i)
        if out and out[-1][1] == i:
            out[-1] = (out[-1][0], i + 1)
        else:
            out.append((i, i + 1))
    return out


class Writer:
    def __init__(self, folder: str) -> None:
        self.folder = folder
        self.lines: list[str] = []
        self.names: dict[SSAValue, str] = {}
        self.counter = 0
        self.dats: dict[str, bytes] = {}
        self.quant: dict[str, str] = {}  # tensor name -> graph.quant invocation text
        self.quant_writer = None  # a writer_quant.QuantWriter when the module has integer patterns
        self._gathers: dict[tuple, str] = {}
        self.extra_kinds: tuple[Kind, ...] = ()  # element kinds movement ops may carry (int8 in quantized graphs)
        self.last_conv = ""  # the NNEF name of the last conv/deconv (before the transpose back to NHWC)

    # -- naming / emission ----------------------------------------------------------------------------
    def fresh(self, prefix: str = "t") -> str:
        self.counter += 1
        return f"{prefix}{self.counter}"

    def emit(self, text: str, prefix: str = "t") -> str:
        name = self.fresh(prefix)
        self.lines.append(f"    {name} = {text};")
        return name

    def name(self, v: SSAValue) -> str:
        """The NNEF identifier of ``v``; constants are written on first use."""
        if v not in self.names:
            arr = const_of(v)
            if arr is None:
                raise FrontendError(f"internal: value {v} has no NNEF name")
            k = kind(v)
            if k not in (Kind.F32, Kind.I32, Kind.BOOL):
                users = sorted({u.operation.name for u in v.uses})
                raise FrontendError(f"cannot export a {v.type} constant read by {', '.join(users)} to NNEF 1.0.3: "
                                    "only float32, int32 and bool tensors exist outside the quantized patterns")
            self.names[v] = self.variable(arr)
        return self.names[v]

    def variable(self, arr: np.ndarray, dat: bytes | None = None) -> str:
        label = self.fresh("c")
        arr = np.asarray(arr)
        if arr.dtype == np.bool_:
            gen = "<logical>"
        elif arr.dtype.kind in "iu":
            gen, arr = "<integer>", arr.astype(np.int32)
        else:
            gen, arr = "", arr.astype(np.float32)
        shape = list(arr.shape) or [1]
        self.dats[label] = dat if dat is not None else write_tensor(arr.reshape(shape))
        self.lines.append(f"    {label} = variable{gen}(shape = {lit(shape)}, label = '{label}');")
        return label

    def transpose(self, x: str, perm: Sequence[int]) -> str:
        return self.emit(f"transpose({x}, axes = {lit(list(perm))})")

    def gather(self, x: str, shape: Sequence[int], axis: int, idx: Sequence[int]) -> str:
        """``x`` indexed by constant ``idx`` along ``axis`` (slices of runs + concat): exact."""
        idx = [int(i) for i in idx]
        if idx == list(range(shape[axis])):
            return x
        key = (x, axis, tuple(idx))
        if key in self._gathers:
            return self._gathers[key]
        parts = [self.emit(f"slice({x}, axes = [{axis}], begin = [{b}], end = [{e}])") for b, e in runs(idx)]
        out = parts[0] if len(parts) == 1 else self.emit(f"concat([{', '.join(parts)}], axis = {axis})")
        self._gathers[key] = out
        return out

    # -- ops ------------------------------------------------------------------------------------------
    def op(self, op: Operation) -> None:
        n = op.name.removeprefix("tosa.")
        if self.quant_writer is not None and self.quant_writer.handle(op):
            return
        if n == "const":
            return  # written lazily on first use
        fn = getattr(self, "w_" + n, None)
        if fn is None:
            raise unsupported(op, _WHY.get(n, "no standard-operation equivalent"))
        props = dict(op.properties.items())
        out = fn(op, props)
        if op.results:
            self.names[op.results[0]] = out

    def floats(self, op: Operation, *values: SSAValue) -> list[str]:
        vals = values or tuple(op.operands)
        for v in vals:
            if kind(v) not in FLOAT_KINDS:
                raise unsupported(op, f"operand of type {v.type}: NNEF arithmetic is defined on scalar (float) "
                                      "tensors only")
        return [self.name(v) for v in vals]

    def logicals(self, op: Operation) -> list[str]:
        for v in op.operands:
            if kind(v) is not Kind.BOOL:
                raise unsupported(op, f"operand of type {v.type} (expected i1)")
        return [self.name(v) for v in op.operands]

    def any_type(self, op: Operation) -> list[str]:
        for v in [*op.operands, *op.results]:
            if kind(v) not in (Kind.F32, Kind.I32, Kind.BOOL) + self.extra_kinds:
                raise unsupported(op, f"a tensor of type {v.type} has no NNEF 1.0.3 counterpart outside the "
                                      "quantized patterns")
        return [self.name(v) for v in op.operands]

    def _bin(self, nnef: str):  # noqa: ANN202
        def fn(op: Operation, props: dict) -> str:
            a, b = self.floats(op)
            return self.emit(f"{nnef}({a}, {b})")
        return fn

    def _un(self, nnef: str):  # noqa: ANN202
        def fn(op: Operation, props: dict) -> str:
            (a,) = self.floats(op)
            return self.emit(f"{nnef}({a})")
        return fn

    def __getattr__(self, attr: str):  # noqa: ANN204
        if attr.startswith("w_"):
            n = attr[2:]
            if n in _BIN:
                return self._bin(_BIN[n])
            if n in _UN:
                return self._un(_UN[n])
        raise AttributeError(attr)

    def w_mul(self, op: Operation, props: dict) -> str:
        if int(get(props, "shift", 0)) != 0:  # type: ignore[arg-type]
            raise unsupported(op, "a MUL with a shift is integer arithmetic")
        a, b = self.floats(op)
        return self.emit(f"mul({a}, {b})")

    def w_negate(self, op: Operation, props: dict) -> str:
        (a,) = self.floats(op)
        return self.emit(f"neg({a})")

    def w_logical_and(self, op: Operation, props: dict) -> str:
        a, b = self.logicals(op)
        return self.emit(f"and({a}, {b})")

    def w_logical_or(self, op: Operation, props: dict) -> str:
        a, b = self.logicals(op)
        return self.emit(f"or({a}, {b})")

    def w_logical_not(self, op: Operation, props: dict) -> str:
        (a,) = self.logicals(op)
        return self.emit(f"not({a})")

    def w_logical_xor(self, op: Operation, props: dict) -> str:
        a, b = self.logicals(op)
        left = self.emit(f"and({a}, {self.emit(f'not({b})')})")
        r = self.emit(f"and({self.emit(f'not({a})')}, {b})")
        return self.emit(f"or({left}, {r})")

    def w_identity(self, op: Operation, props: dict) -> str:
        (a,) = self.any_type(op)
        return self.emit(f"copy({a})")

    def w_select(self, op: Operation, props: dict) -> str:
        c, a, b = self.any_type(op)
        return self.emit(f"select({c}, {a}, {b})")

    def w_cast(self, op: Operation, props: dict) -> str:
        src, dst = kind(op.operands[0]), kind(op.results[0])
        x = self.name(op.operands[0]) if src in (Kind.BOOL, Kind.F32) else ""
        if src is Kind.BOOL and dst is Kind.F32:
            return self.emit(f"select({x}, 1.0, 0.0)")
        if src is Kind.BOOL and dst is Kind.I32:
            return self.emit(f"select({x}, 1, 0)")
        if src is Kind.F32 and dst is Kind.BOOL:
            return self.emit(f"ne({x}, 0.0)")
        raise unsupported(op, f"{op.operands[0].type} → {op.results[0].type}: NNEF 1.0.3 has no conversion between "
                              "scalar and integer tensors (outside the quantize/dequantize patterns)")

    def w_clamp(self, op: Operation, props: dict) -> str:
        (x,) = self.floats(op)
        lo, hi = float(get(props, "min_val")), float(get(props, "max_val"))  # type: ignore[arg-type]
        return self.emit(f"clamp({x}, {lit(lo)}, {lit(hi)})")

    def w_reshape(self, op: Operation, props: dict) -> str:
        (x,) = self.any_type(op)
        return self.emit(f"reshape({x}, shape = {lit(list(shape_of(op.results[0])))})")

    def w_transpose(self, op: Operation, props: dict) -> str:
        (x,) = self.any_type(op)
        return self.transpose(x, ints(props["perms"]))

    def w_concat(self, op: Operation, props: dict) -> str:
        xs = self.any_type(op)
        return self.emit(f"concat([{', '.join(xs)}], axis = {int(get(props, 'axis'))})")  # type: ignore[arg-type]

    def w_slice(self, op: Operation, props: dict) -> str:
        (x,) = self.any_type(op)
        start, size = ints(props["start"]), ints(props["size"])
        full = shape_of(op.operands[0])
        axes = [i for i in range(len(start)) if start[i] != 0 or size[i] != full[i]]
        if not axes:
            return self.emit(f"copy({x})")
        return self.emit(f"slice({x}, axes = {lit(axes)}, begin = {lit([start[a] for a in axes])}, "
                         f"end = {lit([start[a] + size[a] for a in axes])})")

    def w_pad(self, op: Operation, props: dict) -> str:
        (x,) = self.floats(op, op.operands[0])
        padding = ints(props["padding"])
        pairs = [(padding[2 * i], padding[2 * i + 1]) for i in range(len(padding) // 2)]
        box = f"size = {lit([1] * len(pairs))}, padding = {lit(pairs)}, border = 'constant'"
        out = self.emit(f"box({x}, {box})")
        c = float(get(props, "pad_const", 0.0))  # type: ignore[arg-type]
        if c != 0.0:
            ones = self.variable(np.ones(shape_of(op.operands[0]), np.float32))
            mask = self.emit(f"box({ones}, {box})")
            inv = self.emit(f"sub(1.0, {mask})")
            out = self.emit(f"add({out}, {self.emit(f'mul({inv}, {lit(c)})')})")
        return out

    def w_tile(self, op: Operation, props: dict) -> str:
        (x,) = self.any_type(op)
        out = x
        for ax, m in enumerate(ints(props["multiples"])):
            if m > 1:
                out = self.emit(f"concat([{', '.join([out] * m)}], axis = {ax})")
        return out if out != x else self.emit(f"copy({x})")

    def w_reverse(self, op: Operation, props: dict) -> str:
        (x,) = self.any_type(op)
        ax = int(get(props, "axis"))  # type: ignore[arg-type]
        size = shape_of(op.operands[0])[ax]
        parts = [self.emit(f"slice({x}, axes = [{ax}], begin = [{i}], end = [{i + 1}])") for i in reversed(range(size))]
        return parts[0] if len(parts) == 1 else self.emit(f"concat([{', '.join(parts)}], axis = {ax})")

    def w_gather(self, op: Operation, props: dict) -> str:
        idx = const_of(op.operands[1])
        if idx is None:
            raise unsupported(op, "run-time indices (NNEF 1.0.3 has no gather; constant indices are written as "
                                  "slices)")
        (x,) = self.any_type(op)[:1]
        n, k, c = shape_of(op.operands[0])
        parts = []
        for b in range(n):
            xb = x if n == 1 else self.emit(f"slice({x}, axes = [0], begin = [{b}], end = [{b + 1}])")
            parts.append(self.gather(xb, (1, k, c), 1, idx[b]))
        return parts[0] if n == 1 else self.emit(f"concat([{', '.join(parts)}], axis = 0)")

    def _reduce(self, op: Operation, props: dict, nnef: str) -> str:
        (x,) = self.floats(op)
        return self.emit(f"{nnef}({x}, axes = [{int(get(props, 'axis'))}])")  # type: ignore[arg-type]

    def w_reduce_sum(self, op: Operation, props: dict) -> str:
        return self._reduce(op, props, "sum_reduce")

    def w_reduce_max(self, op: Operation, props: dict) -> str:
        return self._reduce(op, props, "max_reduce")

    def w_reduce_min(self, op: Operation, props: dict) -> str:
        return self._reduce(op, props, "min_reduce")

    def _bool_reduce(self, op: Operation, props: dict, nnef: str) -> str:
        (x,) = self.logicals(op)
        f = self.emit(f"select({x}, 1.0, 0.0)")
        r = self.emit(f"{nnef}({f}, axes = [{int(get(props, 'axis'))}])")  # type: ignore[arg-type]
        return self.emit(f"ne({r}, 0.0)")

    def w_reduce_all(self, op: Operation, props: dict) -> str:
        return self._bool_reduce(op, props, "min_reduce")

    def w_reduce_any(self, op: Operation, props: dict) -> str:
        return self._bool_reduce(op, props, "max_reduce")

    def w_reduce_product(self, op: Operation, props: dict) -> str:
        (x,) = self.floats(op)
        ax = int(get(props, "axis"))  # type: ignore[arg-type]
        size = shape_of(op.operands[0])[ax]
        out = self.emit(f"slice({x}, axes = [{ax}], begin = [0], end = [1])") if size > 1 else self.emit(f"copy({x})")
        for i in range(1, size):
            out = self.emit(f"mul({out}, {self.emit(f'slice({x}, axes = [{ax}], begin = [{i}], end = [{i + 1}])')})")
        return out

    def w_argmax(self, op: Operation, props: dict) -> str:
        (x,) = self.floats(op)
        ax = int(get(props, "axis"))  # type: ignore[arg-type]
        t = self.emit(f"argmax_reduce({x}, axes = [{ax}])")
        return self.emit(f"squeeze({t}, axes = [{ax}])")

    def w_matmul(self, op: Operation, props: dict) -> str:
        a, b = self.floats(op)
        if int(get(props, "a_zp", 0) or 0) or int(get(props, "b_zp", 0) or 0):  # type: ignore[arg-type]
            raise unsupported(op, "zero points on a float matmul")
        return self.emit(f"matmul({a}, {b})")

    def w_fully_connected(self, op: Operation, props: dict) -> str:
        x, w, b = self.floats(op)
        return self.emit(f"linear({x}, {w}, {self.emit(f'unsqueeze({b}, axes = [0])')})")

    def w_avg_pool2d(self, op: Operation, props: dict) -> str:
        return self._pool(op, props, "avg_pool")

    def w_max_pool2d(self, op: Operation, props: dict) -> str:
        return self._pool(op, props, "max_pool")

    def _pool(self, op: Operation, props: dict, nnef: str, x: str | None = None) -> str:
        if x is None:
            (x,) = self.floats(op)
        k, s, p = ints(props["kernel"]), ints(props["stride"]), ints(props["pad"])
        xt = self.transpose(x, (0, 3, 1, 2))
        y = self.emit(f"{nnef}({xt}, size = {lit([1, 1, *k])}, stride = {lit([1, 1, *s])}, border = 'ignore', "
                      f"padding = {lit([(0, 0), (0, 0), (p[0], p[1]), (p[2], p[3])])})")
        return self.transpose(y, (0, 2, 3, 1))

    def w_conv2d(self, op: Operation, props: dict) -> str:
        return self.conv(op, props)

    def w_depthwise_conv2d(self, op: Operation, props: dict) -> str:
        return self.conv(op, props)

    def w_transpose_conv2d(self, op: Operation, props: dict) -> str:
        return self.conv(op, props)

    def w_conv3d(self, op: Operation, props: dict) -> str:
        return self.conv(op, props)

    def conv(self, op: Operation, props: dict, weight: str | None = None, bias: str | None = None,
             x_name: str | None = None, groups: int = 1) -> str:
        """A float conv-family op in NCHW; ``weight``/``bias`` (already in NNEF layout), ``x_name`` and the
        ``groups`` of a CONV2D (a grouped int8 conv, ``writer_quant_conv``) are given by the quantized patterns."""
        n = op.name.removeprefix("tosa.")
        if x_name is None:
            self.floats(op)
            for key in ("input_zp", "weight_zp"):
                if int(get(props, key, 0) or 0):  # type: ignore[arg-type]
                    raise unsupported(op, f"{key} on a float convolution")
        spatial = 3 if n == "conv3d" else 2
        to_cf, to_cl = (0, spatial + 1, *range(1, spatial + 1)), (0, *range(2, spatial + 2), 1)
        x = self.transpose(x_name or self.name(op.operands[0]), to_cf)
        wv = op.operands[1]
        wconst = const_of(wv) if weight is None else None
        if bias is None:
            bias = self.emit(f"unsqueeze({self.name(op.operands[2])}, axes = [0])")
        if n in ("conv2d", "conv3d"):
            if weight is None:
                weight = self.variable(np.transpose(wconst, to_cf)) if wconst is not None else \
                    self.transpose(self.name(wv), to_cf)
            p = ints(props["pad"])
            pairs = [(p[2 * i], p[2 * i + 1]) for i in range(spatial)]
            grp = f", groups = {groups}" if groups != 1 else ""
            y = self.emit(f"conv({x}, {weight}, {bias}, padding = {lit(pairs)}, stride = {lit(ints(props['stride']))}, "
                          f"dilation = {lit(ints(props['dilation']))}{grp})")
        elif n == "depthwise_conv2d":
            kh, kw, c, m = shape_of(wv)
            if weight is None:
                if wconst is not None:
                    weight = self.variable(np.transpose(wconst, (2, 3, 0, 1)).reshape(c * m, 1, kh, kw))
                else:
                    weight = self.emit(f"reshape({self.transpose(self.name(wv), (2, 3, 0, 1))}, "
                                       f"shape = {lit([c * m, 1, kh, kw])})")
            p = ints(props["pad"])
            y = self.emit(f"conv({x}, {weight}, {bias}, padding = {lit([(p[0], p[1]), (p[2], p[3])])}, "
                          f"stride = {lit(ints(props['stride']))}, dilation = {lit(ints(props['dilation']))}, "
                          f"groups = 0)")
        else:
            if weight is None:
                weight = self.variable(np.transpose(wconst, (3, 0, 1, 2))) if wconst is not None else \
                    self.transpose(self.name(wv), (3, 0, 1, 2))
            p = ints(props["out_pad"])
            osh = ints(props["out_shape"])
            oshape = [osh[0], osh[3], osh[1], osh[2]]
            y = self.emit(f"deconv({x}, {weight}, {bias}, padding = {lit([(p[0], p[1]), (p[2], p[3])])}, "
                          f"stride = {lit(ints(props['stride']))}, output_shape = {lit(oshape)})")
        self.last_conv = y
        return self.transpose(y, to_cl)

    def w_resize(self, op: Operation, props: dict) -> str:
        from nnkiln.frontends.nnef.writer_resize import write_resize

        return write_resize(self, op, props)

    def w_custom(self, op: Operation, props: dict) -> str:
        ident = str(get(props, "identifier", ""))
        if ident in ("nnef.avg_roi_pool", "nnef.max_roi_pool", "nnef.roi_resample") and len(op.operands) == 3:
            attrs = json.loads(str(get(props, "implementation_attrs", "{}")))
            x, rois, bidx = (self.name(v) for v in op.operands)
            args = "".join(f", {k} = {lit(_jsonlit(v))}" for k, v in sorted(attrs.items()))
            return self.emit(f"{ident.removeprefix('nnef.')}({x}, {rois}, {bidx}{args})")
        raise unsupported(op, f"custom operator '{ident}' has no standard NNEF operation")


def _jsonlit(v: object) -> object:
    """JSON attribute values back to NNEF literal values (lists of pairs → lists of tuples)."""
    if isinstance(v, list):
        if v and all(isinstance(i, list) and len(i) == 2 and all(isinstance(j, int) for j in i) for i in v):
            return [tuple(i) for i in v]
        return [_jsonlit(i) for i in v]
    return v


_BIN = {"add": "add", "sub": "sub", "pow": "pow", "maximum": "max", "minimum": "min", "greater": "gt",
        "greater_equal": "ge", "equal": "eq"}
_UN = {"reciprocal": "rcp", "exp": "exp", "log": "log", "abs": "abs", "floor": "floor", "ceil": "ceil",
       "rsqrt": "rsqrt", "sigmoid": "sigmoid", "tanh": "tanh"}
_WHY = {
    "arithmetic_right_shift": "integer bit manipulation has no NNEF operation",
    "logical_left_shift": "integer bit manipulation has no NNEF operation",
    "logical_right_shift": "integer bit manipulation has no NNEF operation",
    "bitwise_and": "NNEF has no bitwise operations", "bitwise_or": "NNEF has no bitwise operations",
    "bitwise_xor": "NNEF has no bitwise operations", "bitwise_not": "NNEF has no bitwise operations",
    "clz": "integer bit manipulation has no NNEF operation", "intdiv": "NNEF has no integer division",
    "cond_if": "NNEF graphs have no run-time control flow", "while_loop": "NNEF graphs have no run-time control flow",
    "fft2d": "NNEF has no Fourier transforms", "rfft2d": "NNEF has no Fourier transforms",
    "scatter": "NNEF 1.0.3 has no scatter operation", "table": "NNEF has no look-up-table operation",
    "rescale": "a RESCALE outside the quantized patterns (conv / fully_connected / add / concat / clamp "
               "requantization) has no NNEF form",
}


def _ident(name: str, used: set[str]) -> str:
    s = re.sub(r"[^A-Za-z0-9_]", "_", name) or "t"
    if not (s[0].isalpha() or s[0] == "_"):
        s = "t_" + s
    if re.fullmatch(r"[tc]\d+", s):
        s = "x_" + s
    base, i = s, 1
    while s in used:
        i += 1
        s = f"{base}_{i}"
    used.add(s)
    return s


def _has_integer_ops(func: FuncOp) -> bool:
    vals = [*func.body.blocks[0].args, *(v for op in func.walk() for v in op.results)]
    return any(kind(v) in (Kind.I8, Kind.U8, Kind.I16) for v in vals if hasattr(v.type, "element_type"))


def write_nnef(module: ModuleOp, folder: str, graph_name: str = "G", *, verify: bool = True) -> None:
    """Write ``module``'s entry function as an NNEF container folder (graph.nnef, ``.dat`` files, graph.quant).

    Raises ``FrontendError`` naming the first op that NNEF 1.0.3 cannot express (see the module docstring).
    For quantized graphs (int8 tensors), ``verify`` re-imports the folder and checks that the integer
    arithmetic is the original one."""
    from nnkiln.reference import entry_function, input_names, output_names

    func: FuncOp = entry_function(module)
    w = Writer(folder)
    quantized = _has_integer_ops(func)
    if quantized:
        from nnkiln.frontends.nnef.writer_quant import QuantWriter

        w.quant_writer = QuantWriter(w, func)
    used: set[str] = set()
    in_names = [_ident(n, used) for n in input_names(func)]
    out_names = [_ident(n, used) for n in output_names(func)]
    kinds = {Kind.F32: "", Kind.I32: "<integer>", Kind.BOOL: "<logical>"}
    block = func.body.blocks[0]
    qw = w.quant_writer
    for arg, nm in zip(block.args, in_names):
        k = kind(arg)
        if qw is not None and qw.graph_input(arg, nm):  # int8 / uint8: real values + graph.quant (writer_quant_io)
            continue
        if k not in kinds:
            raise FrontendError(f"cannot export input '{nm}' of type {arg.type} to NNEF 1.0.3: graph inputs are "
                                "float32, int32 or bool, or int8 / uint8 in a quantized graph")
        w.lines.append(f"    {nm} = external{kinds[k]}(shape = {lit(list(shape_of(arg)) or [1])});")
        w.names[arg] = nm
    ret: ReturnOp | None = None
    for op in block.ops:
        if isinstance(op, ReturnOp):
            ret = op
            break
        w.op(op)
    assert ret is not None
    for v, nm in zip(ret.operands, out_names):
        if qw is not None and qw.graph_output(v, nm):
            continue
        if kind(v) not in kinds:
            raise FrontendError(f"cannot export output '{nm}' of type {v.type} to NNEF 1.0.3 (only float32, int32 "
                                "and bool tensors; dequantize integer outputs)")
        w.lines.append(f"    {nm} = copy({w.name(v)});")
    text = (f"version 1.0;\n\ngraph {graph_name}( {', '.join(in_names)} ) -> ( {', '.join(out_names)} )\n{{\n"
            + "\n".join(w.lines) + "\n}\n")
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "graph.nnef"), "w", encoding="ascii") as f:
        f.write(text)
    for label, data in w.dats.items():
        with open(os.path.join(folder, label + ".dat"), "wb") as f:
            f.write(data)
    qpath = os.path.join(folder, "graph.quant")
    if w.quant:
        with open(qpath, "w", encoding="ascii") as f:
            f.write("".join(f'"{k}": {v};\n' for k, v in w.quant.items()))
    elif os.path.exists(qpath):
        os.remove(qpath)
    if quantized and verify:
        w.quant_writer.verify(folder)  # type: ignore[union-attr]


def translate_main(argv: Sequence[str] | None = None) -> int:
    """``nnkiln translate --to nnef MODEL -o DIR``: import MODEL (any supported format) and write NNEF."""
    p = argparse.ArgumentParser(prog="nnkiln translate")
    p.add_argument("--to", choices=["nnef"], default="nnef")
    p.add_argument("model")
    p.add_argument("-o", "--output", required=True)
    p.add_argument("--shape", action="append", default=[], metavar="NAME=D0,D1,...", help="bind an input's symbolic shape")
    args = p.parse_args(list(argv) if argv is not None else None)
    from nnkiln.frontends import load

    shapes = {}
    for spec in args.shape:
        name, _, dims = spec.partition("=")
        try:
            shapes[name] = [int(d) for d in dims.split(",") if d]
        except ValueError:
            p.error(f"--shape {spec!r}: expected NAME=D0,D1,...")
    write_nnef(load(args.model, shapes or None), args.output)  # errors reach the CLI's handler
    print(f"{args.model}: written as NNEF to {args.output}")
    return 0
