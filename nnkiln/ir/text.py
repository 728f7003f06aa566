"""MLIR text in and out, with large constants as ``dense_resource`` blobs.

``parse_module`` accepts the generic op form and every custom form our dialects define, resolves
``dense_resource<handle>`` attributes against the file's ``{-# dialect_resources #-}`` section into
numpy-backed dense attributes while parsing (the section is cut off and decoded first, so no global
resource table is involved), and turns parse errors into ``InputError`` naming the file, line
and column. ``print_module`` prints constants above ``RESOURCE_THRESHOLD`` elements as
``dense_resource`` (bytes in hex, MLIR's blob layout: a 4-byte little-endian alignment, then data).
"""

from __future__ import annotations

import io
import re
from collections.abc import Iterable

from xdsl.context import Context
from xdsl.dialects.builtin import BytesAttr, DenseIntOrFPElementsAttr, ModuleOp, TensorType
from xdsl.ir import Attribute, Operation
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.utils.exceptions import ParseError, VerifyException

from nnkiln.ir.errors import InputError
from nnkiln.limits import check_nesting, check_tensor

RESOURCE_THRESHOLD = 64
"""Constants with more elements than this print as ``dense_resource`` blobs."""


_METADATA = re.compile(r"\{-#(.*?)#-\}\s*\Z", re.S)
_BLOB = re.compile(r'([A-Za-z_][\w$.-]*)\s*:\s*"0x([0-9A-Fa-f]*)"')


def _split_resources(text: str, filename: str) -> tuple[str, dict[str, bytes]]:
    """Cut the trailing ``{-# dialect_resources: {builtin: {...}} #-}`` section off and decode its blobs."""
    start = text.rfind("{-#")
    if start < 0:
        return text, {}
    match = _METADATA.match(text, start)
    if match is None:
        raise InputError(f"{filename}: unterminated '{{-#' resource section")
    body = match.group(1)
    if "dialect_resources" not in body or "external_resources" in body:
        raise InputError(f"{filename}: only builtin dialect_resources are supported in '{{-# #-}}'")
    blobs: dict[str, bytes] = {}
    for key, hexdata in _BLOB.findall(body):
        if len(hexdata) % 2 or len(hexdata) < 8:
            raise InputError(f"{filename}: resource '{key}' is not a valid hex blob")
        blobs[key] = bytes.fromhex(hexdata)[4:]  # MLIR blobs start with a 4-byte alignment
    return text[:start], blobs


_STRING_LITERAL = re.compile(r'"(?:[^"\\\n\v\f]|\\(?:["nt\\]|[0-9A-Fa-f]{2}))*+"')
"""xDSL's string-literal pattern without its nested quantifier (``(?:[^"...]+|...)*``), which backtracks
exponentially on an unterminated string: the same language, matched in linear time."""


class _Parser(Parser):
    """xDSL's parser, resolving ``dense_resource<key>`` to numpy-backed dense attributes as it parses, lexing
    string literals in linear time, and refusing dense literals over the tensor budget before expanding them."""

    def __init__(self, ctx: Context, text: str, filename: str, blobs: dict[str, bytes]):
        # xDSL's constructor lexes the first token with its own (exponential) pattern, before the one set below
        first = re.match(r"(?:\s|//[^\n]*)*", text).end()  # type: ignore[union-attr]
        if text.startswith('"', first) and _STRING_LITERAL.match(text, first) is None:
            line = text.count("\n", 0, first) + 1
            raise InputError(f"{filename}:{line}: a string literal that is not closed on its line")
        super().__init__(ctx, text, filename)
        self._blobs = blobs
        self._filename = filename
        self.lexer._unescaped_characters_regex = _STRING_LITERAL  # type: ignore[attr-defined]

    def _parse_dense_literal_type(self):  # type: ignore[no-untyped-def]  # noqa: ANN202
        """The type of a ``dense<...>`` literal, refused if over the limits: xDSL expands a splat into a Python list
        (about 8 bytes per element more than the data), so that overhead counts against the budget too."""
        from nnkiln.ir.elements import dtype_of

        ttype = super()._parse_dense_literal_type()
        try:
            itemsize = dtype_of(ttype.element_type).itemsize
        except Exception:  # noqa: BLE001 - an element type numpy cannot hold: xDSL reports it
            return ttype
        try:
            check_tensor(ttype.get_shape(), itemsize + 8, f"{self._filename}: dense literal of type {ttype}")
        except InputError as err:
            self.raise_error(str(err).split(": ", 1)[-1])
        return ttype

    def _parse_builtin_dense_resource_attr(self) -> DenseIntOrFPElementsAttr:  # type: ignore[override]
        from nnkiln.ir.elements import dtype_of

        self.parse_characters("<", " in dense_resource attribute")
        key = self.parse_identifier(" for resource handle")
        self.parse_characters(">", " in dense_resource attribute")
        self.parse_characters(":", " in dense_resource attribute")
        ttype = self.parse_type()
        if not isinstance(ttype, TensorType):
            self.raise_error(f"dense_resource<{key}> must have a ranked tensor type, got {ttype}")
        if key not in self._blobs:
            self.raise_error(f"dense_resource<{key}> has no data in the file's dialect_resources section")
        data = self._blobs[key]
        count = 1
        for d in ttype.get_shape():
            count *= d
        expected = count * dtype_of(ttype.element_type).itemsize
        if len(data) != expected:
            self.raise_error(f"dense_resource<{key}> holds {len(data)} bytes, but {ttype} needs {expected}")
        return DenseIntOrFPElementsAttr(ttype, BytesAttr(data))


def parse_module(text: str, ctx: Context | None = None, filename: str = "<input>") -> ModuleOp:
    """Parse MLIR text into a module. Raises ``InputError`` with file:line:col on bad syntax."""
    from nnkiln.ir.context import make_context

    ctx = ctx or make_context()
    body, blobs = _split_resources(text, filename)
    check_nesting(body, filename)
    try:
        return _Parser(ctx, body, filename, blobs).parse_module()
    except ParseError as err:
        raise InputError(_short_parse_error(str(err), filename) + _op_hint(str(err), ctx)) from None
    except RecursionError:  # nesting the bracket limit does not see (e.g. regions in regions)
        raise InputError(f"{filename}: input nested too deeply to parse") from None
    except NotImplementedError as err:  # xDSL has no storage for some element types (array<i128: ...>)
        raise InputError(f"{filename}: unsupported: {err}") from None
    except (VerifyException, ValueError, TypeError, KeyError, IndexError, AssertionError) as err:
        # xDSL checks property constraints while building parsed ops; report them as bad input.
        raise InputError(f"{filename}: invalid IR: {str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__}") from None


def _op_hint(message: str, ctx: Context) -> str:
    """For an unregistered operation, the registered names closest to it."""
    import re

    from nnkiln.errors import did_you_mean

    m = re.search(r"Operation (\S+) is not registered", message)
    return did_you_mean(m.group(1), [op.name for op in ctx.loaded_ops]) if m else ""


def _short_parse_error(message: str, filename: str) -> str:
    lines = message.strip().splitlines()
    head = lines[0] if lines else message
    rest = [ln for ln in lines[1:] if ln.strip()]
    detail = rest[-1].strip() if rest else ""
    if detail and detail not in head:
        head = f"{head}: {detail}"
    return head if head.startswith(filename) else f"{filename}: {head}"


class _ResourcePrinter(Printer):
    """A printer that writes large dense constants as ``dense_resource`` blobs."""

    def __init__(self, stream: io.StringIO, generic: bool):
        super().__init__(stream=stream, print_generic_format=generic)
        self._blobs: dict[str, bytes] = {}
        self._blob_keys: dict[int, str] = {}

    def print_attribute(self, attribute: Attribute) -> None:
        if isinstance(attribute, DenseIntOrFPElementsAttr) and _count(attribute) > RESOURCE_THRESHOLD:
            key = self._blob_keys.get(id(attribute))
            if key is None:
                key = f"blob{len(self._blobs)}"
                self._blob_keys[id(attribute)] = key
                self._blobs[key] = attribute.data.data
            self.print_string(f"dense_resource<{key}> : ")
            self.print_attribute(attribute.type)
            return
        super().print_attribute(attribute)

    def print_blobs(self) -> None:
        if not self._blobs:
            return
        self.print_string("\n\n{-#\n  dialect_resources: {\n    builtin: {\n")
        items = list(self._blobs.items())
        for i, (key, data) in enumerate(items):
            sep = "," if i + 1 < len(items) else ""
            self.print_string(f'      {key}: "0x04000000{data.hex().upper()}"{sep}\n')
        self.print_string("    }\n  }\n#-}")


def _count(attr: DenseIntOrFPElementsAttr) -> int:
    n = 1
    for d in attr.type.get_shape():
        n *= d
    return n


def print_module(op: Operation, generic: bool = False) -> str:
    """MLIR text of ``op`` (custom forms unless ``generic``), large constants as resources."""
    stream = io.StringIO()
    printer = _ResourcePrinter(stream, generic)
    printer.print_op(op)
    printer.print_blobs()
    stream.write("\n")
    return stream.getvalue()


def parse_module_file(path: str, ctx: Context | None = None) -> ModuleOp:
    """Read and parse an ``.mlir`` file; unreadable files raise ``InputError``."""
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except (OSError, UnicodeDecodeError) as err:
        raise InputError(f"{path}: cannot read: {err}") from None
    return parse_module(text, ctx, path)


def split_input_file(text: str) -> Iterable[tuple[int, str]]:
    """Split text at ``// -----`` lines (mlir-opt's --split-input-file); yields (first line, chunk)."""
    line = 1
    for chunk in re.split(r"^// -----.*$", text, flags=re.M):
        yield line, chunk
        line += chunk.count("\n")
