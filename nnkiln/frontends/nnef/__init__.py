"""NNEF 1.0.3 reader: parser, checker, compound expansion, containers and tensor files (Khronos NNEF)."""

from __future__ import annotations

from nnkiln.frontends.nnef.ast import Document
from nnkiln.frontends.nnef.container import Container, QuantInfo, check_main, load_container, parse_quant
from nnkiln.frontends.nnef.document import parse_document, standard_fragments
from nnkiln.frontends.nnef.expand import FlatGraph, FlatOp, TensorRef, expand
from nnkiln.frontends.nnef.tensor_file import ItemType, TensorData, read_tensor, write_tensor


def load_nnef(path: str, shapes=None, *, lenient: bool = False):  # noqa: ANN001, ANN201
    """Import an NNEF container (folder or tar archive) as a verified ``tosa``-level module.

    ``shapes`` maps external input names to new shapes (replacing the ``external(shape = ...)``).
    See :mod:`nnkiln.frontends.nnef.lowering` and :mod:`nnkiln.frontends.nnef.lowering_quant`.
    """
    from nnkiln.frontends.nnef.loader import load_nnef as _load

    return _load(path, shapes, lenient=lenient)


__all__ = ["Container", "Document", "FlatGraph", "FlatOp", "ItemType", "QuantInfo", "TensorData", "TensorRef",
           "check_main", "expand", "load_container", "load_nnef", "parse_document", "parse_quant", "read_tensor",
           "standard_fragments", "write_tensor"]
