"""Argument validity and shape propagation of the NNEF primitives (spec §4; §6 stage 3.1).

``infer(name, args, shape_of)`` takes a primitive's name and its arguments (tensor arguments as opaque
references or literal primitives, attributes as Python values) and returns the result shapes, or raises
:class:`ShapeProblem` with a message naming the rule.

Decisions (inventory §1.8 [D] items):

* Broadcasting aligns shapes from dimension 0 (trailing singleton dimensions are implicit, §2.2).
* Reverse sliding-window ops without ``output_shape`` take the up-scaled extent ``X = (x-1)*s + f_d - (p+q)``
  with explicit padding; with automatic padding (``padding = []``) they take ``X = x*s`` and the total padding
  ``t = (x-1)*s + f_d - X`` split as floor/ceil halves.
* ``deconv`` output channels = ``filter.shape[1] * G`` (G = groups, 0 meaning the input channel count).
* ``sample`` with ``border = 'ignore'`` is valid only when its index comes from ``argmax_pool`` with
  ``border = 'ignore'`` and the same window (the pattern of ``max_pool``, used by the spec's AlexNet, App. C.1):
  such an index never points into the border. Checked by the expander, which knows the producer.
* ``squeeze`` / ``unsqueeze`` (compound, §4.5.1) follow the prose, which ``compound_args`` checks before the
  body is expanded: the axes are distinct and in range (input rank for squeeze, output rank = input rank +
  len(axes) for unsqueeze). The spec's ``_unsqueeze_shape`` helper inserts the axes in the order given and
  silently skips one beyond the current rank, so ``axes = [3, 1]`` on a rank-2 input would give rank 3; the
  axes are sorted before the body runs, which gives the prose's result (a 1 at each listed output axis, the
  input's extents in order elsewhere), as the Khronos tools do.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

Shape = tuple[int, ...]


class ShapeProblem(Exception):
    """A §4 argument-validity rule failed; the message names the section and the values."""


def _req(cond: bool, msg: Callable[[], str]) -> None:
    """Raise ``ShapeProblem(msg())`` unless ``cond`` (the message is built only then: some are long)."""
    if not cond:
        raise ShapeProblem(msg())


def broadcast(section: str, *shapes: Shape) -> Shape:
    rank = max((len(s) for s in shapes), default=0)
    out = []
    for d in range(rank):
        ext = {s[d] if d < len(s) else 1 for s in shapes}
        ext.discard(1)
        _req(len(ext) <= 1, lambda: f"{section}: shapes {', '.join(str(list(s)) for s in shapes)} do not broadcast "
                            f"(dimension {d}: extents must be equal or 1)")
        out.append(ext.pop() if ext else 1)
    return tuple(out)


def _ints(v: object, name: str, section: str) -> list[int]:
    _req(isinstance(v, list) and all(type(i) is int for i in v), lambda: f"{section}: '{name}' must be an integer array")
    return v  # type: ignore[return-value]


BORDERS = ("ignore", "constant", "replicate", "reflect", "reflect-even")


def _window(section: str, input_shape: Shape, size: list[int], border: str, padding: list, stride: list[int],
            dilation: list[int], allowed: Sequence[str], first: int, *, reverse: bool,
            output_shape: list[int] | None = None) -> Shape:
    """Down-scaled (basic op) or up-scaled (reverse op) shape for dims ``first..rank-1``."""
    n = len(input_shape)
    k = n - first
    _req(border in allowed, lambda: f"{section}: border '{border}' is not allowed here (allowed: {', '.join(allowed)})")
    _req(len(size) == k, lambda: f"{section}: 'size' must have {k} items, found {len(size)}")
    _req(all(i > 0 for i in size), lambda: f"{section}: items of 'size' must be positive, found {size}")
    for name, arr in (("padding", padding), ("stride", stride), ("dilation", dilation)):
        _req(len(arr) in (0, k), lambda: f"{section}: '{name}' must have {k} items or be empty, found {len(arr)}")
    _req(all(s > 0 for s in stride), lambda: f"{section}: items of 'stride' must be positive, found {stride}")
    _req(all(d > 0 for d in dilation), lambda: f"{section}: items of 'dilation' must be positive, found {dilation}")
    strides = stride or [1] * k
    dils = dilation or [1] * k
    out = list(input_shape[:first])
    if output_shape:
        _req(len(output_shape) == n, lambda: f"{section}: 'output_shape' must have {n} items, found {len(output_shape)}")
        _req(all(o > 0 for o in output_shape), lambda: f"{section}: items of 'output_shape' must be positive")
    for i in range(k):
        x = input_shape[first + i]
        f, s, d = size[i], strides[i], dils[i]
        fd = (f - 1) * d + 1
        if not reverse:
            if padding:
                p, q = padding[i]
            else:
                xo = -(-x // s)
                t = (xo - 1) * s + fd - x
                p, q = t // 2, -(-t // 2)
            num = p + x + q - fd
            _req(num >= 0, lambda: f"{section}: padded extent {p + x + q} in dimension {first + i} is smaller than the "
                           f"dilated filter size {fd}")
            out.append(num // s + 1)
        else:
            if output_shape:
                big = output_shape[first + i]
                if padding:
                    p, q = padding[i]
                else:  # the basic op's automatic padding of ``output_shape`` (§4.3): x = ceil(X / s)
                    _req(-(-big // s) == x,lambda: 
                         f"{section}: 'output_shape' {output_shape} does not down-scale to the input shape "
                         f"{list(input_shape)} in dimension {first + i} (automatic padding gives "
                         f"ceil({big} / {s}) = {-(-big // s)})")
                    t = (x - 1) * s + fd - big
                    p, q = t // 2, -(-t // 2)
                _req(p + big + q - fd >= 0 and (p + big + q - fd) // s + 1 == x,lambda: 
                     f"{section}: 'output_shape' {output_shape} does not down-scale to the input shape "
                     f"{list(input_shape)} in dimension {first + i}")
                out.append(big)
            elif padding:
                p, q = padding[i]
                big = (x - 1) * s + fd - (p + q)
                _req(big > 0, lambda: f"{section}: up-scaled extent {big} in dimension {first + i} is not positive")
                out.append(big)
            else:
                out.append(x * s)
    return tuple(out)


def _pads(v: object, section: str) -> list:
    _req(isinstance(v, list) and all(isinstance(p, tuple) and len(p) == 2 and all(type(i) is int for i in p)
                                     for p in v), lambda: f"{section}: 'padding' must be an array of integer pairs")
    return v  # type: ignore[return-value]


def infer(name: str, a: dict[str, object], shape: Callable[[object], Shape]) -> list[Shape]:
    """Result shapes of primitive ``name`` (see module docstring)."""
    if name in ("external", "constant", "variable"):
        sec = {"external": "§4.1.1", "constant": "§4.1.2", "variable": "§4.1.3"}[name]
        s = _ints(a["shape"], "shape", sec)
        _req(all(i > 0 for i in s), lambda: f"{sec}: items of 'shape' must be positive, found {s}")
        if name == "constant":
            vol = math.prod(s)
            n = len(a["value"])  # type: ignore[arg-type]
            _req(n in (1, vol), lambda: f"{sec}: 'value' has {n} items but the shape {s} has volume {vol} (or use 1)")
        if name == "variable":
            label = a["label"]
            _req(isinstance(label, str) and label != "", lambda: f"{sec}: 'label' must not be empty")
            ok = all(c.isascii() and (c.isalnum() or c in "_-./\\") for c in label)  # type: ignore[union-attr]
            _req(ok, lambda: f"{sec}: label '{label}' may only contain [a-zA-Z0-9_\\-./\\\\]")
        return [tuple(s)]
    if name in ("copy", "neg", "rcp", "exp", "log", "abs", "sign", "not", "floor", "ceil", "round"):
        return [shape(a["x"])]
    if name in ("add", "sub", "mul", "div", "pow", "lt", "gt", "le", "ge", "eq", "ne", "and", "or"):
        return [broadcast("§4.2.2", shape(a["x"]), shape(a["y"]))]
    if name == "select":
        return [broadcast("§4.2.3", shape(a["condition"]), shape(a["true_value"]), shape(a["false_value"]))]
    if name in ("conv", "deconv"):
        sec = "§4.3.1"
        x, w, b = shape(a["input"]), shape(a["filter"]), shape(a["bias"])
        n = len(x)
        _req(n >= 2 and len(w) == n, lambda: f"{sec}: the filter rank {len(w)} must equal the input rank {n} (>= 2)")
        groups = a["groups"]
        _req(type(groups) is int and groups >= 0, lambda: f"{sec}: 'groups' must be >= 0, found {groups}")
        if name == "conv":
            g = groups or x[1]
            _req(w[0] % g == 0, lambda: f"{sec}: groups {g} must divide the filter batch {w[0]}")
            _req(w[1] * g == x[1], lambda: f"{sec}: filter channels {w[1]} x groups {g} must equal input channels {x[1]}")
            cout = w[0]
        else:
            g = groups or x[1]
            _req(w[0] == x[1], lambda: f"{sec}: the filter batch {w[0]} must equal the input channels {x[1]}")
            _req(w[0] % g == 0, lambda: f"{sec}: groups {g} must divide the input channels {x[1]}")
            cout = w[1] * g
        # Decision: a rank-1 bias [C] is taken as [1, C]. The spec asks for [1, C]; the Khronos parser and
        # interpreter accept [C] and torch-to-nnef writes it. Under NNEF's broadcasting (singletons padded
        # at the end) [C] could only mean [C, 1, ...], which fits the output [N, C, ...] only if N == C, so
        # the per-channel reading is the only useful one.
        _req(b in ((), (1,), (1, 1)) or b == (1, cout) or b == (cout,),lambda: 
             f"{sec}: bias shape {list(b)} must be [1, {cout}] (or [{cout}]) or singleton")
        pads = _pads(a["padding"], sec)
        oshape = _ints(a.get("output_shape", []), "output_shape", sec) if name == "deconv" else None
        sp = _window(sec, x, list(w[2:]), a["border"], pads, _ints(a["stride"], "stride", sec),  # type: ignore[arg-type]
                     _ints(a["dilation"], "dilation", sec), BORDERS[1:], 2, reverse=name == "deconv",
                     output_shape=oshape)
        if oshape:
            _req(oshape[0] == x[0] and oshape[1] == cout,lambda: 
                 f"{sec}: 'output_shape' {oshape} must start with [{x[0]}, {cout}]")
        return [(x[0], cout, *sp[2:])]
    if name in ("box", "debox", "argmax_pool", "sample", "desample"):
        sec = {"box": "§4.3.2", "debox": "§4.3.2", "argmax_pool": "§4.3.3", "sample": "§4.3.3",
               "desample": "§4.3.3"}[name]
        x = shape(a["input"])
        allowed = {"sample": BORDERS, "desample": ("constant",)}.get(name, BORDERS)
        oshape = _ints(a.get("output_shape", []), "output_shape", sec)
        out = _window(sec, x, _ints(a["size"], "size", sec), a["border"], _pads(a["padding"], sec),  # type: ignore[arg-type]
                      _ints(a["stride"], "stride", sec), _ints(a["dilation"], "dilation", sec), allowed, 0,
                      reverse=name in ("debox", "desample"), output_shape=oshape)
        if name == "sample":
            _req(shape(a["index"]) == out, lambda: f"{sec}: index shape {list(shape(a['index']))} must equal the output "
                                           f"shape {list(out)}")
        if name == "desample":
            _req(shape(a["index"]) == x, lambda: f"{sec}: index shape {list(shape(a['index']))} must equal the input "
                                         f"shape {list(x)}")
        return [out]
    if name == "multilinear_upsample":
        sec = "§4.3.4"
        x = shape(a["input"])
        f = _ints(a["factor"], "factor", sec)
        _req(len(f) == len(x) - 2, lambda: f"{sec}: 'factor' needs {len(x) - 2} items (one per spatial dim), found {len(f)}")
        _req(all(i > 0 for i in f), lambda: f"{sec}: items of 'factor' must be positive")
        _req(a["method"] in ("asymmetric", "symmetric", "aligned"), lambda: f"{sec}: unknown method '{a['method']}'")
        _req(a["border"] in BORDERS[1:], lambda: f"{sec}: border '{a['border']}' is not allowed")
        return [(*x[:2], *(xi * fi for xi, fi in zip(x[2:], f)))]
    if name in ("sum_reduce", "max_reduce", "min_reduce", "argmax_reduce", "argmin_reduce"):
        sec = "§4.4"
        x = shape(a["input"])
        axes = _ints(a["axes"], "axes", sec)
        _req(len(set(axes)) == len(axes), lambda: f"{sec}: 'axes' must be unique, found {axes}")
        _req(all(0 <= i < len(x) for i in axes), lambda: f"{sec}: 'axes' {axes} out of range for rank {len(x)}")
        return [tuple(1 if i in axes else e for i, e in enumerate(x))]
    if name == "reshape":
        sec = "§4.5.1"
        x = shape(a["input"])
        s = _ints(a["shape"], "shape", sec)
        start, count = a.get("axis_start", 0), a.get("axis_count", -1)
        _req(type(start) is int and 0 <= start <= len(x), lambda: f"{sec}: 'axis_start' {start} out of range [0, {len(x)}]")
        _req(type(count) is int and count >= -1, lambda: f"{sec}: 'axis_count' must be >= -1, found {count}")
        end = len(x) if count == -1 else start + count  # type: ignore[operator]
        _req(end <= len(x), lambda: f"{sec}: 'axis_start' + 'axis_count' = {end} exceeds the rank {len(x)}")
        part = x[start:end]  # type: ignore[misc]
        _req(all(i >= -1 for i in s) and s.count(-1) <= 1, lambda: f"{sec}: 'shape' items must be >= 0 with at most one -1")
        out = [part[i] if v == 0 and i < len(part) else v for i, v in enumerate(s)]
        _req(all(v != 0 for v in out), lambda: f"{sec}: 0 in 'shape' {s} has no input extent to copy")
        vol = math.prod(part)
        if -1 in out:
            rest = math.prod(v for v in out if v != -1)
            _req(rest > 0 and vol % rest == 0, lambda: f"{sec}: volume {vol} is not divisible by {rest}")
            out[out.index(-1)] = vol // rest
        _req(math.prod(out) == vol, lambda: f"{sec}: reshape to {out} changes the volume {vol}")
        return [(*x[:start], *out, *x[end:])]  # type: ignore[misc]
    if name == "transpose":
        sec = "§4.5.4"
        x = shape(a["input"])
        axes = _ints(a["axes"], "axes", sec)
        _req(sorted(axes) == list(range(len(axes))), lambda: f"{sec}: 'axes' {axes} must be a permutation of 0..n-1")
        x = x + (1,) * (len(axes) - len(x))
        return [tuple(x[i] for i in axes) + x[len(axes):]]
    if name == "split":
        sec = "§4.5.5"
        x = shape(a["value"])
        axis, ratios = a["axis"], _ints(a["ratios"], "ratios", sec)
        _req(type(axis) is int and 0 <= axis < len(x), lambda: f"{sec}: axis {axis} out of range for rank {len(x)}")
        _req(len(ratios) > 0 and all(r > 0 for r in ratios), lambda: f"{sec}: 'ratios' must be positive, found {ratios}")
        total = sum(ratios)
        _req(x[axis] % total == 0, lambda: f"{sec}: sum of ratios {total} must divide the extent {x[axis]}")  # type: ignore[index]
        mu = x[axis] // total  # type: ignore[index]
        return [[tuple(mu * r if i == axis else e for i, e in enumerate(x)) for r in ratios]]  # type: ignore[list-item]
    if name == "concat":
        sec = "§4.5.6"
        vals = a["values"]
        _req(isinstance(vals, list) and len(vals) > 0, lambda: f"{sec}: 'values' must be a non-empty array")
        shapes = [shape(v) for v in vals]  # type: ignore[union-attr]
        axis = a["axis"]
        r = len(shapes[0])
        _req(type(axis) is int and 0 <= axis < r, lambda: f"{sec}: axis {axis} out of range for rank {r}")
        for s in shapes:
            _req(len(s) == r and all(s[i] == shapes[0][i] for i in range(r) if i != axis),lambda: 
                 f"{sec}: shapes {[list(s) for s in shapes]} disagree outside axis {axis}")
        return [tuple(sum(s[axis] for s in shapes) if i == axis else e for i, e in enumerate(shapes[0]))]  # type: ignore[index]
    if name == "slice":
        return [slice_extents(shape(a["input"]), a)[2]]
    if name in ("avg_roi_pool", "max_roi_pool", "roi_resample"):
        sec = "§4.6"
        x, rois, bi = shape(a["input"]), shape(a["rois"]), shape(a["batch_index"])
        size = _ints(a["output_size"], "output_size", sec)
        m = len(x) - 2
        _req(len(size) == m and all(i > 0 for i in size), lambda: f"{sec}: 'output_size' needs {m} positive items")
        _req(len(rois) >= 2 and rois[1] == 2 * m, lambda: f"{sec}: 'rois' must have shape [N, {2 * m}], found {list(rois)}")
        _req(bi[:1] == rois[:1], lambda: f"{sec}: 'batch_index' shape {list(bi)} must be [{rois[0]}]")
        if name == "roi_resample":
            _req(a["method"] in ("asymmetric", "symmetric", "aligned"), lambda: f"{sec}: unknown method '{a['method']}'")
        return [(rois[0], x[1], *size)]
    if name == "matmul":
        sec = "§4.7"
        A, B = shape(a["A"]), shape(a["B"])
        _req(len(A) == len(B) and len(A) >= 2, lambda: f"{sec}: ranks of A {list(A)} and B {list(B)} must be equal and >= 2")
        m, k1 = (A[-1], A[-2]) if a["transposeA"] else (A[-2], A[-1])
        k2, n = (B[-1], B[-2]) if a["transposeB"] else (B[-2], B[-1])
        _req(k1 == k2, lambda: f"{sec}: inner dimensions disagree ({k1} vs {k2})")
        return [(*broadcast(sec, A[:-2], B[:-2]), m, n)]
    if name == "update":
        _req(shape(a["variable"]) == shape(a["value"]),lambda: 
             f"§4.8: shapes of variable {list(shape(a['variable']))} and value {list(shape(a['value']))} differ")
        return [shape(a["value"])]
    from nnkiln.frontends.nnef.shapes_v105 import infer_v105

    return infer_v105(name, a, shape)


def compound_args(name: str, a: dict[str, object], shape: Callable[[object], Shape]) -> dict[str, object]:
    """The arguments of standard compound fragment ``name`` after the checks its prose adds to its body (see
    the module docstring); raises :class:`ShapeProblem`."""
    if name not in ("squeeze", "unsqueeze"):
        return a
    sec = "§4.5.1"
    axes = _ints(a["axes"], "axes", sec)
    rank = len(shape(a["input"])) + (len(axes) if name == "unsqueeze" else 0)
    which = "output" if name == "unsqueeze" else "input"
    bad = [i for i in axes if not 0 <= i < rank]
    _req(not bad, lambda: f"{sec}: items of 'axes' must be non-negative and less than the rank of {which} ({rank}), "
                  f"found {bad}")
    _req(len(set(axes)) == len(axes), lambda: f"{sec}: 'axes' lists an axis twice: {axes}")
    return {**a, "axes": sorted(axes)} if name == "unsqueeze" else a


def slice_extents(x: Shape, a: dict[str, object]) -> tuple[list[int], list[int], Shape]:
    """``slice`` (§4.5.9; ``stride`` from NNEF 1.0.5): (first, step, output shape) per input axis.

    With no stride (or all 1) the 1.0.3 rules hold: ``end = 0`` means the extent; negative bounds count from
    the end. Decision (1.0.5, as the Khronos tools): bounds outside the axis are clamped to [-1, extent]
    after the negative ones are shifted (so ONNX's INT_MAX ends work), ``stride < 0`` walks from ``begin``
    down to ``end`` (exclusive) and the extent is ``ceil((end - begin) / stride)``; an empty result (extent
    0) is an error (tensors have positive extents, §4.1.1).
    """
    sec = "§4.5.9"
    axes, begin, end = (_ints(a[k], k, sec) for k in ("axes", "begin", "end"))
    stride = _ints(a.get("stride", []), "stride", sec) or [1] * len(axes)
    _req(len(axes) == len(begin) == len(end) == len(stride),lambda: 
         f"{sec}: 'axes', 'begin', 'end' (and 'stride') must have equal lengths")
    out, first, step = list(x), [0] * len(x), [1] * len(x)
    ones = all(st == 1 for st in stride)
    for ax, b, e, st in zip(axes, begin, end, stride):
        _req(0 <= ax < len(x), lambda: f"{sec}: axis {ax} out of range for rank {len(x)}")
        _req(st != 0, lambda: f"{sec}: 'stride' items must be non-zero")
        ext = x[ax]
        if ones and e == 0:
            e = ext
        b2 = min(max(b + ext if b < 0 else b, -1), ext)
        e2 = min(max(e + ext if e < 0 else e, -1), ext)
        ok = 0 <= b2 < e2 if st > 0 else e2 < b2 < ext
        _req(ok, lambda: f"{sec}: empty or invalid range begin {b} / end {e} / stride {st} on axis {ax} (extent {ext})")
        out[ax] = -((e2 - b2) // -st) if st > 0 else -((b2 - e2) // -(-st))
        first[ax], step[ax] = b2, st
    return first, step, tuple(out)
