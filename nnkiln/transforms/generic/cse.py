"""``cse``: common subexpression elimination of pure ops (identical op, operands and attributes).

Why: importers emit repeated constants and reshapes. Legal before and after: any verified IR.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.transforms.common_subexpression_elimination import CommonSubexpressionElimination


@dataclass(frozen=True)
class Cse(ModulePass):
    """Replace each pure op that repeats an earlier identical one by the earlier one's results."""

    name = "cse"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        CommonSubexpressionElimination().apply(ctx, op)
