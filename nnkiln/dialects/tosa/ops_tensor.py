"""TOSA 0.30 §2.3 tensor operators: ARGMAX, AVG_POOL2D, CONV2D, CONV3D, DEPTHWISE_CONV2D, FFT2D,
FULLY_CONNECTED, MATMUL, MAX_POOL2D, RFFT2D, TRANSPOSE_CONV2D.

Representation (see ``base``): weights and biases are operands; ``pad``, ``stride``, ``dilation``,
``kernel``, ``out_pad`` and ``out_shape`` are ``array<i64: ...>`` properties; zero points and ``axis``
are ``i64`` properties (their spec types are checked by the verifier); FFT2D's ``inverse`` is a bool.
Zero points are required properties, as in the spec's argument tables.

ERROR_IF conditions on shapes and shape attributes live in ``infer_shapes`` (``ShapeError``); the ones
on element types (zero points only for int8) live in ``check`` (``VerifyError``). Rule texts are the
conditions that must hold, written with the spec's names, e.g.
``OH == idiv_check(IH - 1 + pad_top + pad_bottom - (KH - 1) * dilation_y, stride_y) + 1``.

Decisions where the spec is defective (inventory §1.3) are written in the docstring of each op.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

from xdsl.dialects.builtin import TensorType
from xdsl.irdl import irdl_op_definition, operand_def, result_def, traits_def
from xdsl.traits import Pure

from nnkiln.dialects.tosa.base import (
    Kind,
    Profile,
    Shape,
    TosaOp,
    TypeMode,
    bool_prop,
    check_int_range,
    int_array_prop,
    int_prop,
    modes,
    require,
    require_shape,
)
from nnkiln.dialects.tosa.conv_shapes import (
    CONV_D,
    CONV_H,
    CONV_W,
    conv_spatial,
    fmt_shape,
    get_attr,
    int_list,
    int_scalar,
    pool_spatial,
    power_of_two,
    require_all_at_least,
    require_rank,
    require_static,
)

BI, MI = Profile.BI, Profile.MI
I4, I8, I16, I32, I48 = Kind.I4, Kind.I8, Kind.I16, Kind.I32, Kind.I48
F16, BF16, F32 = Kind.F16, Kind.BF16, Kind.F32

_SPEC_TYPE_NAMES = {
    Kind.BOOL: "bool_t", Kind.I4: "int4_t", Kind.I8: "int8_t", Kind.I16: "int16_t", Kind.I32: "int32_t",
    Kind.I48: "int48_t", Kind.U8: "uint8_t", Kind.U16: "uint16_t", Kind.F16: "fp16_t", Kind.BF16: "bf16_t",
    Kind.F32: "fp32_t",
}

# The supported-data-types table shared by CONV2D, CONV3D, DEPTHWISE_CONV2D, FULLY_CONNECTED and
# TRANSPOSE_CONV2D: slots (input, weight, bias, output) = (in_t, weight_t, out_t, out_t).
CONV_TYPE_MODES: tuple[TypeMode, ...] = modes(
    BI,
    ("signed 8x8", (I8, I8, I32, I32)),
    ("signed 8x4", (I8, I4, I32, I32)),
    ("signed 16x8", (I16, I8, I48, I48)),
) + modes(
    MI,
    ("fp16 with fp16 accumulate", (F16, F16, F16, F16)),
    ("fp16 with fp32 accumulate", (F16, F16, F32, F32)),
    ("bf16 with fp32 accumulate", (BF16, BF16, F32, F32)),
    ("fp32", (F32, F32, F32, F32)),
)


def check_zero_point(name: str, zp: int, kind: Kind | None, type_name: str) -> None:
    """``ERROR_IF(<type_name> != int8_t && <name> != 0)``; an int8 zero point must fit int8_t."""
    if kind is Kind.I8:
        check_int_range(name, zp, Kind.I8)
    else:
        spec_type = _SPEC_TYPE_NAMES.get(kind, "?") if kind else "?"
        require(zp == 0, f"{name} == 0 when {type_name} != int8_t",
                f"{name} = {zp} but {type_name} is {spec_type}")


def _shapes(shapes: Sequence[Shape], count: int, names: Sequence[str]) -> list[Shape]:
    require_shape(len(shapes) == count, f"{count} operands", f"got {len(shapes)} operand shapes")
    out = [tuple(int(d) for d in s) for s in shapes]
    for s, n in zip(out, names):
        require_static(s, n)
    return out


class _TensorOp(TosaOp):
    """Base of the §2.3 ops: pure (no side effects)."""

    traits = traits_def(Pure())


# ----------------------------------------------------------------------------------------------
# 2.3.1 ARGMAX


@irdl_op_definition
class ArgMaxOp(_TensorOp):
    """ARGMAX (spec §2.3.1): index of the largest value along ``axis``; output rank = rank - 1.

    ERROR_IF: ``rank(shape1) <= 4``, ``0 <= axis < rank(shape1)``, output shape = the input shape
    without ``axis``.

    Spec defects (inventory §1.3 no. 7, 14) and decisions:
    - The pseudocode's ``left_shape = shape1[0:axis - 1]`` / ``right_shape = shape1[axis+1:rank - 1]``
      drop one dimension each when read as half-open slices, and its loop bound reads ``shape[axis]``.
      We implement the evident intent stated in the argument table: the output shape is ``shape1``
      with dimension ``axis`` removed, and the loop runs over ``shape1[axis]``.
    - ``minimum_value<in_t>`` is taken as ``minimum<in_t>`` (−inf for floats). With the strict ``>``
      the first maximal index wins and a NaN is never selected.
    """

    name = "tosa.argmax"
    TYPE_SLOTS: ClassVar[tuple[str, ...]] = ("input", "output")
    TYPE_MODES: ClassVar[tuple[TypeMode, ...]] = modes(
        BI, ("signed 8", (I8, I32)), ("signed 16", (I16, I32)),
    ) + modes(MI, ("fp16", (F16, I32)), ("bf16", (BF16, I32)), ("fp32", (F32, I32)))

    input = operand_def(TensorType)
    axis = int_prop()
    output = result_def(TensorType)

    @classmethod
    def infer_shapes(cls, shapes: Sequence[Shape], **attrs: Any) -> list[Shape]:
        (shape1,) = _shapes(shapes, 1, ["input"])
        axis = int_scalar(attrs, "axis")
        require_shape(len(shape1) <= 4, "rank(shape1) <= 4", f"input has rank {len(shape1)}")
        require_shape(0 <= axis < len(shape1), "0 <= axis < rank(shape1)",
                      f"axis = {axis} but input has rank {len(shape1)}")
        return [shape1[:axis] + shape1[axis + 1:]]


# ----------------------------------------------------------------------------------------------
# 2.3.2 AVG_POOL2D, 2.3.9 MAX_POOL2D


class _Pool2d(_TensorOp):
    """input [N,IH,IW,C] → output [N,OH,OW,C] with ``kernel`` [2], ``stride`` [2], ``pad`` [4]."""

    TYPE_SLOTS: ClassVar[tuple[str, ...]] = ("input", "output")

    input = operand_def(TensorType)
    kernel = int_array_prop()
    stride = int_array_prop()
    pad = int_array_prop()
    output = result_def(TensorType)

    @classmethod
    def infer_shapes(cls, shapes: Sequence[Shape], **attrs: Any) -> list[Shape]:
        (inp,) = _shapes(shapes, 1, ["input"])
        require_rank(inp, 4, "input", "[N,IH,IW,C]")
        kernel = int_list(attrs, "kernel", 2)
        stride = int_list(attrs, "stride", 2)
        pad = int_list(attrs, "pad", 4)
        n, ih, iw, c = inp
        oh, ow = pool_spatial((ih, iw), kernel, stride, pad)
        return [(n, oh, ow, c)]


@irdl_op_definition
class AvgPool2dOp(_Pool2d):
    """AVG_POOL2D (spec §2.3.2): mean over each window; the divisor counts input values only.

    ERROR_IF: ``input_zp``/``output_zp`` non-zero for a type other than int8; ``kernel_y, kernel_x >= 1``;
    ``stride_y, stride_x >= 1``; pads >= 0; ``pad_left, pad_right < kernel_x`` and
    ``pad_top, pad_bottom < kernel_y``; ``OH == idiv_check(IH + pad_top + pad_bottom - kernel_y,
    stride_y) + 1`` and the same for OW.

    Type table: the spec has two fp16 rows (fp16 and fp32 accumulate) with the same tensor types;
    TOSA 0.30 has no attribute selecting the accumulator, so both rows have the key (fp16, fp16) and
    the first one is reported; the accumulator is the backend's choice (both are conformant modes).
    """

    name = "tosa.avg_pool2d"
    TYPE_MODES: ClassVar[tuple[TypeMode, ...]] = modes(
        BI, ("signed 8", (I8, I8)), ("signed 16", (I16, I16)),
    ) + modes(
        MI,
        ("fp16 with fp16 accumulate", (F16, F16)),
        ("fp16 with fp32 accumulate", (F16, F16)),
        ("bf16 with fp32 accumulate", (BF16, BF16)),
        ("fp32", (F32, F32)),
    )

    input_zp = int_prop()
    output_zp = int_prop()

    def check(self, **attrs: Any) -> None:
        kind = self.slot_kinds()[0]
        check_zero_point("input_zp", attrs["input_zp"], kind, "in_out_t")
        check_zero_point("output_zp", attrs["output_zp"], kind, "in_out_t")


@irdl_op_definition
class MaxPool2dOp(_Pool2d):
    """MAX_POOL2D (spec §2.3.9): maximum over each window; padding never contributes.

    ERROR_IF: ``kernel_y, kernel_x >= 1``; ``stride_y, stride_x >= 1``; pads >= 0;
    ``pad_left, pad_right < kernel_x`` and ``pad_top, pad_bottom < kernel_y`` (so every window sees at
    least one input value); ``OH == idiv_check(IH + pad_top + pad_bottom - kernel_y, stride_y) + 1``
    and the same for OW. No zero points.

    Spec defects (inventory §1.3 no. 3, 14) and decisions: the pseudocode loops over
    ``0 <= oy < H, 0 <= ox < W``; we take the intended output bounds ``OH``, ``OW`` (the write goes to
    ``[N,OH,OW,C]``). ``minimum_value<in_out_t>`` is ``minimum<in_out_t>`` (−inf for floats); NaN
    propagates through ``apply_max``.
    """

    name = "tosa.max_pool2d"
    TYPE_MODES: ClassVar[tuple[TypeMode, ...]] = modes(
        BI, ("signed 8", (I8, I8)), ("16-bit", (I16, I16)),
    ) + modes(MI, ("fp16", (F16, F16)), ("bf16", (BF16, BF16)), ("fp32", (F32, F32)))


# ----------------------------------------------------------------------------------------------
# The convolution family: 2.3.3 CONV2D, 2.3.4 CONV3D, 2.3.5 DEPTHWISE_CONV2D, 2.3.7 FULLY_CONNECTED,
# 2.3.11 TRANSPOSE_CONV2D


class _ConvLike(_TensorOp):
    """input, weight, bias → output with ``input_zp`` / ``weight_zp``; the conv-family type table."""

    TYPE_SLOTS: ClassVar[tuple[str, ...]] = ("input", "weight", "bias", "output")
    TYPE_MODES: ClassVar[tuple[TypeMode, ...]] = CONV_TYPE_MODES

    input = operand_def(TensorType)
    weight = operand_def(TensorType)
    bias = operand_def(TensorType)
    input_zp = int_prop()
    weight_zp = int_prop()
    output = result_def(TensorType)

    def check(self, **attrs: Any) -> None:
        in_kind, weight_kind = self.slot_kinds()[:2]
        check_zero_point("input_zp", attrs["input_zp"], in_kind, "in_t")
        check_zero_point("weight_zp", attrs["weight_zp"], weight_kind, "weight_t")


def _require_channels(actual: int, expected: int, rule: str, what: str) -> None:
    require_shape(actual == expected, rule, f"{what}: {actual} != {expected}")


def _require_bias(bias: Shape, channels: int, layout: str) -> None:
    require_shape(tuple(bias) == (channels,), f"bias has shape {layout}",
                  f"bias has shape {fmt_shape(bias)}, expected [{channels}]")


@irdl_op_definition
class Conv2DOp(_ConvLike):
    """CONV2D (spec §2.3.3): input [N,IH,IW,IC], weight [OC,KH,KW,IC] (OHWI), bias [OC] →
    output [N,OH,OW,OC]; ``pad`` [top, bottom, left, right], ``stride`` [y, x], ``dilation`` [y, x].

    ERROR_IF: zero points only for int8; pads >= 0; ``stride_y, stride_x >= 1``;
    ``dilation_y, dilation_x >= 1``;
    ``OH == idiv_check(IH - 1 + pad_top + pad_bottom - (KH - 1) * dilation_y, stride_y) + 1`` and the
    same for OW. The shapes of the argument table (weight IC = input IC, bias [OC]) are checked too.
    Types: the conv-family table (int8x8 → int32, int8x4 → int32, int16x8 → int48, float modes).
    """

    name = "tosa.conv2d"

    pad = int_array_prop()
    stride = int_array_prop()
    dilation = int_array_prop()

    @classmethod
    def infer_shapes(cls, shapes: Sequence[Shape], **attrs: Any) -> list[Shape]:
        inp, weight, bias = _shapes(shapes, 3, ["input", "weight", "bias"])
        require_rank(inp, 4, "input", "[N,IH,IW,IC]")
        require_rank(weight, 4, "weight", "[OC,KH,KW,IC]")
        require_rank(bias, 1, "bias", "[OC]")
        pad = int_list(attrs, "pad", 4)
        stride = int_list(attrs, "stride", 2)
        dilation = int_list(attrs, "dilation", 2)
        n, ih, iw, ic = inp
        oc, kh, kw, wic = weight
        _require_channels(wic, ic, "weight IC == input IC", "weight [OC,KH,KW,IC] vs input [N,IH,IW,IC]")
        _require_bias(bias, oc, "[OC]")
        oh, ow = conv_spatial((CONV_H, CONV_W), (ih, iw), (kh, kw), pad, stride, dilation)
        return [(n, oh, ow, oc)]


@irdl_op_definition
class Conv3DOp(_ConvLike):
    """CONV3D (spec §2.3.4): input [N,ID,IH,IW,IC], weight [OC,KD,KH,KW,IC], bias [OC] →
    output [N,OD,OH,OW,OC]; ``pad`` [d0, d1, top, bottom, left, right], ``stride`` and ``dilation``
    [d, y, x].

    ERROR_IF: zero points only for int8; pads >= 0; strides >= 1; dilations >= 1;
    ``OD == idiv_check(ID - 1 + pad_d0 + pad_d1 - (KD - 1) * dilation_d, stride_d) + 1`` and the same
    for OH and OW. Types: the conv-family table.

    Spec defect (inventory §1.3 no. 9) and decision: the data-layout table (§1.8.3) names the 3D
    weight layout DOHWI, but the argument table and the pseudocode (``tensor_read(weight,
    [OC,KD,KH,KW,IC], [oc,kd,ky,kx,ic])``) use [OC,KD,KH,KW,IC]. We follow the argument table and the
    pseudocode (the operation's definition), which is also MLIR's TOSA layout: weight [OC,KD,KH,KW,IC].
    """

    name = "tosa.conv3d"

    pad = int_array_prop()
    stride = int_array_prop()
    dilation = int_array_prop()

    @classmethod
    def infer_shapes(cls, shapes: Sequence[Shape], **attrs: Any) -> list[Shape]:
        inp, weight, bias = _shapes(shapes, 3, ["input", "weight", "bias"])
        require_rank(inp, 5, "input", "[N,ID,IH,IW,IC]")
        require_rank(weight, 5, "weight", "[OC,KD,KH,KW,IC]")
        require_rank(bias, 1, "bias", "[OC]")
        pad = int_list(attrs, "pad", 6)
        stride = int_list(attrs, "stride", 3)
        dilation = int_list(attrs, "dilation", 3)
        n, id_, ih, iw, ic = inp
        oc, kd, kh, kw, wic = weight
        _require_channels(wic, ic, "weight IC == input IC",
                          "weight [OC,KD,KH,KW,IC] vs input [N,ID,IH,IW,IC]")
        _require_bias(bias, oc, "[OC]")
        od, oh, ow = conv_spatial((CONV_D, CONV_H, CONV_W), (id_, ih, iw), (kd, kh, kw), pad, stride, dilation)
        return [(n, od, oh, ow, oc)]


@irdl_op_definition
class DepthwiseConv2DOp(_ConvLike):
    """DEPTHWISE_CONV2D (spec §2.3.5): input [N,IH,IW,C], weight [KH,KW,C,M] (HWIM), bias [C*M] →
    output [N,OH,OW,C*M], output channel ``c * M + m``.

    ERROR_IF: zero points only for int8; pads >= 0; strides >= 1; dilations >= 1; the OH/OW
    exact-division rules of CONV2D. Shapes: weight C = input C, bias [C*M]. Types: the conv-family
    table. (The argument table writes the input as [N,H,W,C] and the pseudocode as [N,IH,IW,C]; they
    are the same dimensions.)
    """

    name = "tosa.depthwise_conv2d"

    pad = int_array_prop()
    stride = int_array_prop()
    dilation = int_array_prop()

    @classmethod
    def infer_shapes(cls, shapes: Sequence[Shape], **attrs: Any) -> list[Shape]:
        inp, weight, bias = _shapes(shapes, 3, ["input", "weight", "bias"])
        require_rank(inp, 4, "input", "[N,IH,IW,C]")
        require_rank(weight, 4, "weight", "[KH,KW,C,M]")
        require_rank(bias, 1, "bias", "[C*M]")
        pad = int_list(attrs, "pad", 4)
        stride = int_list(attrs, "stride", 2)
        dilation = int_list(attrs, "dilation", 2)
        n, ih, iw, c = inp
        kh, kw, wc, m = weight
        _require_channels(wc, c, "weight C == input C", "weight [KH,KW,C,M] vs input [N,IH,IW,C]")
        _require_bias(bias, c * m, "[C*M]")
        oh, ow = conv_spatial((CONV_H, CONV_W), (ih, iw), (kh, kw), pad, stride, dilation)
        return [(n, oh, ow, c * m)]


@irdl_op_definition
class FullyConnectedOp(_ConvLike):
    """FULLY_CONNECTED (spec §2.3.7): input [N,IC], weight [OC,IC], bias [OC] → output [N,OC].

    ERROR_IF: zero points only for int8. Shapes: weight IC = input IC, bias [OC]. Types: the
    conv-family table (the spec gives weight and bias as attributes in every profile; here they are
    operands like every other weight).
    """

    name = "tosa.fully_connected"

    @classmethod
    def infer_shapes(cls, shapes: Sequence[Shape], **attrs: Any) -> list[Shape]:
        inp, weight, bias = _shapes(shapes, 3, ["input", "weight", "bias"])
        require_rank(inp, 2, "input", "[N,IC]")
        require_rank(weight, 2, "weight", "[OC,IC]")
        require_rank(bias, 1, "bias", "[OC]")
        n, ic = inp
        oc, wic = weight
        _require_channels(wic, ic, "weight IC == input IC", "weight [OC,IC] vs input [N,IC]")
        _require_bias(bias, oc, "[OC]")
        return [(n, oc)]


@irdl_op_definition
class TransposeConv2DOp(_ConvLike):
    """TRANSPOSE_CONV2D (spec §2.3.11): input [N,IH,IW,IC], weight [OC,KH,KW,IC], bias [OC] →
    output ``out_shape`` = [N,OH,OW,OC]; ``out_pad`` [top, bottom, left, right], ``stride`` [y, x]. No
    dilation.

    ERROR_IF: zero points only for int8; ``out_pad_top, out_pad_bottom >= 0``;
    ``out_pad_left, out_pad_right >= 0``; ``stride_y, stride_x >= 1``;
    ``OH == (IH - 1) * stride_y - out_pad_top - out_pad_bottom + KH`` and the same for OW.

    ``out_shape`` is the source of truth for the result shape: infer_shapes checks it against the
    rules above and against N (input) and OC (weight), and returns it. ``out_pad`` crops the
    full-size result (it is subtracted), as in the pseudocode ``oy = iy * stride_y - out_pad_top + ky``.
    """

    name = "tosa.transpose_conv2d"

    out_pad = int_array_prop()
    stride = int_array_prop()
    out_shape = int_array_prop()

    @classmethod
    def infer_shapes(cls, shapes: Sequence[Shape], **attrs: Any) -> list[Shape]:
        inp, weight, bias = _shapes(shapes, 3, ["input", "weight", "bias"])
        require_rank(inp, 4, "input", "[N,IH,IW,IC]")
        require_rank(weight, 4, "weight", "[OC,KH,KW,IC]")
        require_rank(bias, 1, "bias", "[OC]")
        out_pad = int_list(attrs, "out_pad", 4)
        stride = int_list(attrs, "stride", 2)
        out_shape = int_list(attrs, "out_shape", 4)
        n, ih, iw, ic = inp
        oc, kh, kw, wic = weight
        _require_channels(wic, ic, "weight IC == input IC", "weight [OC,KH,KW,IC] vs input [N,IH,IW,IC]")
        _require_bias(bias, oc, "[OC]")
        require_all_at_least(("out_pad_top", "out_pad_bottom"), out_pad[:2], 0)
        require_all_at_least(("out_pad_left", "out_pad_right"), out_pad[2:], 0)
        require_all_at_least(("stride_y", "stride_x"), stride, 1)
        require_shape(out_shape[0] == n, "out_shape[0] == N", f"out_shape = {fmt_shape(out_shape)} but N = {n}")
        require_shape(out_shape[3] == oc, "out_shape[3] == OC", f"out_shape = {fmt_shape(out_shape)} but OC = {oc}")
        for k, (o, i, kk, s, lo, hi, names) in enumerate((
            ("OH", ih, kh, stride[0], out_pad[0], out_pad[1], ("IH", "stride_y", "out_pad_top", "out_pad_bottom", "KH")),
            ("OW", iw, kw, stride[1], out_pad[2], out_pad[3], ("IW", "stride_x", "out_pad_left", "out_pad_right", "KW")),
        )):
            in_n, s_n, lo_n, hi_n, k_n = names
            rule = f"{o} == ({in_n} - 1) * {s_n} - {lo_n} - {hi_n} + {k_n}"
            expected = (i - 1) * s - lo - hi + kk
            values = f"{in_n} = {i}, {s_n} = {s}, {lo_n} = {lo}, {hi_n} = {hi}, {k_n} = {kk}"
            require_shape(expected >= 1, rule, f"{o} would be {expected} ({values})")
            require_shape(out_shape[1 + k] == expected, rule,
                          f"out_shape gives {o} = {out_shape[1 + k]} but the input gives {expected} ({values})")
        return [out_shape]


# ----------------------------------------------------------------------------------------------
# 2.3.8 MATMUL


@irdl_op_definition
class MatMulOp(_TensorOp):
    """MATMUL (spec §2.3.8): A [N,H,C] × B [N,C,W] → output [N,H,W] with zero points ``A_zp``, ``B_zp``.

    ERROR_IF: ``A_zp`` and ``B_zp`` are 0 unless in_t is int8 (``in_t != int8_t && (A_zp != 0 ||
    B_zp != 0)``). Shapes of the argument table: ranks 3, equal N, equal C. Types: int8×int8 → int32,
    int16×int16 → int48, fp16 → fp16 / fp32, bf16 → fp32, fp32 → fp32 (A and B share in_t).
    """

    name = "tosa.matmul"
    TYPE_SLOTS: ClassVar[tuple[str, ...]] = ("A", "B", "output")
    TYPE_MODES: ClassVar[tuple[TypeMode, ...]] = modes(
        BI, ("signed 8x8", (I8, I8, I32)), ("signed 16x16", (I16, I16, I48)),
    ) + modes(
        MI,
        ("fp16 with fp16 accumulate", (F16, F16, F16)),
        ("fp16 with fp32 accumulate", (F16, F16, F32)),
        ("bf16 with fp32 accumulate", (BF16, BF16, F32)),
        ("fp32", (F32, F32, F32)),
    )

    A = operand_def(TensorType)
    B = operand_def(TensorType)
    A_zp = int_prop()
    B_zp = int_prop()
    output = result_def(TensorType)

    def check(self, **attrs: Any) -> None:
        kind = self.slot_kinds()[0]
        check_zero_point("A_zp", attrs["A_zp"], kind, "in_t")
        check_zero_point("B_zp", attrs["B_zp"], kind, "in_t")

    @classmethod
    def infer_shapes(cls, shapes: Sequence[Shape], **attrs: Any) -> list[Shape]:
        a, b = _shapes(shapes, 2, ["A", "B"])
        require_rank(a, 3, "A", "[N,H,C]")
        require_rank(b, 3, "B", "[N,C,W]")
        n, h, c = a
        require_shape(b[0] == n and b[1] == c, "B has shape [N,C,W] with N, C of A [N,H,C]",
                      f"A has shape {fmt_shape(a)}, B has shape {fmt_shape(b)}")
        return [(n, h, b[2])]


# ----------------------------------------------------------------------------------------------
# 2.3.6 FFT2D, 2.3.10 RFFT2D


def _fft_input(shape: Shape, name: str) -> tuple[int, int, int]:
    require_rank(shape, 3, name, "[N,H,W]")
    n, h, w = shape
    require_shape(power_of_two(h), "power_of_two(H)", f"H = {h} is not a power of two")
    require_shape(power_of_two(w), "power_of_two(W)", f"W = {w} is not a power of two")
    return n, h, w


@irdl_op_definition
class FFT2dOp(_TensorOp):
    """FFT2D (spec §2.3.6): batched complex 2D DFT of (input_real, input_imag) [N,H,W] →
    (output_real, output_imag) [N,H,W]; ``inverse`` selects the sign of the exponent; no
    normalisation in either direction.

    ERROR_IF: ``power_of_two(H)``, ``power_of_two(W)`` (1 = 2^0 counts as a power of two). The two
    inputs have the same shape. Types: MI fp32 only.

    Spec defect (inventory §1.3 no. 15) and decision: the pseudocode's ``(iy * oy) / H`` is real
    division (the figures' ``mh/H``), not integer division.
    """

    name = "tosa.fft2d"
    TYPE_SLOTS: ClassVar[tuple[str, ...]] = ("input_real", "input_imag", "output_real", "output_imag")
    TYPE_MODES: ClassVar[tuple[TypeMode, ...]] = modes(MI, ("fp32", (F32, F32, F32, F32)))

    input_real = operand_def(TensorType)
    input_imag = operand_def(TensorType)
    inverse = bool_prop()
    output_real = result_def(TensorType)
    output_imag = result_def(TensorType)

    @classmethod
    def infer_shapes(cls, shapes: Sequence[Shape], **attrs: Any) -> list[Shape]:
        real, imag = _shapes(shapes, 2, ["input_real", "input_imag"])
        get_attr(attrs, "inverse")
        shape = _fft_input(real, "input_real")
        require_shape(imag == real, "input_imag has the shape of input_real",
                      f"input_real has shape {fmt_shape(real)}, input_imag has shape {fmt_shape(imag)}")
        return [shape, shape]


@irdl_op_definition
class RFFT2dOp(_TensorOp):
    """RFFT2D (spec §2.3.10): batched real 2D DFT of input [N,H,W] → (output_real, output_imag)
    [N,H/2+1,W/2+1] (integer division). Both spatial axes are halved, unlike numpy's ``rfft2``.

    ERROR_IF: ``power_of_two(H)``, ``power_of_two(W)`` (1 = 2^0 counts; H = 1 gives 1 output row).
    Types: MI fp32 only.

    Spec defects (inventory §1.3 no. 4, 5) and decisions:
    - The pseudocode reads ``input_real`` and writes with shape ``[N,H,W]``; we read ``input`` and write
      ``[N,H/2+1,W/2+1]`` as the argument table says.
    - "Imaginary values with locations h=0,H/2 or w=0,W/2 are zero" holds only where both
      h ∈ {0, H/2} and w ∈ {0, W/2}; the result is the DFT formula (``output[h][w] = Σ input[m][n]
      · exp(-2πi(mh/H + nw/W))``), not that sentence.
    """

    name = "tosa.rfft2d"
    TYPE_SLOTS: ClassVar[tuple[str, ...]] = ("input", "output_real", "output_imag")
    TYPE_MODES: ClassVar[tuple[TypeMode, ...]] = modes(MI, ("fp32", (F32, F32, F32)))

    input = operand_def(TensorType)
    output_real = result_def(TensorType)
    output_imag = result_def(TensorType)

    @classmethod
    def infer_shapes(cls, shapes: Sequence[Shape], **attrs: Any) -> list[Shape]:
        (inp,) = _shapes(shapes, 1, ["input"])
        n, h, w = _fft_input(inp, "input")
        out = (n, h // 2 + 1, w // 2 + 1)
        return [out, out]


__all__ = [
    "ArgMaxOp",
    "AvgPool2dOp",
    "Conv2DOp",
    "Conv3DOp",
    "DepthwiseConv2DOp",
    "FFT2dOp",
    "FullyConnectedOp",
    "MatMulOp",
    "MaxPool2dOp",
    "RFFT2dOp",
    "TransposeConv2DOp",
    "CONV_TYPE_MODES",
    "check_zero_point",
]
