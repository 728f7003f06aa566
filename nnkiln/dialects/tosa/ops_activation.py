"""TOSA 0.30 §2.4 activation functions: CLAMP, SIGMOID, TANH.

All three map ``input`` to ``output`` of the same shape and type. SIGMOID and TANH are float-only
(MI); integer sigmoid/tanh use TABLE with the spec's reference tables (§2.4.2, §2.4.3).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, ClassVar, Self

from xdsl.dialects.builtin import FloatAttr, IntegerAttr, TensorType
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import irdl_op_definition, operand_def, prop_def, result_def, traits_def
from xdsl.traits import Pure

from nnkiln.dialects.tosa.base import (
    Kind,
    Profile,
    Shape,
    TosaOp,
    TypeMode,
    check_int_range,
    kind_of,
    modes,
    require,
    require_shape,
)
from nnkiln.dialects.tosa.conv_shapes import require_static

BI, MI = Profile.BI, Profile.MI
I8, I16 = Kind.I8, Kind.I16
F16, BF16, F32 = Kind.F16, Kind.BF16, Kind.F32

_FLOAT_MODES: tuple[TypeMode, ...] = modes(MI, ("fp16", (F16, F16)), ("bf16", (BF16, BF16)), ("fp32", (F32, F32)))


class _Activation(TosaOp):
    """input → output of the same shape (the element types are fixed by ``TYPE_MODES``)."""

    TYPE_SLOTS: ClassVar[tuple[str, ...]] = ("input", "output")
    traits = traits_def(Pure())

    input = operand_def(TensorType)
    output = result_def(TensorType)

    @classmethod
    def infer_shapes(cls, shapes: Sequence[Shape], **attrs: Any) -> list[Shape]:
        require_shape(len(shapes) == 1, "1 operand", f"got {len(shapes)} operand shapes")
        shape = tuple(int(d) for d in shapes[0])
        require_static(shape, "input")
        return [shape]


@irdl_op_definition
class ClampOp(_Activation):
    """CLAMP (spec §2.4.1): ``output = apply_clip(input, min_val, max_val)`` elementwise.

    ``min_val`` / ``max_val`` are in_out_t values in the stored domain (no zero-point handling: to
    clamp at real 0 of a quantized tensor, pass its zero point). Representation: an integer attribute
    (``-128 : i64``) for int8/int16 tensors, a float attribute (``0.0 : f32``) for fp16/bf16/fp32.

    ERROR_IF: ``min_val <= max_val`` (the spec's ``ERROR_IF(max_val < min_val)``). The verifier also
    requires: the attribute kind matches in_out_t (integer vs float) and integer bounds fit in_out_t
    (their spec type). Types: BI int8, int16 (no int32 CLAMP); MI fp16, bf16, fp32.

    Decisions: a NaN bound is rejected (rule "min_val and max_val are not NaN"): the ERROR_IF does not
    catch it, but ``apply_clip``'s ``REQUIRE(min <= max)`` would fail on every element. Float bounds
    beyond the fp16/bf16 range are allowed and act as ±inf after conversion to in_out_t (TF lowerings
    pass the fp32 maximum for ReLU).
    """

    name = "tosa.clamp"
    TYPE_MODES: ClassVar[tuple[TypeMode, ...]] = modes(BI, ("signed 8", (I8, I8)), ("signed 16", (I16, I16))) + _FLOAT_MODES

    min_val = prop_def(IntegerAttr | FloatAttr)
    max_val = prop_def(IntegerAttr | FloatAttr)

    def check(self, **attrs: Any) -> None:
        kind = self.slot_kinds()[0]
        assert kind is not None  # the type-mode check ran first
        bounds = {name: self.properties[name] for name in ("min_val", "max_val")}
        if kind.is_int:
            for name, attr in bounds.items():
                is_int = isinstance(attr, IntegerAttr) and not _is_bool(attr)
                require(is_int, f"{name} is an integer attribute for an integer in_out_t",
                        f"{name} = {attr} but in_out_t is {kind.value}")
            for name in bounds:
                check_int_range(name, int(attrs[name]), kind)
        else:
            for name, attr in bounds.items():
                require(isinstance(attr, FloatAttr), f"{name} is a float attribute for a float in_out_t",
                        f"{name} = {attr} but in_out_t is {kind.value}")
            nan = [n for n in bounds if math.isnan(float(attrs[n]))]
            require(not nan, "min_val and max_val are not NaN", f"{', '.join(nan)} is NaN")
        lo, hi = attrs["min_val"], attrs["max_val"]
        require(lo <= hi, "min_val <= max_val", f"min_val = {lo} > max_val = {hi}")

    @classmethod
    def make(
        cls,
        operands: Sequence[SSAValue | Sequence[SSAValue]],
        result_element_types: Attribute | Sequence[Attribute],
        **attrs: Any,
    ) -> Self:
        """As ``TosaOp.make``; Python int bounds become floats when the input is a float tensor."""
        first = operands[0]
        value = first if isinstance(first, SSAValue) else first[0]
        kind = kind_of(value.type)
        if kind is not None and kind.is_float:
            for name in ("min_val", "max_val"):
                v = attrs.get(name)
                if isinstance(v, int) and not isinstance(v, bool):
                    attrs[name] = float(v)
        return super().make(operands, result_element_types, **attrs)


def _is_bool(attr: IntegerAttr) -> bool:
    t = attr.type
    return getattr(getattr(t, "width", None), "data", None) == 1


@irdl_op_definition
class SigmoidOp(_Activation):
    """SIGMOID (spec §2.4.2): ``output = 1 / (1 + exp(-input))``. Types: MI fp16, bf16, fp32 only;
    integer data uses TABLE with ``sigmoid_reference``. No ERROR_IF beyond the type table."""

    name = "tosa.sigmoid"
    TYPE_MODES: ClassVar[tuple[TypeMode, ...]] = _FLOAT_MODES


@irdl_op_definition
class TanhOp(_Activation):
    """TANH (spec §2.4.3): ``output = tanh(input)``. Types: MI fp16, bf16, fp32 only; integer data
    uses TABLE with ``tanh_reference``. No ERROR_IF beyond the type table."""

    name = "tosa.tanh"
    TYPE_MODES: ClassVar[tuple[TypeMode, ...]] = _FLOAT_MODES


__all__ = ["ClampOp", "SigmoidOp", "TanhOp"]
