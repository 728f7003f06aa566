"""The reference interpreter: executes tosa-level IR with bit-exact numpy kernels (spec pseudocode).

``run(module, inputs)`` is the entry point (see ``nnkiln.reference.interpreter`` for the input/output
naming convention). Importing this package registers every kernel module with the registry.
"""

from __future__ import annotations

import importlib

_KERNEL_MODULES = (
    "elementwise",
    "reduction",
    "data_layout",
    "scatter_gather",
    "data_nodes",
    "control_flow",
    "scaling",
    "tensor_ops",
    "activation",
    "type_conversion",
    "image",
)


def _load_kernels() -> None:
    for name in _KERNEL_MODULES:
        full = f"{__name__}.{name}"
        try:
            importlib.import_module(full)
        except ModuleNotFoundError as err:
            if err.name != full:  # a missing dependency inside an existing module is a real error
                raise


_load_kernels()

from nnkiln.reference.interpreter import (  # noqa: E402
    input_names,
    load_inputs,
    output_names,
    register_custom,
    run,
    save_outputs,
)

__all__ = ["run", "input_names", "output_names", "register_custom", "load_inputs", "save_outputs"]
