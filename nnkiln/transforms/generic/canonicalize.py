"""``canonicalize``: apply every op's canonicalization patterns and fold dead pure ops.

Why: later passes and pattern matching expect one form per computation. Legal before and after:
any verified IR; after, no pure op is left unused.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.transforms.canonicalize import CanonicalizePass


@dataclass(frozen=True)
class Canonicalize(ModulePass):
    """Canonicalization patterns of every loaded op, plus dead-code removal, to a fixpoint."""

    name = "canonicalize"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        CanonicalizePass().apply(ctx, op)
