"""TOSA 0.30 §2.7 elementwise ternary operators (SELECT)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

from xdsl.dialects.builtin import TensorType
from xdsl.irdl import irdl_op_definition, operand_def, result_def, traits_def
from xdsl.traits import Pure

from nnkiln.dialects.tosa.base import Kind, Profile, Shape, TosaOp, TypeMode, modes, require_shape
from nnkiln.dialects.tosa.shapes import broadcast_shapes

_ROWS = (
    ("Boolean", Kind.BOOL, Profile.BI),
    ("signed 8", Kind.I8, Profile.BI),
    ("signed 16", Kind.I16, Profile.BI),
    ("signed 32", Kind.I32, Profile.BI),
    ("fp16", Kind.F16, Profile.MI),
    ("bf16", Kind.BF16, Profile.MI),
    ("fp32", Kind.F32, Profile.MI),
)


@irdl_op_definition
class SelectOp(TosaOp):
    """SELECT (spec §2.7.1): ``input1 ? input2 : input3`` elementwise, with broadcast.

    ``input1`` is the selector (cmp_t = bool_t); ``input2``/``input3`` are the values if true/false
    (in_out_t); the output has in_out_t and the broadcast shape of all three inputs (equal ranks,
    size-1 dimensions broadcast; the output must equal that shape, as for §2.5).

    Spec defect (inventory §1.3 #10): the three MI rows of the type table read
    "MI, MT | bool_t | fp16 | fp16_t" under the columns "Profile | Mode | cmp_t | in_out_t", i.e. the
    Mode and cmp_t columns are swapped. Decision: read them as mode fp16/bf16/fp32 with
    cmp_t = bool_t, like the BI rows and the argument table ("Input selector tensor", tested with
    ``if (value1)``). A floating-point selector is therefore unsupported.
    Types (selector, values, output): bool with bool, int8, int16, int32 (BI) and fp16, bf16,
    fp32 (MI).
    """

    name = "tosa.select"
    TYPE_SLOTS: ClassVar[tuple[str, ...]] = ("input1", "input2", "input3", "output")
    TYPE_MODES: ClassVar[tuple[TypeMode, ...]] = tuple(
        m for name, kind, prof in _ROWS for m in modes(prof, (name, (Kind.BOOL, kind, kind, kind)))
    )
    input1 = operand_def(TensorType)
    input2 = operand_def(TensorType)
    input3 = operand_def(TensorType)
    output = result_def(TensorType)
    traits = traits_def(Pure())

    @classmethod
    def infer_shapes(cls, shapes: Sequence[Shape], **attrs: Any) -> list[Shape]:
        require_shape(len(shapes) == 3, "three inputs", f"got {len(shapes)} operand shapes")
        return [broadcast_shapes(shapes[0], shapes[1], shapes[2])]
