"""The feasible memory scheduler (architecture spec §4.1.2.4): an event-driven list scheduler over several executor
kinds that never lets a CMX hold more than it can.

No xDSL: the pass ``feasible-allocation`` describes its tasks as ``Job``s and applies the ``Schedule``.

Input: jobs in program order (a topological order), each with its dependencies, cycles, executor pool (kind) and
optionally a pinned instance (an NCE tile runs on its cluster), and the scratchpad buffers (``Buf``: memory
instance, size, the jobs using them). A job that first writes a scratchpad buffer is a *data* job (a DMA filling
it); every other job using one is a *compute* job (the NCE tile, or a DMA draining it).

Algorithm (the spec's "ready lists" with time):
- priority = the longest path of cycles from a job to the end (bottom level); ties by program order;
- a compute job is *admitted* when all the scratchpad buffers it uses can be placed at once (first fit in the free
  ranges of their memory): "data operations will only be scheduled when required by the corresponding compute
  operation", so CMX never fills with data whose consumer cannot run. Admission tries the ready candidates (their
  data jobs' own dependencies done) by priority, every time time advances;
- at each event time, every free executor instance takes the highest-priority job that is ready (dependencies
  finished; a data or compute job only once its compute job is admitted; a pinned job only on its instance);
- when jobs finish, the buffers whose users have all finished free their bytes (the range becomes available at
  that time); time advances to the next finish.
- at most ``max_groups`` groups are admitted and unfinished at once (barrier pressure), unless the groups in
  flight wait for one that is not (a store ordered after a load of a later tile): then one more is admitted;
- a group is admitted only when every other dependency of its compute job has started or has its own group
  admitted (a resident input's producer): an admitted group never waits for a group that cannot be admitted;
- spills: when nothing runs and nothing can start (the CMX is full of resident buffers, or fragmented), the
  resident buffer needed last (fragmented: any that stands in the way) whose writer has finished is moved out by a
  spill DMA; a pull-back DMA, waiting for the spill and for the first reader's other dependencies ("right before
  its first user"), brings it back into a new buffer of the reader's group (or a group of its own when that group is
  already admitted); its remaining readers read the copy. A pulled-back copy is never spilled again, so spilling
  ends; when no buffer can move, ``ScheduleError`` (the smallest waiting group does not fit an empty CMX: a
  compiler bug, ``cmx-tiling`` sizes every group to fit).

Output: per job its instance, start and end cycle; per buffer its offset; and the extra dependencies that make
reusing bytes safe (a buffer's writers depend on every user of each earlier buffer whose bytes it takes: those
users have finished by then, so the dependency never delays the schedule). The order by start time (ties by
program order) is a topological order of all dependencies, the extra ones included.

Without ``capacity`` (``memory=False``) the same scheduler plans executor time only (``wrap-into-async-regions``).
"""

from __future__ import annotations

import heapq
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field


class ScheduleError(RuntimeError):
    """The scheduler cannot place a group of buffers even in an empty memory."""


@dataclass
class Job:
    """One task: ``deps`` (earlier job indices), ``cycles`` (> 0), ``pool`` (executor kind), ``pin`` (an instance,
    or ``None``: any)."""

    deps: set[int]
    cycles: int
    pool: str
    pin: int | None = None


@dataclass
class Buf:
    """A scratchpad buffer: memory instance name, size in bytes (aligned), ``users`` (job indices, ascending)."""

    memory: str
    size: int
    users: list[int]
    offset: int = -1


@dataclass
class Schedule:
    """The result: ``order`` (job indices by start), ``instance``/``start``/``end`` per job, ``extra_deps`` per job
    (indices of jobs it must now also wait for), the buffers with their offsets, each memory's peak."""

    order: list[int]
    instance: list[int]
    start: list[int]
    end: list[int]
    extra_deps: dict[int, set[int]] = field(default_factory=dict)
    peak: dict[str, int] = field(default_factory=dict)
    jobs: list[Job] = field(default_factory=list)
    """Every job, the spill and pull-back DMAs the scheduler added included (indices from ``len(input jobs)``)."""
    spills: list[Spill] = field(default_factory=list)
    bufs: list[Buf] = field(default_factory=list)
    """Every scratchpad buffer with its offset, the pulled-back copies included."""


@dataclass
class Spill:
    """Buffer ``buffer`` moved out to DDR by job ``spill`` and back, as buffer ``restored``, by job ``pull``: the jobs
    in ``readers`` read ``restored`` instead."""

    buffer: int
    spill: int
    pull: int
    restored: int
    readers: list[int]


class _Space:
    """The free byte ranges of one memory: first fit; each freed range remembers the buffers that used it."""

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self.free: list[tuple[int, int]] = [(0, capacity)]
        self.peak = 0

    def fits(self, sizes: Sequence[int]) -> list[int] | None:
        """Offsets for ``sizes`` placed one after another, first fit (largest first), or ``None``."""
        free = list(self.free)
        offsets = [0] * len(sizes)
        for i in sorted(range(len(sizes)), key=lambda i: -sizes[i]):
            for k, (lo, hi) in enumerate(free):
                if hi - lo >= sizes[i]:
                    offsets[i] = lo
                    free[k] = (lo + sizes[i], hi)
                    break
            else:
                return None
        return offsets

    def take(self, lo: int, size: int) -> None:
        for k, (a, b) in enumerate(self.free):
            if a <= lo and lo + size <= b:
                self.free[k:k + 1] = [r for r in ((a, lo), (lo + size, b)) if r[1] > r[0]]
                self.peak = max(self.peak, lo + size)
                return
        raise AssertionError("taking bytes that are not free")

    def give(self, lo: int, size: int) -> None:
        self.free.append((lo, lo + size))
        self.free.sort()
        merged: list[tuple[int, int]] = []
        for a, b in self.free:
            if merged and merged[-1][1] == a:
                merged[-1] = (merged[-1][0], b)
            else:
                merged.append((a, b))
        self.free = merged


def _groups(jobs: Sequence[Job], bufs: Sequence[Buf]) -> tuple[dict[int, list[int]], list[set[int]]]:
    """The groups: compute job -> its scratchpad buffers, and per job the groups whose buffers it uses (it may run
    only once they are all admitted: a tile's own group, and the group of a resident input it reads). A buffer's
    compute job is its first user that is not a DMA (the NCE tile), else its last user."""
    group_bufs: dict[int, list[int]] = {}
    needs: list[set[int]] = [set() for _ in jobs]
    for b, buf in enumerate(bufs):
        if not buf.users:
            continue
        owner = next((u for u in buf.users if jobs[u].pool != "DMA"), buf.users[-1])
        group_bufs.setdefault(owner, []).append(b)
        for u in buf.users:
            needs[u].add(owner)
    return group_bufs, needs


def schedule(jobs: Sequence[Job], pools: dict[str, int], bufs: Sequence[Buf] = (),
             capacity: dict[str, int] | None = None, max_groups: int = 0,
             dma_cycles: Callable[[int], int] | None = None) -> Schedule:
    """Schedule ``jobs`` on ``pools`` (kind -> instance count) keeping ``bufs`` inside ``capacity``, with at most
    ``max_groups`` groups admitted and unfinished at once (0: no limit; module docstring). ``dma_cycles`` (bytes ->
    cycles) prices the spill and pull-back DMAs; without it the scheduler never spills."""
    jobs = list(jobs)
    bufs = list(bufs)
    n = len(jobs)
    users: list[list[int]] = [[] for _ in jobs]
    for i, j in enumerate(jobs):
        for d in j.deps:
            users[d].append(i)
    prio = [0] * n
    for i in reversed(range(n)):
        prio[i] = jobs[i].cycles + max((prio[u] for u in users[i]), default=0)
    group_bufs, needs = _groups(jobs, bufs)
    job_bufs: list[list[int]] = [[] for _ in jobs]
    for b, buf in enumerate(bufs):
        for u in buf.users:
            job_bufs[u].append(b)
    # a group may be admitted once every data job of it (the first user of each of its buffers, if not the
    # compute job itself) has its dependencies finished
    loads = {g: sorted({bufs[b].users[0] for b in bs} - {g}) for g, bs in group_bufs.items()}
    pending_loads = {g: len(ls) for g, ls in loads.items()}
    load_of: dict[int, list[int]] = {}
    for g, ls in loads.items():
        for j in ls:
            load_of.setdefault(j, []).append(g)
    # ... and every other dependency of its compute job has started or has its own group admitted (a resident
    # input's producer among them): an admitted group never holds bytes while it waits for a group that cannot be
    # admitted, yet loads its data while its producer runs
    ext_of: dict[int, list[int]] = {}
    ext_left: dict[int, set[int]] = {}
    for g, ls in loads.items():
        ext_left[g] = jobs[g].deps - set(ls)
        pending_loads[g] += len(ext_left[g])
        for d in ext_left[g]:
            ext_of.setdefault(d, []).append(g)

    def ext_done(d: int) -> None:
        """Dependency ``d`` of some groups' compute jobs will run to its end (started, or its group admitted)."""
        nonlocal changed
        for g in ext_of.get(d, ()):
            if d in ext_left[g]:
                ext_left[g].discard(d)
                pending_loads[g] -= 1
                if pending_loads[g] == 0 and g not in admitted:
                    candidates.add(g)
                    changed = True
    spaces = {m: _Space(c) for m, c in (capacity or {}).items()}
    remaining_users = [len(buf.users) for buf in bufs]
    freed: dict[str, list[tuple[int, int, list[int]]]] = {m: [] for m in spaces}  # (lo, hi, users of old buffers)
    admitted: set[int] = set() if spaces else set(group_bufs)
    members = {g: {u for b in bs for u in bufs[b].users if u == g or jobs[u].pool == "DMA"}
               for g, bs in group_bufs.items()}
    unfinished = {g: len(ms) for g, ms in members.items()}
    group_ends: dict[int, list[int]] = {}
    for g, ms in members.items():
        for u in ms:
            group_ends.setdefault(u, []).append(g)
    in_flight = 0
    changed = True  # memory freed or a group finished since admission last failed
    candidates: set[int] = set()
    waiting = [len(j.deps) for j in jobs]
    instance, start, end = [0] * n, [0] * n, [0] * n
    extra: dict[int, set[int]] = {}
    busy = {p: [False] * c for p, c in pools.items()}
    running: list[tuple[int, int]] = []
    order: list[int] = []
    now = 0

    runnable: dict[tuple[str, int | None], list[tuple[int, int]]] = defaultdict(list)  # (pool, pin) -> heap
    blocked: dict[int, list[int]] = defaultdict(list)  # group -> its ready tasks waiting for its admission

    def release(i: int) -> None:
        heapq.heappush(runnable[(jobs[i].pool, jobs[i].pin)], (-prio[i], i))

    def try_release(i: int) -> None:
        """Run ``i`` once every group whose buffers it uses is admitted (else wait for the first missing one)."""
        missing = needs[i] - admitted
        if missing:
            blocked[min(missing)].append(i)
        else:
            release(i)

    def became_ready(i: int) -> None:
        try_release(i)
        for g in load_of.get(i, ()):
            pending_loads[g] -= 1
            if pending_loads[g] == 0 and g not in admitted:
                candidates.add(g)
                nonlocal changed
                changed = True

    def admit(g: int) -> bool:
        by_mem: dict[str, list[int]] = {}
        for b in group_bufs[g]:
            by_mem.setdefault(bufs[b].memory, []).append(b)
        placed: dict[int, int] = {}
        for m, bs in by_mem.items():
            offs = spaces[m].fits([bufs[b].size for b in bs]) if m in spaces else [0] * len(bs)
            if offs is None:
                return False
            placed.update(zip(bs, offs))
        for b, off in placed.items():
            buf = bufs[b]
            buf.offset = off
            if buf.memory in spaces:
                live.add(b)
                spaces[buf.memory].take(off, buf.size)
                hi_b = off + buf.size
                before = {u for lo, hi, us in freed[buf.memory] if lo < hi_b and off < hi for u in us}
                if before:
                    extra.setdefault(buf.users[0], set()).update(before)
                # a range now taken whole is covered by this buffer's writer's new dependencies (transitively)
                freed[buf.memory] = [e for e in freed[buf.memory] if not (off <= e[0] and e[1] <= hi_b)]
        admitted.add(g)
        for i in blocked.pop(g, ()):
            try_release(i)
        ext_done(g)
        nonlocal in_flight
        in_flight += 1
        return True

    live: set[int] = set()  # buffers holding bytes of a CMX now
    n_bufs = len(bufs)
    spilled: set[int] = set()
    spills: list[Spill] = []
    finished: set[int] = set()

    def spill_one() -> bool:
        """Nothing runs and nothing can start: move the resident buffer needed last out to DDR (a spill DMA) and
        give its remaining readers a pulled-back copy that their group allocates when admitted."""
        # nothing runs, so every user is finished or not started; a buffer whose writer is done and that still has
        # readers can go (full CMX: the one needed last; fragmented CMX: whichever stands in the way)
        # (a pulled-back copy is never spilled again: each buffer goes out at most once, so spilling ends)
        movable = [b for b in live if b < n_bufs and b not in spilled and bufs[b].users[0] in finished
                   and any(u not in finished for u in bufs[b].users)]
        if not movable:
            return False
        b = min(movable, key=lambda b: (max(prio[u] for u in bufs[b].users[1:]), -bufs[b].size, b))
        spilled.add(b)
        buf = bufs[b]
        readers = [u for u in buf.users if u not in finished]
        cycles = max(1, dma_cycles(buf.size))  # type: ignore[misc]
        s_job, p_job = len(jobs), len(jobs) + 1
        # the pull-back waits for the spill and for everything else its readers wait for ("placed right before its
        # first user", §4.1.2.4): it takes its bytes back only when the readers can run
        first = next((u for u in readers if jobs[u].pool != "DMA"), readers[0])
        own = set(loads.get(first, ())) | {x for x in range(n, len(jobs))}  # its group's loads, other pull-backs
        others = {d for d in jobs[first].deps if d not in finished and d not in own}
        jobs.append(Job({u for u in buf.users if u in finished}, cycles, "DMA"))
        jobs.append(Job({s_job, *others}, cycles, "DMA"))
        restored = len(bufs)
        bufs.append(Buf(buf.memory, buf.size, [p_job, *readers]))
        buf.users = [u for u in buf.users if u in finished] + [s_job]
        top = max(prio[u] for u in readers)
        prio.extend((top + 2 * cycles, top + cycles))
        for arr in (instance, start, end):
            arr.extend((0, 0))
        users.extend(([p_job], list(readers)))
        waiting.extend((0, 1 + len(others)))
        for d in others:
            users[d].append(p_job)
        for u in readers:
            jobs[u].deps.add(p_job)
            waiting[u] += 1
            job_bufs[u] = [restored if x == b else x for x in job_bufs[u]]
        job_bufs.extend(([b], [restored]))
        remaining_users[b] = 1
        remaining_users.append(len(readers) + 1)
        # the pulled-back copy joins the group of its first compute reader (which the tiling sized with this operand
        # in it) while that group waits for admission; else it is a group of its own, the pull-back's
        owner = next((u for u in readers if jobs[u].pool != "DMA"), readers[-1])
        if owner in admitted:
            owner = p_job
        needs.extend((set(), {owner}))
        for u in readers:
            needs[u].add(owner)
        if owner not in members:
            members[owner], unfinished[owner] = {owner}, 1
            group_ends.setdefault(owner, []).append(owner)
        group_bufs.setdefault(owner, []).append(restored)
        if owner != p_job:
            members[owner].add(p_job)
            unfinished[owner] += 1
            group_ends.setdefault(p_job, []).append(owner)
            pending_loads[owner] = pending_loads.get(owner, 0) + 1
            load_of.setdefault(p_job, []).append(owner)
            candidates.discard(owner)
        else:  # admitted once the pull-back is ready
            pending_loads[owner] = 1
            load_of.setdefault(p_job, []).append(owner)
        spills.append(Spill(b, s_job, p_job, restored, readers))
        release(s_job)
        return True

    for i in range(n):
        if not waiting[i]:
            became_ready(i)
    for g, c in pending_loads.items():
        if c == 0 and g not in admitted:
            candidates.add(g)
    while len(order) < len(jobs):
        while candidates and changed:  # an admission can make another group admissible (``ext_done``)
            changed = False
            for g in sorted(candidates, key=lambda g: (-prio[g], g)):
                if max_groups and in_flight >= max_groups:
                    break
                if admit(g):
                    candidates.discard(g)
        for pool, insts in busy.items():
            for k, taken in enumerate(insts):
                if taken:
                    continue
                heaps = [h for h in (runnable.get((pool, k)), runnable.get((pool, None))) if h]
                if not heaps:
                    continue
                i = heapq.heappop(min(heaps, key=lambda h: h[0]))[1]
                insts[k] = True
                instance[i], start[i], end[i] = k, now, now + jobs[i].cycles
                heapq.heappush(running, (end[i], i))
                order.append(i)
                ext_done(i)  # started: it will finish without more bytes
        if not running and max_groups and in_flight >= max_groups and any(admit(g) for g in sorted(
                candidates, key=lambda g: (-prio[g], g))):  # the in-flight groups wait for one not admitted yet
            candidates.difference_update(admitted)
            continue
        if not running and dma_cycles is not None and spill_one():
            continue
        if not running:
            need = min((sum(bufs[b].size for b in group_bufs[g]) for g in candidates), default=0)
            raise ScheduleError(f"{len(jobs) - len(order)} tasks cannot start: the smallest waiting group of scratchpad "
                                f"buffers needs {need} bytes")
        now = running[0][0]
        while running and running[0][0] == now:
            _, i = heapq.heappop(running)
            finished.add(i)
            busy[jobs[i].pool][instance[i]] = False
            for u in users[i]:
                waiting[u] -= 1
                if waiting[u] == 0:
                    became_ready(u)
            for g in group_ends.get(i, ()):
                unfinished[g] -= 1
                if unfinished[g] == 0:
                    in_flight -= 1
                    changed = True
            for b in job_bufs[i]:
                remaining_users[b] -= 1
                buf = bufs[b]
                if remaining_users[b] == 0 and buf.memory in spaces:
                    live.discard(b)
                    spaces[buf.memory].give(buf.offset, buf.size)
                    changed = True
                    freed[buf.memory].append((buf.offset, buf.offset + buf.size, list(buf.users)))
    order.sort(key=lambda i: (start[i], i))
    return Schedule(order, instance, start, end, extra, {m: s.peak for m, s in spaces.items()}, jobs, spills,
                    bufs)


__all__ = ["Buf", "Job", "Schedule", "ScheduleError", "schedule"]
