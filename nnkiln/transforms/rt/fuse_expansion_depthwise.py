"""``fuse-expansion-depthwise``: an expansion 1x1 CONV2D and the DEPTHWISE_CONV2D that alone reads its result
become one ``fused.conv2d_depthwise`` task.

What and when: ``nnkiln.analysis.expansion_depthwise``. Why: the expanded tensor (MobileNet blocks: several MB)
stays in the caches band by band instead of going to memory and back. Legal: after ``static-allocation`` and
``async-to-rt`` (it proves on byte regions that nothing reads the expanded tensor later), with one queue;
results are identical (the same tiles and rows as the two kernels).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from nnkiln.analysis import expansion_depthwise
from nnkiln.transforms.rt.rewrite_tasks import plan_and_apply


@dataclass(frozen=True)
class FuseExpansionDepthwise(ModulePass):
    name = "fuse-expansion-depthwise"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        plan_and_apply(op, expansion_depthwise.plan)
