"""``load_nnef``: an NNEF container or document → a verified ``tosa``-level module."""

from __future__ import annotations

import os
import posixpath
from collections.abc import Mapping, Sequence

import numpy as np
from xdsl.dialects.builtin import ModuleOp

from nnkiln.frontends.nnef.ast import Argument, ArrayExpr, Document, Identifier, Invocation, Literal
from nnkiln.frontends.nnef.container import _read_members, parse_quant, tensor_file_of
from nnkiln.frontends.nnef.document import parse_document
from nnkiln.frontends.nnef.expand import expand
from nnkiln.frontends.nnef.lowering import KEEP, lower_graph
from nnkiln.frontends.nnef.quant_v105 import real_values
from nnkiln.frontends.nnef.tensor_file import CODE_TYPES, PLAIN_TYPES, TensorData, read_tensor
from nnkiln.ir.errors import NnefError


def _override_shapes(doc: Document, shapes: Mapping[str, Sequence[int]]) -> None:
    found = set()
    for stmt in doc.graph.body:
        rhs, lhs = stmt.rhs, stmt.lhs
        if isinstance(rhs, Invocation) and rhs.name == "external" and isinstance(lhs, Identifier) and lhs.name in shapes:
            arr = ArrayExpr(rhs.line, rhs.column, [Literal(rhs.line, rhs.column, int(d)) for d in shapes[lhs.name]])
            rhs.args = [a for a in rhs.args if not (a.name == "shape" or (a.name is None and rhs.args.index(a) == 0))]
            rhs.args.append(Argument("shape", arr, rhs.line, rhs.column))
            found.add(lhs.name)
    missing = set(shapes) - found
    if missing:
        raise NnefError(f"shapes given for unknown inputs {sorted(missing)}", file=doc.file)


def load_nnef(path: str, shapes: Mapping[str, Sequence[int]] | None = None, *, lenient: bool = False) -> ModuleOp:
    """Parse, check, expand (keeping ``lowering.KEEP``), read tensors and graph.quant, lower and verify."""
    from nnkiln.ir.verify import verify_module

    if not os.path.exists(path):
        raise NnefError("§5.1: no such file or folder", file=path)
    if os.path.isfile(path) and path.lower().endswith(".nnef"):
        with open(path, "rb") as f:
            files = {"graph.nnef": f.read()}
        graph_file = path
        base = os.path.dirname(path)
        for name in os.listdir(base or "."):
            if name == "graph.quant":
                with open(os.path.join(base, name), "rb") as f:
                    files["graph.quant"] = f.read()
    else:
        files = _read_members(path)
        graph_file = posixpath.join(path, "graph.nnef")
        if "graph.nnef" not in files:
            raise NnefError("§5.1: the container has no 'graph.nnef'", file=path)
    try:
        text = files["graph.nnef"].decode("ascii")
    except UnicodeDecodeError as err:
        raise NnefError(f"§3.1: graph.nnef must be ASCII text (byte {err.start})", file=graph_file) from None
    from nnkiln.frontends.nnef.extensions_tract import prepare_source

    text = prepare_source(text, files, file=graph_file)  # tract's dialect (torch-to-nnef) to standard NNEF
    doc = parse_document(text, lenient=lenient, file=graph_file)
    if shapes:
        _override_shapes(doc, shapes)
    flat = expand(doc, keep=KEEP)
    lower = {n.lower(): n for n in files}
    quant = {}
    if "graph.quant" in files:
        quant = parse_quant(files["graph.quant"].decode("ascii"), doc, file=posixpath.join(path, "graph.quant"))
    arrays: dict[str, np.ndarray] = {}
    raw: dict[str, TensorData] = {}
    for op in flat.operations:
        if op.name != "variable":
            continue
        label = str(op.attribs["label"])
        if label in arrays:
            continue
        rel, key = tensor_file_of(label, files, lower)
        if key is None:
            if os.path.isfile(path) and ".." not in rel.split("/") \
                    and os.path.exists(os.path.join(os.path.dirname(path), rel)):
                with open(os.path.join(os.path.dirname(path), rel), "rb") as f:
                    files[rel] = f.read()
                key = rel
            else:
                raise NnefError(f"§5.1: no tensor file '{rel}' for variable '{label}'", file=path)
        data = read_tensor(files[key], file=posixpath.join(path, key))
        ref = next(iter(op.outputs.values()))
        if data.shape != ref.shape:  # type: ignore[union-attr]
            raise NnefError(f"§6 stage 4: stored extents {list(data.shape)} of '{label}' conflict with the "
                            f"variable shape {list(ref.shape)}", file=posixpath.join(path, key))  # type: ignore[union-attr]
        raw[label] = data
        if data.item_type in PLAIN_TYPES:
            arrays[label] = data.values if op.dtype is None or op.dtype.value != "logical" else data.to_bool()
        elif data.item_type in CODE_TYPES:
            arrays[label] = real_values(data, quant.get(ref.name))  # type: ignore[union-attr]
        else:
            arrays[label] = data.dequantize()
    module = lower_graph(flat, arrays, graph_file, quant, raw)
    verify_module(module)
    return module
