"""``canonicalize``: apply every op's canonicalization patterns and fold dead pure ops.

What: xDSL's canonicalization: every op's ``HasCanonicalizationPatternsTrait`` patterns (for ``tosa``:
``nnkiln.dialects.tosa.canonicalization``: transpose/reshape composition, no-op pad/slice/tile/cast/
transpose/reshape removal, folding of small all-constant ops) and ``HasFolder`` folders, driven by a
``PatternRewriteWalker`` to a fixpoint, with trivially dead ops erased on the way and ``region_dce`` after
each sweep. It is xDSL's ``CanonicalizePass`` except that each op class's pattern list is gathered once
(xDSL gathers the traits' patterns and builds an applier again for every op it visits: 10-20 % of this
pass's time on BERT-base).

Why: later passes and pattern matching expect one form per computation. Legal before and after:
any verified IR; after, no pure op is left unused.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import GreedyRewritePatternApplier, PatternRewriter, PatternRewriteWalker, RewritePattern
from xdsl.traits import HasCanonicalizationPatternsTrait
from xdsl.transforms.dead_code_elimination import region_dce

from nnkiln.transforms.tosa.fold_constants import use_reference_kernels


@dataclass(eq=False)
class CanonicalizationPatterns(RewritePattern):
    """The canonicalization patterns of the matched op's class, tried in trait order until one applies."""

    _by_class: dict[type[Operation], RewritePattern | None] = field(default_factory=dict)

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /) -> None:
        cls = type(op)
        if cls not in self._by_class:
            traits = cls.get_traits_of_type(HasCanonicalizationPatternsTrait)
            patterns = [p for t in traits for p in t.get_patterns(cls)]
            self._by_class[cls] = (None if not patterns else patterns[0] if len(patterns) == 1
                                   else GreedyRewritePatternApplier(patterns, dce_enabled=False))
        pattern = self._by_class[cls]
        if pattern is not None:
            pattern.match_and_rewrite(op, rewriter)


@dataclass(frozen=True)
class Canonicalize(ModulePass):
    """Canonicalization patterns of every loaded op, plus dead-code removal, to a fixpoint."""

    name = "canonicalize"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        use_reference_kernels()  # the fold patterns of the tosa ops compute with the reference kernels
        pattern = GreedyRewritePatternApplier([CanonicalizationPatterns()], ctx=ctx, folding_enabled=True)
        PatternRewriteWalker(pattern, post_walk_func=region_dce).rewrite_module(op)
