"""NNEF flat graph → ``tosa``-level module (spec §4 semantics; TOSA 0.30 ops).

``lower_container(container)`` / ``lower_graph(graph, arrays, file)`` build ``func.func @main`` with one
argument per ``external`` tensor (in the graph's input order) and one result per graph output, both named
with ``nnkiln.name``. Every op carries ``source_loc(file, <op name>, <graph line>)``.

Layout: tensors keep NNEF's layout (N C D..); convolutions and pools transpose to TOSA's channels-last and
back (``frontends.common.nn``); back-to-back transposes are left to ``cancel-transpose-pairs``.

Types: ``scalar`` → f32, ``integer`` → i32, ``logical`` → i1. Variables become ``tosa.const`` (numpy),
quantized ``.dat`` data is decoded to reals unless the integer path of ``lowering_quant`` applies.
Compile-time constant sub-graphs (``constant``/``variable`` inputs only) are folded with numpy when cheap
(element-wise and shape ops).

Broadcasting (§4.2): shapes align from dimension 0 (trailing singleton dimensions are implicit), so the
lower-rank operand is reshaped with *trailing* 1s before TOSA's equal-rank broadcast.

Compound operations kept whole (``KEEP``) because TOSA has a better direct form: ``sqr`` (MUL), ``rsqrt``
(RSQRT), ``rsqr``, ``min``/``max`` (MINIMUM/MAXIMUM), ``clamp`` (CLAMP for constant bounds), ``relu``
(CLAMP), ``sigmoid``, ``tanh``, ``linear`` (FULLY_CONNECTED for rank-2 input), ``max_pool``/``avg_pool``
(MAX/AVG_POOL2D), ``nearest_upsample``/``nearest_downsample``/``area_downsample``, ``leaky_relu``,
``softmax`` (lowered as its body in float; whole in integer arithmetic when quantized). All other compounds
are expanded into primitives (their bodies are normative).

Decisions:

* ``round(x)`` is ``floor(x + 0.5)`` (§4.2.1); ``sign(0) = 0``; ``x / y`` is ``x · RECIPROCAL(y)``.
* ``update(variable, value)`` returns ``value``; the persistent variable state of §4.8 is not modelled
  (a lowered module is a pure function of its inputs; the variable keeps its loaded value).
* ``argmax_reduce``/``argmin_reduce`` over several axes give the row-major flat index over the reduced axes
  (first occurrence); argmin is ARGMAX of the negation.
* ``avg_roi_pool``, ``max_roi_pool`` and ``roi_resample`` have tensor-valued boxes: they become
  ``tosa.custom`` ops (identifiers ``nnef.avg_roi_pool`` etc.) with reference kernels registered in
  :mod:`nnkiln.reference.custom_nnef`; the compounds ``*_roi_align`` expand to ``roi_resample`` + pool.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.ir import SSAValue

from nnkiln.dialects.tosa.base import Kind, element_type, kind_of
from nnkiln.frontends.common.arith import etype, shape_of
from nnkiln.frontends.common.broadcast import reshape
from nnkiln.frontends.common.graph import GraphBuilder, too_large
from nnkiln.frontends.nnef.ast import Prim
from nnkiln.frontends.nnef.expand import FlatGraph, FlatOp, TensorRef
from nnkiln.ir.diagnostics import source_loc
from nnkiln.ir.errors import NnefError

Val = SSAValue | np.ndarray

KEEP = frozenset({
    "sqr", "rsqrt", "rsqr", "min", "max", "clamp", "relu", "sigmoid", "tanh", "linear", "max_pool", "avg_pool",
    "nearest_upsample", "nearest_downsample", "area_downsample", "leaky_relu", "softmax",
})

NP_DTYPE = {Prim.SCALAR: np.dtype(np.float32), Prim.INTEGER: np.dtype(np.int32), Prim.LOGICAL: np.dtype(np.bool_)}
KIND = {Prim.SCALAR: Kind.F32, Prim.INTEGER: Kind.I32, Prim.LOGICAL: Kind.BOOL}


class NnefGraphBuilder(GraphBuilder):
    """A GraphBuilder whose locations carry the NNEF line and whose errors are NnefErrors."""

    line: int = 0

    def emit(self, op_cls, operands, element_types, **attrs):  # type: ignore[no-untyped-def,override]
        op = super().emit(op_cls, operands, element_types, **attrs)
        op.location = source_loc(self.file, self.node, self.line)
        return op

    def const(self, array: np.ndarray, tensor_type: TensorType | None = None) -> SSAValue:
        v = super().const(array, tensor_type)
        owner = v.owner
        if getattr(owner, "location", None) is not None and self.line:
            owner.location = source_loc(self.file, self.node, self.line)  # type: ignore[union-attr]
        return v

    def error(self, message: str) -> NnefError:  # type: ignore[override]
        return NnefError(f"'{self.node}': {message}", file=self.file, line=self.line)


Handler = Callable[["Lowerer", FlatOp], None]
HANDLERS: dict[str, Handler] = {}


def handles(*names: str) -> Callable[[Handler], Handler]:
    def register(fn: Handler) -> Handler:
        for n in names:
            HANDLERS[n] = fn
        return fn

    return register


class Lowerer:
    """State of one lowering: the builder and the value of every flat-graph tensor."""

    def __init__(self, graph: FlatGraph, arrays: Mapping[str, np.ndarray], file: str,
                 quant: Mapping[str, object] | None = None, raw: Mapping[str, object] | None = None) -> None:
        self.graph = graph
        self.arrays = arrays
        self.file = file
        self.quant = dict(quant or {})
        self.raw = dict(raw or {})  # label -> TensorData (for the integer path)
        for r in graph.inputs:
            if r.dtype is Prim.STRING:
                raise NnefError(f"graph input '{r.name}' is a tensor of strings, which nnkiln does not support",
                                file=file)
        inputs = [(r.name, TensorType(element_type(KIND[r.dtype]), list(r.shape))) for r in graph.inputs]
        self.g = NnefGraphBuilder(file, inputs)
        self.vals: dict[str, Val] = {}
        for ref, arg in zip(graph.inputs, self.g.block.args):
            self.vals[ref.name] = arg
        self.op: FlatOp | None = None
        self.qstate: dict[str, object] = {}  # tensor name -> integer-domain info (lowering_quant)

    # -- errors -----------------------------------------------------------------------------------
    def error(self, msg: str) -> NnefError:
        return self.g.error(msg)

    # -- values -----------------------------------------------------------------------------------
    def value(self, v: object, prim: Prim = Prim.SCALAR) -> Val:
        """The value of an op argument: a TensorRef's value or a literal as a 0-d numpy array."""
        if isinstance(v, TensorRef):
            return self.vals[v.name]
        if isinstance(v, (bool, int, float)):
            return np.asarray(v, dtype=NP_DTYPE[prim])
        raise self.error(f"expected a tensor argument, found {v!r}")

    def ssa(self, v: Val, prim: Prim | None = None) -> SSAValue:
        if isinstance(v, SSAValue):
            return v
        arr = np.asarray(v)
        if prim is not None:
            arr = arr.astype(NP_DTYPE[prim], copy=False)
        if arr.ndim == 0:
            arr = arr.reshape(1)
        return self.g.const(np.ascontiguousarray(arr))

    def set(self, ref: object, v: Val) -> None:
        assert isinstance(ref, TensorRef)
        if not isinstance(v, SSAValue):
            v = np.asarray(v).astype(NP_DTYPE[ref.dtype], copy=False).reshape(ref.shape)
        else:
            have = shape_of(v)
            if have != tuple(ref.shape):
                v = reshape(self.g, v, ref.shape)
        self.vals[ref.name] = v

    def out(self, op: FlatOp, v: Val, i: int = 0) -> None:
        self.set(list(op.outputs.values())[i], v)

    def unfold_large(self, op: FlatOp) -> None:
        """Inputs computed at import (numpy values: weights, shape arithmetic) of an op whose result has more
        than ``FOLD_MAX_ITEMS`` items become ``tosa.const``, so the op runs at run time instead of building
        its result in memory here (a document of a few lines could otherwise ask for gigabytes at import)."""
        if op.name in ("constant", "variable") or not any(
                math.prod(ref.shape) > FOLD_MAX_ITEMS for ref in op.results):
            return
        for v in op.inputs.values():
            for ref in v if isinstance(v, (list, tuple)) else [v]:
                if isinstance(ref, TensorRef) and isinstance(self.vals.get(ref.name), np.ndarray):
                    self.vals[ref.name] = self.ssa(self.vals[ref.name], ref.dtype)

    # -- run --------------------------------------------------------------------------------------
    def run(self) -> ModuleOp:
        from nnkiln.frontends.nnef import (  # noqa: F401  (register handlers)
            lowering_quant,
            lowering_v105,  # noqa: F401  (NNEF 1.0.5 additions)
            lowering_window,
        )

        for ref in self.graph.inputs:
            lowering_quant.apply(self, ref)
        for op in self.graph.operations:
            self.op = op
            self.g.at_node(op.name)
            self.g.line = op.line
            if any(ref.dtype is Prim.STRING for ref in op.results):
                raise self.error(f"'{op.name}' makes a tensor of strings, which nnkiln does not support (no "
                                 "run-time operation computes on strings)")
            if op.name == "external":
                continue
            handler = HANDLERS.get(op.name)
            if handler is None:
                raise self.error(f"operation '{op.name}' is not supported")
            if lowering_quant.try_integer(self, op):
                continue
            self.unfold_large(op)
            handler(self, op)
            if self.quant:
                for ref in op.results:
                    if ref.name in self.quant and not ref.name.startswith("$"):
                        lowering_quant.apply(self, ref)
        outs = []
        for ref in self.graph.outputs:
            v = self.vals[ref.name]
            if isinstance(v, np.ndarray):
                self.g.at_node(ref.name)
                v = self.ssa(v.reshape(ref.shape))
            v = lowering_quant.to_real_output(self, ref, v)
            outs.append((ref.name, v))
        return self.g.finish(outs)


# ---------------------------------------------------------------------------------------------------
# helpers


def rank_of(v: Val) -> int:
    return len(shape_of(v)) if isinstance(v, SSAValue) else np.ndim(v)


def trailing(shape: Sequence[int], rank: int) -> tuple[int, ...]:
    return tuple(shape) + (1,) * (rank - len(shape))


def to_rank(lw: Lowerer, v: Val, rank: int) -> Val:
    """NNEF broadcasting: append trailing singleton dimensions."""
    if not isinstance(v, SSAValue):
        v = np.asarray(v)
        return v.reshape(trailing(v.shape, rank))
    return reshape(lw.g, v, trailing(shape_of(v), rank))


def elementwise(lw: Lowerer, op_cls: type, args: Sequence[Val], out: Prim, arg_prims: Sequence[Prim],
                **attrs: object) -> SSAValue:
    rank = max(max(rank_of(a) for a in args), 1)
    vals = [lw.ssa(to_rank(lw, a, rank), p) for a, p in zip(args, arg_prims)]  # type: ignore[arg-type]
    return lw.g.value(op_cls, vals, element_type(KIND[out]), **attrs)


def np_bcast(*args: np.ndarray) -> list[np.ndarray]:
    rank = max(max(a.ndim for a in args), 1)
    return [a.reshape(trailing(a.shape, rank)) for a in args]


def full_like(lw: Lowerer, value: float, like: SSAValue) -> SSAValue:
    kind = kind_of(like.type)  # type: ignore[arg-type]
    dt = np.bool_ if kind is Kind.BOOL else (np.int32 if kind is Kind.I32 else np.float32)
    return lw.g.const(np.full((1,) * len(shape_of(like)), value, dtype=dt))


# ---------------------------------------------------------------------------------------------------
# tensor introducing, copy, update


FOLD_MAX_ITEMS = 1 << 22
"""Largest result an op on import-time (numpy) values is computed for at import (see ``Lowerer.unfold_large``)."""
SPLAT_INLINE_MAX = 1 << 24
"""A ``constant`` splat of more items than this becomes a one-item constant and a run-time TILE."""


@handles("constant")
def _constant(lw: Lowerer, op: FlatOp) -> None:
    shape = [int(s) for s in op.attribs["shape"]]  # type: ignore[union-attr]
    value = list(op.attribs["value"])  # type: ignore[arg-type]
    dt = NP_DTYPE[op.dtype or Prim.SCALAR]
    why = too_large(shape, np.dtype(dt).itemsize)
    if why is not None:
        raise lw.error(f"constant of {why}")
    if dt == np.int32 and any(not -(1 << 31) <= int(v) < (1 << 31) for v in value):
        raise lw.error("constant: a value outside the 32-bit range of nnkiln's integer tensors")
    arr = np.asarray(value, dtype=dt)
    count = int(np.prod(shape, dtype=np.int64))
    if arr.size == 1 and count > SPLAT_INLINE_MAX:
        # A large splat is not built at import (a fuzzed shape could ask for gigabytes): one item,
        # tiled at run time. Constant folding leaves it alone (its result exceeds fold's limit).
        from nnkiln.dialects.tosa.ops_data_layout import TileOp

        one = lw.g.const(np.full((1,) * len(shape), arr[0], dtype=dt))
        lw.out(op, lw.g.value(TileOp, [one], one.type.element_type, multiples=shape))  # type: ignore[attr-defined]
        return
    arr = np.full(shape, arr[0], dtype=dt) if arr.size == 1 else arr.reshape(shape)
    lw.out(op, arr)


@handles("variable")
def _variable(lw: Lowerer, op: FlatOp) -> None:
    label = str(op.attribs["label"])
    arr = lw.arrays.get(label)
    if arr is None:
        lower = {k.lower(): k for k in lw.arrays}
        key = lower.get(label.lower())
        arr = lw.arrays.get(key) if key is not None else None
    if arr is None:
        raise lw.error(f"no data for variable '{label}'")
    # no copy when the data already has the tensor's type (a weight file is not held twice); read-only, so
    # that no lowering can change the container's data in place
    arr = np.asarray(arr).astype(NP_DTYPE[op.dtype or Prim.SCALAR], copy=False).view()
    arr.flags.writeable = False
    lw.out(op, arr)


@handles("copy")
def _copy(lw: Lowerer, op: FlatOp) -> None:
    lw.out(op, lw.value(op.inputs["x"], op.dtype or Prim.SCALAR))


@handles("update")
def _update(lw: Lowerer, op: FlatOp) -> None:
    """update (§4.8): the result is the new value; the variable's persistent state is not modelled."""
    lw.out(op, lw.value(op.inputs["value"], op.dtype or Prim.SCALAR))


# ---------------------------------------------------------------------------------------------------
# element-wise


def _np_round(x: np.ndarray) -> np.ndarray:
    return np.floor(x + np.float32(0.5))


NP_UNARY: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "neg": np.negative, "rcp": lambda x: np.float32(1.0) / x, "exp": np.exp, "log": np.log, "abs": np.abs,
    "sign": np.sign, "not": np.logical_not, "floor": np.floor, "ceil": np.ceil, "round": _np_round,
    "sqr": lambda x: x * x, "rsqrt": lambda x: np.float32(1.0) / np.sqrt(x), "rsqr": lambda x: np.float32(1.0) / (x * x),
    "relu": lambda x: np.maximum(x, np.float32(0)), "sigmoid": lambda x: np.float32(1) / (np.float32(1) + np.exp(-x)),
    "tanh": np.tanh,
}


@handles(*[n for n in NP_UNARY if n not in ("relu",)])
def _unary(lw: Lowerer, op: FlatOp) -> None:
    from nnkiln.dialects.tosa import ops_activation as act
    from nnkiln.dialects.tosa import ops_comparison as cmp
    from nnkiln.dialects.tosa import ops_elementwise_binary as bi
    from nnkiln.dialects.tosa import ops_elementwise_ternary as ter
    from nnkiln.dialects.tosa import ops_elementwise_unary as un

    prim = Prim.LOGICAL if op.name == "not" else Prim.SCALAR
    x = lw.value(op.inputs["x"], prim)
    if isinstance(x, np.ndarray):
        with np.errstate(all="ignore"):
            lw.out(op, NP_UNARY[op.name](x.astype(NP_DTYPE[prim])))
        return
    g, et = lw.g, etype(x)
    simple = {"neg": un.NegateOp, "rcp": un.ReciprocalOp, "exp": un.ExpOp, "log": un.LogOp, "abs": un.AbsOp,
              "not": un.LogicalNotOp, "floor": un.FloorOp, "ceil": un.CeilOp, "rsqrt": un.RsqrtOp,
              "sigmoid": act.SigmoidOp, "tanh": act.TanhOp}
    if op.name in simple:
        lw.out(op, g.value(simple[op.name], [x], et))
    elif op.name == "round":
        lw.out(op, g.value(un.FloorOp, [g.value(bi.AddOp, [x, full_like(lw, 0.5, x)], et)], et))
    elif op.name == "sign":
        zero, one, mone = full_like(lw, 0.0, x), full_like(lw, 1.0, x), full_like(lw, -1.0, x)
        b = element_type(Kind.BOOL)
        pos = g.value(cmp.GreaterOp, [x, zero], b)
        neg = g.value(cmp.GreaterOp, [zero, x], b)
        inner = g.value(ter.SelectOp, [neg, mone, g.value(bi.MulOp, [x, zero], et, shift=0)], et)
        lw.out(op, g.value(ter.SelectOp, [pos, one, inner], et))
    elif op.name == "sqr":
        lw.out(op, g.value(bi.MulOp, [x, x], et, shift=0))
    elif op.name == "rsqr":
        lw.out(op, g.value(un.ReciprocalOp, [g.value(bi.MulOp, [x, x], et, shift=0)], et))


@handles("relu")
def _relu(lw: Lowerer, op: FlatOp) -> None:
    from nnkiln.dialects.tosa.ops_activation import ClampOp

    x = lw.value(op.inputs["x"])
    if isinstance(x, np.ndarray):
        lw.out(op, np.maximum(x, np.float32(0)))
        return
    lw.out(op, lw.g.value(ClampOp, [x], etype(x), min_val=0.0, max_val=float(np.finfo(np.float32).max)))


@handles("leaky_relu")
def _leaky_relu(lw: Lowerer, op: FlatOp) -> None:
    """leaky_relu = select(x < 0, alpha·x, x) (§4.9.1, via prelu)."""
    from nnkiln.dialects.tosa import ops_comparison as cmp
    from nnkiln.dialects.tosa import ops_elementwise_binary as bi
    from nnkiln.dialects.tosa import ops_elementwise_ternary as ter

    x = lw.ssa(lw.value(op.inputs["x"]), Prim.SCALAR)
    alpha = float(op.attribs["alpha"])  # type: ignore[arg-type]
    g, et = lw.g, etype(x)
    neg = g.value(cmp.GreaterOp, [full_like(lw, 0.0, x), x], element_type(Kind.BOOL))
    lw.out(op, g.value(ter.SelectOp, [neg, g.value(bi.MulOp, [x, full_like(lw, alpha, x)], et, shift=0), x], et))


@handles("softmax")
def _softmax(lw: Lowerer, op: FlatOp) -> None:
    """softmax (§4.9.1) is kept whole so that the integer path (``lowering_quant_int``) can take a quantized
    one at once; in float it is lowered as its normative body, op by op through the primitives' handlers:
    ``m = max_reduce(x, axes)``, ``e = exp(x - m)``, ``y = e / sum_reduce(e, axes)``."""
    x, axes = op.inputs["x"], op.attribs["axes"]
    y = list(op.outputs.values())[0]
    assert isinstance(y, TensorRef)
    reduced = tuple(1 if i in axes else d for i, d in enumerate(y.shape))  # type: ignore[operator]
    m, d, e, s = (TensorRef(f"{y.name}$softmax_{k}", Prim.SCALAR, shp)
                  for k, shp in (("max", reduced), ("sub", y.shape), ("exp", y.shape), ("sum", reduced)))
    body = [FlatOp("max_reduce", None, {"input": x}, {"axes": axes}, {"output": m}, op.line),
            FlatOp("sub", None, {"x": x, "y": m}, {}, {"z": d}, op.line),
            FlatOp("exp", None, {"x": d}, {}, {"y": e}, op.line),
            FlatOp("sum_reduce", None, {"input": e}, {"axes": axes}, {"output": s}, op.line),
            FlatOp("div", None, {"x": e, "y": s}, {}, {"z": y}, op.line)]
    for prim in body:
        HANDLERS[prim.name](lw, prim)


def _np_binary(name: str, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    x, y = np_bcast(x, y)
    with np.errstate(all="ignore"):
        return {
            "add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide, "pow": np.power,
            "lt": np.less, "gt": np.greater, "le": np.less_equal, "ge": np.greater_equal, "eq": np.equal,
            "ne": np.not_equal, "and": np.logical_and, "or": np.logical_or, "min": np.minimum, "max": np.maximum,
        }[name](x, y)


@handles("add", "sub", "mul", "div", "pow", "lt", "gt", "le", "ge", "eq", "ne", "and", "or", "min", "max")
def _binary(lw: Lowerer, op: FlatOp) -> None:
    from nnkiln.dialects.tosa import ops_comparison as cmp
    from nnkiln.dialects.tosa import ops_elementwise_binary as bi
    from nnkiln.dialects.tosa import ops_elementwise_unary as un

    logical_in = op.name in ("and", "or")
    p = Prim.LOGICAL if logical_in else Prim.SCALAR
    x, y = lw.value(op.inputs["x"], p), lw.value(op.inputs["y"], p)
    if isinstance(x, np.ndarray) and isinstance(y, np.ndarray):
        lw.out(op, _np_binary(op.name, x.astype(NP_DTYPE[p]), y.astype(NP_DTYPE[p])))
        return
    n = op.name
    b = Prim.LOGICAL
    if n == "pow" and isinstance(y, np.ndarray) and y.size >= 1 and np.all(y == y.flat[0]):
        e = float(y.flat[0])
        xs = lw.ssa(x, p)
        special = {2.0: lambda: lw.g.value(bi.MulOp, [xs, xs], etype(xs), shift=0),
                   1.0: lambda: xs,
                   -1.0: lambda: lw.g.value(un.ReciprocalOp, [xs], etype(xs)),
                   -0.5: lambda: lw.g.value(un.RsqrtOp, [xs], etype(xs)),
                   -2.0: lambda: lw.g.value(un.ReciprocalOp, [lw.g.value(bi.MulOp, [xs, xs], etype(xs), shift=0)],
                                            etype(xs))}
        if e in special and np.ndim(y) <= rank_of(xs) and all(d == 1 for d in np.shape(y)):
            lw.out(op, special[e]())
            return
    table: dict[str, tuple[type, bool, Prim, dict]] = {
        "add": (bi.AddOp, False, p, {}), "sub": (bi.SubOp, False, p, {}), "mul": (bi.MulOp, False, p, {"shift": 0}),
        "pow": (bi.PowOp, False, p, {}), "lt": (cmp.GreaterOp, True, b, {}), "gt": (cmp.GreaterOp, False, b, {}),
        "le": (cmp.GreaterEqualOp, True, b, {}), "ge": (cmp.GreaterEqualOp, False, b, {}),
        "eq": (cmp.EqualOp, False, b, {}), "and": (bi.LogicalAndOp, False, b, {}),
        "or": (bi.LogicalOrOp, False, b, {}), "min": (bi.MinimumOp, False, p, {}), "max": (bi.MaximumOp, False, p, {}),
    }
    if n == "div":
        ys = y
        if isinstance(y, np.ndarray):
            with np.errstate(all="ignore"):
                recip: Val = np.asarray(np.float32(1.0) / y.astype(np.float32))
        else:
            recip = lw.g.value(un.ReciprocalOp, [ys], etype(ys))
        lw.out(op, elementwise(lw, bi.MulOp, [x, recip], p, [p, p], shift=0))
        return
    if n == "ne":
        eq = elementwise(lw, cmp.EqualOp, [x, y], b, [p, p])
        lw.out(op, lw.g.value(un.LogicalNotOp, [eq], etype(eq)))
        return
    cls, swap, out, attrs = table[n]
    args = [y, x] if swap else [x, y]
    lw.out(op, elementwise(lw, cls, args, out, [p, p], **attrs))


@handles("select")
def _select(lw: Lowerer, op: FlatOp) -> None:
    from nnkiln.dialects.tosa.ops_elementwise_ternary import SelectOp

    p = op.dtype or Prim.SCALAR
    c = lw.value(op.inputs["condition"], Prim.LOGICAL)
    t, f = lw.value(op.inputs["true_value"], p), lw.value(op.inputs["false_value"], p)
    if all(isinstance(v, np.ndarray) for v in (c, t, f)):
        cc, tt, ff = np_bcast(np.asarray(c, bool), t, f)  # type: ignore[arg-type]
        lw.out(op, np.where(cc, tt, ff))
        return
    lw.out(op, elementwise(lw, SelectOp, [c, t, f], p, [Prim.LOGICAL, p, p]))


@handles("clamp")
def _clamp(lw: Lowerer, op: FlatOp) -> None:
    """clamp = max(min(x, b), a) (§4.2.4): CLAMP when both bounds are uniform constants."""
    from nnkiln.dialects.tosa.ops_activation import ClampOp
    from nnkiln.dialects.tosa.ops_elementwise_binary import MaximumOp, MinimumOp

    x, a, b = (lw.value(op.inputs[k]) for k in ("x", "a", "b"))
    if all(isinstance(v, np.ndarray) for v in (x, a, b)):
        lw.out(op, np.maximum(*np_bcast(np.minimum(*np_bcast(x, b)), a)))  # type: ignore[arg-type]
        return
    uniform = all(isinstance(v, np.ndarray) and v.size >= 1 and np.all(v == v.flat[0]) and
                  np.ndim(v) <= rank_of(x) for v in (a, b))
    if uniform and not isinstance(x, np.ndarray) and float(a.flat[0]) <= float(b.flat[0]):  # type: ignore[union-attr]
        lw.out(op, lw.g.value(ClampOp, [x], etype(x), min_val=float(a.flat[0]), max_val=float(b.flat[0])))  # type: ignore[union-attr]
        return
    m = elementwise(lw, MinimumOp, [x, b], Prim.SCALAR, [Prim.SCALAR] * 2)
    lw.out(op, elementwise(lw, MaximumOp, [m, a], Prim.SCALAR, [Prim.SCALAR] * 2))


# ---------------------------------------------------------------------------------------------------
# reductions


def reduce_axes(lw: Lowerer, op_cls: type, x: SSAValue, axes: Sequence[int]) -> SSAValue:
    for a in sorted(set(axes)):
        if shape_of(x)[a] != 1 or True:
            x = lw.g.value(op_cls, [x], etype(x), axis=a)
    return x


@handles("sum_reduce", "max_reduce", "min_reduce", "mean_reduce")
def _reduce(lw: Lowerer, op: FlatOp) -> None:
    from nnkiln.dialects.tosa.ops_reduction import ReduceMaxOp, ReduceMinOp, ReduceSumOp
    from nnkiln.frontends.common.nn import scalar_mul

    x = lw.value(op.inputs["input"])
    axes = [int(a) for a in op.attribs["axes"]]  # type: ignore[union-attr]
    normalize = bool(op.attribs.get("normalize", False)) or op.name == "mean_reduce"
    shape = np.shape(x) if isinstance(x, np.ndarray) else shape_of(x)
    count = math.prod(shape[a] for a in axes) if axes else 1
    if isinstance(x, np.ndarray):
        fn = {"sum_reduce": np.sum, "mean_reduce": np.sum, "max_reduce": np.max, "min_reduce": np.min}[op.name]
        r = fn(x, axis=tuple(axes), keepdims=True) if axes else x
        lw.out(op, (r / np.float32(count)) if normalize else r)
        return
    cls = {"sum_reduce": ReduceSumOp, "mean_reduce": ReduceSumOp, "max_reduce": ReduceMaxOp,
           "min_reduce": ReduceMinOp}[op.name]
    y = reduce_axes(lw, cls, x, axes) if axes else x
    if normalize and count != 1:
        y = scalar_mul(lw.g, y, 1.0 / count)
    lw.out(op, y)


@handles("argmax_reduce", "argmin_reduce")
def _arg_reduce(lw: Lowerer, op: FlatOp) -> None:
    from nnkiln.dialects.tosa.ops_elementwise_unary import NegateOp
    from nnkiln.dialects.tosa.ops_tensor import ArgMaxOp
    from nnkiln.frontends.common.layout import transpose

    x = lw.ssa(lw.value(op.inputs["input"]), Prim.SCALAR)
    axes = sorted({int(a) for a in op.attribs["axes"]})  # type: ignore[union-attr]
    shape = shape_of(x)
    if not axes:
        lw.out(op, np.zeros(shape, dtype=np.int32))
        return
    if op.name == "argmin_reduce":
        x = lw.g.value(NegateOp, [x], etype(x))
    keep = [i for i in range(len(shape)) if i not in axes]
    x = transpose(lw.g, x, keep + axes)
    flat = (*[shape[i] for i in keep], math.prod(shape[a] for a in axes))
    x = reshape(lw.g, x, flat)
    if len(flat) > 4:
        raise lw.error(f"'{op.name}' of a rank-{len(shape)} tensor is not supported (TOSA 0.30 ARGMAX takes rank <= 4)")
    y = lw.g.value(ArgMaxOp, [x], element_type(Kind.I32), axis=len(flat) - 1)
    lw.out(op, y)


# ---------------------------------------------------------------------------------------------------
# shape operations


@handles("reshape")
def _reshape(lw: Lowerer, op: FlatOp) -> None:
    x = lw.value(op.inputs["input"], op.dtype or Prim.SCALAR)
    ref = list(op.outputs.values())[0]
    if isinstance(x, np.ndarray):
        lw.out(op, x.reshape(ref.shape))  # type: ignore[union-attr]
    else:
        lw.out(op, reshape(lw.g, x, ref.shape))  # type: ignore[union-attr]


@handles("squeeze", "unsqueeze")
def _squeeze(lw: Lowerer, op: FlatOp) -> None:
    _reshape(lw, op)


@handles("transpose")
def _transpose(lw: Lowerer, op: FlatOp) -> None:
    from nnkiln.frontends.common.layout import transpose

    x = lw.value(op.inputs["input"], op.dtype or Prim.SCALAR)
    axes = [int(a) for a in op.attribs["axes"]]  # type: ignore[union-attr]
    rank = rank_of(x)
    perm = axes + list(range(len(axes), rank))
    if isinstance(x, np.ndarray):
        lw.out(op, np.transpose(x.reshape(trailing(x.shape, len(perm))), perm))
        return
    if len(perm) > rank:
        x = reshape(lw.g, x, trailing(shape_of(x), len(perm)))
    lw.out(op, transpose(lw.g, x, perm))


@handles("concat")
def _concat(lw: Lowerer, op: FlatOp) -> None:
    from nnkiln.dialects.tosa.ops_data_layout import ConcatOp

    p = op.dtype or Prim.SCALAR
    vals = [lw.value(v, p) for v in op.inputs["values"]]  # type: ignore[union-attr]
    axis = int(op.attribs["axis"])  # type: ignore[arg-type]
    if all(isinstance(v, np.ndarray) for v in vals):
        lw.out(op, np.concatenate(vals, axis=axis))  # type: ignore[arg-type]
        return
    ssas = [lw.ssa(v, p) for v in vals]
    lw.out(op, ssas[0] if len(ssas) == 1 else lw.g.value(ConcatOp, [ssas], etype(ssas[0]), axis=axis))


@handles("split")
def _split(lw: Lowerer, op: FlatOp) -> None:
    from nnkiln.frontends.common.nn import slice_value

    p = op.dtype or Prim.SCALAR
    x = lw.value(op.inputs["value"], p)
    axis = int(op.attribs["axis"])  # type: ignore[arg-type]
    refs = op.outputs["values"]
    start = 0
    for ref in refs:  # type: ignore[union-attr]
        n = ref.shape[axis]
        if isinstance(x, np.ndarray):
            idx = [slice(None)] * x.ndim
            idx[axis] = slice(start, start + n)
            lw.set(ref, x[tuple(idx)])
        else:
            shape = shape_of(x)
            st = [0] * len(shape)
            st[axis] = start
            lw.set(ref, slice_value(lw.g, x, st, list(ref.shape)))
        start += n


@handles("slice")
def _slice(lw: Lowerer, op: FlatOp) -> None:
    """slice (§4.5): negative bounds count from the end; ``end == 0`` means the extent."""
    from nnkiln.frontends.common.nn import slice_value

    p = op.dtype or Prim.SCALAR
    x = lw.value(op.inputs["input"], p)
    shape = list(np.shape(x) if isinstance(x, np.ndarray) else shape_of(x))
    start, size = [0] * len(shape), list(shape)
    for a, b, e in zip(op.attribs["axes"], op.attribs["begin"], op.attribs["end"]):  # type: ignore[call-overload]
        n = shape[a]
        b = b + n if b < 0 else b
        e = n if e == 0 else (e + n if e < 0 else e)
        start[a], size[a] = b, e - b
    if isinstance(x, np.ndarray):
        lw.out(op, x[tuple(slice(s, s + n) for s, n in zip(start, size))])
    else:
        lw.out(op, slice_value(lw.g, x, start, size))


# ---------------------------------------------------------------------------------------------------
# matmul, linear


def _matmul(lw: Lowerer, a: Val, b: Val, ta: bool, tb: bool, out_shape: Sequence[int], out_et: Any = None,
            a_zp: int = 0, b_zp: int = 0) -> SSAValue:
    """C = A'·B' with broadcast batch dimensions, as TOSA MATMUL on [N, H, C] x [N, C, W] (``out_et`` and
    the zero points for int8 operands: int32 results)."""
    from nnkiln.dialects.tosa.ops_data_layout import TileOp
    from nnkiln.dialects.tosa.ops_tensor import MatMulOp
    from nnkiln.frontends.common.layout import transpose

    g = lw.g
    av, bv = lw.ssa(a, Prim.SCALAR), lw.ssa(b, Prim.SCALAR)
    r = len(out_shape)
    if ta:
        av = transpose(g, av, [*range(r - 2), r - 1, r - 2])
    if tb:
        if isinstance(b, np.ndarray):
            bv = lw.ssa(np.ascontiguousarray(np.swapaxes(b, -1, -2)), Prim.SCALAR)
        else:
            bv = transpose(g, bv, [*range(r - 2), r - 1, r - 2])
    batch = tuple(out_shape[:-2])
    n = math.prod(batch)
    for v_name in ("a", "b"):
        v = av if v_name == "a" else bv
        s = shape_of(v)
        if s[:-2] != batch:
            v = g.value(TileOp, [v], etype(v), multiples=[bt // st for bt, st in zip(batch, s[:-2])] + [1, 1])
        v = reshape(g, v, (n, *shape_of(v)[-2:]))
        if v_name == "a":
            av = v
        else:
            bv = v
    y = g.value(MatMulOp, [av, bv], out_et or etype(av), A_zp=a_zp, B_zp=b_zp)
    return reshape(g, y, out_shape)


@handles("matmul")
def _matmul_op(lw: Lowerer, op: FlatOp) -> None:
    a, b = lw.value(op.inputs["A"]), lw.value(op.inputs["B"])
    ta, tb = bool(op.attribs.get("transposeA")), bool(op.attribs.get("transposeB"))
    ref = list(op.outputs.values())[0]
    if isinstance(a, np.ndarray) and isinstance(b, np.ndarray):
        aa = np.swapaxes(a, -1, -2) if ta else a
        bb = np.swapaxes(b, -1, -2) if tb else b
        lw.out(op, np.matmul(aa, bb))
        return
    lw.out(op, _matmul(lw, a, b, ta, tb, ref.shape))  # type: ignore[union-attr]


@handles("linear")
def _linear(lw: Lowerer, op: FlatOp) -> None:
    """linear = matmul(input, filter, transposeB) + bias (§4.9.2): FULLY_CONNECTED for a rank-2 input."""
    from nnkiln.dialects.tosa.ops_elementwise_binary import AddOp
    from nnkiln.dialects.tosa.ops_tensor import FullyConnectedOp

    x, w, bias = lw.value(op.inputs["input"]), lw.value(op.inputs["filter"]), lw.value(op.inputs["bias"])
    ref = list(op.outputs.values())[0]
    shape = ref.shape  # type: ignore[union-attr]
    bias_np = isinstance(bias, np.ndarray)
    if (not isinstance(x, np.ndarray) and rank_of(x) == 2 and rank_of(w) == 2 and len(shape) == 2
            and (not bias_np or np.size(bias) in (1, shape[1]))):
        ws = lw.ssa(w, Prim.SCALAR)
        if bias_np:
            bv = lw.g.const(np.broadcast_to(np.asarray(bias, np.float32).reshape(-1), (shape[1],)).copy())
        else:
            bs = shape_of(bias)  # type: ignore[arg-type]
            if math.prod(bs) != shape[1]:
                bv = None
            else:
                bv = reshape(lw.g, bias, (shape[1],))  # type: ignore[arg-type]
        if bv is not None:
            lw.out(op, lw.g.value(FullyConnectedOp, [x, ws, bv], etype(x), input_zp=0, weight_zp=0))
            return
    mm = _matmul(lw, x, w, False, True, shape)
    lw.out(op, elementwise(lw, AddOp, [mm, bias], Prim.SCALAR, [Prim.SCALAR] * 2))


# ---------------------------------------------------------------------------------------------------
# entry points


def lower_graph(graph: FlatGraph, arrays: Mapping[str, np.ndarray], file: str = "graph.nnef",
                quant: Mapping[str, object] | None = None, raw: Mapping[str, object] | None = None) -> ModuleOp:
    """Lower an expanded graph (use ``expand(doc, keep=KEEP)``) with variable data ``arrays`` by label."""
    return Lowerer(graph, arrays, file, quant, raw).run()
