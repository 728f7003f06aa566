"""The ``tosa`` dialect: TOSA 0.30, all 69 operators (spec ``tosa-0.30-specification.txt``).

Ops live in one module per spec chapter (``ops_tensor`` = §2.3, ..., ``ops_control_flow`` = §2.16).
``TOSA`` is the xDSL ``Dialect``; ``OPS`` lists the op classes.
"""

from __future__ import annotations

from xdsl.ir import Dialect

from nnkiln.dialects.tosa import (
    ops_activation,
    ops_comparison,
    ops_control_flow,
    ops_custom,
    ops_data_layout,
    ops_data_nodes,
    ops_elementwise_binary,
    ops_elementwise_ternary,
    ops_elementwise_unary,
    ops_image,
    ops_reduction,
    ops_scatter_gather,
    ops_tensor,
    ops_type_conversion,
)

_MODULES = (
    ops_tensor,
    ops_activation,
    ops_elementwise_binary,
    ops_elementwise_unary,
    ops_elementwise_ternary,
    ops_comparison,
    ops_reduction,
    ops_data_layout,
    ops_scatter_gather,
    ops_image,
    ops_type_conversion,
    ops_data_nodes,
    ops_custom,
    ops_control_flow,
)


def _collect() -> tuple[list[type], list[type]]:
    from xdsl.ir import Attribute, Operation

    ops: list[type] = []
    attrs: list[type] = []
    for mod in _MODULES:
        for obj in vars(mod).values():
            if not isinstance(obj, type) or not isinstance(getattr(obj, "name", None), str):
                continue
            if issubclass(obj, Operation) and obj.name.startswith("tosa.") and obj not in ops:
                ops.append(obj)
            elif issubclass(obj, Attribute) and obj.name.startswith("tosa.") and obj not in attrs:
                attrs.append(obj)
    return ops, attrs


OPS, ATTRIBUTES = _collect()
TOSA = Dialect("tosa", OPS, ATTRIBUTES)

__all__ = ["TOSA", "OPS", "ATTRIBUTES"]
