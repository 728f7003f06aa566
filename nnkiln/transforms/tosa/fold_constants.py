"""``fold-constants``: evaluate ``tosa`` ops whose operands are all constants.

What: an op whose every operand comes from ``tosa.const`` is replaced by a ``tosa.const`` holding
its result, computed by the reference interpreter's kernel for that op, so folding has exactly the
spec's semantics (bit-exact for integers). Ops with regions, ``tosa.custom`` and results larger
than ``max-elements`` are left alone; an op whose evaluation hits a REQUIRE failure
(``tosa_unpredictable``) is left unfolded, so the run-time behaviour is unchanged. The rewrite is the
``FoldConstantOperands`` pattern that ``canonicalize`` also applies (there with a small size limit,
``nnkiln.dialects.tosa.canonicalization``), driven by xDSL's ``PatternRewriteWalker`` in one sweep in
program order: an op's operands are defined before it, so they are folded by the time it is visited
(chains of constant ops fold in one pass) and folding an op never makes an earlier one foldable; that
sweep is the fixpoint, so the walker's re-sweeps (``apply_recursively``) are turned off.

Why: importers produce constant subgraphs (weight reshapes/transposes, shape arithmetic).

Legal before: verified ``tosa`` IR. After: the same, with fewer ops; dead constants are not removed
(run ``dce``).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriteWalker

from nnkiln.dialects.tosa.canonicalization import FoldConstantOperands, use_kernels


def use_reference_kernels() -> None:
    """Fold with the reference interpreter's kernels (the bit-exact pseudocode; ``canonicalization.use_kernels``)."""
    from nnkiln.reference.registry import KERNELS, load_kernels, make_call

    use_kernels(lambda op, arrays: KERNELS[op.name](make_call(op, arrays)), load_kernels())


@dataclass(frozen=True)
class FoldConstants(ModulePass):
    """Replace all-constant ``tosa`` ops by ``tosa.const`` with the reference result."""

    name = "fold-constants"
    max_elements: int = 1 << 24

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        use_reference_kernels()
        PatternRewriteWalker(FoldConstantOperands(self.max_elements), apply_recursively=False).rewrite_module(op)
