"""assign-physical-barriers: property test on random rt schedules (random DAGs over random queues).

Input: tasks in a topological order, each on a random ``cpu`` queue, depending on random earlier
tasks; one virtual barrier per task that has a consumer on another queue (as async-to-rt makes).
Checked on the output, independently (compiler_rtcheck.reconstruct splits barrier uses by the
documented rule): every input dependency is still enforced (the producer happens-before the consumer
through barrier uses and FIFO order); at most N physical ids; a physical id's consecutive uses are
ordered (every consumer of use k happens-before every producer of use k + 1); the IR verifies.
"""

from __future__ import annotations

import random

import pytest
from compiler_rtcheck import reconstruct

from nnkiln.ir.context import make_context
from nnkiln.ir.text import parse_module
from nnkiln.transforms.rt.assign_physical_barriers import AssignPhysicalBarriers


def random_schedule(seed: int) -> tuple[str, list[tuple[int, int]]]:
    rng = random.Random(seed)
    n = rng.randint(2, 25)
    queues = rng.randint(1, 4)
    q = [rng.randrange(queues) for _ in range(n)]
    deps = [(d, t) for t in range(n) for d in range(t) if rng.random() < 0.25]
    cross = sorted({d for d, t in deps if q[d] != q[t]})
    bid = {d: i for i, d in enumerate(cross)}
    lines = [f"rt.barrier {{id = {i} : i64}}" for i in range(len(cross))]
    for t in range(n):
        waits = sorted(bid[d] for d, tt in deps if tt == t and q[d] != q[t])
        upd = [bid[t]] if t in bid else []
        lines.append(f'rt.task {{executor = "cpu", executor_index = {q[t]} : i64, '
                     f"waits = array<i64{': ' if waits else ''}{', '.join(map(str, waits))}>, "
                     f"updates = array<i64{': ' if upd else ''}{', '.join(map(str, upd))}>}} {{\n  rt.end\n}}")
    return "func.func @main() {\n" + "\n".join(lines) + "\nfunc.return\n}\n", deps


@pytest.mark.parametrize("seed", range(300))
def test_dependencies_survive(seed: int) -> None:
    text, deps = random_schedule(seed)
    limit = [1, 2, 3, 4, 64][seed % 5]
    module = parse_module(text)
    module.verify()
    AssignPhysicalBarriers(max_barriers=limit).apply(make_context(), module)
    module.verify()
    tasks, anc, uses = reconstruct(module)
    for d, t in deps:
        assert (anc[t] >> d) & 1, f"dependency {d} -> {t} lost (limit {limit})"
    ids = {b for tk in tasks for b in tk.waits + tk.updates}
    assert len(ids) <= limit
    # consecutive uses of one id are ordered
    by_id: dict[int, list[int]] = {}
    for u, (_, _, b) in enumerate(uses):
        by_id.setdefault(b, []).append(u)
    for seq in by_id.values():
        for u, v in zip(seq, seq[1:]):
            for c in uses[u][1]:
                for p in uses[v][0]:
                    assert (anc[p] >> c) & 1


def test_chain_on_two_queues_reuses_two_ids() -> None:
    """t0(q0) -> t1(q1) -> t2(q0) -> t3(q1) -> t4(q0): 4 virtual barriers; ids alternate 0, 1, 0, 1
    (a task cannot wait on and update the same id, so one id is not enough without serialising)."""
    lines = [f"rt.barrier {{id = {i} : i64}}" for i in range(4)]
    for t in range(5):
        waits = f": {t - 1}" if t else ""
        upd = f": {t}" if t < 4 else ""
        lines.append(f'rt.task {{executor = "cpu", executor_index = {t % 2} : i64, waits = array<i64{waits}>, '
                     f"updates = array<i64{upd}>}} {{\n  rt.end\n}}")
    module = parse_module("func.func @main() {\n" + "\n".join(lines) + "\nfunc.return\n}\n")
    AssignPhysicalBarriers(max_barriers=8).apply(make_context(), module)
    tasks, _, _ = reconstruct(module)
    assert [t.updates for t in tasks] == [(0,), (1,), (0,), (1,), ()]
    assert [t.waits for t in tasks] == [(), (0,), (1,), (0,), (1,)]
    assert [t.queue[1] for t in tasks] == [0, 1, 0, 1, 0]
    # with one id the schedule is serialised onto one queue without barriers
    module = parse_module("func.func @main() {\n" + "\n".join(lines) + "\nfunc.return\n}\n")
    AssignPhysicalBarriers(max_barriers=1).apply(make_context(), module)
    tasks, _, _ = reconstruct(module)
    assert all(t.queue == ("cpu", 0) and not t.waits and not t.updates for t in tasks)
