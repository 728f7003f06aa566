"""``convert-precision-to-fp16``: run the float32 NCE operations in fp16 (convolutions accumulate in fp32).

What: every float32 NCE operation is rewritten on fp16 operands:
- CONV2D and DEPTHWISE_CONV2D: fp16 input and weights, float32 bias and result (TOSA 0.30's conv-family mode
  "fp16 with fp32 accumulate", spec §2.3.3, §2.3.5);
- MAX_POOL2D, AVG_POOL2D (fp16 → fp16; the reference averages in fp32, the "fp32 accumulate" row), and ADD and
  MUL (shift 0) whose two operands have the result's shape (the NCE's elementwise engine takes no broadcasting):
  fp16 operands and an fp16 result.
An fp16 operand is: a ``tosa.const`` converted at compile time (a new constant, round to nearest even); the fp16
value an f16 → f32 conversion was made from (the round trip f16 → f32 → f16 is the identity, so it is never
emitted: consecutive NCE ops pass fp16 between them); else one f32 → f16 conversion placed after the value's
definition and shared by all its NCE users. An fp16 result is converted back to float32 for its other users
(graph outputs, non-NCE ops); a conversion nobody uses is erased. Everything else keeps float32, graph inputs
and outputs keep their types, and integer ops are untouched. Ops whose float32 constants would overflow fp16
(a finite value above 65504) stay float32.

Conversions: TOSA 0.30's CAST has no float ↔ float mode (§2.13.1), so a conversion is nnkiln's ``tosa.custom``
``math.cast`` (config ``math``), the one the ONNX importer emits for float casts: round to nearest even,
overflow to ±inf, NaN kept; f16 → f32 is exact. On the device the f32 → f16 after a convolution is the NCE's
output conversion (it writes fp16), and the others are SHAVE conversions at the graph's float32 boundaries.

Why: the NCE computes in fp16 (its MAC array has fp16 inputs and an fp32 accumulator): the architecture's
level-3 pass ``-convert-precision-to-fp16`` "replaces all FP32 tensors with FP16" (§6.1; the level-3 and VPU
examples of §3.3.1 are fp16 throughout). Unlike that pass, the function signature keeps float32 (the user's
precision; the conversions at the boundaries are what ``-use-user-precision`` would insert) and the non-NCE ops
(SHAVE kernels, which take float32 here) stay float32.

Numerics (a documented deviation, float only): inputs and weights of the NCE ops are rounded to fp16 (relative
error 2^-11 each) and pool/elementwise results too; convolution sums are accumulated in float32. Expect a
relative error around 1e-3 on typical CNN outputs (the tests require a relative L2 error below 1e-2). Values
beyond ±65504 become ±inf in fp16.

Legal before: verified tosa IR. After: verified tosa IR with ``math.cast`` custom ops.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import Float16Type, Float32Type, ModuleOp, TensorType
from xdsl.ir import Block, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from nnkiln.dialects.tosa.base import Kind
from nnkiln.dialects.tosa.ops_custom import CustomOp
from nnkiln.dialects.tosa.ops_elementwise_binary import MulOp
from nnkiln.transforms.tosa._hw import const, const_array, is_plain, shape

F16, F32 = Float16Type(), Float32Type()
_CONVS = ("tosa.conv2d", "tosa.depthwise_conv2d")
_F16_RESULT = ("tosa.max_pool2d", "tosa.avg_pool2d", "tosa.add", "tosa.mul")
_F16_MAX = float(np.finfo(np.float16).max)


def math_cast(v: SSAValue, element_type: Float16Type | Float32Type) -> CustomOp:
    """nnkiln's float conversion ``tosa.custom`` ``math.cast`` of ``v`` to ``element_type``."""
    t = TensorType(element_type, shape(v))
    return CustomOp.make([v], [t], identifier="math.cast", config="math", implementation_attrs="{}")


def _is_cast(op: Operation | Block) -> bool:
    return isinstance(op, CustomOp) and op.identifier.data == "math.cast"


def _activations(op: Operation) -> list[int]:
    """Indices of the operands that go to fp16 (a convolution's bias stays float32)."""
    return [0, 1] if op.name in _CONVS or op.name in ("tosa.add", "tosa.mul") else [0]


def _is_nce_f32(op: Operation) -> bool:
    if op.name not in _CONVS + _F16_RESULT or not is_plain(op.results[0], Kind.F32):
        return False
    if not all(is_plain(v, Kind.F32) for v in op.operands):
        return False
    if isinstance(op, MulOp) and op.shift.value.data:
        return False
    if op.name in ("tosa.add", "tosa.mul") and any(shape(v) != shape(op.results[0]) for v in op.operands):
        return False
    for i in _activations(op):  # constants must fit fp16
        arr = const_array(op.operands[i])
        if arr is not None and np.any(np.isfinite(arr) & (np.abs(arr) > _F16_MAX)):
            return False
    return True


@dataclass
class _Converter:
    """Rewrites the NCE ops one by one in program order, remembering each value's fp16 form."""

    rewriter: Rewriter = field(default_factory=Rewriter)
    f16: dict[SSAValue, SSAValue] = field(default_factory=dict)
    casts: list[CustomOp] = field(default_factory=list)

    def as_f16(self, v: SSAValue) -> SSAValue:
        if v in self.f16:
            return self.f16[v]
        owner = v.owner
        arr = const_array(v)
        if arr is not None:
            new: Operation = const(arr.astype(np.float16), F16)
        elif _is_cast(owner) and is_plain(owner.operands[0], Kind.F16):  # type: ignore[union-attr]
            self.f16[v] = owner.operands[0]  # type: ignore[union-attr]
            return self.f16[v]
        else:
            new = math_cast(v, F16)
            self.casts.append(new)
        where = InsertPoint.at_start(owner) if isinstance(owner, Block) else InsertPoint.after(owner)
        self.rewriter.insert_op(new, where)
        self.f16[v] = new.results[0]
        return new.results[0]

    def convert(self, op: Operation) -> None:
        operands = list(op.operands)
        for i in _activations(op):
            operands[i] = self.as_f16(operands[i])
        result_type = F32 if op.name in _CONVS else F16
        new = type(op).create(operands=operands, result_types=[TensorType(result_type, shape(op.results[0]))],
                              properties=dict(op.properties), attributes=dict(op.attributes))
        new.location = op.location  # the source node stays named (nnkiln report)
        self.rewriter.insert_op(new, InsertPoint.before(op))
        result = new.results[0]
        if result_type == F16:
            back = math_cast(result, F32)
            self.rewriter.insert_op(back, InsertPoint.after(new))
            self.casts.append(back)
            self.f16[back.results[0]] = result
            result = back.results[0]
        self.rewriter.replace_op(op, [], [result])

    def erase_dead_casts(self) -> None:
        """Erase the conversions this pass made that have no use (every user took the fp16 value)."""
        for cast in self.casts:
            if not cast.results[0].uses:
                self.rewriter.erase_op(cast)


@dataclass(frozen=True)
class ConvertPrecisionToFp16(ModulePass):
    """Float32 NCE ops (conv2d, depthwise_conv2d, pools, same-shape add/mul) compute in fp16 (fp32 accumulate)."""

    name = "convert-precision-to-fp16"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        converter = _Converter()
        for o in [o for o in op.walk() if _is_nce_f32(o)]:
            converter.convert(o)
        converter.erase_dead_casts()
