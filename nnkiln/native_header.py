"""``nnkiln.h`` read by Python: the native kernels' signatures, constants and struct layouts.

The header (``nnkiln/runtime/native/nnkiln.h``) is the one definition of what C and Python share (its opening
comment names the subset of C it keeps to). Reading it needs no compiled library and imports nothing else of
nnkiln (a leaf module, like ``kinds``): the blob's row-program instruction set (``blob.row_program``) takes its
opcodes from here (``enum("nk_op")["ADD"]``) as the runtime does; the loader (``native.load``) types every
function of the library from ``signature``.

Everything is parsed once, on first use. Anything outside the subset raises ``HeaderError`` rather than being
skipped, so a declaration Python cannot read never goes unnoticed.
"""

from __future__ import annotations

import ctypes
import functools
import re
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any

__all__ = ["HEADER", "Function", "Header", "HeaderError", "define", "enum", "function", "functions", "parse",
           "parsed", "signature", "struct"]

HEADER = Path(__file__).parent / "runtime" / "native" / "nnkiln.h"

_SCALARS: dict[str, Any] = {
    "void": None, "int": ctypes.c_int, "long": ctypes.c_long, "float": ctypes.c_float, "double": ctypes.c_double,
    "size_t": ctypes.c_size_t, "ptrdiff_t": ctypes.c_ssize_t,
    "int8_t": ctypes.c_int8, "int16_t": ctypes.c_int16, "int32_t": ctypes.c_int32, "int64_t": ctypes.c_int64,
    "uint8_t": ctypes.c_uint8, "uint16_t": ctypes.c_uint16, "uint32_t": ctypes.c_uint32, "uint64_t": ctypes.c_uint64,
    "nk_pyobj": ctypes.py_object,
}
"""C type names -> ctypes (``void`` only as a result). Pointers are addresses (``c_void_p``), ``char *`` a C string."""

_IDENT = r"[A-Za-z_]\w*"


class HeaderError(ValueError):
    """``nnkiln.h`` has something the parser does not read, or lacks something Python asks for."""


@dataclass(frozen=True)
class Function:
    """A prototype; types are normalized C names: a scalar of ``_SCALARS``, ``char*`` or ``void*`` (any other
    pointer)."""

    name: str
    result: str
    params: tuple[str, ...]


@dataclass(frozen=True)
class Header:
    defines: dict[str, int]
    enums: dict[str, dict[str, int]]
    """Members by enum tag, without their ``NK_<TAG>_`` prefix."""
    structs: dict[str, tuple[tuple[str, str], ...]]
    """(field name, normalized type) by struct name."""
    functions: dict[str, Function]


def _type(decl: str, what: str) -> str:
    """The normalized type of ``decl`` (a type, without the declared name)."""
    words = decl.replace("*", " * ").split()
    words = [w for w in words if w != "const"]
    stars = words.count("*")
    base = " ".join(w for w in words if w != "*")
    if base not in _SCALARS and not (stars and re.fullmatch(_IDENT, base)):
        raise HeaderError(f"nnkiln.h: unsupported type {decl.strip()!r} in {what}")
    if stars == 0:
        return base
    return "char*" if (base == "char" and stars == 1) else "void*"


def _split_name(decl: str, what: str) -> tuple[str, str]:
    """``decl`` = ``<type> <name>`` -> (normalized type, name)."""
    m = re.fullmatch(rf"(.*?[\s*])({_IDENT})", decl.strip(), re.S)
    if m is None:
        raise HeaderError(f"nnkiln.h: cannot read the declaration {decl.strip()!r} in {what}")
    return _type(m.group(1), what), m.group(2)


def _enum(tag: str, body: str) -> dict[str, int]:
    prefix = tag.upper() + "_"
    members: dict[str, int] = {}
    for item in (s.strip() for s in body.split(",")):
        if not item:
            continue
        m = re.fullmatch(rf"({_IDENT})\s*=\s*(-?\d+)", item)
        if m is None or not m.group(1).startswith(prefix):
            raise HeaderError(f"nnkiln.h: enum {tag}: write members as {prefix}NAME = <integer>, not {item!r}")
        members[m.group(1)[len(prefix):]] = int(m.group(2))
    return members


def _struct(name: str, body: str) -> tuple[tuple[str, str], ...]:
    fields: list[tuple[str, str]] = []
    for decl in (s.strip() for s in body.split(";")):
        if not decl:
            continue
        m = re.fullmatch(rf"(.*?)\s+({_IDENT}(?:\s*,\s*{_IDENT})*)", decl, re.S)
        if m is None:
            raise HeaderError(f"nnkiln.h: struct {name}: cannot read {decl!r}")
        ctype = _type(m.group(1), f"struct {name}")
        fields += [(n.strip(), ctype) for n in m.group(2).split(",")]
    return tuple(fields)


def _function(decl: str) -> Function:
    m = re.fullmatch(rf"(.+?)\b({_IDENT})\s*\((.*)\)", decl, re.S)
    if m is None:
        raise HeaderError(f"nnkiln.h: cannot read the declaration {decl!r}")
    name, params = m.group(2), m.group(3).strip()
    result = _type(m.group(1), name)
    types = () if params == "void" else tuple(_split_name(p, name)[0] for p in params.split(","))
    if "void" in types:
        raise HeaderError(f"nnkiln.h: {name}: a parameter of type void")
    return Function(name, result, types)


def parse(text: str) -> Header:
    """The declarations of a header written in the subset ``nnkiln.h`` keeps to."""
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    text = re.sub(r"//[^\n]*", " ", text)
    defines: dict[str, int] = {}
    lines = []
    for line in text.splitlines():
        s = line.strip()
        if not s.startswith("#"):
            lines.append(line)
            continue
        m = re.fullmatch(rf"#\s*define\s+({_IDENT})(?:\s+(\S.*))?", s)
        if m and m.group(2) is None:
            continue  # the include guard
        if m:
            try:
                defines[m.group(1)] = int(m.group(2), 0)
            except ValueError:
                raise HeaderError(f"nnkiln.h: #define {m.group(1)} must be an integer, not {m.group(2)!r}") from None
        elif not re.match(r"#\s*(include|ifndef|endif)\b", s):
            raise HeaderError(f"nnkiln.h: unsupported preprocessor line {s!r}")
    rest = "\n".join(lines)
    enums: dict[str, dict[str, int]] = {}
    structs: dict[str, tuple[tuple[str, str], ...]] = {}

    def take_enum(m: re.Match[str]) -> str:
        enums[m.group(1)] = _enum(m.group(1), m.group(2))
        return ""

    def take_struct(m: re.Match[str]) -> str:
        if m.group(1) != m.group(3):
            raise HeaderError(f"nnkiln.h: write typedef struct {m.group(3)} {{ ... }} {m.group(3)};")
        structs[m.group(3)] = _struct(m.group(3), m.group(2))
        return ""

    rest = re.sub(rf"\benum\s+({_IDENT})\s*\{{(.*?)\}}\s*;", take_enum, rest, flags=re.S)
    rest = re.sub(rf"\btypedef\s+struct\s+({_IDENT})\s*\{{(.*?)\}}\s*({_IDENT})\s*;", take_struct, rest, flags=re.S)
    functions: dict[str, Function] = {}
    for decl in (" ".join(d.split()) for d in rest.split(";")):
        if not decl:
            continue
        m = re.fullmatch(rf"typedef\s+[\w\s*]+?\b({_IDENT})", decl)
        if m:
            if m.group(1) not in _SCALARS:
                raise HeaderError(f"nnkiln.h: typedef {m.group(1)} has no Python type (header.py's _SCALARS)")
            continue
        fn = _function(decl)
        if fn.name in functions:
            raise HeaderError(f"nnkiln.h: {fn.name} is declared twice")
        functions[fn.name] = fn
    return Header(defines, enums, structs, functions)


@functools.cache
def parsed() -> Header:
    """``nnkiln.h`` parsed (once per process)."""
    return parse(HEADER.read_text(encoding="utf-8"))


def define(name: str) -> int:
    """The value of ``#define name``."""
    try:
        return parsed().defines[name]
    except KeyError:
        raise HeaderError(f"nnkiln.h has no #define {name}") from None


@functools.cache
def enum(tag: str) -> MappingProxyType[str, int]:
    """The members of ``enum tag`` by name without the ``NK_<TAG>_`` prefix: ``enum("nk_op")["ADD"]``."""
    try:
        return MappingProxyType(parsed().enums[tag])
    except KeyError:
        raise HeaderError(f"nnkiln.h has no enum {tag}") from None


def functions() -> dict[str, Function]:
    """Every function ``nnkiln.h`` declares, by name."""
    return parsed().functions


def function(name: str) -> Function:
    try:
        return parsed().functions[name]
    except KeyError:
        raise HeaderError(f"{name} is not declared in {HEADER}: Python calls only what the header declares") from None


def _ctype(t: str) -> Any:
    if t == "char*":
        return ctypes.c_char_p
    if t == "void*":
        return ctypes.c_void_p
    return _SCALARS[t]


def signature(name: str) -> tuple[list[Any], Any]:
    """``(argtypes, restype)`` of function ``name`` for ctypes."""
    fn = function(name)
    return [_ctype(p) for p in fn.params], _ctype(fn.result)


@functools.cache
def struct(name: str) -> type[ctypes.Structure]:
    """``typedef struct name`` as a ``ctypes.Structure`` (the same field order, types and so layout)."""
    try:
        fields = parsed().structs[name]
    except KeyError:
        raise HeaderError(f"nnkiln.h has no typedef struct {name}") from None
    return type(name, (ctypes.Structure,), {"_fields_": [(f, _ctype(t)) for f, t in fields]})
