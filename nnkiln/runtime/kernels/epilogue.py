"""Fused float32 post-ops applied in place to (a row block of) a kernel's output.

A producer kernel (conv, depthwise, fully_connected, matmul, pools) views its output as a matrix
``[rows, C]`` (C = the last dimension) and, right after computing a block of rows (while it is in
cache), calls ``epilogue(block, rows_slice, extras)``: each post-op runs with ``out=`` on the block,
so no temporary is made. ``extras`` are the views of the post-ops' extra operands (in post-op order).

Native post-ops (float32 only, the same float32 numpy operations as the reference kernels, so the
same results): ``tosa.clamp`` (``np.clip`` = ``min(max(x, min_val), max_val)``; only one of the two when the
other bound is infinite), ``tosa.sigmoid``, ``tosa.tanh``, ``tosa.exp``, ``tosa.abs``, ``tosa.negate``,
``tosa.reciprocal`` (``1/x``), ``tosa.rsqrt`` (``1/sqrt(x)``), and ``tosa.add``/``tosa.mul``/``tosa.sub``
(the fused value is the left operand of sub)/``tosa.maximum``/``tosa.minimum`` whose extra operand has
the output's shape, varies only along the last axis, or only along the others (``operand_2d``).
Anything else makes ``build`` return None: the caller then applies the post-ops one by one afterwards
(reference kernels).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from nnkiln.blob.format import BufferDesc
from nnkiln.blob.row_program import clamp_bounds
from nnkiln.kinds import Kind

Step = Callable[[np.ndarray, slice, Sequence[np.ndarray]], None]
_F32 = np.float32
_BINARY: dict[str, Callable[..., Any]] = {"tosa.add": np.add, "tosa.sub": np.subtract, "tosa.mul": np.multiply,
                                          "tosa.maximum": np.maximum, "tosa.minimum": np.minimum}


def _clamp_step(attrs: dict[str, Any]) -> Step | None:
    bounds = clamp_bounds(attrs)
    if bounds is None:
        return None
    lo, hi = bounds
    if np.isinf(hi) and hi > 0:
        return lambda o, rs, ex: np.maximum(o, lo, out=o)
    if np.isinf(lo) and lo < 0:
        return lambda o, rs, ex: np.minimum(o, hi, out=o)

    def clamp(o: np.ndarray, rs: slice, ex: Sequence[np.ndarray]) -> None:
        np.clip(o, lo, hi, out=o)  # = min(max(o, lo), hi), NaN propagates (checked in the unit tests)

    return clamp


def _sigmoid(o: np.ndarray, rs: slice, ex: Sequence[np.ndarray]) -> None:
    with np.errstate(all="ignore"):
        np.negative(o, out=o)
        np.exp(o, out=o)
        np.add(o, _F32(1), out=o)
        np.divide(_F32(1), o, out=o)


def _tanh(o: np.ndarray, rs: slice, ex: Sequence[np.ndarray]) -> None:
    np.tanh(o, out=o)


def _rsqrt(o: np.ndarray, rs: slice, ex: Sequence[np.ndarray]) -> None:
    with np.errstate(all="ignore"):
        np.sqrt(o, out=o)
        np.divide(_F32(1), o, out=o)


def _ufunc_step(fn: Callable[..., Any]) -> Step:
    def step(o: np.ndarray, rs: slice, ex: Sequence[np.ndarray]) -> None:
        with np.errstate(all="ignore"):
            fn(o, out=o)

    return step


def _reciprocal(o: np.ndarray, rs: slice, ex: Sequence[np.ndarray]) -> None:
    with np.errstate(all="ignore"):
        np.divide(_F32(1), o, out=o)


_UNARY: dict[str, Step] = {"tosa.sigmoid": lambda o, rs, ex: _sigmoid(o, rs, ex), "tosa.tanh": _tanh,
                           "tosa.exp": _ufunc_step(np.exp), "tosa.abs": _ufunc_step(np.abs),
                           "tosa.negate": _ufunc_step(np.negative), "tosa.reciprocal": _reciprocal,
                           "tosa.rsqrt": _rsqrt}


def operand_2d(shape: tuple[int, ...], out: tuple[int, ...]) -> str | None:
    """How an operand of ``shape`` is cut into row blocks of the output viewed as ``[rows, C]``:
    "full" (same shape: slice rows), "channel" (all but the last dimension 1: the same ``[1, C']``
    for every block), "row" (last dimension 1, the others the output's: slice rows of ``[rows, 1]``),
    or None."""
    if len(shape) != len(out) or not out:
        return None
    if shape == out:
        return "full"
    if all(d == 1 for d in shape[:-1]) and shape[-1] in (1, out[-1]):
        return "channel"
    if shape[-1] == 1 and shape[:-1] == out[:-1]:
        return "row"
    return None


def block_of(mode: str, a: np.ndarray, rs: slice, c: int) -> np.ndarray:
    """The block of operand ``a`` (cut ``mode``) for the output rows ``rs`` (C = ``c`` columns)."""
    if mode == "full":
        return a.reshape(-1, c)[rs]
    if mode == "channel":
        return a.reshape(1, -1)
    return a.reshape(-1, 1)[rs]


def _binary_step(name: str, attrs: dict[str, Any], k: int, extra: BufferDesc, out: BufferDesc) -> Step | None:
    if extra.kind is not Kind.F32 or (name == "tosa.mul" and attrs.get("shift", 0)):
        return None
    fn = _BINARY[name]
    mode = operand_2d(extra.shape, out.shape)
    if mode is None:
        return None

    def binary(o: np.ndarray, rs: slice, ex: Sequence[np.ndarray]) -> None:
        fn(o, block_of(mode, ex[k], rs, o.shape[1]), out=o)

    return binary


class Epilogue:
    """The fused post-ops of one task: ``epi(block, rows_slice, extras)``."""

    def __init__(self, steps: list[Step]):
        self.steps = steps

    def __call__(self, o: np.ndarray, rs: slice, extras: Sequence[np.ndarray]) -> None:
        for s in self.steps:
            s(o, rs, extras)


def build(posts: Sequence[dict[str, Any]], out: BufferDesc, extras: Sequence[BufferDesc]) -> Epilogue | None:
    """The epilogue for ``posts`` on the float32 output ``out`` (``extras``: descs of the operands of the
    post-ops that have one, in order), or None if a post-op has no native form."""
    if out.kind is not Kind.F32:
        return None
    steps: list[Step] = []
    k = 0
    for p in posts:
        name, attrs = p["kernel"], p.get("attrs", {})
        step: Step | None = None
        if p.get("operand") is not None:
            if name in _BINARY:
                step = _binary_step(name, attrs, k, extras[k], out)
            k += 1
        elif name == "tosa.clamp":
            step = _clamp_step(attrs)
        else:
            step = _UNARY.get(name)
        if step is None:
            return None
        steps.append(step)
    epi = Epilogue(steps)
    epi.spec = (list(posts), list(extras))  # type: ignore[attr-defined]  # read by kernels.conv (native epilogues)
    return epi


__all__ = ["Epilogue", "block_of", "build", "clamp_bounds", "operand_2d"]
