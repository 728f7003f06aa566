"""Reading an ONNX file defensively: every problem is a ``FrontendError`` naming the file (and node).

Checks, before any lowering: the file exists and is below ``MAX_FILE_BYTES``; the protobuf parses;
the model has a graph; tensors declare sane shapes (no negative dims, at most ``MAX_ELEMENTS``
elements) and carry as many bytes as their shape needs; external data (as torch's exporter writes
it) only from files inside the model's folder, of exactly the size the shape needs; node inputs are
defined before use (topological order; a cycle or a missing producer is reported with the node and
value name).
"""

from __future__ import annotations

import mmap
import os
from dataclasses import dataclass

import numpy as np

from nnkiln.ir.errors import FrontendError

MAX_FILE_BYTES = 4 << 30
MAX_ELEMENTS = 1 << 31
MAX_RANK = 16


@dataclass
class OnnxModel:
    """A parsed ONNX model with its default-domain opset; ``inline`` = (token, file offset → bytes) for the large
    initializers read apart from the protobuf (``_strip_large_raw_data``)."""

    proto: object  # onnx.ModelProto
    path: str
    opset: int
    inline: tuple[str, dict[int, bytes]] | None = None


INLINE_MIN_BYTES = 1 << 16
"""Initializers with at least this many raw bytes are not copied into the parsed protobuf (see below)."""


def _varint(buf: bytes, pos: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        if pos >= len(buf) or shift > 63:
            raise ValueError("truncated varint")
        b = buf[pos]
        pos += 1
        value |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            return value, pos


def _encode_varint(value: int) -> bytes:
    out = bytearray()
    while True:
        b = value & 0x7F
        value >>= 7
        out.append(b | (0x80 if value else 0))
        if not value:
            return bytes(out)


def _fields(buf: bytes, start: int, end: int):  # noqa: ANN202
    """(field number, wire type, field start, payload start, payload end) of each field in ``buf[start:end]``."""
    pos = start
    while pos < end:
        begin = pos
        tag, pos = _varint(buf, pos)
        field, wire = tag >> 3, tag & 7
        if wire == 0:
            _, pos = _varint(buf, pos)
            yield field, wire, begin, pos, pos
            continue
        if wire == 2:
            n, pos = _varint(buf, pos)
            payload = pos
            pos += n
        elif wire in (1, 5):
            payload = pos
            pos += 8 if wire == 1 else 4
        else:
            raise ValueError(f"wire type {wire}")
        if pos > end:
            raise ValueError("field past the end of its message")
        yield field, wire, begin, payload, pos


def _strip_large_raw_data(data: bytes | mmap.mmap) -> tuple[bytes, list[tuple[int, int, int]]] | None:
    """The model bytes without the ``raw_data`` of top-level initializers of at least ``INLINE_MIN_BYTES``, and
    (initializer index, offset, length) of each removed field in ``data``; None when there is nothing to strip
    or the bytes are not in the plain layout this expects (then the protobuf parser judges them)."""
    try:
        graphs = [f for f in _fields(data, 0, len(data)) if f[0] == 7]
        if len(graphs) != 1 or graphs[0][1] != 2:
            return None
        _, _, g_begin, g_start, g_end = graphs[0]
        graph_parts: list[bytes] = []
        removed: list[tuple[int, int, int]] = []
        last, index = g_start, 0
        for field, wire, begin, start, end in _fields(data, g_start, g_end):
            if field != 5 or wire != 2:
                continue
            inner = list(_fields(data, start, end))
            raws = [f for f in inner if f[0] == 9]
            types = [_varint(data, f[2] + 1)[0] for f in inner if f[0] == 2 and f[1] == 0]
            if (len(raws) == 1 and raws[0][1] == 2 and raws[0][4] - raws[0][3] >= INLINE_MIN_BYTES
                    and len(types) == 1 and types[0] in _PLAIN_DTYPES):
                _, _, r_begin, r_start, r_end = raws[0]
                tensor = data[start:r_begin] + data[r_end:end]
                graph_parts += [data[last:begin], b"\x2a", _encode_varint(len(tensor)), tensor]
                removed.append((index, r_start, r_end - r_start))
                last = end
            index += 1
        if not removed:
            return None
        graph = b"".join(graph_parts + [data[last:g_end]])
        return data[:g_begin] + b"\x3a" + _encode_varint(len(graph)) + graph + data[g_end:], removed
    except ValueError:
        return None


def _read_spans(f, spans: list[tuple[int, int, int]]) -> dict[int, bytes]:  # noqa: ANN001
    """file offset -> the bytes of the span, each read from the file into a ``bytes`` object of its own (the IR's
    constants then share it: ``ir.elements.from_numpy``). Reading, rather than slicing the file's mapping, does not
    fault the file's pages into this process first, and was faster on BERT-base's weights (bench/RESULTS.md)."""
    out: dict[int, bytes] = {}
    for _, offset, length in spans:
        f.seek(offset)
        out[offset] = f.read(length)
        if len(out[offset]) != length:
            raise OSError("the file changed while it was read")
    return out


def read_model(path: str) -> OnnxModel:
    import onnx
    from google.protobuf.message import DecodeError

    try:
        size = os.path.getsize(path)
    except OSError as err:
        raise FrontendError(f"cannot read: {err.strerror}", file=path) from None
    if size > MAX_FILE_BYTES:
        raise FrontendError(f"file of {size} bytes is larger than the {MAX_FILE_BYTES}-byte limit", file=path)
    # Large weights are not given to the protobuf parser (it would copy them, and every read of ``raw_data``
    # copies them again): the file is mapped, the model is parsed without them, and each one is read once into
    # a ``bytes`` object of its own, which the constants then share (no further copy).
    chunks: dict[int, bytes] = {}
    try:
        with open(path, "rb") as f:
            if size < INLINE_MIN_BYTES:
                data, stripped = f.read(), None
            else:
                with mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as mm:
                    stripped = _strip_large_raw_data(mm)
                    if stripped is None:
                        data = mm[:]
                    else:
                        data = stripped[0]
                        chunks = _read_spans(f, stripped[1])
    except (OSError, ValueError) as err:
        raise FrontendError(f"cannot read: {getattr(err, 'strerror', None) or err}", file=path) from None
    model = onnx.ModelProto()
    try:
        model.ParseFromString(data)
    except (DecodeError, RuntimeError, ValueError) as err:
        raise FrontendError(f"not a valid ONNX protobuf ({err})", file=path) from None
    except RecursionError:
        raise FrontendError("not a valid ONNX protobuf (nested too deeply)", file=path) from None
    if not model.HasField("graph") or (not model.graph.node and not model.graph.output):
        raise FrontendError("the file holds no ONNX graph (empty or not an ONNX model)", file=path)
    opset = 0
    for imp in model.opset_import:
        if imp.domain in ("", "ai.onnx"):
            opset = int(imp.version)
    if opset == 0:
        opset = 1 if not model.opset_import else 0
        if opset == 0:
            domains = ", ".join(sorted({imp.domain for imp in model.opset_import}))
            raise FrontendError(f"the model imports no version of the default ONNX domain, only {domains}: models "
                                "of other domains alone are not supported", file=path)
    inline = None
    if stripped:
        import secrets

        token = f"\0nnkiln-inline-{secrets.token_hex(8)}"  # cannot be a file name, nor guessed by a model
        inits = model.graph.initializer
        for index, offset, length in stripped[1]:
            t = inits[index]
            t.data_location = onnx.TensorProto.EXTERNAL
            for key, value in (("location", token), ("offset", str(offset)), ("length", str(length))):
                entry = t.external_data.add()
                entry.key, entry.value = key, value
        inline = (token, chunks)
    check_graph_structure(model.graph, path)
    from nnkiln.frontends.onnx.contrib_microsoft import expand_microsoft_quant_ops

    return OnnxModel(expand_microsoft_quant_ops(model, path, opset), path, opset, inline)


def check_graph_structure(graph, path: str, outer: set[str] | None = None) -> None:  # noqa: ANN001
    """Topological order and defined inputs; subgraphs may use the outer scope's values."""
    if not all(isinstance(v.name, str) for v in [*graph.input, *graph.output, *graph.initializer]):
        raise FrontendError("a graph input, output or initializer name is not valid UTF-8", file=path)
    defined = set(outer or ())
    defined.update(i.name for i in graph.input)
    defined.update(t.name for t in graph.initializer)
    defined.update(t.values.name for t in graph.sparse_initializer)
    produced_later = {o for n in graph.node for o in n.output if o}
    for node in graph.node:
        texts = [node.op_type, node.domain, node.name, *node.input, *node.output, *(a.name for a in node.attribute)]
        if not all(isinstance(t, str) for t in texts):  # protobuf hands invalid UTF-8 in a string field as bytes
            raise FrontendError("a node's op type, domain, name, value or attribute name is not valid UTF-8",
                                file=path, node=node.name if isinstance(node.name, str) else repr(node.name))
        name = node.name or node.op_type
        for inp in node.input:
            if inp and inp not in defined:
                why = "is produced by a later node (a cycle, or nodes out of order)" if inp in produced_later else "is not defined"
                raise FrontendError(f"input '{inp}' of {node.op_type} {why}", file=path, node=name)
        for attr in node.attribute:
            for sub in list(attr.graphs) + ([attr.g] if attr.HasField("g") else []):
                check_graph_structure(sub, path, defined)
        defined.update(o for o in node.output if o)
    for out in graph.output:
        if out.name not in defined:
            raise FrontendError(f"graph output '{out.name}' is not produced by any node", file=path)


_PLAIN_DTYPES: dict[int, np.dtype] = {
    code: np.dtype(name).newbyteorder("<") for code, name in (
        (1, "float32"), (2, "uint8"), (3, "int8"), (4, "uint16"), (5, "int16"), (6, "int32"), (7, "int64"),
        (9, "bool"), (10, "float16"), (11, "float64"), (12, "uint32"), (13, "uint64"))
}
"""ONNX element types whose raw_data is the numpy array's bytes (TensorProto codes)."""


def _with_external_data(tensor, path: str, where: str, count: int):  # noqa: ANN001, ANN202
    """A copy of ``tensor`` with its external bytes read in (``location`` relative to the model's folder,
    ``offset``, ``length``), after checking that the file lies inside that folder (no absolute path, no
    ``..`` or symbolic link leading out) and holds exactly the bytes the shape needs."""
    import onnx

    info = {e.key: e.value for e in tensor.external_data}
    location = info.get("location", "")

    def fail(why: str) -> FrontendError:
        return FrontendError(f"tensor '{tensor.name}': external data {location!r}: {why}", file=path, node=where)

    if not os.path.isfile(path):
        raise fail("a model with external data must be loaded from its file (the data lies beside it)")
    if not location or os.path.isabs(location) or "\0" in location:
        raise fail("the location must be a relative file name")
    folder = os.path.realpath(os.path.dirname(os.path.abspath(path)))
    target = os.path.realpath(os.path.join(folder, location))
    if os.path.commonpath([folder, target]) != folder:
        raise fail("the location leads outside the model's folder")
    try:
        offset = int(info.get("offset", "0"))
        length = int(info["length"]) if "length" in info else None
        itemsize = onnx.helper.tensor_dtype_to_np_dtype(tensor.data_type).itemsize
    except (ValueError, KeyError, TypeError):
        raise fail("invalid offset, length or data type") from None
    packed = tensor.data_type in (onnx.TensorProto.INT4, onnx.TensorProto.UINT4)
    need = (count + 1) // 2 if packed else count * itemsize
    if offset < 0 or (length is not None and length != need):
        raise fail(f"offset {offset} / length {length} do not fit the {need} bytes its shape needs")
    try:
        with open(target, "rb") as f:
            f.seek(0, os.SEEK_END)
            size = f.tell()
            if offset + need > size:
                raise fail(f"the file has {size} bytes; {need} are needed at offset {offset}")
            f.seek(offset)
            data = f.read(need)
    except OSError as err:
        raise fail(f"cannot read: {err.strerror}") from None
    copy = onnx.TensorProto()
    copy.CopyFrom(tensor)
    del copy.external_data[:]
    copy.data_location = onnx.TensorProto.DEFAULT
    copy.raw_data = data
    return copy


def tensor_to_numpy(tensor, path: str, node: str = "", inline: tuple[str, dict[int, bytes]] | None = None) -> np.ndarray:  # noqa: ANN001
    """An initializer or Constant value as numpy, after checking its declared shape and byte size; ``inline`` is
    the ``OnnxModel``'s (the bytes of a large initializer read apart, viewed without a copy)."""
    import onnx
    from onnx import numpy_helper

    dims = list(tensor.dims)
    where = node or tensor.name
    if len(dims) > MAX_RANK or any(d < 0 for d in dims):
        raise FrontendError(f"tensor '{tensor.name}' has an invalid shape {dims}", file=path, node=where)
    count = int(np.prod(dims, dtype=np.float64)) if dims else 1
    if count > MAX_ELEMENTS:
        raise FrontendError(f"tensor '{tensor.name}' declares {count} elements (limit {MAX_ELEMENTS})", file=path, node=where)
    if tensor.data_location == onnx.TensorProto.EXTERNAL:
        info = {e.key: e.value for e in tensor.external_data}
        plain = _PLAIN_DTYPES.get(tensor.data_type)
        if inline is not None and info.get("location") == inline[0] and plain is not None:
            raw = inline[1][int(info["offset"])]
            if len(raw) != count * plain.itemsize:
                raise FrontendError(f"tensor '{tensor.name}' holds {len(raw)} bytes but its shape {dims} needs "
                                    f"{count * plain.itemsize}", file=path, node=where)
            return np.frombuffer(raw, dtype=plain).reshape(dims)
        tensor = _with_external_data(tensor, path, where, count)
    if tensor.HasField("raw_data"):
        try:
            itemsize = onnx.helper.tensor_dtype_to_np_dtype(tensor.data_type).itemsize
        except (KeyError, ValueError, TypeError):
            raise FrontendError(f"tensor '{tensor.name}' has unknown data type {tensor.data_type}", file=path, node=where) from None
        packed = tensor.data_type in (onnx.TensorProto.INT4, onnx.TensorProto.UINT4)
        need = (count + 1) // 2 if packed else count * itemsize
        raw = tensor.raw_data  # protobuf copies the bytes on every read: read them once
        if len(raw) != need:
            raise FrontendError(
                f"tensor '{tensor.name}' holds {len(raw)} bytes but its shape {dims} needs {need}",
                file=path, node=where,
            )
        plain = _PLAIN_DTYPES.get(tensor.data_type)
        if plain is not None:  # little-endian bytes as they are (read-only, no further copy)
            return np.frombuffer(raw, dtype=plain).reshape(dims)
    try:
        arr = numpy_helper.to_array(tensor)
    except Exception as err:  # onnx raises a variety of types for malformed tensors
        raise FrontendError(f"tensor '{tensor.name}' cannot be decoded: {err}", file=path, node=where) from None
    if arr.size != count:
        raise FrontendError(f"tensor '{tensor.name}' holds {arr.size} values but its shape {dims} needs {count}", file=path, node=where)
    return arr
