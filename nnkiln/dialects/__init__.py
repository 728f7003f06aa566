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
    try:
        from nnkiln.dialects.buf import BUF

        result.append(BUF)
    except ImportError:
        pass
    try:
        from nnkiln.dialects.async_ import ASYNC

        result.append(ASYNC)
    except ImportError:
        pass
    try:
        from nnkiln.dialects.rt import RT

        result.append(RT)
    except ImportError:
        pass
    return result
