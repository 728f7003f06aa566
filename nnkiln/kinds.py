"""Element kinds of TOSA's number formats (spec Table 4), free of xDSL so the runtime can use them."""

from __future__ import annotations

from enum import Enum


class Kind(Enum):
    """Element kinds of spec Table 4 (number formats), by storage type."""

    BOOL = "bool"
    I4 = "i4"
    I8 = "i8"
    I16 = "i16"
    I32 = "i32"
    I48 = "i48"
    U8 = "u8"
    U16 = "u16"
    F16 = "f16"
    BF16 = "bf16"
    F32 = "f32"

    @property
    def is_float(self) -> bool:
        return self in (Kind.F16, Kind.BF16, Kind.F32)

    @property
    def is_int(self) -> bool:
        return not self.is_float and self is not Kind.BOOL

    @property
    def bits(self) -> int:
        return {"bool": 1, "i4": 4, "i8": 8, "i16": 16, "i32": 32, "i48": 48, "u8": 8, "u16": 16,
                "f16": 16, "bf16": 16, "f32": 32}[self.value]

    @property
    def int_range(self) -> tuple[int, int]:
        """minimum<T>, maximum<T> of spec Table 4 (int4 is symmetric: [-7, 7])."""
        if self is Kind.I4:
            return -7, 7
        if self is Kind.U8:
            return 0, 255
        if self is Kind.U16:
            return 0, 65535
        if self is Kind.BOOL:
            return 0, 1
        if self.is_int:
            return -(1 << (self.bits - 1)), (1 << (self.bits - 1)) - 1
        raise ValueError(f"{self.value} is not an integer kind")


FLOAT_KINDS = (Kind.F16, Kind.BF16, Kind.F32)

DECLARED_DTYPES = frozenset({"bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
                             "float16", "float32", "float64"})
"""Element types a model may declare for an output (numpy names) that differ from the TOSA type computing it:
ONNX's int64 (ArgMax, shapes, indices) and float64 are computed in int32 / float32."""


def to_declared(array: object, dtype: str, name: str) -> object:
    """Output ``name`` (a numpy array as TOSA computed it) as the element type the model declares, exactly: every
    value must be representable (an error otherwise, never a wrap or a silent rounding of an integer)."""
    import numpy as np

    from nnkiln.errors import NnkilnError

    a = np.asarray(array)
    target = np.dtype(dtype)
    if a.dtype == target:
        return a
    if target.kind in "iu" and a.dtype.kind in "iub" and a.size:
        info = np.iinfo(target)
        lo, hi = int(a.min()), int(a.max())
        if lo < info.min or hi > info.max:
            raise NnkilnError(f"output '{name}' holds values in [{lo}, {hi}], outside the {dtype} the model declares")
    return a.astype(target)


def without_ignored_inputs(inputs: object, ignored: list[tuple[str, str, tuple[int, ...]]]) -> object:
    """``inputs`` (a mapping by name) without the declared inputs the program does not read (``ignored``: name,
    numpy dtype, shape; a zero-size input carries no data), after checking the shape and element type family of
    each one given: a model's every declared input is accepted, never silently a wrong one."""
    import numpy as np

    from nnkiln.errors import InputError

    if not ignored:
        return inputs
    names = {name for name, _, _ in ignored}
    for name, dtype, shape in ignored:
        if name not in inputs:  # type: ignore[operator]
            continue
        a = np.asarray(inputs[name])  # type: ignore[index]
        want = np.dtype(dtype)
        family = {"b": "b", "i": "iu", "u": "iu", "f": "f"}
        if tuple(a.shape) != tuple(shape) or a.dtype.kind not in family.get(want.kind, want.kind):
            raise InputError(f"input '{name}' has shape {list(a.shape)} and dtype {a.dtype}, but the model declares "
                             f"{list(shape)} {dtype}")
    return {k: v for k, v in inputs.items() if k not in names}  # type: ignore[attr-defined]


def with_empty_outputs(outputs: dict, empty: list[tuple[str, str, tuple[int, ...], int]]) -> dict:
    """``outputs`` (by name, in program order) with the model's zero-size outputs put back at their declared
    positions (``empty``: name, numpy dtype, shape, position among all outputs). A zero-size tensor carries no data,
    so the program does not compute it (TOSA has no zero-size tensors); its value is known from its type."""
    import numpy as np

    if not empty:
        return outputs
    ordered = list(outputs.items())
    for name, dtype, shape, index in sorted(empty, key=lambda e: e[3]):
        ordered.insert(min(index, len(ordered)), (name, np.zeros(shape, dtype=np.dtype(dtype))))
    return dict(ordered)
