"""Bound native calls: runs of units whose work is a fixed list of C kernel calls, executed as one call.

A unit (a task, or a native row group) costs microseconds of Python per run on top of its kernel: the
closure, the checks and above all ctypes' conversion of its arguments, which grows with their number
(bench/RESULTS.md). The arena and constant views are the same array objects on every run (only the graph's
input and output buffers change), so once an executable is built most native units would pass the same
arguments every time. ``bind`` builds them once, as arrays of 64-bit slots in the order of the kernel's
parameters, and consecutive bound units of a queue become one ``Chain``: one ctypes call of ``nk_run_bound``
(``native/conv.c``), which calls each kernel's slot wrapper (``nk_conv_f32_b``, ...) in order. The kernels
and their arguments are exactly those of the unbound path: results are identical.

Protocol:

* a kernel builder may return a ``NativeFn``: callable like any fast kernel, plus
  ``bind(ins, outs[, extras]) -> Bound | None`` for those arrays;
* a task function may carry ``bind(views) -> Bound | None`` (``views[i]`` is None for input/output
  buffers; ``task_bind`` makes it);
* ``bind`` returns None whenever a call could differ between runs (an input or output buffer, a
  non-contiguous view that the kernel would copy, a post-op that runs in Python, weights packed on every
  call): the unit then runs unbound, as before;
* a thread-count slot holds 0 for "the run's thread count" (``blas.kernel_threads()`` when the chain
  runs), or a fixed count (1 for small kernels);
* a kernel that needs a scratch buffer (the zero-padded input of a convolution) names the slot (and an offset
  into the buffer, for a second region) and the float32 elements it needs; the chain owns one buffer of the
  largest such size (its kernels run one at a time, so they share it).

Graph inputs and outputs: their arrays are the caller's, new on every run, so a unit reading or writing one
cannot be bound with ``static`` alone. ``chain_units`` then binds it once more with *probe* views (arrays of
the right shapes owned by the executable) and looks for the probes' addresses in what the Bound holds: its
argument slots and, recursively, the 64-bit pointer arrays it keeps (a convolution's post-op operand
pointers, a row program's argument pointers). Each place found becomes a patch ``(array, index, buffer,
byte offset)`` that the chain rewrites from the run's views before calling C (a few stores per run instead
of a Python unit, whose numpy or ctypes entry costs tens of microseconds with the interpreter's code out of cache
after a network's worth of kernels: bench/RESULTS.md). A unit whose bind finds a probe nowhere stays unbound, as
before.
"""

from __future__ import annotations

import ctypes
import dataclasses
import types
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from nnkiln.alloc import aligned_empty
from nnkiln.runtime import blas
from nnkiln.runtime.blas import kernel_threads

_I64 = np.int64


@dataclasses.dataclass
class Bound:
    """The native calls of one unit: ``(address of a *_b wrapper, int64 argument slots)`` in order."""

    calls: list[tuple[int, np.ndarray]]
    keep: list[object] = dataclasses.field(default_factory=list)  # what the slots point into
    scratch: list[tuple[int, ...]] = dataclasses.field(default_factory=list)
    """(call, slot) of the scratch address, or (call, slot, offset in float32 elements) of an address inside it."""
    scratch_elems: int = 0
    clean_failure: bool = False
    """A failing call has left the unit's inputs intact, and the unit's own (Python) path recomputes all of its
    outputs and reports the problem: the chain then runs that unit and the rest of the chain unit by unit (GATHER
    with an index out of range, an int32 ADD that overflows, a RESCALE value breaking a REQUIRE)."""
    patches: list[tuple[Any, int, int, int]] = dataclasses.field(default_factory=list)
    """``(array, index, buffer, byte offset)``: ``array[index] = address of views[buffer] + offset`` on each run
    (graph input/output buffers, see the module docstring)."""


class NativeFn:
    """A fast kernel (``run``) with ``bind``: the same work as bound native calls for given arrays."""

    __slots__ = ("run", "bind")

    def __init__(self, run: Callable[..., None], bind: Callable[..., Bound | None]):
        self.run = run
        self.bind = bind

    def __call__(self, *args: Any) -> None:
        self.run(*args)


def address(cfunc: Any) -> int:
    """The address of a ctypes function."""
    return int(ctypes.cast(cfunc, ctypes.c_void_p).value or 0)


def slots(*values: int | None) -> np.ndarray:
    """Argument slots (pointers as integers, None as 0)."""
    return np.array([0 if v is None else int(v) for v in values], _I64)


def contiguous_f32(*arrays: np.ndarray | None) -> bool:
    """Whether every array is a C-contiguous float32 array (what the C kernels read without a copy)."""
    return all(a is not None and a.dtype == np.float32 and a.flags.c_contiguous for a in arrays)


def adapt(fn: Any, fix: Callable[[Sequence[Any]], Sequence[Any]]) -> Any:
    """``fn`` called with ``fix(ins)`` for its inputs, keeping ``bind`` when ``fn`` has it."""
    if isinstance(fn, NativeFn):
        return NativeFn(lambda ins, outs, extras: fn(fix(ins), outs, extras),
                        lambda ins, outs, extras: fn.bind(fix(ins), outs, extras))
    return lambda ins, outs, extras: fn(fix(ins), outs, extras)


def task_bind(fast: NativeFn, ins: Sequence[int], outs: Sequence[int],
              extras: Sequence[int] | None) -> Callable[[Sequence[np.ndarray | None]], Bound | None]:
    """A task function's ``bind(views)`` for the fast kernel it calls on ``views[ins]``, ``views[outs]`` (and
    ``views[extras]``, when the kernel takes them)."""

    def bind(views: Sequence[np.ndarray | None]) -> Bound | None:
        args = [[views[i] for i in ins], [views[o] for o in outs]]
        if extras is not None:
            args.append([views[i] for i in extras])
        if any(v is None for group in args for v in group):
            return None
        return fast.bind(*args)

    return bind


_RUN: Any = None


def _runner() -> Any:
    global _RUN
    if _RUN is None:
        from nnkiln.runtime.kernels.conv import native_lib

        lib = native_lib()
        _RUN = lib.nk_run_bound if lib is not None else False
    return _RUN or None


class Chain:
    """Consecutive bound units of one queue as one call: ``fn(views)``; ``tasks`` lists the first task of
    each unit (error messages name the unit that failed)."""

    def __init__(self, bounds: Sequence[Bound], first_tasks: Sequence[int], units: Sequence[Any] = (),
                 scratch: np.ndarray | None = None):
        self.tasks = list(first_tasks)
        self.units = list(units)  # the unit functions it replaces (tests, profiling)
        calls: list[tuple[int, np.ndarray, int]] = []
        need = max((b.scratch_elems for b in bounds), default=0)
        if scratch is None or scratch.size < need:
            scratch = aligned_empty(max(need, 1), np.float32)
        self.scratch = scratch
        self._keep: list[object] = [self.scratch]
        for u, b in enumerate(bounds):
            for k, s, *off in b.scratch:
                b.calls[k][1][s] = self.scratch.ctypes.data + 4 * (off[0] if off else 0)
            calls += [(fn, args, u) for fn, args in b.calls]
            self._keep += b.keep
        self._patches = [p for b in bounds for p in b.patches]
        self._clean = [b.clean_failure for b in bounds]
        self.n = len(calls)
        self._unit_of = [u for _, _, u in calls]
        self._args = [args for _, args, _ in calls]
        self._fns = (ctypes.c_void_p * self.n)(*[fn for fn, _, _ in calls])
        self._argp = (ctypes.c_void_p * self.n)(*[a.ctypes.data for a in self._args])
        self._run = _runner()

    def io_specs(self, where: dict[int, tuple[bool, int, int]]) -> None:
        """For ``run_io``: each patched buffer's place in the caller's arrays, ``(is input, index, byte offset)``."""
        self._io_patches = [(arr, k, *where[b][:2], where[b][2] + off) for arr, k, b, off in self._patches]

    def run_io(self, ins: Sequence[np.ndarray], outs: Sequence[np.ndarray], lock: Any, threads: int) -> bool:
        """The whole program given the caller's contiguous arrays: no views built, no Python per unit (a run's Python
        costs tens of microseconds with its code out of cache after a network's worth of kernels). False when a
        call failed (the arena and outputs may hold partial results; the inputs are intact): the caller then runs
        the usual path, which computes everything again and reports the problem."""
        with lock:
            for arr, k, is_input, index, off in self._io_patches:
                arr[k] = (ins if is_input else outs)[index].ctypes.data + off
            return not self._run(self._fns, self._argp, self.n, 1 if blas._multi else threads)

    def __call__(self, views: Sequence[np.ndarray]) -> None:
        for arr, k, b, off in self._patches:
            arr[k] = views[b].ctypes.data + off
        rc = self._run(self._fns, self._argp, self.n, kernel_threads())
        if rc:
            u = self._unit_of[rc - 1]
            if not (self._clean[u] and len(self.units) == len(self.tasks)):
                raise MemoryError(f"native kernel of task {self.tasks[u]} failed (out of memory)")
            for k in range(u, len(self.units)):  # that unit through its own path, which reports the problem
                self.units[k](views)


def _pointer_arrays(root: object) -> list[Any]:
    """The arrays that may hold addresses reachable from ``root``: int64 numpy arrays and ctypes arrays of
    8-byte elements, through lists, tuples, dicts and object attributes."""
    found: list[Any] = []
    seen: set[int] = set()
    stack: list[tuple[object, int]] = [(root, 0)]
    while stack:
        o, depth = stack.pop()
        if (o is None or id(o) in seen or depth > 6 or isinstance(o, (int, float, str, bytes, type, types.ModuleType))
                or callable(o) and not hasattr(o, "bind")):
            continue
        seen.add(id(o))
        if isinstance(o, np.ndarray):
            if o.dtype in (np.int64, np.uint64) and o.ndim == 1 and o.flags.writeable:
                found.append(o)
        elif isinstance(o, ctypes.Array):
            if ctypes.sizeof(o._type_) == 8:
                found.append(o)
        elif isinstance(o, (list, tuple)):
            stack.extend((x, depth + 1) for x in o)
        elif isinstance(o, dict):
            stack.extend((x, depth + 1) for x in o.values())
        elif hasattr(o, "__dict__") or hasattr(o, "__slots__"):
            names = list(getattr(o, "__dict__", {})) + list(getattr(type(o), "__slots__", ()))
            stack.extend((getattr(o, n, None), depth + 1) for n in names)
    return found


def io_patches(b: Bound, probes: Sequence[tuple[int, int, int]]) -> list[tuple[Any, int, int, int]]:
    """Where ``b`` holds an address inside a probe: ``probes`` are ``(buffer, address, bytes)``; returns the
    patches (see ``Bound.patches``)."""
    out: list[tuple[Any, int, int, int]] = []
    for arr in _pointer_arrays([[args for _, args in b.calls], b.keep]):
        values = np.frombuffer(arr, np.uint64) if isinstance(arr, ctypes.Array) else arr.view(np.uint64)
        for buf, lo, size in probes:
            for k in np.flatnonzero((values >= lo) & (values < lo + size)):
                out.append((arr, int(k), buf, int(values[k]) - lo))
    return out


def chain_units(units: list[tuple[Any, int, tuple[int, ...], tuple[int, ...]]],
                static: Sequence[np.ndarray | None], probe_views: Sequence[np.ndarray | None] | None = None
                ) -> list[tuple[Any, int, tuple[int, ...], tuple[int, ...]]]:
    """One queue's units (``(fn, first task, waits, updates)``, a single-queue run: no barriers to honour
    between them) with every run of two or more bound units replaced by one ``Chain``. ``probe_views``:
    ``static`` with probe arrays for the graph's input and output buffers (see the module docstring)."""
    if _runner() is None:
        return units
    probes = [(i, v.ctypes.data, v.nbytes) for i, (v, s) in enumerate(zip(probe_views or (), static))
              if s is None and v is not None and v.nbytes]
    parts: list[Any] = []  # units, and lists of (Bound, unit) to chain
    run: list[tuple[Bound, tuple[Any, int, tuple[int, ...], tuple[int, ...]]]] = []

    def flush() -> None:
        if len(run) >= 2:
            parts.append(list(run))
        else:
            parts.extend(u for _, u in run)
        run.clear()

    for unit in units:
        bind = getattr(unit[0], "bind", None)
        b = bind(static) if bind is not None else None
        if b is None and bind is not None and probes:
            b = bind(probe_views)
            if b is not None:
                b.patches = io_patches(b, probes)
                if not b.patches:  # bound only with the probes, yet none of their addresses found: not safe
                    b = None
        if b is None:
            flush()
            parts.append(unit)
        else:
            run.append((b, unit))
    flush()
    # the chains run one after another: one scratch buffer serves them all
    need = max((b.scratch_elems for p in parts if isinstance(p, list) for b, _ in p), default=0)
    shared = aligned_empty(max(need, 1), np.float32)
    out: list[tuple[Any, int, tuple[int, ...], tuple[int, ...]]] = []
    for p in parts:
        if isinstance(p, list):
            chain = Chain([b for b, _ in p], [u[1] for _, u in p], [u[0] for _, u in p], shared)
            out.append((chain, p[0][1][1], p[0][1][2], tuple(x for _, u in p for x in u[3])))
        else:
            out.append(p)
    return out


__all__ = ["Bound", "Chain", "NativeFn", "adapt", "address", "chain_units", "contiguous_f32", "io_patches", "slots",
           "task_bind"]
