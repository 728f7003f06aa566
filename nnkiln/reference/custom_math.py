"""Kernels of nnkiln's ``tosa.custom`` math functions, which TOSA 0.30 lacks: ``sin``, ``cos``, ``tan``, ``asin``,
``acos``, ``atan``, ``sinh``, ``cosh``, ``asinh``, ``acosh``, ``atanh`` (numpy only, no xDSL: the reference
interpreter and the runtime run them, also from a saved blob in a fresh process).

Identifiers ``math.<name>`` (the ONNX importer's ``Sin`` … ``Atanh``); the NNEF reader's 1.0.5 functions are the
same kernels under ``nnef.<name>`` (``custom_nnef``). One float32 operand and result, computed by numpy in float32
(correctly rounded to within an ulp or two, as the frameworks' own CPU kernels); NaN outside the domain
(``asin(2)``, ``acosh(0.5)``), ``atanh(±1) = ±inf``, no floating-point warnings.

``math.fmod`` / ``math.mod`` (two operands of one float type, broadcasting): ONNX's float ``Mod`` with fmod = 1 / 0
(``mod_float``). ``math.cast``: a float conversion TOSA 0.30's CAST lacks (f32 -> f16 / bf16, bf16 -> f32, f16 <->
bf16) to the result's type, rounding to nearest even, overflow to ±inf, NaN kept (numpy / ml_dtypes).
``math.bitcast``: the operand's bytes read as the result's type of the same size (ONNX ``BitCast``).
``math.pow_int``: ONNX ``Pow`` with an integer base (``pow_int``).
``math.div`` (two operands of one float type, broadcasting): the correctly rounded quotient TOSA 0.30 lacks (it
has RECIPROCAL, and ``a · (1/b)`` is up to an ulp off, which moves a rounding tie); ``div_float``.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

TRIG_FUNCTIONS: dict[str, Callable[..., np.ndarray]] = {
    "sin": np.sin, "cos": np.cos, "tan": np.tan, "asin": np.arcsin, "acos": np.arccos, "atan": np.arctan,
    "sinh": np.sinh, "cosh": np.cosh, "asinh": np.arcsinh, "acosh": np.arccosh, "atanh": np.arctanh,
}
"""The functions by their NNEF / ``math.`` name (ONNX's op names capitalised)."""

_DONE = False


def trig_f32(name: str, x: np.ndarray) -> np.ndarray:
    """``TRIG_FUNCTIONS[name]`` of ``x`` in float32 (also the importers' constant folding)."""
    with np.errstate(all="ignore"):
        return np.asarray(TRIG_FUNCTIONS[name](np.asarray(x, np.float32)), np.float32)


def mod_float(a: np.ndarray, b: np.ndarray, fmod: bool) -> np.ndarray:
    """ONNX's float ``Mod``: C's ``fmod`` (the sign of ``a``) or, ``fmod`` false, the sign of ``b`` (numpy's
    ``mod``); exact (a remainder is representable), NaN for ``b = 0`` or infinite ``a``; broadcasting."""
    with np.errstate(all="ignore"):
        r = (np.fmod if fmod else np.mod)(a, b)
    return np.asarray(r, np.result_type(a, b))


def div_float(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``a / b`` correctly rounded in the operands' float type (numpy; float16 and bfloat16 go through float32,
    whose 24 bits make the double rounding innocuous), ±inf for ``x / 0``, NaN for ``0 / 0``, no warnings."""
    with np.errstate(all="ignore"):
        r = np.divide(a, b)
    return np.asarray(r, np.result_type(a, b))


def bitcast(x: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """``x``'s bytes read as ``dtype`` (same item size; any rank, 0-d included)."""
    a = np.asarray(x)
    return (a if a.flags.c_contiguous else a.copy()).view(dtype).reshape(a.shape)


def pow_int(a: np.ndarray, b: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """ONNX ``Pow`` with an integer base, as the ONNX reference (numpy) computes it, in ``dtype`` (the base's
    type): an integer exponent gives the power wrapped to the result's width (computed in int64: its low bits
    are the same), a negative one the truncated quotient 1 / a^-b (1 for a = 1, ±1 for a = -1, else 0); a
    float exponent gives the float64 power truncated toward zero (NaN 0, clipped to the type's range)."""
    a, b = np.asarray(a), np.asarray(b)
    info = np.iinfo(dtype)
    if b.dtype.kind == "f":
        with np.errstate(all="ignore"):
            r = np.trunc(np.power(a.astype(np.float64), b.astype(np.float64)))
        return np.clip(np.nan_to_num(r, nan=0.0), info.min, info.max).astype(dtype)
    a64, b64 = a.astype(np.int64), b.astype(np.int64)
    neg = b64 < 0
    r = np.power(a64, np.where(neg, 0, b64))
    inv = np.where(a64 == 1, 1, np.where(a64 == -1, np.where(b64 % 2 == 0, 1, -1), 0))
    return np.where(neg, inv, r).astype(dtype)


def register() -> None:
    """Register the ``math.*`` kernels for the reference interpreter and the runtime (idempotent)."""
    global _DONE
    if _DONE:
        return
    from nnkiln.reference.registry import register_custom

    for name in TRIG_FUNCTIONS:
        register_custom(f"math.{name}", lambda c, name=name: [trig_f32(name, c.inputs[0])])
    register_custom("math.fmod", lambda c: [mod_float(c.inputs[0], c.inputs[1], True)])
    register_custom("math.mod", lambda c: [mod_float(c.inputs[0], c.inputs[1], False)])
    register_custom("math.cast", lambda c: [np.asarray(c.inputs[0]).astype(c.out_dtypes[0])])
    register_custom("math.bitcast", lambda c: [bitcast(c.inputs[0], c.out_dtypes[0])])
    register_custom("math.pow_int", lambda c: [pow_int(c.inputs[0], c.inputs[1], c.out_dtypes[0])])
    register_custom("math.div", lambda c: [div_float(c.inputs[0], c.inputs[1])])
    _DONE = True


__all__ = ["TRIG_FUNCTIONS", "bitcast", "div_float", "mod_float", "pow_int", "register", "trig_f32"]
