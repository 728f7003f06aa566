"""Lowerings of TFLite builtin operators to TOSA 0.30, one module per op family.

Each lowering takes an ``OpContext`` and returns the IR values of the operator's outputs; its docstring cites
the TFLite section of ``tosa-lowerings-tf-tflite.txt`` ("TensorFlow Lite MLIR Dialect Legalization
(legalize_tflite)", below "the document") and states deviations from it. The document writes out 39 of its 123
``tfl.*`` ops (6 with a quantized path); most common ops (mul, max_pool_2d, mean, softmax, logistic, tanh, relu,
transpose_conv, quantize, resize, strided_slice) are TODO there: for those the docstring says so and follows
TFLite's reference kernels (``../shared/notes/inventory-tosa.md`` §2.5-2.7 lists the document's gaps and errors).
"""

from __future__ import annotations

from nnkiln.frontends.tflite.lowerings import (  # noqa: F401 - imported for their @lowering registrations
    activation,
    control,
    elementwise,
    logic,
    nn,
    quantize,
    reduce,
    shape,
    shape_more,
)
from nnkiln.frontends.tflite.lowerings._registry import LOWERINGS

__all__ = ["LOWERINGS"]
