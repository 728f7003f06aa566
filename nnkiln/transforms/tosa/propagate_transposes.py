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
size-1 dimensions becomes a RESHAPE (no data movement). Finally ``cancel-transpose-pairs`` logic
removes the pairs that met (run ``cancel-transpose-pairs`` after this pass; it is also applied here).

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
from xdsl.rewriter import Rewriter

from nnkiln.dialects.tosa.base import from_attr, kind_of, to_attr
from nnkiln.dialects.tosa.categories import ELEMENTWISE, REDUCTIONS
from nnkiln.ir.elements import from_numpy, to_numpy

MOVABLE = ELEMENTWISE | REDUCTIONS | {"tosa.concat", "tosa.pad", "tosa.slice"}

Perm = tuple[int, ...]


def inverse(p: Perm) -> Perm:
    return tuple(int(i) for i in np.argsort(p))


def _perm(op: Operation) -> Perm:
    return tuple(from_attr(op.properties["perms"]))


def _is_transpose(v: SSAValue) -> bool:
    return getattr(v.owner, "name", "") == "tosa.transpose"


def _is_const(v: SSAValue) -> bool:
    return getattr(v.owner, "name", "") == "tosa.const"


def _make_transpose(x: SSAValue, p: Perm) -> Operation:
    from nnkiln.dialects.tosa.ops_data_layout import TransposeOp

    return TransposeOp.make([x], x.type.element_type, perms=p)  # type: ignore[attr-defined]


def _make_reshape(x: SSAValue, shape: tuple[int, ...]) -> Operation:
    from nnkiln.dialects.tosa.ops_data_layout import ReshapeOp

    return ReshapeOp.make([x], x.type.element_type, new_shape=shape)  # type: ignore[attr-defined]


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


def _sink_through(op: Operation) -> bool:
    """Rewrite ``op(TRANSPOSE(x, P), const, ...)`` as ``TRANSPOSE(op'(x, const'), P)``."""
    if op.name not in MOVABLE or op.regions or len(op.results) != 1:
        return False
    tensors = [v for v in op.operands if isinstance(v.type, TensorType)]
    if len(tensors) != len(op.operands):
        return False
    perms = {_perm(v.owner) for v in op.operands if _is_transpose(v)}  # type: ignore[arg-type]
    if len(perms) != 1:
        return False
    p = perms.pop()
    rank = len(p)
    if not _transposable(op.results[0].type):
        return False  # e.g. a RESCALE to uint8: TRANSPOSE/RESHAPE have no uint8 type mode
    if any(not _is_transpose(v) and not (_is_const(v) and len(v.type.get_shape()) == rank) for v in op.operands):  # type: ignore[attr-defined]
        return False
    props = _remapped_props(op, p)
    if props is None:
        return False
    inv = inverse(p)
    new_operands: list[SSAValue] = []
    for v in op.operands:
        if _is_transpose(v):
            new_operands.append(v.owner.input1)  # type: ignore[union-attr]
            continue
        from nnkiln.dialects.tosa.ops_data_nodes import ConstOp

        arr = np.ascontiguousarray(np.transpose(np.asarray(to_numpy(v.owner.values)), inv))  # type: ignore[union-attr]
        ttype = TensorType(v.type.element_type, arr.shape)  # type: ignore[attr-defined]
        c = ConstOp.create(properties={"values": from_numpy(arr, ttype)}, result_types=[ttype])
        Rewriter.insert_op(c, _before(op))
        new_operands.append(c.results[0])
    res = op.results[0]
    old_shape = res.type.get_shape()  # type: ignore[attr-defined]
    new_type = TensorType(res.type.element_type, tuple(old_shape[inv[i]] for i in range(rank)))  # type: ignore[attr-defined]
    new = type(op).create(operands=new_operands, result_types=[new_type], properties=props,
                          attributes=dict(op.attributes))
    Rewriter.insert_op(new, _before(op))
    t = _make_transpose(new.results[0], p)
    Rewriter.replace_op(op, t)
    return True


def _transposable(t: Attribute) -> bool:
    """Whether TRANSPOSE (and so RESHAPE, which supports the same kinds) accepts tensors of type ``t``."""
    from nnkiln.dialects.tosa.ops_data_layout import TransposeOp

    kind = kind_of(t)
    return any(mode.kinds[0] is kind for mode in TransposeOp.TYPE_MODES)


def _before(op: Operation):  # noqa: ANN202
    from xdsl.rewriter import InsertPoint

    return InsertPoint.before(op)


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


def _sink_reshape(op: Operation) -> bool:
    if op.name != "tosa.reshape" or not _is_transpose(op.operands[0]):
        return False
    t = op.operands[0].owner
    x = t.input1  # type: ignore[union-attr]
    out_shape = tuple(op.results[0].type.get_shape())  # type: ignore[attr-defined]
    plan = _reshape_plan(tuple(x.type.get_shape()), _perm(t), out_shape)  # type: ignore[arg-type]
    if plan is None:
        return False
    sx, q = plan
    r = _make_reshape(x, sx)
    Rewriter.insert_op(r, _before(op))
    if q == tuple(range(len(q))):
        op.results[0].replace_all_uses_with(r.results[0])
        Rewriter.erase_op(op)
    else:
        Rewriter.replace_op(op, _make_transpose(r.results[0], q))
    if not t.results[0].uses:  # type: ignore[union-attr]
        Rewriter.erase_op(t)  # type: ignore[arg-type]
    return True


def _unit_only(op: Operation) -> bool:
    """A transpose that keeps the order of the non-unit dimensions is a reshape: replace it."""
    if op.name != "tosa.transpose":
        return False
    shape = op.operands[0].type.get_shape()  # type: ignore[attr-defined]
    moved = [d for d in _perm(op) if shape[d] != 1]
    if moved != sorted(moved) or _perm(op) == tuple(range(len(shape))):
        return False
    Rewriter.replace_op(op, _make_reshape(op.operands[0], tuple(op.results[0].type.get_shape())))  # type: ignore[attr-defined]
    return True


def _cleanup(module: ModuleOp) -> None:
    for o in list(module.walk()):
        if o.name in ("tosa.transpose", "tosa.const") and o.parent is not None and not any(r.uses for r in o.results):
            Rewriter.erase_op(o)


@dataclass(frozen=True)
class PropagateTransposes(ModulePass):
    """Move transposes down through layout-agnostic ops until NCHW↔NHWC pairs meet and cancel."""

    name = "propagate-transposes"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        from nnkiln.transforms.tosa.cancel_transpose_pairs import CancelTransposePairs

        changed = True
        while changed:
            changed = False
            for inner in list(op.walk()):
                if inner.parent is None:
                    continue
                if _sink_through(inner) or _sink_reshape(inner):
                    changed = True
            CancelTransposePairs().apply(ctx, op)
            _cleanup(op)
        for inner in list(op.walk()):
            if inner.parent is not None:
                _unit_only(inner)
        _cleanup(op)
