"""``fold-transposes-into-operands``: a transpose that only feeds one MATMUL (or, from NCHW, a padded CONV2D's
input) does not run; the kernel reads the transpose's input through the permutation (``operand_perms``).

What and when: ``nnkiln.analysis.operand_transposes``. Why: the transposed copy is a pass over memory that the
reading kernel can avoid (a GEMM takes strided operands; a padded convolution copies its input anyway).
Legal: after ``static-allocation`` and ``async-to-rt`` (it proves on byte regions that the input is intact until
the read), with one queue; results are identical.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from nnkiln.analysis import operand_transposes
from nnkiln.transforms.rt.rewrite_tasks import plan_and_apply


@dataclass(frozen=True)
class FoldTransposesIntoOperands(ModulePass):
    name = "fold-transposes-into-operands"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        plan_and_apply(op, operand_transposes.plan)
