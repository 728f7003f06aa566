"""``cmx-tiling`` (architecture spec §6.2): NCE ops as tiles that read and write only their cluster's CMX.

What: every ``buf.kernel`` the NCE runs (``nnkiln.analysis.nce_tiles.runs_on_nce``) is cut into tiles
(``nce_tiles.plan``: output rows with their input halo, output channels, samples) spread round-robin over the
NCE clusters. Each tile becomes:

- a ``buf.alloc {memory = "CMX<k>"}`` per operand and for the output tile (k = the tile's cluster);
- one ``buf.copy`` per operand from its box of the DDR / constant / io buffer into CMX (a ``buf.subview`` then a
  plain copy when the box is one contiguous range, else a box copy ``src_offsets``: the DMA's strided transfer);
- the ``buf.kernel`` on the CMX buffers, marked ``nnkiln.nce = k`` (its cluster), with the padding recomputed for
  its rows (``nce_tiles.input_rows``); post-ops and their operand indices unchanged;
- one ``buf.copy`` of the output tile into its box of the op's output buffer (contiguous rows: a subview; a
  channel range: a box copy ``dst_offsets``).

The op's result is replaced by its output buffer (the tiles write it). Residency: a single-tile op whose every user
is a single-tile NCE op reading all of its result keeps that result in CMX (no store, no loads: the users run on
its cluster and read the CMX buffer); the feasible scheduler spills it to DDR and pulls it back when CMX runs out
(``feasible-allocation``). Kernels the NCE does not run stay as they are: ``wrap-into-async-regions`` puts them on a SHAVE. Tiles of consecutive ops start on the next cluster, so
small ops spread over the clusters too.

Why: the NCE reads and writes only its own cluster's CMX (917504 bytes on ``npu``, 262144 on ``npu-small``),
while activations and weights live in DDR; the copies become the DMA tasks that move them.

An op whose smallest tile (one output row, the narrowest channel range) does not fit a CMX is a
``NotExecutableError`` (the model is valid, this device cannot run it) naming the op, its operand shapes and the
bytes.

Legal before: buf IR (``tosa-to-buf``, ``fuse-post-ops``), one block per function. After: the same, every NCE
kernel reading and writing only ``CMX<k>`` allocations of its cluster ``k``.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from xdsl.context import Context
from xdsl.dialects.builtin import DenseArrayBase, DictionaryAttr, IntegerAttr, MemRefType, ModuleOp, i64
from xdsl.dialects.func import FuncOp
from xdsl.ir import Block, Operation, SSAValue
from xdsl.passes import ModulePass

from nnkiln.analysis import nce_tiles
from nnkiln.dialects.buf import NCE_ATTR, AllocOp, CopyOp, KernelOp, SubviewOp, contiguous_box, shape_and_itemsize
from nnkiln.errors import NotExecutableError
from nnkiln.targets import ExecutorKind, MemoryKind, Target


def rates(target: Target) -> nce_tiles.Rates:
    """The cost model's numbers ``nce_tiles.plan`` estimates tiles with."""
    from nnkiln.targets.cost import DMA_OVERHEAD, bytes_per_cycle, instance_rates

    nce, dma = target.executor_of_kind(ExecutorKind.NCE), target.executor_of_kind(ExecutorKind.DMA)
    assert nce is not None and dma is not None
    macs, _, overhead = instance_rates(target, ExecutorKind.NCE)
    return nce_tiles.Rates(float(bytes_per_cycle(target.default_memory, target.clock_ghz)), DMA_OVERHEAD, macs,
                           overhead, dma.count, nce.count)


def _memref(element_type: Any, shape: tuple[int, ...]) -> MemRefType:
    return MemRefType(element_type, list(shape))


@dataclass
class _Emitter:
    """Inserts a tile's ops before ``anchor`` and its CMX allocations at the top of ``block``."""

    block: Block
    anchor: Operation

    def add(self, op: Operation) -> Operation:
        self.block.insert_op_before(op, self.anchor)
        return op

    def alloc(self, element_type: Any, shape: tuple[int, ...], cluster: int) -> SSAValue:
        a = AllocOp(_memref(element_type, shape), memory=f"CMX{cluster}")
        first = self.block.first_op
        assert first is not None
        self.block.insert_op_before(a, first)
        return a.result

    def load(self, src: SSAValue, offsets: tuple[int, ...], sizes: tuple[int, ...], cluster: int) -> SSAValue:
        """A CMX copy of the box ``[offsets, offsets + sizes)`` of ``src``, read through the slices and transposes
        that produce ``src`` (``fold_views``)."""
        elem = src.type.element_type  # type: ignore[attr-defined]
        dst = self.alloc(elem, sizes, cluster)
        src, offsets, perm = fold_views(src, offsets, sizes)
        if perm is not None:
            self.add(CopyOp(src, dst, src_offsets=offsets, src_perm=perm))
            return dst
        shape = tuple(int(d) for d in src.type.get_shape())  # type: ignore[attr-defined]
        if tuple(sizes) == shape:
            self.add(CopyOp(src, dst))
        elif contiguous_box(shape, offsets, sizes):
            view = self.add(SubviewOp(src, offsets, sizes, _memref(elem, sizes)))
            self.add(CopyOp(view.results[0], dst))
        else:
            self.add(CopyOp(src, dst, src_offsets=offsets))
        return dst

    def store(self, src: SSAValue, dst: SSAValue, offsets: tuple[int, ...]) -> None:
        """Copy CMX buffer ``src`` into the box of ``dst`` at ``offsets``."""
        shape = tuple(int(d) for d in dst.type.get_shape())  # type: ignore[attr-defined]
        sizes = tuple(int(d) for d in src.type.get_shape())  # type: ignore[attr-defined]
        if sizes == shape:
            self.add(CopyOp(src, dst))
        elif contiguous_box(shape, offsets, sizes):
            view = self.add(SubviewOp(dst, offsets, sizes, src.type))  # type: ignore[arg-type]
            self.add(CopyOp(src, view.results[0]))
        else:
            self.add(CopyOp(src, dst, dst_offsets=offsets))


def _foldable(v: SSAValue) -> KernelOp | None:
    """The SLICE or TRANSPOSE kernel producing ``v`` (one plain kernel: no post-ops, no operand permutations)."""
    owner = v.owner
    if (isinstance(owner, KernelOp) and owner.kernel.data in ("tosa.slice", "tosa.transpose") and not owner.post_ops
            and owner.operand_perms is None and len(owner.ins) >= 1):
        return owner
    return None


def fold_views(v: SSAValue, offsets: tuple[int, ...], sizes: tuple[int, ...]
               ) -> tuple[SSAValue, tuple[int, ...], list[int] | None]:
    """``(source, offsets in it, perm)`` such that the box ``[offsets, offsets + sizes)`` of ``v`` is
    ``transpose(source[box], perm)`` (``perm`` ``None``: the identity), reading through the SLICE and TRANSPOSE
    kernels that produce ``v``: a DMA reads any box in any dimension order, so those SHAVE kernels need not run for
    an NCE operand (they are erased when nothing else reads them)."""
    perm = list(range(len(sizes)))
    offs = list(offsets)
    while (k := _foldable(v)) is not None:
        attrs = k.tosa_attrs()
        if k.kernel.data == "tosa.slice":
            offs = [o + int(s) for o, s in zip(offs, attrs["start"])]
        else:  # v = transpose(u, p): v[i] = u[j] with j[p[d]] = i[d]
            p = [int(x) for x in attrs["perms"]]
            moved = [0] * len(offs)
            for d, pd in enumerate(p):
                moved[pd] = offs[d]
            offs = moved
            perm = [p[perm[d]] for d in range(len(perm))]
        v = k.ins[0]
    identity = perm == list(range(len(perm)))
    return v, tuple(offs), None if identity else perm


def _base_operands(kernel: str) -> int:
    """How many of a kernel's ``ins`` are its own operands (the rest are post-op operands)."""
    return {"tosa.conv2d": 3, "tosa.depthwise_conv2d": 3, "tosa.max_pool2d": 1, "tosa.avg_pool2d": 1}.get(kernel, 2)


def nce_candidate(op: KernelOp) -> bool:
    """Whether the NCE runs ``op`` (``nce_tiles.runs_on_nce``, post-op operands being extra ``ins``)."""
    kernel = op.kernel.data
    posts = [p.data for p in op.post_ops.data] if op.post_ops else []
    base = _base_operands(kernel)
    if any("operand" in p and p["operand"].value.data < base for p in posts):  # type: ignore[attr-defined]
        return False
    if len(op.ins) < base or len(op.ins) != base + sum("operand" in p for p in posts):
        return False
    return nce_tiles.runs_on_nce(kernel, op.tosa_attrs(), [shape_and_itemsize(v) for v in op.ins],
                                 [shape_and_itemsize(v) for v in op.outs], [p["kernel"].data for p in posts])  # type: ignore[attr-defined]


def plan_kernel(op: KernelOp, target: Target, first_cluster: int, cmx_bytes: int = 0) -> list[nce_tiles.Tile]:
    """The tiles of NCE kernel ``op`` (``nce_tiles.plan``) in ``cmx_bytes`` of CMX (0: the device's); a
    ``NotExecutableError`` naming the op when none fits."""
    cmx = target.memory_of_kind(MemoryKind.CMX)
    assert cmx is not None
    kernel, attrs = op.kernel.data, op.tosa_attrs()
    ins, outs = [shape_and_itemsize(v) for v in op.ins], [shape_and_itemsize(v) for v in op.outs]
    capacity = min(cmx.size, cmx_bytes or cmx.size)
    try:
        return nce_tiles.plan(kernel, attrs, ins, outs, capacity, cmx.alignment, rates(target), first_cluster)
    except nce_tiles.TileError as err:
        shapes = ", ".join("x".join(map(str, s)) for s, _ in ins)
        raise NotExecutableError(f"cmx-tiling: '{kernel}' ({shapes} -> {'x'.join(map(str, outs[0][0]))}) cannot "
                                 f"run on '{target.name}': {err}") from None


def _whole_operand(op: KernelOp, tile: nce_tiles.Tile, index: int) -> bool:
    """Whether the tile reads all of ``op.ins[index]`` (so a resident CMX copy of it can be read as it is)."""
    ins, outs = [shape_and_itemsize(v) for v in op.ins], [shape_and_itemsize(v) for v in op.outs]
    boxes, _ = nce_tiles.tile_operands(op.kernel.data, op.tosa_attrs(), ins, outs, tile)
    return tuple(boxes[index][1]) == ins[index][0]


def resident_outputs(kernels: list[KernelOp], plans: dict[KernelOp, list[nce_tiles.Tile]]) -> set[KernelOp]:
    """The single-tile NCE kernels whose result stays in CMX: every user is a single-tile NCE kernel reading all of
    it, the result is a fresh buffer (not a graph output or a view of one), and the users then run on the producer's
    cluster (a user pinned to another cluster by an earlier resident input keeps the producer off this list)."""
    pinned: dict[KernelOp, int] = {}
    keep: set[KernelOp] = set()
    for p in kernels:
        if len(plans[p]) != 1 or not isinstance(p.outs[0].owner, AllocOp):
            continue
        uses = list(p.results[0].uses)
        users = [u.operation for u in uses]
        cluster = plans[p][0].cluster
        if not uses or any(not isinstance(u, KernelOp) or u not in plans or len(plans[u]) != 1
                           or not _whole_operand(u, plans[u][0], use.index) or pinned.get(u, cluster) != cluster
                           for u, use in zip(users, uses)):
            continue
        keep.add(p)
        for u in users:
            pinned[u] = cluster  # type: ignore[index]
            plans[u] = [replace(plans[u][0], cluster=cluster)]  # type: ignore[index]
    return keep


def tile_kernel(op: KernelOp, target: Target, tiles: list[nce_tiles.Tile], resident: dict[SSAValue, SSAValue],
                keep: bool) -> None:
    """Replace NCE kernel ``op`` by its ``tiles`` (module docstring). Operands in ``resident`` are read from the CMX
    buffer there (no load); with ``keep`` the single tile's output stays in CMX (no store) and is recorded in
    ``resident`` for its users, and ``op`` is left for the caller to erase once they are rewritten."""
    kernel, attrs = op.kernel.data, op.tosa_attrs()
    ins, outs = [shape_and_itemsize(v) for v in op.ins], [shape_and_itemsize(v) for v in op.outs]
    block = op.parent
    assert isinstance(block, Block)
    em = _Emitter(block, op)
    out = op.outs[0]
    for tile in tiles:
        boxes, out_shape = nce_tiles.tile_operands(kernel, attrs, ins, outs, tile)
        cmx_ins = [resident[v] if v in resident else em.load(v, offs, sizes, tile.cluster)
                   for v, (offs, sizes) in zip(op.ins, boxes)]
        cmx_out = em.alloc(out.type.element_type, out_shape, tile.cluster)  # type: ignore[attr-defined]
        props = dict(op.attrs.data)
        if "pad" in props:
            _, _, top, bottom = nce_tiles.input_rows(kernel, attrs, ins, tile.y0, tile.y1)
            pad = list(attrs["pad"])
            props["pad"] = DenseArrayBase.from_list(i64, [top, bottom, pad[2], pad[3]])
        k = KernelOp(kernel, cmx_ins, [cmx_out], DictionaryAttr(props),
                     list(op.post_ops.data) if op.post_ops else None)
        k.attributes[NCE_ATTR] = IntegerAttr(tile.cluster, i64)
        k.location = op.location
        em.add(k)
        if keep:
            resident[op.results[0]] = cmx_out
        else:
            em.store(cmx_out, out, (tile.n, tile.y0, 0, tile.c0))
    producers = {v.owner for v in op.ins if _foldable(v) is not None}
    if keep:
        return
    op.results[0].replace_all_uses_with(out)
    op.detach()
    op.erase()
    _erase_dead(producers)


def _erase_dead(ops: set[Any]) -> None:
    """Erase the slices / transposes (and kernels left for erasure) nothing reads any more."""
    while ops:
        k = ops.pop()
        if isinstance(k, KernelOp) and not any(r.uses for r in k.results):
            ops.update(v.owner for v in k.ins if _foldable(v) is not None)
            k.detach()
            k.erase()


@dataclass(frozen=True)
class CmxTiling(ModulePass):
    """Cut every NCE kernel into tiles that fit one CMX, with the DMA copies around them."""

    name = "cmx-tiling"
    target: str = "npu"
    cmx_bytes: int = 0
    """Tile for this many bytes of each CMX (0: the device's capacity; ``feasible-allocation`` has the same option)."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        from nnkiln.targets import get_target

        target = get_target(self.target)
        nce = target.executor_of_kind(ExecutorKind.NCE)
        if nce is None:
            return
        for func in [f for f in op.body.block.ops if isinstance(f, FuncOp)]:
            kernels = [k for k in func.body.block.ops if isinstance(k, KernelOp) and nce_candidate(k)]
            plans: dict[KernelOp, list[nce_tiles.Tile]] = {}
            cluster = 0
            for k in kernels:
                plans[k] = plan_kernel(k, target, cluster, self.cmx_bytes)
                cluster = (cluster + len(plans[k])) % nce.count
            keep = resident_outputs(kernels, plans)
            resident: dict[SSAValue, SSAValue] = {}
            for k in kernels:
                tile_kernel(k, target, plans[k], resident, k in keep)
            dead = {v.owner for k in keep for v in k.ins}
            for k in reversed(kernels):  # users first: a kept kernel may read another's result
                if k in keep:
                    dead.discard(k)
                    k.detach()
                    k.erase()
            _erase_dead(dead)
