"""TFLite frontend: ``.tflite`` flatbuffers → ``tosa``-level modules (``reader``, ``importer``, ``lowerings``)."""

from __future__ import annotations

from nnkiln.frontends.tflite.importer import import_model, load_tflite
from nnkiln.frontends.tflite.reader import read_bytes, read_model

__all__ = ["import_model", "load_tflite", "read_bytes", "read_model"]
