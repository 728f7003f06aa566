"""The NNEF 1.0.5 quantization algorithms of ``graph.quant``: ``zero_point_linear_quantize`` and
``min_max_linear_quantize`` (their bodies are in ``stdlib.nnef``), as nnef-tools writes them (e.g. from
TFLite: ``"t": zero_point_linear_quantize(zero_point = -128, scale = 0.0235, bits = 8, signed = true,
symmetric = false);``, per-channel ``zero_point``/``scale`` arrays for filters, ``bits = 32`` for biases).

Both describe a grid of integer codes ``q`` in ``[qmin, qmax]`` with ``real = (q - zp)·scale``:

* ``zero_point_linear_quantize(zero_point, scale, bits, signed, symmetric)``: ``r = 2^(b-1) - 1`` if signed
  else ``2^b - 1``; ``q = clamp(round(x/scale) + zp, lo, r)`` with ``lo = 0`` (unsigned), ``-r``
  (signed symmetric) or ``-r - 1`` (signed).
* ``min_max_linear_quantize(min, max, bits, signed, symmetric)``: ``r = 2^b - 1 - [signed ∧ symmetric]``,
  ``scale = (max - min)/r``; the code is ``k - p`` for ``k = round((clamp(x) - min)/scale)`` in ``0..r`` and
  ``p = 2^(b-1) - [symmetric]`` (signed) or 0, so ``zp = -p - min/scale`` (an integer only when real 0 is
  on the grid; otherwise the tensor has no zero-point form and stays float).

For the integer lowering, 8-bit codes are held as int8: signed codes as they are, unsigned codes shifted
by -128 (``q8 = q - 128``, ``zp8 = zp - 128``), which changes no real value. Per-channel arrays apply along
dimension 0 of a variable (as for ``linear_quantize``; dimension 1 for a ``[1, C]`` bias, see
``variable_axis``) and dimension 1 of an activation; a ``[1, C]`` array
(how nnef-tools writes per-channel activation parameters) counts as ``C`` values.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable

import numpy as np

from nnkiln.frontends.nnef.lexer import brief
from nnkiln.ir.errors import NnefError

ALGORITHMS = ("zero_point_linear_quantize", "min_max_linear_quantize")


@dataclasses.dataclass
class CodeGrid:
    """``real = (q - zp)·scale`` for integer codes ``q`` in ``[qmin, qmax]`` (arrays: per channel)."""

    scale: np.ndarray
    zp: np.ndarray
    qmin: int
    qmax: int
    bits: int
    signed: bool

    def int8(self) -> tuple[np.ndarray, np.ndarray, int, int] | None:
        """(scale, zp8, qmin8, qmax8) with the codes seen as int8 (see the module docstring), or None."""
        if self.bits != 8:
            return None
        shift = 0 if self.signed else -128
        zp8 = self.zp + shift
        if np.any(zp8 < -128) or np.any(zp8 > 127):
            return None
        return self.scale, zp8, self.qmin + shift, self.qmax + shift


def _flat(v: object) -> np.ndarray:
    """Float64 values of a parameter; an int too large for a float becomes ``inf`` (``grid`` then says None;
    ``check_args`` refuses such parameters first)."""
    vals = list(np.asarray(v, dtype=object).reshape(-1)) if isinstance(v, list) else [v]
    return np.array([float(x) if is_finite(x) else math.inf for x in vals], dtype=np.float64)


def grid(algorithm: str, args: dict[str, object], tol: float = 1e-3) -> CodeGrid | None:
    """The code grid of a graph.quant entry of ``ALGORITHMS`` (None if it has no integer zero point within
    ``tol``; ``tol = inf`` keeps a fractional zero point, for decoding/encoding real values only)."""
    bits, signed, symmetric = int(args["bits"]), bool(args["signed"]), bool(args["symmetric"])  # type: ignore[call-overload]
    if algorithm == "zero_point_linear_quantize":
        lo, r = code_range(bits, signed, symmetric)
        scale, zp = _flat(args["scale"]), _flat(args["zero_point"])
        if np.any(scale <= 0) or not np.all(np.isfinite(scale)) or not np.all(np.abs(zp) < 2.0 ** 63):
            return None
        return CodeGrid(scale, np.rint(zp).astype(np.int64), lo, r, bits, signed)
    if algorithm == "min_max_linear_quantize":
        r = (1 << bits) - 1 - int(signed and symmetric)
        p = ((1 << (bits - 1)) - int(symmetric)) if signed else 0
        lo, hi = _flat(args["min"]), _flat(args["max"])
        scale = (hi - lo) / r
        if np.any(scale <= 0) or not np.all(np.isfinite(scale)):
            return None
        with np.errstate(over="ignore"):
            zf = -p - lo / scale
        if not np.all(np.abs(zf) < 2.0 ** 63):
            return None
        zp = np.rint(zf)
        if tol == float("inf"):  # exact real-valued form (``zp`` may be fractional): decode/encode only
            return CodeGrid(scale, zf, -p, r - p, bits, signed)
        if np.any(np.abs(zf - zp) > tol):
            return None
        return CodeGrid(scale, zp.astype(np.int64), -p, r - p, bits, signed)
    return None


def is_finite(x: object) -> bool:
    """True for a finite int or float (an int too large for a float64 counts as infinite)."""
    try:
        return math.isfinite(float(x))  # type: ignore[arg-type]
    except (OverflowError, TypeError, ValueError):
        return False


def code_range(bits: int, signed: bool, symmetric: bool) -> tuple[int, int]:
    """The codes ``[lo, r]`` of ``zero_point_linear_quantize`` (see the module docstring)."""
    r = (1 << (bits - 1)) - 1 if signed else (1 << bits) - 1
    return (0 if not signed else (-r if symmetric else -r - 1)), r


def check_args(name: str, args: dict[str, object], err: Callable[..., Exception], node: object) -> None:
    """graph.quant argument rules (§5.3 with the 1.0.5 algorithms) for ``ALGORITHMS``.

    Every parameter is checked so that ``grid`` always has an answer and no arithmetic overflows: ``bits`` an
    integer in 1..64 (§5.2's widest item); ``signed``/``symmetric`` logicals; ``scale`` finite and positive;
    ``zero_point`` integers within the code range ``[lo, r]`` (a zero point outside it is not a code, and
    would not fit the integer types of the lowering); ``min``/``max`` finite with ``min < max`` and a finite
    positive ``scale = (max - min)/r`` (an integer literal too large for a float is not finite)."""
    bits = args.get("bits")
    if type(bits) is not int or not 1 <= bits <= 64:
        raise err(f"§5.3: '{name}' needs an integer 'bits' in 1..64, found {bits!r}", node)
    for k in ("signed", "symmetric"):
        if type(args.get(k)) is not bool:
            raise err(f"§5.3: '{name}' needs a logical '{k}', found {args.get(k)!r}", node)
    signed, symmetric = bool(args["signed"]), bool(args["symmetric"])
    if signed and bits < 2:
        raise err(f"§5.3: a signed '{name}' needs at least 2 bits, found {bits}", node)

    def numbers(k: str, ints: bool) -> list:
        v = args[k]
        vals = list(np.asarray(v, dtype=object).reshape(-1)) if isinstance(v, list) else [v]
        ok = vals and all(isinstance(x, (int, float)) and not isinstance(x, bool) and (not ints or type(x) is int)
                          for x in vals)
        if not ok:
            kind = "integers" if ints else "scalars"
            raise err(f"§5.3: '{k}' of '{name}' must be a scalar or an array of {kind} (per channel)", node)
        if not all(is_finite(x) for x in vals):
            raise err(f"§5.3: '{k}' of '{name}' must be finite, found {brief(vals)}", node)
        return vals

    if name == "zero_point_linear_quantize":
        zps, scales = numbers("zero_point", True), numbers("scale", False)
        if not all(float(s) > 0 for s in scales):
            raise err(f"§5.3: 'scale' of '{name}' must be positive, found {brief(scales)}", node)
        lo, r = code_range(bits, signed, symmetric)
        if not all(lo <= z <= r for z in zps):
            raise err(f"§5.3: 'zero_point' of '{name}' must be a code of its {bits}-bit "
                      f"{'signed' if signed else 'unsigned'} grid [{lo}, {r}], found {brief(zps)}", node)
        if len(zps) != len(scales) and 1 not in (len(zps), len(scales)):
            raise err("§5.3: per-channel 'zero_point' and 'scale' must have the same length", node)
    else:
        los, his = numbers("min", False), numbers("max", False)
        if len(los) != len(his) and 1 not in (len(los), len(his)):
            raise err("§5.3: per-channel 'min' and 'max' must have the same length", node)
        n = max(len(los), len(his))
        lo_f, hi_f = np.broadcast_to(np.asarray(los, np.float64), n), np.broadcast_to(np.asarray(his, np.float64), n)
        if not np.all(lo_f < hi_f):
            raise err(f"§5.3: {name} needs min < max", node)
        r = (1 << bits) - 1 - int(signed and symmetric)
        with np.errstate(over="ignore", under="ignore"):
            scale = (hi_f - lo_f) / r
        if not (np.all(np.isfinite(scale)) and np.all(scale > 0)):
            raise err(f"§5.3: {name}'s step (max - min)/{r} must be finite and positive", node)
        p = ((1 << (bits - 1)) - int(symmetric)) if signed else 0
        with np.errstate(over="ignore"):
            zf = -p - lo_f / scale
        if not np.all(np.abs(zf) < 2.0 ** 63):
            raise err(f"§5.3: {name}'s zero point -min/step is out of range (min is too far from 0 for the "
                      f"step)", node)


def channel_shape(values: np.ndarray, rank: int, axis: int) -> np.ndarray:
    """A per-channel parameter array shaped to broadcast along ``axis`` of a rank-``rank`` tensor."""
    v = np.asarray(values).reshape(-1)
    if v.size == 1:
        return v.reshape((1,) * rank)
    shape = [1] * rank
    shape[axis] = v.size
    return v.reshape(shape)


def variable_axis(shape: tuple[int, ...], n: int) -> int:
    """The axis of a variable that per-channel parameters of length ``n`` apply to: 0 (filters ``[O, ..]``),
    or 1 when dimension 0 does not have ``n`` items but dimension 1 does (biases ``[1, C]``)."""
    if n == 1 or (shape and shape[0] == n):
        return 0
    if len(shape) > 1 and shape[1] == n:
        return 1
    raise NnefError(f"§5.3: per-channel quantization parameters of length {n} do not fit the shape {list(shape)}")


def _params(shape: tuple[int, ...], g: CodeGrid) -> tuple[np.ndarray, np.ndarray]:
    rank = max(len(shape), 1)
    axis = variable_axis(tuple(shape) or (1,), max(g.scale.size, g.zp.size))
    return channel_shape(g.scale, rank, axis), channel_shape(g.zp, rank, axis)


def decode(codes: np.ndarray, g: CodeGrid) -> np.ndarray:
    """Real values (float64) of stored codes of a variable (per channel along ``variable_axis``)."""
    c = np.asarray(codes).astype(np.float64)
    scale, zp = _params(c.shape, g)
    return ((c.reshape(c.shape or (1,)) - zp) * scale).reshape(c.shape)


def encode(real: np.ndarray, g: CodeGrid) -> np.ndarray:
    """Codes of real values of a variable: ``clamp(round(x/scale) + zp)`` (round half up, §4.2.1)."""
    x = np.asarray(real, np.float64)
    scale, zp = _params(x.shape, g)
    q = np.floor(x.reshape(x.shape or (1,)) / scale + zp + 0.5)
    # decision: codes of 64-bit grids are held as int64 (clamped to its range, as floats that convert exactly)
    lo, hi = float(max(g.qmin, -(1 << 63))), float(min(g.qmax, (1 << 63) - 1024))
    return np.clip(np.nan_to_num(q, nan=0.0), lo, hi).astype(np.int64).reshape(x.shape)

def real_values(data: object, q: object) -> np.ndarray:
    """Real values of a ``.dat`` whose items are 1.0.5 quantized codes, decoded with the tensor's graph.quant
    entry ``q`` (a ``QuantInfo``). Decision: without an entry of ``ALGORITHMS`` (or ``linear_quantize``,
    read as ``min_max_linear_quantize`` unsigned) the codes are taken as plain numbers."""
    codes = np.asarray(data.values)  # type: ignore[attr-defined]
    g = None
    if q is not None:
        algo, args = q.algorithm, dict(q.args)  # type: ignore[attr-defined]
        if algo == "linear_quantize":
            algo, args = "min_max_linear_quantize", {**args, "signed": False, "symmetric": False}
        if algo in ALGORITHMS:
            g = grid(algo, args, tol=float("inf"))
    if g is None:
        return codes.astype(np.float64)
    return decode(codes, g)
