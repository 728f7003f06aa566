"""Lowerings of TFLite builtin operators to TOSA 0.30, one module per op family.

Each lowering takes an ``OpContext`` and returns the IR values of the operator's outputs; its docstring cites
the TFLite section of ``tosa-lowerings-tf-tflite.txt`` (``legalize_tfl``) and states deviations from it.
"""

from __future__ import annotations

from nnkiln.frontends.tflite.lowerings import (  # noqa: F401 - imported for their @lowering registrations
    activation,
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
