"""``fold-bias-add``: fold per-output-channel constant ADD/SUB/MUL after a float convolution into it.

What: ``ADD(P(x, w, b), c)`` → ``P(x, w, b + c)``, ``SUB(P(x, w, b), c)`` → ``P(x, w, b − c)`` and
``MUL(P(x, w, b), s)`` → ``P(x, w·s, b·s)`` where ``P`` is CONV2D, DEPTHWISE_CONV2D or FULLY_CONNECTED
(spec §2.3) with a float32 result used only by that op, and the constant varies at most along the
last (output channel) axis, i.e. its shape is all ones except possibly the last dimension, which is
the output channel count. Weights scale per output channel: CONV2D ``[OC,KH,KW,IC]`` along axis 0,
DEPTHWISE_CONV2D ``[KH,KW,C,M]`` with output channel ``c·M + m``, FULLY_CONNECTED ``[OC,IC]`` along
axis 0. New constants are made (the old ones may be shared; ``dce`` removes dead ones).

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
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from nnkiln.dialects.tosa.categories import CONV2D_LIKE as PRODUCERS
from nnkiln.ir.elements import from_numpy, to_numpy

FOLDABLE = frozenset({"tosa.add", "tosa.sub", "tosa.mul"})


def _const_array(v: SSAValue) -> np.ndarray | None:
    if getattr(v.owner, "name", "") != "tosa.const":
        return None
    return np.asarray(to_numpy(v.owner.values))  # type: ignore[union-attr]


def _new_const(arr: np.ndarray, before: Operation) -> SSAValue:
    from nnkiln.dialects.tosa.ops_data_nodes import ConstOp

    arr = np.ascontiguousarray(arr.astype(np.float32))
    ttype = TensorType(Float32Type(), arr.shape)
    c = ConstOp.create(properties={"values": from_numpy(arr, ttype)}, result_types=[ttype])
    Rewriter.insert_op(c, InsertPoint.before(before))
    return c.results[0]


def _per_channel(arr: np.ndarray, rank: int, oc: int) -> np.ndarray | None:
    """The constant as a float64 ``[oc]`` vector, if it varies only along the last axis."""
    if arr.ndim != rank or any(d != 1 for d in arr.shape[:-1]) or arr.shape[-1] not in (1, oc):
        return None
    return np.broadcast_to(arr.reshape(-1).astype(np.float64), (oc,))


def _scaled_weights(name: str, w: np.ndarray, s: np.ndarray) -> np.ndarray:
    w64 = w.astype(np.float64)
    if name == "tosa.depthwise_conv2d":
        kh, kw, c, m = w.shape
        return w64 * s.reshape(1, 1, c, m)
    return w64 * s.reshape((-1,) + (1,) * (w.ndim - 1))


def fold_one(e: Operation) -> bool:
    """Fold the elementwise op ``e`` into its producer if the pattern holds."""
    if e.name not in FOLDABLE or len(e.operands) != 2 or e.parent is None:
        return False
    if e.name == "tosa.mul" and e.properties.get("shift") is not None and int(e.properties["shift"].value.data):  # type: ignore[attr-defined]
        return False
    for k in (0, 1):
        p = e.operands[k].owner
        if e.name == "tosa.sub" and k == 1:
            return False
        if not isinstance(p, Operation) or p.name not in PRODUCERS or not p.results[0].has_one_use():
            continue
        out = p.results[0].type
        if not isinstance(out, TensorType) or not isinstance(out.element_type, Float32Type) or e.results[0].type != out:
            continue
        c = _const_array(e.operands[1 - k])
        w, b = _const_array(p.operands[1]), _const_array(p.operands[2])
        if c is None or b is None or (e.name == "tosa.mul" and w is None):
            continue
        shape = out.get_shape()
        oc = shape[-1]
        vec = _per_channel(c, len(shape), oc)
        if vec is None or b.shape not in ((oc,), (1,)):
            continue
        b64 = np.broadcast_to(b.astype(np.float64), (oc,))
        operands = list(p.operands)
        if e.name == "tosa.add":
            operands[2] = _new_const(b64 + vec, p)
        elif e.name == "tosa.sub":
            operands[2] = _new_const(b64 - vec, p)
        else:
            operands[1] = _new_const(_scaled_weights(p.name, w, vec), p)  # type: ignore[arg-type]
            operands[2] = _new_const(b64 * vec, p)
        new = type(p).create(operands=operands, result_types=[out], properties=dict(p.properties),
                             attributes=dict(p.attributes))
        Rewriter.insert_op(new, InsertPoint.before(p))
        e.results[0].replace_all_uses_with(new.results[0])
        Rewriter.erase_op(e)
        Rewriter.erase_op(p)
        return True
    return False


@dataclass(frozen=True)
class FoldBiasAdd(ModulePass):
    """Fold per-channel constant add/sub/mul after float conv2d/depthwise_conv2d/fully_connected."""

    name = "fold-bias-add"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        changed = True
        while changed:
            changed = False
            for inner in list(op.walk()):
                if inner.parent is not None and fold_one(inner):
                    changed = True
