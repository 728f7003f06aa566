"""The table of TFLite builtin operator name → lowering function, filled by ``@lowering`` decorators."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from xdsl.ir import SSAValue

    from nnkiln.frontends.tflite.importer import OpContext

Lowering = Callable[["OpContext"], Sequence["SSAValue"]]
LOWERINGS: dict[str, Lowering] = {}


def lowering(*names: str) -> Callable[[Lowering], Lowering]:
    """Register the decorated function for each TFLite builtin operator name in ``names``."""

    def register(fn: Lowering) -> Lowering:
        for n in names:
            LOWERINGS[n] = fn
        return fn

    return register
