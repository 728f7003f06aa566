"""Batch axes of a tosa function: which ops treat the samples of a batch independently.

A function whose tensor inputs all have the same leading dimension ``N > 1`` processes a batch of ``N``
samples. A value is *batched on axis a* when its dimension ``a`` is ``N·r`` and the sample index is the
outermost factor of that dimension: element ``(..., i_a, ...)`` belongs to sample ``i_a // r``. A value
that depends on no input (constants and ops on them) has no batch axis (``None``).

An op is *separable* when every sample of its batched results depends only on the same sample of its
batched operands; running it once per sample on the slices ``[s·r, (s+1)·r)`` of the batch axis then
gives the slices of its results. ``result_axes`` gives the rules, one per op family (TOSA 0.30
§2.3-§2.11 semantics; ``None`` when the op is not separable or not understood):

- elementwise ops (§2.4-2.7, CLAMP, SIGMOID, TANH, CAST, RESCALE, TABLE, SELECT, IDENTITY): the batched
  operands share one axis and its extent; an unbatched operand broadcasts over it (extent 1 there).
  RESCALE with ``per_channel`` must not be batched on its last axis (the channel axis).
- CONV2D, CONV3D, DEPTHWISE_CONV2D, TRANSPOSE_CONV2D, AVG_POOL2D, MAX_POOL2D, RESIZE, FULLY_CONNECTED:
  batched on axis 0 (``N`` of NHWC / ``[N, IC]``), weights and bias unbatched.
- MATMUL ``[B,M,K]·[B,K,N]``: both operands batched on axis 0, or ``A`` batched on axis 1 (rows) and
  ``B`` unbatched. GATHER ``values[N,K,C], indices[N,W]``: both on axis 0, or ``indices`` on axis 1 with
  ``values`` unbatched.
- REDUCE_*, ARGMAX, REVERSE: ``axis`` is not the batch axis. CONCAT: every operand batched on the same
  axis, which is not ``axis``. SLICE: the batch axis is kept whole. PAD: no padding on it. TILE: multiple
  1 on it. TRANSPOSE: the batch axis moves with ``perms``.
- RESHAPE: the batch factor survives when the output has a dimension ``j`` with the same product of the
  dimensions before it as the input's batch axis and ``N`` divides it (row-major order then keeps every
  sample's elements together and in order, see ``reshape_axis``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from xdsl.dialects.builtin import TensorType
from xdsl.ir import Operation, SSAValue

from nnkiln.dialects.tosa.base import from_attr
from nnkiln.dialects.tosa.categories import ELEMENTWISE as BASE_ELEMENTWISE
from nnkiln.dialects.tosa.categories import REDUCTIONS

Axis = int | None

ELEMENTWISE = BASE_ELEMENTWISE | {"tosa.table", "tosa.identity"}  # element by element too: separable
SPATIAL = frozenset({"tosa.conv2d", "tosa.conv3d", "tosa.depthwise_conv2d", "tosa.transpose_conv2d",
                     "tosa.avg_pool2d", "tosa.max_pool2d", "tosa.resize", "tosa.fully_connected"})
AXIS_OPS = REDUCTIONS | {"tosa.reverse", "tosa.argmax"}


def shape(v: SSAValue) -> tuple[int, ...]:
    return tuple(v.type.get_shape()) if isinstance(v.type, TensorType) else ()


def input_batch(inputs: Sequence[SSAValue]) -> int:
    """``N`` if every tensor input has rank >= 1 and the same leading dimension ``N > 1``, else 0."""
    lead = {shape(v)[0] if shape(v) else 0 for v in inputs if isinstance(v.type, TensorType)}
    if len(lead) != 1:
        return 0
    n = lead.pop()
    return n if n > 1 else 0


def reshape_axis(src: Sequence[int], axis: int, dst: Sequence[int], n: int) -> Axis:
    """The batch axis of ``RESHAPE(x, dst)`` for ``x`` of shape ``src`` batched on ``axis``, or None."""
    before = math.prod(src[:axis])
    for j in range(len(dst)):
        if math.prod(dst[:j]) == before and dst[j] > 1:
            return j if dst[j] % n == 0 else None
    return None


def _common(axes: Sequence[Axis], extents: Sequence[int]) -> Axis | bool:
    """The one axis of the batched operands (False if they disagree; None if no operand is batched)."""
    batched = {(a, e) for a, e in zip(axes, extents) if a is not None}
    if len(batched) > 1:
        return False
    return batched.pop()[0] if batched else None


def result_axes(op: Operation, axes: Sequence[Axis], n: int) -> list[Axis] | None:
    """Batch axes of ``op``'s results given its operands' (``axes``), or None if ``op`` is not separable.

    An op with no batched operand gives unbatched results."""
    if all(a is None for a in axes):
        return [None] * len(op.results) if not op.regions else None
    name = op.name
    shapes = [shape(v) for v in op.operands]
    if name in ELEMENTWISE:
        extents = [s[a] if a is not None else 0 for s, a in zip(shapes, axes)]
        a = _common(axes, extents)
        if a is False or a is None:
            return None
        if any(ax is None and s[a] != 1 for s, ax in zip(shapes, axes)):
            return None
        if name == "tosa.rescale" and from_attr(op.properties["per_channel"]) and a == len(shapes[0]) - 1:
            return None
        return [a]
    if name in SPATIAL:
        return [0] if axes[0] == 0 and all(ax is None for ax in axes[1:]) else None
    if name == "tosa.matmul":
        if axes == [0, 0] and shapes[0][0] == shapes[1][0]:
            return [0]
        return [1] if axes[0] == 1 and axes[1] is None else None
    if name == "tosa.gather":
        if axes == [0, 0]:
            return [0]
        return [1] if axes[0] is None and axes[1] == 1 else None
    a = axes[0]
    if a is None or any(ax is not None for ax in axes[1:]) and name != "tosa.concat":
        return None
    props = op.properties
    if name in AXIS_OPS:
        k = int(from_attr(props["axis"]))
        if k == a:
            return None
        return [a - 1 if name == "tosa.argmax" and k < a else a]
    if name == "tosa.concat":
        if any(ax != a for ax in axes) or len({s[a] for s in shapes}) != 1 or int(from_attr(props["axis"])) == a:
            return None
        return [a]
    if name == "tosa.transpose":
        return [list(from_attr(props["perms"])).index(a)]
    if name == "tosa.reshape":
        j = reshape_axis(shapes[0], a, shape(op.results[0]), n)
        return None if j is None else [j]
    if name == "tosa.slice":
        start, size = from_attr(props["start"]), from_attr(props["size"])
        return [a] if start[a] == 0 and size[a] == shapes[0][a] else None
    if name == "tosa.pad":
        pad = from_attr(props["padding"])
        return [a] if pad[2 * a] == 0 and pad[2 * a + 1] == 0 else None
    if name == "tosa.tile":
        return [a] if from_attr(props["multiples"])[a] == 1 else None
    return None


def per_sample_props(op: Operation, res_axes: Sequence[Axis], n: int) -> dict[str, object]:
    """``op``'s properties for one sample: the shape-valued ones (RESHAPE ``new_shape``, SLICE ``size``,
    TRANSPOSE_CONV2D ``out_shape``) with the batch axis divided by ``n``; the others unchanged."""
    from nnkiln.dialects.tosa.base import to_attr

    props = dict(op.properties)
    if op.name == "tosa.reshape":
        new = list(from_attr(props["new_shape"]))
        new[res_axes[0]] //= n  # type: ignore[index]
        props["new_shape"] = to_attr(tuple(new))
    elif op.name == "tosa.slice":
        size = list(from_attr(props["size"]))
        size[res_axes[0]] //= n  # type: ignore[index]
        props["size"] = to_attr(tuple(size))
    elif op.name == "tosa.transpose_conv2d":
        out_shape = list(from_attr(props["out_shape"]))
        out_shape[0] //= n
        props["out_shape"] = to_attr(tuple(out_shape))
    return props


__all__ = ["Axis", "input_batch", "per_sample_props", "reshape_axis", "result_axes", "shape"]
