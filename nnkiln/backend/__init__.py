"""L0: the blob backend. ``blob_format`` (format, encoder, validating decoder; no xDSL) and
``writer`` (rt-level module -> blob; needs xDSL, imported on use)."""

from __future__ import annotations

from typing import Any


def __getattr__(name: str) -> Any:
    if name in ("write_blob", "blob_from_module", "blob_and_bytes_from_module"):
        from nnkiln.backend import writer

        return getattr(writer, name)
    raise AttributeError(f"module 'nnkiln.backend' has no attribute {name!r}")
