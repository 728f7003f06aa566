"""Compilation targets: data only (architecture §3 "device description").

A ``Target`` lists the memories buffers can live in, the executors tasks can run on, the number
of hardware barriers the runtime offers and the clock the cost model (``nnkiln.targets.cost``) counts cycles
of. Passes ask the target (``get_target``) for these numbers; nothing in a pass hard-codes a device.
Executor names equal their kind's value (``"cpu"``, ``"NCE"``, ``"SHAVE"``, ``"DMA"``): a blob task's executor
string is its kind.

The ``npu`` targets (issue 22, architecture spec §3.3 "RunTimeResources"), clock 1.3 GHz:

- ``npu``: DDR 512 MiB (the issue's number; the spec's example declares 524288000 bytes), bandwidth 8 GB/s,
  derate 0.6; CMX 917504 bytes per NCE cluster, 4 instances (``CMX0`` .. ``CMX3``), bandwidth 32 GB/s, derate
  1.0; 4 NCE clusters of 5 DPUs, 16 SHAVE cores, 2 DMA engines, 32 physical barriers.
- ``npu-small``: the same with 1 NCE cluster of 262144 bytes of CMX, 2 SHAVE cores, 1 DMA engine and 8
  physical barriers.

Bandwidths are GB/s (the spec's ``VPU.bandwidth`` gives no unit; the issue reads them as GB/s). Phase 1 of
the npu target (``docs/npu-target.md``) runs every op as a SHAVE software kernel on activations in DDR; the
NCE, CMX and DMA numbers are already the cost model's and ``nnkiln inspect``'s.

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
    """What an executor is (a closed set): ``CPU`` a host core running the software kernels, ``NCE`` an NPU compute
    cluster (fixed-function convolution / pooling / elementwise engine of ``dpus`` DPUs), ``SHAVE`` an NPU
    vector DSP core running software kernels, ``DMA`` an engine that only copies between memories."""

    CPU = "cpu"
    NCE = "NCE"
    SHAVE = "SHAVE"
    DMA = "DMA"

    @property
    def runs_software_kernels(self) -> bool:
        """Whether any op's software kernel can run here (the cpu kernels: ``CPU`` and ``SHAVE``)."""
        return self in (ExecutorKind.CPU, ExecutorKind.SHAVE)


@dataclass(frozen=True)
class Memory:
    """A memory: name, kind, capacity in bytes (of one instance), address alignment in bytes, bandwidth in GB/s,
    ``derate`` (the fraction of the bandwidth a transfer achieves: spec §3.3 ``VPU.derateFactor``) and ``count``
    (identical instances: one CMX per NCE cluster)."""

    name: str
    kind: MemoryKind
    size: int
    alignment: int
    bandwidth_gbps: float
    derate: float = 1.0
    count: int = 1

    def instance_names(self) -> tuple[str, ...]:
        """The names of the instances: ``CMX0``, ``CMX1``, ... for a CMX (one per cluster), else the name."""
        if self.kind is MemoryKind.CMX:
            return tuple(f"{self.name}{k}" for k in range(self.count))
        return (self.name,)


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
    dpus: int = 0
    """``NCE`` only: the DPUs of one cluster (the cost model's MAC rate scales with them)."""


@dataclass(frozen=True)
class Target:
    """A device: memories, executors and the number of physical barriers. ``gemm_weight_panels``: the constant
    right operands of float32 MATMULs are stored in the blob as panels of this many columns, the layout the
    device's GEMM kernel reads (0: as they are; see ``docs/blob-format.md``, "Packed GEMM weights")."""

    name: str
    memories: tuple[Memory, ...]
    executors: tuple[Executor, ...]
    num_barriers: int
    clock_ghz: float = 3.0
    """The clock the cost model counts cycles of (the cpu: a nominal 3 GHz; ``nnkiln.targets.cost``)."""
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

    def memory_of_kind(self, kind: MemoryKind) -> Memory | None:
        """The target's (first) memory of ``kind``, if it has one (the npu's CMX)."""
        return next((m for m in self.memories if m.kind is kind), None)

    def executor_of_kind(self, kind: ExecutorKind) -> Executor | None:
        """The target's executor of ``kind``, if it has one."""
        return next((e for e in self.executors if e.kind is kind), None)

    @property
    def default_memory(self) -> Memory:
        """The memory activations are planned in (the first one)."""
        return self.memories[0]

    def compute_executors(self) -> tuple[Executor, ...]:
        """The executors that run kernels (every kind but ``DMA``), software-kernel executors first."""
        return tuple(sorted((e for e in self.executors if e.kind is not ExecutorKind.DMA),
                            key=lambda e: not e.kind.runs_software_kernels))

    @property
    def kernel_executor(self) -> Executor:
        """The executor the software kernels run on (the cpu's cores, the npu's SHAVEs)."""
        return next(e for e in self.executors if e.kind.runs_software_kernels)

    def executor(self, name: str) -> Executor:
        for e in self.executors:
            if e.name == name:
                return e
        raise NnkilnError(f"target '{self.name}' has no executor '{name}'")

    @property
    def is_npu(self) -> bool:
        """The target has NCE clusters (its pipelines are the npu ones, ``nnkiln.pipelines``)."""
        return any(e.kind is ExecutorKind.NCE for e in self.executors)

    def description(self) -> dict[str, object]:
        """The target as the blob's metadata records it (docs/blob-format.md): ``memories`` (one entry per instance:
        name, kind, capacity), ``executors`` (kind, count) and ``max_physical_barriers``."""
        return {
            "memories": [{"name": n, "kind": m.kind.value, "capacity": m.size}
                         for m in self.memories for n in m.instance_names()],
            "executors": [{"kind": e.kind.value, "count": e.count} for e in self.executors],
            "max_physical_barriers": self.num_barriers,
            "clock_ghz": self.clock_ghz,
        }


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


TARGET_NAMES = ("cpu", "npu", "npu-small")

NPU_CLOCK_GHZ = 1.3
DDR_BYTES = 512 << 20
CMX_BYTES = 917504
CMX_SMALL_BYTES = 262144


def _npu(name: str, clusters: int, cmx_bytes: int, shaves: int, dmas: int, barriers: int) -> Target:
    """An npu device (module docstring): DDR, one CMX per NCE cluster, NCE/SHAVE/DMA executors, barriers."""
    ddr = Memory("DDR", MemoryKind.DDR, DDR_BYTES, alignment=64, bandwidth_gbps=8.0, derate=0.6)
    cmx = Memory("CMX", MemoryKind.CMX, cmx_bytes, alignment=64, bandwidth_gbps=32.0, derate=1.0, count=clusters)
    return Target(name, (ddr, cmx), (Executor("NCE", ExecutorKind.NCE, clusters, dpus=5),
                                     Executor("SHAVE", ExecutorKind.SHAVE, shaves),
                                     Executor("DMA", ExecutorKind.DMA, dmas)),
                  num_barriers=barriers, clock_ghz=NPU_CLOCK_GHZ)


@functools.cache
def _npu_target(name: str) -> Target:
    if name == "npu":
        return _npu(name, clusters=4, cmx_bytes=CMX_BYTES, shaves=16, dmas=2, barriers=32)
    return _npu(name, clusters=1, cmx_bytes=CMX_SMALL_BYTES, shaves=2, dmas=1, barriers=8)


def get_target(name: str = "cpu", threads: int | None = None) -> Target:
    """The target called ``name`` (``TARGET_NAMES``); ``threads`` = number of cpu executor instances (threads) of
    the ``cpu`` target (the npu targets' executor counts are the device's: ``threads`` does not change them)."""
    if name not in TARGET_NAMES:
        raise NnkilnError(f"unknown target '{name}'{did_you_mean(name, TARGET_NAMES)} (available: "
                          f"{', '.join(TARGET_NAMES)})")
    if name != "cpu":
        return _npu_target(name)
    count = threads if threads is not None else (os.cpu_count() or 1)
    if count < 1:
        raise NnkilnError(f"threads must be >= 1, got {count}")
    return Target("cpu", (HOST_MEMORY,), (Executor("cpu", ExecutorKind.CPU, count, True),),
                  num_barriers=64, gemm_weight_panels=16, wide_simd=cpu_has_avx512(), native_gemm_max_bytes=64 << 20,
                  split_batch_bytes=4 * l2_cache_bytes())


def find_memory(name: str) -> Memory | None:
    """The memory called ``name`` (or one of its instances' names, ``CMX0``) in any known target (used by
    verifiers, which have no target)."""
    for tname in TARGET_NAMES:
        for m in get_target(tname, threads=1).memories:
            if m.name == name or name in m.instance_names():
                return m
    return None


__all__ = ["Executor", "ExecutorKind", "Memory", "MemoryKind", "Target", "find_memory", "get_target"]
