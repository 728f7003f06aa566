"""One exception hierarchy for everything nnkiln raises on purpose (no xDSL import: the runtime uses it).

The command line turns each class into one clear message and a distinct exit code
(see ``nnkiln.cli.main``). Anything else that escapes is a compiler bug and is reported as an
internal error. ``VerifyError`` (an IR rule broken) lives in ``nnkiln.ir.errors`` because it also
derives from xDSL's ``VerifyException``.
"""

from __future__ import annotations

from collections.abc import Iterable


class NnkilnError(Exception):
    """Base of every error nnkiln raises on purpose."""

    exit_code: int = 1


class NnkilnWarning(UserWarning):
    """Something the user should know that did not stop the work (e.g. a symbolic dimension bound to 1).
    The command line prints each as one ``warning:`` line on stderr."""


def warn(message: str) -> None:
    """Issue an ``NnkilnWarning`` (shown once per message, as Python's warnings do)."""
    import warnings

    warnings.warn(message, NnkilnWarning, stacklevel=2)


class InputError(NnkilnError):
    """A file cannot be read or parsed (bad syntax, unknown op, missing file)."""

    exit_code = 2


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

    def __str__(self) -> str:
        where = self.file or "<input>"
        if self.line:
            where += f":{self.line}:{self.column}"
        return f"{where}: {self.args[0]}"


def did_you_mean(name: str, choices: Iterable[str]) -> str:
    """``"; did you mean 'x'?"`` naming the choices closest to a mistyped ``name`` (difflib's ratio >= 0.6), or ''."""
    import difflib

    close = difflib.get_close_matches(name, list(choices), n=3)
    if not close:
        return ""
    return "; did you mean " + " or ".join(f"'{c}'" for c in close) + "?"
