"""nnkiln's dialects. ``all_dialects()`` lists those a context loads."""

from __future__ import annotations

from xdsl.ir import Dialect


def all_dialects() -> list[Dialect]:
    from nnkiln.dialects.tosa import TOSA

    result = [TOSA]
    try:
        from nnkiln.dialects.quant import QUANT

        result.append(QUANT)
    except ImportError:
        pass
    try:
        from nnkiln.dialects.const import CONST

        result.append(CONST)
    except ImportError:
        pass
    return result
