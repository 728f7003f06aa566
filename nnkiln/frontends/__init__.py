"""Frontends: model files → ``tosa``-level modules. ``load`` picks the frontend by file type."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

from xdsl.dialects.builtin import ModuleOp

from nnkiln.ir.errors import InputError


def detect_format(path: str) -> str:
    """``mlir``, ``onnx``, ``nnef``, ``tosa`` (a TOSA 1.x flatbuffer) or ``tflite``, from the name and first bytes."""
    if os.path.isdir(path):
        if os.path.exists(os.path.join(path, "graph.nnef")):
            return "nnef"
        raise InputError(f"{path}: a folder, but not an NNEF model (no graph.nnef)")
    lower = path.lower()
    for ext, fmt in ((".mlir", "mlir"), (".onnx", "onnx"), (".nnef", "nnef"), (".tgz", "nnef"),
                     (".tar.gz", "nnef"), (".tar", "nnef"), (".tosa", "tosa"), (".tflite", "tflite")):
        if lower.endswith(ext):
            return fmt
    try:
        with open(path, "rb") as f:
            head = f.read(64)
    except OSError as err:
        raise InputError(f"{path}: cannot read: {err.strerror}") from None
    text = head.lstrip()
    if text.startswith((b"func.func", b"module", b"builtin.module", b'"builtin.module"', b"//", b"#")):
        return "mlir"
    if head[4:8] == b"TOSA":  # the flatbuffer file identifier of tosa.fbs
        return "tosa"
    if head[4:8] == b"TFL3":  # the flatbuffer file identifier of TFLite's schema.fbs
        return "tflite"
    if head[:1] == b"\x08":  # protobuf field 1 (ir_version), varint: how ONNX files begin
        return "onnx"
    raise InputError(f"{path}: unknown model format (expected .mlir, .onnx, .tosa, .tflite, an NNEF folder or .tgz)")


def verify_naming_file(module: ModuleOp, path: str, verify: Any) -> None:
    """``verify(module)``; a ``VerifyError``'s location is prefixed with ``path`` (so that the error names the file,
    as every other load error does)."""
    from nnkiln.ir.errors import VerifyError

    try:
        verify(module)
    except VerifyError as err:
        if not err.location.startswith(path):
            err.location = f"{path}: {err.location}" if err.location else path
        raise


def load(path: str, shapes: Mapping[str, Sequence[int]] | None = None,
         constants: Mapping[str, Any] | None = None) -> ModuleOp:
    """Import a model file of any supported format as a verified ``tosa``-level module. ``constants`` binds graph
    inputs to values (ONNX: shape, axes, pads, sizes ... that TOSA's static shapes need at import); they are then
    no longer inputs."""
    from nnkiln.ir.collector import fewer_collections

    with fewer_collections():
        return _load(path, shapes, constants)


def _load(path: str, shapes: Mapping[str, Sequence[int]] | None, constants: Mapping[str, Any] | None = None
          ) -> ModuleOp:
    fmt = detect_format(path)
    if constants and fmt != "onnx":
        raise InputError(f"{path}: constants= binds inputs of ONNX models; this is a {fmt} model")
    if fmt == "mlir":
        from nnkiln.ir.text import parse_module_file
        from nnkiln.ir.verify import verify_module

        module = parse_module_file(path)
        verify_naming_file(module, path, verify_module)
        return module
    if fmt == "onnx":
        from nnkiln.frontends.onnx import load_onnx

        return load_onnx(path, shapes, constants)
    if fmt == "nnef":
        try:
            from nnkiln.frontends.nnef import load_nnef  # type: ignore[attr-defined]
        except ImportError:
            raise InputError(f"{path}: the NNEF frontend is not available yet") from None
        return load_nnef(path, shapes)
    if fmt == "tosa":
        from nnkiln.frontends.tosa1 import load_tosa1

        return load_tosa1(path)
    if fmt == "tflite":
        from nnkiln.frontends.tflite import load_tflite

        return load_tflite(path)
    raise InputError(f"{path}: unsupported format {fmt}")
