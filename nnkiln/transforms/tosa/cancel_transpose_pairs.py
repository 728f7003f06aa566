"""``cancel-transpose-pairs``: TRANSPOSE(TRANSPOSE(x, p1), p2) → x or TRANSPOSE(x, p1∘p2).

What: output dimension ``j`` of the outer transpose is dimension ``p2[j]`` of the inner one, which is
dimension ``p1[p2[j]]`` of ``x`` (TRANSPOSE, spec §2.10.7), so the pair is one transpose with
``perms[j] = p1[p2[j]]``; when that is the identity the pair is removed (uses of the outer result
use ``x``). The inner transpose is erased when nothing else uses it.
Why: importers insert layout transposes (NCHW↔NHWC) that cancel out.
Legal before: verified tosa IR. After: the same, with fewer ``tosa.transpose`` ops; values unchanged
(a transpose only moves elements).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter


def compose(p1: tuple[int, ...], p2: tuple[int, ...]) -> tuple[int, ...]:
    """The perms of TRANSPOSE(TRANSPOSE(x, p1), p2) as one transpose of ``x``."""
    return tuple(p1[j] for j in p2)


@dataclass(frozen=True)
class CancelTransposePairs(ModulePass):
    """Fold each transpose of a transpose into one transpose, or nothing when it is the identity."""

    name = "cancel-transpose-pairs"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        from nnkiln.dialects.tosa.ops_data_layout import TransposeOp

        changed = True
        while changed:
            changed = False
            for outer in list(op.walk()):
                if not isinstance(outer, TransposeOp) or outer.parent is None:
                    continue
                inner = outer.input1.owner
                if not isinstance(inner, TransposeOp):
                    continue
                perms = compose(inner.attr_values()["perms"], outer.attr_values()["perms"])
                source = inner.input1
                if perms == tuple(range(len(perms))) and source.type == outer.output.type:
                    outer.output.replace_all_uses_with(source)
                    Rewriter.erase_op(outer)
                else:
                    new = TransposeOp.make([source], outer.output.type.element_type, perms=perms)
                    Rewriter.replace_op(outer, new)
                if not inner.output.uses:
                    Rewriter.erase_op(inner)
                changed = True
