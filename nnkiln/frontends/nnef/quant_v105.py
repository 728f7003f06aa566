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
from collections.abc import Callable

import numpy as np

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
    return np.asarray(v, dtype=np.float64).reshape(-1)


def grid(algorithm: str, args: dict[str, object], tol: float = 1e-3) -> CodeGrid | None:
    """The code grid of a graph.quant entry of ``ALGORITHMS`` (None if it has no integer zero point within
    ``tol``; ``tol = inf`` keeps a fractional zero point, for decoding/encoding real values only)."""
    bits, signed, symmetric = int(args["bits"]), bool(args["signed"]), bool(args["symmetric"])  # type: ignore[call-overload]
    if algorithm == "zero_point_linear_quantize":
        r = (1 << (bits - 1)) - 1 if signed else (1 << bits) - 1
        lo = 0 if not signed else (-r if symmetric else -r - 1)
        scale, zp = _flat(args["scale"]), _flat(args["zero_point"])
        if np.any(scale <= 0) or not np.all(np.isfinite(scale)):
            return None
        return CodeGrid(scale, np.rint(zp).astype(np.int64), lo, r, bits, signed)
    if algorithm == "min_max_linear_quantize":
        r = (1 << bits) - 1 - int(signed and symmetric)
        p = ((1 << (bits - 1)) - int(symmetric)) if signed else 0
        lo, hi = _flat(args["min"]), _flat(args["max"])
        scale = (hi - lo) / r
        if np.any(scale <= 0) or not np.all(np.isfinite(scale)):
            return None
        zf = -p - lo / scale
        zp = np.rint(zf)
        if tol == float("inf"):  # exact real-valued form (``zp`` may be fractional): decode/encode only
            return CodeGrid(scale, zf, -p, r - p, bits, signed)
        if np.any(np.abs(zf - zp) > tol):
            return None
        return CodeGrid(scale, zp.astype(np.int64), -p, r - p, bits, signed)
    return None


def check_args(name: str, args: dict[str, object], err: Callable[..., Exception], node: object) -> None:
    """graph.quant argument rules (§5.3 with the 1.0.5 algorithms) for ``ALGORITHMS``."""
    bits = args.get("bits")
    if type(bits) is not int or not 1 <= bits <= 64:
        raise err(f"§5.3: '{name}' needs an integer 'bits' in 1..64, found {bits!r}", node)
    for k in ("signed", "symmetric"):
        if type(args.get(k)) is not bool:
            raise err(f"§5.3: '{name}' needs a logical '{k}', found {args.get(k)!r}", node)

    def numbers(k: str, ints: bool) -> list:
        v = args[k]
        vals = list(np.asarray(v, dtype=object).reshape(-1)) if isinstance(v, list) else [v]
        ok = vals and all(isinstance(x, (int, float)) and not isinstance(x, bool) and (not ints or type(x) is int)
                          for x in vals)
        if not ok:
            kind = "integers" if ints else "scalars"
            raise err(f"§5.3: '{k}' of '{name}' must be a scalar or an array of {kind} (per channel)", node)
        return vals

    if name == "zero_point_linear_quantize":
        zps, scales = numbers("zero_point", True), numbers("scale", False)
        if not all(s > 0 for s in scales):
            raise err(f"§5.3: 'scale' of '{name}' must be positive, found {scales}", node)
        if len(zps) != len(scales) and 1 not in (len(zps), len(scales)):
            raise err("§5.3: per-channel 'zero_point' and 'scale' must have the same length", node)
    else:
        los, his = numbers("min", False), numbers("max", False)
        if len(los) != len(his) and 1 not in (len(los), len(his)):
            raise err("§5.3: per-channel 'min' and 'max' must have the same length", node)
        n = max(len(los), len(his))
        if not all(a < b for a, b in zip(np.broadcast_to(los, n), np.broadcast_to(his, n))):
            raise err(f"§5.3: {name} needs min < max", node)


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
    return np.clip(q, g.qmin, g.qmax).astype(np.int64).reshape(x.shape)

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
