"""``propagate-transposes``: sink ``tosa.transpose`` through layout-agnostic ops so pairs meet.

What: an op ``f`` whose every tensor operand is either ``TRANSPOSE(x_i, P)`` (one perm ``P`` for all)
or a ``tosa.const`` of the same rank is rewritten as ``TRANSPOSE(f'(x_i..., c_i'...), P)``:
- constants are transposed at compile time by the inverse perm (``c' = np.transpose(c, argsort(P))``,
  so ``TRANSPOSE(c', P) = c``; broadcast dimensions of size 1 move with their axis);
- axis attributes are remapped: output dimension ``j`` of ``TRANSPOSE(x, P)`` is dimension ``P[j]``
  of ``x`` (spec §2.10.7), so REDUCE_*/CONCAT ``axis`` becomes ``P[axis]``, PAD's ``padding`` pair and
  SLICE's ``start``/``size`` of dimension ``j`` move to dimension ``P[j]``;
- RESCALE with ``per_channel`` works on the last dimension, so it moves only when ``P`` keeps the
  last axis in place; TABLE is not moved (its table operand is not a layout tensor).
RESHAPE of a transpose moves when, after ignoring size-1 dimensions (which a transpose moves for
free), the reshape only merges or splits groups of dimensions that are consecutive and in order in
``x``: ``RESHAPE(TRANSPOSE(x, P), S) = TRANSPOSE(RESHAPE(x, S_x), Q)``. A transpose that only moves
size-1 dimensions becomes a RESHAPE (no data movement). Pairs that meet are composed or removed by the
``ComposeTransposes`` canonicalization pattern (``nnkiln.dialects.tosa.canonicalization``, the one
``cancel-transpose-pairs`` drives). A transpose that changes the (quantized) element type is not moved.

How: two ``PatternRewriteWalker`` runs: ``SinkTranspose``, ``SinkTransposeThroughReshape`` and
``ComposeTransposes`` together (``GreedyRewritePatternApplier``) to a fixpoint, then
``UnitDimTransposeToReshape`` on what is left (so it cannot hide a pair that would still meet; one sweep:
each transpose's match depends on itself alone). The
transposes and constants a rewrite leaves unused are erased; other dead ops are left to ``dce``.

Why: importers from NCHW formats wrap every NHWC-native op in NCHW↔NHWC transposes; elementwise
ops between them keep the pairs apart. Every rewrite moves a transpose strictly later in the
dataflow graph, so the pass terminates.

Legal before: verified tosa IR. After: the same; every value reaching a use outside the rewritten
ops is unchanged (transposes and reshapes only move elements; elementwise ops and reductions see the
same element values, so their results are identical; a float REDUCE_SUM/REDUCE_PRODUCT may add in a
different order when its input layout changes (within 1e-5 relative); integer results are bit-exact).
"""

from __future__ import annotations

from dataclasses import dataclass
from math import prod

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)

from nnkiln.dialects.tosa.base import from_attr, kind_of, to_attr
from nnkiln.dialects.tosa.canonicalization import ComposeTransposes, Perm, const_op, erase_dead, is_identity
from nnkiln.dialects.tosa.categories import ELEMENTWISE, REDUCTIONS
from nnkiln.dialects.tosa.ops_data_layout import ReshapeOp, TransposeOp
from nnkiln.dialects.tosa.ops_data_nodes import ConstOp
from nnkiln.ir.elements import to_numpy

MOVABLE = ELEMENTWISE | REDUCTIONS | {"tosa.concat", "tosa.pad", "tosa.slice"}


def inverse(p: Perm) -> Perm:
    return tuple(int(i) for i in np.argsort(p))


def _perm(op: TransposeOp) -> Perm:
    return op.perms.get_values()  # type: ignore[return-value]


def _moving_transpose(v: SSAValue) -> TransposeOp | None:
    """The transpose defining ``v`` if it keeps the element type (only those are moved)."""
    t = v.owner
    if isinstance(t, TransposeOp) and t.input1.type.element_type == t.output.type.element_type:  # type: ignore[attr-defined]
        return t
    return None


def _remapped_props(op: Operation, p: Perm) -> dict[str, object] | None:
    """The properties of ``op`` rewritten for operands in the un-transposed layout, or None if not legal."""
    props = dict(op.properties)
    name = op.name
    if name == "tosa.rescale" and "per_channel" in props and from_attr(props["per_channel"]) and p[-1] != len(p) - 1:
        return None
    if name in REDUCTIONS or name == "tosa.concat":
        props["axis"] = to_attr(p[from_attr(props["axis"])])
    elif name == "tosa.pad":
        pad = from_attr(props["padding"])
        new = [0] * len(pad)
        for j, src in enumerate(p):
            new[2 * src], new[2 * src + 1] = pad[2 * j], pad[2 * j + 1]
        props["padding"] = to_attr(tuple(new))
    elif name == "tosa.slice":
        start, size = from_attr(props["start"]), from_attr(props["size"])
        inv = inverse(p)
        props["start"] = to_attr(tuple(start[inv[i]] for i in range(len(p))))
        props["size"] = to_attr(tuple(size[inv[i]] for i in range(len(p))))
    return props


class SinkTranspose(RewritePattern):
    """``f(TRANSPOSE(x, P), const, ...)`` → ``TRANSPOSE(f'(x, const'), P)`` for a layout-agnostic ``f``."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /) -> None:
        if op.name not in MOVABLE or op.regions or len(op.results) != 1:
            return
        if any(not isinstance(v.type, TensorType) for v in op.operands):
            return
        transposes = [_moving_transpose(v) for v in op.operands]
        perms = {_perm(t) for t in transposes if t is not None}
        if len(perms) != 1:
            return
        p = perms.pop()
        rank = len(p)
        if not _transposable(op.results[0].type):
            return  # e.g. a RESCALE to uint8: TRANSPOSE/RESHAPE have no uint8 type mode
        if any(t is None and not (isinstance(v.owner, ConstOp) and len(v.type.get_shape()) == rank)  # type: ignore[attr-defined]
               for v, t in zip(op.operands, transposes)):
            return
        props = _remapped_props(op, p)
        if props is None:
            return
        inv = inverse(p)
        consts: list[Operation] = []
        new_operands: list[SSAValue] = []
        for v, t in zip(op.operands, transposes):
            if t is not None:
                new_operands.append(t.input1)
                continue
            arr = np.ascontiguousarray(np.transpose(np.asarray(to_numpy(v.owner.values)), inv))  # type: ignore[union-attr]
            consts.append(const_op(arr, TensorType(v.type.element_type, arr.shape)))  # type: ignore[attr-defined]
            new_operands.append(consts[-1].results[0])
        res = op.results[0]
        old_shape = res.type.get_shape()  # type: ignore[attr-defined]
        new_type = TensorType(res.type.element_type, tuple(old_shape[inv[i]] for i in range(rank)))  # type: ignore[attr-defined]
        new = type(op).create(operands=new_operands, result_types=[new_type], properties=props,
                              attributes=dict(op.attributes))
        new.location = op.location  # the source node stays named (nnkiln report)
        old_operands = list(op.operands)
        rewriter.replace(op, [*consts, new, TransposeOp.make([new.results[0]], new_type.element_type, perms=p)])
        erase_dead(rewriter, old_operands)


def _transposable(t: Attribute) -> bool:
    """Whether TRANSPOSE (and so RESHAPE, which supports the same kinds) accepts tensors of type ``t``."""
    kind = kind_of(t)
    return any(mode.kinds[0] is kind for mode in TransposeOp.TYPE_MODES)


def _reshape_plan(x_shape: tuple[int, ...], p: Perm, out_shape: tuple[int, ...]) -> tuple[tuple[int, ...], Perm] | None:
    """``(S_x, Q)`` with ``TRANSPOSE(RESHAPE(x, S_x), Q) == RESHAPE(TRANSPOSE(x, P), out_shape)``, or None."""
    keep = [d for d in range(len(x_shape)) if x_shape[d] != 1]      # non-unit dims of x
    rank_of = {d: i for i, d in enumerate(keep)}
    order = [rank_of[d] for d in p if x_shape[d] != 1]               # x' dim at each non-unit T-out position
    tdims = [x_shape[keep[i]] for i in order]                         # non-unit T-out shape
    odims = [d for d in out_shape if d != 1]
    groups: list[tuple[list[int], list[int]]] = []                    # (T-out positions, out dims)
    i = j = 0
    while i < len(tdims) or j < len(odims):
        gi, gj = [i], [j]
        if i >= len(tdims) or j >= len(odims):
            return None
        pi, pj = tdims[i], odims[j]
        i, j = i + 1, j + 1
        while pi != pj:
            if pi < pj and i < len(tdims):
                pi *= tdims[i]
                gi.append(i)
                i += 1
            elif pj < pi and j < len(odims):
                pj *= odims[j]
                gj.append(j)
                j += 1
            else:
                return None
        if len(gi) > 1 and len(gj) > 1:
            return None                                               # not a pure split or merge
        groups.append(([order[k] for k in gi], [odims[k] for k in gj]))
    for xs, _ in groups:
        if xs != list(range(xs[0], xs[0] + len(xs))):
            return None                                               # merged dims not consecutive in x
    by_x = sorted(range(len(groups)), key=lambda g: groups[g][0][0])
    sx: list[int] = []
    start_of: dict[int, int] = {}
    for g in by_x:
        start_of[g] = len(sx)
        sx.extend(groups[g][1])
    q_nonunit = [start_of[g] + k for g in range(len(groups)) for k in range(len(groups[g][1]))]
    units = [k for k, d in enumerate(out_shape) if d == 1]
    sx_full = [1] * len(units) + sx
    q: list[int] = []
    it = iter(q_nonunit)
    for k, d in enumerate(out_shape):
        q.append(units.index(k) if d == 1 else len(units) + next(it))
    if prod(sx_full) != prod(out_shape):
        return None
    return tuple(sx_full), tuple(q)


class SinkTransposeThroughReshape(RewritePattern):
    """``RESHAPE(TRANSPOSE(x, P), S)`` → ``TRANSPOSE(RESHAPE(x, S_x), Q)`` (or the reshape alone when ``Q`` is
    the identity) where ``_reshape_plan`` finds ``S_x`` and ``Q``."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ReshapeOp, rewriter: PatternRewriter, /) -> None:
        t = _moving_transpose(op.input1)
        if t is None:
            return
        out = op.output.type
        plan = _reshape_plan(tuple(t.input1.type.get_shape()), _perm(t), tuple(out.get_shape()))  # type: ignore[attr-defined]
        if plan is None:
            return
        sx, q = plan
        r = ReshapeOp.make([t.input1], out.element_type, new_shape=sx)  # type: ignore[attr-defined]
        new_ops = [r] if is_identity(q) else [r, TransposeOp.make([r.output], out.element_type, perms=q)]  # type: ignore[attr-defined]
        rewriter.replace(op, new_ops)
        erase_dead(rewriter, [t.output])


class UnitDimTransposeToReshape(RewritePattern):
    """A transpose that keeps the order of the non-unit dimensions is a reshape: replace it."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: TransposeOp, rewriter: PatternRewriter, /) -> None:
        shape = op.input1.type.get_shape()  # type: ignore[attr-defined]
        perm = _perm(op)
        moved = [d for d in perm if shape[d] != 1]
        if moved != sorted(moved) or is_identity(perm):
            return
        out = op.output.type
        assert isinstance(out, TensorType)
        rewriter.replace(op, ReshapeOp.make([op.input1], out.element_type, new_shape=tuple(out.get_shape())))


@dataclass(frozen=True)
class PropagateTransposes(ModulePass):
    """Move transposes down through layout-agnostic ops until NCHW↔NHWC pairs meet and cancel."""

    name = "propagate-transposes"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        sink = GreedyRewritePatternApplier(
            [ComposeTransposes(), SinkTranspose(), SinkTransposeThroughReshape()], dce_enabled=False)
        PatternRewriteWalker(sink).rewrite_module(op)
        PatternRewriteWalker(UnitDimTransposeToReshape(), apply_recursively=False).rewrite_module(op)
