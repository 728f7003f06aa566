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


def load_tosa1(path: str):  # noqa: ANN201 - returns an xDSL ModuleOp
    """Import a TOSA 1.x flatbuffer (a ``.tosa`` file, or a ``tosa_verif_build_tests`` case folder) as a verified
    ``tosa``-level module: ``nnkiln.load``'s TOSA path. The module's inputs and outputs carry the 1.x tensor names
    (``nnkiln.name``)."""
    from nnkiln.frontends import verify_naming_file
    from nnkiln.ir.verify import verify_module

    module = import_tosa1_file(path).module
    verify_naming_file(module, path, verify_module)
    return module


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
    "load_tosa1",
]
