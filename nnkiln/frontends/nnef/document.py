"""``parse_document``: NNEF text -> parsed and type-checked :class:`Document` (spec §3, §6 stages 1-2)."""

from __future__ import annotations

import functools
from importlib import resources

from nnkiln.frontends.nnef.ast import Document, Fragment
from nnkiln.frontends.nnef.checker import Checker
from nnkiln.frontends.nnef.parser import Parser
from nnkiln.ir.errors import NnefError

STDLIB_FILE = "stdlib.nnef"

#: Standard operations added by the NNEF 1.0.5 revision of the standard library (see ``parse_document``).
V105_ADDITIONS = frozenset({
    "tile", "pad", "gather", "cast", "sin", "cos", "tan", "sinh", "cosh", "asin", "acos", "atan", "asinh",
    "acosh", "atanh", "any_reduce", "all_reduce", "softabs", "selu", "gelu", "silu", "min_max_linear_quantize",
    "zero_point_linear_quantize",
})


@functools.lru_cache(maxsize=1)
def _stdlib() -> tuple[Fragment, ...]:
    text = resources.files("nnkiln.frontends.nnef").joinpath(STDLIB_FILE).read_text(encoding="ascii")
    frags = Parser(text, STDLIB_FILE, stdlib=True).parse_fragment_list()
    table = {f.name: f for f in frags}
    checker = Checker(table, lenient=False, file=STDLIB_FILE)
    for f in frags:
        checker.check_declaration(f)
    for f in frags:
        if f.body is not None:
            checker.check_fragment_body(f)
    return tuple(frags)


def standard_fragments() -> dict[str, Fragment]:
    """The standard library of §4 (96 operations, 5 ``_`` helpers and the 23 NNEF 1.0.5 additions), by name."""
    return {f.name: f for f in _stdlib()}


def parse_document(text: str, lenient: bool = False, file: str = "graph.nnef") -> Document:
    """Parse and check an NNEF document (graph.nnef text); it is not expanded or lowered.

    Raises :class:`nnkiln.NnefError` (with ``file``, ``line``, ``column``) naming the broken rule.
    ``lenient`` accepts the known defects of the spec's own text (inventory §1.13):

    =====================================================  ==========================================
    Defect in the spec text                                Lenient behaviour
    =====================================================  ==========================================
    §4.3.2 declares ``debbox`` (used as ``debox``)          ``debbox(...)`` calls ``debox``
    §4.9.2 ``linear`` calls ``matmul(..., trB = true)``     ``trA``/``trB`` name transposeA/transposeB
    §3.3.2 default generic vs. deduction                   deduce ``?`` first, default if none
      (``constant(shape=[1], value=[1])`` is invalid)
    integer literals where scalars are expected            integer casts to scalar (``alpha = 1``)
      (``leaky_relu(x, alpha = 1)``, ``1 + 2.0``)
    App. D ``(integer,integer,integer)[[]]``               ``T[[]]`` reads as ``T[][]``
    §3.2.4 ``extension A B;`` (white space), but the       ``extension A, B;`` is accepted too
      Khronos parser only takes ``extension A, B;``
    App. D.3.1 ``local_response_normalization(x,            a window ``size`` shorter than the rank
      size = [1, 5])`` on a rank-4 tensor                   gets trailing 1s (``expand``)
    =====================================================  ==========================================

    Defects of the standard library itself are corrected in ``stdlib.nnef`` in both modes (see its
    header).

    NNEF 1.0.5 (decision): the version directive only has ``major.minor`` (§3.2.4), so a 1.0.5 document
    declares ``version 1.0`` like a 1.0.3 one (nnef-tools always writes ``version 1.0``). The standard
    library is therefore the 1.0.5 one in both modes: the operations of ``V105_ADDITIONS`` (tile, pad,
    gather, cast, trigonometric/hyperbolic functions, any/all_reduce, softabs, selu, gelu, silu,
    min_max_linear_quantize, zero_point_linear_quantize) and the optional parameters
    ``reshape(axis_start, axis_count)``, ``slice(stride)``, ``elu(alpha)`` are accepted, as the Khronos
    parser accepts them. So that every valid 1.0.3 document keeps its validity and meaning, a document's
    own fragment may take the name of a 1.0.5 addition (it then replaces the addition inside that
    document); redefining a 1.0.3 standard operation stays an error. ``max_pool(..., border = 'ignore')`` (App. C.1) is valid in both modes: see ``expand``.
    """
    if lenient:
        text = text.replace("[[]]", "[][]")
    parser = Parser(text, file, lenient=lenient)
    try:
        version, extensions, own, graph = parser.parse_document()
    except RecursionError:
        tok = parser.toks[min(parser.pos, len(parser.toks) - 1)]
        raise NnefError("§3.2: expression nested too deeply for this parser", file=file, line=tok.line,
                        column=tok.column) from None
    fragments: dict[str, Fragment] = dict(standard_fragments())
    for f in own:
        if f.name in fragments and not (f.name in V105_ADDITIONS and fragments[f.name].standard):
            what = "a standard operation" if fragments[f.name].standard else "already defined"
            raise NnefError(f"§3.3.2: fragment name '{f.name}' is not unique ({what})", file=file,
                            line=f.line, column=f.column)
        fragments[f.name] = f
    doc = Document(version, extensions, fragments, graph, lenient=lenient, file=file,
                   own_fragments=[f.name for f in own])
    checker = Checker(fragments, lenient=lenient, file=file)
    try:
        for f in own:
            checker.check_declaration(f)
        for f in own:
            checker.check_fragment_body(f)
        doc.types = checker.check_graph(doc)
    except RecursionError:
        raise NnefError("§3.2: expression nested too deeply for this checker", file=file, line=graph.line,
                        column=graph.column) from None
    return doc

