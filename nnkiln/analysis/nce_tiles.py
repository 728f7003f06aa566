"""Which kernels the NCE runs, and how one is cut into tiles that fit a cluster's CMX (``cmx-tiling``).

No xDSL: operands are ``(shape, itemsize)`` pairs, attributes plain Python values (``buf.kernel``'s
``tosa_attrs``), so the rule is testable on its own and the same everywhere.

The NCE (architecture spec §3.3, issue 22 item 3) runs CONV2D, DEPTHWISE_CONV2D, MAX_POOL2D, AVG_POOL2D and the
elementwise ADD / MUL of two same-shaped tensors, on rank-4 NHWC tensors, with the post-processing (PPE) of
``NCE_POST_OPS``. Device rules (``NCE_RULES``): kernels up to 11x11, strides up to 8, no dilation, 8-bit or float
inputs (TOSA's 16x8 integer mode is a SHAVE kernel). Anything else runs on a SHAVE: never an error.

A tile is one sample ``n``, a range of output rows ``[y0, y1)`` and a range of output channels ``[c0, c1)``. Its
operands, each a box of the op's operand:

- the input rows the output rows read (``input_rows``: the halo of a kernel of ``KH`` rows, stride ``sy``,
  dilation ``dy``, the op's top padding), with the padding of the tile's own convolution recomputed so that it
  yields exactly the rows ``[y0, y1)`` (rows outside the image stay padding);
- CONV2D: every input channel, the weights and bias of channels ``[c0, c1)`` (leading dimension: contiguous);
  DEPTHWISE_CONV2D and the pools: the input channels ``[c0, c1)`` (a strided box), depthwise weights
  ``[KH, KW, c0:c1, M]`` and bias ``[c0·M, c1·M)``; elementwise: the same rows of both inputs, all channels;
- a post-op's extra operand: its box broadcast the way the output is tiled (a dimension of extent 1 stays whole).

Choosing the tiles (``plan``): in stages, the first that fits wins. A stage is a budget (half the CMX, so the next
tile's data can arrive while one computes; then the whole CMX) and a set of channel splits: CONV2D splits output
channels in chunks of 16 (the DPU alignment: contiguous weights, stores in runs of whole chunks), then finer only
when nothing else fits; DEPTHWISE and the pools split rows first (a channel range of their input is a strided box
of short runs) and channels only when rows alone do not fit. Within a stage, the splits whose operands fit the budget
(each buffer rounded up to the CMX's alignment) are estimated with the cost model's rates: ``max(DMA cycles / DMA
engines, NCE cycles / min(tiles, clusters))``; the cheapest wins (ties: fewer tiles). When not even one output row
of the narrowest channel range fits, the op cannot run on this device: ``TileError`` names the sizes.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

Operand = tuple[tuple[int, ...], int]

NCE_KERNELS = frozenset({"tosa.conv2d", "tosa.depthwise_conv2d", "tosa.max_pool2d", "tosa.avg_pool2d",
                         "tosa.add", "tosa.mul"})
"""The kernels the NCE runs (the rest are SHAVE kernels)."""

NCE_POST_OPS = frozenset({"tosa.clamp", "tosa.sigmoid", "tosa.tanh", "tosa.abs", "tosa.negate", "tosa.rescale",
                          "tosa.add", "tosa.sub", "tosa.mul", "tosa.maximum", "tosa.minimum"})
"""Post-ops the NCE's post-processing applies (ReLU/clamp, the LUT activations, requantization, an elementwise
operand); a kernel with any other post-op runs on a SHAVE."""


@dataclass(frozen=True)
class NceRules:
    """Device limits of one NCE: largest kernel side, largest stride, the channel alignment of its DPUs."""

    max_kernel: int = 11
    max_stride: int = 8
    channel_alignment: int = 16


NCE_RULES = NceRules()

_CONV = ("tosa.conv2d", "tosa.depthwise_conv2d")
_POOL = ("tosa.max_pool2d", "tosa.avg_pool2d")
_FLOAT_SIZES = (2, 4)


class TileError(ValueError):
    """An NCE op whose smallest tile does not fit the CMX."""


@dataclass(frozen=True)
class Tile:
    """Sample ``n``, output rows ``[y0, y1)``, output channels ``[c0, c1)``, on NCE cluster ``cluster``."""

    n: int
    y0: int
    y1: int
    c0: int
    c1: int
    cluster: int = 0


def _window(kernel: str, attrs: dict[str, Any], ins: Sequence[Operand]) -> tuple[int, int, int, int]:
    """``(KH, KW, stride_y, dilation_y)`` of a windowed kernel; elementwise: (1, 1, 1, 1)."""
    if kernel == "tosa.conv2d":
        kh, kw = ins[1][0][1], ins[1][0][2]
    elif kernel == "tosa.depthwise_conv2d":
        kh, kw = ins[1][0][0], ins[1][0][1]
    elif kernel in _POOL:
        kh, kw = attrs["kernel"]
    else:
        return 1, 1, 1, 1
    dil = attrs.get("dilation", [1, 1])
    return int(kh), int(kw), int(attrs["stride"][0]), int(dil[0])


def runs_on_nce(kernel: str, attrs: dict[str, Any], ins: Sequence[Operand], outs: Sequence[Operand],
                post_ops: Sequence[str], rules: NceRules = NCE_RULES) -> bool:
    """Whether the NCE runs this kernel (module docstring); its operands as ``(shape, itemsize)``."""
    if kernel not in NCE_KERNELS or len(outs) != 1 or any(p not in NCE_POST_OPS for p in post_ops):
        return False
    if len(outs[0][0]) != 4 or any(len(s) != 4 for s, _ in ins[:1]):
        return False
    if kernel in ("tosa.add", "tosa.mul"):
        return len(ins) >= 2 and ins[0][0] == ins[1][0] == outs[0][0] and ins[0][1] in (*_FLOAT_SIZES, 4)
    if ins[0][1] not in (1, *_FLOAT_SIZES):  # i8 / f16 / f32 (int16 inputs: TOSA's 16x8 mode, a SHAVE kernel)
        return False
    kh, kw, _, dil = _window(kernel, attrs, ins)
    stride = [int(s) for s in attrs["stride"]]
    dilation = [int(d) for d in attrs.get("dilation", [1, 1])]
    return (max(kh, kw) <= rules.max_kernel and max(stride) <= rules.max_stride and dilation == [1, 1]
            and (kernel != "tosa.conv2d" or len(ins) >= 3))


def input_rows(kernel: str, attrs: dict[str, Any], ins: Sequence[Operand], y0: int, y1: int) -> tuple[int, int, int, int]:
    """``(first input row, end input row, pad_top, pad_bottom)`` of the tile of output rows ``[y0, y1)``: the rows
    clipped to the image and the padding that makes the tile's convolution produce exactly ``y1 - y0`` rows."""
    kh, _, sy, dy = _window(kernel, attrs, ins)
    top = int(attrs["pad"][0]) if "pad" in attrs else 0
    height = ins[0][0][1]
    lo = y0 * sy - top
    hi = (y1 - 1) * sy - top + (kh - 1) * dy + 1
    return max(lo, 0), min(hi, height), max(-lo, 0), max(hi - height, 0)


def _aligned(n: int, alignment: int) -> int:
    return -(-n // alignment) * alignment


def channel_count(kernel: str, outs: Sequence[Operand]) -> int:
    """The output channels a tile ranges over."""
    return outs[0][0][3]


def splits_channels(kernel: str) -> bool:
    """Whether the op's channels can be split into tiles (not the elementwise ops: they split by rows only)."""
    return kernel not in ("tosa.add", "tosa.mul")


def tile_operands(kernel: str, attrs: dict[str, Any], ins: Sequence[Operand], outs: Sequence[Operand],
                  tile: Tile) -> tuple[list[tuple[tuple[int, ...], tuple[int, ...]]], tuple[int, ...]]:
    """The box ``(offsets, sizes)`` of each input the tile reads (in ``ins`` order; post-op operands broadcast like
    the output) and the shape of its output."""
    out_shape = outs[0][0]
    rows = tile.y1 - tile.y0
    ch = tile.c1 - tile.c0
    out_box = (tile.n, tile.y0, 0, tile.c0), (1, rows, out_shape[2], ch)
    boxes: list[tuple[tuple[int, ...], tuple[int, ...]]] = []
    r0, r1, _, _ = input_rows(kernel, attrs, ins, tile.y0, tile.y1)
    in_shape = ins[0][0]
    if kernel == "tosa.conv2d":
        boxes.append(((tile.n, r0, 0, 0), (1, r1 - r0, in_shape[2], in_shape[3])))
        w = ins[1][0]
        boxes.append(((tile.c0, 0, 0, 0), (ch, w[1], w[2], w[3])))
        boxes.append(((tile.c0,), (ch,)))
        rest = ins[3:]
    elif kernel == "tosa.depthwise_conv2d":
        w = ins[1][0]
        mult = w[3]
        c0, c1 = tile.c0 // mult, tile.c1 // mult
        boxes.append(((tile.n, r0, 0, c0), (1, r1 - r0, in_shape[2], c1 - c0)))
        boxes.append(((0, 0, c0, 0), (w[0], w[1], c1 - c0, mult)))
        boxes.append(((tile.c0,), (ch,)))
        rest = ins[3:]
    elif kernel in _POOL:
        boxes.append(((tile.n, r0, 0, tile.c0), (1, r1 - r0, in_shape[2], ch)))
        rest = ins[1:]
    else:
        boxes += [out_box, out_box]
        rest = ins[2:]
    for shape, _ in rest:  # post-op operands: broadcast to the output
        offs = tuple(0 if d == 1 else o for d, o in zip(shape, out_box[0]))
        sizes = tuple(1 if d == 1 else s for d, s in zip(shape, out_box[1]))
        boxes.append((offs, sizes))
    return boxes, out_box[1]


def tile_bytes(kernel: str, attrs: dict[str, Any], ins: Sequence[Operand], outs: Sequence[Operand], tile: Tile,
               alignment: int) -> int:
    """The CMX bytes of one tile's operands (each buffer rounded up to ``alignment``)."""
    boxes, out = tile_operands(kernel, attrs, ins, outs, tile)
    total = _aligned(math.prod(out) * outs[0][1], alignment)
    for (_, sizes), (_, item) in zip(boxes, ins):
        total += _aligned(math.prod(sizes) * item, alignment)
    return total


def _ranges(total: int, parts: int, quantum: int = 1) -> list[tuple[int, int]]:
    """``[0, total)`` in ``parts`` ranges as even as possible, each boundary a multiple of ``quantum``."""
    chunk = _aligned(-(-total // parts), quantum)
    return [(lo, min(lo + chunk, total)) for lo in range(0, total, chunk)]


@dataclass(frozen=True)
class Rates:
    """What ``plan`` estimates tiles with: DMA bytes per cycle and per-transfer overhead, NCE MACs (or elements) per
    cycle and per-task overhead, the number of DMA engines and NCE clusters."""

    dma_bytes_per_cycle: float
    dma_overhead: int
    nce_per_cycle: int
    nce_overhead: int
    dma_engines: int
    clusters: int


def _shapes(tiles: list[Tile], oh: int) -> dict[tuple[int, ...], tuple[Tile, int]]:
    """Tiles by what their operands' sizes depend on (rows, channels, touching the top or bottom edge): one
    representative and a count each, so sizes and estimates are computed once per kind of tile."""
    kinds: dict[tuple[int, ...], tuple[Tile, int]] = {}
    for t in tiles:
        key = (t.y1 - t.y0, t.c1 - t.c0, t.y0 == 0, t.y1 == oh)
        rep, count = kinds.get(key, (t, 0))
        kinds[key] = (rep, count + 1)
    return kinds


def _estimate(kernel: str, attrs: dict[str, Any], ins: Sequence[Operand], outs: Sequence[Operand],
              tiles: list[Tile], rates: Rates) -> float:
    dma = nce = 0.0
    for t, count in _shapes(tiles, outs[0][0][1]).values():
        dma_t, nce_t = _tile_estimate(kernel, attrs, ins, outs, t, rates)
        dma, nce = dma + count * dma_t, nce + count * nce_t
    return max(dma / rates.dma_engines, nce / min(len(tiles), rates.clusters))


def _tile_estimate(kernel: str, attrs: dict[str, Any], ins: Sequence[Operand], outs: Sequence[Operand],
                   t: Tile, rates: Rates) -> tuple[float, float]:
    """(DMA cycles, NCE cycles) of one tile by ``rates``."""
    boxes, out = tile_operands(kernel, attrs, ins, outs, t)
    moved = math.prod(out) * outs[0][1] + sum(math.prod(s) * item for (_, s), (_, item) in zip(boxes, ins))
    dma = (len(boxes) + 1) * rates.dma_overhead + moved / rates.dma_bytes_per_cycle
    work = math.prod(out)
    if kernel == "tosa.conv2d":
        work *= math.prod(ins[1][0][1:])
    elif kernel == "tosa.depthwise_conv2d":
        work *= math.prod(ins[1][0][:2])
    return dma, rates.nce_overhead + work / rates.nce_per_cycle


def plan(kernel: str, attrs: dict[str, Any], ins: Sequence[Operand], outs: Sequence[Operand], capacity: int,
         alignment: int, rates: Rates, first_cluster: int = 0, rules: NceRules = NCE_RULES) -> list[Tile]:
    """The tiles of one NCE op (module docstring), spread round-robin over the clusters from ``first_cluster``."""
    n, oh, _, oc = outs[0][0]
    mult = ins[1][0][3] if kernel == "tosa.depthwise_conv2d" else 1
    quantum = _aligned(rules.channel_alignment if oc > rules.channel_alignment else 1, mult)
    whole = [1]
    aligned = sorted({-(-oc // c) for c in range(quantum, _aligned(oc, quantum) + 1, quantum)})
    finer = sorted({-(-oc // c) for c in range(mult, quantum, mult)} - set(aligned))
    if not splits_channels(kernel):
        stages = [(capacity // 2, whole, 1), (capacity, whole, 1)]
    elif kernel == "tosa.conv2d":  # output channels split the weights (contiguous) and the stores (runs of chunks)
        stages = [(capacity // 2, aligned, quantum), (capacity, aligned, quantum), (capacity, finer, mult)]
    else:  # a channel range of a depthwise / pool input is a strided box: rows first
        stages = [(capacity // 2, whole, 1), (capacity, whole, 1), (capacity // 2, aligned, quantum),
                  (capacity, aligned, quantum), (capacity, finer, mult)]
    for budget, chunk_counts, step in stages:
        best: tuple[float, int, list[Tile]] | None = None
        for parts in chunk_counts:
            chans = _ranges(oc, parts, step)
            lo_rows, hi_rows = 1, oh  # the most rows per tile that fit: binary search on the first channel range
            probe = Tile(0, 0, 1, chans[0][0], chans[0][1])
            if tile_bytes(kernel, attrs, ins, outs, probe, alignment) > budget:
                continue
            while lo_rows < hi_rows:
                mid = (lo_rows + hi_rows + 1) // 2
                rows = max(tile_bytes(kernel, attrs, ins, outs, Tile(0, y0, min(y0 + mid, oh), *chans[0]), alignment)
                           for y0 in (0, max(0, (oh - mid) // 2 // mid * mid)))
                lo_rows, hi_rows = (mid, hi_rows) if rows <= budget else (lo_rows, mid - 1)
            fewest = -(-oh // lo_rows)
            for row_parts in sorted({fewest, min(oh, max(fewest, rates.clusters)), min(oh, 2 * max(fewest, 1))}):
                tiles = [Tile(b, y0, y1, c0, c1) for b in range(n) for y0, y1 in _ranges(oh, row_parts)
                         for c0, c1 in chans]
                if any(tile_bytes(kernel, attrs, ins, outs, t, alignment) > budget
                       for t, _ in _shapes(tiles, oh).values()):
                    continue
                cost = _estimate(kernel, attrs, ins, outs, tiles, rates)
                if best is None or (cost, len(tiles)) < (best[0], best[1]):
                    best = (cost, len(tiles), tiles)
        if best is not None:
            return [Tile(t.n, t.y0, t.y1, t.c0, t.c1, (first_cluster + i) % rates.clusters)
                    for i, t in enumerate(best[2])]
    smallest = Tile(0, 0, 1, 0, min(oc, mult) if splits_channels(kernel) else oc)
    raise TileError(f"its smallest tile (1 output row, {smallest.c1} channel(s)) needs "
                    f"{tile_bytes(kernel, attrs, ins, outs, smallest, alignment)} bytes of CMX but a cluster has "
                    f"{capacity}")


__all__ = ["NCE_KERNELS", "NCE_POST_OPS", "NCE_RULES", "NceRules", "Rates", "Tile", "TileError", "input_rows",
           "plan", "runs_on_nce", "splits_channels", "tile_bytes", "tile_operands"]
