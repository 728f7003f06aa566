"""TOSA 1.x flatbuffer frontend: imports 1.x graphs (``.tosa``) into the TOSA 0.30 dialect.

See ``nnkiln.frontends.tosa1.importer`` for the table of every 0.30/1.x difference handled or skipped.
"""

from __future__ import annotations

from nnkiln.frontends.tosa1.export import Tosa1ExportError, export_main, export_tosa1_mlir
from nnkiln.frontends.tosa1.importer import (
    InvalidTosa1Graph,
    NotImported,
    Tosa1Import,
    UnsupportedIn030,
    import_tosa1_bytes,
    import_tosa1_file,
)

__all__ = [
    "Tosa1ExportError",
    "export_main",
    "export_tosa1_mlir",
    "InvalidTosa1Graph",
    "NotImported",
    "Tosa1Import",
    "UnsupportedIn030",
    "import_tosa1_bytes",
    "import_tosa1_file",
]
