"""Canonicalization patterns of the ``tosa`` dialect (xDSL ``RewritePattern``s), also used by the tosa passes.

The op classes attach them with ``HasCanonicalizationPatternsTrait`` subclasses (``TRANSPOSE_PATTERNS`` on
``tosa.transpose``, ..., ``FOLD_PATTERNS`` on every ``TosaOp``), so ``canonicalize`` applies them; the
passes ``cancel-transpose-pairs``, ``propagate-transposes`` and ``fold-constants`` drive the same pattern
objects, each pattern lives here once.

What:
- TRANSPOSE(TRANSPOSE(x, p1), p2) → TRANSPOSE(x, p1∘p2) (``perms[j] = p1[p2[j]]``, spec §2.10.7), or ``x``
  when that is the identity; TRANSPOSE with the identity perms → its input;
- RESHAPE(RESHAPE(x)) → RESHAPE(x) (or ``x`` when the shapes match); RESHAPE to its input's shape → input;
- PAD with all-zero padding, SLICE of the full extent, TILE with all multiples 1, CAST to the same type →
  the input (TOSA 0.30 has no same-kind CAST mode, so valid IR has no such CAST; the pattern is defensive);
- an op whose operands are all ``tosa.const`` → ``tosa.const`` of its result, computed by the reference
  interpreter's kernel (``FoldConstantOperands``; results above ``max_elements`` elements stay, and so do
  unsigned results, which a ``tosa.const`` cannot hold).

Invariants: a value is only ever replaced by a value of exactly the same type, quantized element types
included (a reshape or transpose between two quantized types relabels its elements and is never removed, a
composed pair keeps the outer result type); values are unchanged (data-layout ops only move elements,
folding is the spec's bit-exact semantics and leaves an op whose evaluation hits a REQUIRE failure alone);
the IR stays valid. Producers a rewrite leaves unused are erased when the pattern made them dead
(``erase_dead``); other dead constants are left to ``dce``/``canonicalize``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

import numpy as np
from xdsl.dialects.builtin import TensorType
from xdsl.ir import Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern
from xdsl.transforms.dead_code_elimination import is_trivially_dead

from nnkiln.dialects.tosa.base import Kind, TosaOp, kind_of
from nnkiln.dialects.tosa.ops_data_layout import PadOp, ReshapeOp, SliceOp, TileOp, TransposeOp
from nnkiln.dialects.tosa.ops_data_nodes import ConstOp
from nnkiln.dialects.tosa.ops_type_conversion import CastOp
from nnkiln.ir.elements import from_numpy, storage_type, to_numpy
from nnkiln.ir.errors import NotExecutableError, TosaUnpredictable

Perm = tuple[int, ...]


def compose(p1: Perm, p2: Perm) -> Perm:
    """The perms of TRANSPOSE(TRANSPOSE(x, p1), p2) as one transpose of ``x``."""
    return tuple(p1[j] for j in p2)


def is_identity(perm: Sequence[int]) -> bool:
    return all(p == i for i, p in enumerate(perm))


def erase_dead(rewriter: PatternRewriter, values: Iterable[SSAValue]) -> None:
    """Erase the side-effect-free ops defining ``values`` that have no use left (e.g. the inner op of a
    pair a pattern just composed)."""
    for v in values:
        owner = v.owner
        if isinstance(owner, Operation) and owner.parent is not None and is_trivially_dead(owner):
            rewriter.erase(owner)


def forward(rewriter: PatternRewriter, op: Operation, value: SSAValue) -> bool:
    """Replace ``op``'s one result by ``value`` if the types are identical (quantization included)."""
    if value.type != op.results[0].type:
        return False
    rewriter.replace(op, (), (value,))
    return True


class ComposeTransposes(RewritePattern):
    """TRANSPOSE(TRANSPOSE(x, p1), p2) → TRANSPOSE(x, p1∘p2), or ``x`` when that is the identity and ``x``
    has the outer result's type. The inner transpose is erased when nothing else uses it."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: TransposeOp, rewriter: PatternRewriter, /) -> None:
        inner = op.input1.owner
        if not isinstance(inner, TransposeOp):
            return
        perms = compose(inner.perms.get_values(), op.perms.get_values())
        source = inner.input1
        if not (is_identity(perms) and forward(rewriter, op, source)):
            element_type = op.output.type.element_type  # type: ignore[attr-defined]
            rewriter.replace(op, TransposeOp.make([source], element_type, perms=perms))
        erase_dead(rewriter, [inner.output])


class RemoveIdentityTranspose(RewritePattern):
    """TRANSPOSE(x, identity) → ``x`` (same type only)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: TransposeOp, rewriter: PatternRewriter, /) -> None:
        if is_identity(op.perms.get_values()):
            forward(rewriter, op, op.input1)


class ComposeReshapes(RewritePattern):
    """RESHAPE(RESHAPE(x, s1), s2) → RESHAPE(x, s2) with the outer result type, or ``x`` when it has that
    type (RESHAPE keeps the row-major element order, so only the last shape matters)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ReshapeOp, rewriter: PatternRewriter, /) -> None:
        inner = op.input1.owner
        if not isinstance(inner, ReshapeOp):
            return
        if not forward(rewriter, op, inner.input1):
            out = op.output.type
            assert isinstance(out, TensorType)
            rewriter.replace(op, ReshapeOp.make([inner.input1], out.element_type, new_shape=tuple(out.get_shape())))
        erase_dead(rewriter, [inner.output])


class RemoveIdentityReshape(RewritePattern):
    """RESHAPE to the input's own type → the input."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ReshapeOp, rewriter: PatternRewriter, /) -> None:
        forward(rewriter, op, op.input1)


class RemoveNoOpPad(RewritePattern):
    """PAD with zero padding on every border → the input."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: PadOp, rewriter: PatternRewriter, /) -> None:
        if not any(op.padding.get_values()):
            forward(rewriter, op, op.input1)


class RemoveNoOpSlice(RewritePattern):
    """SLICE from the origin with the input's full shape → the input."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: SliceOp, rewriter: PatternRewriter, /) -> None:
        full = tuple(op.input1.type.get_shape())  # type: ignore[attr-defined]
        if not any(op.start.get_values()) and op.size.get_values() == full:
            forward(rewriter, op, op.input1)


class RemoveNoOpTile(RewritePattern):
    """TILE with every multiple 1 → the input."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: TileOp, rewriter: PatternRewriter, /) -> None:
        if all(m == 1 for m in op.multiples.get_values()):
            forward(rewriter, op, op.input1)


class RemoveNoOpCast(RewritePattern):
    """CAST to the input's own type → the input (a cast between two quantized types differs in type: kept)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: CastOp, rewriter: PatternRewriter, /) -> None:
        forward(rewriter, op, op.input)


# ----------------------------------------------------------------------------------------------
# Constant folding

_NEVER_FOLD = frozenset({"tosa.const", "tosa.custom", "tosa.cond_if", "tosa.while_loop", "tosa.yield"})


def evaluate(op: Operation, max_elements: int) -> list[np.ndarray] | None:
    """The results of ``op`` computed by the reference kernel if every operand is a ``tosa.const``, or None:
    not a foldable tosa op (control flow, custom, no kernel), a result above ``max_elements`` elements, or
    a REQUIRE failure (``TosaUnpredictable``: the run-time behaviour must stay)."""
    operands = op.operands
    if not operands or any(not isinstance(v.owner, ConstOp) for v in operands):
        return None
    if not isinstance(op, TosaOp) or op.name in _NEVER_FOLD or op.regions:
        return None
    for r in op.results:
        if not isinstance(r.type, TensorType) or int(np.prod(r.type.get_shape(), dtype=np.int64)) > max_elements:
            return None
        if kind_of(r.type) in (Kind.U8, Kind.U16):  # a tosa.const has no unsigned type (RESCALE makes them)
            return None
    if _KERNELS is None or op.name not in _KERNELS[1]:
        return None
    run = _KERNELS[0]
    # Read-only zero-copy views of the constants (a reshape then folds without copying any weight); a
    # kernel that writes into its inputs gets private copies instead.
    views = [to_numpy(v.owner.values) for v in operands]  # type: ignore[union-attr]
    try:
        try:
            return [np.asarray(o) for o in run(op, views)]
        except ValueError:
            return [np.asarray(o) for o in run(op, [np.array(v) for v in views])]
    except (TosaUnpredictable, NotExecutableError):
        return None


KernelRunner = Callable[[Operation, list[np.ndarray]], Sequence[np.ndarray]]
"""Computes an op's results from its operands' arrays (raising ``TosaUnpredictable`` on a REQUIRE failure)."""
_KERNELS: tuple[KernelRunner, frozenset[str]] | None = None


def use_kernels(run: KernelRunner, names: Iterable[str]) -> None:
    """Let folding compute ops named ``names`` with ``run``. The reference interpreter's kernels are plugged in by the
    passes that fold (``transforms/tosa/fold_constants.py``): the dialect does not import the interpreter, which
    imports the dialect; without kernels nothing folds."""
    global _KERNELS
    _KERNELS = (run, frozenset(names))


def const_op(array: np.ndarray, ttype: TensorType) -> ConstOp:
    """A ``tosa.const`` of type ``ttype`` holding ``array`` (a quantized ``ttype`` stores its storage type)."""
    values = from_numpy(array, TensorType(storage_type(ttype.element_type), ttype.get_shape()))
    return ConstOp.create(properties={"values": values}, result_types=[ttype])


@dataclass(frozen=True)
class FoldConstantOperands(RewritePattern):
    """An op whose operands are all ``tosa.const`` → one ``tosa.const`` per result (see ``evaluate``)."""

    max_elements: int

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /) -> None:
        outputs = evaluate(op, self.max_elements)
        if outputs is None:
            return
        consts = [const_op(out, r.type) for out, r in zip(outputs, op.results)]  # type: ignore[arg-type]
        rewriter.replace(op, consts, [c.output for c in consts])


CANONICAL_FOLD_ELEMENTS = 1 << 16
"""``canonicalize`` folds ops with results up to this many elements (256 KiB of float32): the cheap, common
cases (shape arithmetic, small weight reshapes); ``fold-constants`` folds larger ones."""

TRANSPOSE_PATTERNS: tuple[RewritePattern, ...] = (ComposeTransposes(), RemoveIdentityTranspose())
RESHAPE_PATTERNS: tuple[RewritePattern, ...] = (ComposeReshapes(), RemoveIdentityReshape())
PAD_PATTERNS: tuple[RewritePattern, ...] = (RemoveNoOpPad(),)
SLICE_PATTERNS: tuple[RewritePattern, ...] = (RemoveNoOpSlice(),)
TILE_PATTERNS: tuple[RewritePattern, ...] = (RemoveNoOpTile(),)
CAST_PATTERNS: tuple[RewritePattern, ...] = (RemoveNoOpCast(),)
FOLD_PATTERNS: tuple[RewritePattern, ...] = (FoldConstantOperands(CANONICAL_FOLD_ELEMENTS),)
