"""The reference interpreter: executes tosa-level IR with bit-exact numpy kernels (spec pseudocode).

``run(module, inputs)`` is the entry point (see ``nnkiln.reference.interpreter`` for the input/output
naming convention). Kernel modules are grouped by spec chapter (``tensor_ops`` §2.3, ``activation``
§2.4, ``elementwise`` §2.5–2.8, ``reduction`` §2.9, ``data_layout`` §2.10, ``scatter_gather`` §2.11,
``image`` §2.12, ``type_conversion`` §2.13, ``data_nodes`` §2.14, ``control_flow`` §2.16) and register
themselves with ``nnkiln.reference.registry``. The numeric kernels import no xDSL, so the runtime can
reuse them; importing this package does not import xDSL until ``run`` & co. are used.
"""

from __future__ import annotations

from typing import Any

_API = ("run", "input_names", "output_names", "register_custom", "load_inputs", "save_outputs", "entry_function")


def __getattr__(name: str) -> Any:
    if name in _API:
        from nnkiln.reference import interpreter

        return getattr(interpreter, name)
    raise AttributeError(f"module 'nnkiln.reference' has no attribute {name!r}")


__all__ = list(_API)
