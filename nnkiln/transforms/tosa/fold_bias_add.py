"""``fold-bias-add``: fold per-output-channel constant ADD/SUB/MUL after a float convolution into it.

What: ``ADD(P(x, w, b), c)`` → ``P(x, w, b + c)``, ``SUB(P(x, w, b), c)`` → ``P(x, w, b − c)`` and
``MUL(P(x, w, b), s)`` → ``P(x, w·s, b·s)`` where ``P`` is CONV2D, DEPTHWISE_CONV2D or FULLY_CONNECTED
(spec §2.3) with a float32 result used only by that op, and the constant varies at most along the
last (output channel) axis, i.e. its shape is all ones except possibly the last dimension, which is
the output channel count. Weights scale per output channel: CONV2D ``[OC,KH,KW,IC]`` along axis 0,
DEPTHWISE_CONV2D ``[KH,KW,C,M]`` with output channel ``c·M + m``, FULLY_CONNECTED ``[OC,IC]`` along
axis 0. New constants are made (the old ones may be shared; ``dce`` removes dead ones). The rewrite is
the ``FoldIntoProducer`` pattern, driven by xDSL's ``PatternRewriteWalker`` in one sweep in program order:
a match depends only on the visited op's operands and their use counts, and a rewrite replaces just the
visited op and its single-use producer (the new producer takes the old one's place, before every user), so
a later op sees the result (a MUL then an ADD both fold) and no earlier op changes; that sweep is the
fixpoint, so the walker's re-sweeps (``apply_recursively``) are turned off.

Why: exporters fold BatchNormalization into MUL/ADD pairs or leave a Conv without bias followed by an
Add of a per-channel constant; both are free in the convolution's own bias/weights.

Numerics (a documented deviation from bit-exactness, float only): ``(acc + b) + c`` becomes
``acc + (b + c)`` and ``(Σ x·w + b)·s`` becomes ``Σ x·(w·s) + b·s``, computed in float64 and rounded
to float32 once: differences are a few float32 rounding steps relative to the summands (within the
1e-5 relative float tolerance the compiler promises). Integer convolutions are never touched.

Legal before: verified tosa IR (run after ``propagate-transposes`` so channels are last).
After: the same, with fewer elementwise ops.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import Float32Type, ModuleOp, TensorType
from xdsl.ir import SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriter, PatternRewriteWalker, RewritePattern, op_type_rewrite_pattern
from xdsl.rewriter import InsertPoint

from nnkiln.dialects.tosa.canonicalization import const_op
from nnkiln.dialects.tosa.categories import CONV2D_LIKE
from nnkiln.dialects.tosa.ops_data_nodes import ConstOp
from nnkiln.dialects.tosa.ops_elementwise_binary import AddOp, MulOp, SubOp
from nnkiln.dialects.tosa.ops_tensor import Conv2DOp, DepthwiseConv2DOp, FullyConnectedOp
from nnkiln.ir.elements import to_numpy

Producer = Conv2DOp | DepthwiseConv2DOp | FullyConnectedOp
"""The typed ops of ``categories.CONV2D_LIKE`` (the list of producers lives there)."""


def _const_array(v: SSAValue) -> np.ndarray | None:
    return np.asarray(to_numpy(v.owner.values)) if isinstance(v.owner, ConstOp) else None


def _f32_const(arr: np.ndarray) -> ConstOp:
    arr = np.ascontiguousarray(arr.astype(np.float32))
    return const_op(arr, TensorType(Float32Type(), arr.shape))


def _per_channel(arr: np.ndarray, rank: int, oc: int) -> np.ndarray | None:
    """The constant as a float64 ``[oc]`` vector, if it varies only along the last axis."""
    if arr.ndim != rank or any(d != 1 for d in arr.shape[:-1]) or arr.shape[-1] not in (1, oc):
        return None
    return np.broadcast_to(arr.reshape(-1).astype(np.float64), (oc,))


def _scaled_weights(p: Producer, w: np.ndarray, s: np.ndarray) -> np.ndarray:
    w64 = w.astype(np.float64)
    if isinstance(p, DepthwiseConv2DOp):
        kh, kw, c, m = w.shape
        return w64 * s.reshape(1, 1, c, m)
    return w64 * s.reshape((-1,) + (1,) * (w.ndim - 1))


class FoldIntoProducer(RewritePattern):
    """ADD/SUB/MUL of a single-use float32 CONV2D/DEPTHWISE_CONV2D/FULLY_CONNECTED result and a
    per-output-channel constant → the producer with new bias (and weights for MUL)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, e: AddOp | SubOp | MulOp, rewriter: PatternRewriter, /) -> None:
        if isinstance(e, MulOp) and e.shift.value.data:
            return
        for k in (0,) if isinstance(e, SubOp) else (0, 1):  # c - P(...) is not a bias
            p = e.operands[k].owner
            if not isinstance(p, Producer) or p.name not in CONV2D_LIKE or not p.results[0].has_one_use():
                continue
            out = p.results[0].type
            if not isinstance(out, TensorType) or not isinstance(out.element_type, Float32Type) or e.output.type != out:
                continue
            c = _const_array(e.operands[1 - k])
            w, b = _const_array(p.operands[1]), _const_array(p.operands[2])
            if c is None or b is None or (isinstance(e, MulOp) and w is None):
                continue
            oc = out.get_shape()[-1]
            vec = _per_channel(c, len(out.get_shape()), oc)
            if vec is None or b.shape not in ((oc,), (1,)):
                continue
            b64 = np.broadcast_to(b.astype(np.float64), (oc,))
            if isinstance(e, MulOp):
                consts = {1: _f32_const(_scaled_weights(p, w, vec)), 2: _f32_const(b64 * vec)}  # type: ignore[arg-type]
            else:
                consts = {2: _f32_const(b64 + vec if isinstance(e, AddOp) else b64 - vec)}
            operands = [consts[i].output if i in consts else v for i, v in enumerate(p.operands)]
            new = type(p).create(operands=operands, result_types=[out], properties=dict(p.properties),
                                 attributes=dict(p.attributes))
            new.location = p.location  # the source node stays named (nnkiln report)
            rewriter.insert([*consts.values(), new], InsertPoint.before(p))
            rewriter.replace(e, (), new.results)
            rewriter.erase(p)
            return


@dataclass(frozen=True)
class FoldBiasAdd(ModulePass):
    """Fold per-channel constant add/sub/mul after float conv2d/depthwise_conv2d/fully_connected."""

    name = "fold-bias-add"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(FoldIntoProducer(), apply_recursively=False).rewrite_module(op)
