"""``write_nnef(module, folder)``: a float ``tosa``-level module → an NNEF 1.0.3 container (graph.nnef + .dat).

Each tosa op becomes NNEF standard operations in flat syntax. TOSA layouts are kept: the feature-map ops
(CONV2D, DEPTHWISE_CONV2D, TRANSPOSE_CONV2D, AVG/MAX_POOL2D) are wrapped in explicit ``transpose`` ops
(NHWC → NCHW and back) and their weights are stored in NNEF's layouts (OIHW; depthwise ``[C·M, 1, H, W]``
with ``groups = 0``; deconv ``[IC, OC, H, W]``). Constants become ``variable``s with one ``.dat`` each
(label ``c<N>``). Inputs are ``external``s named like the function arguments (``nnkiln.name``).

Mapping decisions: AVG_POOL2D excludes padding from the divisor → ``avg_pool(border = 'ignore')``;
MAX_POOL2D → ``max_pool(border = 'ignore')``; PAD → ``box`` of size 1 with constant border (zero) plus
``pad_const · (1 − box(ones))`` when the constant is not zero; TILE → ``concat`` of copies; REVERSE →
``concat`` of unit slices; ARGMAX → ``argmax_reduce`` + ``squeeze``; CLAMP → ``clamp`` with scalar bounds.
Integer-only ops (RESCALE, CAST, shifts, TABLE, ...), RESIZE, GATHER/SCATTER, control flow and CUSTOM are
not exported (``FrontendError`` naming the op). graph.quant is not written (no quantized export yet).
"""

from __future__ import annotations

import argparse
import math
import os
import re
import sys
from collections.abc import Sequence

import numpy as np
from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.func import FuncOp, ReturnOp
from xdsl.ir import Operation, SSAValue

from nnkiln.dialects.tosa.base import Kind, kind_of
from nnkiln.frontends.common.arith import shape_of
from nnkiln.frontends.nnef.tensor_file import write_tensor
from nnkiln.ir.elements import to_numpy
from nnkiln.ir.errors import FrontendError


def _lit(v: object) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        if math.isinf(v):
            v = float(np.finfo(np.float32).max) * (1 if v > 0 else -1)
        r = repr(float(v))
        return r if ("." in r or "e" in r) else r + ".0"
    if isinstance(v, str):
        return f"'{v}'"
    if isinstance(v, (list, tuple)):
        if isinstance(v, tuple):
            return "(" + ", ".join(_lit(i) for i in v) + ")"
        return "[" + ", ".join(_lit(i) for i in v) + "]"
    return str(v)


class Writer:
    def __init__(self, folder: str) -> None:
        self.folder = folder
        self.lines: list[str] = []
        self.names: dict[SSAValue, str] = {}
        self.counter = 0
        self.dats: dict[str, np.ndarray] = {}

    def fresh(self, prefix: str = "t") -> str:
        self.counter += 1
        return f"{prefix}{self.counter}"

    def emit(self, text: str, prefix: str = "t") -> str:
        name = self.fresh(prefix)
        self.lines.append(f"    {name} = {text};")
        return name

    def name(self, v: SSAValue) -> str:
        return self.names[v]

    def variable(self, arr: np.ndarray) -> str:
        label = self.fresh("c")
        arr = np.asarray(arr)
        if arr.dtype == np.bool_:
            gen = "<logical>"
        elif arr.dtype.kind in "iu":
            gen, arr = "<integer>", arr.astype(np.int32)
        else:
            gen, arr = "", arr.astype(np.float32)
        shape = list(arr.shape) or [1]
        self.dats[label] = arr.reshape(shape)
        self.lines.append(f"    {label} = variable{gen}(shape = {_lit(shape)}, label = '{label}');")
        return label

    def transpose(self, x: str, perm: Sequence[int]) -> str:
        return self.emit(f"transpose({x}, axes = {_lit(list(perm))})")

    # -- ops ------------------------------------------------------------------------------------------
    def op(self, op: Operation) -> None:  # noqa: C901 - one dispatch table
        n = op.name.removeprefix("tosa.")
        props = {k: v for k, v in op.properties.items()}

        ins = [self.name(v) for v in op.operands] if n != "const" else []
        res = op.results[0] if op.results else None
        simple_bin = {"add": "add", "sub": "sub", "pow": "pow", "maximum": "max", "minimum": "min",
                      "greater": "gt", "greater_equal": "ge", "equal": "eq", "logical_and": "and",
                      "logical_or": "or"}
        simple_un = {"negate": "neg", "reciprocal": "rcp", "exp": "exp", "log": "log", "abs": "abs",
                     "floor": "floor", "ceil": "ceil", "rsqrt": "rsqrt", "sigmoid": "sigmoid", "tanh": "tanh",
                     "logical_not": "not", "identity": "copy"}
        if n == "const":
            out = self.variable(to_numpy(op.properties["values"]))  # type: ignore[arg-type]
        elif n in simple_bin:
            out = self.emit(f"{simple_bin[n]}({ins[0]}, {ins[1]})")
        elif n == "mul":
            if int(_get(props, "shift", 0)) != 0:
                raise FrontendError("tosa.mul with a shift cannot be exported to NNEF")
            out = self.emit(f"mul({ins[0]}, {ins[1]})")
        elif n in simple_un:
            out = self.emit(f"{simple_un[n]}({ins[0]})")
        elif n == "select":
            out = self.emit(f"select({ins[0]}, {ins[1]}, {ins[2]})")
        elif n == "clamp":
            lo, hi = float(_get(props, "min_val")), float(_get(props, "max_val"))
            out = self.emit(f"clamp({ins[0]}, {_lit(lo)}, {_lit(hi)})")
        elif n == "reshape":
            out = self.emit(f"reshape({ins[0]}, shape = {_lit(list(shape_of(res)))})")  # type: ignore[arg-type]
        elif n == "transpose":
            out = self.transpose(ins[0], _ints(props["perms"]))
        elif n == "concat":
            out = self.emit(f"concat([{', '.join(ins)}], axis = {int(_get(props, 'axis'))})")
        elif n == "slice":
            start, size = _ints(props["start"]), _ints(props["size"])
            full = shape_of(op.operands[0])
            axes = [i for i in range(len(start)) if start[i] != 0 or size[i] != full[i]]
            if not axes:
                out = self.emit(f"copy({ins[0]})")
            else:
                out = self.emit(f"slice({ins[0]}, axes = {_lit(axes)}, begin = {_lit([start[a] for a in axes])}, "
                                f"end = {_lit([start[a] + size[a] for a in axes])})")
        elif n == "pad":
            padding = _ints(props["padding"])
            pairs = [(padding[2 * i], padding[2 * i + 1]) for i in range(len(padding) // 2)]
            rank = len(pairs)
            box = f"size = {_lit([1] * rank)}, padding = {_lit(pairs)}, border = 'constant'"
            out = self.emit(f"box({ins[0]}, {box})")
            c = float(_get(props, "pad_const"))
            if c != 0.0:
                ones = self.variable(np.ones(shape_of(op.operands[0]), np.float32))
                mask = self.emit(f"box({ones}, {box})")
                inv = self.emit(f"sub(1.0, {mask})")
                scaled = self.emit(f"mul({inv}, {_lit(c)})")
                out = self.emit(f"add({out}, {scaled})")
        elif n == "tile":
            mult = _ints(props["multiples"])
            out = ins[0]
            for ax, m in enumerate(mult):
                if m > 1:
                    out = self.emit(f"concat([{', '.join([out] * m)}], axis = {ax})")
            if out == ins[0]:
                out = self.emit(f"copy({ins[0]})")
        elif n == "reverse":
            ax = int(_get(props, "axis"))
            size = shape_of(op.operands[0])[ax]
            parts = [self.emit(f"slice({ins[0]}, axes = [{ax}], begin = [{i}], end = [{i + 1}])")
                     for i in reversed(range(size))]
            out = self.emit(f"concat([{', '.join(parts)}], axis = {ax})")
        elif n in ("reduce_sum", "reduce_max", "reduce_min"):
            nn = {"reduce_sum": "sum_reduce", "reduce_max": "max_reduce", "reduce_min": "min_reduce"}[n]
            out = self.emit(f"{nn}({ins[0]}, axes = [{int(_get(props, 'axis'))}])")
        elif n == "argmax":
            ax = int(_get(props, "axis"))
            t = self.emit(f"argmax_reduce({ins[0]}, axes = [{ax}])")
            out = self.emit(f"squeeze({t}, axes = [{ax}])")
        elif n == "matmul":
            out = self.emit(f"matmul({ins[0]}, {ins[1]})")
        elif n == "fully_connected":
            b = self.emit(f"unsqueeze({ins[2]}, axes = [0])")
            out = self.emit(f"linear({ins[0]}, {ins[1]}, {b})")
        elif n in ("conv2d", "depthwise_conv2d", "transpose_conv2d"):
            out = self._conv(n, op, ins, props)
        elif n in ("avg_pool2d", "max_pool2d"):
            k, s, p = _ints(props["kernel"]), _ints(props["stride"]), _ints(props["pad"])
            x = self.transpose(ins[0], (0, 3, 1, 2))
            nm = "avg_pool" if n == "avg_pool2d" else "max_pool"
            y = self.emit(f"{nm}({x}, size = {_lit([1, 1, *k])}, stride = {_lit([1, 1, *s])}, border = 'ignore', "
                          f"padding = {_lit([(0, 0), (0, 0), (p[0], p[1]), (p[2], p[3])])})")
            out = self.transpose(y, (0, 2, 3, 1))
        else:
            raise FrontendError(f"{op.name} cannot be exported to NNEF (no standard-operation equivalent written)")
        if res is not None:
            self.names[res] = out

    def _conv(self, n: str, op: Operation, ins: list[str], props: dict) -> str:
        x = self.transpose(ins[0], (0, 3, 1, 2))
        wv = op.operands[1]
        wconst = _const_of(wv)
        bias = self.emit(f"unsqueeze({ins[2]}, axes = [0])")
        if n == "conv2d":
            w = self.variable(np.transpose(wconst, (0, 3, 1, 2))) if wconst is not None else \
                self.transpose(ins[1], (0, 3, 1, 2))
            p = _ints(props["pad"])
            y = self.emit(f"conv({x}, {w}, {bias}, padding = {_lit([(p[0], p[1]), (p[2], p[3])])}, "
                          f"stride = {_lit(_ints(props['stride']))}, dilation = {_lit(_ints(props['dilation']))})")
        elif n == "depthwise_conv2d":
            kh, kw, c, m = shape_of(wv)
            if wconst is not None:
                w = self.variable(np.transpose(wconst, (2, 3, 0, 1)).reshape(c * m, 1, kh, kw))
            else:
                w = self.emit(f"reshape({self.transpose(ins[1], (2, 3, 0, 1))}, shape = {_lit([c * m, 1, kh, kw])})")
            p = _ints(props["pad"])
            y = self.emit(f"conv({x}, {w}, {bias}, padding = {_lit([(p[0], p[1]), (p[2], p[3])])}, "
                          f"stride = {_lit(_ints(props['stride']))}, dilation = {_lit(_ints(props['dilation']))}, "
                          f"groups = 0)")
        else:
            w = self.variable(np.transpose(wconst, (3, 0, 1, 2))) if wconst is not None else \
                self.transpose(ins[1], (3, 0, 1, 2))
            p = _ints(props["out_pad"])
            osh = _ints(props["out_shape"])
            oshape = [osh[0], osh[3], osh[1], osh[2]]
            y = self.emit(f"deconv({x}, {w}, {bias}, padding = {_lit([(p[0], p[1]), (p[2], p[3])])}, "
                          f"stride = {_lit(_ints(props['stride']))}, output_shape = {_lit(oshape)})")
        return self.transpose(y, (0, 2, 3, 1))


def _get(props: dict, key: str, default: object = None) -> object:
    a = props.get(key)
    if a is None:
        return default
    if hasattr(a, "value") and hasattr(a.value, "data"):
        return a.value.data
    if hasattr(a, "data"):
        return a.data
    return a


def _ints(a: object) -> list[int]:
    if hasattr(a, "get_values"):
        return [int(v) for v in a.get_values()]  # type: ignore[union-attr]
    return [int(v) for v in a]  # type: ignore[union-attr]


def _const_of(v: SSAValue) -> np.ndarray | None:
    owner = v.owner
    if isinstance(owner, Operation) and owner.name == "tosa.const":
        return to_numpy(owner.properties["values"])  # type: ignore[arg-type]
    return None


def _ident(name: str, used: set[str]) -> str:
    s = re.sub(r"[^A-Za-z0-9_]", "_", name) or "t"
    if not (s[0].isalpha() or s[0] == "_"):
        s = "t_" + s
    base, i = s, 1
    while s in used:
        i += 1
        s = f"{base}_{i}"
    used.add(s)
    return s


def write_nnef(module: ModuleOp, folder: str, graph_name: str = "G") -> None:
    """Write ``module``'s entry function as an NNEF container folder (graph.nnef + one .dat per constant)."""
    from nnkiln.reference import entry_function, input_names, output_names

    func: FuncOp = entry_function(module)
    w = Writer(folder)
    used: set[str] = set()
    in_names = [_ident(n, used) for n in input_names(func)]
    out_names = [_ident(n, used) for n in output_names(func)]
    kinds = {Kind.F32: "", Kind.I32: "<integer>", Kind.BOOL: "<logical>"}
    block = func.body.blocks[0]
    for arg, nm in zip(block.args, in_names):
        k = kind_of(arg.type)  # type: ignore[arg-type]
        if k not in kinds:
            raise FrontendError(f"input '{nm}' of type {arg.type} cannot be exported to NNEF")
        w.lines.append(f"    {nm} = external{kinds[k]}(shape = {_lit(list(shape_of(arg)))});")
        w.names[arg] = nm
    ret: ReturnOp | None = None
    for op in block.ops:
        if isinstance(op, ReturnOp):
            ret = op
            break
        w.op(op)
    assert ret is not None
    for v, nm in zip(ret.operands, out_names):
        w.lines.append(f"    {nm} = copy({w.name(v)});")
    text = (f"version 1.0;\n\ngraph {graph_name}( {', '.join(in_names)} ) -> ( {', '.join(out_names)} )\n{{\n"
            + "\n".join(w.lines) + "\n}\n")
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "graph.nnef"), "w", encoding="ascii") as f:
        f.write(text)
    for label, arr in w.dats.items():
        with open(os.path.join(folder, label + ".dat"), "wb") as f:
            f.write(write_tensor(arr))


def translate_main(argv: Sequence[str] | None = None) -> int:
    """``nnkiln translate --to nnef MODEL -o DIR``: import MODEL (any supported format) and write NNEF."""
    p = argparse.ArgumentParser(prog="nnkiln translate")
    p.add_argument("--to", choices=["nnef"], default="nnef")
    p.add_argument("model")
    p.add_argument("-o", "--output", required=True)
    p.add_argument("--shape", action="append", default=[], metavar="NAME=D0,D1,...", help="bind an input's symbolic shape")
    args = p.parse_args(list(argv) if argv is not None else None)
    from nnkiln.frontends import load

    shapes = {}
    for spec in args.shape:
        name, _, dims = spec.partition("=")
        try:
            shapes[name] = [int(d) for d in dims.split(",") if d]
        except ValueError:
            p.error(f"--shape {spec!r}: expected NAME=D0,D1,...")
    write_nnef(load(args.model, shapes or None), args.output)  # errors reach the CLI's handler
    print(f"{args.model}: written as NNEF to {args.output}")
    return 0
