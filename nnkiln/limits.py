"""Limits on what an input file may ask for, checked before anything is allocated (issue 21).

A model file, an MLIR text or a blob from a stranger must not make nnkiln allocate without bound, recurse until
the interpreter overflows, or spin. The readers call these checks with the sizes the file *declares*, before
they allocate, broadcast or expand anything:

- ``check_tensor(shape, itemsize, what)``: a tensor (a constant, an input, an output, a buffer) has at most
  ``MAX_ELEMENTS`` elements (TOSA's size limit: element counts and offsets are 32-bit signed) and at most
  ``max_tensor_bytes()`` bytes;
- ``max_tensor_bytes()``: the byte budget, ``NNKILN_MAX_TENSOR_BYTES`` in the environment (an integer, optionally
  with a ``K``/``M``/``G``/``T`` suffix, powers of 1024), default ``DEFAULT_MAX_TENSOR_BYTES`` (1 GiB);
- ``check_nesting(text, what)``: bracket nesting of a text format at most ``MAX_NESTING`` deep (the parsers are
  recursive descent: deeper input would overflow the interpreter's stack).

Every violation is a ``LimitError`` (an ``InputError``, exit code 2) naming the file and what is too large. This
module imports nothing from nnkiln but ``nnkiln.errors`` (a shared leaf module: readers of every layer use it).
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence

from nnkiln.errors import InputError

MAX_ELEMENTS = (1 << 31) - 1
"""TOSA's size limit: a tensor has fewer than 2^31 elements (sizes and offsets are int32 in the specification)."""

DEFAULT_MAX_TENSOR_BYTES = 1 << 30
"""The default byte budget of one tensor, and of a blob's arena (1 GiB: several such tensors still fit a 4 GiB
process); ``NNKILN_MAX_TENSOR_BYTES`` overrides it."""

MAX_NESTING = 64
"""The deepest bracket nesting a text parser accepts (real models nest about 10 deep)."""

_SUFFIX = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}


class LimitError(InputError):
    """An input declares something larger than a documented limit (``nnkiln.limits``)."""


def max_tensor_bytes() -> int:
    """The byte budget of one tensor: ``NNKILN_MAX_TENSOR_BYTES`` (e.g. ``1073741824``, ``512M``, ``8G``) or 1 GiB."""
    text = os.environ.get("NNKILN_MAX_TENSOR_BYTES", "").strip()
    if not text:
        return DEFAULT_MAX_TENSOR_BYTES
    scale = _SUFFIX.get(text[-1].upper(), 1)
    digits = text[:-1] if scale != 1 else text
    if not digits.isdigit() or int(digits) <= 0:
        raise InputError(f"NNKILN_MAX_TENSOR_BYTES={text!r} is not a positive byte count (e.g. 1073741824 or 1G)")
    return int(digits) * scale


def num_elements(shape: Sequence[int]) -> int:
    """The product of ``shape`` (Python integers: no overflow)."""
    n = 1
    for d in shape:
        n *= int(d)
    return n


def check_tensor(shape: Sequence[int], itemsize: float, what: str) -> int:
    """Refuse a tensor of ``shape`` with more than ``MAX_ELEMENTS`` elements or ``max_tensor_bytes()`` bytes
    (``itemsize`` may be fractional: 0.5 for int4); ``what`` names the file and the tensor. Returns the element
    count. Negative dimensions are the caller's to reject (they make the count meaningless)."""
    dims = [int(d) for d in shape]
    if any(d < 0 for d in dims):
        raise LimitError(f"{what}: negative dimension in shape {dims}")
    count = num_elements(dims)
    if count > MAX_ELEMENTS:
        raise LimitError(f"{what}: shape {dims} has {count} elements, over TOSA's limit of {MAX_ELEMENTS}")
    check_bytes(int(count * itemsize), what, f"shape {dims} of {itemsize:g}-byte elements")
    return count


def check_bytes(nbytes: int, what: str, detail: str = "") -> None:
    """Refuse an allocation of ``nbytes`` over the byte budget."""
    budget = max_tensor_bytes()
    if nbytes > budget:
        about = f" ({detail})" if detail else ""
        raise LimitError(f"{what}: {nbytes} bytes{about} exceed the tensor budget of {budget} bytes "
                         "(set NNKILN_MAX_TENSOR_BYTES to allow more)")


_OPEN = frozenset("([{<")
_TOKENS = {
    (False, True): re.compile(r'"(?:[^"\\\n]|\\.)*"?|//[^\n]*|->|[(\[{<)\]}>]'),
    (True, True): re.compile(r'"(?:[^"\\\n]|\\.)*"?|\'(?:[^\'\\\n]|\\.)*\'?|#[^\n]*|->|[(\[{<)\]}>]'),
    (False, False): re.compile(r'"(?:[^"\\\n]|\\.)*"?|//[^\n]*|[(\[{)\]}]'),
    (True, False): re.compile(r'"(?:[^"\\\n]|\\.)*"?|\'(?:[^\'\\\n]|\\.)*\'?|#[^\n]*|[(\[{)\]}]'),
}


def nesting_depth(text: str, limit: int = MAX_NESTING, hash_comments: bool = False,
                  angles: bool = True) -> tuple[int, int]:
    """The deepest bracket nesting of ``text`` (``( [ {``, and ``<`` if ``angles``; ignoring ``"..."`` strings,
    ``//`` comments (MLIR), or ``#`` comments and ``'...'`` strings if ``hash_comments`` (NNEF), and ``->``) up to
    ``limit + 1``, and the offset where it went over ``limit`` (-1 if never). Linear in the length of ``text``
    (one regular-expression scan visiting only brackets, strings and comments)."""
    depth = deepest = 0
    for m in _TOKENS[(hash_comments, angles)].finditer(text):
        c = m.group()
        if len(c) != 1:  # a string, a comment or '->'
            continue
        if c in _OPEN:
            depth += 1
            if depth > deepest:
                deepest = depth
                if depth > limit:
                    return depth, m.start()
        elif depth:
            depth -= 1
    return deepest, -1


def check_nesting(text: str, what: str, limit: int = MAX_NESTING, hash_comments: bool = False) -> None:
    """Refuse ``text`` if its brackets nest deeper than ``limit``; the error names ``what`` (the file) with the
    line and column where the limit was passed."""
    _, pos = nesting_depth(text, limit, hash_comments)
    if pos >= 0:
        line, column = line_column(text, pos)
        raise LimitError(f"{what}:{line}:{column}: brackets nested more than {limit} deep")


def line_column(text: str, pos: int) -> tuple[int, int]:
    """1-based line and column of offset ``pos``."""
    return text.count("\n", 0, pos) + 1, pos - (text.rfind("\n", 0, pos) + 1) + 1
