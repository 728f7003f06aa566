"""Shared machinery of the TOSA 0.30 dialect: element kinds, type-mode tables, attribute
conversion, the ``TosaOp`` base class with its verifier and shape-inference protocol.

Every op of the dialect:
- declares its operands/results/properties with IRDL, using the spec's argument names;
- lists its supported type combinations in ``TYPE_MODES`` (the spec's "Supported Data Types"
  table; a graph outside them is a ``tosa_error``);
- implements ``infer_shapes(shapes, **attrs)``, the single shape-inference implementation that
  frontends, passes and the verifier share; it raises ``ShapeError`` for ERROR_IF conditions on
  shapes and shape attributes;
- may add ``check(self, **attrs)`` for the ERROR_IF conditions that depend on element types
  (zero points only for int8, ...).

Representation decisions (spec §1.1 "attributes in BI/MI"): weights, biases and TABLE's table are
operands (usually produced by ``tosa.const``) as in MLIR's TOSA dialect; scalar and list arguments
(pad, stride, zero points, MUL's shift, RESCALE's multiplier/shift) are properties. All integer
scalars are ``i64`` integer attributes and all integer lists ``array<i64: ...>``; the verifier checks
each against the range of its spec type.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Any, ClassVar, Self

from xdsl.dialects.builtin import (
    I64,
    BFloat16Type,
    BoolAttr,
    DenseArrayBase,
    Float16Type,
    Float32Type,
    FloatAttr,
    IntegerAttr,
    IntegerType,
    Signedness,
    StringAttr,
    TensorType,
    f32,
    i1,
    i64,
)
from xdsl.dialects.utils import EnumAttribute
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import IRDLOperation, ParsePropInAttrDict, opt_prop_def, prop_def, traits_def
from xdsl.pattern_rewriter import RewritePattern
from xdsl.traits import HasCanonicalizationPatternsTrait

from nnkiln.ir.errors import ShapeError, VerifyError
from nnkiln.kinds import Kind

Shape = tuple[int, ...]


class Profile(Enum):
    """TOSA profiles (spec §1.5, Table 2). MT is not defined by 0.30."""

    BI = "BI"
    MI = "MI"


def kind_of(t: Attribute) -> Kind | None:
    """The element kind of a type: a tensor's element type, a quantized type's storage type."""
    if isinstance(t, TensorType):
        t = t.element_type
    storage = getattr(t, "storage_type", None)
    if isinstance(storage, Attribute):
        t = storage
    if isinstance(t, IntegerType):
        w, s = t.width.data, t.signedness.data
        if s == Signedness.UNSIGNED:
            return {8: Kind.U8, 16: Kind.U16}.get(w)
        if s == Signedness.SIGNLESS:
            return {1: Kind.BOOL, 4: Kind.I4, 8: Kind.I8, 16: Kind.I16, 32: Kind.I32, 48: Kind.I48}.get(w)
        return None
    if isinstance(t, Float32Type):
        return Kind.F32
    if isinstance(t, Float16Type):
        return Kind.F16
    if isinstance(t, BFloat16Type):
        return Kind.BF16
    return None


def element_type(kind: Kind) -> Attribute:
    """The MLIR element type of an element kind (``u8`` → ``ui8``, ``bool`` → ``i1``)."""
    from xdsl.dialects.builtin import bf16, f16

    if kind is Kind.BOOL:
        return i1
    if kind is Kind.F32:
        return f32
    if kind is Kind.F16:
        return f16
    if kind is Kind.BF16:
        return bf16
    if kind in (Kind.U8, Kind.U16):
        return IntegerType(kind.bits, Signedness.UNSIGNED)
    return IntegerType(kind.bits)


@dataclass(frozen=True)
class TypeMode:
    """One row of an op's "Supported Data Types" table: a name, a profile and one kind per slot."""

    name: str
    profile: Profile
    kinds: tuple[Kind, ...]


def modes(profile: Profile, *rows: tuple[str, tuple[Kind, ...] | Kind]) -> tuple[TypeMode, ...]:
    """Build TypeMode rows of one profile: ``modes(BI, ("signed 8", (I8, I32)), ...)``."""
    out = []
    for name, kinds in rows:
        ks = kinds if isinstance(kinds, tuple) else (kinds,)
        out.append(TypeMode(name, profile, ks))
    return tuple(out)


def same_type_modes(*kinds: Kind, slots: int = 2, profile_of: Mapping[Kind, Profile] | None = None) -> tuple[TypeMode, ...]:
    """Modes where every slot has the same kind (e.g. ADD: i32→BI, floats→MI)."""
    result = []
    for k in kinds:
        prof = (profile_of or {}).get(k, Profile.MI if k.is_float else Profile.BI)
        name = {"bool": "Boolean", "i8": "signed 8", "i16": "signed 16", "i32": "signed 32",
                "f16": "fp16", "bf16": "bf16", "f32": "fp32"}.get(k.value, k.value)
        result.append(TypeMode(name, prof, (k,) * slots))
    return tuple(result)


# ----------------------------------------------------------------------------------------------
# Attribute conversion between Python values and xDSL attributes


def to_attr(value: Any) -> Attribute:
    """Convert a Python value to the attribute form this dialect uses.

    bool → ``BoolAttr``; int → ``i64`` IntegerAttr; float → ``f32`` FloatAttr; a sequence of ints →
    ``array<i64: ...>``; a sequence with a float → ``array<f32: ...>``; an ``Enum`` registered with ``enum_attr`` → its attribute; str → StringAttr.
    """
    if isinstance(value, Attribute):
        return value
    # Attributes are immutable values, so equal Python values can share one (building one is slow).
    # Only exact ints, bools, strings, enums and int lists are cached (floats are not: 0.0 == -0.0).
    t = type(value)
    if t is int or t is bool or t is str or isinstance(value, Enum):
        key: Any = (t, value)
    elif (t is tuple or t is list) and all(type(v) is int for v in value):
        key = (tuple, tuple(value))
    else:
        return _to_attr(value)
    cached = _ATTR_CACHE.get(key)
    if cached is None:
        cached = _to_attr(value)
        if len(_ATTR_CACHE) >= 4096:
            _ATTR_CACHE.clear()
        _ATTR_CACHE[key] = cached
    return cached


_ATTR_CACHE: dict[Any, Attribute] = {}


def _to_attr(value: Any) -> Attribute:
    if isinstance(value, bool):
        return BoolAttr.from_bool(value)
    if isinstance(value, int):
        return IntegerAttr(value, i64)
    if isinstance(value, float):
        return FloatAttr(value, f32)
    if isinstance(value, Enum) and type(value) in _ENUM_ATTRS:
        return _ENUM_ATTRS[type(value)](value)
    if isinstance(value, str):
        return StringAttr(value)
    if isinstance(value, Sequence):
        if any(isinstance(v, float) for v in value):
            return DenseArrayBase.from_list(f32, [float(v) for v in value])
        return DenseArrayBase.from_list(i64, [int(v) for v in value])
    raise TypeError(f"cannot convert {value!r} to a tosa attribute")


def from_attr(attr: Attribute) -> Any:
    """The Python value of an attribute (inverse of ``to_attr``)."""
    if isinstance(attr, IntegerAttr):
        if attr.type == i1:
            return bool(attr.value.data)
        return int(attr.value.data)
    if isinstance(attr, FloatAttr):
        return float(attr.value.data)
    if isinstance(attr, DenseArrayBase):
        if isinstance(attr.elt_type, IntegerType):
            return tuple(int(v) for v in attr.get_values())
        return tuple(float(v) for v in attr.get_values())
    if isinstance(attr, EnumAttribute):
        return attr.data
    if isinstance(attr, StringAttr):
        return attr.data
    return attr


_ENUM_ATTRS: dict[type, type[EnumAttribute[Any]]] = {}


def register_enum_attr(enum_type: type, attr_type: type[EnumAttribute[Any]]) -> None:
    """Let ``to_attr`` convert members of ``enum_type`` to ``attr_type``."""
    _ENUM_ATTRS[enum_type] = attr_type


def int_prop():
    """An ``i64`` integer property (range checked by the op's verifier)."""
    return prop_def(IntegerAttr[I64])


def int_array_prop():
    """An ``array<i64: ...>`` property."""
    return prop_def(DenseArrayBase[I64])


def bool_prop(default: bool | None = None):
    """A boolean property; optional with a default when ``default`` is given."""
    if default is None:
        return prop_def(BoolAttr)
    return opt_prop_def(BoolAttr, default_value=BoolAttr.from_bool(default))


# ----------------------------------------------------------------------------------------------
# The base op


def shape_of(value: SSAValue | Attribute) -> Shape:
    t = value.type if isinstance(value, SSAValue) else value
    if not isinstance(t, TensorType):
        raise VerifyError(f"expected a ranked tensor, got {t}", rule="ranked tensors")
    return tuple(int(d) for d in t.get_shape())


def require_shape(cond: bool, rule: str, detail: str) -> None:
    """ERROR_IF(not cond) for a shape rule: raises ``ShapeError`` with the rule and the values."""
    if not cond:
        raise ShapeError(detail, rule=rule)


def require(cond: bool, rule: str, detail: str) -> None:
    """ERROR_IF(not cond) for a non-shape rule: raises ``VerifyError`` with the rule and the values."""
    if not cond:
        raise VerifyError(detail, rule=rule)


def check_int_range(name: str, value: int, kind: Kind) -> None:
    lo, hi = kind.int_range
    require(lo <= value <= hi, f"{name} fits {kind.value}", f"{name} = {value} is outside [{lo}, {hi}]")


class FoldsConstantOperands(HasCanonicalizationPatternsTrait):
    """Canonicalization of every tosa op: with all operands ``tosa.const`` it becomes constants
    (``nnkiln.dialects.tosa.canonicalization.FoldConstantOperands``, small results only)."""

    @classmethod
    def get_canonicalization_patterns(cls) -> tuple[RewritePattern, ...]:
        from nnkiln.dialects.tosa.canonicalization import FOLD_PATTERNS

        return FOLD_PATTERNS


class TosaOp(IRDLOperation):
    """Base of every ``tosa`` op: type-mode check, ERROR_IF checks, shape inference in ``verify_``.

    Subclasses set ``TYPE_SLOTS`` (names of the operands/results whose element kinds form the key of
    ``TYPE_MODES``; a variadic slot contributes the kind of its first value) and implement
    ``infer_shapes``.
    """

    TYPE_SLOTS: ClassVar[tuple[str, ...]] = ()
    TYPE_MODES: ClassVar[tuple[TypeMode, ...]] = ()
    # verify_ reads only operand/result types and properties (see nnkiln.ir.verify: the verifier may
    # then skip re-verifying an unchanged signature); a subclass that looks further must set False.
    VERIFY_IS_LOCAL: ClassVar[bool] = True

    traits = traits_def(FoldsConstantOperands())
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "operands attr-dict `:` functional-type(operands, results)"

    # -- Python views --------------------------------------------------------------------------

    def attr_values(self) -> dict[str, Any]:
        """Every property as a Python value (see ``from_attr``), defaults of absent optional ones included."""
        values = _defaults(type(self))
        values.update({name: from_attr(a) for name, a in self.properties.items()})
        return values

    def slot_kinds(self) -> tuple[Kind | None, ...]:
        kinds: list[Kind | None] = []
        for slot in self.TYPE_SLOTS:
            v = getattr(self, slot)
            if isinstance(v, Sequence) and not isinstance(v, SSAValue):
                v = v[0] if len(v) else None
            kinds.append(kind_of(v.type) if v is not None else None)
        return tuple(kinds)

    # -- the protocol subclasses implement ------------------------------------------------------

    @classmethod
    def infer_shapes(cls, shapes: Sequence[Shape], **attrs: Any) -> list[Shape]:
        """Result shapes from operand shapes and attribute values; ``ShapeError`` on ERROR_IF."""
        raise NotImplementedError(f"{cls.name} has no shape inference")

    def check(self, **attrs: Any) -> None:
        """ERROR_IF conditions on element types and attribute values (beyond shapes)."""

    def type_mode(self) -> TypeMode:
        """The matching row of the type-mode table, or a ``VerifyError`` listing the supported ones."""
        key = self.slot_kinds()
        for mode in self.TYPE_MODES:
            if mode.kinds == key:
                return mode
        found = ", ".join(k.value if k else "?" for k in key)
        supported = "; ".join(f"{m.name} ({', '.join(k.value for k in m.kinds)})" for m in self.TYPE_MODES)
        slots = ", ".join(self.TYPE_SLOTS)
        raise VerifyError(
            f"unsupported type combination ({slots}) = ({found}); supported: {supported}",
            rule="supported data types",
        )

    # -- verification ---------------------------------------------------------------------------

    def verify_(self) -> None:
        try:
            if self.TYPE_MODES:
                self.type_mode()
            self.verify_per_axis_types()
            attrs = self.attr_values()
            self.check(**attrs)
            self.verify_shapes(attrs)
        except VerifyError as err:
            err.op_name = self.name
            raise

    def verify_per_axis_types(self) -> None:
        """Per-axis quantized element types must fit their tensor's shape (quantized dim, scale count)."""
        for v in (*self.operands, *self.results):
            t = v.type
            check = getattr(getattr(t, "element_type", None), "check_shape", None)
            if check is not None and isinstance(t, TensorType):
                try:
                    check(tuple(t.get_shape()))
                except VerifyError:
                    raise
                except Exception as err:  # the quant type reports with its own exception type
                    raise VerifyError(str(err), rule="per-axis quantization fits the shape") from None

    def verify_shapes(self, attrs: Mapping[str, Any]) -> None:
        shapes = [shape_of(v) for v in self.operands]
        expected = type(self).infer_shapes(shapes, **attrs)
        actual = [shape_of(r) for r in self.results]
        if len(expected) != len(actual) or any(tuple(e) != a for e, a in zip(expected, actual)):
            raise ShapeError(
                f"result shapes {_fmt(actual)} do not match the inferred {_fmt(expected)}",
                rule="output shape",
            )

    # -- building ----------------------------------------------------------------------------

    @classmethod
    def make(
        cls,
        operands: Sequence[SSAValue | Sequence[SSAValue]],
        result_element_types: Attribute | Sequence[Attribute],
        **attrs: Any,
    ) -> Self:
        """Create the op with result shapes from ``infer_shapes`` and Python-valued attributes."""
        flat = [v for o in operands for v in (o if isinstance(o, Sequence) and not isinstance(o, SSAValue) else [o])]
        shapes = [shape_of(v) for v in flat]
        values = {k: v for k, v in attrs.items() if v is not None}
        out_shapes = cls.infer_shapes(shapes, **{**_defaults(cls), **values})
        elems = result_element_types if isinstance(result_element_types, Sequence) else [result_element_types] * len(out_shapes)
        result_types = [TensorType(e, s) for e, s in zip(elems, out_shapes)]
        props = {k: to_attr(v) for k, v in values.items()}
        return cls.create(operands=flat, result_types=result_types, properties=props)


def _defaults(cls: type[IRDLOperation]) -> dict[str, Any]:
    out = {}
    for name, pdef in cls.get_irdl_definition().properties.items():
        default = getattr(pdef, "default_value", None)
        if default is not None:
            out[name] = from_attr(default)
    return out


def _fmt(shapes: Sequence[Sequence[int]]) -> str:
    return ", ".join("[" + ", ".join(str(d) for d in s) + "]" for s in shapes)



