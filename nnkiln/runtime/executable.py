"""``Executable``: a validated blob ready to run (no xDSL).

Memory: the arena is allocated once (``np.empty(arena_bytes, uint8)``) and every arena buffer is a
numpy view into it; constants are read-only views into the blob's bytes; input/output buffers are
views into the caller's (converted) inputs and into freshly allocated outputs, made per run.

Execution: the tasks of each ``(executor, executor_index)`` form a FIFO queue. With one queue the
tasks run inline in blob order (validation proved that order honours every barrier). Otherwise each
queue runs on its own thread; a task waits (``threading.Condition``) until every barrier it waits on
has no pending producer, and decrements each barrier it updates when it finishes. Barrier records
are uses of physical barriers, so a record is never reset during a run (a physical barrier's
reuse is already ordered by the records' dependencies). The first failing task stops all threads
and its exception is raised by ``run``. During a multi-executor run BLAS is limited to one
thread per call (``nnkiln.runtime.blas``): the executors are the parallelism.

``run`` is serialised by a lock: one executable has one arena.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Mapping, Sequence
from typing import Any

import ml_dtypes
import numpy as np

from nnkiln.backend.blob_format import Blob, BufferDesc, IODesc, Memory, decode, encode
from nnkiln.errors import BlobError, InputError, NnkilnError
from nnkiln.kinds import Kind
from nnkiln.runtime.kernels import TaskFn, build_task

_BF16 = np.dtype(ml_dtypes.bfloat16)


def _view(base_u8: np.ndarray, b: BufferDesc) -> np.ndarray:
    """The typed view of ``b`` in a flat uint8 array (bounds already validated)."""
    raw = base_u8[b.offset:b.offset + b.size]
    return raw.view(b.dtype).reshape(b.shape)


def _is_float(dtype: np.dtype) -> bool:
    return dtype.kind == "f" or dtype == _BF16


def convert_input(name: str, value: Any, io: IODesc) -> np.ndarray:
    """Check one input (shape, dtype family, integer range) and convert it to its storage dtype.

    Same rules as ``nnkiln.reference.interpreter.convert_input``: exact shape; booleans (or 0/1
    integers) for bool; integers within the kind's range for integer kinds; floats for float kinds.
    """
    arr = np.asarray(value)
    if arr.shape != io.shape:
        raise InputError(f"input '{name}' has shape {list(arr.shape)}, but the model expects {list(io.shape)}")
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
        if arr.size and (int(arr.min()) < lo or int(arr.max()) > hi):
            raise InputError(f"input '{name}' holds values in [{int(arr.min())}, {int(arr.max())}], outside the "
                             f"range [{lo}, {hi}] of {io.kind.value}")
        return np.ascontiguousarray(arr, dtype=target)
    if not _is_float(src):
        raise InputError(f"input '{name}' has dtype {src}, but the model expects floating point ({io.kind.value})")
    return np.ascontiguousarray(arr, dtype=target)


class Executable:
    """A compiled model: ``run(inputs) -> outputs`` by name; ``save``/``load`` the blob."""

    def __init__(self, blob: Blob, raw: bytes | None = None):
        self.blob = blob
        self._raw = raw
        meta = blob.metadata
        self.input_names = [io.name for io in blob.inputs]
        self.output_names = [io.name for io in blob.outputs]
        self._arena = np.empty(max(blob.arena_bytes, 1), np.uint8)
        consts = np.frombuffer(blob.constants, np.uint8) if len(blob.constants) else np.zeros(0, np.uint8)
        self._static: list[np.ndarray | None] = []
        for b in blob.buffers:
            if b.memory is Memory.ARENA:
                self._static.append(_view(self._arena, b))
            elif b.memory is Memory.CONSTANT:
                v = _view(consts, b)
                if v.flags.writeable:
                    v.flags.writeable = False
                self._static.append(v)
            else:
                self._static.append(None)
        self._io_bufs = [i for i, b in enumerate(blob.buffers) if b.memory in (Memory.INPUT, Memory.OUTPUT)]
        self._fns: list[TaskFn] = []
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
        self._lock = threading.Lock()
        self.stats: dict[str, Any] = {
            "arena_bytes": blob.arena_bytes,
            "arena_lower_bound_bytes": int(meta.get("arena_lower_bound_bytes", 0)),
            "num_tasks": len(blob.tasks),
            "num_barriers": len(blob.barriers),
            "num_physical_barriers": len({b.physical_id for b in blob.barriers}),
            "num_buffers": len(blob.buffers),
            "num_executors": len(self._queues),
            "constants_bytes": len(blob.constants),
            "compile_seconds": float(meta.get("compile_seconds", 0.0)),
            "target": meta.get("target", ""),
            "pipeline": meta.get("pipeline", ""),
        }

    # -- files ------------------------------------------------------------------------------------

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
    def load(cls, path: str | os.PathLike[str] | bytes | bytearray | memoryview) -> Executable:
        """Read and validate a blob (a path or the bytes themselves)."""
        return load_blob(path)

    # -- running ----------------------------------------------------------------------------------

    def run(self, inputs: Mapping[str, Any]) -> dict[str, np.ndarray]:
        """Execute on ``inputs`` (by name); returns the outputs by name (fresh arrays)."""
        missing = [n for n in self.input_names if n not in inputs]
        extra = sorted(n for n in inputs if n not in self.input_names)
        if missing or extra:
            parts = ([f"missing {', '.join(repr(n) for n in missing)}"] if missing else []) + (
                [f"unknown {', '.join(repr(n) for n in extra)}"] if extra else [])
            raise InputError(f"inputs do not match the model: {'; '.join(parts)} "
                             f"(expected: {', '.join(repr(n) for n in self.input_names) or 'none'})")
        in_arrays = [convert_input(io.name, inputs[io.name], io) for io in self.blob.inputs]
        out_arrays = [np.empty(io.shape, BufferDesc(Memory.OUTPUT, io.kind, io.shape, 0, 0).dtype)
                      for io in self.blob.outputs]
        with self._lock:
            views = list(self._static)
            in_u8 = [a.reshape(-1).view(np.uint8) for a in in_arrays]
            out_u8 = [a.reshape(-1).view(np.uint8) for a in out_arrays]
            for i in self._io_bufs:
                b = self.blob.buffers[i]
                views[i] = _view((in_u8 if b.memory is Memory.INPUT else out_u8)[b.index], b)
            self._execute(views)
        return dict(zip(self.output_names, out_arrays))

    def _run_task(self, i: int, views: Sequence[np.ndarray]) -> None:
        try:
            self._fns[i](views)
        except NnkilnError:
            raise
        except Exception as err:
            t = self.blob.tasks[i]
            raise BlobError(f"task {i} ({t.kernel}) failed: {type(err).__name__}: {err}") from err

    def _execute(self, views: list[np.ndarray]) -> None:
        if len(self._queues) <= 1:
            for i in range(len(self._fns)):
                self._run_task(i, views)
            return
        tasks = self.blob.tasks
        pending = [b.producers for b in self.blob.barriers]
        cond = threading.Condition()
        failure: list[BaseException] = []

        def worker(queue: list[int]) -> None:
            for i in queue:
                t = tasks[i]
                with cond:
                    while not failure and any(pending[w] for w in t.waits):
                        cond.wait()
                    if failure:
                        return
                try:
                    self._run_task(i, views)
                except BaseException as err:  # stop every worker, report in the caller
                    with cond:
                        failure.append(err)
                        cond.notify_all()
                    return
                if t.updates:
                    with cond:
                        released = False
                        for u in t.updates:
                            pending[u] -= 1
                            released |= pending[u] == 0
                        if released:
                            cond.notify_all()

        from nnkiln.runtime.blas import single_threaded_blas

        with single_threaded_blas():
            threads = [threading.Thread(target=worker, args=(q,), daemon=True) for q in self._queues[1:]]
            for th in threads:
                th.start()
            worker(self._queues[0])
            for th in threads:
                th.join()
        if failure:
            raise failure[0]


def load_blob(source: str | os.PathLike[str] | bytes | bytearray | memoryview, *,
              max_arena_bytes: int = 1 << 36) -> Executable:
    """Validate a blob (bytes or a file path) and build its ``Executable``; ``BlobError`` if invalid."""
    if isinstance(source, (bytes, bytearray, memoryview)):
        raw = bytes(source)
    else:
        try:
            with open(source, "rb") as f:
                raw = f.read()
        except OSError as err:
            raise InputError(f"{source}: cannot read: {err}") from None
    start = time.perf_counter()
    blob = decode(raw, max_arena_bytes=max_arena_bytes)
    exe = Executable(blob, raw)
    exe.stats["load_seconds"] = time.perf_counter() - start
    return exe


__all__ = ["Executable", "convert_input", "load_blob"]
