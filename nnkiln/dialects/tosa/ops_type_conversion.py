"""TOSA 0.30 §2.13 type conversion operators: CAST and RESCALE.

RESCALE decisions (inventory §1.3 #1 and #2):

1. The uint16 zero-point rule is written ``ERROR_IF(in_t == uint16_t && (input_zp != 0 || input_zp !=
   32768))``, which is true for every value, so every uint16 RESCALE would be an error. The comment
   above it says "uint16 values can have zero_point 0 or 32768"; we implement that intent:
   ``ERROR_IF(in_t == uint16_t && input_zp != 0 && input_zp != 32768)`` (same for the output).
2. The argument table says the zero points "Must be zero for non-int8 types"; the pseudocode allows
   non-zero zero points for int8, uint8 and uint16. The pseudocode is the precise description
   (spec §3 "The TOSA pseudocode provides precise descriptions"), so it wins: int8 zero points lie
   in [-128, 127] (``in_t``/``out_t`` typed), uint8 in [0, 255], uint16 is 0 or 32768, every other
   type needs 0.

The REQUIREs of ``apply_scale_32/16`` on the (compile-time) attributes — ``multiplier >= 0`` and
``2 <= shift <= 62`` — are checked by the verifier as well: a graph that is certainly unpredictable
is rejected (the spec allows it: an implementation may stop at the first failure, §3.1).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

from xdsl.dialects.builtin import TensorType
from xdsl.irdl import irdl_op_definition, operand_def, result_def, traits_def
from xdsl.pattern_rewriter import RewritePattern
from xdsl.traits import HasCanonicalizationPatternsTrait, Pure

from nnkiln.dialects.tosa.base import (
    Kind,
    Profile,
    Shape,
    TosaOp,
    TypeMode,
    bool_prop,
    int_array_prop,
    int_prop,
    kind_of,
    modes,
    require,
    require_shape,
)

BI, MI = Profile.BI, Profile.MI
B, I8, I16, I32, I48, U8, U16 = Kind.BOOL, Kind.I8, Kind.I16, Kind.I32, Kind.I48, Kind.U8, Kind.U16
F16, BF16, F32 = Kind.F16, Kind.BF16, Kind.F32

_NAMES = {B: "bool", I8: "signed 8", I16: "signed 16", I32: "signed 32", I48: "signed 48",
          U8: "unsigned 8", U16: "unsigned 16", F16: "fp16", BF16: "bf16", F32: "fp32"}


def _conv(profile: Profile, pairs: Sequence[tuple[Kind, Kind]]) -> tuple[TypeMode, ...]:
    return modes(profile, *((f"{_NAMES[a]} to {_NAMES[b]}", (a, b)) for a, b in pairs))


# ----------------------------------------------------------------------------------------------
# CAST


class CastCanonicalization(HasCanonicalizationPatternsTrait):
    """CAST to its input's own type → the input (``nnkiln.dialects.tosa.canonicalization``)."""

    @classmethod
    def get_canonicalization_patterns(cls) -> tuple[RewritePattern, ...]:
        from nnkiln.dialects.tosa.canonicalization import CAST_PATTERNS

        return CAST_PATTERNS


@irdl_op_definition
class CastOp(TosaOp):
    """CAST (spec §2.13.1): elementwise conversion ``in_t`` → ``out_t``, same shape (any rank).

    30 modes: 12 "Any" (BI) between bool/int8/int16/int32, 18 "MI, MT" between int8/16/32 and
    fp16/bf16/fp32. Float↔float, float↔bool and same-type casts are not 0.30 modes.
    """

    name = "tosa.cast"
    TYPE_SLOTS: ClassVar[tuple[str, ...]] = ("input", "output")
    TYPE_MODES: ClassVar[tuple[TypeMode, ...]] = (
        _conv(BI, [(B, I8), (B, I16), (B, I32),
                   (I8, B), (I8, I16), (I8, I32),
                   (I16, B), (I16, I8), (I16, I32),
                   (I32, B), (I32, I8), (I32, I16)])
        + _conv(MI, [(i, f) for i in (I8, I16, I32) for f in (F16, BF16, F32)])
        + _conv(MI, [(f, i) for f in (F16, BF16, F32) for i in (I8, I16, I32)])
    )

    input = operand_def(TensorType)
    output = result_def(TensorType)
    traits = traits_def(Pure(), CastCanonicalization())

    @classmethod
    def infer_shapes(cls, shapes: Sequence[Shape], **attrs: Any) -> list[Shape]:
        return [tuple(shapes[0])]


# ----------------------------------------------------------------------------------------------
# RESCALE

INT16_RANGE = (-(1 << 15), (1 << 15) - 1)
INT32_RANGE = (-(1 << 31), (1 << 31) - 1)
SHIFT_RANGE = (2, 62)


def _check_zp(which: str, kind: Kind | None, zp: int) -> None:
    """The zero-point ERROR_IFs of RESCALE for one side (``input`` or ``output``)."""
    t = "in_t" if which == "input" else "out_t"
    name = f"{which}_zp"
    if kind in (I8, U8):
        lo, hi = kind.int_range
        require(lo <= zp <= hi, f"{name} fits {t} ({kind.value})", f"{name} = {zp} is outside [{lo}, {hi}]")
    elif kind is U16:
        require(zp in (0, 32768), f"ERROR_IF({t} == uint16_t && {name} != 0 && {name} != 32768)",
                f"{name} = {zp} but a uint16 zero point must be 0 or 32768")
    else:
        require(zp == 0, f"ERROR_IF({t} != int8_t && {t} != uint8_t && {t} != uint16_t && {name} != 0)",
                f"{name} = {zp} but {t} is {kind.value if kind else '?'}")


@irdl_op_definition
class RescaleOp(TosaOp):
    """RESCALE (spec §2.13.2): ``out = clip(apply_scale(in - input_zp, multiplier[c], shift[c]) +
    output_zp)``, ``c`` = last-dimension index if ``per_channel`` else 0.

    Properties: ``input_zp``, ``output_zp`` (i64, ranges below), ``multiplier`` and ``shift``
    (``array<i64>`` of length NC = ``shape[rank-1]`` if ``per_channel`` else 1), ``scale32``,
    ``double_round``, ``per_channel`` (booleans, all required). 18 modes, all BI.

    ERROR_IF / checks: rank 1..4 (argument table); output shape == input shape; zero points per the
    module docstring (uint16: 0 or 32768; int8/uint8: their range; others 0);
    ``scale32 && in_t == int48``; ``!scale32 && double_round``; ``length(multiplier) ==
    length(shift) == NC``; ``multiplier`` fits ``mul_t`` (int32 if ``scale32`` else int16) and is
    >= 0; ``2 <= shift <= 62``.
    """

    name = "tosa.rescale"
    TYPE_SLOTS: ClassVar[tuple[str, ...]] = ("input", "output")
    TYPE_MODES: ClassVar[tuple[TypeMode, ...]] = _conv(BI, [
        (I8, I8), (I8, I16), (I8, I32), (I8, U8),
        (I16, I8), (I16, I16), (I16, I32), (I16, U8), (I16, U16),
        (I32, I8), (I32, I16), (I32, I32),
        (I48, I8), (I48, I16), (I48, I32),
        (U8, I8), (U8, I16),
        (U16, I16),
    ])

    input = operand_def(TensorType)
    output = result_def(TensorType)
    input_zp = int_prop()
    output_zp = int_prop()
    multiplier = int_array_prop()
    shift = int_array_prop()
    scale32 = bool_prop()
    double_round = bool_prop()
    per_channel = bool_prop()
    traits = traits_def(Pure())

    def check(self, **attrs: Any) -> None:
        in_kind, out_kind = kind_of(self.input.type), kind_of(self.output.type)
        _check_zp("input", in_kind, attrs["input_zp"])
        _check_zp("output", out_kind, attrs["output_zp"])
        scale32, double_round = attrs["scale32"], attrs["double_round"]
        require(not (scale32 and in_kind is I48), "ERROR_IF(scale32 && in_t == int48_t)",
                "scale32 = true with an int48 input (a 48-bit value needs the 16-bit multiplier)")
        require(not (not scale32 and double_round), "ERROR_IF(!scale32 && double_round)",
                "double_round = true needs scale32 = true")
        lo, hi = INT32_RANGE if scale32 else INT16_RANGE
        mul_t = "int32" if scale32 else "int16"
        bad = [m for m in attrs["multiplier"] if not lo <= m <= hi]
        require(not bad, f"multiplier fits mul_t ({mul_t}, scale32 = {str(scale32).lower()})",
                f"multiplier values {bad} are outside [{lo}, {hi}]")
        neg = [m for m in attrs["multiplier"] if m < 0]
        require(not neg, "REQUIRE(multiplier >= 0)", f"multiplier values {neg} are negative")
        bad_shift = [s for s in attrs["shift"] if not SHIFT_RANGE[0] <= s <= SHIFT_RANGE[1]]
        require(not bad_shift, "REQUIRE(2 <= shift && shift <= 62)", f"shift values {bad_shift} are outside [2, 62]")

    @classmethod
    def infer_shapes(cls, shapes: Sequence[Shape], **attrs: Any) -> list[Shape]:
        shape = tuple(shapes[0])
        rank = len(shape)
        require_shape(1 <= rank <= 4, "1 <= rank(input) <= 4", f"rank(input) = {rank} (shape {list(shape)})")
        nc = shape[-1] if attrs.get("per_channel") else 1
        of = "shape[rank-1] (per_channel)" if attrs.get("per_channel") else "1 (per-tensor)"
        for name in ("multiplier", "shift"):
            values = attrs.get(name, ())
            require_shape(len(values) == nc, f"length({name}) == NC",
                          f"length({name}) = {len(values)} but NC = {of} = {nc}")
        return [shape]
