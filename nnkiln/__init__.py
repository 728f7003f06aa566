"""nnkiln: a neural-network compiler on xDSL (TOSA 0.30 IR, reference interpreter, lower levels)."""

from __future__ import annotations

from typing import Any

from nnkiln.errors import (
    BlobError,
    FrontendError,
    InputError,
    NnefError,
    NnkilnError,
    NnkilnWarning,
    NotExecutableError,
    PassError,
    TosaUnpredictable,
)


def __getattr__(name: str) -> Any:
    # VerifyError/ShapeError derive from xDSL's VerifyException: imported on first use so that
    # `nnkiln.runtime` (which must not import xDSL) can import this package.
    if name in ("VerifyError", "ShapeError"):
        from nnkiln.ir import errors

        return getattr(errors, name)
    if name in ("reference", "frontends", "runtime"):  # subpackages, so `nnkiln.reference.run` just works
        import importlib

        return importlib.import_module(f"nnkiln.{name}")
    if name == "compile":
        from nnkiln.compiler import compile as _compile

        return _compile
    if name == "InferenceSession":
        from nnkiln.session import InferenceSession

        return InferenceSession
    if name == "Executable":
        from nnkiln.runtime import Executable

        return Executable
    raise AttributeError(f"module 'nnkiln' has no attribute {name!r}")

__version__ = "0.1.0"

__all__ = [
    "BlobError",
    "Executable",
    "FrontendError",
    "InferenceSession",
    "InputError",
    "NnefError",
    "NnkilnError",
    "NnkilnWarning",
    "NotExecutableError",
    "PassError",
    "ShapeError",
    "TosaUnpredictable",
    "VerifyError",
    "compile",
    "load",
    "parse",
    "verify",
]


def load(path: str, shapes=None, constants=None):  # noqa: ANN001, ANN201 - returns an xDSL ModuleOp
    """Import a model (``.mlir``, ``.onnx``, ...) as a verified ``tosa``-level module.

    ``shapes`` binds symbolic input dimensions: ``{"input": [1, 3, 224, 224]}``. ``constants`` binds ONNX graph
    inputs to values, e.g. ``{"axes": np.array([1])}``: inputs whose values TOSA's static shapes need at import
    (shape, axes, pads, sizes, k, ...); they are then no longer inputs of the module.
    """
    from nnkiln.frontends import load as _load

    return _load(path, shapes, constants)


def parse(text: str, filename: str = "<input>"):  # noqa: ANN201 - returns an xDSL ModuleOp
    """Parse MLIR text (tosa level) into a module."""
    from nnkiln.ir.text import parse_module

    return parse_module(text, filename=filename)


def verify(module) -> None:  # noqa: ANN001
    """Verify a module; raises ``VerifyError`` naming the op and the rule."""
    from nnkiln.ir.verify import verify_module

    verify_module(module)
