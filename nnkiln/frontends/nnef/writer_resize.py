"""RESIZE (TOSA 0.30 §2.12.1, float modes) → NNEF 1.0.3 for ``writer``.

TOSA samples output row ``oy`` at ``y = oy·stride + offset`` (f32), taps ``iy0 = max(floor(y), 0)``,
``iy1 = min(floor(y) + 1, IH − 1)`` with fraction ``dy = y − floor(y)`` (columns likewise). NNEF has no
general resize, so the writer picks, in this order:

1. NEAREST whose selected rows/columns are ``i // f`` (every input repeated ``f`` times) on both axes →
   ``nearest_upsample(factor = [fh, fw])``; rows/columns ``i·f`` → ``nearest_downsample``.
2. BILINEAR whose taps and fractions on both axes are exactly those of ``multilinear_upsample`` with one
   ``method`` (symmetric / asymmetric / aligned) and ``border = 'replicate'`` (our reader lowers it to a
   RESIZE of the input padded by one replicated row per side with stride ``1/f`` and offset ``1`` or
   ``1 − (f−1)/(2f)``; aligned: stride ``(x−1)/(x·f−1)``) → ``multilinear_upsample``. Decision: "exactly" is
   checked numerically per output index (same f32 fractions, same source rows after the replicate padding;
   the second tap is ignored where the fraction is 0), so the written op is bit-identical after re-import.
   In f32 the positions ``o·s + offset`` and ``o·s + offset + 1`` have the same fractions only when the
   stride is a power of two, so in practice ×2/×4/×8 (half-pixel or asymmetric) become
   ``multilinear_upsample`` and other factors (×3, align-corners) the exact expansion below.
3. Otherwise an exact expansion: the taps are gathered with ``slice``/``concat`` (constant indices) and
   TOSA's formula ``((v00·wy0)·wx0 + (v01·wy0)·wx1) + (v10·wy1)·wx0 + (v11·wy1)·wx1`` is written with the
   constant f32 weights ``1 − dy``, ``dy``, ``1 − dx``, ``dx`` in the same evaluation order (NEAREST: the
   gathered rows/columns ``d >= 0.5 ? i1 : i0``). This reproduces TOSA's f32 arithmetic bit for bit.

Integer RESIZE (int8/int16, ``shift`` fractions, int32/int48 results) has no NNEF form (✗).
"""

from __future__ import annotations

import numpy as np
from xdsl.ir import Operation

from nnkiln.dialects.tosa.base import Kind
from nnkiln.frontends.common.arith import shape_of
from nnkiln.frontends.nnef.writer import Writer, get, ints, kind, lit, unsupported

_F32 = np.float32


def _taps(out: int, size: int, stride: float, offset: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    o = np.arange(out, dtype=np.int64)
    pos = o.astype(_F32) * _F32(stride) + _F32(offset)
    i = np.floor(pos).astype(np.int64)
    d = pos - i.astype(_F32)
    return np.maximum(i, 0), np.minimum(i + 1, size - 1), d


def _reader_params(method: str, f: int, n: int) -> tuple[float, float]:
    """(stride, offset) our reader uses for ``multilinear_upsample`` on the input padded by 1."""
    from nnkiln.frontends.nnef.lowering_window import multilinear_sampling

    return multilinear_sampling(method, f, n)


def _multilinear_match(method: str, taps: list[tuple], ins: list[int], outs: list[int]) -> bool:
    for (i0, i1, d), n, out in zip(taps, ins, outs):
        if out % n:
            return False
        st, off = _reader_params(method, out // n, n)
        p0, p1, dp = _taps(out, n + 2, st, off)
        if np.any(p0 > p1):
            return False
        m0, m1 = np.clip(p0 - 1, 0, n - 1), np.clip(p1 - 1, 0, n - 1)
        if not (np.array_equal(dp, d) and np.array_equal(m0, i0) and np.array_equal(m1[d != 0], i1[d != 0])):
            return False
    return True


def write_resize(w: Writer, op: Operation, props: dict) -> str:
    from nnkiln.dialects.tosa.ops_image import _values

    if kind(op.operands[0]) is not Kind.F32:
        raise unsupported(op, f"integer RESIZE ({op.operands[0].type}) has no NNEF form")
    n, ih, iw, c = shape_of(op.operands[0])
    oh, ow = ints(props["output_size"])
    stride, offset = _values(props["stride"]), _values(props["offset"])
    mode = str(getattr(get(props, "mode"), "value", get(props, "mode"))).upper()
    taps = [_taps(oh, ih, stride[0], offset[0]), _taps(ow, iw, stride[1], offset[1])]
    if any(np.any(t[0] > t[1]) for t in taps):
        raise unsupported(op, "a sample position lies outside the input (unpredictable in TOSA)")
    x = w.name(op.operands[0])
    ins, outs = [ih, iw], [oh, ow]
    if mode == "NEAREST":
        idx = [np.where(d >= _F32(0.5), i1, i0) for i0, i1, d in taps]
        if all(o % i == 0 and np.array_equal(ix, np.arange(o) // (o // i)) for ix, i, o in zip(idx, ins, outs)):
            f = [o // i for i, o in zip(ins, outs)]
            if f == [1, 1]:
                return w.emit(f"copy({x})")
            y = w.emit(f"nearest_upsample({w.transpose(x, (0, 3, 1, 2))}, factor = {lit(f)})")
            return w.transpose(y, (0, 2, 3, 1))
        if all(i % o == 0 and np.array_equal(ix, np.arange(o) * (i // o)) for ix, i, o in zip(idx, ins, outs)):
            f = [i // o for i, o in zip(ins, outs)]
            y = w.emit(f"nearest_downsample({w.transpose(x, (0, 3, 1, 2))}, factor = {lit(f)})")
            return w.transpose(y, (0, 2, 3, 1))
        rows = w.gather(x, (n, ih, iw, c), 1, idx[0])
        return w.gather(rows, (n, oh, iw, c), 2, idx[1])
    for method in ("symmetric", "asymmetric", "aligned"):
        if _multilinear_match(method, taps, ins, outs):
            f = [o // i for i, o in zip(ins, outs)]
            y = w.emit(f"multilinear_upsample({w.transpose(x, (0, 3, 1, 2))}, factor = {lit(f)}, "
                       f"method = '{method}', border = 'replicate')")
            return w.transpose(y, (0, 2, 3, 1))
    (iy0, iy1, dy), (ix0, ix1, dx) = taps
    r0 = w.gather(x, (n, ih, iw, c), 1, iy0)
    r1 = w.gather(x, (n, ih, iw, c), 1, iy1)
    v00, v01 = w.gather(r0, (n, oh, iw, c), 2, ix0), w.gather(r0, (n, oh, iw, c), 2, ix1)
    v10, v11 = w.gather(r1, (n, oh, iw, c), 2, ix0), w.gather(r1, (n, oh, iw, c), 2, ix1)
    one = _F32(1)
    wy0, wy1 = w.variable((one - dy).reshape(1, oh, 1, 1)), w.variable(dy.reshape(1, oh, 1, 1))
    wx0, wx1 = w.variable((one - dx).reshape(1, 1, ow, 1)), w.variable(dx.reshape(1, 1, ow, 1))

    def term(v: str, a: str, b: str) -> str:
        return w.emit(f"mul({w.emit(f'mul({v}, {a})')}, {b})")

    acc = w.emit(f"add({term(v00, wy0, wx0)}, {term(v01, wy0, wx1)})")
    acc = w.emit(f"add({acc}, {term(v10, wy1, wx0)})")
    return w.emit(f"add({acc}, {term(v11, wy1, wx1)})")
