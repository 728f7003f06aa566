"""The ``fused.row_program`` kernel (``nnkiln.blob.row_program``): ``nk_rows_run`` of the native library, else a
numpy interpreter of the same program (whole arrays instead of row blocks: the same float32 operations; exp, tanh
and sigmoid are numpy's, a few ulp from the C file's own).

The program is validated against the task's buffers when the task is built (``row_program.validate``): a blob from
elsewhere cannot make the kernel touch memory outside them.
"""

from __future__ import annotations

import ctypes
from collections.abc import Sequence
from typing import Any

import numpy as np

from nnkiln import native_header
from nnkiln.blob import row_program as isa
from nnkiln.blob.format import BufferDesc, Memory, TaskDesc
from nnkiln.errors import BlobError
from nnkiln.kinds import Kind
from nnkiln.runtime.kernels.bound import Bound, address, slots

_F32 = np.float32


_Ins = native_header.struct("nk_ins")


_LIB: Any = False


def rows_lib() -> Any:
    """The native library holding ``nk_rows_run`` (conv.c's, one thread pool), or None."""
    global _LIB
    if _LIB is False:
        from nnkiln.runtime import native

        _LIB = native.load()  # conv.c #includes eltwise_rows.c: one library, one thread pool
    return _LIB


_UNARY = {
    isa.Op.EXP: np.exp, isa.Op.TANH: np.tanh, isa.Op.ABS: np.abs, isa.Op.NEGATE: np.negative,
    isa.Op.RECIPROCAL: lambda x: _F32(1.0) / x, isa.Op.RSQRT: lambda x: _F32(1.0) / np.sqrt(x),
    isa.Op.SIGMOID: lambda x: _F32(1.0) / (np.exp(-x) + _F32(1.0)), isa.Op.COPY: lambda x: x,
}
_BINARY = {isa.Op.ADD: np.add, isa.Op.SUB: np.subtract, isa.Op.MUL: np.multiply, isa.Op.MAXIMUM: np.maximum,
           isa.Op.MINIMUM: np.minimum, isa.Op.DIV: np.divide}
_REDUCE = {isa.Op.REDUCE_SUM: np.sum, isa.Op.REDUCE_MAX: np.max, isa.Op.REDUCE_MIN: np.min}


def _unary(op: int, x: np.ndarray, lo: float, hi: float) -> np.ndarray:
    if op == isa.Op.CLAMP:
        return np.minimum(np.maximum(x, _F32(lo)), _F32(hi))
    return _UNARY[isa.Op(op)](x)


class RowProgram:
    """A ``fused.row_program`` task: ``fn(views)`` and, with the native library, ``bind(views)``."""

    def __init__(self, task: TaskDesc, buffers: Sequence[BufferDesc], static_views: Sequence[np.ndarray | None],
                 threads: int):
        bufs = [*task.ins, *task.outs]
        if any(buffers[b].kind is not Kind.F32 for b in bufs) or task.args.get("post_ops"):
            raise BlobError(f"invalid blob: {isa.KERNEL} takes float32 buffers and no post-ops")
        attrs = task.args.get("attrs", {})
        self.program = isa.validate(attrs, len(task.ins), len(task.outs), [buffers[b].size // 4 for b in bufs])
        self.args = [bufs[a] for a in attrs["args"]]
        self.modes = [int(m) for m in attrs["modes"]]
        self.rows, self.cols, self.block = int(attrs["rows"]), int(attrs["cols"]), int(attrs["block"])
        self.nregs = int(attrs["registers"])
        self.threads = threads if attrs.get("parallel") else 1
        self.lib = rows_lib()
        if self.lib is None:
            return
        self.prog = (_Ins * len(self.program))(*[_Ins(*i) for i in self.program])
        self.ptrs = (ctypes.c_void_p * len(self.args))()
        self.dynamic: list[tuple[int, int]] = []
        for k, b in enumerate(self.args):
            v = static_views[b]
            if v is None or buffers[b].memory in (Memory.INPUT, Memory.OUTPUT):
                self.dynamic.append((k, b))
            else:
                self.ptrs[k] = v.ctypes.data
        self.c_modes = (ctypes.c_int32 * len(self.modes))(*self.modes)

    def __call__(self, views: Sequence[np.ndarray]) -> None:
        if self.lib is None:
            self._numpy(views)
            return
        ptrs = self.ptrs
        for k, b in self.dynamic:
            ptrs[k] = views[b].ctypes.data
        if self.lib.nk_rows_run(self.prog, len(self.program), self.nregs, ptrs, self.c_modes, self.rows, self.cols,
                                self.block, self.threads):
            raise MemoryError("row program: scratch allocation failed")

    def bind(self, views: Sequence[np.ndarray | None]) -> Bound | None:
        """The program as one bound call (``kernels.bound``); a graph input/output buffer is taken from ``views``
        (a probe view: the chain patches its entry of ``ptrs`` on each run), None if it is absent."""
        if self.lib is None or any(views[b] is None for _, b in self.dynamic):
            return None
        for k, b in self.dynamic:
            self.ptrs[k] = views[b].ctypes.data  # type: ignore[union-attr]
        args = slots(ctypes.addressof(self.prog), len(self.program), self.nregs, ctypes.addressof(self.ptrs),
                     ctypes.addressof(self.c_modes), self.rows, self.cols, self.block, self.threads)
        return Bound([(address(self.lib.nk_rows_run_b), args)], [self, self.ptrs])

    def _numpy(self, views: Sequence[np.ndarray]) -> None:
        """The program on whole arrays: a row block is ``[rows, cols]``, a per-row value ``[rows, 1]``."""
        r, c = self.rows, self.cols
        shapes = {isa.Mode.FULL: (r, c), isa.Mode.CHAN: (1, c), isa.Mode.ROWV: (r, 1), isa.Mode.SCAL: (1, 1)}
        argv = [views[b].reshape(-1)[:int(np.prod(shapes[isa.Mode(m)]))].reshape(shapes[isa.Mode(m)])
                for b, m in zip(self.args, self.modes)]
        regs: dict[int, np.ndarray] = {}

        def get(i: int) -> np.ndarray:
            return regs[i] if i >= 0 else argv[-1 - i]

        def put(d: int, value: np.ndarray) -> None:
            if d >= 0:
                regs[d] = np.array(value, _F32)  # a copy: registers never alias the arguments
            else:
                np.copyto(argv[-1 - d], np.broadcast_to(value, argv[-1 - d].shape))

        prog, k = self.program, 0
        with np.errstate(all="ignore"):
            while k < len(prog):
                op, dst, a, b, lo, hi, _, _ = prog[k]
                if op == isa.Op.STORE:
                    np.copyto(argv[dst], np.broadcast_to(get(a), argv[dst].shape))
                elif op == isa.Op.CHAIN:
                    t = get(a)
                    for s in prog[k + 1:k + 1 + b]:
                        t = _BINARY[isa.Op(s[6])](t, get(s[7])) if s[6] in isa.CHAIN_BINARY else \
                            _unary(s[6], t, s[4], s[5])
                    put(dst, np.asarray(t, _F32))
                    k += b
                elif op in isa.BINARY:
                    put(dst, np.asarray(_BINARY[isa.Op(op)](get(a), get(b)), _F32))
                elif op in isa.REDUCE:
                    x = np.broadcast_to(get(a), (r, c))
                    put(dst, np.asarray(_REDUCE[isa.Op(op)](x, axis=1, keepdims=True), _F32))
                else:
                    put(dst, np.asarray(_unary(op, get(a), lo, hi), _F32))
                k += 1


__all__ = ["RowProgram", "rows_lib"]
