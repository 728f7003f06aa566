"""``cancel-transpose-pairs``: TRANSPOSE(TRANSPOSE(x, p1), p2) → x or TRANSPOSE(x, p1∘p2).

What: output dimension ``j`` of the outer transpose is dimension ``p2[j]`` of the inner one, which is
dimension ``p1[p2[j]]`` of ``x`` (TRANSPOSE, spec §2.10.7), so the pair is one transpose with
``perms[j] = p1[p2[j]]``; when that is the identity (and ``x`` has the outer result's type) the pair is
removed (uses of the outer result use ``x``). The inner transpose is erased when nothing else uses it.
The rewrite is the ``ComposeTransposes`` canonicalization pattern of ``tosa.transpose``
(``nnkiln.dialects.tosa.canonicalization``), driven alone by xDSL's ``PatternRewriteWalker`` in one sweep
in program order: a transpose's input is rewritten before it is visited, so chains of any length collapse,
and a rewrite never gives an earlier transpose a transpose input; that sweep is the fixpoint, so the
walker's re-sweeps (``apply_recursively``) are turned off. No other op is touched; dead ops elsewhere are
left to ``dce``.

Why: importers insert layout transposes (NCHW↔NHWC) that cancel out.
Legal before: verified tosa IR. After: the same, with fewer ``tosa.transpose`` ops; values unchanged
(a transpose only moves elements).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriteWalker

from nnkiln.dialects.tosa.canonicalization import ComposeTransposes


@dataclass(frozen=True)
class CancelTransposePairs(ModulePass):
    """Fold each transpose of a transpose into one transpose, or nothing when it is the identity."""

    name = "cancel-transpose-pairs"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(ComposeTransposes(), apply_recursively=False).rewrite_module(op)
