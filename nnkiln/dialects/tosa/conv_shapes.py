"""Shape rules shared by the TOSA 0.30 tensor operators (spec §2.3): output sizes of the convolution
and pooling family with the exact division of ``idiv_check`` (spec §3.4 "Generic helpers"),
attribute-list validation and the small shape predicates the ops reuse.

Every helper raises ``ShapeError`` through ``require_shape`` with a rule written as the condition that
must hold (the negation of the spec's ``ERROR_IF``) and a detail naming the values.

Spec order of the checks is kept by the callers: attribute lengths and operand ranks first (implied by
the argument tables), then the ``ERROR_IF`` lines in the order of each op's pseudocode.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from nnkiln.dialects.tosa.base import Shape, require_shape

INT32_MIN = -(1 << 31)
INT32_MAX = (1 << 31) - 1


def fmt_shape(shape: Sequence[int]) -> str:
    """``[1, 2, 3]`` style text of a shape or an attribute list."""
    return "[" + ", ".join(str(d) for d in shape) + "]"


def power_of_two(value: int) -> bool:
    """``power_of_two`` (spec §3.4): true for 1, 2, 4, 8, ... (1 = 2^0 counts as a power of two)."""
    return value >= 1 and value & (value - 1) == 0


def get_attr(attrs: Mapping[str, Any], name: str) -> Any:
    """The attribute ``name``; a missing one is a ``ShapeError`` (rule "attribute <name> is present")."""
    require_shape(name in attrs and attrs[name] is not None, f"attribute {name} is present",
                  f"the attribute {name} is missing")
    return attrs[name]


def int_scalar(attrs: Mapping[str, Any], name: str) -> int:
    """An ``int32_t`` scalar attribute (spec argument type ``int32_t``)."""
    value = get_attr(attrs, name)
    require_shape(isinstance(value, int) and not isinstance(value, bool), f"{name} is an integer",
                  f"{name} = {value!r} is not an integer")
    require_shape(INT32_MIN <= value <= INT32_MAX, f"{name} fits int32_t", f"{name} = {value} is outside int32_t")
    return int(value)


def int_list(attrs: Mapping[str, Any], name: str, length: int) -> tuple[int, ...]:
    """An ``int32_t*`` list attribute of shape ``[length]`` (e.g. ``pad`` [4], ``stride`` [2])."""
    value = get_attr(attrs, name)
    try:
        values = tuple(int(v) for v in value)
    except TypeError:
        values = ()
        require_shape(False, f"{name} has {length} elements", f"{name} = {value!r} is not a list of integers")
    require_shape(len(values) == length, f"{name} has {length} elements",
                  f"{name} = {fmt_shape(values)} has {len(values)} elements")
    require_shape(all(INT32_MIN <= v <= INT32_MAX for v in values), f"{name} values fit int32_t",
                  f"{name} = {fmt_shape(values)} has a value outside int32_t")
    return values


def require_rank(shape: Sequence[int], rank: int, name: str, layout: str) -> None:
    """The argument table's shape: ``name`` has rank ``rank`` (``layout`` such as ``[N,IH,IW,C]``)."""
    require_shape(len(shape) == rank, f"{name} has shape {layout}",
                  f"{name} has rank {len(shape)} (shape {fmt_shape(shape)}), expected rank {rank}")


def require_static(shape: Sequence[int], name: str) -> None:
    """Every dimension is >= 1 (spec §1.8.1: "The tensor shape in each dimension must be greater than
    or equal to 1"); dynamic (``?``) dimensions are rejected, TOSA 0.30 shapes are static."""
    if not all(d >= 1 for d in shape):
        dims = ", ".join(str(d) if d >= 0 else "?" for d in shape)
        require_shape(False, "tensor dimensions >= 1", f"{name} has shape [{dims}]")


def require_all_at_least(names: Sequence[str], values: Sequence[int], minimum: int) -> None:
    """ERROR_IF(x < minimum) for each named value, as one rule ``"a, b, c >= minimum"``."""
    rule = ", ".join(names) + f" >= {minimum}"
    bad = [f"{n} = {v}" for n, v in zip(names, values) if v < minimum]
    require_shape(not bad, rule, ", ".join(bad))


@dataclass(frozen=True)
class SpatialAxis:
    """The spec's names of one spatial axis of a convolution or pooling op."""

    out: str        # OH
    inp: str        # IH
    pad_lo: str     # pad_top
    pad_hi: str     # pad_bottom
    kernel: str     # KH (convolutions) or kernel_y (pooling)
    stride: str     # stride_y
    dilation: str   # dilation_y


CONV_D = SpatialAxis("OD", "ID", "pad_d0", "pad_d1", "KD", "stride_d", "dilation_d")
CONV_H = SpatialAxis("OH", "IH", "pad_top", "pad_bottom", "KH", "stride_y", "dilation_y")
CONV_W = SpatialAxis("OW", "IW", "pad_left", "pad_right", "KW", "stride_x", "dilation_x")
POOL_H = SpatialAxis("OH", "IH", "pad_top", "pad_bottom", "kernel_y", "stride_y", "")
POOL_W = SpatialAxis("OW", "IW", "pad_left", "pad_right", "kernel_x", "stride_x", "")


def idiv_check(numerator: int, denominator: int, rule: str, numerator_text: str, denominator_text: str) -> int:
    """``idiv_check`` (spec §3.4): ERROR_IF(numerator % denominator != 0), else the exact quotient.

    A remainder of zero means the same in C's truncating and Python's flooring ``%``, and an exact
    quotient is the same under both divisions.
    """
    require_shape(denominator != 0, rule, f"{denominator_text} = 0")
    require_shape(numerator % denominator == 0, rule,
                  f"{numerator_text} = {numerator} is not a multiple of {denominator_text} = {denominator}")
    return numerator // denominator


def conv_output_size(axis: SpatialAxis, in_size: int, pad_lo: int, pad_hi: int, kernel: int, stride: int,
                     dilation: int) -> int:
    """``O = idiv_check(I - 1 + pad_lo + pad_hi - (K - 1) * dilation, stride) + 1`` (CONV2D §2.3.3,
    CONV3D §2.3.4, DEPTHWISE_CONV2D §2.3.5). A result below 1 breaks the same rule (no tensor has
    such a dimension)."""
    a = axis
    num_text = f"{a.inp} - 1 + {a.pad_lo} + {a.pad_hi} - ({a.kernel} - 1) * {a.dilation}"
    rule = f"{a.out} == idiv_check({num_text}, {a.stride}) + 1"
    values = (f"{a.inp} = {in_size}, {a.pad_lo} = {pad_lo}, {a.pad_hi} = {pad_hi}, {a.kernel} = {kernel}, "
              f"{a.dilation} = {dilation}, {a.stride} = {stride}")
    numerator = in_size - 1 + pad_lo + pad_hi - (kernel - 1) * dilation
    out = idiv_check(numerator, stride, rule, f"{num_text} ({values})", a.stride) + 1
    require_shape(out >= 1, rule, f"{a.out} = {out}: the dilated kernel is larger than the padded input ({values})")
    return out


def pool_output_size(axis: SpatialAxis, in_size: int, pad_lo: int, pad_hi: int, kernel: int, stride: int) -> int:
    """``O = idiv_check(I + pad_lo + pad_hi - kernel, stride) + 1`` (AVG_POOL2D §2.3.2, MAX_POOL2D
    §2.3.9); a result below 1 breaks the same rule."""
    a = axis
    num_text = f"{a.inp} + {a.pad_lo} + {a.pad_hi} - {a.kernel}"
    rule = f"{a.out} == idiv_check({num_text}, {a.stride}) + 1"
    values = (f"{a.inp} = {in_size}, {a.pad_lo} = {pad_lo}, {a.pad_hi} = {pad_hi}, {a.kernel} = {kernel}, "
              f"{a.stride} = {stride}")
    numerator = in_size + pad_lo + pad_hi - kernel
    out = idiv_check(numerator, stride, rule, f"{num_text} ({values})", a.stride) + 1
    require_shape(out >= 1, rule, f"{a.out} = {out}: the kernel is larger than the padded input ({values})")
    return out


def conv_spatial(axes: Sequence[SpatialAxis], in_sizes: Sequence[int], kernel_sizes: Sequence[int],
                 pad: Sequence[int], stride: Sequence[int], dilation: Sequence[int]) -> Shape:
    """The ERROR_IF lines shared by CONV2D/CONV3D/DEPTHWISE_CONV2D, in spec order: pad >= 0,
    stride >= 1, dilation >= 1, then one exact-division rule per axis. Returns the output sizes."""
    require_all_at_least([n for a in axes for n in (a.pad_lo, a.pad_hi)], pad, 0)
    require_all_at_least([a.stride for a in axes], stride, 1)
    require_all_at_least([a.dilation for a in axes], dilation, 1)
    return tuple(
        conv_output_size(a, i, pad[2 * k], pad[2 * k + 1], kk, stride[k], dilation[k])
        for k, (a, i, kk) in enumerate(zip(axes, in_sizes, kernel_sizes))
    )


def pool_spatial(in_sizes: Sequence[int], kernel: Sequence[int], stride: Sequence[int], pad: Sequence[int]) -> Shape:
    """The ERROR_IF lines shared by AVG_POOL2D and MAX_POOL2D, in spec order: kernel >= 1,
    stride >= 1, pad >= 0, pad < kernel (x axis first, as the spec lists it), then OH and OW."""
    axes = (POOL_H, POOL_W)
    require_all_at_least([a.kernel for a in axes], kernel, 1)
    require_all_at_least([a.stride for a in axes], stride, 1)
    require_all_at_least([n for a in axes for n in (a.pad_lo, a.pad_hi)], pad, 0)
    for k in (1, 0):
        a = axes[k]
        lo, hi = pad[2 * k], pad[2 * k + 1]
        require_shape(lo < kernel[k] and hi < kernel[k], f"{a.pad_lo}, {a.pad_hi} < {a.kernel}",
                      f"{a.pad_lo} = {lo}, {a.pad_hi} = {hi}, {a.kernel} = {kernel[k]}")
    return tuple(
        pool_output_size(a, in_sizes[k], pad[2 * k], pad[2 * k + 1], kernel[k], stride[k])
        for k, a in enumerate(axes)
    )
