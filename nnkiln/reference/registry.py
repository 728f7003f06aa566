"""The kernel registry of the reference interpreter: one numpy kernel per TOSA op name.

A kernel is ``fn(call: KernelCall) -> list[np.ndarray]``: it reads the op's input arrays
(``call.inputs``, in operand order, each in the numpy storage dtype of its element type), its
attributes as Python values (``call.attrs``, see ``nnkiln.dialects.tosa.base.from_attr``) and its
result types (``call.out_kinds`` / ``call.out_dtypes``), and returns one array per result.
REQUIRE failures raise ``nnkiln.ir.errors.TosaUnpredictable`` (use ``unpredictable_if``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from nnkiln.errors import TosaUnpredictable
from nnkiln.kinds import Kind


@dataclass
class KernelCall:
    """Everything a kernel needs about one op execution (no xDSL types: the runtime builds these too)."""

    name: str
    """The op name, e.g. ``tosa.conv2d`` (used in REQUIRE messages)."""
    inputs: list[np.ndarray]
    attrs: dict[str, Any]
    out_kinds: list[Kind]
    out_dtypes: list[np.dtype]
    out_shapes: list[tuple[int, ...]]
    in_kinds: list[Kind | None] = field(default_factory=list)
    op: Any = None
    """The xDSL op when called by the interpreter (control flow, constants); ``None`` in the runtime."""
    run_region: Callable[[int, Sequence[np.ndarray]], list[np.ndarray]] | None = field(default=None)
    """For control flow: run region ``i`` of the op on the given arguments, returning its yielded values."""


Kernel = Callable[[KernelCall], list[np.ndarray]]
KERNELS: dict[str, Kernel] = {}


def kernel(*names: str) -> Callable[[Kernel], Kernel]:
    """Register a kernel for the given op names: ``@kernel("tosa.add")``."""

    def register(fn: Kernel) -> Kernel:
        for name in names:
            KERNELS[name] = fn
        return fn

    return register


def unpredictable_if(cond: bool | np.bool_ | np.ndarray, op_name: str, rule: str) -> None:
    """REQUIRE(not cond): raise ``TosaUnpredictable`` naming the op and the rule (spec §3.1)."""
    if np.any(cond):
        raise TosaUnpredictable(f"'{op_name}': REQUIRE failed: {rule}")


def make_call(op: Any, inputs: list[np.ndarray]) -> KernelCall:
    """The call of an xDSL op (used by the interpreter and constant folding)."""
    from xdsl.dialects.builtin import TensorType

    from nnkiln.dialects.tosa.base import TosaOp, from_attr, kind_of
    from nnkiln.ir.elements import dtype_of

    out_types = [r.type for r in op.results]
    if isinstance(op, TosaOp):
        attrs = op.attr_values()  # defaults of absent optional properties included
    else:
        attrs = {k: from_attr(a) for k, a in op.properties.items()}
    return KernelCall(
        name=op.name,
        op=op,
        in_kinds=[kind_of(v.type) for v in op.operands],
        inputs=inputs,
        attrs=attrs,
        out_kinds=[kind_of(t) for t in out_types],  # type: ignore[misc]
        out_dtypes=[dtype_of(t.element_type) for t in out_types if isinstance(t, TensorType)],
        out_shapes=[tuple(t.get_shape()) for t in out_types if isinstance(t, TensorType)],
    )


NUMERIC_KERNEL_MODULES = (
    "elementwise",
    "reduction",
    "data_layout",
    "scatter_gather",
    "tensor_ops",
    "activation",
    "type_conversion",
    "image",
)
"""Kernel modules free of xDSL (the runtime may load these alone)."""

IR_KERNEL_MODULES = ("data_nodes", "control_flow")
"""Kernel modules that need the IR (constants, regions)."""


def load_kernels(with_ir: bool = True) -> dict[str, Kernel]:
    """Import the kernel modules so they register themselves; returns the registry."""
    import importlib

    for name in NUMERIC_KERNEL_MODULES + (IR_KERNEL_MODULES if with_ir else ()):
        importlib.import_module(f"nnkiln.reference.{name}")
    return KERNELS


# -- tosa.custom kernels (shared by the reference interpreter and the runtime; no xDSL) -------------------

CUSTOM_KERNELS: dict[str, Callable[[KernelCall], list[np.ndarray]]] = {}
_CUSTOM_PROVIDERS = {"nnef.": "nnkiln.reference.custom_nnef", "math.": "nnkiln.reference.custom_math"}
"""Identifier prefix → module whose ``register()`` registers the kernels of nnkiln's own custom ops (imported on
first use, so a saved blob with such an op runs in a fresh process)."""


def register_custom(identifier: str, fn: Callable[[KernelCall], list[np.ndarray]]) -> None:
    """Let the reference interpreter and the runtime execute ``tosa.custom`` ops whose identifier is
    ``identifier``; ``fn`` is a kernel like any other: ``fn(call: KernelCall) -> list[np.ndarray]``
    (``call.attrs`` holds the op's ``identifier``, ``config`` and ``implementation_attrs``)."""
    CUSTOM_KERNELS[identifier] = fn


def custom_kernel(identifier: str) -> Callable[[KernelCall], list[np.ndarray]] | None:
    """The kernel registered for ``identifier`` (loading nnkiln's own providers on demand), or None."""
    fn = CUSTOM_KERNELS.get(identifier)
    if fn is None:
        for prefix, module in _CUSTOM_PROVIDERS.items():
            if identifier.startswith(prefix):
                import importlib

                importlib.import_module(module).register()
                fn = CUSTOM_KERNELS.get(identifier)
    return fn

