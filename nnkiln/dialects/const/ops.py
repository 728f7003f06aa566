"""``const.declare`` (spec §5.2.3.1 ``const.Declare``): a constant tensor whose data is a
``#const.content`` attribute, transformed lazily on read.

Syntax (the spec's ``attr-dict type($output) = $content``, op name lower case like our other ops)::

    %w = const.declare tensor<16xf16> = #const.content<dense<1.0> : tensor<1x16x1x1xf32>,
           [#const.reshape<[16]>, #const.convert_elem_type<f16>]>

The generic form ``"const.declare"() <{content = #const.content<...>}> : () -> tensor<16xf16>``
parses too. Verification (spec §2, IR validity rule 5): the chain of transformations is well typed
and the result type equals the content's final type (shape and element type).

Decisions: ``fold()`` follows xDSL's folding protocol (``HasFolderInterface``; the op is
``ConstantLike`` and ``Pure``) and returns the ``ContentAttr`` itself, without reading data; the
numpy data comes from ``read()`` / ``read_content``. Passes that fold an op into a constant append a
transformation with ``append_transformation`` instead of materialising the data.
"""

from __future__ import annotations

from typing import ClassVar, Self

import numpy as np
from xdsl.dialects.builtin import TensorType
from xdsl.interfaces import HasFolderInterface
from xdsl.ir import Attribute
from xdsl.irdl import IRDLOperation, irdl_op_definition, prop_def, result_def, traits_def
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import ConstantLike, Pure

from nnkiln.dialects.const.content import ContentAttr, read_content
from nnkiln.dialects.const.transforms import TransformAttr
from nnkiln.ir.errors import VerifyError


@irdl_op_definition
class DeclareOp(IRDLOperation, HasFolderInterface):
    """Constant declaration (spec §5.2.3.1 ``const.Declare``); result type == content final type."""

    name = "const.declare"

    content = prop_def(ContentAttr)
    output = result_def(TensorType)

    traits = traits_def(Pure(), ConstantLike())
    # verify_ reads only the result type and the content property (see nnkiln.ir.verify)
    VERIFY_IS_LOCAL: ClassVar[bool] = True

    def __init__(self, content: ContentAttr, result_type: TensorType | None = None):
        """Declare ``content``; the result type defaults to the content's final type."""
        super().__init__(
            properties={"content": content},
            result_types=[result_type if result_type is not None else content.final_type()],
        )

    def verify_(self) -> None:
        try:
            final = self.content.final_type()
            if self.output.type != final:
                raise VerifyError(
                    f"result type {self.output.type} does not match the content's final type {final}",
                    rule="result type == content final type",
                )
        except VerifyError as err:
            err.op_name = self.name
            raise

    def fold(self) -> tuple[Attribute]:
        """xDSL folding: the (lazy) content attribute; no data is read."""
        return (self.content,)

    def read(self) -> np.ndarray:
        """The constant's data, transformations applied now (see ``read_content``)."""
        return read_content(self.content)

    def print(self, printer: Printer) -> None:
        printer.print_op_attributes(self.attributes)
        printer.print_string(" ")
        printer.print_attribute(self.output.type)
        printer.print_string(" = ")
        printer.print_attribute(self.content)

    @classmethod
    def parse(cls, parser: Parser) -> Self:
        attrs = parser.parse_optional_attr_dict()
        result_type = parser.parse_type()
        parser.parse_punctuation("=")
        pos = parser.pos
        content = parser.parse_attribute()
        if not isinstance(content, ContentAttr):
            parser.raise_error(f"const.declare expects a #const.content attribute, got {content}", pos)
        if not isinstance(result_type, TensorType):
            parser.raise_error(f"const.declare expects a tensor type, got {result_type}")
        op = cls(content, result_type)
        op.attributes |= attrs
        return op


def append_transformation(op: DeclareOp, *transforms: TransformAttr) -> DeclareOp:
    """A new (not inserted) ``const.declare`` whose content is ``op``'s plus ``transforms``.

    This is how passes fold a data-movement or conversion op into a constant without touching the
    data: ``rewriter.replace_op(reshape, append_transformation(decl, ReshapeAttr(shape)))``. ``op``
    is left unchanged (it may have other users). The chain is type-checked now (``VerifyError``).
    """
    return DeclareOp(op.content.transform(*transforms))


def materialize(op: DeclareOp) -> DeclareOp:
    """A new (not inserted) ``const.declare`` with the data transformed into its base."""
    return DeclareOp(op.content.materialize(), op.output.type)  # type: ignore[arg-type]


__all__ = ["DeclareOp", "append_transformation", "materialize"]
