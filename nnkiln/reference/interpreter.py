"""The TOSA 0.30 reference interpreter: runs a tosa-level module op by op with numpy kernels.

``run(module, inputs)`` executes the module's entry function and returns its outputs:

- **Entry function.** If the module holds exactly one ``func.func`` it is the entry; otherwise the one
  named ``main``.
- **Verification first.** ``module.verify()`` runs before anything executes; a broken rule raises
  ``VerifyError`` (graph result ``tosa_error``, spec §1.7). Nothing is executed for an invalid graph.
- **Input names** (``input_names(func)``): argument ``i`` is called by the ``nnkiln.name`` string of its
  ``arg_attrs`` dictionary if present, else by its SSA name hint (``%x`` → ``"x"``), else ``"arg<i>"``.
- **Output names** (``output_names(func)``): result ``i`` is called by the ``nnkiln.name`` string of its
  ``res_attrs`` dictionary if present, else ``"output<i>"``.
- **Inputs** must be given for exactly these names, with exactly the argument's shape. Their dtype must
  be of the argument's family: bool arrays (or integer arrays holding only 0/1) for ``i1``; integer arrays
  whose values fit the element type's range (spec Table 4) for integer types; floating-point arrays for
  float types (converted to the storage dtype, rounding to nearest). Anything else is an ``InputError``.
- **Execution.** Ops run in block order; each op's kernel comes from ``nnkiln.reference.registry``.
  A REQUIRE failure raises ``TosaUnpredictable``; an op without a kernel (including a ``tosa.custom``
  whose identifier was not given to ``register_custom``) raises ``NotExecutableError`` naming it.
  Control-flow kernels run their regions through ``KernelCall.run_region``; a region may use values of
  the enclosing block directly or receive them as block arguments.
- **Memory.** An intermediate array is dropped right after its last use (uses inside nested regions
  count as uses by the op that holds the region).
- **Outputs** are writable arrays that own their memory: never views of constants, of inputs or of
  each other.

``load_inputs`` and ``save_outputs`` read and write ``.npy``/``.npz`` files for the command line
(``nnkiln.arrayfiles``, shared with the runtime's command line).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import ml_dtypes
import numpy as np
from xdsl.dialects.builtin import ArrayAttr, DictionaryAttr, IntegerAttr, ModuleOp, StringAttr, TensorType
from xdsl.dialects.func import FuncOp
from xdsl.ir import Block, Operation, SSAValue
from xdsl.traits import IsTerminator
from xdsl.utils.exceptions import VerifyException

from nnkiln.arrayfiles import load_inputs, save_outputs
from nnkiln.dialects.tosa.base import Kind, kind_of
from nnkiln.ir.elements import dtype_of
from nnkiln.ir.errors import InputError, NotExecutableError, VerifyError
from nnkiln.kinds import to_declared, with_empty_outputs, without_ignored_inputs
from nnkiln.reference.registry import KERNELS, Kernel, custom_kernel, load_kernels, make_call, register_custom

load_kernels()

NAME_ATTR = "nnkiln.name"
DTYPE_ATTR = "nnkiln.dtype"
IGNORED_INPUTS_ATTR = "nnkiln.ignored_inputs"
"""Module attribute: declared inputs the program does not read (zero-size ones), each ``{name, dtype, shape}``:
accepted, checked and ignored (``kinds.without_ignored_inputs``)."""
EMPTY_OUTPUTS_ATTR = "nnkiln.empty_outputs"
"""Module attribute: declared outputs of zero size, each ``{name, dtype, shape, index}`` (index: the position among
all the model's outputs). The program does not compute them; their value is known from the type
(``kinds.with_empty_outputs``)."""
"""The ``arg_attrs``/``res_attrs`` key that names a function input or output."""

_BF16 = np.dtype(ml_dtypes.bfloat16)

# ----------------------------------------------------------------------------------------------
# CUSTOM kernels

def _check_result_sizes(op: Operation) -> None:
    """Refuse an op whose results cannot fit in the machine's memory (rather than be killed by the OS)."""
    from nnkiln.targets import HOST_MEMORY

    total = 0
    for r in op.results:
        shape = r.type.get_shape() if isinstance(r.type, TensorType) else ()
        total += int(np.prod(shape, dtype=np.float64)) * 8  # at most 8 bytes per element
    if total > HOST_MEMORY.size:
        raise NotExecutableError(f"'{op.name}' would need about {total} bytes for its results; the machine has "
                                 f"{HOST_MEMORY.size} bytes of memory")


def custom_identifier(op: Operation) -> str | None:
    """The identifier of a ``tosa.custom`` op (its ``identifier`` property or attribute)."""
    for table in (op.properties, op.attributes):
        for key in ("identifier", "operator_code", "name"):
            attr = table.get(key)
            if isinstance(attr, StringAttr):
                return attr.data
    return None


# ----------------------------------------------------------------------------------------------
# Names of inputs and outputs


def _dict_name(attrs: ArrayAttr | None, i: int, key: str = NAME_ATTR) -> str | None:
    if attrs is None or i >= len(attrs.data):
        return None
    entry = attrs.data[i]
    if isinstance(entry, DictionaryAttr):
        name = entry.data.get(key)
        if isinstance(name, StringAttr):
            return name.data
    return None


def _zero_size_entries(module: ModuleOp, key: str) -> list[tuple[str, str, tuple[int, ...], int]]:
    """The module attribute ``key``'s ``{name, dtype, shape[, index]}`` entries as tuples (index -1 if absent)."""
    attr = module.attributes.get(key)
    if not isinstance(attr, ArrayAttr):
        return []
    out = []
    for d in attr.data:
        if isinstance(d, DictionaryAttr):
            name, dtype, shape, index = (d.data.get(k) for k in ("name", "dtype", "shape", "index"))
            if isinstance(name, StringAttr) and isinstance(dtype, StringAttr) and shape is not None:
                out.append((name.data, dtype.data, tuple(int(v) for v in shape.get_values()),  # type: ignore[attr-defined]
                            index.value.data if isinstance(index, IntegerAttr) else -1))
    return out


def ignored_inputs(module: ModuleOp) -> list[tuple[str, str, tuple[int, ...]]]:
    """The module's ``IGNORED_INPUTS_ATTR`` entries as ``(name, numpy dtype, shape)``."""
    return [e[:3] for e in _zero_size_entries(module, IGNORED_INPUTS_ATTR)]


def empty_outputs(module: ModuleOp) -> list[tuple[str, str, tuple[int, ...], int]]:
    """The module's ``EMPTY_OUTPUTS_ATTR`` entries as ``(name, numpy dtype, shape, position among the outputs)``."""
    return _zero_size_entries(module, EMPTY_OUTPUTS_ATTR)


def declared_dtypes(func: FuncOp) -> list[str | None]:
    """Per output, the element type the model declares (``nnkiln.dtype``) when TOSA computes it in another one."""
    return [_dict_name(func.res_attrs, i, DTYPE_ATTR) for i in range(len(func.function_type.outputs.data))]


def input_names(func: FuncOp) -> list[str]:
    """The names of ``func``'s inputs, in argument order (see the module docstring)."""
    n = len(func.function_type.inputs.data)
    args = func.body.blocks[0].args if func.body.blocks else ()
    names = []
    for i in range(n):
        name = _dict_name(func.arg_attrs, i)
        if name is None and i < len(args) and args[i].name_hint:
            name = args[i].name_hint
        names.append(name if name is not None else f"arg{i}")
    _check_unique(names, "input")
    return names


def output_names(func: FuncOp) -> list[str]:
    """The names of ``func``'s outputs, in result order (see the module docstring)."""
    n = len(func.function_type.outputs.data)
    names = [_dict_name(func.res_attrs, i) or f"output{i}" for i in range(n)]
    _check_unique(names, "output")
    return names


def _check_unique(names: Sequence[str], what: str) -> None:
    seen = set()
    for name in names:
        if name in seen:
            raise InputError(f"two function {what}s are both named '{name}'")
        seen.add(name)


def entry_function(module: ModuleOp) -> FuncOp:
    """The function ``run`` executes: the only ``func.func`` of the module, else ``@main``."""
    funcs = [op for op in module.body.block.ops if isinstance(op, FuncOp)]
    if len(funcs) == 1:
        func = funcs[0]
    else:
        named = [f for f in funcs if f.sym_name.data == "main"]
        if not named:
            listed = ", ".join("@" + f.sym_name.data for f in funcs) or "none"
            raise InputError(f"the module has no func.func @main to run (functions: {listed})")
        func = named[0]
    if not func.body.blocks:
        raise InputError(f"function @{func.sym_name.data} has no body")
    return func


# ----------------------------------------------------------------------------------------------
# Input checking


def _is_float_dtype(dtype: np.dtype) -> bool:
    return dtype.kind == "f" or dtype == _BF16


def convert_input(name: str, value: Any, ttype: TensorType) -> np.ndarray:
    """Check one input against its argument type and convert it to the storage dtype."""
    arr = np.asarray(value)
    shape = tuple(int(d) for d in ttype.get_shape())
    if arr.shape != shape:
        raise InputError(f"input '{name}' has shape {list(arr.shape)}, but the function expects {list(shape)} ({ttype})")
    target = dtype_of(ttype.element_type)
    kind = kind_of(ttype)
    src = arr.dtype
    if kind is Kind.BOOL:
        if src == np.bool_:
            return arr
        if src.kind in "iu" and bool(np.all((arr == 0) | (arr == 1))):
            return arr.astype(np.bool_)
        raise InputError(f"input '{name}' has dtype {src}, but the function expects booleans ({ttype})")
    if (kind is not None and kind.is_int) or (kind is None and target.kind in "iu"):
        if src.kind not in "iu":
            raise InputError(f"input '{name}' has dtype {src}, but the function expects integers ({ttype})")
        lo, hi = kind.int_range if kind is not None else (np.iinfo(target).min, np.iinfo(target).max)
        if arr.size and (int(arr.min()) < lo or int(arr.max()) > hi):
            raise InputError(
                f"input '{name}' holds values in [{int(arr.min())}, {int(arr.max())}], outside the range "
                f"[{lo}, {hi}] of {ttype.element_type}"
            )
        return arr if src == target else arr.astype(target)
    if _is_float_dtype(target):
        if not _is_float_dtype(src):
            raise InputError(f"input '{name}' has dtype {src}, but the function expects floating point ({ttype})")
        return arr if src == target else arr.astype(target)
    raise InputError(f"input '{name}': element type {ttype.element_type} is not supported by the interpreter")


def bind_inputs(func: FuncOp, inputs: Mapping[str, Any]) -> list[np.ndarray]:
    """The argument arrays of ``func`` in order, checked and converted (``InputError`` otherwise)."""
    names = input_names(func)
    missing = [n for n in names if n not in inputs]
    extra = sorted((n for n in inputs if n not in names), key=repr)  # names of any type
    if missing or extra:
        parts = []
        if missing:
            parts.append("missing " + ", ".join(f"'{n}'" for n in missing))
        if extra:
            parts.append("unknown " + ", ".join(repr(n) for n in extra))
        expected = ", ".join(f"'{n}'" for n in names) or "none"
        raise InputError(f"inputs do not match the function: {'; '.join(parts)} (expected: {expected})")
    arrays = []
    for name, ttype in zip(names, func.function_type.inputs.data):
        if not isinstance(ttype, TensorType):
            raise InputError(f"input '{name}' has type {ttype}; only tensors can be passed")
        arrays.append(convert_input(name, inputs[name], ttype))
    return arrays


# ----------------------------------------------------------------------------------------------
# Execution


class _Frame:
    """The values live in one block execution; lookups fall back to the enclosing frame."""

    def __init__(self, parent: _Frame | None):
        self.parent = parent
        self.values: dict[SSAValue, np.ndarray] = {}

    def get(self, value: SSAValue, user: Operation) -> np.ndarray:
        frame: _Frame | None = self
        while frame is not None:
            if value in frame.values:
                return frame.values[value]
            frame = frame.parent
        raise NotExecutableError(f"'{user.name}': operand {value.name_hint or value} has no value (used before definition?)")


def _is_terminator(op: Operation) -> bool:
    return op.has_trait(IsTerminator) or op.name in ("func.return", "tosa.yield")


class Interpreter:
    """Executes blocks of tosa ops; one instance per ``run`` call."""

    def __init__(self, kernels: Mapping[str, Kernel] | None = None):
        self.kernels = KERNELS if kernels is None else kernels
        self._frees: dict[int, list[list[SSAValue]]] = {}

    # -- liveness -------------------------------------------------------------------------------

    def _free_schedule(self, block: Block) -> list[list[SSAValue]]:
        """For each op index of ``block``: the values of this block whose last use is that op."""
        cached = self._frees.get(id(block))
        if cached is not None:
            return cached
        ops = list(block.ops)
        last: dict[SSAValue, int] = {}
        for arg in block.args:
            last[arg] = 0
        for i, op in enumerate(ops):
            for res in op.results:
                last[res] = i
            for nested in op.walk():
                for operand in nested.operands:
                    last[operand] = i
        owned = set(block.args) | {r for op in ops for r in op.results}
        schedule: list[list[SSAValue]] = [[] for _ in ops]
        for value, i in last.items():
            if value in owned and ops:
                schedule[i].append(value)
        self._frees[id(block)] = schedule
        return schedule

    # -- blocks ---------------------------------------------------------------------------------

    def run_block(self, block: Block, args: Sequence[np.ndarray], parent: _Frame | None) -> list[np.ndarray]:
        """Execute ``block`` with its arguments bound to ``args``; return its terminator's operands."""
        frame = _Frame(parent)
        if block.args:
            if len(args) != len(block.args):
                raise NotExecutableError(f"a block with {len(block.args)} arguments was given {len(args)} values")
            for arg, value in zip(block.args, args):
                frame.values[arg] = value
        schedule = self._free_schedule(block)
        result: list[np.ndarray] = []
        for i, op in enumerate(block.ops):
            if _is_terminator(op):
                result = [frame.get(v, op) for v in op.operands]
            else:
                outs = self.execute(op, frame)
                for res, value in zip(op.results, outs):
                    frame.values[res] = value
                del outs
            for value in schedule[i]:
                frame.values.pop(value, None)
        return result

    def execute(self, op: Operation, frame: _Frame) -> list[np.ndarray]:
        """Run one op's kernel on the values of its operands."""
        fn = self.kernels.get(op.name)
        if op.name == "tosa.custom":
            ident = custom_identifier(op)
            fn = custom_kernel(ident) if ident is not None else None
            if fn is None:
                raise NotExecutableError(
                    f"'tosa.custom' with identifier '{ident}' cannot be executed: no kernel was registered "
                    "for it (nnkiln.reference.register_custom)"
                )
        if fn is None:
            raise NotExecutableError(f"'{op.name}' has no reference kernel, so the graph cannot be executed")
        _check_result_sizes(op)
        inputs = [frame.get(v, op) for v in op.operands]
        call = make_call(op, inputs)
        del inputs
        if op.regions:
            call.run_region = self._region_runner(op, frame)
        # numpy returns scalars (np.generic) for rank-0 operations: make them 0-d arrays again
        outs = [np.asarray(o) if isinstance(o, np.generic) else o for o in fn(call)]
        del call
        self._check_outputs(op, outs)
        return outs

    def _region_runner(self, op: Operation, frame: _Frame) -> Callable[[int, Sequence[np.ndarray]], list[np.ndarray]]:
        def run_region(index: int, args: Sequence[np.ndarray]) -> list[np.ndarray]:
            region = op.regions[index]
            if not region.blocks:
                raise NotExecutableError(f"'{op.name}': region {index} is empty")
            return self.run_block(region.blocks[0], args, frame)

        return run_region

    @staticmethod
    def _check_outputs(op: Operation, outs: Sequence[np.ndarray]) -> None:
        if len(outs) != len(op.results):
            raise RuntimeError(f"internal error: the kernel of '{op.name}' returned {len(outs)} arrays for {len(op.results)} results")
        for res, arr in zip(op.results, outs):
            t = res.type
            if not isinstance(t, TensorType):
                continue
            shape = tuple(int(d) for d in t.get_shape())
            dtype = dtype_of(t.element_type)
            if not isinstance(arr, np.ndarray) or arr.shape != shape or arr.dtype != dtype:
                got = f"{arr.dtype}{list(arr.shape)}" if isinstance(arr, np.ndarray) else type(arr).__name__
                raise RuntimeError(
                    f"internal error: the kernel of '{op.name}' returned {got} for a result of type {t} "
                    f"({dtype}{list(shape)})"
                )


def _verify(module: ModuleOp) -> None:
    try:
        module.verify()
    except VerifyError:
        raise
    except VerifyException as err:
        raise VerifyError(str(err)) from None


def _owned_copies(outputs: Sequence[np.ndarray], user_inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
    """Outputs that own their memory: copy views, read-only arrays, inputs and repeated arrays."""
    seen: set[int] = {id(a) for a in user_inputs}
    result = []
    for arr in outputs:
        if arr.base is not None or not arr.flags.writeable or id(arr) in seen:
            arr = np.array(arr, copy=True)
        seen.add(id(arr))
        result.append(arr)
    return result


def run(module: ModuleOp, inputs: Mapping[str, Any]) -> dict[str, np.ndarray]:
    """Verify ``module`` and execute its entry function on ``inputs`` (by name); outputs by name.

    Raises ``VerifyError`` (tosa_error), ``InputError`` (inputs do not fit), ``TosaUnpredictable``
    (a REQUIRE failed) or ``NotExecutableError`` (an op has no kernel).
    """
    import nnkiln.reference  # noqa: F401  (registers every kernel module)

    func = entry_function(module)
    _verify(module)
    args = bind_inputs(func, without_ignored_inputs(inputs, ignored_inputs(module)))
    names = output_names(func)
    interp = Interpreter()
    outs = interp.run_block(func.body.blocks[0], args, None)
    if len(outs) != len(names):
        raise NotExecutableError(f"@{func.sym_name.data} returned {len(outs)} values for {len(names)} results")
    user_arrays = [a for a in inputs.values() if isinstance(a, np.ndarray)]
    outs = _owned_copies(outs, [*user_arrays, *args])
    outs = [o if d is None else to_declared(o, d, n) for o, d, n in zip(outs, declared_dtypes(func), names)]
    return with_empty_outputs(dict(zip(names, outs)), empty_outputs(module))


__all__ = [
    "NAME_ATTR",
    "Interpreter",
    "bind_inputs",
    "entry_function",
    "input_names",
    "load_inputs",
    "output_names",
    "register_custom",
    "run",
    "save_outputs",
]
