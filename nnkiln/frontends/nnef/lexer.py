"""Lexical elements of NNEF (spec §3.1).

Decisions where §3.1 is silent:

* CR (``\\r``) counts as white space, so CRLF files are accepted (§3.1 lists SP, HT, VT, FF, NL only).
* A numeric literal is ``digits ['.' digits] [('e'|'E') ['+'|'-'] digits]``; it is an ``integer`` iff it
  has neither a fraction nor an exponent.  A leading ``-`` is a separate token; the parser folds it into the
  literal where flat syntax allows it.
* Inside strings only ``\\\\``, ``\\'`` and ``\\"`` are escapes; any other backslash sequence, a non-printable or a
  non-ASCII character is an error (§3.1: every ``\\`` must be escaped).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from enum import Enum

from nnkiln.ir.errors import NnefError

INT_MIN, INT_MAX = -(1 << 63), (1 << 63) - 1
"""Decision (the spec gives compile-time integers no width): signed 64-bit; a literal or a result outside is an
error, which also bounds the work and the memory of compile-time arithmetic."""


def brief(value: object, limit: int = 80) -> str:
    """``value`` for an error message: its text, or its first ``limit`` characters and the length."""
    text = value if isinstance(value, str) else repr(value)
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text)} characters)"

KEYWORDS = frozenset(
    "version extension graph fragment tensor integer scalar logical string shape_of length_of "
    "range_of for in yield if else".split()
)

_OPERATORS = ("->", "<=", ">=", "==", "!=", "&&", "||", "+", "-", "*", "/", "^", "<", ">", "!",
              "(", ")", "[", "]", "{", "}", ":", "=", ",", ";", "?")

_WHITESPACE = " \t\v\f\n\r"

_OPERATOR = re.compile("|".join(re.escape(op) for op in _OPERATORS))  # in _OPERATORS' order: longest first
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_BLANKS = re.compile(r"[ \t\v\f\r]+")
"""Compiled forms of the hot paths: a megabyte document tokenizes in well under a second (a loop over
``_OPERATORS`` with ``str.startswith`` took seconds: the fuzzer's 'hangs' under load)."""


class Tok(Enum):
    IDENT = "identifier"
    KEYWORD = "keyword"
    NUMBER = "numeric literal"
    STRING = "string literal"
    LOGICAL = "logical literal"
    OP = "operator"
    EOF = "end of input"


@dataclass
class Token:
    kind: Tok
    text: str
    value: object
    line: int
    column: int

    def describe(self) -> str:
        return "end of input" if self.kind is Tok.EOF else f"'{self.text}'"


def tokenize(text: str, file: str = "") -> list[Token]:
    """Split ``text`` into tokens; raises :class:`NnefError` on an invalid character or literal."""
    return list(iter_tokens(text, file))


def iter_tokens(text: str, file: str = "") -> Iterator[Token]:
    """The tokens of ``text`` one at a time, ending with ``EOF``: a parser that stops at the first error does not
    pay for tokenizing the rest of a large document."""
    i, line, col, n = 0, 1, 1, len(text)

    def err(msg: str, ln: int, cl: int) -> NnefError:
        return NnefError(msg, file=file, line=ln, column=cl)

    while i < n:
        c = text[i]
        if c in _WHITESPACE:
            if c == "\n":
                line, col = line + 1, 1
                i += 1
            else:
                end = _BLANKS.match(text, i).end()  # type: ignore[union-attr]
                col += end - i
                i = end
            continue
        if c == "#":
            while i < n and text[i] not in "\n\f":
                i += 1
            continue
        start_line, start_col, start = line, col, i
        if c.isascii() and (c.isalpha() or c == "_"):
            i = _IDENT.match(text, i).end()  # type: ignore[union-attr]
            word = text[start:i]
            if word in ("true", "false"):
                tok = Token(Tok.LOGICAL, word, word == "true", start_line, start_col)
            elif word in KEYWORDS:
                tok = Token(Tok.KEYWORD, word, word, start_line, start_col)
            else:
                tok = Token(Tok.IDENT, word, word, start_line, start_col)
        elif c.isascii() and c.isdigit():
            while i < n and text[i].isascii() and text[i].isdigit():
                i += 1
            is_int = True
            if i < n and text[i] == ".":
                if not (i + 1 < n and text[i + 1].isascii() and text[i + 1].isdigit()):
                    raise err("§3.1: a decimal point must be followed by a fractional part of digits",
                              line, col + (i - start))
                i += 1
                while i < n and text[i].isascii() and text[i].isdigit():
                    i += 1
                is_int = False
            if i < n and text[i] in "eE":
                j = i + 1
                if j < n and text[j] in "+-":
                    j += 1
                if not (j < n and text[j].isascii() and text[j].isdigit()):
                    raise err("§3.1: the exponent of a numeric literal must consist of digits",
                              line, col + (i - start))
                i = j
                while i < n and text[i].isascii() and text[i].isdigit():
                    i += 1
                is_int = False
            if i < n and text[i].isascii() and (text[i].isalpha() or text[i] == "_"):
                raise err(f"§3.1: an identifier must not start with a digit ('{text[start:i + 1]}...')",
                          start_line, start_col)
            lit = text[start:i]
            if is_int and (len(lit.lstrip("0")) > 19 or int(lit) > INT_MAX):
                raise err(f"§3.1: integer literal {brief(lit)} exceeds the 64-bit range (decision: compile-time "
                          "integers are signed 64-bit)", start_line, start_col)
            value: object = int(lit) if is_int else float(lit)
            tok = Token(Tok.NUMBER, lit, value, start_line, start_col)
        elif c in "'\"":
            quote = c
            i += 1
            chars: list[str] = []
            while True:
                if i >= n:
                    raise err("§3.1: unterminated string literal", start_line, start_col)
                ch = text[i]
                if ch == quote:
                    i += 1
                    break
                if ch == "\\":
                    nxt = text[i + 1] if i + 1 < n else ""
                    if nxt not in ("\\", "'", '"'):
                        raise err("§3.1: in a string literal '\\' must be escaped as '\\\\' "
                                  "(only \\\\, \\' and \\\" are escapes)", line, col + (i - start))
                    chars.append(nxt)
                    i += 2
                    continue
                if not (" " <= ch <= "~"):
                    raise err(f"§3.1: string literals may contain printable ASCII characters only, "
                              f"found {ch!r}", line, col + (i - start))
                chars.append(ch)
                i += 1
            tok = Token(Tok.STRING, text[start:i], "".join(chars), start_line, start_col)
        else:
            m = _OPERATOR.match(text, i)
            if m is None:
                raise err(f"§3.1: invalid character {c!r}", start_line, start_col)
            op = m.group()
            i += len(op)
            tok = Token(Tok.OP, op, op, start_line, start_col)
        col += i - start
        yield tok
    yield Token(Tok.EOF, "", None, line, col)
