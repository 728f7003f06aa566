"""``#const.content<base, [transformations]>``: lazily transformed constant data (spec §5.2.2.3).

``ContentAttr`` holds a numpy-backed dense base (``DenseIntOrFPElementsAttr``, built with
``nnkiln.ir.elements.from_numpy``) and an ordered list of ``TransformAttr``. The final type is
inferred from the base type through each transformation's ``infer_type`` (types only, constant time
in the data size). The data is transformed only by ``read_content`` / ``ContentAttr.read`` (spec:
"applied on-the-fly, when accessing the data"); nothing is cached in the IR, and the
transformations stay in the IR until a pass materialises them (``ContentAttr.materialize``).

Syntax::

    #const.content<dense<[1.0, 2.0]> : tensor<2xf32>>
    #const.content<dense<...> : tensor<6xf32>, [#const.reshape<[2, 3]>, #const.convert_elem_type<f16>]>

Decisions:

- The spec's ``finalType`` parameter is not stored: it is always inferred (so it cannot disagree).
- A malformed chain (e.g. a reshape that changes the element count) is a ``VerifyError`` raised by
  ``final_type()``, i.e. when the ``const.declare`` holding the attribute is verified and when a
  builder method appends a transformation; the attribute itself can be parsed, so the error is
  reported against the op with the transformation's index, rule and values.
- Large bases (more than ``nnkiln.ir.text.RESOURCE_THRESHOLD`` elements) print as
  ``dense_resource<blobN>`` through ``nnkiln.ir.text.print_module``, and parse back to dense
  attributes (``nnkiln.ir.text`` resolves resources while parsing, nested ones included).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from xdsl.dialects.builtin import ArrayAttr, DenseIntOrFPElementsAttr, TensorType
from xdsl.ir import Attribute, ParametrizedAttribute
from xdsl.irdl import irdl_attr_definition
from xdsl.parser import AttrParser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException

from nnkiln.dialects.const.transforms import (
    AddAttr,
    BroadcastAttr,
    ConvertElemTypeAttr,
    DequantizeAttr,
    PadWithZeroAttr,
    QuantCastAttr,
    RescaleAttr,
    ReshapeAttr,
    SubViewAttr,
    TransformAttr,
    TransposeAttr,
    is_quantized,
    shape_of,
)
from nnkiln.ir.elements import dtype_of, from_numpy, storage_type, to_numpy
from nnkiln.ir.errors import VerifyError


@irdl_attr_definition
class ContentAttr(ParametrizedAttribute):
    """Lazily folded constant content (spec §5.2.2.3 ContentAttr): a dense base plus an ordered
    list of transformations applied on read."""

    name = "const.content"
    base: DenseIntOrFPElementsAttr
    transformations: ArrayAttr[TransformAttr]

    def __init__(self, base: DenseIntOrFPElementsAttr, transformations: Sequence[TransformAttr] = ()):
        super().__init__(base, ArrayAttr(list(transformations)))

    @staticmethod
    def from_numpy(array: np.ndarray, tensor_type: TensorType | None = None) -> ContentAttr:
        """A content without transformations holding ``array`` (one copy, see ``from_numpy``)."""
        return ContentAttr(from_numpy(array, tensor_type))

    # -- verification and types ----------------------------------------------------------------

    def verify(self) -> None:
        t = self.base.type
        if not isinstance(t, TensorType) or any(d < 0 for d in t.get_shape()):
            raise VerifyException(f"#const.content: the base must be a statically shaped tensor, got {t}")

    @property
    def base_type(self) -> TensorType:
        return self.base.type  # type: ignore[return-value]

    @property
    def transforms(self) -> tuple[TransformAttr, ...]:
        return tuple(self.transformations.data)

    def types(self) -> list[TensorType]:
        """The base type followed by the output type of each transformation.

        Raises ``VerifyError`` naming the failing transformation's index, its rule and values."""
        t = self.base_type
        out = [t]
        for i, tr in enumerate(self.transforms):
            try:
                t = tr.infer_type(t)
            except VerifyError as err:
                raise VerifyError(f"transformation {i} on {t}: {err.args[0]}", rule=err.rule) from None
            out.append(t)
        return out

    def final_type(self) -> TensorType:
        """The type after every transformation (spec: ``finalType``)."""
        return self.types()[-1]

    # -- building (each returns a new attribute; attributes are immutable) -----------------------

    def transform(self, *transforms: TransformAttr) -> ContentAttr:
        """This content with ``transforms`` appended; the chain is type-checked now."""
        new = ContentAttr(self.base, [*self.transforms, *transforms])
        new.final_type()
        return new

    def reshape(self, shape: Sequence[int]) -> ContentAttr:
        return self.transform(ReshapeAttr(shape))

    def transpose(self, perm: Sequence[int]) -> ContentAttr:
        return self.transform(TransposeAttr(perm))

    def convert_elem_type(self, element_type: Attribute) -> ContentAttr:
        return self.transform(ConvertElemTypeAttr(element_type))

    def quant_cast(self, element_type: Attribute) -> ContentAttr:
        return self.transform(QuantCastAttr(element_type))

    def dequantize(self) -> ContentAttr:
        return self.transform(DequantizeAttr())

    def broadcast(self, axis: int, size: int) -> ContentAttr:
        return self.transform(BroadcastAttr(axis, size))

    def pad_with_zero(self, before: Sequence[int], after: Sequence[int]) -> ContentAttr:
        return self.transform(PadWithZeroAttr(before, after))

    def subview(self, offsets: Sequence[int], sizes: Sequence[int]) -> ContentAttr:
        return self.transform(SubViewAttr(offsets, sizes))

    def rescale(self, scale: float) -> ContentAttr:
        return self.transform(RescaleAttr(scale))

    def add(self, bias: float) -> ContentAttr:
        return self.transform(AddAttr(bias))

    # -- reading ---------------------------------------------------------------------------------

    def read(self) -> np.ndarray:
        """The transformed data (see ``read_content``)."""
        return read_content(self)

    def materialize(self) -> ContentAttr:
        """An equivalent content whose base holds the transformed data (what a folding pass uses).

        A quantized final type keeps one ``quant_cast`` on an integer base (a dense attribute
        cannot hold quantized elements)."""
        final = self.final_type()
        if not self.transforms:
            return self
        element = final.element_type
        raw = TensorType(storage_type(element), list(shape_of(final)))
        base = from_numpy(np.ascontiguousarray(self.read()), raw)
        return ContentAttr(base, [QuantCastAttr(element)] if is_quantized(element) else [])

    # -- syntax ----------------------------------------------------------------------------------

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        with parser.in_angle_brackets():
            pos = parser.pos
            base = parser.parse_attribute()
            if not isinstance(base, DenseIntOrFPElementsAttr):
                parser.raise_error(f"#const.content: expected a dense elements base, got {base}", pos)
            if not isinstance(base.type, TensorType):
                parser.raise_error(f"#const.content: the base must be a tensor, got {base.type}", pos)
            transforms: list[Attribute] = []
            if parser.parse_optional_punctuation(",") is not None:
                transforms = parser.parse_comma_separated_list(parser.Delimiter.SQUARE, parser.parse_attribute)
            for tr in transforms:
                if not isinstance(tr, TransformAttr):
                    parser.raise_error(f"#const.content: {tr} is not a const transformation")
        return (base, ArrayAttr(transforms))

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string("<")
        printer.print_attribute(self.base)
        if self.transforms:
            printer.print_string(", [")
            printer.print_list(self.transforms, printer.print_attribute)
            printer.print_string("]")
        printer.print_string(">")


def read_content(content: ContentAttr) -> np.ndarray:
    """Apply ``content``'s transformations, in order, to its base and return the result.

    This is the only place data is transformed (lazily, on read); the IR is not changed and
    nothing is cached. The result has the storage dtype of the final element type (quantized:
    integer storage values) and is read-only; it may be a view of the base's bytes."""
    t = content.base_type
    data = to_numpy(content.base)
    for i, tr in enumerate(content.transforms):
        try:
            out = tr.infer_type(t)
        except VerifyError as err:
            raise VerifyError(f"transformation {i} on {t}: {err.args[0]}", rule=err.rule) from None
        data = tr.apply(data, t, out)
        t = out
    result = np.asarray(data, dtype=dtype_of(t.element_type)).view()
    result.flags.writeable = False
    return result


__all__ = ["ContentAttr", "read_content"]
