"""``load_nnef``: an NNEF container or document → a verified ``tosa``-level module."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
from xdsl.dialects.builtin import ModuleOp

from nnkiln.frontends.nnef.ast import Argument, ArrayExpr, Document, Identifier, Invocation, Literal
from nnkiln.frontends.nnef.container import Members, decode_text, open_members, parse_quant, read_variables
from nnkiln.frontends.nnef.document import parse_document
from nnkiln.frontends.nnef.expand import expand
from nnkiln.frontends.nnef.lowering import KEEP, lower_graph
from nnkiln.frontends.nnef.quant_v105 import real_values
from nnkiln.frontends.nnef.tensor_file import CODE_TYPES, PLAIN_TYPES
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
    """Parse, check, expand (keeping ``lowering.KEEP``), read tensors and graph.quant, lower and verify.

    ``path`` is a container folder, a tar archive, or a single ``.nnef`` document whose ``graph.quant`` and
    ``.dat`` files are the regular files beside it. Files are read through ``container.Members``: the same
    caps, regular files only, and only the ``.dat`` files that variables reference, each header checked
    (§5.2, and the variable's shape, §6 stage 4) before its data. A ``MemoryError`` while reading or decoding
    becomes an NnefError ("out of memory ...") naming the container."""
    from nnkiln.ir.verify import verify_module

    with open_members(path) as files:
        module = _load(files, path, shapes, lenient)
    verify_module(module)
    return module


def _load(files: Members, path: str, shapes: Mapping[str, Sequence[int]] | None, lenient: bool) -> ModuleOp:
    graph_file = files.shown("graph.nnef")
    text = decode_text(files["graph.nnef"], graph_file, "§3.1: graph.nnef")
    from nnkiln.frontends.nnef.extensions_tract import prepare_source

    text = prepare_source(text, files, file=graph_file)  # tract's dialect (torch-to-nnef) to standard NNEF
    doc = parse_document(text, lenient=lenient, file=graph_file)
    if shapes:
        _override_shapes(doc, shapes)
    flat = expand(doc, keep=KEEP)
    quant = {}
    if "graph.quant" in files:
        qfile = files.shown("graph.quant")
        quant = parse_quant(decode_text(files["graph.quant"], qfile, "§5.3: graph.quant"), doc, file=qfile)
    raw = read_variables(files, flat)
    arrays: dict[str, np.ndarray] = {}
    for op in flat.operations:
        if op.name != "variable":
            continue
        label = str(op.attribs["label"])
        if label in arrays or label not in raw:
            continue
        data, ref = raw[label], next(iter(op.outputs.values()))
        if data.item_type in PLAIN_TYPES:
            arrays[label] = data.values if op.dtype is None or op.dtype.value != "logical" else data.to_bool()
        elif data.item_type in CODE_TYPES:
            try:
                arrays[label] = real_values(data, quant.get(ref.name))  # type: ignore[union-attr]
            except NnefError as err:  # e.g. per-channel parameters that do not fit the shape: name graph.quant
                if err.file:
                    raise
                raise NnefError(f"{err.args[0]} (tensor '{ref.name}')", file=files.shown("graph.quant")) from None  # type: ignore[union-attr]
        else:
            arrays[label] = data.dequantize()
    return lower_graph(flat, arrays, graph_file, quant, raw)
