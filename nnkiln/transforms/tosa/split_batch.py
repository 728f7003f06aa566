"""``split-batch``: run the first layers of a batched network once per sample.

What: in a function whose tensor inputs share a leading dimension ``N > 1`` (see
``analysis.batch_axis``), take the longest prefix of ops (in program order) that treat the samples
independently, choose how much of it to split (below), and replace that part by ``N`` copies working
on one sample each, emitted sample after sample::

    x0 = SLICE(x, start=[0, ...], size=[1, ...])      # per input, per sample
    y0 = CONV2D(x0, w, b) ...                          # the split ops, batch axis divided by N
    x1 = SLICE(x, start=[1, ...], size=[1, ...])
    y1 = CONV2D(x1, w, b) ...
    y = CONCAT(y0, y1, ..., axis=a)                   # per value used after the split part

Constants (weights) are shared by the copies. ``tosa-to-buf`` then makes the slices and concatenations
views: every sample is read from the input and written into its place of the concatenated buffer, with
no copy. On one executor instance the schedule keeps this program order (``wrap-into-async-regions``).

Why: batched activations of the early layers of a CNN outgrow the caches (MobileNetV2 at batch 8:
38 MB for one 112x112x96 tensor), so every layer streams its input from memory; one sample's
activations stay in the cache from one layer to the next, and the planned arena shrinks to one
sample's working set (measured: ``bench/RESULTS.md``, "Measurements behind the code's thresholds and choices").
Later layers are small and their weights
larger, and a batched GEMM reuses its weights across samples, so they stay batched.

How much: the ops of the separable prefix are scored by the bytes of their batched activations
(operands and results, views excluded), minus the extra reads of their weights (``N - 1`` more) and
``threshold_bytes``; the split part is the prefix whose
score sum is largest, and nothing is split when no prefix has a positive sum. ``threshold_bytes``
comes from the target (``Target.split_batch_bytes``: the activation footprint above which an op gains
from running per sample; 0 disables the pass) unless the pass option sets it.

Numerics: every copy computes exactly what the batched op computes for its sample (the same
kernels over the same elements), so results are identical.

Not a pattern rewrite (unlike the other tosa passes): the decision is a whole-function analysis (the
longest separable prefix in program order, then the best-scoring part of it) and the rewrite replaces
that whole region at once; no op-local match decides whether, or how much, to split.

Legal before: verified tosa IR (run after the layout and folding passes). After: the same; functions
with nothing worth splitting, or whose split would make more than ``MAX_SPLIT_OPS`` ops, are unchanged.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.dialects.func import FuncOp
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from nnkiln.analysis.batch_axis import ELEMENTWISE, Axis, input_batch, per_sample_props, result_axes, shape
from nnkiln.dialects.buf import byte_size
from nnkiln.dialects.tosa.base import kind_of
from nnkiln.dialects.tosa.ops_data_layout import LAYOUT_MODES, ConcatOp, SliceOp

MAX_SPLIT_OPS = 4096
"""No split makes more than this many per-sample ops (samples x split ops): the IR, and so compile time, would grow
with the batch instead of with the work (a batch of 100000 would make millions of ops)."""

VIEWS = frozenset({"tosa.reshape", "tosa.identity"})
CONSTANTS = frozenset({"tosa.const", "const.declare"})
_LAYOUT_KINDS = frozenset(m.kinds[0] for m in LAYOUT_MODES)


def _sliceable(v: SSAValue) -> bool:
    """SLICE and CONCAT (§2.10) take rank 1-4 tensors of the layout kinds."""
    return 1 <= len(shape(v)) <= 4 and kind_of(v.type) in _LAYOUT_KINDS


def _score(op: Operation, axes: dict[SSAValue, Axis], n: int, threshold_bytes: int) -> int:
    """Bytes of memory traffic running ``op`` per sample saves, less ``threshold_bytes``: its batched
    activations, minus the ``n - 1`` extra reads of its other operands (weights; GATHER's table is read
    row by row either way). Views move nothing, and elementwise ops are fused into their producer later
    (``fuse-post-ops``, the runtime's row programs), which already counted the tensor: 0."""
    if op.name in VIEWS or op.name in ELEMENTWISE:
        return 0
    act = sum(byte_size(v.type) for v in (*op.operands, *op.results) if axes.get(v) is not None)
    weights = 0 if op.name == "tosa.gather" else sum(byte_size(v.type) for v in op.operands if axes.get(v) is None)
    return act - (n - 1) * weights - threshold_bytes


@dataclass
class _Plan:
    n: int
    ops: list[Operation]            # the ops to split, in program order
    axes: dict[SSAValue, Axis]      # batch axis of every value they touch


def plan_split(func: FuncOp, threshold_bytes: int) -> _Plan | None:
    """The ops of ``func`` worth running per sample, or None."""
    block = func.body.block
    n = input_batch(block.args)
    if not n or threshold_bytes <= 0:
        return None
    axes: dict[SSAValue, Axis] = {a: (0 if isinstance(a.type, TensorType) else None) for a in block.args}
    if any(a is not None and not _sliceable(v) for v, a in axes.items()):
        return None
    prefix: list[Operation] = []
    scores: list[int] = []
    for op in block.ops:
        if op.name in CONSTANTS:
            axes.update((r, None) for r in op.results)
            continue
        ra = result_axes(op, [axes.get(v) for v in op.operands], n) if op.name.startswith("tosa.") else None
        if ra is None:
            break
        axes.update(zip(op.results, ra))
        if all(a is None for a in ra):
            continue
        prefix.append(op)
        scores.append(_score(op, axes, n, threshold_bytes))
    best, best_end, total = 0, 0, 0
    for i, s in enumerate(scores):
        total += s
        if total > 0 and total >= best:  # ties: take the zero-score ops that follow (post-ops fuse)
            best, best_end = total, i + 1
    ops = prefix[:best_end]
    while ops and ops[-1].name in VIEWS:
        ops.pop()
    if not ops:
        return None
    inside = set(ops)
    for op in ops:
        for r in op.results:
            if any(u.operation not in inside for u in r.uses) and not _sliceable(r):
                return None
    return _Plan(n, ops, axes)


def _per_sample_type(v: SSAValue, axis: int, n: int) -> TensorType:
    dims = list(shape(v))
    dims[axis] //= n
    return TensorType(v.type.element_type, dims)  # type: ignore[attr-defined]


def split(plan: _Plan) -> bool:
    """Rewrite the function: per-sample slices of the inputs, copies of ``plan.ops``, concatenations. False
    (nothing changed) if a per-sample op does not verify."""
    n, axes = plan.n, plan.axes
    inside = set(plan.ops)
    last = plan.ops[-1]
    at = InsertPoint.after(last)
    new_ops: list[Operation] = []
    samples: list[dict[SSAValue, SSAValue]] = [{} for _ in range(n)]
    for s in range(n):
        env = samples[s]
        for op in plan.ops:
            operands: list[SSAValue] = []
            for v in op.operands:
                a = axes.get(v)
                if a is None:
                    operands.append(v)
                    continue
                if v not in env:  # a function input: this sample's slice
                    dims = shape(v)
                    start = [0] * len(dims)
                    size = list(dims)
                    size[a] = dims[a] // n
                    start[a] = s * size[a]
                    sl = SliceOp.make([v], v.type.element_type, start=tuple(start), size=tuple(size))  # type: ignore[attr-defined]
                    new_ops.append(sl)
                    env[v] = sl.results[0]
                operands.append(env[v])
            ra = [axes[r] for r in op.results]
            types = [_per_sample_type(r, a, n) if a is not None else r.type for r, a in zip(op.results, ra)]
            clone = type(op).create(operands=operands, result_types=types,
                                    properties=per_sample_props(op, ra, n), attributes=dict(op.attributes))
            clone.location = op.location  # the source node stays named (nnkiln report)
            new_ops.append(clone)
            env.update(zip(op.results, clone.results))
    try:  # a per-sample op the shape rules reject (a shape-valued property not adjusted): leave the function
        for o in new_ops:
            o.verify()
    except Exception:  # noqa: BLE001
        for o in reversed(new_ops):
            o.erase(safe_erase=False)
        return False
    Rewriter.insert_op(new_ops, at)
    at = InsertPoint.after(new_ops[-1])
    for op in plan.ops:
        for r in op.results:
            outside = [u for u in r.uses if u.operation not in inside]
            if not outside:
                continue
            cat = ConcatOp.make([[samples[s][r] for s in range(n)]], r.type.element_type, axis=axes[r])  # type: ignore[attr-defined]
            Rewriter.insert_op(cat, at)
            at = InsertPoint.after(cat)
            for u in outside:
                u.operation.operands[u.index] = cat.results[0]
    for op in reversed(plan.ops):
        Rewriter.erase_op(op)
    return True


@dataclass(frozen=True)
class SplitBatch(ModulePass):
    """Run the early, activation-heavy layers of a batched function once per sample."""

    name = "split-batch"
    target: str = "cpu"
    threshold_bytes: int = -1
    """-1: the target's ``split_batch_bytes``."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        from nnkiln.targets import get_target

        threshold = self.threshold_bytes if self.threshold_bytes >= 0 else get_target(self.target).split_batch_bytes
        for func in [o for o in op.walk() if isinstance(o, FuncOp) and o.body.blocks]:
            plan = plan_split(func, threshold)
            if plan is not None and plan.n * len(plan.ops) <= MAX_SPLIT_OPS:
                split(plan)
