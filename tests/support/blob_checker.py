"""An independent checker of ``nnkiln inspect --json`` output (uses only the JSON, not nnkiln).

- happens-before = transitive closure of (consecutive tasks of one executor instance) and
  (every producer task of a barrier record -> every consumer task);
- every pair of tasks that touch overlapping bytes (same memory and io index), at least one writing,
  is ordered by happens-before in their blob (= schedule) order;
- no two arena buffers of different alias groups overlap while both are live: all accesses of one
  group happen before all accesses of the other (one task may be both the last user of one group and
  the first of the other: an in-place kernel).
Returns the list of violations (empty when the blob is safe).
"""

from __future__ import annotations

from typing import Any


def _root(buffers: list[dict[str, Any]], i: int) -> int:
    while buffers[i]["alias_of"] is not None:
        i = buffers[i]["alias_of"]
    return i


def check(d: dict[str, Any]) -> list[str]:
    tasks, buffers, barriers = d["tasks"], d["buffers"], d["barriers"]
    n = len(tasks)
    succ: list[set[int]] = [set() for _ in range(n)]
    last: dict[tuple[str, int], int] = {}
    for t in tasks:
        key = (t["executor"], t["executor_index"])
        if key in last:
            succ[last[key]].add(t["index"])
        last[key] = t["index"]
    for b in barriers:
        for p in b["producer_tasks"]:
            for c in b["consumer_tasks"]:
                succ[p].add(c)
    reach = [0] * n  # bitset of tasks reachable from i (blob order is a topological order here)
    for i in reversed(range(n)):
        bits = 0
        for j in succ[i]:
            if j <= i:
                return [f"task {i} must precede task {j} but comes later in the blob"]
            bits |= (1 << j) | reach[j]
        reach[i] = bits

    def hb(i: int, j: int) -> bool:
        return bool(reach[i] >> j & 1)

    def span(b: dict[str, Any]) -> tuple[str, int, int, int]:
        return b["memory"], b["io_index"], b["offset"], b["offset"] + b["size"]

    def overlap(a: dict[str, Any], b: dict[str, Any]) -> bool:
        ma, ia, a0, a1 = span(a)
        mb, ib, b0, b1 = span(b)
        return (ma, ia) == (mb, ib) and a0 < b1 and b0 < a1 and a1 > a0 and b1 > b0

    access = []  # (task, buffer, writes)
    for t in tasks:
        access += [(t["index"], buffers[i], False) for i in t["inputs"]]
        access += [(t["index"], buffers[o], True) for o in t["outputs"]]
    problems = []
    for x in range(len(access)):
        ti, bi, wi = access[x]
        for y in range(x + 1, len(access)):
            tj, bj, wj = access[y]
            if ti == tj or not (wi or wj) or not overlap(bi, bj):
                continue
            a, b = min(ti, tj), max(ti, tj)
            if not hb(a, b):
                problems.append(f"tasks {a} and {b} access overlapping bytes of buffers {bi['index']}/{bj['index']} "
                                "without an ordering barrier")
    groups: dict[int, set[int]] = {}
    for t, b, _ in access:
        if b["memory"] == "arena":
            groups.setdefault(_root(buffers, b["index"]), set()).add(t)
    roots = sorted(groups)
    for x, ra in enumerate(roots):
        for rb in roots[x + 1:]:
            if not overlap(buffers[ra], buffers[rb]):
                continue
            ga, gb = groups[ra], groups[rb]
            # a task that is the last user of one and the first of the other may reuse the bytes in place
            if not (all(i == j or hb(i, j) for i in ga for j in gb) or all(i == j or hb(j, i) for i in ga for j in gb)):
                problems.append(f"arena buffers {ra} and {rb} overlap while both are live")
    for t in tasks:  # the region programs of control-flow tasks are blobs of their own
        for k, program in enumerate(t.get("programs", ())):
            problems += [f"task {t['index']} program {k}: {p}" for p in check(program)]
    return problems
