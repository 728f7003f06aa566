"""The feasible CMX scheduler (``nnkiln.analysis.feasible_schedule``) on small job graphs: every dependency holds in
the schedule, no instance runs two jobs at once, the scratchpad buffers live at the same time never share bytes and
stay inside the capacity, and a resident buffer that blocks everything is spilled and pulled back."""

from __future__ import annotations

from nnkiln.analysis.feasible_schedule import Buf, Job, Schedule, schedule


def _violations(s: Schedule, capacity: int) -> list[str]:
    bad = []
    for i, job in enumerate(s.jobs):
        for d in job.deps | s.extra_deps.get(i, set()):
            if s.end[d] > s.start[i]:
                bad.append(f"job {i} starts at {s.start[i]} before dependency {d} ends at {s.end[d]}")
    runs: dict[tuple[str, int], list[tuple[int, int]]] = {}
    for i, job in enumerate(s.jobs):
        runs.setdefault((job.pool, s.instance[i]), []).append((s.start[i], s.end[i]))
    for q, spans in runs.items():
        spans.sort()
        bad += [f"{q} runs two jobs at once" for a, b in zip(spans, spans[1:]) if a[1] > b[0]]
    live = []  # a buffer holds its bytes from its first user's start to its last user's end
    for k, b in enumerate(s.bufs):
        if not b.users:
            continue
        lo, hi = min(s.start[u] for u in b.users), max(s.end[u] for u in b.users)
        live.append((k, lo, hi, b))
        if not 0 <= b.offset and b.offset + b.size <= capacity:
            bad.append(f"buffer {k} at [{b.offset}, {b.offset + b.size}) is outside the capacity {capacity}")
    for x, (k1, lo1, hi1, b1) in enumerate(live):
        for k2, lo2, hi2, b2 in live[x + 1:]:
            if b1.memory == b2.memory and lo1 < hi2 and lo2 < hi1 and b1.offset < b2.offset + b2.size \
                    and b2.offset < b1.offset + b1.size:
                bad.append(f"buffers {k1} and {k2} share bytes while both live")
    return bad


def test_tiles_share_the_scratchpad_without_overlap() -> None:
    """Four tiles (load, NCE, store) of 40 bytes each on one cluster with 100 bytes: at most two groups at once."""
    jobs, bufs = [], []
    for t in range(4):
        load, nce, store = len(jobs), len(jobs) + 1, len(jobs) + 2
        jobs += [Job(set(), 10, "DMA"), Job({load}, 30, "NCE", 0), Job({nce}, 10, "DMA")]
        bufs += [Buf("CMX0", 20, [load, nce]), Buf("CMX0", 20, [nce, store])]
    s = schedule(jobs, {"DMA": 2, "NCE": 1}, bufs, {"CMX0": 100})
    assert _violations(s, 100) == [] and not s.spills
    assert s.peak["CMX0"] <= 100 and len(s.order) == len(jobs)


def test_a_resident_buffer_that_blocks_everything_is_spilled_and_pulled_back() -> None:
    """Job 0 leaves 60 bytes resident for job 3; job 2 needs 60 bytes of the 100 first: nothing can start until the
    resident buffer goes out to DDR (spill), and it comes back (pull-back) before job 3 reads it."""
    jobs = [Job(set(), 10, "NCE", 0), Job(set(), 5, "DMA"), Job({1}, 10, "NCE", 0), Job({0, 2}, 10, "NCE", 0)]
    bufs = [Buf("CMX0", 60, [0, 3]), Buf("CMX0", 50, [1, 2]), Buf("CMX0", 10, [2, 3])]
    s = schedule(jobs, {"DMA": 1, "NCE": 1}, bufs, {"CMX0": 100}, dma_cycles=lambda n: 100 + n)
    # the first spill frees room for job 2; then job 2's 10-byte output sits in the middle of the 100 bytes
    # (fragmentation: no 60-byte range for the pulled-back copy) and goes out and back too
    assert [sp.buffer for sp in s.spills] == [0, 2]
    sp = s.spills[0]
    assert sp.buffer == 0 and sp.readers == [3]
    assert s.jobs[sp.spill].pool == s.jobs[sp.pull].pool == "DMA"
    assert s.end[0] <= s.start[sp.spill] and s.end[sp.spill] <= s.start[sp.pull] <= s.end[sp.pull] <= s.start[3]
    assert s.bufs[sp.restored].users[0] == sp.pull and 3 in s.bufs[sp.restored].users
    assert _violations(s, 100) == []


def test_the_pulled_back_copy_joins_its_readers_group() -> None:
    """As above, but job 3 also writes a buffer of its own (a tile's output, drained by job 4): its group is
    admitted with the pulled-back copy in it."""
    jobs = [Job(set(), 10, "NCE", 0), Job(set(), 5, "DMA"), Job({1}, 10, "NCE", 0), Job({0, 2}, 10, "NCE", 0),
            Job({3}, 5, "DMA")]
    bufs = [Buf("CMX0", 60, [0, 3]), Buf("CMX0", 50, [1, 2]), Buf("CMX0", 10, [2, 3]), Buf("CMX0", 20, [3, 4])]
    s = schedule(jobs, {"DMA": 1, "NCE": 1}, bufs, {"CMX0": 100}, dma_cycles=lambda n: 100 + n)
    assert s.spills and s.spills[0].buffer == 0 and _violations(s, 100) == []
    assert all(s.end[sp.pull] <= s.start[3] for sp in s.spills) and s.end[3] <= s.start[4]


def test_without_a_spill_price_a_blocked_schedule_is_an_error() -> None:
    import pytest

    from nnkiln.analysis.feasible_schedule import ScheduleError

    jobs = [Job(set(), 10, "NCE", 0), Job(set(), 5, "DMA"), Job({1}, 10, "NCE", 0), Job({0, 2}, 10, "NCE", 0)]
    bufs = [Buf("CMX0", 60, [0, 3]), Buf("CMX0", 50, [1, 2]), Buf("CMX0", 10, [2, 3])]
    with pytest.raises(ScheduleError, match="cannot start"):
        schedule(jobs, {"DMA": 1, "NCE": 1}, bufs, {"CMX0": 100})


def test_the_in_flight_limit_yields_when_the_groups_in_flight_wait_for_another() -> None:
    """One group in flight at most; group A's store must wait for group B's load (it overwrites DDR bytes that load
    reads): with only A admitted nothing could run, so B is admitted too."""
    jobs = [Job(set(), 5, "DMA"), Job({0}, 100, "NCE", 0), Job(set(), 5, "DMA"), Job({1, 2}, 5, "DMA"),
            Job({2}, 10, "NCE", 0)]
    bufs = [Buf("CMX0", 10, [0, 1]), Buf("CMX0", 10, [1, 3]), Buf("CMX0", 10, [2, 4])]
    s = schedule(jobs, {"DMA": 1, "NCE": 1}, bufs, {"CMX0": 100}, max_groups=1)
    assert _violations(s, 100) == [] and len(s.order) == len(jobs)
    assert s.end[2] <= s.start[3]
