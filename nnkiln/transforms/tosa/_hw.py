"""Small builders shared by the level-3 HW adaptation passes (``fc-to-conv``, ``avgpool-to-depthwise``,
``scale-shift-to-depthwise``, ``expand-channels``, ``split-asymmetric-strides``, ``convert-precision-to-fp16``,
``fuse-low-precision``): constants, data-layout ops and type queries. Every builder returns an unattached op
whose result type comes from the op's own shape inference (``TosaOp.make``), so a built op verifies."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from xdsl.dialects.builtin import FloatAttr, IntegerAttr, TensorType, f32, i64
from xdsl.ir import Attribute, SSAValue

from nnkiln.dialects.tosa.base import Kind, kind_of
from nnkiln.dialects.tosa.canonicalization import const_op
from nnkiln.dialects.tosa.ops_data_layout import PadOp, ReshapeOp, SliceOp
from nnkiln.dialects.tosa.ops_data_nodes import ConstOp
from nnkiln.ir.elements import to_numpy

CONV_STRIDED = ("tosa.conv2d", "tosa.depthwise_conv2d", "tosa.avg_pool2d", "tosa.max_pool2d")
"""The NCE operations with a 2-D window (``stride`` [y, x], ``pad`` [top, bottom, left, right])."""


def ttype(v: SSAValue) -> TensorType:
    t = v.type
    assert isinstance(t, TensorType), t
    return t


def shape(v: SSAValue) -> tuple[int, ...]:
    return tuple(ttype(v).get_shape())


def kind(v: SSAValue) -> Kind | None:
    return kind_of(v.type)


def elem(v: SSAValue) -> Attribute:
    return ttype(v).element_type


def const_array(v: SSAValue) -> np.ndarray | None:
    """The value of a ``tosa.const`` result as a read-only numpy array, else None."""
    return np.asarray(to_numpy(v.owner.values)) if isinstance(v.owner, ConstOp) else None


def const(array: np.ndarray, element_type: Attribute) -> ConstOp:
    """A ``tosa.const`` holding ``array`` converted to ``element_type``."""
    array = np.ascontiguousarray(array)
    return const_op(array, TensorType(element_type, array.shape))


def reshape(v: SSAValue, new_shape: Sequence[int]) -> ReshapeOp:
    return ReshapeOp.make([v], elem(v), new_shape=tuple(new_shape))


def slice_(v: SSAValue, start: Sequence[int], size: Sequence[int]) -> SliceOp:
    return SliceOp.make([v], elem(v), start=tuple(start), size=tuple(size))


def pad(v: SSAValue, padding: Sequence[int], value: float | int) -> PadOp:
    """``tosa.pad`` of ``v`` by ``padding`` (before_0, after_0, ...) with ``value`` (an integer attribute for an
    integer tensor, a float one for a float tensor, as PAD's verifier requires)."""
    k = kind(v)
    attr = IntegerAttr(int(value), i64) if k is not None and k.is_int else FloatAttr(float(value), f32)
    return PadOp.make([v], elem(v), padding=tuple(padding), pad_const=attr)


def is_plain(v: SSAValue, *kinds: Kind) -> bool:
    """``v`` is a ranked static tensor whose element kind is one of ``kinds`` (no quantized element type)."""
    t = v.type
    if not isinstance(t, TensorType) or kind_of(t) not in kinds:
        return False
    return getattr(t.element_type, "storage_type", None) is None and all(d >= 0 for d in t.get_shape())
