"""NNEF 1.0.3 reader: parser, checker, compound expansion, containers and tensor files (Khronos NNEF)."""

from __future__ import annotations

from nnkiln.frontends.nnef.ast import Document
from nnkiln.frontends.nnef.document import parse_document, standard_fragments

__all__ = ["Document", "parse_document", "standard_fragments"]
