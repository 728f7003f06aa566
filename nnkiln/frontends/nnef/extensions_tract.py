"""Documents in tract's NNEF dialect (``extension tract_registry tract_core;``), as torch-to-nnef writes them.

torch-to-nnef's ``TractNNEF`` target (and, for some operators, its ``KhronosNNEF`` target too) writes
documents for the tract inference engine. tract's reader is more permissive than the NNEF specification
and adds operations of its own (``tract_core_*``, declared by the ``tract_core`` registry). Such a
document is recognised by its ``extension tract_registry ...;`` directive; :func:`prepare_source` turns
its text into a standard NNEF document with the same meaning, which the ordinary reader then parses,
checks, expands and lowers. Nothing changes for a document without that directive.

Every rewrite keeps the line structure (declarations are added on the extension line, removed text
is replaced by its newlines), so errors still point at the right line of the original file.

What tract accepts and the specification does not (the rewrite makes it standard):

* fragment definitions and operator expressions without ``KHR_enable_fragment_definitions`` /
  ``KHR_enable_operator_expressions``: the header enables both;
* the metadata fragment ``tract_core_properties`` (tuples of strings typed ``tensor<scalar>``): removed
  (it is never invoked);
* a document fragment named like a standard NNEF 1.0.3 operation (torch-to-nnef defines ``elu``): the
  document's own fragment wins inside the document (renamed ``t2n_<name>`` there); the standard
  library's compounds keep the standard one;
* attribute values passed positionally (``softmax(x, 3)``, ``leaky_relu(x, 0.1)``): named; a single
  value for an array attribute (``axes = 3``): wrapped (``[3]``); ``integer[][]`` literals for a
  tuple-array attribute (``padding = [[0, 0], [1, 2]]``): pairs become tuples;
* a graph variable used as an attribute value (``epsilon = var_1e_05``, tract reads attribute
  tensors by value): replaced by its stored value (rank 0 → a literal, rank 1 → an array literal);
* ``recip`` (tract's name of ``rcp``);
* ``a, b = unstack(...)`` / ``split``: the array result unpacked into bare identifiers becomes the
  array pattern ``[a, b] = ...``;
* a rank-1 bias ``[C]`` of ``conv``/``deconv`` (tract broadcasts it per channel; NNEF §4.3.1 wants
  ``[1, C]``): a graph variable given as bias is passed as ``unsqueeze(bias, axes = [0])``.

The ``tract_core`` operations supported, with their semantics (from torch-to-nnef 0.24.12's emitters
and fragment files, and tract's operator definitions they target):

* ``tract_core_external(shape, datum_type)``: a graph input, ``external<T>(shape)`` with ``T`` from the
  datum type (``f16/f32/f64`` → scalar, ``i8…i64/u8…u64`` → integer, ``bool`` → logical).
* ``tract_core_cast(input, to)``: element type conversion, NNEF 1.0.5 ``cast<T>(input)``.
* ``tract_core_erf(x)``: the error function. TOSA 0.30 cannot compute it exactly; it is the ONNX
  frontend's approximation (``nnkiln.frontends.onnx.lowerings.approx``: ``tanh(c·Q(c²))`` with
  ``c = clamp(x, −4, 4)``, the same coefficients, max. abs. error 1.4e-7) written as an NNEF body.
* ``tract_core_hard_swish(x)``: ``x · clamp(x + 3, 0, 6) / 6`` (torch's hardswish).
* ``tract_core_gather(input, indices, axis, datum_type)``: NNEF 1.0.5 ``gather`` (``datum_type`` only
  names the element type of the input and is ignored).
* ``tract_core_resize(input, interpolator, coord_transformer, nearest_mode, scales | sizes)``: ONNX-style
  resize; ``scales``/``sizes`` are f32 vectors over all axes (a graph variable). Supported when the
  leading two axes keep their size and every other axis grows by an integer factor f:
  ``nearest`` with ``asymmetric`` + ``floor`` (torch's ``nearest``) is ``nearest_upsample(factor)``
  (output i reads input floor(i/f)); ``linear`` with ``half_pixel``/``pytorch_half_pixel`` (torch's
  ``align_corners=False``) is ``multilinear_upsample(method = 'symmetric', border = 'replicate')``
  (samples at (i + 0.5)/f − 0.5, clamped at the edges), with ``align_corners`` it is
  ``method = 'aligned'`` (samples at i·(x − 1)/(x·f − 1)). Other combinations (non-integer factors,
  cubic, other coordinate transformers or rounding modes) raise an error naming them.

``tract_transformers`` registry: ``tract_transformers_sdpa(q, k, v[, mask], datum_type, acc_datum_type,
is_causal, scale)`` (torch's ``scaled_dot_product_attention``) is
``matmul(softmax(matmul(q, k, transposeB)·s + mask, axes = [last]), v)`` with ``s = scale`` when given
(non-zero), else ``1/sqrt(d)`` for ``d`` the last extent of ``q``; the mask is additive (default 0).
``is_causal = true`` is rejected (named in the error).

``tract_core_scan`` (torch-to-nnef's LSTM/GRU loops): a recursive fragment generated per call (see
``_rewrite_scans``).

Other ``tract_core_*`` / ``tract_transformers_*`` operations (``einsum``, ``topk``, ``fft``…) have no equivalent here: :func:`prepare_source` raises :class:`NnefError`
at the first one, naming it and its line. Registries other than ``tract_core`` and
``tract_transformers`` are rejected the same way.

Hook: ``loader.load_nnef`` calls ``prepare_source(text, files, file=graph_file)`` on the decoded
``graph.nnef`` before ``parse_document``.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Mapping

import numpy as np

from nnkiln.ir.errors import NnefError

REGISTRY_EXTENSION = "tract_registry"
"""The extension directive ``extension tract_registry <registry>...;`` that marks a tract document."""

SUPPORTED_REGISTRIES = frozenset({"tract_core", "tract_transformers"})

DATUM_TYPES: dict[str, str] = {
    **{t: "scalar" for t in ("f16", "f32", "f64")},
    **{t: "integer" for t in ("i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64", "tdim")},
    "bool": "logical",
}

SUPPORTED_OPS = frozenset({
    "tract_core_external", "tract_core_cast", "tract_core_erf", "tract_core_hard_swish", "tract_core_gather",
    "tract_core_resize", "tract_core_properties", "tract_transformers_sdpa", "tract_core_scan",
})

UNSUPPORTED_REASONS: dict[str, str] = {}


def _erf_body() -> str:
    from nnkiln.frontends.onnx.lowerings.approx import CLAMP_AT, COEFFICIENTS

    q = repr(float(COEFFICIENTS[-1]))
    for c in reversed(COEFFICIENTS[:-1]):
        q = f"({c!r} + s * {q})" if c >= 0 else f"(s * {q} - {-c!r})"
    lim = repr(float(CLAMP_AT))
    return f"c = clamp(x, -{lim}, {lim}); s = c * c; y = tanh(c * {q});"


SDPA_DECLARATION = (
    "fragment tract_transformers_sdpa( q: tensor<scalar>, k: tensor<scalar>, v: tensor<scalar>, "
    "mask: tensor<scalar> = 0.0, datum_type: string = 'f32', acc_datum_type: string = 'f32', "
    "is_causal: logical = false, scale: scalar = 0.0 ) -> ( output: tensor<scalar> ) "
    "{ r = length_of(shape_of(q)); d = scalar(shape_of(q)[r - 1]); "
    "a = matmul(q, k, transposeB = true) * (scale if scale != 0.0 else d ^ (0.0 - 0.5)) + mask; "
    "output = matmul(softmax(a, axes = [r - 1]), v); }"
)


@functools.lru_cache(maxsize=4)
def registry_declarations(registries: tuple[str, ...] = ("tract_core",)) -> str:
    """The operations of the tract ``registries`` as NNEF compound fragments (one line; see the module
    docstring). ``recip`` and the ``tract_core`` fragments are always declared."""
    if "tract_transformers" in registries:
        return registry_declarations(()) + " " + SDPA_DECLARATION
    frags = [
        f"fragment tract_core_erf( x: tensor<scalar> ) -> ( y: tensor<scalar> ) {{ {_erf_body()} }}",
        "fragment tract_core_hard_swish( x: tensor<scalar> ) -> ( y: tensor<scalar> ) "
        "{ y = x * clamp(x + 3.0, 0.0, 6.0) / 6.0; }",
        "fragment tract_core_gather<?>( input: tensor<?>, indices: tensor<integer>, axis: integer = 0, "
        "datum_type: string = '' ) -> ( output: tensor<?> ) { output = gather(input, indices, axis = axis); }",
        "fragment recip( x: tensor<scalar> ) -> ( y: tensor<scalar> ) { y = rcp(x); }",
    ]
    return " ".join(frags)


# ---------------------------------------------------------------------------------------------------
# text scanning (strings '...' / "..." and # comments are skipped)

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _skip(text: str, i: int) -> int:
    """If ``text[i]`` opens a string or a comment, the index after it; else ``i``."""
    c = text[i]
    if c in "'\"":
        j = text.find(c, i + 1)
        return len(text) if j < 0 else j + 1
    if c == "#":
        j = text.find("\n", i)
        return len(text) if j < 0 else j
    return i


def _code_positions(text: str):  # noqa: ANN202 - yields indices of characters outside strings/comments
    i = 0
    n = len(text)
    while i < n:
        j = _skip(text, i)
        if j != i:
            i = j
            continue
        yield i
        i += 1


def _match_close(text: str, open_idx: int) -> int:
    """Index of the bracket closing the one at ``open_idx`` (skipping strings and comments)."""
    pairs = {"(": ")", "[": "]", "{": "}"}
    stack = [pairs[text[open_idx]]]
    i = open_idx + 1
    while i < len(text):
        j = _skip(text, i)
        if j != i:
            i = j
            continue
        c = text[i]
        if c in pairs:
            stack.append(pairs[c])
        elif c in ")]}":
            if not stack or c != stack[-1]:
                return -1
            stack.pop()
            if not stack:
                return i
        i += 1
    return -1


def _split_top(s: str, sep: str = ",") -> list[str]:
    """Split at top-level ``sep`` (outside brackets and strings)."""
    parts, depth, start, i = [], 0, 0, 0
    while i < len(s):
        j = _skip(s, i)
        if j != i:
            i = j
            continue
        c = s[i]
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        elif c == sep and depth == 0:
            parts.append(s[start:i])
            start = i + 1
        i += 1
    parts.append(s[start:])
    return parts


def _line_col(text: str, idx: int) -> tuple[int, int]:
    line = text.count("\n", 0, idx) + 1
    return line, idx - (text.rfind("\n", 0, idx) + 1) + 1


def _same_lines(old: str, new: str) -> str:
    """``new`` padded with the newlines of ``old`` that it lacks (so later lines keep their numbers)."""
    return new + "\n" * max(0, old.count("\n") - new.count("\n"))


class _Call:
    """An invocation found in the text: ``name[<T>](args)`` spanning ``start:end``."""

    def __init__(self, text: str, start: int, name: str, generic: str | None, open_idx: int, close_idx: int):
        self.start, self.end = start, close_idx + 1
        self.name, self.generic = name, generic
        self.args_text = text[open_idx + 1:close_idx]
        self.args = [a for a in _split_top(self.args_text)]
        if len(self.args) == 1 and not self.args[0].strip():
            self.args = []


def _find_calls(text: str, names: Callable[[str], bool], begin: int = 0) -> list[_Call]:
    """Invocations of identifiers accepted by ``names`` (outermost first, non-overlapping scan order)."""
    calls = []
    code = set()  # lazily: positions outside strings/comments
    for i in _code_positions(text):
        code.add(i)
    for m in _IDENT.finditer(text, begin):
        s = m.start()
        if s not in code or (s > 0 and (text[s - 1].isalnum() or text[s - 1] == "_")):
            continue
        name = m.group(0)
        if not names(name) or re.search(r"\bfragment\s*$", text[max(0, s - 40):s]):
            continue  # a fragment declaration, not an invocation
        j = m.end()
        while j < len(text) and text[j] in " \t\r\n":
            j += 1
        generic = None
        if j < len(text) and text[j] == "<":
            k = text.find(">", j)
            if k < 0:
                continue
            generic = text[j + 1:k].strip()
            j = k + 1
            while j < len(text) and text[j] in " \t\r\n":
                j += 1
        if j >= len(text) or text[j] != "(":
            continue
        close = _match_close(text, j)
        if close < 0:
            continue
        calls.append(_Call(text, s, name, generic, j, close))
    return calls


def _replace(text: str, edits: list[tuple[int, int, str]]) -> str:
    """Apply non-overlapping ``(start, end, new)`` edits (each keeping its line count)."""
    out, pos = [], 0
    for s, e, new in sorted(edits):
        if s < pos:
            continue  # nested in an edited span: handled by a later pass
        out.append(text[pos:s])
        out.append(_same_lines(text[s:e], new))
        pos = e
    out.append(text[pos:])
    return "".join(out)


def _named(arg: str) -> tuple[str | None, str]:
    m = re.match(r"\s*([A-Za-z_][A-Za-z0-9_]*)\s*=(?!=)(.*)$", arg, re.S)
    if m:
        return m.group(1), m.group(2).strip()
    return None, arg.strip()


# ---------------------------------------------------------------------------------------------------
# the rewrite


def is_tract_document(text: str) -> bool:
    """Whether ``text`` declares a tract registry (``extension tract_registry ...;``) in its header."""
    header = _header_extensions(text)
    return header is not None and REGISTRY_EXTENSION in header[1]


def _header_extensions(text: str) -> tuple[list[tuple[int, int]], list[str]] | None:
    spans, names = [], []
    body = re.search(r"(?m)^[^#\n]*?\b(fragment|graph)\b", text)
    limit = body.start(1) if body else len(text)
    for m in re.compile(r"\bextension\b([^;]*);").finditer(text, 0, limit):
        spans.append((m.start(), m.end()))
        names.extend(m.group(1).split())
    return (spans, names) if spans else None


def _error(text: str, idx: int, file: str, message: str) -> NnefError:
    line, col = _line_col(text, idx)
    return NnefError(message, file=file, line=line, column=col)


def _literal(value: np.ndarray) -> str:
    def one(v: object) -> str:
        if isinstance(v, (bool, np.bool_)):
            return "true" if v else "false"
        if isinstance(v, (int, np.integer)):
            return str(int(v))
        f = float(np.float32(v))
        if not np.isfinite(f):
            raise ValueError(f"non-finite value {f}")
        r = repr(abs(f))
        if "." not in r and "e" not in r:
            r += ".0"
        return f"-{r}" if f < 0 or (f == 0 and np.signbit(f)) else r

    arr = np.asarray(value)
    if arr.ndim == 0:
        return one(arr.item())
    if arr.ndim == 1:
        return "[" + ", ".join(one(v) for v in arr.tolist()) + "]"
    raise ValueError(f"rank-{arr.ndim} value")


def prepare_source(text: str, files: Mapping[str, bytes] | None = None, file: str = "graph.nnef") -> str:
    """Standard NNEF text for a tract-dialect document (see the module docstring); other text unchanged.

    ``files`` are the container's members (``<label>.dat`` by path) for variables used as attribute
    values. Raises :class:`NnefError` (with line and column) for unsupported tract operations.
    """
    header = _header_extensions(text)
    if header is None or REGISTRY_EXTENSION not in header[1]:
        return text
    spans, names = header
    registries = [n for n in names[names.index(REGISTRY_EXTENSION) + 1:]
                  if n.startswith("tract_") and n != REGISTRY_EXTENSION]
    for r in registries:
        if r not in SUPPORTED_REGISTRIES:
            raise _error(text, spans[0][0], file, f"tract registry '{r}' is not supported (only "
                         f"{sorted(SUPPORTED_REGISTRIES)})")
    others = [n for n in names if n != REGISTRY_EXTENSION and n not in registries
              and n not in ("KHR_enable_fragment_definitions", "KHR_enable_operator_expressions")]
    directive = ("extension KHR_enable_fragment_definitions KHR_enable_operator_expressions"
                 + "".join(f" {n}" for n in others) + "; " + registry_declarations(tuple(sorted(registries))))
    edits = [(spans[0][0], spans[0][1], directive)] + [(s, e, "") for s, e in spans[1:]]
    text = _replace(text, edits)

    # the metadata fragment
    m = re.search(r"\bfragment\s+tract_core_properties\b", text)
    if m:
        brace = text.find("{", m.end())
        close = _match_close(text, brace) if brace >= 0 else -1
        if close > 0:
            text = _replace(text, [(m.start(), close + 1, "")])

    # unsupported tract operations: fail on the first, naming it
    for call in _find_calls(text, lambda n: n.startswith(("tract_core_", "tract_transformers_"))):
        if call.name not in SUPPORTED_OPS:
            reason = UNSUPPORTED_REASONS.get(call.name, "no equivalent in NNEF or TOSA 0.30 is implemented")
            raise _error(text, call.start, file, f"tract operation '{call.name}' is not supported: {reason}")

    text = _rename_standard_clashes(text)
    graph_at = _graph_start(text)
    variables = _graph_variables(text, graph_at)

    def value_of(ident: str) -> np.ndarray | None:
        spec = variables.get(ident)
        if spec is None or files is None:
            return None
        from nnkiln.frontends.nnef.tensor_file import ItemType, read_tensor

        label, shape = spec
        if len(shape) > 1:
            return None
        key = label.replace("\\", "/") + ".dat"
        lower = {k.lower(): k for k in files}
        key = key if key in files else lower.get(key.lower(), "")
        if key not in files:
            return None
        data = read_tensor(files[key], file=key)
        arr = data.values if data.item_type in (ItemType.FLOAT, ItemType.INTEGER) else data.dequantize()
        arr = np.asarray(arr)
        if list(arr.shape) != list(shape):
            return None  # the reader reports the conflict (§6 stage 4)
        return arr

    text = _rewrite_scans(text, file)
    graph_at = _graph_start(text)
    text = _bracket_array_unpacking(text, graph_at)
    text = _rewrite_tract_calls(text, value_of, file)
    text = _normalize_arguments(text, value_of, file, variables)
    return text


def _graph_start(text: str) -> int:
    for i in _code_positions(text):
        if text.startswith("graph", i) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")) \
                and not (i + 5 < len(text) and (text[i + 5].isalnum() or text[i + 5] == "_")):
            return i
    return len(text)


def _graph_variables(text: str, graph_at: int) -> dict[str, tuple[str, list[int]]]:
    out = {}
    pat = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)\s*=\s*variable\s*(?:<\s*\w+\s*>)?\s*\(([^;]*)\)\s*;")
    for m in pat.finditer(text, graph_at):
        args = dict(_named(a) for a in _split_top(m.group(2)))
        label, shape = args.get("label"), args.get("shape")
        if label is None or shape is None:
            continue
        try:
            dims = [int(d) for d in shape.strip().strip("[]").split(",") if d.strip()]
        except ValueError:
            continue
        out[m.group(1)] = (label.strip().strip("'\""), dims)
    return out


def _tuple_list(text: str, call: _Call, value: str, file: str) -> list[list[str]]:
    """``[(a, b, ...), ...]`` → ``[["a", "b", ...], ...]`` (items as text)."""
    v = value.strip()
    if not (v.startswith("[") and v.endswith("]")):
        raise _error(text, call.start, file, f"'tract_core_scan': expected a list of tuples, found '{v}'")
    out = []
    for item in _split_top(v[1:-1]):
        item = item.strip()
        if not item:
            continue
        if not (item.startswith("(") and item.endswith(")")):
            raise _error(text, call.start, file, f"'tract_core_scan': expected a tuple, found '{item}'")
        out.append([x.strip() for x in _split_top(item[1:-1])])
    return out


def _rewrite_scans(text: str, file: str) -> str:
    """``tract_core_scan`` → a recursive fragment generated per call (NNEF allows recursion with the lazy
    ``if``/``else`` of §3.2.3).

    tract's scan (``body`` a fragment name; ``scan = [(param, tensor, axis, chunk)]`` inputs cut into
    ``chunk``-sized pieces along ``axis``, one per iteration; ``full = [(param, tensor)]`` passed whole;
    ``state = [(param, initial, result)]`` carried from the body's ``result`` of one iteration to ``param``
    of the next; ``output = [(result, 'full' | 'last', axis, chunk)]``: the iterations' values concatenated
    along ``axis`` or the last one; ``skip`` leading iterations whose outputs are dropped) becomes
    ``tract_scan_<k>(..., i = 0, n = extent / chunk)``: iteration ``i`` slices the scan inputs, invokes the
    body and, while ``i + 1 < n``, recurses with the new state, concatenating its per-iteration outputs in
    front of the rest. Supported: positive chunks, ``skip = 0``; the number of iterations is bounded by the
    expander's recursion limit."""
    calls = _find_calls(text, lambda n: n == "tract_core_scan")
    if not calls:
        return text
    from nnkiln.frontends.nnef.parser import Parser

    try:
        _, _, own, _ = Parser(text, file).parse_document()
    except NnefError:
        return text
    frags = {f.name: f for f in own}
    generated, edits = [], []
    for k, call in enumerate(calls):
        kw = {n: v for n, v in (_named(a) for a in call.args) if n is not None}
        body_name = kw.get("body", "").strip().strip("'\"")
        body = frags.get(body_name)
        if body is None:
            raise _error(text, call.start, file, f"'tract_core_scan': body fragment '{body_name}' is not defined")
        if kw.get("skip", "0").strip() != "0":
            raise _error(text, call.start, file, f"'tract_core_scan' with skip = {kw['skip'].strip()} is not "
                         "supported (only 0)")
        scan = _tuple_list(text, call, kw.get("scan", "[]"), file)
        full = _tuple_list(text, call, kw.get("full", "[]"), file)
        state = _tuple_list(text, call, kw.get("state", "[]"), file)
        output = _tuple_list(text, call, kw.get("output", "[]"), file)
        if not scan or not output or any(len(t) != 4 for t in scan + output) or any(len(t) != 2 for t in full) \
                or any(len(t) != 3 for t in state):
            raise _error(text, call.start, file, "'tract_core_scan': malformed scan/full/state/output lists")
        ptype = {p.name: str(p.type) for p in body.params}
        rtype = {r.name: str(r.type) for r in body.results}

        def unq(x: str) -> str:
            return x.strip().strip("'\"")

        for t in scan:
            if t[3].lstrip().startswith("-"):
                raise _error(text, call.start, file, "'tract_core_scan' with a negative chunk (a backward scan) "
                             "is not supported")
        name = f"tract_scan_{k}"
        params = ([f"X{j}: {ptype.get(unq(t[0]), 'tensor<scalar>')}" for j, t in enumerate(scan)]
                  + [f"F{j}: {ptype.get(unq(t[0]), 'tensor<scalar>')}" for j, t in enumerate(full)]
                  + [f"S{j}: {ptype.get(unq(t[0]), 'tensor<scalar>')}" for j, t in enumerate(state)]
                  + ["i: integer", "n: integer"]
                  + [f"a{j}: integer, c{j}: integer" for j in range(len(scan))]
                  + [f"oa{j}: integer" for j in range(len(output))])
        results = [f"o{j}: {rtype.get(unq(t[0]), 'tensor<scalar>')}" for j, t in enumerate(output)]
        stmts = [f"x{j} = slice(X{j}, axes = [a{j}], begin = [i * c{j}], end = [(i + 1) * c{j}]);"
                 for j in range(len(scan))]
        bargs = ([f"{unq(t[0])} = x{j}" for j, t in enumerate(scan)] + [f"{unq(t[0])} = F{j}" for j, t in enumerate(full)]
                 + [f"{unq(t[0])} = S{j}" for j, t in enumerate(state)])
        rnames = [f"r_{r.name}" for r in body.results]
        lhs = rnames[0] if len(rnames) == 1 else f"({', '.join(rnames)})"
        stmts.append(f"{lhs} = {body_name}({', '.join(bargs)});")
        nxt = ([f"X{j} = X{j}" for j in range(len(scan))] + [f"F{j} = F{j}" for j in range(len(full))]
               + [f"S{j} = r_{unq(t[2])}" for j, t in enumerate(state)] + ["i = i + 1", "n = n"]
               + [f"a{j} = a{j}, c{j} = c{j}" for j in range(len(scan))] + [f"oa{j} = oa{j}" for j in range(len(output))])
        here = [f"r_{unq(t[0])}" for t in output]
        qs = [f"q{j}" for j in range(len(output))]
        if len(output) == 1:
            stmts.append(f"q0 = {name}({', '.join(nxt)}) if i + 1 < n else {here[0]};")
        else:
            stmts.append(f"({', '.join(qs)}) = {name}({', '.join(nxt)}) if i + 1 < n else ({', '.join(here)});")
        for j, t in enumerate(output):
            if unq(t[1]) == "full":
                stmts.append(f"o{j} = concat([{here[j]}, q{j}], axis = oa{j}) if i + 1 < n else {here[j]};")
            elif unq(t[1]) == "last":
                stmts.append(f"o{j} = q{j} if i + 1 < n else {here[j]};")
            else:
                raise _error(text, call.start, file, f"'tract_core_scan': output mode {t[1]} is not supported")
        generated.append(f"fragment {name}( {', '.join(params)} ) -> ( {', '.join(results)} ) "
                         f"{{ {' '.join(stmts)} }}")
        cargs = ([f"X{j} = {t[1]}" for j, t in enumerate(scan)] + [f"F{j} = {t[1]}" for j, t in enumerate(full)]
                 + [f"S{j} = {t[1]}" for j, t in enumerate(state)]
                 + ["i = 0", f"n = shape_of({scan[0][1]})[{scan[0][2]}] / {scan[0][3]}"]
                 + [f"a{j} = {t[2]}, c{j} = {t[3]}" for j, t in enumerate(scan)]
                 + [f"oa{j} = {t[2]}" for j, t in enumerate(output)])
        edits.append((call.start, call.end, f"{name}({', '.join(cargs)})"))
    text = _replace(text, edits)
    m = re.search(r"extension KHR_enable_fragment_definitions KHR_enable_operator_expressions[^\n]*", text)
    if m is None:  # prepare_source writes that directive first; a mangled document may still lose it
        raise _error(text, 0, file, "'tract_core_scan': the document header could not be rewritten")
    return text[:m.end()] + " " + " ".join(generated) + text[m.end():]


def _bracket_array_unpacking(text: str, graph_at: int) -> str:
    """``a, b, c = unstack(...)`` → ``[a, b, c] = unstack(...)`` (also ``split``): tract unpacks the
    array result into a bare list of identifiers; NNEF needs an array pattern (§3.2.1)."""
    pat = re.compile(r"(?m)^([ \t]*)([A-Za-z_][A-Za-z0-9_]*(?:[ \t]*,[ \t]*[A-Za-z_][A-Za-z0-9_]*)+)([ \t]*=[ \t]*"
                     r"(?:unstack|split)\b)")
    return text[:graph_at] + pat.sub(lambda m: f"{m.group(1)}[{m.group(2)}]{m.group(3)}", text[graph_at:])


def _rename_standard_clashes(text: str) -> str:
    from nnkiln.frontends.nnef.document import V105_ADDITIONS, standard_fragments

    std = {n for n, f in standard_fragments().items() if f.standard and n not in V105_ADDITIONS}
    own = set(re.findall(r"\bfragment\s+([A-Za-z_][A-Za-z0-9_]*)", text))
    clash = own & std
    if not clash:
        return text
    edits = []
    for m in re.finditer(r"\bfragment\s+([A-Za-z_][A-Za-z0-9_]*)", text):
        if m.group(1) in clash:
            edits.append((m.start(1), m.end(1), f"t2n_{m.group(1)}"))
    for call in _find_calls(text, lambda n: n in clash):
        edits.append((call.start, call.start + len(call.name), f"t2n_{call.name}"))
    return _replace(text, edits)


def _rewrite_tract_calls(text: str, value_of: Callable[[str], np.ndarray | None], file: str) -> str:
    """``tract_core_external`` → ``external<T>``, ``tract_core_cast`` → ``cast<T>``, ``tract_core_resize`` →
    ``nearest_upsample`` / ``multilinear_upsample``."""
    edits = []
    names = ("tract_core_external", "tract_core_cast", "tract_core_resize", "tract_transformers_sdpa")
    for call in _find_calls(text, lambda n: n in names):
        named = [_named(a) for a in call.args]
        kw = {k: v for k, v in named if k is not None}
        pos = [v for k, v in named if k is None]
        if call.name == "tract_transformers_sdpa":
            if kw.get("is_causal", "false").strip() != "false":
                raise _error(text, call.start, file, "'tract_transformers_sdpa' with is_causal = "
                             f"{kw['is_causal'].strip()} is not supported (only is_causal = false)")
            continue
        if call.name in ("tract_core_external", "tract_core_cast"):
            key = "datum_type" if call.name == "tract_core_external" else "to"
            dt = kw.get(key, "'f32'" if call.name == "tract_core_external" else None)
            if dt is None:
                raise _error(text, call.start, file, f"'{call.name}' needs '{key}'")
            t = DATUM_TYPES.get(dt.strip().strip("'\""))
            if t is None:
                raise _error(text, call.start, file, f"'{call.name}': datum type {dt} is not supported "
                             f"(one of {sorted(DATUM_TYPES)})")
            rest = [a.strip() for a in call.args if _named(a)[0] != key]
            new = ("external" if call.name == "tract_core_external" else "cast") + f"<{t}>(" + ", ".join(rest) + ")"
            edits.append((call.start, call.end, new))
            continue
        edits.append((call.start, call.end, _resize(text, call, pos, kw, value_of, file)))
    return _replace(text, edits)


def _resize(text: str, call: _Call, pos: list[str], kw: dict[str, str],
            value_of: Callable[[str], np.ndarray | None], file: str) -> str:
    def s(k: str, default: str) -> str:
        return kw.get(k, default).strip().strip("'\"")

    if not pos:
        raise _error(text, call.start, file, "'tract_core_resize' needs an input")
    interp, ctm, nm = s("interpolator", "nearest"), s("coord_transformer", "half_pixel"), s("nearest_mode", "floor")
    which = "scales" if "scales" in kw else "sizes" if "sizes" in kw else None
    if which is None:
        raise _error(text, call.start, file, "'tract_core_resize' needs 'scales' or 'sizes'")
    ident = kw[which].strip()
    vals = value_of(ident) if _IDENT.fullmatch(ident) else None
    if vals is None:
        raise _error(text, call.start, file, f"'tract_core_resize': '{which}' must be a stored graph variable "
                     f"(found '{ident}')")
    vals = np.asarray(vals, np.float64).reshape(-1)
    if not np.all(np.isfinite(vals)):
        raise _error(text, call.start, file, f"'tract_core_resize': {which} {vals.tolist()} are not finite")
    if which == "sizes":
        raise _error(text, call.start, file, "'tract_core_resize' with 'sizes' is not supported (only integer "
                     "'scales')")
    factors = [int(round(v)) for v in vals]
    if len(vals) < 3 or any(abs(v - f) > 1e-6 or f < 1 for v, f in zip(vals, factors)) or factors[:2] != [1, 1]:
        raise _error(text, call.start, file, f"'tract_core_resize' with scales {vals.tolist()} is not supported "
                     "(the first two axes must keep their size and the others grow by integer factors)")
    fac = "[" + ", ".join(str(f) for f in factors[2:]) + "]"
    x = pos[0]
    if interp == "nearest" and ctm == "asymmetric" and nm == "floor":
        return f"nearest_upsample({x}, factor = {fac})"
    if interp == "linear" and ctm in ("half_pixel", "pytorch_half_pixel", "align_corners"):
        method = "aligned" if ctm == "align_corners" else "symmetric"
        return f"multilinear_upsample({x}, factor = {fac}, method = '{method}', border = 'replicate')"
    raise _error(text, call.start, file, f"'tract_core_resize' with interpolator '{interp}', coord_transformer "
                 f"'{ctm}', nearest_mode '{nm}' is not supported (nearest/asymmetric/floor and linear with "
                 "half_pixel, pytorch_half_pixel or align_corners are)")


_BIASED = frozenset({"conv", "deconv", "separable_conv", "separable_deconv"})


def _normalize_arguments(text: str, value_of: Callable[[str], np.ndarray | None], file: str,
                         variables: Mapping[str, tuple[str, list[int]]]) -> str:
    """Positional attributes → named, single values for arrays → arrays, pairs → tuples, graph
    variables as attribute values → their values (see the module docstring)."""
    from nnkiln.frontends.nnef.ast import ArrayType, TupleType, has_tensor
    from nnkiln.frontends.nnef.document import standard_fragments
    from nnkiln.frontends.nnef.parser import Parser

    try:
        _, _, own, _ = Parser(text, file).parse_document()
    except NnefError:
        return text  # the ordinary reader reports it
    sigs = {n: f.params for n, f in standard_fragments().items()}
    sigs.update({f.name: f.params for f in own})
    graph_at = _graph_start(text)
    edits = []
    for call in _find_calls(text, lambda n: n in sigs):
        params = sigs[call.name]
        new_args, changed = [], False
        for i, arg in enumerate(call.args):
            name, value = _named(arg)
            p = params[i] if name is None and i < len(params) else next((q for q in params if q.name == name), None)
            if p is None or has_tensor(p.type):
                v = value
                spec = variables.get(v) if call.start >= graph_at else None
                if (p is not None and p.name == "bias" and call.name in _BIASED and spec is not None
                        and len(spec[1]) == 1 and spec[1][0] > 1):
                    v = f"unsqueeze({v}, axes = [0])"  # tract's per-channel rank-1 bias is [1, C] in NNEF
                    changed = True
                new_args.append(arg.strip() if v == value else (f"{name} = {v}" if name else v))
                continue
            v = value
            if call.start >= graph_at and _IDENT.fullmatch(v) and v not in ("true", "false"):
                data = value_of(v)
                if data is not None:
                    try:
                        v = _literal(data if isinstance(p.type, ArrayType) or data.size != 1 else data.reshape(()))
                    except ValueError:
                        pass
            if isinstance(p.type, ArrayType) and not v.startswith("[") and not _IDENT.fullmatch(v):
                v = f"[{v}]"
            if isinstance(p.type, ArrayType) and isinstance(p.type.item, TupleType) and v.startswith("[["):
                inner = _split_top(v[1:-1])
                parts = []
                for it in inner:
                    it = it.strip()
                    parts.append("(" + it[1:-1] + ")" if it.startswith("[") and it.endswith("]") else it)
                v = "[" + ", ".join(parts) + "]"
            if name is None or v != value:
                changed = True
            new_args.append(f"{p.name} = {v}")
        if changed:
            gen = f"<{call.generic}>" if call.generic else ""
            edits.append((call.start, call.end, f"{call.name}{gen}(" + ", ".join(new_args) + ")"))
    return _replace(text, edits)


__all__ = ["DATUM_TYPES", "REGISTRY_EXTENSION", "SUPPORTED_OPS", "is_tract_document", "prepare_source",
           "registry_declarations"]
