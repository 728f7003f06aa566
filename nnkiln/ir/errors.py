"""One exception hierarchy for everything nnkiln raises on purpose.

The command line turns each class into one clear message and a distinct exit code
(see ``nnkiln.cli.main``). Anything else that escapes is a compiler bug and is
reported as an internal error.
"""

from __future__ import annotations

from xdsl.utils.exceptions import VerifyException


class NnkilnError(Exception):
    """Base of every error nnkiln raises on purpose."""

    exit_code: int = 1


class InputError(NnkilnError):
    """A file cannot be read or parsed (bad syntax, unknown op, missing file)."""

    exit_code = 2


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


class FrontendError(NnkilnError):
    """A model file could not be imported; names the file and the source node."""

    def __init__(self, message: str, *, file: str = "", node: str = ""):
        super().__init__(message)
        self.file = file
        self.node = node

    def __str__(self) -> str:
        parts = [p for p in (self.file, self.node and f"node '{self.node}'") if p]
        prefix = ": ".join(parts)
        return f"{prefix}: {self.args[0]}" if prefix else str(self.args[0])


class PassError(NnkilnError):
    """A pass left invalid IR or failed: an internal error naming the pass and the invariant."""

    exit_code = 3


class TosaUnpredictable(NnkilnError):
    """A REQUIRE condition failed at run time: graph result ``tosa_unpredictable`` (spec §1.7, §3.1)."""

    exit_code = 4


class NotExecutableError(NnkilnError):
    """The graph is valid but cannot be executed here (e.g. a CUSTOM op with no registered kernel)."""

    exit_code = 5


class BlobError(NnkilnError):
    """A compiled blob is truncated, tampered with or of an unknown version."""


class NnefError(FrontendError):
    """An NNEF document breaks a rule of the NNEF specification; carries line and column."""

    def __init__(self, message: str, *, file: str = "", line: int = 0, column: int = 0):
        super().__init__(message, file=file)
        self.line = line
        self.column = column
