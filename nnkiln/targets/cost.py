"""The cost model: cycles of a task on an executor kind, from its work (MACs, elements, bytes) and the target.

One module, two users: the compile-time list scheduler (``wrap-into-async-regions`` for the npu targets) and the
simulator (``nnkiln.runtime.simulate``, which replays a blob and records its timeline). Both describe a task by
its kernel name and operand shapes (``work``), so the scheduler's estimate of a task and the simulator's replay
of it are the same number. No xDSL: the runtime imports this module.

Model (issue 22, item 1; architecture spec §3.3):

- ``work(kernel, ins, outs)``: ``macs`` = multiply-accumulates of the convolution / matrix kernels
  (``MAC_KERNELS``; 0 for the others); ``elements`` = the larger of the elements read and written; ``bytes`` =
  bytes read plus bytes written.
- A compute task on kind ``K``: ``overhead(K) + max(compute, memory)`` cycles, where ``compute = ceil(macs /
  macs_per_cycle(K))`` when ``macs > 0`` else ``ceil(elements / elements_per_cycle(K))``, and ``memory =
  ceil(bytes / bytes_per_cycle(M))`` for the memory ``M`` the operands are in (phase 1: the target's default
  memory, DDR for the npu). A task always takes at least ``overhead(K) >= 1`` cycles.
- ``bytes_per_cycle(M) = bandwidth(M) [GB/s] * derate(M) / clock [GHz]`` (spec §3.3: DDR 8 GB/s derate 0.6, CMX
  32 GB/s derate 1.0; clock 1.3 GHz from the issue). DDR on the npu: 4.8 GB/s effective = 48/13 bytes per
  cycle; CMX 32/1.3 = 320/13.
- A DMA task moving ``n`` bytes from memory ``S`` to ``D``: ``DMA_OVERHEAD + ceil(n / min(bytes_per_cycle(S),
  bytes_per_cycle(D)))`` (the slower side limits the transfer).
- Arithmetic is exact (``fractions.Fraction`` of the decimal values), so the compiler and a replay give the same
  integers on every machine.

Constants per executor kind (``RATES``). The spec gives only the memories' bandwidths and derates and the issue
the clock and the unit counts; the rates below are this module's documented decisions:

- ``NCE``: 256 MACs per cycle per DPU (a 16x16 MPE grid: the spec's ``MPE_mode = "VECTOR16"``), times the
  cluster's DPUs (5: 1280 MACs/cycle per cluster); 16 elements per cycle per DPU (one 16-wide vector per
  DPU) for elementwise work; 500 cycles per task (descriptor fetch and DPU variant setup).
- ``SHAVE``: a 128-bit vector DSP: 8 fp16 lanes, so 8 MACs and 8 elements per cycle; 2000 cycles per task
  (the runtime launching a software kernel on a SHAVE core, argument marshalling included).
- ``DMA``: 200 cycles per transfer (descriptor setup); bytes at the slower memory's derated bandwidth.
- ``cpu``: a nominal core of the host at the cpu target's nominal 3 GHz: 32 MACs per cycle (two 8-wide FMA
  units), 8 elements per cycle, 1000 cycles per task (the Python dispatch of a kernel). The cpu numbers are a
  model for ``nnkiln inspect`` and the benchmark, not a prediction of the host's speed: the cpu target's own
  scheduler keeps its older estimate (``nnkiln.conversion.buf_to_async.estimate_cost``).

Not modelled in phase 1 (docs/npu-target.md): contention of concurrent tasks for a memory's bandwidth (each task
sees the full derated bandwidth), the barrier latency, and dtype-dependent rates.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import NamedTuple

from nnkiln.targets import ExecutorKind, Memory, MemoryKind, Target


@dataclass(frozen=True)
class Rates:
    """The throughput of one instance of an executor kind (``per_dpu``: multiplied by an NCE's DPUs)."""

    macs_per_cycle: int
    elements_per_cycle: int
    overhead_cycles: int
    per_dpu: bool = False


RATES: dict[ExecutorKind, Rates] = {
    ExecutorKind.NCE: Rates(macs_per_cycle=256, elements_per_cycle=16, overhead_cycles=500, per_dpu=True),
    ExecutorKind.SHAVE: Rates(macs_per_cycle=8, elements_per_cycle=8, overhead_cycles=2000),
    ExecutorKind.DMA: Rates(macs_per_cycle=0, elements_per_cycle=0, overhead_cycles=200),
    ExecutorKind.CPU: Rates(macs_per_cycle=32, elements_per_cycle=8, overhead_cycles=1000),
}
"""The per-kind constants (module docstring)."""

DMA_OVERHEAD = RATES[ExecutorKind.DMA].overhead_cycles


class Work(NamedTuple):
    """What a task does: multiply-accumulates, elements processed, bytes read plus written."""

    macs: int
    elements: int
    bytes: int


Operand = tuple[Sequence[int], int]
"""An operand as the cost model sees it: its shape and its element size in bytes."""


def _prod(shape: Sequence[int]) -> int:
    n = 1
    for d in shape:
        n *= int(d)
    return n


def _macs(kernel: str, ins: Sequence[Operand], outs: Sequence[Operand]) -> int:
    """Multiply-accumulates of the kernels that have them (``MAC_KERNELS``), else 0."""
    if not outs or not ins:
        return 0
    out = _prod(outs[0][0])
    if kernel == "tosa.conv2d" or kernel == "tosa.conv3d":  # weights [OC, (KD,) KH, KW, IC]
        return out * _prod(ins[1][0][1:]) if len(ins) > 1 else 0
    if kernel == "tosa.depthwise_conv2d":  # weights [KH, KW, C, M]
        return out * _prod(ins[1][0][:2]) if len(ins) > 1 else 0
    if kernel == "tosa.transpose_conv2d":  # each input element meets OC * KH * KW weights
        return _prod(ins[0][0]) * _prod(ins[1][0][:3]) if len(ins) > 1 else 0
    if kernel == "tosa.fully_connected":  # weights [OC, IC]
        return out * int(ins[1][0][1]) if len(ins) > 1 else 0
    if kernel == "tosa.matmul":  # [N, H, C] x [N, C, W]
        return out * int(ins[0][0][-1])
    if kernel == "fused.conv2d_depthwise" and len(ins) >= 4 and len(outs) >= 2:  # 1x1 expansion, then depthwise
        return _prod(outs[1][0]) * _prod(ins[1][0][1:]) + out * _prod(ins[3][0][:2])
    return 0


MAC_KERNELS = frozenset({"tosa.conv2d", "tosa.conv3d", "tosa.depthwise_conv2d", "tosa.transpose_conv2d",
                         "tosa.fully_connected", "tosa.matmul", "fused.conv2d_depthwise"})
"""The kernels whose work is counted in MACs."""


def work(kernel: str, ins: Sequence[Operand], outs: Sequence[Operand]) -> Work:
    """The work of one task (module docstring)."""
    elements = max(sum(_prod(s) for s, _ in ins), sum(_prod(s) for s, _ in outs))
    nbytes = sum(_prod(s) * size for s, size in (*ins, *outs))
    return Work(_macs(kernel, ins, outs), elements, nbytes)


def _exact(x: float) -> Fraction:
    """The decimal value ``x`` prints as (``1.3`` is 13/10, not the binary float nearest to it)."""
    return Fraction(repr(float(x)))


@functools.cache
def _bytes_per_cycle(bandwidth_gbps: float, derate: float, clock_ghz: float) -> Fraction:
    return _exact(bandwidth_gbps) * _exact(derate) / _exact(clock_ghz)


def bytes_per_cycle(memory: Memory, clock_ghz: float) -> Fraction:
    """Bytes a transfer moves per cycle of a ``clock_ghz`` clock: bandwidth x derate / clock (exact)."""
    return _bytes_per_cycle(memory.bandwidth_gbps, memory.derate, clock_ghz)


def _ceil_div(n: int, rate: Fraction) -> int:
    """``ceil(n / rate)`` in integers."""
    return -(-n * rate.denominator // rate.numerator)


def instance_rates(target: Target, kind: ExecutorKind) -> tuple[int, int, int]:
    """``(MACs per cycle, elements per cycle, overhead cycles)`` of one instance of ``kind`` on ``target``."""
    r = RATES[kind]
    scale = 1
    if r.per_dpu:
        scale = max(1, next((e.dpus for e in target.executors if e.kind is kind), 1))
    return r.macs_per_cycle * scale, r.elements_per_cycle * scale, r.overhead_cycles


def compute_cycles(target: Target, kind: ExecutorKind, w: Work, memory: Memory | None = None) -> int:
    """Cycles of a compute task with work ``w`` on one instance of ``kind`` whose operands are in ``memory``
    (default: the target's default memory)."""
    if kind is ExecutorKind.DMA:
        raise ValueError("a DMA task's cycles come from dma_cycles")
    macs_rate, elem_rate, overhead = instance_rates(target, kind)
    compute = -(-w.macs // macs_rate) if w.macs else -(-w.elements // elem_rate)
    mem = memory or target.default_memory
    moved = _ceil_div(w.bytes, bytes_per_cycle(mem, target.clock_ghz))
    return overhead + max(compute, moved)


def dma_cycles(target: Target, nbytes: int, source: Memory, dest: Memory) -> int:
    """Cycles of a DMA moving ``nbytes`` from ``source`` to ``dest``: the overhead plus the bytes at the slower
    side's derated bandwidth."""
    rate = min(bytes_per_cycle(source, target.clock_ghz), bytes_per_cycle(dest, target.clock_ghz))
    return DMA_OVERHEAD + _ceil_div(nbytes, rate)


def task_cycles(target: Target, kind: ExecutorKind, kernel: str, ins: Sequence[Operand],
                outs: Sequence[Operand], memories: Sequence[MemoryKind] = ()) -> int:
    """Cycles of a task running ``kernel`` on ``ins``/``outs`` on one instance of ``kind``. ``memories``: the kind
    of memory of each operand (``ins`` then ``outs``; absent: the default memory). A compute task whose operands
    are all in a CMX moves its bytes at the CMX's bandwidth, else at the default memory's. A DMA task moves the
    bytes of the smaller side (a box copy reads or writes part of the larger one) from ``ins[0]``'s memory to
    ``outs[0]``'s."""
    w = work(kernel, ins, outs)
    mems = list(memories) or [target.default_memory.kind] * (len(ins) + len(outs))
    if kind is ExecutorKind.DMA:
        moved = min(sum(_prod(s) * size for s, size in ins), sum(_prod(s) * size for s, size in outs) or 1 << 62)
        src = _memory_of_kind(target, mems[0] if ins else None)
        dst = _memory_of_kind(target, mems[len(ins)] if outs else None)
        return dma_cycles(target, moved, src, dst)
    in_cmx = bool(mems) and all(m is MemoryKind.CMX for m in mems)
    return compute_cycles(target, kind, w, _memory_of_kind(target, MemoryKind.CMX if in_cmx else None))


def _memory_of_kind(target: Target, kind: MemoryKind | None) -> Memory:
    """The target's memory of ``kind`` (``None``, or a kind it lacks: its default memory)."""
    return (target.memory_of_kind(kind) if kind is not None else None) or target.default_memory


__all__ = ["MAC_KERNELS", "RATES", "Rates", "Work", "bytes_per_cycle", "compute_cycles", "dma_cycles",
           "instance_rates", "task_cycles", "work"]
