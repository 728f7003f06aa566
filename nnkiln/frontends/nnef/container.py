"""NNEF containers (spec §5.1), the quantization file ``graph.quant`` (§5.3) and ``check_main``.

A container is a folder or a tar archive (optionally gzip/bz2/xz compressed) holding ``graph.nnef``, an
optional ``graph.quant`` and one ``<label>.dat`` per variable. Archives are read member by member into memory
(never extracted to disk); members that are links or devices, absolute paths, paths with ``..`` and absurd
sizes are rejected. If every member lies under one top folder, that folder is the container root.

Decisions: a variable without its ``.dat`` file is an error; labels are matched to files exactly first, then
case-insensitively (§4.1.3: labels compare case-insensitively); ``\\`` in a label is a path separator;
a leading ``/`` is relative to the container (nnef-tools keeps ONNX's ``/block/Constant`` names as labels and
writes ``block/Constant.dat``; the Khronos loader strips the ``/`` too);
stored extents must equal the variable's shape (§6 stage 4); a ``graph.quant`` entry may give ``min``/``max``
as an array (one value per channel) as well as a scalar; its tensor must be an identifier of the graph.
"""

from __future__ import annotations

import dataclasses
import os
import posixpath
import sys
import tarfile
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from nnkiln.frontends.nnef.ast import Document, Identifier, Invocation, Prim
from nnkiln.frontends.nnef.document import parse_document, standard_fragments
from nnkiln.frontends.nnef.expand import Expander, FlatGraph, expand
from nnkiln.frontends.nnef.lexer import Tok
from nnkiln.frontends.nnef.parser import Parser
from nnkiln.frontends.nnef.tensor_file import HEADER_SIZE, TensorData, read_tensor
from nnkiln.ir.errors import NnefError

MAX_MEMBER_BYTES = 4 << 30
MAX_TOTAL_BYTES = 16 << 30
MAX_MEMBERS = 100_000
MAX_TEXT_BYTES = 1 << 30  # graph.nnef / graph.quant


def tensor_file_of(label: str, files: Mapping[str, bytes], lower: Mapping[str, str]) -> tuple[str, str | None]:
    """The ``.dat`` path of a variable's label (see the module docstring) and the member that holds it
    (``None`` if there is none); ``lower`` maps lower-cased member names to names."""
    rel = label.replace("\\", "/").lstrip("/") + ".dat"
    return rel, (rel if rel in files else lower.get(rel.lower()))


@dataclass
class QuantInfo:
    """One ``graph.quant`` entry: algorithm name and its evaluated named arguments."""

    tensor: str
    algorithm: str
    args: dict[str, object]
    line: int = 0


@dataclass
class Container:
    document: Document
    graph: FlatGraph
    tensors: dict[str, TensorData] = field(default_factory=dict)  # variable label -> data
    quantization: dict[str, QuantInfo] = field(default_factory=dict)
    files: list[str] = field(default_factory=list)

    def array(self, label: str) -> np.ndarray:
        """The real values of a variable (quantized data decoded; logical variables as bool)."""
        data = self.tensors[label]
        ref = next((op for op in self.graph.operations if op.name == "variable" and op.attribs.get("label") == label),
                   None)
        if ref is not None and ref.dtype is Prim.LOGICAL:
            return data.to_bool()
        if data.item_type.name in ("FLOAT", "INTEGER", "SIGNED_INTEGER", "LOGICAL"):
            return data.values
        if ref is not None and data.item_type.name in ("QUANTIZED_SIGNED", "QUANTIZED_UNSIGNED"):
            from nnkiln.frontends.nnef.quant_v105 import real_values

            return real_values(data, self.quantization.get(next(iter(ref.outputs.values())).name))  # type: ignore[union-attr]
        return data.dequantize()


def parse_quant(text: str, doc: Document | None = None, file: str = "graph.quant") -> dict[str, QuantInfo]:
    """Parse ``graph.quant`` (§5.3): lines of ``"tensor": algorithm(name = value, ...);``."""
    p = Parser(text, file)
    p.operators_enabled = True
    frags = doc.fragments if doc is not None else standard_fragments()
    graph_ids = set(doc.types) if doc is not None else None
    ex = Expander(doc, frozenset()) if doc is not None else None
    out: dict[str, QuantInfo] = {}
    while p.tok.kind is not Tok.EOF:
        t = p.tok
        if t.kind is not Tok.STRING:
            raise p.error(f"§5.3: expected a quoted tensor identifier, found {t.describe()}")
        p.advance()
        p.expect_op(":", "after the tensor identifier")
        inv = p.parse_invocation()
        p.expect_op(";", "after the quantization algorithm")
        name = str(t.value)
        err = lambda msg, node=t: NnefError(msg, file=file, line=node.line, column=node.column)  # noqa: E731
        if name in out:
            raise err(f"§5.3: tensor '{name}' is quantized twice")
        if graph_ids is not None and name not in graph_ids:
            raise err(f"§5.3: '{name}' is not an exported tensor identifier of the graph")
        frag = frags.get(inv.name)
        if frag is None:
            raise err(f"§5.3: unknown quantization algorithm '{inv.name}'", inv)
        args: dict[str, object] = {}
        for a in inv.args:
            if a.name is None:
                raise err("§5.3: quantization arguments must be named (the tensor argument is omitted)", a)
            if frag.param(a.name) is None or a.name == frag.params[0].name:
                raise err(f"§5.3: '{inv.name}' has no parameter '{a.name}' to set here", a)
            if a.name in args:
                raise err(f"§5.3: argument '{a.name}' is given twice", a)
            if _mentions_identifier(a.value):
                raise err("§5.3: quantization arguments must be compile-time expressions (no tensor identifiers)", a)
            evaluator = ex or Expander(_dummy_doc(frags), frozenset())
            args[a.name] = evaluator.eval(a.value, {}, None)
        for prm in frag.params[1:]:
            if prm.name not in args:
                if prm.default is None:
                    raise err(f"§5.3: '{inv.name}' needs argument '{prm.name}'", inv)
        if inv.name in ("linear_quantize", "logarithmic_quantize"):
            _check_quant_args(inv.name, args, err, inv)
        elif inv.name in ("zero_point_linear_quantize", "min_max_linear_quantize"):
            from nnkiln.frontends.nnef.quant_v105 import check_args

            check_args(inv.name, args, err, inv)
        out[name] = QuantInfo(name, inv.name, args, t.line)
    return out


def _check_quant_args(name: str, args: dict[str, object], err, node: object) -> None:  # noqa: ANN001
    bits = args.get("bits")
    if type(bits) is not int or not 1 <= bits <= 64:
        raise err(f"§5.3: '{name}' needs an integer 'bits' in 1..64, found {bits!r}", node)
    for k in ("min", "max"):
        if k in args:
            v = args[k]
            vals = v if isinstance(v, list) else [v]
            if not vals or not all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in vals):
                raise err(f"§5.3: '{k}' of '{name}' must be a scalar or an array of scalars (per channel)", node)
    if name == "linear_quantize":
        lo, hi = args["min"], args["max"]
        los = lo if isinstance(lo, list) else [lo]
        his = hi if isinstance(hi, list) else [hi]
        if len(los) != len(his) and 1 not in (len(los), len(his)):
            raise err("§5.3: per-channel 'min' and 'max' must have the same length", node)
        pairs = zip(los * (len(his) if len(los) == 1 else 1), his * (len(los) if len(his) == 1 else 1))
        if not all(a < b for a, b in pairs):  # type: ignore[operator]
            raise err("§5.3: linear_quantize needs min < max", node)


def _mentions_identifier(e: object) -> bool:
    """True if a compile-time expression refers to an identifier or invokes an operation."""
    if isinstance(e, (Identifier, Invocation)):
        return True
    if isinstance(e, (list, tuple)):
        return any(_mentions_identifier(i) for i in e)
    if dataclasses.is_dataclass(e):
        return any(_mentions_identifier(getattr(e, f.name)) for f in dataclasses.fields(e))
    return False


def _dummy_doc(frags: dict) -> Document:  # noqa: ANN001
    from nnkiln.frontends.nnef.ast import Graph

    return Document((1, 0), [], frags, Graph(0, 0, "", [], [], []))


# -- containers -------------------------------------------------------------------------------------------


def _read_members(path: str) -> dict[str, bytes]:
    files: dict[str, bytes] = {}
    if os.path.isdir(path):
        total = 0
        for root, dirs, names in os.walk(path, followlinks=False):
            for n in names:
                full = os.path.join(root, n)
                rel = os.path.relpath(full, path).replace(os.sep, "/")
                if os.path.islink(full) or not os.path.isfile(full):
                    continue
                size = os.path.getsize(full)
                total += size
                text = rel in ("graph.nnef", "graph.quant")
                if size > (MAX_TEXT_BYTES if text else MAX_MEMBER_BYTES) or total > MAX_TOTAL_BYTES:
                    raise NnefError(f"§5.1: container file '{rel}' is absurdly large ({size} bytes)", file=path)
                if rel in ("graph.nnef", "graph.quant") or rel.endswith(".dat"):
                    with open(full, "rb") as f:
                        files[rel] = f.read()
        return files
    try:
        tar = tarfile.open(path, mode="r:*")
    except (tarfile.TarError, OSError, EOFError) as err:
        reason = "; ".join(line.strip("- ") for line in str(err).splitlines() if line.strip())
        raise NnefError(f"§5.1: cannot open the container as a tar archive: {reason}", file=path) from None
    total = 0
    with tar:
        try:
            for count, m in enumerate(tar):
                if count > MAX_MEMBERS:
                    raise NnefError("§5.1: too many members in the archive", file=path)
                name = m.name
                norm = posixpath.normpath(name.replace("\\", "/"))
                if name.startswith("/") or norm.startswith("../") or norm == ".." or "/../" in f"/{norm}/":
                    raise NnefError(f"§5.1: archive member '{name}' escapes the container folder", file=path)
                if m.isdir():
                    continue
                if not m.isfile():
                    raise NnefError(f"§5.1: archive member '{name}' is a link or special file (not allowed)",
                                    file=path)
                total += m.size
                text = norm.endswith(("graph.nnef", "graph.quant"))
                if m.size > (MAX_TEXT_BYTES if text else MAX_MEMBER_BYTES) or total > MAX_TOTAL_BYTES:
                    raise NnefError(f"§5.1: archive member '{name}' is absurdly large ({m.size} bytes)", file=path)
                if not (norm.endswith(("graph.nnef", "graph.quant")) or norm.endswith(".dat")):
                    continue
                f = tar.extractfile(m)
                if f is None:
                    continue
                files[norm.removeprefix("./")] = _read_member(f, m.size, name, path)
        except (tarfile.TarError, OSError, EOFError, ValueError) as err:
            raise NnefError(f"§5.1: corrupt archive: {err}", file=path) from None
    if "graph.nnef" not in files:
        tops = {n.split("/", 1)[0] for n in files}
        if len(tops) == 1 and f"{next(iter(tops))}/graph.nnef" in files:
            prefix = next(iter(tops)) + "/"
            files = {n[len(prefix):]: v for n, v in files.items()}
    return files


_CHUNK = 1 << 24


def _read_member(f, size: int, name: str, path: str) -> bytes:  # noqa: ANN001
    """A member's bytes, read in chunks so that a header claiming more than the archive holds costs no memory;
    a ``.dat`` member whose own header (§5.2: data length at offset 4) disagrees with the member size is refused
    before its data is read (a compressed run of zeros claiming gigabytes is not inflated)."""
    if name.endswith(".dat") and size >= HEADER_SIZE:
        head = f.read(HEADER_SIZE)
        if len(head) == HEADER_SIZE and head[:2] != b"\x4e\xef":
            raise NnefError(f"§5.2: bad magic number {head[:2].hex()} (expected 4eef)", file=posixpath.join(path, name))
        if len(head) == HEADER_SIZE:
            declared = int.from_bytes(head[4:8], "little")
            if declared + HEADER_SIZE != size:
                raise NnefError(f"§5.2: the header declares {declared} bytes of data but the file holds "
                                f"{size - HEADER_SIZE}", file=posixpath.join(path, name))
        parts = [head]
        got = len(head)
    else:
        parts, got = [], 0
    while got < size:
        chunk = f.read(min(_CHUNK, size - got))
        if not chunk:
            raise NnefError(f"§5.1: archive member '{name}' is truncated ({got} of {size} bytes)", file=path)
        parts.append(chunk)
        got += len(chunk)
    return b"".join(parts)


def load_container(path: str, lenient: bool = False, require_data: bool = True) -> Container:
    """Load an NNEF model folder or tar archive: parse, check, expand, read tensors and graph.quant."""
    if not os.path.exists(path):
        raise NnefError("§5.1: no such file or folder", file=path)
    files = _read_members(path)
    if "graph.nnef" not in files:
        raise NnefError("§5.1: the container has no 'graph.nnef'", file=path)
    graph_file = posixpath.join(path, "graph.nnef")
    try:
        text = files["graph.nnef"].decode("ascii")
    except UnicodeDecodeError as err:
        raise NnefError(f"§3.1: graph.nnef must be ASCII text ({err.reason} at byte {err.start})",
                        file=graph_file) from None
    doc = parse_document(text, lenient=lenient, file=graph_file)
    flat = expand(doc)
    cont = Container(doc, flat, files=sorted(files))
    lower = {n.lower(): n for n in files}
    for op in flat.operations:
        if op.name != "variable":
            continue
        label = str(op.attribs["label"])
        if label in cont.tensors:
            continue
        rel, key = tensor_file_of(label, files, lower)
        dat_file = posixpath.join(path, rel)
        if key is None:
            if require_data:
                raise NnefError(f"§5.1: no tensor file '{rel}' for variable '{label}'", file=path)
            continue
        data = read_tensor(files[key], file=posixpath.join(path, key))
        ref = next(iter(op.outputs.values()))
        if data.shape != ref.shape:  # type: ignore[union-attr]
            raise NnefError(f"§6 stage 4: stored extents {list(data.shape)} of '{label}' conflict with the "
                            f"variable shape {list(ref.shape)}", file=dat_file)  # type: ignore[union-attr]
        cont.tensors[label] = data
    if "graph.quant" in files:
        try:
            qtext = files["graph.quant"].decode("ascii")
        except UnicodeDecodeError:
            raise NnefError("§5.3: graph.quant must be ASCII text", file=posixpath.join(path, "graph.quant")) from None
        cont.quantization = parse_quant(qtext, doc, file=posixpath.join(path, "graph.quant"))
    return cont


def check_main(path: str, lenient: bool = False) -> int:
    """``nnkiln check-nnef PATH``: 0 when the document/container is valid, 1 (message on stderr) if not."""
    try:
        if os.path.isfile(path) and path.lower().endswith(".nnef"):
            try:
                with open(path, encoding="ascii") as f:
                    text = f.read()
            except UnicodeDecodeError as err:
                raise NnefError(f"§3.1: the document must be ASCII text (byte {err.start})", file=path) from None
            expand(parse_document(text, lenient=lenient, file=path))
        else:
            load_container(path, lenient=lenient)
    except NnefError as err:
        where = ":".join(str(x) for x in (err.file or path, err.line or None, err.column or None) if x)
        print(f"{where}: error: {err.args[0]}", file=sys.stderr)
        return 1
    except OSError as err:
        print(f"{path}: error: cannot read: {err.strerror}", file=sys.stderr)
        return 1
    print(f"{path}: valid NNEF")
    return 0
