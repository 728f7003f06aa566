"""int8 / uint8 graph inputs and outputs of quantized ``tosa`` modules for ``writer_quant`` (NNEF 1.0.3 §5.3, §7.1).

Interface decision: NNEF 1.0.3 has no integer activations, and our reader (``lowering_quant``, "Interface
decision") keeps a graph's inputs and outputs **float**. So an int8 graph input ``q`` with zero point ``zp`` and
scale ``s`` is written as ``external<scalar>`` that takes the *real values* ``(q − zp)·s`` (not the codes), with a
``linear_quantize`` entry in graph.quant: the reader pseudo-quantizes it and its integer consumers convert it back
to exactly the codes ``q`` (the values lie on the grid). An int8 graph output is written as the float tensor of
its real values ``(q − zp)·s`` with its entry (the reader dequantizes it in f32: ``f32(q − zp)·f32(s)``, one
rounding, so distinct codes stay distinct and the codes are ``rint(y / s) + zp``). A uint8 input / output (ONNX
QOperator's uint8 models: a unit-scale RESCALE to / from int8 next to the boundary) is the same tensor as the
int8 codes ``u − 128``: it gets the zero point ``zp₈ + 128`` in its own domain and the same real values.

Scale and zero point of an input: the integer module only fixes ratios of scales, so an input gets the scale the
solver gives it (``writer_quant_scales.solve_scales``: forced when the input is dequantized, linked through data
movement and int8→int8 RESCALEs, else free — a conv / fully_connected consumer absorbs any input scale in its
weight scale). Its zero point is the one its consumers subtract (seen through data movement and unit-scale
RESCALE views): ``input_zp`` of a CONV2D / DEPTHWISE_CONV2D / FULLY_CONNECTED / RESCALE / AVG_POOL2D, ``A_zp`` /
``B_zp`` of a MATMUL, the constant of a dequantization; consumers that take no zero point (MAX_POOL2D, CLAMP,
a graph output) leave it free (0). Two consumers that disagree are refused (``FrontendError`` naming the op).
The scale and zero point of each boundary tensor are the graph.quant entry of that name (``min``/``max``,
``scale = (max − min)/255``, ``zp = −128 − min/scale`` for int8), which is how a user of the written graph maps
codes to the real values it takes and returns.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from xdsl.ir import BlockArgument, Operation, SSAValue

from nnkiln.dialects.tosa.base import Kind
from nnkiln.frontends.common.arith import shape_of
from nnkiln.frontends.nnef.writer import const_of, get, kind, lit
from nnkiln.ir.errors import FrontendError

if TYPE_CHECKING:
    from nnkiln.frontends.nnef.writer_quant import QuantWriter

# codes of a boundary kind = int8 codes + this offset (uint8 = int8 + 128)
BOUNDARY_OFFSET = {Kind.I8: 0, Kind.U8: 128}

_PASS = ("tosa.transpose", "tosa.reshape", "tosa.identity", "tosa.slice", "tosa.tile", "tosa.reverse",
         "tosa.max_pool2d", "tosa.clamp", "tosa.concat")


def boundary_args(func_args: list[BlockArgument]) -> dict[SSAValue, int]:
    """The int8 / uint8 function arguments and the offset of their codes from int8 codes."""
    return {a: BOUNDARY_OFFSET[kind(a)] for a in func_args
            if hasattr(a.type, "element_type") and kind(a) in BOUNDARY_OFFSET}


def consumer_zps(qw: QuantWriter, v: SSAValue, off: int, seen: set[SSAValue],
                 out: list[tuple[int, Operation]]) -> None:
    """(zero point of the int8 codes of ``v`` − ``off``, consumer) for each consumer of ``v`` that subtracts a
    zero point, following data movement and unit-scale RESCALE views (``v`` = codes + ``off``); also used for
    the output of an AVG_POOL2D (``writer_quant_pool``)."""
    if v in seen:
        return
    seen.add(v)
    for use in v.uses:
        op = use.operation
        p = dict(op.properties.items())
        if op in qw.view_ops:
            _, voff = qw.views[op.results[0]]
            consumer_zps(qw, op.results[0], voff, seen, out)
        elif op.name in _PASS:
            consumer_zps(qw, op.results[0], off, seen, out)
        elif op.name in ("tosa.conv2d", "tosa.depthwise_conv2d", "tosa.fully_connected") and use.index == 0:
            out.append((int(get(p, "input_zp", 0) or 0) - off, op))  # type: ignore[arg-type]
        elif op.name == "tosa.matmul":
            out.append((int(get(p, "A_zp" if use.index == 0 else "B_zp", 0) or 0) - off, op))  # type: ignore[arg-type]
        elif op.name in ("tosa.rescale", "tosa.avg_pool2d"):
            out.append((int(get(p, "input_zp", 0) or 0) - off, op))  # type: ignore[arg-type]


def input_zero_point(qw: QuantWriter, arg: SSAValue) -> int:
    """The int8 zero point of graph input ``arg`` (see the module docstring): a dequantization's, else its
    consumers', else 0."""
    f = qw.forced.get(arg)
    found: list[tuple[int, Operation]] = []
    consumer_zps(qw, arg, qw.arg_off.get(arg, 0), set(), found)
    zps = sorted({z for z, _ in found} | ({f[1]} if f is not None else set()))
    if len(zps) > 1:
        first = f[1] if f is not None else found[0][0]
        op = next(o for z, o in found if z != first)
        off = qw.arg_off.get(arg, 0)
        raise FrontendError(f"cannot export '{op.name}' to NNEF 1.0.3: it reads its {arg.type} graph input with zero "
                            f"point {next(z for z, o in found if o is op) + off}, another consumer with {first + off} "
                            "(a graph input has one quantization)")
    zp = zps[0] if zps else 0
    if not -128 <= zp <= 127:
        what = found[0][1].name if found else "tosa.cast"
        raise FrontendError(f"cannot export '{what}' to NNEF 1.0.3: the zero point of its {arg.type} graph input "
                            "lies outside the int8 codes")
    return zp


def graph_input(qw: QuantWriter, arg: SSAValue, name: str) -> bool:
    """Write an int8 / uint8 graph input as a float ``external`` of real values with its graph.quant entry;
    False when ``arg`` is not such an input."""
    if arg not in qw.arg_off:
        return False
    zp = input_zero_point(qw, arg)
    q = qw.out_qp(arg, qw.target.get(arg, 0.05), zp)
    qw.w.lines.append(f"    {name} = external(shape = {lit(list(shape_of(arg)) or [1])});")
    qw.publish(arg, name, q)
    qw.boundary_in[arg] = (q.scale, zp + qw.arg_off[arg])
    return True


def graph_output(qw: QuantWriter, v: SSAValue, name: str) -> bool:
    """Write an int8 (or uint8 view of int8) graph output as the float tensor of its real values with its
    graph.quant entry; False when ``v`` is not an integer output."""
    if not hasattr(v.type, "element_type") or kind(v) not in BOUNDARY_OFFSET:
        return False
    if const_of(v) is not None:
        raise FrontendError(f"cannot export output '{name}' of type {v.type} to NNEF 1.0.3: a constant integer graph "
                            "output has no quantization to write it with")
    src, off = qw.source(v)
    if off != BOUNDARY_OFFSET[kind(v)] or not (kind(src) is Kind.I8 or src in qw.arg_off):
        raise FrontendError(f"cannot export output '{name}' of type {v.type} to NNEF 1.0.3: it is not the int8 codes "
                            "of a quantized tensor (or those codes + 128 as uint8)")
    q = qw.qp.get(src)
    if q is None:
        raise FrontendError(f"cannot export output '{name}' of type {v.type} to NNEF 1.0.3: it does not come from a "
                            "quantized pattern the NNEF writer can express")
    qw.w.lines.append(f"    {name} = copy({qw.w.name(src)});")
    qw.w.quant[name] = q.entry()
    qw.boundary_out[name] = (q.scale, q.zp + off)
    return True


def random_codes(rng: np.random.Generator, k: Kind, shape: tuple[int, ...]) -> np.ndarray:
    """Random codes over the whole range of an int8 / uint8 boundary kind."""
    lo = -128 + BOUNDARY_OFFSET[k]
    return rng.integers(lo, lo + 256, shape).astype(np.int8 if k is Kind.I8 else np.uint8)


def real_values(codes: np.ndarray, scale: float, zp: int) -> np.ndarray:
    """``(q − zp)·s`` in f32 (one rounding): the values the written graph's input takes for codes ``q``."""
    return ((codes.astype(np.int64) - zp) * scale).astype(np.float32)


def dequantized(codes: np.ndarray, scale: float, zp: int) -> np.ndarray:
    """The reader's dequantization of a graph output's codes, bit for bit: ``f32(q − zp)·f32(s)``."""
    return (codes.astype(np.int64) - zp).astype(np.float32) * np.float32(scale)


def verify(qw: QuantWriter, folder: str, trials: int = 2) -> None:
    """Re-import ``folder`` and compare outputs bit for bit with the original on random inputs. Integer
    graph inputs get random codes over their whole range (the re-imported graph their real values
    ``(q − zp)·s``); an integer output's codes must dequantize to exactly the re-imported
    float output (``f32(q − zp)·f32(s)``, one-to-one on codes)."""
    import nnkiln.reference as ref
    from nnkiln.frontends.nnef import load_nnef
    from nnkiln.reference import input_names

    module2 = load_nnef(folder)
    names = input_names(qw.func)
    rng = np.random.default_rng(12345)
    for _ in range(trials):
        feeds, feeds2 = {}, {}
        for nm, arg in zip(names, qw.func.body.blocks[0].args):
            shp = shape_of(arg)
            k = kind(arg)
            if arg in qw.boundary_in:
                s, zp = qw.boundary_in[arg]
                feeds[nm] = random_codes(rng, k, tuple(shp))
                feeds2[nm] = real_values(feeds[nm], s, zp)
                continue
            if k is Kind.F32:
                feeds[nm] = (rng.standard_normal(shp) * 2).astype(np.float32)
            elif k is Kind.BOOL:
                feeds[nm] = rng.random(shp) < 0.5
            else:
                feeds[nm] = rng.integers(-100, 100, shp).astype(np.int32)
        a = ref.run(qw.func.parent_op(), feeds)  # type: ignore[arg-type]
        b = ref.run(module2, {**feeds, **feeds2})
        for (ka, va), (kb, vb) in zip(a.items(), b.items()):
            if kb in qw.boundary_out:
                va = dequantized(np.asarray(va), *qw.boundary_out[kb])
            if not np.array_equal(np.asarray(va), np.asarray(vb)):
                raise FrontendError(f"cannot export to NNEF 1.0.3 faithfully: the written quantized graph re-imports "
                                    f"with different results for output '{ka}' (the reader does not rebuild the "
                                    "same integer arithmetic for some pattern)")
