"""Argument validity and shapes of the NNEF 1.0.5 primitives (``tile``, ``pad``, ``gather``, ``cast``, the
trigonometric / hyperbolic functions, ``any_reduce``, ``all_reduce``); called by ``shapes.infer``.

The 1.0.5 revision states the shapes of these operations as the Khronos tools compute them; the rules
(and our decisions where it is silent) are:

* ``tile(input, repeats)``: one positive repeat per input dimension; output extent ``x[i]·repeats[i]``.
* ``pad(input, padding, border, value)``: one ``(p, q)`` pair per dimension; output ``p + x[i] + q``, which
  must stay positive. Negative amounts crop (as in the Khronos interpreter). Borders: ``constant`` (with
  ``value``), ``replicate``, ``reflect`` (needs ``p, q <= x[i] - 1``), ``reflect-even`` (``p, q <= x[i]``);
  ``ignore`` is meaningless for a pad and rejected.
* ``gather(input, indices, axis)``: ``0 <= axis < rank``; output ``x[:axis] + indices.shape + x[axis+1:]``.
* ``cast<T>(input)``: same shape.
* element-wise unary functions: same shape; ``any_reduce``/``all_reduce``: as the other reductions (§4.4).
"""

from __future__ import annotations

from collections.abc import Callable

from nnkiln.frontends.nnef.shapes import Shape, ShapeProblem, _ints, _pads, _req

UNARY_V105 = ("sin", "cos", "tan", "sinh", "cosh", "asin", "acos", "atan", "asinh", "acosh", "atanh", "cast")
PAD_BORDERS = ("constant", "replicate", "reflect", "reflect-even")


def infer_v105(name: str, a: dict[str, object], shape: Callable[[object], Shape]) -> list[Shape]:
    """Result shapes of the 1.0.5 primitive ``name`` (see the module docstring)."""
    if name in UNARY_V105:
        return [shape(a["input" if name == "cast" else "x"])]
    if name == "tile":
        sec = "§4.5 (1.0.5 tile)"
        x = shape(a["input"])
        r = _ints(a["repeats"], "repeats", sec)
        _req(len(r) == len(x), lambda: f"{sec}: 'repeats' needs {len(x)} items (one per dimension), found {len(r)}")
        _req(all(i > 0 for i in r), lambda: f"{sec}: items of 'repeats' must be positive, found {r}")
        return [tuple(e * i for e, i in zip(x, r))]
    if name == "pad":
        sec = "§4.5 (1.0.5 pad)"
        x = shape(a["input"])
        pads = _pads(a["padding"], sec)
        border = a["border"]
        _req(len(pads) == len(x), lambda: f"{sec}: 'padding' needs {len(x)} pairs (one per dimension), found {len(pads)}")
        _req(border in PAD_BORDERS, lambda: f"{sec}: border '{border}' is not allowed (use one of {list(PAD_BORDERS)})")
        out = tuple(p + e + q for e, (p, q) in zip(x, pads))
        _req(all(o > 0 for o in out), lambda: f"{sec}: padding {pads} leaves a non-positive extent ({list(out)})")
        if border in ("reflect", "reflect-even"):
            lim = [e if border == "reflect-even" else e - 1 for e in x]
            _req(all(p <= m and q <= m for (p, q), m in zip(pads, lim)),lambda: 
                 f"{sec}: border '{border}' allows at most {lim} per side, found {pads}")
        return [out]
    if name == "gather":
        sec = "§4.5 (1.0.5 gather)"
        x, idx = shape(a["input"]), shape(a["indices"])
        axis = a["axis"]
        _req(type(axis) is int and 0 <= axis < len(x), lambda: f"{sec}: axis {axis} out of range for rank {len(x)}")
        return [(*x[:axis], *idx, *x[axis + 1:])]  # type: ignore[misc]
    if name in ("any_reduce", "all_reduce"):
        sec = "§4.4 (1.0.5)"
        x = shape(a["input"])
        axes = _ints(a["axes"], "axes", sec)
        _req(len(set(axes)) == len(axes), lambda: f"{sec}: 'axes' must be unique, found {axes}")
        _req(all(0 <= i < len(x) for i in axes), lambda: f"{sec}: 'axes' {axes} out of range for rank {len(x)}")
        return [tuple(1 if i in axes else e for i, e in enumerate(x))]
    raise ShapeProblem(f"§4: no shape rule for primitive '{name}'")
