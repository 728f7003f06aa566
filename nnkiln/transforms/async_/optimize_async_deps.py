"""``optimize-async-deps`` (architecture spec §3.3 "OptimizeAsyncDeps"): transitive reduction.

What: an ``async.execute`` keeps a token dependency only if it is not implied by another one, i.e. the
dependency's execute is not an ancestor of another dependency's execute. Dependencies are also
sorted in schedule (IR) order and duplicates removed; ``async.await_all`` keeps only tokens that are
not ancestors of another awaited token.
Why: fewer dependencies = fewer barriers at the rt level; the order they enforce is the same
(reachability in the dependency graph is unchanged, so every hazard stays ordered).
Legal before/after: async IR whose executes appear in a topological order (the IR order).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, SSAValue
from xdsl.passes import ModulePass

from nnkiln.dialects.async_ import AwaitAllOp, ExecuteOp


def reduce_block(block: Block) -> None:
    executes = [op for op in block.ops if isinstance(op, ExecuteOp)]
    index = {ex.token: i for i, ex in enumerate(executes)}
    ancestors: list[int] = []  # bitset of strict ancestors per execute

    def reduce(deps: list[SSAValue]) -> list[SSAValue]:
        ids = sorted({index[d] for d in deps})
        implied = 0
        for d in ids:
            implied |= ancestors[d]
        return [executes[d].token for d in ids if not (implied >> d) & 1]

    for ex in executes:
        kept = reduce(list(ex.dependencies))
        bits = 0
        for d in kept:
            bits |= ancestors[index[d]] | (1 << index[d])
        ancestors.append(bits)
        if list(ex.dependencies) != kept:
            ex.operands = kept
    for op in block.ops:
        if isinstance(op, AwaitAllOp):
            kept = reduce(list(op.tokens))
            if list(op.tokens) != kept:
                op.operands = kept


@dataclass(frozen=True)
class OptimizeAsyncDeps(ModulePass):
    """Remove token dependencies implied by others (transitive reduction)."""

    name = "optimize-async-deps"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for inner in list(op.walk()):
            for region in inner.regions:
                for block in region.blocks:
                    if any(isinstance(o, ExecuteOp) for o in block.ops):
                        reduce_block(block)
