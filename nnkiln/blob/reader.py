"""Reading blobs: ``decode`` parses and fully validates a blob (the rules are ``docs/blob-format.md``'s
"Validation"); ``BlobError`` names the first broken rule. A blob that decodes is safe to execute. No xDSL."""

from __future__ import annotations

import json
import struct
import zlib
from typing import Any

from nnkiln.blob.format import (
    _BARRIER,
    _BUFFER,
    _COUNT,
    _HEADER,
    _IO,
    _SECTION,
    _TASK_HEAD,
    ALIGNMENT,
    KIND_OF_CODE,
    MAGIC,
    MAX_DIM,
    MAX_RANK,
    VERSION_MAJOR,
    VERSION_MINOR,
    BarrierDesc,
    Blob,
    BufferDesc,
    IODesc,
    Memory,
    SectionKind,
    TaskDesc,
    _itemsize,
    _num_elements,
    decode_args,
)
from nnkiln.blob.schedule import check_schedule
from nnkiln.errors import BlobError
from nnkiln.kinds import DECLARED_DTYPES, Kind
from nnkiln.limits import max_tensor_bytes

# ----------------------------------------------------------------------------------------------
# Decoding with validation


def _fail(message: str) -> BlobError:
    return BlobError(f"invalid blob: {message}")


class _Reader:
    """Bounds-checked reads of one section."""

    def __init__(self, data: memoryview, name: str):
        self.data = data
        self.name = name
        self.pos = 0

    def take(self, st: struct.Struct, what: str) -> tuple[Any, ...]:
        end = self.pos + st.size
        if end > len(self.data):
            raise _fail(f"{self.name} section is truncated in {what} (needs {end} bytes, has {len(self.data)})")
        values = st.unpack_from(self.data, self.pos)
        self.pos = end
        return values

    def u32s(self, n: int, what: str) -> tuple[int, ...]:
        end = self.pos + 4 * n
        if end > len(self.data):
            raise _fail(f"{self.name} section is truncated in {what} ({n} ids do not fit)")
        values = struct.unpack_from(f"<{n}I", self.data, self.pos)
        self.pos = end
        return values

    def count(self, record_size: int, what: str) -> int:
        n, reserved = self.take(_COUNT, f"the {what} count")
        if reserved != 0:
            raise _fail(f"{self.name} section: reserved field is {reserved}, not 0")
        if n * record_size > len(self.data) - self.pos:
            raise _fail(f"{self.name} section declares {n} {what} but holds {len(self.data) - self.pos} bytes")
        return n


def _string(strings: memoryview, ref: tuple[int, int], what: str) -> str:
    off, length = ref
    if off + length > len(strings):
        raise _fail(f"{what}: string reference [{off}, {off + length}) is outside the strings section "
                    f"({len(strings)} bytes)")
    try:
        return bytes(strings[off:off + length]).decode("utf-8")
    except UnicodeDecodeError:
        raise _fail(f"{what}: string is not valid UTF-8") from None


def _kind(code: int, what: str) -> Kind:
    kind = KIND_OF_CODE.get(code)
    if kind is None:
        raise _fail(f"{what}: dtype code {code} is not in the whitelist {sorted(KIND_OF_CODE)}")
    return kind


def _shape(rank: int, dims: tuple[int, ...], what: str) -> tuple[int, ...]:
    if rank > MAX_RANK:
        raise _fail(f"{what}: rank {rank} exceeds {MAX_RANK}")
    if any(d != 0 for d in dims[rank:]):
        raise _fail(f"{what}: dims beyond rank {rank} are not zero")
    shape = tuple(int(d) for d in dims[:rank])
    if any(d >= MAX_DIM for d in shape):
        raise _fail(f"{what}: dimension in {list(shape)} is >= 2^40")
    return shape


def _check_numbers(meta: dict[str, Any]) -> None:
    """The optional numeric METADATA fields, when present: ``compile_seconds`` a finite number >= 0,
    ``num_physical_barriers`` an integer >= 0 (the runtime and ``inspect`` read them)."""
    import math

    secs = meta.get("compile_seconds", 0.0)
    if not isinstance(secs, (int, float)) or isinstance(secs, bool) or not math.isfinite(secs) or secs < 0:
        raise _fail(f"METADATA compile_seconds = {secs!r} is not a finite number >= 0")
    n = meta.get("num_physical_barriers", 0)
    if not isinstance(n, int) or isinstance(n, bool) or n < 0:
        raise _fail(f"METADATA num_physical_barriers = {n!r} is not a non-negative integer")


def _arenas(meta: dict[str, Any], arena_bytes: int) -> list[int]:
    """The byte size of each arena: METADATA ``arenas`` (``[{"name", "bytes"}]``, names unique, the first of
    ``arena_bytes`` bytes), else one arena of ``arena_bytes``."""
    listed = meta.get("arenas")
    if listed is None:
        return [arena_bytes]
    if (not isinstance(listed, list) or not 1 <= len(listed) <= 256 or any(
            not isinstance(a, dict) or not isinstance(a.get("name"), str) or not isinstance(a.get("bytes"), int)
            or isinstance(a.get("bytes"), bool) or a["bytes"] < 0 for a in listed)
            or len({a["name"] for a in listed}) != len(listed)):
        raise _fail(f"METADATA arenas = {listed!r} is not a list of 1 to 256 {{name (unique), bytes >= 0}}")
    if listed[0]["bytes"] != arena_bytes:
        raise _fail(f"METADATA arenas[0] has {listed[0]['bytes']} bytes but arena_bytes = {arena_bytes}")
    return [a["bytes"] for a in listed]


def decode(data: bytes | bytearray | memoryview, *, max_arena_bytes: int | None = None) -> Blob:
    """Decode and fully validate a blob; ``BlobError`` names the first broken rule. The arena and every graph input
    and output must fit the byte budget (``max_arena_bytes``, default ``nnkiln.limits.max_tensor_bytes()``)."""
    mv = memoryview(data).cast("B") if not isinstance(data, memoryview) else data.cast("B")
    if len(mv) < _HEADER.size:
        raise _fail(f"{len(mv)} bytes is shorter than the {_HEADER.size}-byte header (truncated)")
    magic, major, minor, flags, file_size, nsec, crc, reserved = _HEADER.unpack_from(mv, 0)
    if magic != MAGIC:
        raise _fail(f"bad magic {bytes(magic)!r} (expected {MAGIC!r}): not an nnkiln blob")
    if major != VERSION_MAJOR:
        raise _fail(f"version {major}.{minor} is not supported (this reader reads {VERSION_MAJOR}.x)")
    if minor > VERSION_MINOR:
        raise _fail(f"version {major}.{minor} is newer than this reader ({VERSION_MAJOR}.{VERSION_MINOR})")
    if flags != 0:
        raise _fail(f"unknown flags 0x{flags:x}")
    if file_size != len(mv):
        raise _fail(f"header says {file_size} bytes but the blob has {len(mv)} (truncated or padded)")
    if nsec != len(SectionKind):
        raise _fail(f"{nsec} sections, expected {len(SectionKind)}")
    table_end = _HEADER.size + _SECTION.size * nsec
    if table_end > len(mv):
        raise _fail("the section table is truncated")
    head = bytes(mv[:28])
    table = bytes(mv[_HEADER.size:table_end])
    if zlib.crc32(head + table) & 0xFFFFFFFF != crc:
        raise _fail("header CRC-32 mismatch (the header or section table was modified)")
    if any(bytes(reserved)):
        raise _fail("reserved header bytes are not zero")

    secs: dict[SectionKind, memoryview] = {}
    spans = []
    for i in range(nsec):
        kind_code, res1, off, size, scrc, res2 = _SECTION.unpack_from(mv, _HEADER.size + i * _SECTION.size)
        try:
            kind = SectionKind(kind_code)
        except ValueError:
            raise _fail(f"section {i} has unknown kind {kind_code}") from None
        if kind in secs:
            raise _fail(f"section {kind.name} appears twice")
        if res1 or res2:
            raise _fail(f"section {kind.name}: reserved fields are not zero")
        if off % ALIGNMENT or off < table_end or off + size > len(mv):
            raise _fail(f"section {kind.name} [{off}, {off + size}) is misaligned or outside the blob "
                        f"[{table_end}, {len(mv)})")
        body = mv[off:off + size]
        if zlib.crc32(body) & 0xFFFFFFFF != scrc:
            raise _fail(f"section {kind.name} CRC-32 mismatch (its bytes were modified)")
        secs[kind] = body
        spans.append((off, off + size, kind.name))
    spans.sort()
    for (a0, a1, an), (b0, b1, bn) in zip(spans, spans[1:]):
        if b0 < a1:
            raise _fail(f"sections {an} and {bn} overlap")
    gap_start = table_end
    for a0, a1, _ in (*spans, (len(mv), len(mv), "end")):
        if a0 > gap_start and any(bytes(mv[gap_start:a0])):
            raise _fail(f"padding bytes [{gap_start}, {a0}) are not zero")
        gap_start = max(gap_start, a1)

    strings = secs[SectionKind.STRINGS]
    constants = secs[SectionKind.CONSTANTS]

    # metadata
    try:
        meta = json.loads(bytes(secs[SectionKind.METADATA]).decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as err:
        raise _fail(f"METADATA is not a UTF-8 JSON object: {err}") from None
    if not isinstance(meta, dict):
        raise _fail("METADATA is not a JSON object")
    for key in ("arena_bytes", "arena_lower_bound_bytes"):
        v = meta.get(key)
        if not isinstance(v, int) or isinstance(v, bool) or v < 0:
            raise _fail(f"METADATA {key} = {v!r} is not a non-negative integer")
    for key in ("target", "pipeline"):
        if not isinstance(meta.get(key), str):
            raise _fail(f"METADATA {key} = {meta.get(key)!r} is not a string")
    threads = meta.get("threads")
    if threads is not None and (not isinstance(threads, int) or isinstance(threads, bool) or not 1 <= threads <= 4096):
        raise _fail(f"METADATA threads = {threads!r} is not an integer in 1..4096")
    declared = meta.get("output_dtypes", {})
    if not isinstance(declared, dict) or any(not isinstance(v, str) or v not in DECLARED_DTYPES
                                             for v in declared.values()):
        raise _fail(f"METADATA output_dtypes = {declared!r} is not a map of outputs to {sorted(DECLARED_DTYPES)}")
    ignored = meta.get("ignored_inputs", [])
    if not isinstance(ignored, list) or any(
            not isinstance(e, dict) or not isinstance(e.get("name"), str) or e.get("dtype") not in DECLARED_DTYPES
            or not isinstance(e.get("shape"), list) or len(e["shape"]) > MAX_RANK
            or any(not isinstance(d, int) or isinstance(d, bool) or not 0 <= d < MAX_DIM for d in e["shape"])
            for e in ignored):
        raise _fail(f"METADATA ignored_inputs = {ignored!r} is not a list of {{name, dtype, shape}}")
    empty = meta.get("empty_outputs", [])
    if not isinstance(empty, list) or any(
            not isinstance(e, dict) or not isinstance(e.get("name"), str) or e.get("dtype") not in DECLARED_DTYPES
            or not isinstance(e.get("index"), int) or isinstance(e.get("index"), bool) or not 0 <= e["index"] < 1 << 20
            or not isinstance(e.get("shape"), list) or not 0 < len(e["shape"]) <= MAX_RANK or 0 not in e["shape"]
            or any(not isinstance(d, int) or isinstance(d, bool) or not 0 <= d < MAX_DIM for d in e["shape"])
            for e in empty):
        raise _fail(f"METADATA empty_outputs = {empty!r} is not a list of {{name, dtype, shape with a 0, index}}")
    gemm = meta.get("gemm")
    if gemm is not None and gemm not in ("native", "blas"):
        raise _fail(f"METADATA gemm = {gemm!r} is not \"native\" or \"blas\"")
    _check_numbers(meta)
    arena = meta["arena_bytes"]
    if max_arena_bytes is None:
        max_arena_bytes = max_tensor_bytes()
    arenas = _arenas(meta, arena)
    total = sum(arenas)
    if total > max_arena_bytes:
        raise _fail(f"arena of {total} bytes exceeds the limit of {max_arena_bytes} bytes (NNKILN_MAX_TENSOR_BYTES)")

    # io
    r = _Reader(secs[SectionKind.IO], "IO")
    n_io = r.count(_IO.size, "io descriptors")
    inputs: list[IODesc] = []
    outputs: list[IODesc] = []
    for i in range(n_io):
        so, sl, direction, code, rank, res, buf, size, *dims = r.take(_IO, f"io descriptor {i}")
        what = f"io descriptor {i}"
        if res or direction not in (0, 1):
            raise _fail(f"{what}: bad direction {direction} or reserved byte")
        io = IODesc(_string(strings, (so, sl), what), bool(direction), _kind(code, what), _shape(rank, dims, what), buf)
        if io.size != size:
            raise _fail(f"{what} '{io.name}': size {size} != product(shape) * itemsize = {io.size}")
        if io.size > max_arena_bytes:
            raise _fail(f"{what} '{io.name}': {io.size} bytes exceed the limit of {max_arena_bytes} bytes "
                        "(NNKILN_MAX_TENSOR_BYTES)")
        if direction == 1:
            outputs.append(io)
        else:
            if outputs:
                raise _fail(f"{what}: an input after an output")
            inputs.append(io)
    for group in ([io.name for io in inputs], [io.name for io in outputs]):
        if len(set(group)) != len(group):
            raise _fail(f"duplicate io names in {group}")

    # buffers
    r = _Reader(secs[SectionKind.BUFFERS], "BUFFERS")
    n_buf = r.count(_BUFFER.size, "buffers")
    buffers: list[BufferDesc] = []
    for i in range(n_buf):
        mem, code, rank, res, index, alias, res2, off, size, *dims = r.take(_BUFFER, f"buffer {i}")
        what = f"buffer {i}"
        if res or res2:
            raise _fail(f"{what}: reserved fields are not zero")
        try:
            memory = Memory(mem)
        except ValueError:
            raise _fail(f"{what}: memory code {mem} is unknown") from None
        kind = _kind(code, what)
        shape = _shape(rank, dims, what)
        expect = _num_elements(shape) * _itemsize(kind)
        if expect != size:
            raise _fail(f"{what}: size {size} != product({list(shape)}) * itemsize = {expect}")
        if memory is Memory.ARENA:
            if index >= len(arenas):
                raise _fail(f"{what}: arena index {index} but there are {len(arenas)} arenas (METADATA arenas)")
            limit, where = arenas[index], "the arena" if len(arenas) == 1 else f"arena {index}"
        elif memory is Memory.CONSTANT:
            limit, where = len(constants), "the constants section"
            if index:
                raise _fail(f"{what}: constant buffer has index {index}")
        else:
            group = inputs if memory is Memory.INPUT else outputs
            if index >= len(group):
                raise _fail(f"{what}: {memory.name.lower()} index {index} but there are {len(group)}")
            limit, where = group[index].size, f"{memory.name.lower()} '{group[index].name}'"
        if off + size > limit:
            raise _fail(f"{what}: bytes [{off}, {off + size}) exceed {where} ({limit} bytes)")
        if alias != -1:
            if not 0 <= alias < i:
                raise _fail(f"{what}: alias_of {alias} is not an earlier buffer")
            base = buffers[alias]
            if base.memory != memory or base.index != index or off < base.offset or off + size > base.offset + base.size:
                raise _fail(f"{what}: view bytes [{off}, {off + size}) are not inside base buffer {alias}")
        buffers.append(BufferDesc(memory, kind, shape, off, size, index, alias))
    for io in (*inputs, *outputs):
        what = f"io '{io.name}'"
        if not 0 <= io.buffer < n_buf:
            raise _fail(f"{what}: buffer index {io.buffer} is outside [0, {n_buf})")
        b = buffers[io.buffer]
        pos = (inputs if not io.is_output else outputs).index(io)
        want = Memory.OUTPUT if io.is_output else Memory.INPUT
        if b.memory != want or b.index != pos or b.offset != 0 or b.size != io.size or b.kind != io.kind:
            raise _fail(f"{what}: buffer {io.buffer} does not cover the whole {want.name.lower()} {pos}")

    # barriers
    r = _Reader(secs[SectionKind.BARRIERS], "BARRIERS")
    n_bar = r.count(_BARRIER.size, "barriers")
    barriers = []
    for i in range(n_bar):
        pid, prod, cons, res = r.take(_BARRIER, f"barrier {i}")
        if res:
            raise _fail(f"barrier {i}: reserved field is not zero")
        barriers.append(BarrierDesc(pid, prod, cons))

    # tasks
    r = _Reader(secs[SectionKind.TASKS], "TASKS")
    n_task = r.count(_TASK_HEAD.size, "tasks")
    tasks: list[TaskDesc] = []
    produced = [0] * n_bar
    consumed = [0] * n_bar
    for i in range(n_task):
        es, el, eidx, ks, kl, as_, al, ni, no, nw, nu, res = r.take(_TASK_HEAD, f"task {i}")
        what = f"task {i}"
        if res:
            raise _fail(f"{what}: reserved field is not zero")
        ids = r.u32s(ni + no + nw + nu, what)
        ins, outs = ids[:ni], ids[ni:ni + no]
        waits, updates = ids[ni + no:ni + no + nw], ids[ni + no + nw:]
        executor = _string(strings, (es, el), what)
        kernel = _string(strings, (ks, kl), what)
        try:
            args = decode_args(_string(strings, (as_, al), what))
        except ValueError as err:
            raise _fail(f"{what} ({kernel}): kernel args: {err}") from None
        for j in (*ins, *outs):
            if j >= n_buf:
                raise _fail(f"{what} ({kernel}): operand buffer {j} is outside [0, {n_buf})")
        for j in outs:
            if buffers[j].memory in (Memory.INPUT, Memory.CONSTANT):
                raise _fail(f"{what} ({kernel}): writes buffer {j} in read-only {buffers[j].memory.name} memory")
        for j in (*waits, *updates):
            if j >= n_bar:
                raise _fail(f"{what} ({kernel}): barrier {j} is outside [0, {n_bar})")
        if len(set(waits)) != len(waits) or len(set(updates)) != len(updates) or set(waits) & set(updates):
            raise _fail(f"{what} ({kernel}): repeated barrier in waits {list(waits)} / updates {list(updates)}")
        for p in args["post_ops"]:
            if p.get("operand") is not None and not 0 <= p["operand"] < len(ins):
                raise _fail(f"{what} ({kernel}): post-op operand {p['operand']} is outside its {len(ins)} ins")
        for j in waits:
            consumed[j] += 1
        for j in updates:
            produced[j] += 1
        tasks.append(TaskDesc(executor, eidx, kernel, args, tuple(ins), tuple(outs), tuple(waits), tuple(updates)))
    for i, br in enumerate(barriers):
        if br.producers != produced[i] or br.consumers != consumed[i]:
            raise _fail(f"barrier {i}: counts (producers {br.producers}, consumers {br.consumers}) do not match "
                        f"the tasks (producers {produced[i]}, consumers {consumed[i]})")
        if br.consumers and not br.producers:
            raise _fail(f"barrier {i} has consumers but no producer (they would wait forever)")
    _check_acyclic(tasks, n_bar)
    check_schedule(meta, tasks, barriers, _fail)
    unknown = sorted(set(declared) - {o.name for o in outputs})
    if unknown:
        raise _fail(f"METADATA output_dtypes names {unknown}, which are not outputs")
    return Blob(constants=constants, buffers=buffers, tasks=tasks, barriers=barriers, inputs=inputs,
                outputs=outputs, metadata=meta)


def _check_acyclic(tasks: list[TaskDesc], n_bar: int) -> None:
    """Kahn's algorithm on FIFO + barrier edges: every task can start (no deadlock)."""
    n = len(tasks)
    succ: list[list[int]] = [[] for _ in range(n)]
    indeg = [0] * n
    last: dict[tuple[str, int], int] = {}
    producers: list[list[int]] = [[] for _ in range(n_bar)]
    for i, t in enumerate(tasks):
        for b in t.updates:
            producers[b].append(i)
    for i, t in enumerate(tasks):
        key = (t.executor, t.executor_index)
        if key in last:
            succ[last[key]].append(i)
            indeg[i] += 1
        last[key] = i
        for b in t.waits:
            for p in producers[b]:
                succ[p].append(i)
                indeg[i] += 1
    ready = [i for i in range(n) if indeg[i] == 0]
    done = 0
    while ready:
        i = ready.pop()
        done += 1
        for j in succ[i]:
            indeg[j] -= 1
            if indeg[j] == 0:
                ready.append(j)
    if done != n:
        stuck = [i for i in range(n) if indeg[i] > 0][:5]
        raise _fail(f"the task graph has a cycle (tasks {stuck} can never start: deadlock)")
