"""The ONNX frontend: ``load_onnx(path, shapes=None)`` imports a model into the ``tosa`` dialect."""

from nnkiln.frontends.onnx.importer import OnnxImporter, load_onnx

__all__ = ["OnnxImporter", "load_onnx"]
