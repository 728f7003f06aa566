"""Fast paths for the small int32 / bool elementwise ops that index arithmetic leaves in float graphs.

Why: a transformer's embedding lookup normalises its token ids (``ids + vocab`` where ``ids < 0``: ADD,
GREATER, SELECT on int32); run through the reference kernels these cost tens of microseconds each per inference
(a ``KernelCall``, int64 widening, the REQUIRE checks, a copy out), a visible share of BERT-tiny's run
(bench/RESULTS.md). Here each is one or two numpy ufunc calls writing into the output view.

Semantics are the reference kernels' exactly (integers: bit for bit): ADD / SUB / MUL (shift 0) of int32 are
computed in int64 and narrowed; where an ADD / SUB result does not fit int32 (a REQUIRE of the spec:
unpredictable), the reference kernel runs instead, so the error is the reference's; MUL keeps the low 32 bits
of the product, as the reference does. MAXIMUM / MINIMUM, GREATER / GREATER_EQUAL /
EQUAL of int32 (bool result) and SELECT (bool condition; int32, bool or float32 values) cannot fail.
Shapes must broadcast to the output (checked when the kernel is built).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from nnkiln import native_header as header
from nnkiln.blob.format import BufferDesc
from nnkiln.kinds import Kind
from nnkiln.runtime.kernels.reference import call_reference, store

FastFn = Callable[[Sequence[np.ndarray], Sequence[np.ndarray], Sequence[np.ndarray]], None]

_WIDENED: dict[str, Callable[..., np.ndarray]] = {"tosa.add": np.add, "tosa.sub": np.subtract,
                                                   "tosa.mul": np.multiply}
_EXACT: dict[str, Callable[..., np.ndarray]] = {"tosa.maximum": np.maximum, "tosa.minimum": np.minimum}
_COMPARE: dict[str, Callable[..., np.ndarray]] = {"tosa.greater": np.greater, "tosa.greater_equal": np.greater_equal,
                                                  "tosa.equal": np.equal}
OPS = frozenset({*_WIDENED, *_EXACT, *_COMPARE, "tosa.select"})
_I32 = (-(1 << 31), (1 << 31) - 1)


def _broadcasts(ib: Sequence[BufferDesc], ob: Sequence[BufferDesc]) -> bool:
    try:
        return len(ob) == 1 and np.broadcast_shapes(*(b.shape for b in ib)) == ob[0].shape
    except ValueError:
        return False


_CODES = {f"tosa.{name.lower()}": code for name, code in header.enum("nk_int_op").items()}


def build(name: str, attrs: dict[str, Any], ib: Sequence[BufferDesc], ob: Sequence[BufferDesc]) -> FastFn | None:
    """``fn(ins, outs, extras)`` for ``name`` on these operands, or None (then the reference kernel runs). When every
    operand is the output's size or a single element, the function also binds (``nk_int_ew``: the same results; an
    ADD / SUB out of int32 makes the chain run this function, which lets the reference report it)."""
    fn = _build(name, attrs, ib, ob)
    if fn is None or any(b.size // max(1, b.dtype.itemsize) not in (1, ob[0].size // max(1, ob[0].dtype.itemsize))
                         for b in ib):
        return fn
    from nnkiln.runtime.kernels.bound import Bound, NativeFn, address, slots
    from nnkiln.runtime.kernels.conv import native_lib

    lib = native_lib()
    if lib is None:
        return fn
    n = ob[0].size // ob[0].dtype.itemsize
    width = ob[0].dtype.itemsize
    code = _CODES[name]

    def bind(ins: Sequence[np.ndarray], outs: Sequence[np.ndarray], extras: Sequence[np.ndarray]) -> Bound | None:
        if not all(a.flags.c_contiguous for a in (*ins, *outs)):
            return None
        ops = [(a.ctypes.data, 1 if a.size == n else 0) for a in ins] + [(0, 0)] * (3 - len(ins))
        args = slots(code, ops[0][0], ops[0][1], ops[1][0], ops[1][1], ops[2][0], ops[2][1], outs[0].ctypes.data, n,
                     width)
        return Bound([(address(lib.nk_int_ew_b), args)], clean_failure=True)

    return NativeFn(fn, bind)


def _build(name: str, attrs: dict[str, Any], ib: Sequence[BufferDesc], ob: Sequence[BufferDesc]) -> FastFn | None:
    if name not in OPS or not _broadcasts(ib, ob):
        return None
    kinds = [b.kind for b in ib]
    out = ob[0].kind
    if name == "tosa.select":
        if len(ib) != 3 or kinds[0] is not Kind.BOOL or not (kinds[1] is kinds[2] is out) or out not in (
                Kind.I32, Kind.BOOL, Kind.F32):
            return None

        def select(ins: Sequence[np.ndarray], outs: Sequence[np.ndarray], extras: Sequence[np.ndarray]) -> None:
            np.copyto(outs[0], np.where(ins[0], ins[1], ins[2]))

        return select
    if len(ib) != 2 or kinds != [Kind.I32, Kind.I32]:
        return None
    if name in _COMPARE:
        if out is not Kind.BOOL:
            return None
        cmp = _COMPARE[name]
        return lambda ins, outs, extras: cmp(ins[0], ins[1], out=outs[0])
    if out is not Kind.I32:
        return None
    if name in _EXACT:
        fn = _EXACT[name]
        return lambda ins, outs, extras: fn(ins[0], ins[1], out=outs[0])
    if name == "tosa.mul" and attrs.get("shift", 0):
        return None
    wide = _WIDENED[name]
    out_dtype, out_shape = ob[0].dtype, ob[0].shape

    checked = name != "tosa.mul"  # MUL with shift 0 keeps the product's low 32 bits (no REQUIRE)

    def widened(ins: Sequence[np.ndarray], outs: Sequence[np.ndarray], extras: Sequence[np.ndarray]) -> None:
        r = wide(ins[0].astype(np.int64), ins[1])
        if checked and r.size and (r.min() < _I32[0] or r.max() > _I32[1]):  # the reference's REQUIRE error
            res = call_reference(name, list(ins), attrs, kinds, [out], [out_dtype], [out_shape])
            store(outs[0], res[0])
            return
        np.copyto(outs[0], r, casting="unsafe")

    return widened
