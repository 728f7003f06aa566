"""``fuse-row-programs``: float32 elementwise tasks, row reductions and GEMM post-ops run as one row program.

What: plans ``nnkiln.analysis.row_programs`` on each rt-level function (its byte regions and run order after
static allocation) and replaces each group of tasks by one ``fused.row_program`` task
(``nnkiln.blob.row_program``); a MATMUL / FULLY_CONNECTED whose float post-ops start a group loses them to it.
Why: softmax, layer norm, GELU and bias + residual chains then pass over their rows once, in cache, instead of
once per op; intermediate values the group computes and nobody reads afterwards are never stored.
Legal: after ``static-allocation`` and ``async-to-rt``, before ``assign-physical-barriers``; results equal the
unfused tasks' (same float32 operations in the same order; exp/tanh/sigmoid within a few ulp).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from nnkiln.analysis import row_programs
from nnkiln.transforms.rt.rewrite_tasks import plan_and_apply


@dataclass(frozen=True)
class FuseRowPrograms(ModulePass):
    name = "fuse-row-programs"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        plan_and_apply(op, row_programs.plan)
