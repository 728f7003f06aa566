"""An independent checker of an npu blob, over ``nnkiln inspect --json`` output only (issue 22, "How it will be
checked"). It imports nothing from nnkiln, so a bug in the compiler's own validation cannot hide here.

``check(d)`` returns a list of violation strings (empty: the blob satisfies the issue's contract);
``lower_bound(d)`` and ``makespan_ratio(d)`` give the schedule-independent bound and the benchmark's ratio.

Model of the blob (the issue's contract, item 8):

- A *queue* is one executor instance ``(executor, executor_index)``; its tasks run in blob order.
- A barrier record is complete when all its producer tasks (tasks whose ``updates`` name it) have ended; a task
  whose ``waits`` name it starts only then.
- *happens-before* (hb) is the transitive closure of queue order (consecutive tasks of one queue) and barriers
  (every producer task -> every consumer task). ``hb(a, b)`` means ``a`` ends before ``b`` starts in every run.
- The *meaning* of the program is sequential execution in blob order: the task list is the compiler's
  topological order, and ``describe`` reports producers and consumers in that order. A task that reads a byte
  must see the value of the last task before it in blob order that wrote that byte (its *intended writer*).
- An *access* is a task reading (``inputs``) or writing (``outputs``) a set of byte ranges of one memory instance,
  keyed by ``(memory, io_index)``; a buffer's bytes are ``[offset, offset + size)`` (views are contiguous and
  their offsets absolute, docs/blob-format.md). A DMA task whose args (or attrs) carry a box ``src_offsets`` /
  ``dst_offsets`` / ``shape`` touches only that strided box of its source (``inputs[0]``) / destination
  (``outputs[0]``): the box's bytes are computed exactly (contiguous runs, merged), and only when there are more
  than ``MAX_RUNS`` runs is the box widened to its bounding byte range (conservative for hazards).

The checks, one violation string per failure (the prefix in brackets names the rule):

1. ``[device]`` every task's executor kind is one of ``metadata.executors`` and its index below that count;
   ``cycles`` > 0 and ``start_cycle`` >= 0 are integers; a task's ``waits``/``updates`` agree with the barrier
   records' ``consumer_tasks``/``producer_tasks`` (and their counts).
2. ``[race]`` no two accesses by different tasks to overlapping bytes of one memory, at least one a write, are
   unordered by hb.
3. ``[window]`` no write lands between a buffer's writer and its readers. Precisely: for every read by task ``r``
   of a byte ``x`` and its intended writer ``w`` (last writer of ``x`` before ``r`` in blob order, or none: the
   initial value of an input, a constant or uninitialised memory), ``w`` happens before ``r``, and every other
   task ``v`` (``v != w``, ``v != r``) that writes ``x`` is ordered outside the window ``(w, r)``: ``hb(v, w)`` or
   ``hb(r, v)`` (with no intended writer: ``hb(r, v)``). Applied to every reader of a value, this covers the whole
   window from the write to the last read of that value. Unlike rule 2 it also catches writes that are ordered,
   but on the wrong side (a write the barriers put between ``w`` and ``r`` although blob order puts it after
   ``r``). A task's own write to bytes it reads (in-place kernels) is not a foreign write.
4. ``[memory]`` every buffer lies inside its memory: its memory is a name in ``metadata.memories`` (or ``input``,
   ``output``, ``constant``, which are exempt from the capacity check), ``offset >= 0``, ``size >= 0`` and
   ``offset + size <= capacity`` of that instance; a view (``alias_of``) lies in its base's memory and bytes.
5. ``[nce]`` NCE locality: an NCE task on instance ``k`` reads and writes only buffers in ``CMX<k>`` (every
   operand, constants included: the NCE reaches nothing but its cluster's CMX).
6. ``[barrier]`` every ``physical_id`` is in ``[0, max_physical_barriers)``; two barrier records sharing a
   physical id are ordered: every task of one use (its producers and consumers) happens before every producer of
   the other (the consumers of the previous use are done before the counter is reused, and so are its producers,
   which matters when the previous use has no consumer). A record without producers is complete from the start
   and conflicts with nothing. The uses of an id are checked in the order of their first producer in a
   topological order of hb: neighbours ordered implies every pair ordered (transitivity), and a valid set of
   uses is always in that order.
7. ``[deadlock]`` the queues and barriers, simulated (a task starts when it heads its queue and every barrier it
   waits on has had all its producers finish), run every task to completion.
8. ``[replay]`` with each task's ``cycles``, the earliest-start replay (start = max(end of the previous task of its
   queue, end of every producer of every barrier it waits on)) gives exactly each task's ``start_cycle``, and the
   last end equals ``metadata.simulated_cycles``.
9. ``[accounting]`` (beyond the issue's list) ``metadata.dma_bytes`` is the bytes read by DMA tasks (a box: its
   bytes) and ``metadata.spill_bytes`` those of spills (DMA ``buf.copy`` with ``"spill": true`` in args/attrs),
   when the metadata has them.

The lower bound (``lower_bound``) is the larger of the longest chain of data dependencies weighted by cycles
(task ``r`` depends on task ``w`` when ``w`` is the intended writer of a byte ``r`` reads; a chain's weight is the
sum of its tasks' cycles) and, per executor kind, ceil(total cycles / instance count). It depends only on the
tasks, their cycles and their data, not on queue assignment, order or barriers.
"""

from __future__ import annotations

import bisect
import math
from collections import defaultdict
from dataclasses import dataclass
from typing import Any

EXEMPT_MEMORIES = ("input", "output", "constant")
MAX_RUNS = 4096  # a box with more contiguous runs than this is widened to its bounding range
Key = tuple[str, int]  # (memory name, io index)


@dataclass(frozen=True)
class Access:
    """One task touching ``[lo, hi)`` of memory ``key``; ``write`` when it is an output."""

    task: int
    key: Key
    lo: int
    hi: int
    write: bool
    buffer: int


def _task_dict(t: dict[str, Any]) -> dict[str, Any]:
    """The task's ``args`` merged over its ``attrs`` (the box and the spill flag may be in either)."""
    out: dict[str, Any] = {}
    for field in ("attrs", "args"):
        v = t.get(field)
        if isinstance(v, dict):
            out.update(v)
    return out


def is_spill(t: dict[str, Any]) -> bool:
    """A spill: a DMA ``buf.copy`` marked ``"spill": true`` in its args or attrs."""
    return t.get("executor") == "DMA" and t.get("kernel") == "buf.copy" and _task_dict(t).get("spill") is True


def box_runs(shape: list[int], size: int, offsets: list[int], box: list[int]) -> list[tuple[int, int]]:
    """The byte ranges (relative to the buffer's offset) of the box ``[offsets, offsets + box)`` of a row-major
    buffer of ``shape`` and ``size`` bytes: exact contiguous runs, merged; the bounding range when there are more
    than ``MAX_RUNS``; the whole buffer when the box does not fit the shape (conservative)."""
    n = math.prod(shape)
    if len(shape) != len(offsets) or len(shape) != len(box) or n == 0 or size % n:
        return [(0, size)]
    if any(o < 0 or b < 0 or o + b > s for o, b, s in zip(offsets, box, shape)):
        return [(0, size)]
    if math.prod(box) == 0:
        return []
    item = size // n
    strides = [item] * len(shape)
    for i in range(len(shape) - 2, -1, -1):
        strides[i] = strides[i + 1] * shape[i + 1]
    # the innermost dims the box covers entirely, plus one more, form one contiguous run
    inner = len(shape) - 1
    while inner > 0 and box[inner] == shape[inner]:
        inner -= 1
    run = box[inner] * strides[inner]
    outer = list(range(inner))
    base = sum(o * s for o, s in zip(offsets, strides))
    count = math.prod(box[d] for d in outer)
    if count > MAX_RUNS:
        last = base + sum((box[d] - 1) * strides[d] for d in range(len(shape))) + item
        return [(base, last)]
    starts = [base]
    for d in outer:
        starts = [s + j * strides[d] for s in starts for j in range(box[d])]
    runs: list[tuple[int, int]] = []
    for s in sorted(starts):
        if runs and runs[-1][1] == s:
            runs[-1] = (runs[-1][0], s + run)
        else:
            runs.append((s, s + run))
    return runs


def _box(t: dict[str, Any], side: str) -> tuple[list[int], list[int]] | None:
    """The DMA box of ``side`` (``src`` or ``dst``): (offsets, shape), or None for the whole buffer."""
    if t.get("executor") != "DMA":
        return None
    a = _task_dict(t)
    offs, shape = a.get(f"{side}_offsets"), a.get("shape")
    if isinstance(offs, list) and isinstance(shape, list):
        return [int(v) for v in offs], [int(v) for v in shape]
    return None


def accesses(d: dict[str, Any]) -> list[Access]:
    """Every access of every task (module docstring), in blob order."""
    buffers = d["buffers"]
    out: list[Access] = []
    for t in d["tasks"]:
        for side, ids, write in (("src", t["inputs"], False), ("dst", t["outputs"], True)):
            for pos, b in enumerate(ids):
                buf = buffers[b]
                key = (buf["memory"], buf["io_index"])
                box = _box(t, side) if pos == 0 else None
                runs = box_runs(buf["shape"], buf["size"], *box) if box else [(0, buf["size"])]
                out += [Access(t["index"], key, buf["offset"] + lo, buf["offset"] + hi, write, b)
                        for lo, hi in runs if hi > lo]
    return out


def _queues(tasks: list[dict[str, Any]]) -> dict[tuple[str, int], list[int]]:
    q: dict[tuple[str, int], list[int]] = defaultdict(list)
    for t in tasks:
        q[(t["executor"], t["executor_index"])].append(t["index"])
    return q


def predecessors(d: dict[str, Any]) -> list[set[int]]:
    """Direct hb predecessors of each task: the previous task of its queue and the producers of what it waits on
    (producers from the tasks' own ``updates``, which is what the runtime counts)."""
    tasks = d["tasks"]
    producers: dict[int, list[int]] = defaultdict(list)
    for t in tasks:
        for b in t["updates"]:
            producers[b].append(t["index"])
    preds: list[set[int]] = [set() for _ in tasks]
    for ts in _queues(tasks).values():
        for a, b in zip(ts, ts[1:]):
            preds[b].add(a)
    for t in tasks:
        for b in t["waits"]:
            preds[t["index"]].update(p for p in producers[b] if p != t["index"])
    return preds


def _topo(preds: list[set[int]]) -> list[int] | None:
    """A topological order of the hb graph (None when it has a cycle)."""
    n = len(preds)
    succ: list[list[int]] = [[] for _ in range(n)]
    indeg = [len(p) for p in preds]
    for i, ps in enumerate(preds):
        for p in ps:
            succ[p].append(i)
    ready = [i for i in range(n) if indeg[i] == 0]
    order: list[int] = []
    while ready:
        i = ready.pop()
        order.append(i)
        for j in succ[i]:
            indeg[j] -= 1
            if indeg[j] == 0:
                ready.append(j)
    return order if len(order) == n else None


class HappensBefore:
    """Reachability over the hb graph (bitsets of ancestors; a cycle makes every task on it its own ancestor)."""

    def __init__(self, preds: list[set[int]]) -> None:
        n = len(preds)
        self.anc = [0] * n
        order = _topo(preds)
        self.position: list[int] | None = None  # each task's place in a topological order (None: cyclic)
        if order is not None:
            self.position = [0] * n
            for k, i in enumerate(order):
                self.position[i] = k
            for i in order:
                bits = 0
                for p in preds[i]:
                    bits |= self.anc[p] | (1 << p)
                self.anc[i] = bits
            return
        changed = True  # a cyclic graph (reported as a deadlock): fixed point
        while changed:
            changed = False
            for i in range(n):
                bits = self.anc[i]
                for p in preds[i]:
                    bits |= self.anc[p] | (1 << p)
                if bits != self.anc[i]:
                    self.anc[i], changed = bits, True

    def __call__(self, a: int, b: int) -> bool:
        """``a`` ends before ``b`` starts in every run."""
        return bool(self.anc[b] >> a & 1)


def _check_device(d: dict[str, Any]) -> list[str]:
    bad: list[str] = []
    meta, tasks, barriers = d["metadata"], d["tasks"], d["barriers"]
    counts = {e["kind"]: e["count"] for e in meta.get("executors", [])}
    for t in tasks:
        i = t["index"]
        if t["executor"] not in counts or not 0 <= t["executor_index"] < counts[t["executor"]]:
            bad.append(f"[device] task {i}: executor {t['executor']} {t['executor_index']} is not one of "
                       f"metadata.executors {counts}")
        cyc, start = t.get("cycles"), t.get("start_cycle")
        if not isinstance(cyc, int) or cyc <= 0:
            bad.append(f"[device] task {i}: cycles {cyc!r} is not a positive integer")
        if not isinstance(start, int) or start < 0:
            bad.append(f"[device] task {i}: start_cycle {start!r} is not a non-negative integer")
        for b in (*t["waits"], *t["updates"]):
            if not 0 <= b < len(barriers):
                bad.append(f"[device] task {i}: barrier {b} out of range")
    prods: dict[int, list[int]] = defaultdict(list)
    conss: dict[int, list[int]] = defaultdict(list)
    for t in tasks:
        for b in t["updates"]:
            prods[b].append(t["index"])
        for b in t["waits"]:
            conss[b].append(t["index"])
    for b in barriers:
        j = b["index"]
        prod, cons = sorted(prods[j]), sorted(conss[j])
        if sorted(b["producer_tasks"]) != prod or sorted(b["consumer_tasks"]) != cons:
            bad.append(f"[device] barrier {j}: producer/consumer tasks {b['producer_tasks']}/{b['consumer_tasks']} "
                       f"disagree with the tasks' updates/waits {prod}/{cons}")
        if b.get("producers", len(prod)) != len(prod) or b.get("consumers", len(cons)) != len(cons):
            bad.append(f"[device] barrier {j}: counts {b.get('producers')}/{b.get('consumers')} != "
                       f"{len(prod)}/{len(cons)} tasks")
    return bad


class _Segments:
    """One memory's bytes as sorted disjoint segments ``[lo, hi)`` with the last task that wrote them (None: the
    initial value) and the tasks that read them since."""

    def __init__(self) -> None:
        self.los: list[int] = []
        self.segs: list[list[Any]] = []  # [lo, hi, writer, readers]

    def cover(self, lo: int, hi: int) -> list[list[Any]]:
        """The segments exactly covering ``[lo, hi)`` (split at its ends; gaps filled with fresh segments)."""
        self._split(lo)
        self._split(hi)
        i = bisect.bisect_left(self.los, lo)
        out, cursor = [], lo
        while cursor < hi:
            if i < len(self.segs) and self.segs[i][0] == cursor:
                out.append(self.segs[i])
                cursor = self.segs[i][1]
                i += 1
            else:
                end = self.segs[i][0] if i < len(self.segs) and self.segs[i][0] < hi else hi
                seg = [cursor, end, None, set()]
                self.segs.insert(i, seg)
                self.los.insert(i, cursor)
                out.append(seg)
                cursor = end
                i += 1
        return out

    def _split(self, at: int) -> None:
        i = bisect.bisect_right(self.los, at) - 1
        if i >= 0 and self.segs[i][0] < at < self.segs[i][1]:
            lo, hi, w, rs = self.segs[i]
            self.segs[i] = [lo, at, w, set(rs)]
            self.segs.insert(i + 1, [at, hi, w, set(rs)])
            self.los.insert(i + 1, at)


def _sweep(d: dict[str, Any], acc: list[Access], hb: HappensBefore | None
           ) -> tuple[list[str], list[set[int]]]:
    """Walk the tasks in blob order over every memory's segments (``_Segments``): each read is checked against the
    bytes' last writer, each write against their last writer and every reader since. By induction (happens-before is
    transitive) every earlier access to the same bytes is then ordered too, so this finds every unordered pair
    without comparing all of them. Returns the violations (none without ``hb``) and each task's intended writers
    (the last writer of each byte it reads: its data dependencies)."""
    mems: dict[Key, _Segments] = defaultdict(_Segments)
    deps: list[set[int]] = [set() for _ in d["tasks"]]
    bad: list[str] = []
    reported: set[tuple[int, int]] = set()

    def report(a: int, b: int, what: str, key: Key, lo: int, hi: int, rules: tuple[str, ...]) -> None:
        if (a, b) in reported:
            return
        reported.add((a, b))
        for rule in rules:
            bad.append(f"{rule} tasks {a} and {b}: {what} bytes [{lo}, {hi}) of {key[0]}")

    by_task: dict[int, list[Access]] = defaultdict(list)
    for a in acc:
        by_task[a.task].append(a)
    for t in d["tasks"]:
        i = t["index"]
        mine = by_task.get(i, [])
        for a in mine:
            if a.write:
                continue
            for seg in mems[a.key].cover(a.lo, a.hi):
                w = seg[2]
                if w is not None and w != i:
                    deps[i].add(w)
                    if hb is not None and not hb(w, i):
                        report(w, i, "a read not waiting for the write of", a.key, seg[0], seg[1],
                               ("[race]", "[window]"))
        for a in mine:
            if not a.write:
                continue
            for seg in mems[a.key].cover(a.lo, a.hi):
                w = seg[2]
                if hb is not None and w is not None and w != i and not hb(w, i):
                    report(w, i, "two writes unordered" if not hb(i, w) else "a write ordered before an earlier "
                           "write of", a.key, seg[0], seg[1], ("[race]",) if not hb(i, w) else ("[window]",))
                for r in seg[3]:
                    if hb is not None and r != i and not hb(r, i):
                        rules = ("[window]",) if hb(i, r) else ("[race]", "[window]")
                        report(r, i, "a write that may land before the read of", a.key, seg[0], seg[1], rules)
        for a in mine:
            for seg in mems[a.key].cover(a.lo, a.hi):
                if a.write:
                    seg[2], seg[3] = i, set()
        for a in mine:
            if not a.write:
                for seg in mems[a.key].cover(a.lo, a.hi):
                    if seg[2] != i:
                        seg[3].add(i)
    return bad, deps


def _check_hazards(d: dict[str, Any], acc: list[Access], hb: HappensBefore) -> list[str]:
    return _sweep(d, acc, hb)[0]


def _check_memory(d: dict[str, Any]) -> list[str]:
    bad: list[str] = []
    caps = {m["name"]: m["capacity"] for m in d["metadata"].get("memories", [])}
    buffers = d["buffers"]
    for b in buffers:
        i, mem, lo, size = b["index"], b["memory"], b["offset"], b["size"]
        if mem not in caps and mem not in EXEMPT_MEMORIES:
            bad.append(f"[memory] buffer {i}: memory {mem!r} is not one of metadata.memories {sorted(caps)}")
        elif lo < 0 or size < 0 or (mem in caps and lo + size > caps[mem]):
            bad.append(f"[memory] buffer {i}: bytes [{lo}, {lo + size}) outside {mem} (capacity {caps.get(mem)})")
        base = b["alias_of"]
        if base is not None:
            p = buffers[base]
            if (p["memory"], p["io_index"]) != (mem, b["io_index"]) or lo < p["offset"] or \
                    lo + size > p["offset"] + p["size"]:
                bad.append(f"[memory] view {i} [{lo}, {lo + size}) of {mem} is not inside its base {base} "
                           f"[{p['offset']}, {p['offset'] + p['size']}) of {p['memory']}")
    return bad


def _check_nce(d: dict[str, Any]) -> list[str]:
    bad: list[str] = []
    for t in d["tasks"]:
        if t["executor"] != "NCE":
            continue
        want = f"CMX{t['executor_index']}"
        for b in (*t["inputs"], *t["outputs"]):
            mem = d["buffers"][b]["memory"]
            if mem != want:
                bad.append(f"[nce] NCE task {t['index']} on instance {t['executor_index']} touches buffer {b} in "
                           f"{mem}, not {want}")
    return bad


def _check_barriers(d: dict[str, Any], hb: HappensBefore) -> list[str]:
    bad: list[str] = []
    limit = d["metadata"].get("max_physical_barriers")
    prods: dict[int, list[int]] = defaultdict(list)  # from the tasks' updates/waits: what the runtime counts
    tasks_of: dict[int, list[int]] = defaultdict(list)
    for t in d["tasks"]:
        for b in t["updates"]:
            prods[b].append(t["index"])
            tasks_of[b].append(t["index"])
        for b in t["waits"]:
            tasks_of[b].append(t["index"])
    uses: dict[int, list[int]] = defaultdict(list)
    for b in d["barriers"]:
        pid = b["physical_id"]
        if not isinstance(limit, int) or not 0 <= pid < limit:
            bad.append(f"[barrier] barrier {b['index']}: physical id {pid} not below max_physical_barriers {limit}")
        uses[pid].append(b["index"])

    def before(p: int, q: int) -> bool:
        """Every task of use ``p`` happens before every producer of use ``q``."""
        return all(hb(x, y) for x in tasks_of[p] for y in prods[q])

    def report(pid: int, p: int, q: int) -> None:
        bad.append(f"[barrier] physical id {pid} is shared by barriers {p} and {q}, whose uses overlap (neither's "
                   "tasks all precede the other's producers)")

    for pid, us in uses.items():
        # a use without producers is complete from the start: "before" it is vacuous, it never conflicts
        us = [u for u in us if prods[u]]
        pos = hb.position
        if pos is None:  # cyclic (a deadlock): every pair
            for x, p in enumerate(us):
                for q in us[x + 1:]:
                    if not (before(p, q) or before(q, p)):
                        report(pid, p, q)
            continue
        # Uses in a valid order have strictly increasing first producers in any topological order, and "before" is
        # transitive over uses with producers: checking neighbours in that order is checking every pair.
        us.sort(key=lambda u: (min(pos[t] for t in prods[u]), u))
        for p, q in zip(us, us[1:]):
            if not (before(p, q) or before(q, p)):
                report(pid, p, q)
    return bad


def _simulate(d: dict[str, Any]) -> tuple[list[int] | None, list[str]]:
    """The queues and barriers run to completion: the completion order, or None and the stuck queue heads."""
    tasks = d["tasks"]
    pending: dict[int, int] = defaultdict(int)  # barrier -> producers not yet finished
    for t in tasks:
        for b in t["updates"]:
            pending[b] += 1
    queues = {q: list(reversed(ts)) for q, ts in _queues(tasks).items()}
    done: list[int] = []
    progress = True
    while progress:
        progress = False
        for ts in queues.values():
            while ts and all(pending[b] == 0 for b in tasks[ts[-1]]["waits"]):
                i = ts.pop()
                done.append(i)
                for b in tasks[i]["updates"]:
                    pending[b] -= 1
                progress = True
    if len(done) == len(tasks):
        return done, []
    heads = [f"task {ts[-1]} on {q[0]} {q[1]} waits on barriers "
             f"{[b for b in tasks[ts[-1]]['waits'] if pending[b]]}" for q, ts in queues.items() if ts]
    return None, [f"[deadlock] {len(tasks) - len(done)} tasks never run: " + "; ".join(heads)]


def _replay(d: dict[str, Any], order: list[int]) -> list[int]:
    """Earliest-start replay in the completion order ``order``: the start cycle of each task."""
    tasks = d["tasks"]
    producers: dict[int, list[int]] = defaultdict(list)
    for t in tasks:
        for b in t["updates"]:
            producers[b].append(t["index"])
    prev: dict[int, int] = {}
    for ts in _queues(tasks).values():
        for a, b in zip(ts, ts[1:]):
            prev[b] = a
    start = [0] * len(tasks)
    end = [0] * len(tasks)
    for i in order:
        deps = [prev[i]] if i in prev else []
        deps += [p for b in tasks[i]["waits"] for p in producers[b]]
        start[i] = max((end[p] for p in deps), default=0)
        end[i] = start[i] + tasks[i]["cycles"]
    return start


def _check_replay(d: dict[str, Any], order: list[int]) -> list[str]:
    tasks = d["tasks"]
    if any(not isinstance(t.get("cycles"), int) or t["cycles"] <= 0 for t in tasks):
        return []  # reported by [device]
    start = _replay(d, order)
    bad = [f"[replay] task {t['index']} starts at {t.get('start_cycle')}, the replay says {start[t['index']]}"
           for t in tasks if t.get("start_cycle") != start[t["index"]]]
    makespan = max((s + t["cycles"] for s, t in zip(start, tasks)), default=0)
    if d["metadata"].get("simulated_cycles") != makespan:
        bad.append(f"[replay] simulated_cycles {d['metadata'].get('simulated_cycles')} != the replayed makespan "
                   f"{makespan}")
    return bad


def _read_bytes(d: dict[str, Any], t: dict[str, Any]) -> int:
    """The bytes a task reads: a source box's exact bytes (extent x item size, however many runs it has), else
    its inputs' sizes."""
    buffers = d["buffers"]
    box = _box(t, "src")
    total = 0
    for pos, b in enumerate(t["inputs"]):
        buf = buffers[b]
        n = math.prod(buf["shape"])
        if box and pos == 0 and n:
            total += math.prod(box[1]) * (buf["size"] // n)
        else:
            total += buf["size"]
    return total


def _check_accounting(d: dict[str, Any]) -> list[str]:
    meta, bad = d["metadata"], []
    dma = sum(_read_bytes(d, t) for t in d["tasks"] if t["executor"] == "DMA")
    spill = sum(_read_bytes(d, t) for t in d["tasks"] if is_spill(t))
    for key, got in (("dma_bytes", dma), ("spill_bytes", spill)):
        if key in meta and meta[key] != got:
            bad.append(f"[accounting] metadata.{key} {meta[key]} != {got} bytes read by the "
                       f"{'DMA' if key == 'dma_bytes' else 'spill'} tasks")
    return bad


def check(d: dict[str, Any]) -> list[str]:
    """Every rule of the module docstring over an inspect JSON ``d``; returns the violations (empty: ok)."""
    acc = accesses(d)
    preds = predecessors(d)
    hb = HappensBefore(preds)
    bad = _check_device(d)
    bad += _check_hazards(d, acc, hb)
    bad += _check_memory(d)
    bad += _check_nce(d)
    bad += _check_barriers(d, hb)
    order, stuck = _simulate(d)
    bad += stuck
    if order is not None:
        bad += _check_replay(d, order)
    bad += _check_accounting(d)
    return bad


def data_dependencies(d: dict[str, Any]) -> list[set[int]]:
    """For each task, the tasks whose writes it reads (the intended writers of its bytes: module docstring)."""
    return _sweep(d, accesses(d), None)[1]


def critical_path(d: dict[str, Any]) -> int:
    """The longest chain of data dependencies, weighted by the tasks' cycles (intended writers always come earlier
    in blob order, so blob order is a topological order of this graph)."""
    deps = data_dependencies(d)
    finish = [0] * len(d["tasks"])
    for t in d["tasks"]:
        i = t["index"]
        finish[i] = t["cycles"] + max((finish[w] for w in deps[i]), default=0)
    return max(finish, default=0)


def lower_bound(d: dict[str, Any]) -> int:
    """max(critical path, per executor kind ceil(total cycles / instances)): no schedule of these tasks on this
    device finishes earlier."""
    counts = {e["kind"]: e["count"] for e in d["metadata"].get("executors", [])}
    totals: dict[str, int] = defaultdict(int)
    for t in d["tasks"]:
        totals[t["executor"]] += t["cycles"]
    per_kind = [-(-total // counts.get(kind, 1)) for kind, total in totals.items()]
    return max([critical_path(d), *per_kind])


def makespan_ratio(d: dict[str, Any]) -> float:
    """``metadata.simulated_cycles`` / ``lower_bound(d)`` (the issue's benchmark target: <= 1.2 per model)."""
    bound = lower_bound(d)
    return d["metadata"]["simulated_cycles"] / bound if bound else 1.0


__all__ = ["Access", "HappensBefore", "accesses", "box_runs", "check", "critical_path", "data_dependencies",
           "is_spill", "lower_bound", "makespan_ratio", "predecessors"]
