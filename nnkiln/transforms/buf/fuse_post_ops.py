"""``fuse-post-ops``: fold an elementwise kernel into the kernel that produces its input.

What: ``%r = buf.kernel P ... outs(%tmp)`` whose result's sole user is an elementwise
``buf.kernel E ins(%r[, %other]) outs(%o)`` becomes ``buf.kernel P ins(..., [%other]) outs(%o)
{post_ops = [..., {kernel = E, attrs = E's attrs[, operand = index of %other in ins]}]}``; ``E`` and
``%tmp`` disappear. Repeats, so conv → add → clamp becomes one kernel with two post-ops.

Fusable producers: ``tosa.conv2d``, ``tosa.depthwise_conv2d``, ``tosa.fully_connected``,
``tosa.matmul``, ``tosa.avg_pool2d``, ``tosa.reduce_sum/max/min`` (a mean's ``·1/n``) and the float elementwise ops (add, sub, mul, maximum, minimum,
exp, tanh, sigmoid, clamp, abs, negate, reciprocal, rsqrt: chains of them become one kernel that the
runtime evaluates block by block in cache) with a FLOAT output (f32/f16/bf16). Integer producers are not
fused: their i32 accumulators are usually followed by ``tosa.rescale`` whose rounding must be applied
to exactly the accumulator the reference computes; keeping them separate keeps that bit-exactness
trivially true. ``tosa.rescale`` is listed as a fusable post-op for completeness but never meets a
float producer.
Fusable post-ops: ``tosa.clamp``, ``tosa.sigmoid``, ``tosa.tanh``, ``tosa.exp``, ``tosa.abs``,
``tosa.negate``, ``tosa.reciprocal``, ``tosa.rsqrt``, ``tosa.rescale`` (one input) and
``tosa.add``/``tosa.mul``/``tosa.maximum``/``tosa.minimum``/``tosa.sub`` (sub only with the fused value
as its first operand: the runtime computes ``value - other``) whose other operand is a constant or
broadcasts to the output's shape (same rank, each dimension equal or 1) and is defined before the
producer (so reading it earlier is safe; a ``buf.const`` defined later, with its reshape views, is
moved before the producer: constants have no position-dependent value). A binary op with the
producer's result as both operands (``x·x``) is not fused.

Conditions: the producer writes one freshly allocated buffer used by nothing else; the post-op's
output has the producer output's type. Why: one pass over the output instead of two (cache
traffic). Legal before: buf IR from ``tosa-to-buf``. After: the same with fewer kernels; the values
of every buffer still read are unchanged (post-ops are applied in order, as the elementwise kernels were).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import DictionaryAttr, IntegerAttr, ModuleOp, StringAttr, i64
from xdsl.ir import Block, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter

from nnkiln.dialects.buf import AllocOp, ConstOp, KernelOp, ReshapeOp, SubviewOp
from nnkiln.dialects.tosa.categories import CONV2D_LIKE
from nnkiln.kinds import FLOAT_KINDS

UNARY_POST_OPS = frozenset({"tosa.clamp", "tosa.sigmoid", "tosa.tanh", "tosa.rescale", "tosa.exp", "tosa.abs",
                            "tosa.negate", "tosa.reciprocal", "tosa.rsqrt"})
BINARY_POST_OPS = frozenset({"tosa.add", "tosa.mul", "tosa.sub", "tosa.maximum", "tosa.minimum"})
LHS_ONLY = frozenset({"tosa.sub"})
"""Binary post-ops fused only when the producer's result is their first operand (not commutative)."""
ELEMENTWISE_PRODUCERS = (UNARY_POST_OPS | BINARY_POST_OPS) - {"tosa.rescale"}
"""Every float post-op is itself a fusable producer (RESCALE is not: its results are integers)."""
PRODUCERS = CONV2D_LIKE | {"tosa.matmul", "tosa.avg_pool2d", "tosa.reduce_sum", "tosa.reduce_max",
                           "tosa.reduce_min"} | ELEMENTWISE_PRODUCERS


_POS: dict[Operation, float] = {}
"""Positions of the ops of the block being fused (fused kernels take their producer's position,
moved ops a position just below the op they are moved before), so order tests are O(1)."""


def _pos(op: Operation) -> float:
    if op not in _POS:  # an op this pass did not see yet: renumber the block
        block = op.parent
        _POS.clear()
        _POS.update({o: float(i) for i, o in enumerate(block.ops)})  # type: ignore[union-attr]
    return _POS[op]


def _move_before(o: Operation, op: Operation) -> None:
    o.detach()
    op.parent.insert_op_before(o, op)  # type: ignore[union-attr]
    prev = o.prev_op
    lo = _pos(prev) if prev is not None else _pos(op) - 1.0
    _POS[o] = (lo + _pos(op)) / 2


def _before(value: SSAValue, op: Operation) -> bool:
    """``value`` is available where ``op`` is (a block argument or defined earlier in the same block)."""
    owner = value.owner
    if isinstance(owner, Block):
        return True
    return owner.parent is op.parent and owner.parent is not None and _pos(owner) < _pos(op)


def _is_const(value: SSAValue) -> bool:
    while isinstance(value.owner, ReshapeOp):
        value = value.owner.source
    return isinstance(value.owner, ConstOp)


def _hoist_const(value: SSAValue, op: Operation) -> bool:
    """Move the ``buf.const`` (and reshape views of it) defining ``value`` before ``op``; False if not a constant."""
    chain: list[Operation] = []
    v = value
    while isinstance(v.owner, ReshapeOp):
        chain.append(v.owner)
        v = v.owner.source
    if not isinstance(v.owner, ConstOp) or v.owner.parent is not op.parent:
        return False
    for o in [v.owner, *reversed(chain)]:
        if not _before(o.results[0], op):
            _move_before(o, op)
    return True


def _broadcasts_to(shape: tuple[int, ...], out: tuple[int, ...]) -> bool:
    return len(shape) == len(out) and all(d in (1, o) for d, o in zip(shape, out))


def _fusable(p: KernelOp) -> tuple[KernelOp, int | None] | None:
    """The elementwise user of ``p`` and the index in its ins of the extra operand, if fusable."""
    from nnkiln.dialects.tosa.base import kind_of

    if p.kernel.data not in PRODUCERS or len(p.outs) != 1 or kind_of(p.outs[0].type.element_type) not in FLOAT_KINDS:
        return None
    tmp = p.outs[0]
    if not isinstance(tmp.owner, AllocOp) or not tmp.has_one_use() or not p.results[0].has_one_use():
        return None
    e = p.results[0].get_user_of_unique_use()
    if not isinstance(e, KernelOp) or e.post_ops is not None or len(e.outs) != 1 or e.outs[0].type != tmp.type:
        return None
    r = p.results[0]
    if e.kernel.data in UNARY_POST_OPS and list(e.ins) == [r]:
        return e, None
    if e.kernel.data in BINARY_POST_OPS and len(e.ins) == 2 and r in e.ins:
        other = e.ins[1] if e.ins[0] is r else e.ins[0]
        if other is r or (e.kernel.data in LHS_ONLY and e.ins[0] is not r):
            return None
        if not _before(other, p) and not _hoist_const(other, p):
            return None
        if _is_const(other) or _broadcasts_to(tuple(other.type.get_shape()), tuple(tmp.type.get_shape())):  # type: ignore[attr-defined]
            return e, 1 if e.ins[0] is r else 0
    return None


def _hoist_output(out: SSAValue, p: KernelOp) -> bool:
    """Make ``out`` (the post-op's output buffer) available before ``p``; False if impossible."""
    if _before(out, p):
        return True
    owner = out.owner
    if isinstance(owner, AllocOp) or (isinstance(owner, (ReshapeOp, SubviewOp)) and _hoist_output(owner.source, p)):
        _move_before(owner, p)
        return True
    return False


def _fuse(p: KernelOp) -> KernelOp | None:
    """Fuse the elementwise user of ``p`` into it; the new kernel, or None if not fusable."""
    found = _fusable(p)
    if found is None:
        return None
    e, other_index = found
    out = e.outs[0]
    if not _hoist_output(out, p):
        return None
    block = p.parent
    ins = list(p.ins)
    post: dict[str, object] = {"kernel": StringAttr(e.kernel.data), "attrs": e.attrs}
    if other_index is not None:
        ins.append(e.ins[other_index])
        post["operand"] = IntegerAttr(len(ins) - 1, i64)
    old_posts = list(p.post_ops.data) if p.post_ops else []
    fused = KernelOp(p.kernel.data, ins, [out], p.attrs, old_posts + [DictionaryAttr(post)])  # type: ignore[arg-type]
    fused.attributes.update(p.attributes)
    fused.location = p.location  # the producer's source node names the fused kernel
    block.insert_op_before(fused, p)  # type: ignore[union-attr]
    _POS[fused] = _pos(p)
    e.results[0].replace_all_uses_with(fused.results[0])
    tmp = p.outs[0].owner
    Rewriter.erase_op(e)
    Rewriter.erase_op(p)
    Rewriter.erase_op(tmp)  # type: ignore[arg-type]
    return fused


def fuse_block(block: Block) -> int:
    """One pass over ``block``: each kernel absorbs its chain of fusable users. Returns the number fused.

    A fused kernel stays where its producer was, and the ops it absorbed come later in the block,
    so a single forward walk sees every chain (linear time, no restart)."""
    count = 0
    _POS.clear()
    for p in list(block.ops):
        if not isinstance(p, KernelOp) or p.parent is not block:
            continue
        cur: KernelOp | None = p
        while cur is not None:
            cur = _fuse(cur)
            count += cur is not None
    return count


def fuse_once(block: Block) -> bool:
    """Fuse everything fusable in ``block`` (kept for callers of the old one-at-a-time API)."""
    return fuse_block(block) > 0


@dataclass(frozen=True)
class FusePostOps(ModulePass):
    """Fuse elementwise kernels into float conv/depthwise/fully_connected/matmul/avg_pool producers."""

    name = "fuse-post-ops"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for block in [b for o in op.walk() for r in o.regions for b in r.blocks]:
            while fuse_block(block):
                pass
        _POS.clear()
