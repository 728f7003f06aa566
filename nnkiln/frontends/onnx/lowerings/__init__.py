"""ONNX op lowerings: one function per ONNX op type, named like the op, grouped by family.

A lowering receives a ``NodeContext`` and returns one result per node output: a ``TensorValue``,
an IR value, or a numpy array (an import-time constant). Register with ``@lowering("Relu")``.
Families: ``elementwise`` (math, activations, comparison, logic), ``nn`` (conv, pool, gemm,
normalisation, softmax), ``shape`` (reshape, slicing, concatenation, gather, reductions, resize),
``quant`` (QDQ and QLinear ops), ``control`` (If, Loop), ``constants`` (Constant, Shape, ...).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from typing import Any

LOWERINGS: dict[str, Callable[[Any], Sequence[Any]]] = {}
FUSIONS: dict[str, list[Callable[[Any], Sequence[Any] | None]]] = {}
"""Per op type, patterns tried before the lowering (e.g. QDQ fusion): each returns the node's results,
or None to decline."""


def lowering(*op_types: str) -> Callable[[Callable[[Any], Sequence[Any]]], Callable[[Any], Sequence[Any]]]:
    """Register a lowering for the given ONNX op types."""

    def register(fn: Callable[[Any], Sequence[Any]]) -> Callable[[Any], Sequence[Any]]:
        for name in op_types:
            LOWERINGS[name] = fn
        return fn

    return register


def fusion(*op_types: str) -> Callable[[Callable[[Any], Sequence[Any] | None]], Callable[[Any], Sequence[Any] | None]]:
    """Register a pattern tried before the lowering of the given op types (it may return None)."""

    def register(fn: Callable[[Any], Sequence[Any] | None]) -> Callable[[Any], Sequence[Any] | None]:
        for name in op_types:
            FUSIONS.setdefault(name, []).append(fn)
        return fn

    return register


_FAMILIES = (
    "constants",
    "elementwise_math",
    "elementwise_activation",
    "elementwise_logic",
    "elementwise_cast",
    "approx",
    "nn",
    "nn_conv",
    "nn_norm",
    "shape_views",
    "shape_gather",
    "shape_generate",
    "shape_resize",
    "grid_sample",
    "reduce",
    "quant_ops",
    "quant_qdq_fusion",
    "control",
    "composite",
    "composite_attention",
    "composite_loss",
    "composite_rnn",
    "composite_signal",
    "composite_more",
)

for _family in _FAMILIES:
    try:
        importlib.import_module(f"{__name__}.{_family}")
    except ModuleNotFoundError as _err:
        if _err.name != f"{__name__}.{_family}":
            raise
