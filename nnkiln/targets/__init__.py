"""Compilation targets: data only (architecture §3 "device description").

A ``Target`` lists the memories buffers can live in, the executors tasks can run on and the number
of hardware barriers the runtime offers. Passes ask the target (``get_target``) for these numbers;
nothing in a pass hard-codes a device.

The ``cpu`` target: one memory ``host`` (64-byte alignment: a cache line and the widest SIMD
load, so numpy views of planned buffers stay aligned), one executor kind ``cpu`` (``COMPUTE``) with
``threads`` instances (default ``os.cpu_count()``), 64 barriers, MATMUL weights packed in 16-column panels
(the runtime's GEMM kernel reads them without a second copy).

Batches: ``split_batch_bytes`` (4 x the L2 cache of a core, read from sysfs) is where ``split-batch`` starts
running layers once per sample.

``threads`` is the number of cpu threads a compiled program uses. The executor is marked
``threaded_kernels``: its instances can cooperate on one kernel, so the default pipeline schedules every
task on one instance whose kernels use all ``threads`` threads (intra-op parallelism; the pipeline's
``queues`` option spreads tasks over several instances instead, see ``nnkiln.pipelines``).
"""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass
from enum import Enum

from nnkiln.errors import NnkilnError, did_you_mean


class MemoryKind(Enum):
    """Where a memory sits: ``DDR`` (large, off-chip/host RAM) or ``CMX`` (small scratchpad)."""

    DDR = "DDR"
    CMX = "CMX"


class ExecutorKind(Enum):
    """What an executor does: ``COMPUTE`` runs kernels, ``DMA`` only copies."""

    COMPUTE = "COMPUTE"
    DMA = "DMA"


@dataclass(frozen=True)
class Memory:
    """A memory: name, kind, capacity in bytes, address alignment in bytes, bandwidth in GB/s."""

    name: str
    kind: MemoryKind
    size: int
    alignment: int
    bandwidth_gbps: float


@dataclass(frozen=True)
class Executor:
    """An executor kind with ``count`` identical instances (indices ``0 .. count-1``).

    ``threaded_kernels``: one instance's kernels can themselves use all ``count`` threads (the cpu's BLAS
    and native kernels), so a scheduler may put every task on one instance (intra-op parallelism) instead
    of spreading them over ``count`` queues (inter-op parallelism)."""

    name: str
    kind: ExecutorKind
    count: int
    threaded_kernels: bool = False


@dataclass(frozen=True)
class Target:
    """A device: memories, executors and the number of physical barriers. ``gemm_weight_panels``: the constant
    right operands of float32 MATMULs are stored in the blob as panels of this many columns, the layout the
    device's GEMM kernel reads (0: as they are; see ``docs/blob-format.md``, "Packed GEMM weights")."""

    name: str
    memories: tuple[Memory, ...]
    executors: tuple[Executor, ...]
    num_barriers: int
    gemm_weight_panels: int = 0
    wide_simd: bool = False
    """The device has 512-bit vector units (AVX-512): the cpu kernel library's GEMM tiles beat BLAS there
    (``select-kernel-variants``)."""
    native_gemm_max_bytes: int = 0
    """Constant GEMM weights (not held as panels) up to this total run on the kernel library's GEMM, which keeps a
    packed second copy of them; above it, BLAS (a second copy of BERT-base's weights took the process past
    onnxruntime's peak memory: bench/RESULTS.md)."""
    split_batch_bytes: int = 0
    """``split-batch``'s ``threshold_bytes``: batched activations of one op above which running it per
    sample pays (0: never split). The cpu: 4 times a core's L2 cache, where the per-layer timings of batched and
    per-sample runs crossed (MobileNetV2 and ResNet-18 at batch 8: bench/RESULTS.md)."""

    def memory(self, name: str) -> Memory:
        for m in self.memories:
            if m.name == name:
                return m
        raise NnkilnError(f"target '{self.name}' has no memory '{name}'")

    @property
    def default_memory(self) -> Memory:
        """The memory activations are planned in (the first one)."""
        return self.memories[0]

    def compute_executors(self) -> tuple[Executor, ...]:
        return tuple(e for e in self.executors if e.kind is ExecutorKind.COMPUTE)


def _physical_memory_bytes() -> int:
    try:
        return int(os.sysconf("SC_PAGE_SIZE")) * int(os.sysconf("SC_PHYS_PAGES"))
    except (ValueError, OSError, AttributeError):
        return 1 << 40


HOST_MEMORY = Memory("host", MemoryKind.DDR, size=_physical_memory_bytes(), alignment=64, bandwidth_gbps=20.0)
"""The cpu target's only memory: the physical RAM of the machine that compiles (1 TiB if unknown), so a
plan that cannot fit is refused at compile time rather than at run time."""

@functools.cache
def l2_cache_bytes() -> int:
    """The level-2 cache of one core of this machine (Linux sysfs), 1 MiB if unknown (read once per process:
    ``get_target`` runs for every pass and verifier that asks the target)."""
    base = "/sys/devices/system/cpu/cpu0/cache"
    try:
        for index in sorted(os.listdir(base)):
            with open(os.path.join(base, index, "level")) as f:
                if f.read().strip() != "2":
                    continue
            with open(os.path.join(base, index, "size")) as f:
                text = f.read().strip().upper()
            scale = {"K": 1 << 10, "M": 1 << 20}.get(text[-1:], 1)
            return int(text.rstrip("KM")) * scale
    except (OSError, ValueError):
        pass
    return 1 << 20


@functools.cache
def cpu_has_avx512() -> bool:
    """Whether this machine's cores have AVX-512 (Linux ``/proc/cpuinfo``; False if unknown)."""
    try:
        with open("/proc/cpuinfo") as f:
            flags = next((line for line in f if line.startswith("flags")), "")
    except OSError:
        return False
    return "avx512f" in flags.split()


TARGET_NAMES = ("cpu",)


def get_target(name: str = "cpu", threads: int | None = None) -> Target:
    """The target called ``name`` (only ``"cpu"``); ``threads`` = number of cpu executor instances (threads)."""
    if name != "cpu":
        raise NnkilnError(f"unknown target '{name}'{did_you_mean(name, TARGET_NAMES)} (available: "
                          f"{', '.join(TARGET_NAMES)})")
    count = threads if threads is not None else (os.cpu_count() or 1)
    if count < 1:
        raise NnkilnError(f"threads must be >= 1, got {count}")
    return Target("cpu", (HOST_MEMORY,), (Executor("cpu", ExecutorKind.COMPUTE, count, True),),
                  num_barriers=64, gemm_weight_panels=16, wide_simd=cpu_has_avx512(), native_gemm_max_bytes=64 << 20,
                  split_batch_bytes=4 * l2_cache_bytes())


def find_memory(name: str) -> Memory | None:
    """The memory called ``name`` in any known target (used by verifiers, which have no target)."""
    for tname in TARGET_NAMES:
        for m in get_target(tname, threads=1).memories:
            if m.name == name:
                return m
    return None


__all__ = ["Executor", "ExecutorKind", "Memory", "MemoryKind", "Target", "find_memory", "get_target"]
