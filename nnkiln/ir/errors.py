"""The error hierarchy (``nnkiln.errors``) plus the IR-level ``VerifyError`` and ``ShapeError``."""

from __future__ import annotations

from xdsl.utils.exceptions import VerifyException

from nnkiln.errors import (
    BlobError,
    FrontendError,
    InputError,
    NnefError,
    NnkilnError,
    NotExecutableError,
    PassError,
    TosaUnpredictable,
)


class VerifyError(NnkilnError, VerifyException):
    """The IR breaks a rule. ``op_name`` and ``rule`` say which op broke which rule.

    TOSA's ERROR_IF conditions raise this (graph result ``tosa_error``, spec §1.7).
    It derives from xDSL's ``VerifyException`` so xDSL's own verifier passes it through.
    """

    def __init__(self, message: str, *, op_name: str = "", rule: str = "", location: str = ""):
        super().__init__(message)
        self.op_name = op_name
        self.rule = rule
        self.location = location

    def describe(self) -> str:
        where = f"{self.location}: " if self.location else ""
        name = f"'{self.op_name}' " if self.op_name else ""
        rule = f"[{self.rule}] " if self.rule else ""
        return f"{where}{name}{rule}{self.args[0]}"


class ShapeError(VerifyError):
    """Shape inference found an ERROR_IF condition on shapes or shape attributes."""


__all__ = [
    "BlobError",
    "FrontendError",
    "InputError",
    "NnefError",
    "NnkilnError",
    "NotExecutableError",
    "PassError",
    "ShapeError",
    "TosaUnpredictable",
    "VerifyError",
]
