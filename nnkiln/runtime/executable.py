"""``Executable``: a validated blob ready to run (no xDSL).

Memory: the arena is allocated once (``arena_bytes``, page-aligned: ``nnkiln.alloc``) and every arena buffer
is a numpy view into it; constants are read-only views into the blob's bytes; input/output buffers are
views into the caller's (converted) inputs and into freshly allocated outputs, made per run.

Execution: the runtime executes the blob's tasks as written: one kernel per task (``kernels.build_task``; every
fusion, transpose fold and fused kernel was decided by the compiler and is a task of the blob), so
``stats["kernel_calls"]``, the kernel invocations of one run, equals the number of tasks. The tasks of each
``(executor, executor_index)`` form a FIFO queue. With one queue consecutive tasks whose kernels bind to a fixed
list of C calls run as one ``Chain`` (``kernels.bound``: one C call dispatching them in order, graph inputs and
outputs patched in per run); a program that is one chain runs straight from the caller's arrays
(``Chain.run_io``: no views, no per-task Python). With one queue the units run inline
in blob order (validation proved that order honours every barrier). Otherwise each
queue runs on its own thread; a task waits (``threading.Condition``) until every barrier it waits on
has no pending producer, and decrements each barrier it updates when it finishes. Barrier records
are uses of physical barriers, so a record is never reset during a run (a physical barrier's
reuse is already ordered by the records' dependencies). The first failing task stops all threads
and its exception is raised by ``run``. During a multi-executor run BLAS is limited to one
thread per call (``nnkiln.runtime.blas``): the executors are the parallelism.

Threads: a one-queue executable's kernels (ours and OpenBLAS's) use ``threads`` threads: the ``threads``
given to ``load``, else the blob's metadata ``threads`` (``nnkiln.compile(threads=N)``), else
``blas.kernel_threads()`` when loaded (for a region program loaded by a running kernel: that kernel's
budget); never more than the CPUs this process may use. Building the kernels (GEMM plans) and every run happen
inside ``blas.thread_budget(threads)``.

Seeded schedules: ``run(inputs, schedule_seed=S)`` runs the tasks one at a time, in this thread, each time picking
(``random.Random(S)``) one of the queue heads the barriers allow (every barrier record it waits on has no pending
producer): any order the queues and barriers allow is a legal run, and every one must give the same bits (the
compiler orders every hazard). With one queue there is only one order (the plain run).

Simulation: ``stats`` has ``simulated_cycles``, ``critical_path_cycles``, ``spill_bytes`` and ``dma_bytes``, the
simulator's replay the compiler recorded in the metadata (replayed on load for a blob without them);
``timeline()`` replays the blob (``nnkiln.runtime.simulate``): per executor instance, its tasks' start and end.

``run`` is serialised by a lock: one executable has one arena.

Profiling: ``profile(inputs)`` runs once with every task as its own kernel and returns each task's start and
end (``TaskTime``); it swaps timed units in under the lock, so ``run``'s path records nothing and costs nothing.
"""

from __future__ import annotations

import os
import random
import threading
import time
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

import ml_dtypes
import numpy as np

from nnkiln.alloc import PAGE, aligned_empty
from nnkiln.blob.format import Blob, BufferDesc, ConstantStore, IODesc, Memory, constants_u8
from nnkiln.blob.reader import decode
from nnkiln.blob.writer import encode
from nnkiln.errors import BlobError, InputError, NnkilnError
from nnkiln.kinds import Kind, to_declared, with_empty_outputs, without_ignored_inputs
from nnkiln.limits import check_bytes
from nnkiln.runtime.blas import kernel_threads, thread_budget, usable_cpus
from nnkiln.runtime.direct import DirectRun, direct_run
from nnkiln.runtime.kernels import TaskFn, build_task
from nnkiln.runtime.kernels.bound import Chain, chain_units
from nnkiln.runtime.kernels.gemm import GemmPlan, plan_for, planning
from nnkiln.runtime.simulate import Simulation, Slot, simulate

_BF16 = np.dtype(ml_dtypes.bfloat16)


class TaskTime(NamedTuple):
    """When one task ran in ``Executable.profile``: seconds from the start of the profiled run."""

    task: int
    executor: str
    instance: int
    start_s: float
    end_s: float


def _view(base_u8: np.ndarray, b: BufferDesc) -> np.ndarray:
    """The typed view of ``b`` in a flat uint8 array (bounds already validated)."""
    raw = base_u8[b.offset:b.offset + b.size]
    return raw.view(b.dtype).reshape(b.shape)


def _is_float(dtype: np.dtype) -> bool:
    return dtype.kind == "f" or dtype == _BF16


def _native() -> Any:
    from nnkiln.runtime.kernels.conv import native_lib

    return native_lib()


def convert_input(name: str, value: Any, io: IODesc, target: np.dtype | None = None) -> np.ndarray:
    """Check one input (shape, dtype family, integer range) and convert it to its storage dtype.

    Same rules as ``nnkiln.reference.interpreter.convert_input``: exact shape; booleans (or 0/1
    integers) for bool; integers within the kind's range for integer kinds; floats for float kinds.
    """
    arr = np.asarray(value)
    if arr.shape != io.shape:
        raise InputError(f"input '{name}' has shape {list(arr.shape)}, but the model expects {list(io.shape)}")
    if target is None:
        target = np.dtype(BufferDesc(Memory.INPUT, io.kind, io.shape, 0, 0).dtype)
    src = arr.dtype
    if io.kind is Kind.BOOL:
        if src == np.bool_:
            return np.ascontiguousarray(arr)
        if src.kind in "iu" and bool(np.all((arr == 0) | (arr == 1))):
            return np.ascontiguousarray(arr.astype(np.bool_))
        raise InputError(f"input '{name}' has dtype {src}, but the model expects booleans")
    if io.kind.is_int:
        if src.kind not in "iu":
            raise InputError(f"input '{name}' has dtype {src}, but the model expects integers ({io.kind.value})")
        lo, hi = io.kind.int_range
        if target == np.int32 and src == np.int64 and arr.flags.c_contiguous:  # token ids: one C pass (numpy's
            out = np.empty(arr.shape, np.int32)  # min, max and conversion cost more, out of cache: bench/RESULTS.md)
            lib = _native()
            if lib is not None and not lib.nk_narrow_i64_i32(arr.ctypes.data, out.ctypes.data, arr.size, lo, hi):
                return out
        if arr.size and (int(arr.min()) < lo or int(arr.max()) > hi):
            raise InputError(f"input '{name}' holds values in [{int(arr.min())}, {int(arr.max())}], outside the "
                             f"range [{lo}, {hi}] of {io.kind.value}")
        return np.ascontiguousarray(arr, dtype=target)
    if not _is_float(src):
        raise InputError(f"input '{name}' has dtype {src}, but the model expects floating point ({io.kind.value})")
    return np.ascontiguousarray(arr, dtype=target)


class Executable:
    """A compiled model: ``run(inputs) -> outputs`` by name; ``save``/``load`` the blob."""

    def __init__(self, blob: Blob, raw: bytes | None = None, threads: int | None = None):
        self.blob = blob
        self._raw = raw
        meta = blob.metadata
        self.input_names = [io.name for io in blob.inputs]
        self.output_names = [io.name for io in blob.outputs]
        self._declared = sorted(meta.get("output_dtypes", {}).items())
        self.ignored_inputs = [(e["name"], e["dtype"], tuple(e["shape"])) for e in meta.get("ignored_inputs", [])]
        """Declared inputs the program does not read (zero-size ones): ``run`` accepts them, checks and ignores them."""
        self.empty_outputs = [(e["name"], e["dtype"], tuple(e["shape"]), e["index"])
                              for e in meta.get("empty_outputs", [])]
        """Declared outputs of zero size (name, dtype, shape, position): not computed, ``run`` returns them empty."""
        # a compiled program is held to the budget a loaded blob is (decode): before the arena is allocated
        arenas = blob.arenas
        check_bytes(sum(n for _, n in arenas), "the program's arena", "its planned activations")
        self._arenas = [aligned_empty(max(n, 1), np.uint8, PAGE) for _, n in arenas]  # see nnkiln.alloc
        self._arena = self._arenas[0]
        store = blob.constants if isinstance(blob.constants, ConstantStore) else None
        consts = constants_u8(blob) if store is None else None
        self._static: list[np.ndarray | None] = []
        for b in blob.buffers:
            if b.memory is Memory.ARENA:
                self._static.append(_view(self._arenas[b.index], b))
            elif b.memory is Memory.CONSTANT:
                v = _view(consts, b) if store is None else store.view(b.offset, b.size).view(b.dtype).reshape(b.shape)
                if v.flags.writeable:
                    v.flags.writeable = False
                self._static.append(v)
            else:
                self._static.append(None)
        self._io_bufs = [i for i, b in enumerate(blob.buffers) if b.memory in (Memory.INPUT, Memory.OUTPUT)]
        self._io_specs = [(i, b.memory is Memory.INPUT, b.index, b.offset, b.offset + b.size, b.dtype, b.shape)
                          for i, b in ((i, blob.buffers[i]) for i in self._io_bufs)]
        self._in_specs = [(io, np.dtype(BufferDesc(Memory.INPUT, io.kind, io.shape, 0, 0).dtype)) for io in blob.inputs]
        self._out_specs = [(io.shape, BufferDesc(Memory.OUTPUT, io.kind, io.shape, 0, 0).dtype) for io in blob.outputs]
        self._fns: list[TaskFn] = []
        if threads is not None and threads < 1:
            raise InputError(f"threads must be >= 1, got {threads}")
        self.threads = min(threads or meta.get("threads") or kernel_threads(), usable_cpus())
        with thread_budget(self.threads):
            gemm_plan = self._plan(blob)
        self._lock = threading.Lock()
        self._direct: DirectRun | None = None
        if self._whole is not None:
            outs = [(name, shape, np.dtype(dt)) for name, (shape, dt) in zip(self.output_names, self._out_specs)]
            self._direct = direct_run(self._whole, self._in_specs, outs, self._lock, self.threads)
        self.stats: dict[str, Any] = {
            "arena_bytes": blob.arena_bytes,
            "arena_lower_bound_bytes": int(meta.get("arena_lower_bound_bytes", 0)),
            "num_tasks": len(blob.tasks),
            "num_barriers": len(blob.barriers),
            "num_physical_barriers": len({b.physical_id for b in blob.barriers}),
            "num_buffers": len(blob.buffers),
            "num_executors": len(self._queues),
            "threads": self.threads if len(self._queues) <= 1 else len(self._queues),
            "num_units": sum(len(u) for u in self._units),
            "kernel_calls": sum(len(fn.tasks) if isinstance(fn, Chain) else 1 for q in self._units for fn, _, _, _ in q),
            "native_gemm": gemm_plan.native,
            "constants_bytes": len(blob.constants),
            "compile_seconds": float(meta.get("compile_seconds", 0.0)),
            "target": meta.get("target", ""),
            "pipeline": meta.get("pipeline", ""),
        }
        self._simulation: Simulation | None = None
        keys = ("simulated_cycles", "critical_path_cycles", "spill_bytes", "dma_bytes")
        recorded = {k: meta[k] for k in keys if k in meta}
        if len(recorded) < len(keys):
            recorded = {k: v for k, v in self.simulation().metadata().items() if k in keys}
        self.stats.update(recorded)

    def simulation(self) -> Simulation:
        """The simulator's replay of this blob (``nnkiln.runtime.simulate``; computed once)."""
        if self._simulation is None:
            self._simulation = simulate(self.blob)
        return self._simulation

    def timeline(self) -> dict[tuple[str, int], list[Slot]]:
        """Per executor instance ``(executor, index)``: its tasks with start and end cycles (simulated)."""
        return self.simulation().timeline()

    def _plan(self, blob: Blob) -> GemmPlan:
        """Build every task's kernel, the queues and their units; returns the GEMM plan."""
        gemm_plan = plan_for(blob.tasks, blob.buffers, blob.metadata)
        with planning(gemm_plan):
            for i, t in enumerate(blob.tasks):
                try:
                    self._fns.append(build_task(t, blob.buffers, self._static))
                except NnkilnError:
                    raise
                except Exception as err:  # inconsistent attrs/shapes in a structurally valid blob
                    raise BlobError(f"invalid blob: task {i} ({t.kernel}): {type(err).__name__}: {err}") from None
            queues: dict[tuple[str, int], list[int]] = {}
            for i, t in enumerate(blob.tasks):
                queues.setdefault((t.executor, t.executor_index), []).append(i)
            self._queues = list(queues.values())
            try:
                self._units = self._plan_units()
            except NnkilnError:
                raise
            except Exception as err:  # attrs a native binding cannot take (e.g. a zero point beyond int64)
                raise BlobError(f"invalid blob: binding the tasks: {type(err).__name__}: {err}") from None
        self._native_only = all(isinstance(u[0], Chain) for q in self._units for u in q)
        units = self._units[0] if len(self._units) == 1 else []
        self._whole = units[0][0] if len(units) == 1 and isinstance(units[0][0], Chain) else None
        if self._whole is not None:  # one chain is the whole program: runs go straight to it (Chain.run_io)
            self._whole.io_specs({i: (is_input, index, lo) for i, is_input, index, lo, _, _, _ in self._io_specs})
        return gemm_plan

    # -- files ------------------------------------------------------------------------------------

    @property
    def inputs(self) -> list[tuple[str, tuple[int, ...], np.dtype]]:
        """(name, shape, numpy dtype) of each input the program reads, in order (``ignored_inputs`` lists the others)."""
        return [(io.name, tuple(int(d) for d in io.shape), np.dtype(dt)) for io, dt in self._in_specs]

    @property
    def outputs(self) -> list[tuple[str, tuple[int, ...], np.dtype]]:
        """(name, shape, numpy dtype) of each output as ``run`` returns it (declared dtypes applied), in order."""
        declared = dict(self._declared)
        return [(n, tuple(int(d) for d in shape), np.dtype(declared.get(n, dt)))
                for n, (shape, dt) in zip(self.output_names, self._out_specs)]

    def to_bytes(self) -> bytes:
        if self._raw is None:
            self._raw = encode(self.blob)
        return self._raw

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write the blob to ``path``."""
        try:
            with open(path, "wb") as f:
                f.write(self.to_bytes())
        except OSError as err:
            raise InputError(f"{path}: cannot write: {err}") from None

    @classmethod
    def load(cls, path: str | os.PathLike[str] | bytes | bytearray | memoryview, threads: int | None = None
             ) -> Executable:
        """Read and validate a blob (a path or the bytes themselves); ``threads`` overrides the blob's."""
        return load_blob(path, threads=threads)

    # -- running ----------------------------------------------------------------------------------

    def run(self, inputs: Mapping[str, Any], schedule_seed: int | None = None) -> dict[str, np.ndarray]:
        """Execute on ``inputs`` (by name); returns the outputs by name (fresh arrays), each with the element type
        the model declares (the blob's metadata ``output_dtypes``: e.g. int64 computed in int32, converted exactly).
        ``schedule_seed``: run the tasks one at a time in a random legal order drawn with this seed (module
        docstring)."""
        outs = self._run(without_ignored_inputs(inputs, self.ignored_inputs), schedule_seed)  # type: ignore[arg-type]
        for name, dtype in self._declared:
            outs[name] = to_declared(outs[name], dtype, name)
        return with_empty_outputs(outs, self.empty_outputs)

    def _run(self, inputs: Mapping[str, Any], seed: int | None = None) -> dict[str, np.ndarray]:
        if self._direct is not None:  # one chain, arrays that need no conversion: see runtime.direct
            outs = self._direct(inputs)
            if outs is not None:
                return outs
        missing = [n for n in self.input_names if n not in inputs]
        extra = sorted((n for n in inputs if n not in self.input_names), key=repr)  # names of any type
        if missing or extra:
            parts = ([f"missing {', '.join(repr(n) for n in missing)}"] if missing else []) + (
                [f"unknown {', '.join(repr(n) for n in extra)}"] if extra else [])
            raise InputError(f"inputs do not match the model: {'; '.join(parts)} "
                             f"(expected: {', '.join(repr(n) for n in self.input_names) or 'none'})")
        in_arrays = [convert_input(io.name, inputs[io.name], io, dt) for io, dt in self._in_specs]
        out_arrays = [aligned_empty(shape, dtype) for shape, dtype in self._out_specs]
        self._run_contiguous(in_arrays, out_arrays, seed)
        return dict(zip(self.output_names, out_arrays))

    def run_arrays(self, inputs: Sequence[np.ndarray], outputs: Sequence[np.ndarray]) -> None:
        """Execute on ``inputs`` in blob order, writing into ``outputs`` (blob order); the arrays must have the
        blob's dtypes and shapes (no conversion: used by control-flow kernels to call region programs)."""
        if len(inputs) != len(self._in_specs) or len(outputs) != len(self._out_specs):
            raise BlobError(f"program called with {len(inputs)} inputs and {len(outputs)} outputs; it has "
                            f"{len(self._in_specs)} and {len(self._out_specs)}")
        ins = [np.ascontiguousarray(a) for a in inputs]
        direct = [o.flags.c_contiguous for o in outputs]
        outs = [o if d else np.empty(o.shape, o.dtype) for o, d in zip(outputs, direct)]
        self._run_contiguous(ins, outs)
        for o, t, d in zip(outputs, outs, direct):
            if not d:
                np.copyto(o, t)

    def _run_contiguous(self, in_arrays: Sequence[np.ndarray], out_arrays: Sequence[np.ndarray],
                        seed: int | None = None) -> None:
        whole = self._whole
        if whole is not None and whole.run_io(in_arrays, out_arrays, self._lock, self.threads):
            return
        with self._lock:
            views = list(self._static)
            in_u8 = [a.reshape(-1).view(np.uint8) for a in in_arrays]
            out_u8 = [a.reshape(-1).view(np.uint8) for a in out_arrays]
            for i, is_input, index, lo, hi, dtype, shape in self._io_specs:
                views[i] = (in_u8 if is_input else out_u8)[index][lo:hi].view(dtype).reshape(shape)
            self._execute(views, seed)

    def profile(self, inputs: Mapping[str, Any]) -> list[TaskTime]:
        """Run once on ``inputs`` task by task and return when each task ran: one ``TaskTime`` per task, in the
        order they finished, times in seconds from the start of the run (``time.perf_counter``).

        For reports (``nnkiln report``), not for speed: every task runs as its own kernel (no ``Chain``, no direct
        run), so a one-queue program is slower than under ``run``; queues and barriers behave as in ``run``.
        ``run`` itself is untouched (nothing is recorded there). Tasks of a control-flow kernel's region programs
        are timed as part of that kernel's task."""
        ins = without_ignored_inputs(inputs, self.ignored_inputs)  # type: ignore[arg-type]
        missing = [n for n in self.input_names if n not in ins]
        if missing:
            raise InputError(f"inputs do not match the model: missing {', '.join(repr(n) for n in missing)}")
        in_u8 = [convert_input(io.name, ins[io.name], io, dt).reshape(-1).view(np.uint8) for io, dt in self._in_specs]
        out_u8 = [aligned_empty(shape, dtype).reshape(-1).view(np.uint8) for shape, dtype in self._out_specs]
        tasks = self.blob.tasks
        record: list[tuple[int, float, float]] = []

        def timed(fn: TaskFn, i: int) -> TaskFn:
            def call(views: Sequence[np.ndarray]) -> None:
                start = time.perf_counter()
                fn(views)
                record.append((i, start, time.perf_counter()))
            return call

        with self._lock:
            views = list(self._static)
            for i, is_input, index, lo, hi, dtype, shape in self._io_specs:
                views[i] = (in_u8 if is_input else out_u8)[index][lo:hi].view(dtype).reshape(shape)
            saved = self._units, self._native_only
            self._units = [[(timed(self._fns[i], i), i, tasks[i].waits, tasks[i].updates) for i in q]
                           for q in self._queues]
            self._native_only = False
            try:
                t0 = time.perf_counter()
                with thread_budget(self.threads):
                    self._execute(views)
            finally:
                self._units, self._native_only = saved
        return [TaskTime(i, tasks[i].executor, tasks[i].executor_index, s - t0, e - t0) for i, s, e in record]

    def _plan_units(self) -> list[list[tuple[TaskFn, int, tuple[int, ...], tuple[int, ...]]]]:
        """Per queue, the units to run in order: ``(fn, task index, waits, updates)``, one per task (the blob's tasks
        are what runs: every fusion was decided by the compiler); with one queue, consecutive tasks whose kernels
        bind to native calls run as one ``Chain`` (``kernels.bound``)."""
        tasks = self.blob.tasks
        single = len(self._queues) <= 1
        units: list[list[tuple[TaskFn, int, tuple[int, ...], tuple[int, ...]]]] = []
        for q in self._queues:
            us = [(self._fns[i], i, tasks[i].waits, tasks[i].updates) for i in q]
            units.append(chain_units(us, self._static, self._probe_views()) if single else us)
        return units

    def _probe_views(self) -> list[np.ndarray | None] | None:
        """``_static`` with the graph's input and output buffers viewed in arrays of their own, laid out as a run
        lays out the caller's arrays (``kernels.bound``: units touching them are bound through these); None when
        they would be absurdly large (their pages are never touched, but the address space is reserved)."""
        sizes = ([int(np.prod(io.shape)) * dt.itemsize for io, dt in self._in_specs],
                 [int(np.prod(shape)) * np.dtype(dt).itemsize for shape, dt in self._out_specs])
        if sum(sizes[0]) + sum(sizes[1]) > _MAX_PROBE_BYTES:
            return None
        try:
            regions, outs = ([aligned_empty(max(1, n), np.uint8) for n in group] for group in sizes)
        except MemoryError:
            return None
        self._probes = (regions, outs)  # kept alive with the executable
        views = list(self._static)
        for i, is_input, index, lo, hi, dtype, shape in self._io_specs:
            views[i] = (regions if is_input else outs)[index][lo:hi].view(dtype).reshape(shape)
        return views

    def _failed(self, i: int, err: Exception) -> BlobError:
        t = self.blob.tasks[i]
        return BlobError(f"task {i} ({t.kernel}) failed: {type(err).__name__}: {err}")

    def _run_unit(self, fn: TaskFn, i: int, views: Sequence[np.ndarray]) -> None:
        try:
            fn(views)
        except NnkilnError:
            raise
        except Exception as err:
            raise self._failed(i, err) from err

    def _execute_seeded(self, views: list[np.ndarray], seed: int) -> None:
        """One task at a time, each a random queue head the barriers allow (module docstring)."""
        from nnkiln.runtime.blas import single_threaded_blas

        rng = random.Random(seed)
        pending = [b.producers for b in self.blob.barriers]
        heads = [0] * len(self._units)
        with single_threaded_blas():
            while True:
                ready = [q for q, us in enumerate(self._units)
                         if heads[q] < len(us) and not any(pending[w] for w in us[heads[q]][2])]
                if not ready:
                    break
                q = rng.choice(ready)
                fn, i, _, updates = self._units[q][heads[q]]
                self._run_unit(fn, i, views)
                for u in updates:
                    pending[u] -= 1
                heads[q] += 1
        if any(h < len(us) for h, us in zip(heads, self._units)):
            raise BlobError("a seeded run stopped with tasks left (the task graph deadlocks)")

    def _execute(self, views: list[np.ndarray], seed: int | None = None) -> None:
        if seed is not None and len(self._queues) > 1:
            self._execute_seeded(views, seed)
            return
        if len(self._queues) <= 1:
            i = 0
            try:
                with thread_budget(self.threads, blas=not self._native_only):
                    for fn, i, _, _ in (self._units[0] if self._units else ()):
                        fn(views)
            except NnkilnError:
                raise
            except Exception as err:
                raise self._failed(i, err) from err
            return
        pending = [b.producers for b in self.blob.barriers]
        cond = threading.Condition()
        failure: list[BaseException] = []

        def worker(queue: list[tuple[TaskFn, int, tuple[int, ...], tuple[int, ...]]]) -> None:
            for fn, i, waits, updates in queue:
                if waits:
                    with cond:
                        while not failure and any(pending[w] for w in waits):
                            cond.wait()
                        if failure:
                            return
                elif failure:
                    return
                try:
                    self._run_unit(fn, i, views)
                except BaseException as err:  # stop every worker, report in the caller
                    with cond:
                        failure.append(err)
                        cond.notify_all()
                    return
                if updates:
                    with cond:
                        released = False
                        for u in updates:
                            pending[u] -= 1
                            released |= pending[u] == 0
                        if released:
                            cond.notify_all()

        from nnkiln.runtime.blas import single_threaded_blas

        with single_threaded_blas():
            threads = [threading.Thread(target=worker, args=(q,), daemon=True) for q in self._units[1:]]
            for th in threads:
                th.start()
            try:
                worker(self._units[0])
            except BaseException as err:  # Ctrl-C while this thread waited on a barrier: stop the workers too
                with cond:
                    failure.append(err)
                    cond.notify_all()
            for th in threads:
                th.join()
        if failure:
            raise failure[0]


_MAX_PROBE_BYTES = 1 << 32
"""Graph inputs and outputs larger than this in total are not bound into chains (``Executable._probe_views``)."""


def load_blob(source: str | os.PathLike[str] | bytes | bytearray | memoryview, *,
              max_arena_bytes: int | None = None, threads: int | None = None) -> Executable:
    """Validate a blob (bytes or a file path) and build its ``Executable`` (``threads``: see the module
    docstring); ``BlobError`` if invalid."""
    if isinstance(source, (bytes, bytearray, memoryview)):
        raw = bytes(source)
    else:
        try:
            with open(source, "rb") as f:
                raw = f.read()
        except OSError as err:
            raise InputError(f"{source}: cannot read: {err}") from None
    start = time.perf_counter()
    try:
        blob = decode(raw, max_arena_bytes=max_arena_bytes)
        exe = Executable(blob, raw, threads)
    except NnkilnError as err:  # name the file
        if isinstance(source, (bytes, bytearray, memoryview)):
            raise
        raise type(err)(f"{os.fspath(source)}: {err}") from None
    exe.stats["load_seconds"] = time.perf_counter() - start
    return exe


__all__ = ["Executable", "TaskTime", "convert_input", "load_blob"]
