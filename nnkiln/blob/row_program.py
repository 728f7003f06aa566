"""The ``fused.row_program`` kernel: a program of float32 elementwise and row-reduction steps over ``[rows, cols]``.

The compiler's ``fuse-row-programs`` pass writes these tasks; the runtime runs them with ``nk_rows_run``
(``runtime/native/eltwise_rows.c``, whose header comment is the semantics). A task's args (``attrs``):

- ``code``: 6 integers per instruction ``op, dst, a, b, op2, c``; ``bounds``: 2 floats per instruction ``lo, hi``
  (CLAMP's bounds);
- ``registers``: scratch registers the program uses; ``rows``, ``cols``, ``block`` (rows per block);
- ``modes``: one operand mode per program argument (``Mode``); ``args``: for each program argument the position
  of its buffer in the task's ``ins + outs``; ``parallel``: whether blocks may be shared by the run's threads.

An operand index ``>= 0`` is a register, ``< 0`` program argument ``-1 - index``. ``validate`` checks a program
against the buffers it is bound to before anything runs it: a blob from elsewhere must not make the kernel
read or write outside its buffers.
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import IntEnum
from typing import Any

import numpy as np

from nnkiln import native_header
from nnkiln.blob.format import FusedKernel
from nnkiln.errors import BlobError

KERNEL = FusedKernel.ROW_PROGRAM.value


Mode = IntEnum("Mode", dict(native_header.enum("nk_mode")))
"""How a program argument is read (``nnkiln.h``'s ``nk_mode``): FULL a whole ``[rows, cols]`` block, CHAN one row of
``cols`` for every row (a channel vector), ROWV one number per row, SCAL one number."""

Op = IntEnum("Op", dict(native_header.enum("nk_op")))
"""Instruction codes (``nnkiln.h``'s ``nk_op``, the C kernel's own): binary, unary, row reductions, STORE, CHAIN
and its STEPs."""

TOSA_OPS: dict[str, Op] = {f"tosa.{name.lower()}": Op[name] for name in (
    "ADD", "SUB", "MUL", "MAXIMUM", "MINIMUM", "EXP", "TANH", "SIGMOID", "ABS", "NEGATE", "RECIPROCAL", "RSQRT",
    "CLAMP", "REDUCE_SUM", "REDUCE_MAX", "REDUCE_MIN")}
"""The tosa ops a row program computes, by instruction."""

BINARY = frozenset({Op.ADD, Op.SUB, Op.MUL, Op.MAXIMUM, Op.MINIMUM, Op.DIV})
UNARY = frozenset({Op.EXP, Op.TANH, Op.SIGMOID, Op.ABS, Op.NEGATE, Op.RECIPROCAL, Op.RSQRT, Op.CLAMP, Op.COPY})
REDUCE = frozenset({Op.REDUCE_SUM, Op.REDUCE_MAX, Op.REDUCE_MIN})
CHAIN_BINARY = frozenset({Op.ADD, Op.SUB, Op.MUL, Op.MAXIMUM, Op.MINIMUM})
CHAIN_UNARY = frozenset({Op.EXP, Op.TANH, Op.SIGMOID, Op.ABS, Op.NEGATE, Op.RECIPROCAL, Op.CLAMP})
"""The operations a CHAIN step may apply."""
MAX_STEPS = native_header.define("NK_MAX_STEPS")
"""Steps of one CHAIN at most."""

Ins = tuple[int, int, int, int, float, float, int, int]
"""One instruction as ``nk_ins`` lays it out: ``(op, dst, a, b, lo, hi, op2, c)``."""


def encode(program: Sequence[Ins]) -> tuple[list[int], list[float]]:
    """``code`` and ``bounds`` of a program."""
    code: list[int] = []
    bounds: list[float] = []
    for op, dst, a, b, lo, hi, op2, c in program:
        code += [int(op), int(dst), int(a), int(b), int(op2), int(c)]
        bounds += [float(lo), float(hi)]
    return code, bounds


def decode(code: Sequence[int], bounds: Sequence[float]) -> list[Ins]:
    """The instructions of ``code`` / ``bounds`` (``BlobError`` if their lengths disagree)."""
    n = len(code) // 6
    if len(code) != 6 * n or len(bounds) != 2 * n:
        raise BlobError(f"{KERNEL}: code has {len(code)} integers and bounds {len(bounds)} floats "
                        "(6 and 2 per instruction)")
    return [(code[6 * i], code[6 * i + 1], code[6 * i + 2], code[6 * i + 3], bounds[2 * i], bounds[2 * i + 1],
             code[6 * i + 4], code[6 * i + 5]) for i in range(n)]


def validate(attrs: dict[str, Any], n_ins: int, n_outs: int, sizes: Sequence[int]) -> list[Ins]:
    """The program of a task's ``attrs`` after checking it against the task (``n_ins`` inputs, ``n_outs`` outputs;
    ``sizes``: float32 elements of each buffer of ``ins + outs``): codes, register and argument indices in range,
    registers written before they are read, every written argument an output, every argument large enough for
    its mode. ``BlobError`` names the first broken rule."""
    def fail(msg: str) -> BlobError:
        return BlobError(f"invalid blob: {KERNEL}: {msg}")

    try:
        prog = decode(list(attrs["code"]), list(attrs["bounds"]))
        nregs, rows, cols, block = (int(attrs[k]) for k in ("registers", "rows", "cols", "block"))
        modes, args = [int(m) for m in attrs["modes"]], [int(a) for a in attrs["args"]]
    except (KeyError, TypeError, ValueError) as err:
        raise fail(f"malformed args ({type(err).__name__}: {err})") from None
    if not 0 <= nregs <= 4096 or rows < 1 or cols < 1 or not 1 <= block <= rows or block * cols > 1 << 22 or not prog:
        raise fail(f"registers={nregs}, rows={rows}, cols={cols}, block={block}, {len(prog)} instructions")
    if len(modes) != len(args) or any(m not in Mode._value2member_map_ for m in modes):
        raise fail(f"modes {modes} for {len(args)} arguments")
    if any(not 0 <= a < n_ins + n_outs for a in args):
        raise fail(f"args {args} outside the task's {n_ins + n_outs} buffers")
    need = {Mode.FULL: rows * cols, Mode.CHAN: cols, Mode.ROWV: rows, Mode.SCAL: 1}
    for k, (m, a) in enumerate(zip(modes, args)):
        if sizes[a] < need[Mode(m)]:
            raise fail(f"argument {k} ({Mode(m).name}) needs {need[Mode(m)]} floats, its buffer has {sizes[a]}")
    written: set[int] = set()

    def operand(i: int, what: str) -> None:
        if i >= 0 and i not in written:
            raise fail(f"{what} reads register {i} before it is written")
        if i < 0 and not 0 <= -1 - i < len(args):
            raise fail(f"{what} reads argument {-1 - i} of {len(args)}")

    def target(d: int, what: str) -> None:
        if d >= 0:
            if d >= nregs:
                raise fail(f"{what} writes register {d} of {nregs}")
            written.add(d)
        elif not 0 <= -1 - d < len(args) or args[-1 - d] < n_ins or modes[-1 - d] not in (Mode.FULL, Mode.ROWV):
            raise fail(f"{what} writes argument {-1 - d}, which is not a row-block or per-row output")

    k = 0
    while k < len(prog):
        op, dst, a, b, _, _, _, _ = prog[k]
        what = f"instruction {k}"
        if op == Op.STORE:
            operand(a, what)
            target(-1 - dst, what)
        elif op == Op.CHAIN:
            if not 0 <= b <= MAX_STEPS or k + b >= len(prog):
                raise fail(f"{what}: a chain of {b} steps")
            operand(a, what)
            for j in range(k + 1, k + 1 + b):
                s = prog[j]
                if s[0] != Op.STEP or (s[6] not in CHAIN_BINARY and s[6] not in CHAIN_UNARY):
                    raise fail(f"instruction {j} is not a step of the chain at {k}")
                if s[6] in CHAIN_BINARY:
                    operand(s[7], f"instruction {j}")
            target(dst, what)
            k += b
        elif op in BINARY:
            operand(a, what)
            operand(b, what)
            target(dst, what)
        elif op in UNARY or op in REDUCE:
            operand(a, what)
            target(dst, what)
        else:
            raise fail(f"{what} has code {op}")
        k += 1
    return prog


def clamp_bounds(attrs: dict[str, Any]) -> tuple[np.float32, np.float32] | None:
    """(min, max) of a float32 CLAMP, or None if the attributes are absent or min > max."""
    lo = next((attrs[k] for k in ("min_val", "min_fp") if attrs.get(k) is not None), None)
    hi = next((attrs[k] for k in ("max_val", "max_fp") if attrs.get(k) is not None), None)
    if not isinstance(lo, (int, float)) or not isinstance(hi, (int, float)):
        return None
    lo_f, hi_f = np.float32(lo), np.float32(hi)
    if not lo_f <= hi_f:  # the reference raises tosa_unpredictable: let it
        return None
    return lo_f, hi_f


__all__ = ["BINARY", "clamp_bounds", "CHAIN_BINARY", "CHAIN_UNARY", "KERNEL", "MAX_STEPS", "REDUCE", "TOSA_OPS", "UNARY", "Ins", "Mode", "Op", "decode", "encode",
           "validate"]
