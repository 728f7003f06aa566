"""The cost model (``nnkiln.targets.cost``) against numbers computed by hand from its docstring.

npu: DDR moves 8 GB/s x 0.6 / 1.3 GHz = 48/13 bytes per cycle, CMX 32 / 1.3 = 320/13; SHAVE 8 MACs or elements per
cycle + 2000; NCE 256 MACs x 5 DPUs per cycle + 500; DMA 200 + bytes at the slower side. cpu: 20 GB/s at a nominal
3 GHz = 20/3 bytes per cycle; 32 MACs, 8 elements per cycle + 1000.
"""

from __future__ import annotations

from fractions import Fraction

import pytest

from nnkiln.targets import ExecutorKind, get_target
from nnkiln.targets.cost import Work, bytes_per_cycle, compute_cycles, dma_cycles, task_cycles, work

NPU = get_target("npu")
F32 = 4
CONV = ([((1, 8, 8, 16), F32), ((16, 3, 3, 16), F32), ((16,), F32)], [((1, 8, 8, 16), F32)])


def test_bandwidths_are_exact() -> None:
    assert bytes_per_cycle(NPU.memory("DDR"), NPU.clock_ghz) == Fraction(48, 13)
    assert bytes_per_cycle(NPU.memory("CMX"), NPU.clock_ghz) == Fraction(320, 13)


def test_dma() -> None:
    ddr, cmx = NPU.memory("DDR"), NPU.memory("CMX")
    assert dma_cycles(NPU, 4800, ddr, cmx) == 200 + 1300  # DDR is the slower side: 4800 * 13 / 48
    assert dma_cycles(NPU, 4800, cmx, ddr) == 1500
    assert dma_cycles(NPU, 3200, cmx, cmx) == 200 + 130  # 3200 * 13 / 320
    assert dma_cycles(NPU, 1, cmx, cmx) == 201  # a partial cycle counts
    assert task_cycles(NPU, ExecutorKind.DMA, "buf.copy", [((1200,), F32)], [((1200,), F32)]) == 1500


def test_conv_on_shave_and_nce() -> None:
    w = work("tosa.conv2d", *CONV)
    assert w == Work(macs=64 * 16 * 3 * 3 * 16, elements=1024 + 2304 + 16, bytes=(1024 + 2304 + 16 + 1024) * 4)
    # memory: 17472 bytes * 13 / 48 = 4732 cycles; SHAVE compute 147456 / 8 = 18432
    assert task_cycles(NPU, ExecutorKind.SHAVE, "tosa.conv2d", *CONV) == 2000 + 18432
    # NCE compute 147456 / 1280 = 115.2 -> 116, below the memory time
    assert task_cycles(NPU, ExecutorKind.NCE, "tosa.conv2d", *CONV) == 500 + 4732


def test_elementwise_on_shave_and_cpu() -> None:
    add = ([((1, 1000), F32), ((1, 1000), F32)], [((1, 1000), F32)])
    assert work("tosa.add", *add) == Work(0, 2000, 12000)
    assert task_cycles(NPU, ExecutorKind.SHAVE, "tosa.add", *add) == 2000 + 3250  # 12000 * 13 / 48; compute 250
    cpu = get_target("cpu", threads=1)
    assert task_cycles(cpu, ExecutorKind.CPU, "tosa.add", *add) == 1000 + 1800  # 12000 * 3 / 20
    assert compute_cycles(NPU, ExecutorKind.SHAVE, Work(0, 0, 0)) == 2000  # a task is never free


@pytest.mark.parametrize(("kernel", "ins", "outs", "macs"), [
    ("tosa.matmul", [(1, 4, 8), (1, 8, 5)], [(1, 4, 5)], 20 * 8),
    ("tosa.depthwise_conv2d", [(1, 4, 4, 8), (3, 3, 8, 1), (8,)], [(1, 4, 4, 8)], 128 * 9),
    ("tosa.transpose_conv2d", [(1, 2, 2, 3), (4, 3, 3, 3), (4,)], [(1, 4, 4, 4)], 12 * 36),
    ("tosa.fully_connected", [(2, 8), (10, 8), (10,)], [(2, 10)], 20 * 8),
    ("tosa.conv3d", [(1, 2, 4, 4, 3), (5, 1, 3, 3, 3), (5,)], [(1, 2, 4, 4, 5)], 160 * 27),
    ("fused.conv2d_depthwise", [(1, 4, 4, 3), (6, 1, 1, 3), (6,), (3, 3, 6, 1), (6,)], [(1, 4, 4, 6), (1, 4, 4, 6)],
     96 * 3 + 96 * 9),
    ("tosa.max_pool2d", [(1, 4, 4, 3)], [(1, 2, 2, 3)], 0),
])
def test_macs(kernel: str, ins: list, outs: list, macs: int) -> None:
    assert work(kernel, [(s, F32) for s in ins], [(s, F32) for s in outs]).macs == macs
