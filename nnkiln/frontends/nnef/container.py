"""NNEF containers (spec §5.1), the quantization file ``graph.quant`` (§5.3) and ``check_main``.

A container is a folder or a tar archive (optionally gzip/bz2/xz compressed) holding ``graph.nnef``, an
optional ``graph.quant`` and one ``<label>.dat`` per variable. Archives are read into memory (never extracted to
disk), and only the texts and the ``.dat`` files that variables reference are read (see :class:`Members` for
the caps and file-type rules); members that are links or devices, absolute paths, paths with ``..`` and absurd
sizes are rejected. If every member lies under one top folder, that folder is the container root.

Decisions: a variable without its ``.dat`` file is an error; labels are matched to files exactly first, then
case-insensitively (§4.1.3: labels compare case-insensitively); ``\\`` in a label is a path separator;
a leading ``/`` is relative to the container (nnef-tools keeps ONNX's ``/block/Constant`` names as labels and
writes ``block/Constant.dat``; the Khronos loader strips the ``/`` too);
stored extents must equal the variable's shape (§6 stage 4); a ``graph.quant`` entry may give ``min``/``max``
as an array (one value per channel) as well as a scalar; its tensor must be an identifier of the graph.
"""

from __future__ import annotations

import contextlib
import dataclasses
import io
import lzma
import os
import posixpath
import stat
import sys
import tarfile
import zlib
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field

import numpy as np

from nnkiln.frontends.nnef.ast import Document, Identifier, Invocation, Prim
from nnkiln.frontends.nnef.document import parse_document, standard_fragments
from nnkiln.frontends.nnef.expand import Expander, FlatGraph, expand
from nnkiln.frontends.nnef.lexer import Tok, brief
from nnkiln.frontends.nnef.parser import Parser
from nnkiln.frontends.nnef.tensor_file import HEADER_SIZE, TensorData, parse_header, read_tensor
from nnkiln.ir.errors import NnefError

MAX_MEMBER_BYTES = HEADER_SIZE + 0xFFFF_FFFF  # a .dat: §5.2's data length is a u32
MAX_TOTAL_BYTES = 16 << 30  # all members of an archive (all of them are decompressed to reach the end)
MAX_MEMBERS = 100_000
#: Decompression bombs: the members' total size (from the tar headers, before a member is inflated) may exceed
#: ``BOMB_RATIO`` times the archive's size only within the first ``BOMB_ALLOWANCE`` bytes. Float weights
#: compress by a few times at most; every member has to be inflated to reach the archive's end, so without this
#: a 6 MB archive of zeros could hold 16 GiB, all inflated before its end is reached (the rate: bench/RESULTS.md).
BOMB_RATIO = 64
BOMB_ALLOWANCE = 1 << 30
#: graph.nnef / graph.quant: far above any real graph (the largest nnef-tools exports are a few MiB of text),
#: low enough that reading and lexing one takes seconds; a larger one is refused before it is read.
MAX_TEXT_BYTES = 64 << 20


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
    try:
        return _parse_quant(text, doc, file)
    except RecursionError:
        raise NnefError("§5.3: an expression of graph.quant is nested too deeply for this parser", file=file) from None


def _parse_quant(text: str, doc: Document | None, file: str) -> dict[str, QuantInfo]:
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
        err = lambda msg, node=t, tensor=str(t.value): NnefError(  # noqa: E731
            msg if f"'{tensor}'" in msg else f"{msg} (tensor '{tensor}')", file=file, line=node.line,
            column=node.column)
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
    """§5.3 arguments of ``linear_quantize`` / ``logarithmic_quantize`` (§4.8.4's fragments): integer ``bits``
    in 1..64 (§5.2's widest item); ``min``/``max`` finite scalars or per-channel arrays (an integer literal too
    large for a float is not finite); linear needs ``min < max``, logarithmic ``max > 0`` (its ``log2``)."""
    from nnkiln.frontends.nnef.quant_v105 import is_finite

    bits = args.get("bits")
    if type(bits) is not int or not 1 <= bits <= 64:
        raise err(f"§5.3: '{name}' needs an integer 'bits' in 1..64, found {bits!r}", node)
    for k in ("min", "max"):
        if k in args:
            v = args[k]
            vals = v if isinstance(v, list) else [v]
            if not vals or not all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in vals):
                raise err(f"§5.3: '{k}' of '{name}' must be a scalar or an array of scalars (per channel)", node)
            if not all(is_finite(x) for x in vals):
                raise err(f"§5.3: '{k}' of '{name}' must be finite, found {brief(v)}", node)
    if name == "linear_quantize":
        lo, hi = args["min"], args["max"]
        los = lo if isinstance(lo, list) else [lo]
        his = hi if isinstance(hi, list) else [hi]
        if len(los) != len(his) and 1 not in (len(los), len(his)):
            raise err("§5.3: per-channel 'min' and 'max' must have the same length", node)
        pairs = zip(los * (len(his) if len(los) == 1 else 1), his * (len(los) if len(his) == 1 else 1))
        if not all(float(a) < float(b) for a, b in pairs):  # type: ignore[arg-type]
            raise err("§5.3: linear_quantize needs min < max", node)
    elif name == "logarithmic_quantize":
        hi = args["max"]
        if not all(float(x) > 0 for x in (hi if isinstance(hi, list) else [hi])):  # type: ignore[arg-type]
            raise err(f"§5.3: logarithmic_quantize needs max > 0 (it takes log2 max), found {brief(hi)}", node)


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

_CHUNK = 1 << 24
_TEXTS = ("graph.nnef", "graph.quant")


def _open_regular(full: str, shown: str, limit: int) -> tuple[io.FileIO, int]:
    """Open ``full`` for reading only if it is (after resolving links) a regular file of at most ``limit``
    bytes: ``O_NONBLOCK`` so that a FIFO cannot block the open, then ``fstat`` on the open descriptor (no race
    between the check and the read). Devices, FIFOs, sockets and folders are refused with an NnefError."""
    try:
        fd = os.open(full, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError as err:
        raise NnefError(f"§5.1: cannot read the file: {err.strerror}", file=shown) from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            kind = "a folder" if stat.S_ISDIR(st.st_mode) else "a FIFO, device or socket"
            raise NnefError(f"§5.1: not a regular file ({kind}); only regular files are read", file=shown)
        if st.st_size > limit:
            raise NnefError(f"§5.1: the file is absurdly large ({st.st_size} bytes, the limit is {limit})",
                            file=shown)
        if hasattr(os, "O_NONBLOCK"):
            os.set_blocking(fd, True)
        return io.FileIO(fd, "rb", closefd=True), st.st_size
    except BaseException:
        os.close(fd)
        raise


def _read_into(f, size: int, shown: str, head: bytes = b"") -> memoryview:  # noqa: ANN001
    """``size`` bytes of the stream ``f`` (``head`` already read) in one preallocated, writable buffer: chunked
    ``readinto`` (no list of chunks to join, so the peak is the member's size, not twice it); ``np.empty`` pages
    are only committed as they are filled."""
    buf = memoryview(np.empty(size, dtype=np.uint8)).cast("B")
    buf[:len(head)] = head
    got = len(head)
    while got < size:
        n = f.readinto(buf[got:min(size, got + _CHUNK)])
        if not n:
            raise NnefError(f"§5.1: the file is truncated ({got} of {size} bytes)", file=shown)
        got += n
    return buf


class Members(Mapping):
    """The files of a container (§5.1) by relative path: ``graph.nnef``, ``graph.quant`` and the ``.dat``
    files. A folder, a tar archive (optionally gzip/bz2/xz compressed) or a single ``.nnef`` document (its
    ``graph.quant`` and ``.dat`` files are the regular files beside it).

    Decisions (issue 6: hostile containers end in an NnefError, never a hang or exhaustion):

    * Opening lists the members and reads only the texts, each at most ``MAX_TEXT_BYTES`` (64 MiB: far above
      any real graph, and a lexer pass over it takes seconds, not minutes). ``.dat`` files are read only when
      asked for (``__getitem__`` / :meth:`load`), i.e. only those a ``variable`` references; vendor files and
      unreferenced ``.dat`` files are never read (§5.1: "simply omitted").
    * A member read is one preallocated buffer; a ``.dat``'s 128-byte header is read and checked first
      (magic, version, data length against the member's size, and the caller's check, e.g. the variable's
      shape), so a lying header never costs the memory it claims.
    * Caps: ``MAX_MEMBER_BYTES`` per ``.dat`` (the u32 data length of §5.2 bounds a valid one),
      ``MAX_TOTAL_BYTES`` for the sum of an archive's members (checked from the tar headers before a member's
      data is decompressed, so a gzip bomb stops at the cap), ``MAX_MEMBERS`` members.
    * Only regular files are read: archive links/devices/FIFOs are refused (as are absolute or ``..``
      paths); in a folder, symbolic links are refused when read (their target could be any file of the
      machine, shown in error messages); beside a single document (the user's own folder), links are followed
      but the target must be a regular file (``_open_regular``).
    * In an archive a later member of the same name replaces an earlier one (tar's rule); if every member
      lies under one top folder, that folder is the container root.
    """

    def __init__(self, path: str) -> None:
        self.path = path
        self._texts: dict[str, bytes] = {}
        self._entries: dict[str, object] = {}  # name -> full path (folder, single file) or TarInfo
        self._cache: dict[str, memoryview] = {}
        self._tar: tarfile.TarFile | None = None
        self._raw: io.FileIO | None = None
        self._beside: str | None = None  # single document: the folder whose files are looked up on demand
        self._prefix = ""
        if os.path.isdir(path):
            self._scan_folder(path)
        elif os.path.isfile(path) and path.lower().endswith(".nnef"):
            self._single(path)
        else:
            self._scan_tar(path)

    # Mapping interface (names) ------------------------------------------------------------------------
    def __iter__(self) -> Iterator[str]:
        return iter(list(self._texts) + [n for n in self._entries if n not in self._texts])

    def __len__(self) -> int:
        return len(set(self._texts) | set(self._entries))

    def __contains__(self, name: object) -> bool:
        if not isinstance(name, str):
            return False
        if name in self._texts or name in self._entries:
            return True
        if self._beside is not None and name.endswith(".dat") and _safe_rel(name):
            full = os.path.join(self._beside, *name.split("/"))
            if os.path.lexists(full):
                self._entries[name] = full
                return True
        return False

    def __getitem__(self, name: str) -> bytes | memoryview:
        if name in self._texts:
            return self._texts[name]
        if name not in self._cache:
            if name not in self:
                raise KeyError(name)
            self.load([name])
        return self._cache[name]

    def shown(self, name: str) -> str:
        """The path of a member as error messages name it."""
        if self._beside is not None:
            return os.path.join(self._beside, name) if name != "graph.nnef" else self.path
        return posixpath.join(self.path, name)

    def release(self, name: str) -> None:
        """Drop a member's cached bytes (they are read again if asked for again)."""
        self._cache.pop(name, None)

    def close(self) -> None:
        self._cache.clear()
        if self._tar is not None:
            self._tar.close()
            self._tar = None
        if self._raw is not None:
            self._raw.close()
            self._raw = None

    def __enter__(self) -> Members:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # reading ------------------------------------------------------------------------------------------
    def load(self, names: list[str], check: Callable[[str, bytes], None] | None = None) -> None:
        """Read ``.dat`` members in storage order (one pass over a compressed archive): for each, its 128-byte
        header is read and checked (``tensor_file.parse_header`` against the member size, then ``check(name,
        header)``) before its data is."""
        todo = [n for n in dict.fromkeys(names) if n not in self._cache and n not in self._texts]
        if self._tar is not None:
            todo.sort(key=lambda n: self._entries[n].offset_data)  # type: ignore[attr-defined]
        for name in todo:
            self._cache[name] = self._read_dat(name, check)

    def _read_dat(self, name: str, check: Callable[[str, bytes], None] | None) -> memoryview:
        shown = self.shown(name)
        entry = self._entries[name]
        try:
            if isinstance(entry, tarfile.TarInfo):
                assert self._tar is not None
                f, size = self._tar.extractfile(entry), entry.size
                if f is None:
                    raise NnefError(f"§5.1: archive member '{entry.name}' is not a regular file", file=self.path)
                return self._read_checked(f, size, shown, name, check)
            if self._beside is None and os.path.islink(str(entry)):
                raise NnefError("§5.1: a symbolic link; links in a container folder are not followed", file=shown)
            f, size = _open_regular(str(entry), shown, MAX_MEMBER_BYTES)
            with f:
                return self._read_checked(f, size, shown, name, check)
        except (tarfile.TarError, EOFError, zlib.error, lzma.LZMAError) as err:
            raise NnefError(f"§5.1: corrupt archive: {err}", file=self.path) from None
        except OSError as err:
            if isinstance(err, (EOFError,)) or self._tar is not None:
                raise NnefError(f"§5.1: corrupt archive: {err}", file=self.path) from None
            raise NnefError(f"§5.1: cannot read the file: {err.strerror or err}", file=shown) from None

    def _read_checked(self, f, size: int, shown: str, name: str,  # noqa: ANN001
                      check: Callable[[str, bytes], None] | None) -> memoryview:
        head = b""
        if size >= HEADER_SIZE:
            head = f.read(HEADER_SIZE)
            if len(head) == HEADER_SIZE:
                parse_header(head, shown, size)
                if check is not None:
                    check(name, head)
        return _read_into(f, size, shown, head)

    def _text(self, f, size: int, shown: str) -> bytes:  # noqa: ANN001
        if size > MAX_TEXT_BYTES:
            raise NnefError(f"§5.1: the file is absurdly large for a text file ({size} bytes, the limit is "
                            f"{MAX_TEXT_BYTES})", file=shown)
        return bytes(_read_into(f, size, shown))

    # the three kinds of container -------------------------------------------------------------------------
    def _scan_folder(self, path: str) -> None:
        count = 0
        for root, dirs, names in os.walk(path, followlinks=False):
            dirs.sort()
            for n in sorted(names):
                count += 1
                if count > MAX_MEMBERS:
                    raise NnefError("§5.1: too many files in the container folder", file=path)
                full = os.path.join(root, n)
                rel = os.path.relpath(full, path).replace(os.sep, "/")
                if rel in _TEXTS:
                    if os.path.islink(full):
                        raise NnefError("§5.1: a symbolic link; links in a container folder are not followed",
                                        file=posixpath.join(path, rel))
                    f, size = _open_regular_text(full, posixpath.join(path, rel))
                    with f:
                        self._texts[rel] = self._text(f, size, posixpath.join(path, rel))
                elif rel.endswith(".dat"):
                    self._entries[rel] = full  # a link is refused if it is read (``_read_dat``)

    def _single(self, path: str) -> None:
        self._beside = os.path.dirname(path) or "."
        f, size = _open_regular_text(path, path)
        with f:
            self._texts["graph.nnef"] = self._text(f, size, path)
        quant = os.path.join(self._beside, "graph.quant")
        if os.path.lexists(quant):
            f, size = _open_regular_text(quant, quant)
            with f:
                self._texts["graph.quant"] = self._text(f, size, quant)

    def _scan_tar(self, path: str) -> None:
        try:
            raw, archive_bytes = _open_regular(path, path, 1 << 62)
        except NnefError as err:
            raise NnefError(f"§5.1: cannot open the container: {err.args[0].removeprefix('§5.1: ')}",
                            file=path) from None
        try:
            tar = tarfile.open(fileobj=raw, mode="r:*")
        except (tarfile.TarError, OSError, EOFError) as err:
            raw.close()
            reason = "; ".join(line.strip("- ") for line in str(err).splitlines() if line.strip())
            raise NnefError(f"§5.1: cannot open the container as a tar archive: {reason}", file=path) from None
        self._tar = tar
        self._raw = raw
        total = 0
        try:
            for count, m in enumerate(tar):
                if count >= MAX_MEMBERS:
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
                if total > MAX_TOTAL_BYTES:
                    raise NnefError(f"§5.1: the archive's members exceed {MAX_TOTAL_BYTES} bytes in all (at "
                                    f"'{name}'): refused as absurdly large", file=path)
                if total > BOMB_ALLOWANCE + BOMB_RATIO * archive_bytes:
                    raise NnefError(f"§5.1: the archive's members (at '{name}') would inflate to more than "
                                    f"{BOMB_RATIO} times its {archive_bytes} bytes (beyond the first "
                                    f"{BOMB_ALLOWANCE}): refused as a decompression bomb", file=path)
                rel = norm.removeprefix("./")
                if posixpath.basename(rel) in _TEXTS:
                    if m.size > MAX_TEXT_BYTES:
                        raise NnefError(f"§5.1: archive member '{name}' is absurdly large for a text file "
                                        f"({m.size} bytes, the limit is {MAX_TEXT_BYTES})", file=path)
                    f = tar.extractfile(m)
                    if f is not None:
                        self._texts[rel] = self._text(f, m.size, posixpath.join(path, rel))
                    self._entries.pop(rel, None)
                elif rel.endswith(".dat"):
                    if m.size > MAX_MEMBER_BYTES:
                        raise NnefError(f"§5.1: archive member '{name}' is absurdly large ({m.size} bytes; a "
                                        f".dat holds at most {MAX_MEMBER_BYTES})", file=path)
                    self._entries[rel] = m
                    self._texts.pop(rel, None)
        except (tarfile.TarError, OSError, EOFError, ValueError, zlib.error, lzma.LZMAError) as err:
            self.close()
            raise NnefError(f"§5.1: corrupt archive: {err}", file=path) from None
        except BaseException:
            self.close()
            raise
        if "graph.nnef" not in self._texts:
            tops = {n.split("/", 1)[0] for n in self}
            top = next(iter(tops)) if len(tops) == 1 else ""
            if f"{top}/graph.nnef" in self._texts:
                cut = len(top) + 1
                self._texts = {n[cut:]: v for n, v in self._texts.items()}
                self._entries = {n[cut:]: v for n, v in self._entries.items()}


def _open_regular_text(full: str, shown: str) -> tuple[io.FileIO, int]:
    return _open_regular(full, shown, MAX_TEXT_BYTES)


def _safe_rel(name: str) -> bool:
    """A relative path with no ``..`` component (a label cannot reach outside the document's folder)."""
    parts = name.split("/")
    return not name.startswith("/") and ".." not in parts and "" not in parts


def read_variables(files: Members, flat: FlatGraph, require_data: bool = True) -> dict[str, TensorData]:
    """The ``.dat`` data of every ``variable`` of ``flat`` by label, reading only the referenced files.

    Each file's header is checked before its data is read: §5.2's rules, then §6 stage 4 (the stored extents
    must equal the variable's shape), so a mismatch fails before any large allocation. A variable without its
    file is an error unless ``require_data`` is false."""
    lower = {n.lower(): n for n in files}
    wanted: dict[str, list[tuple[str, tuple[int, ...]]]] = {}
    for op in flat.operations:
        if op.name != "variable":
            continue
        label = str(op.attribs["label"])
        rel, key = tensor_file_of(label, files, lower)
        if key is None:
            if require_data:
                raise NnefError(f"§5.1: no tensor file '{rel}' for variable '{label}'", file=files.path)
            continue
        ref = next(iter(op.outputs.values()))
        wanted.setdefault(key, []).append((label, tuple(ref.shape)))  # type: ignore[union-attr]

    def check(key: str, head: bytes) -> None:
        stored = parse_header(head, files.shown(key)).shape
        for label, shape in wanted[key]:
            if stored != shape:
                raise NnefError(f"§6 stage 4: stored extents {list(stored)} of '{label}' conflict with the "
                                f"variable shape {list(shape)}", file=files.shown(key))

    out: dict[str, TensorData] = {}
    files.load(list(wanted), check)
    for key, refs in wanted.items():
        data = read_tensor(files[key], file=files.shown(key))
        files.release(key)
        for label, shape in refs:  # again: a member read earlier (e.g. by prepare_source) skipped ``check``
            if data.shape != shape:
                raise NnefError(f"§6 stage 4: stored extents {list(data.shape)} of '{label}' conflict with the "
                                f"variable shape {list(shape)}", file=files.shown(key))
            out.setdefault(label, data)
    return out


def load_container(path: str, lenient: bool = False, require_data: bool = True) -> Container:
    """Load an NNEF model folder or tar archive: parse, check, expand, read tensors and graph.quant.

    Only the ``.dat`` files that variables reference are read (see :class:`Members`)."""
    with open_members(path) as files:
        graph_file = files.shown("graph.nnef")
        text = decode_text(files["graph.nnef"], graph_file, "§3.1: graph.nnef")
        doc = parse_document(text, lenient=lenient, file=graph_file)
        flat = expand(doc)
        cont = Container(doc, flat, files=sorted(files))
        cont.tensors = read_variables(files, flat, require_data)
        if "graph.quant" in files:
            qfile = files.shown("graph.quant")
            cont.quantization = parse_quant(decode_text(files["graph.quant"], qfile, "§5.3: graph.quant"), doc,
                                            file=qfile)
    return cont


@contextlib.contextmanager
def open_members(path: str) -> Iterator[Members]:
    """The :class:`Members` of the container at ``path``, which must hold a ``graph.nnef``; a ``MemoryError``
    inside the ``with`` becomes an NnefError ("out of memory ...") naming the container."""
    if not os.path.exists(path):
        raise NnefError("§5.1: no such file or folder", file=path)
    try:
        with Members(path) as files:
            if "graph.nnef" not in files:
                raise NnefError("§5.1: the container has no 'graph.nnef'", file=path)
            yield files
    except MemoryError:
        raise NnefError("out of memory while loading the model (it or its data needs more memory than this "
                        "process may use)", file=path) from None


def decode_text(data: bytes, file: str, what: str) -> str:
    """ASCII text of graph.nnef / graph.quant (§3.1: the syntax is ASCII); NnefError naming the byte if not."""
    try:
        return bytes(data).decode("ascii")
    except UnicodeDecodeError as err:
        raise NnefError(f"{what} must be ASCII text ({err.reason} at byte {err.start})", file=file) from None


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
