"""``dce``: remove pure ops whose results are unused.

Why: folding and rewriting leave dead producers behind. Legal before and after: any verified IR.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.transforms.dead_code_elimination import region_dce


@dataclass(frozen=True)
class Dce(ModulePass):
    """Erase side-effect-free ops with no uses, innermost first, until none is left."""

    name = "dce"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for region in op.regions:
            region_dce(region)
