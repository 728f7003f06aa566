"""Format-independent mutators: bytes (flips, truncation, splicing, interesting integers) and text (tokens,
numbers set to boundary values, deep nesting, dangling names). Every function takes a ``random.Random`` and
is deterministic given its state, so case ``i`` of a run is reproducible from the seed and ``i`` alone."""

from __future__ import annotations

import random
import re
import struct

INTERESTING_INTS = [0, 1, -1, 2, 3, 7, 127, 128, 255, 256, 65535, 65536, 100000, 2**24, 2**31 - 1, 2**31,
                    2**32 - 1, 2**32, 2**32 + 1, 10**9, 2**40, 2**53, 2**62, 2**63 - 1, -(2**31), -(2**63)]
"""Boundary values: sizes and dims that overflow 32/64-bit arithmetic or ask for absurd allocations."""

INTERESTING_NUMBER_TEXT = ["0", "-1", "1", "2147483647", "2147483648", "4294967297", "1000000000",
                           "99999999999999999999999", "-9223372036854775808", "1e999", "-0.0", "nan", "inf",
                           "0x7fffffff", "1.5", "100000", "65536"]


def interesting_int(rng: random.Random) -> int:
    return rng.choice(INTERESTING_INTS)


def pack_int(value: int, size: int) -> bytes:
    """``value`` as ``size`` little-endian bytes (two's complement, wrapped)."""
    return (value % (1 << (8 * size))).to_bytes(size, "little")


# ------------------------------------------------------------------------------------------------
# bytes


def _flip(data: bytearray, rng: random.Random, _others: list[bytes]) -> None:
    if data:
        pos = rng.randrange(len(data))
        data[pos] ^= 1 << rng.randrange(8)


def _set_byte(data: bytearray, rng: random.Random, _others: list[bytes]) -> None:
    if data:
        data[rng.randrange(len(data))] = rng.choice([0, 0xFF, 0x7F, 0x80, rng.randrange(256)])


def _set_int(data: bytearray, rng: random.Random, _others: list[bytes]) -> None:
    size = rng.choice([1, 2, 4, 4, 4, 8])
    if len(data) >= size:
        pos = rng.randrange(len(data) - size + 1)
        if rng.random() < 0.5:
            pos -= pos % size  # aligned: where flatbuffers and blob tables keep their integers
        data[pos:pos + size] = pack_int(interesting_int(rng), size)


def _truncate(data: bytearray, rng: random.Random, _others: list[bytes]) -> None:
    if data:
        del data[rng.randrange(len(data)):]


def _delete(data: bytearray, rng: random.Random, _others: list[bytes]) -> None:
    if data:
        a = rng.randrange(len(data))
        del data[a:a + rng.randint(1, 64)]


def _insert(data: bytearray, rng: random.Random, _others: list[bytes]) -> None:
    pos = rng.randrange(len(data) + 1)
    data[pos:pos] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 16)))


def _duplicate(data: bytearray, rng: random.Random, _others: list[bytes]) -> None:
    if data:
        a = rng.randrange(len(data))
        b = min(len(data), a + rng.randint(1, 256))
        pos = rng.randrange(len(data) + 1)
        data[pos:pos] = data[a:b]


def _splice(data: bytearray, rng: random.Random, others: list[bytes]) -> None:
    other = rng.choice(others) if others else bytes(data)
    if other and data:
        cut, start = rng.randrange(len(data)), rng.randrange(len(other))
        data[cut:] = other[start:start + rng.randint(1, len(other))]


BYTE_MUTATORS = [_flip, _set_byte, _set_int, _set_int, _truncate, _delete, _insert, _duplicate, _splice]


def mutate_bytes(data: bytes, rng: random.Random, others: list[bytes] = (), rounds: int | None = None) -> bytes:
    """``data`` after 1-4 (or ``rounds``) byte-level edits; ``others`` are splice partners."""
    out = bytearray(data)
    for _ in range(rounds or rng.randint(1, 4)):
        rng.choice(BYTE_MUTATORS)(out, rng, list(others))
    return bytes(out)


# ------------------------------------------------------------------------------------------------
# text

_TOKEN = re.compile(r"[A-Za-z_%@^#][\w.$-]*|-?\d+(?:\.\d*)?(?:[eE][-+]?\d+)?|\s+|.", re.S)
_NUMBER = re.compile(r"-?\d")
NEST_OPENERS = ["tensor<", "[", "(", "{", "dense<[", "array<i64: ", "!quant.uniform<", "<", "memref<"]
TEXT_PIECES = ["(", ")", "[", "]", "{", "}", "<", ">", ",", ":", "=", "->", "x", "?", "%", "@", "^bb0", "\"", "'",
               "\\", "#", "\n", "\x00", "é", ";", "0", "-", "f32", "i128", "i1", "bf16", "tensor<*xf32>",
               "dense<1.0> : tensor<4294967297xf32>", "dense<1> : tensor<2147483647x2147483647xi8>",
               "array<i128: 1, 2>", "array<i64: 99999999999999999999>", "tensor<0xf32>", "tensor<-1xf32>",
               "func.return", "tosa.add", "\"builtin.module\"() ({})", "[1]*99999999", "2^99999", "1e999",
               "external(shape = [4294967297])", "variable(shape = [65536, 65536], label = 'w')"]


def tokens(text: str) -> list[str]:
    return _TOKEN.findall(text)


def _t_number(toks: list[str], rng: random.Random) -> None:
    idx = [i for i, t in enumerate(toks) if _NUMBER.match(t)]
    if idx:
        toks[rng.choice(idx)] = rng.choice(INTERESTING_NUMBER_TEXT)


def _t_delete(toks: list[str], rng: random.Random) -> None:
    if toks:
        a = rng.randrange(len(toks))
        del toks[a:a + rng.randint(1, 3)]


def _t_insert(toks: list[str], rng: random.Random) -> None:
    toks.insert(rng.randrange(len(toks) + 1), rng.choice(TEXT_PIECES))


def _t_duplicate(toks: list[str], rng: random.Random) -> None:
    if toks:
        a = rng.randrange(len(toks))
        b = min(len(toks), a + rng.randint(1, 40))
        pos = rng.randrange(len(toks) + 1)
        toks[pos:pos] = toks[a:b]


def _t_rename(toks: list[str], rng: random.Random) -> None:
    """A name replaced by another name of the document or a fresh one: dangling and type-confused references."""
    names = [i for i, t in enumerate(toks) if t[:1].isalpha() or t[:1] in "%@_"]
    if names:
        i = rng.choice(names)
        toks[i] = rng.choice([toks[rng.choice(names)], toks[i][:1] + "undefined_" + str(rng.randrange(9)), "x"])


def _t_nest(toks: list[str], rng: random.Random) -> None:
    """Deep nesting: a few to 100000 openers (recursive-descent parsers overflow the stack)."""
    depth = rng.choice([3, 50, 500, 2000, 20000, 100000])
    opener = rng.choice(NEST_OPENERS)
    closer = {"(": ")", "[": "]", "{": "}"}.get(opener[-1], ">")
    pos = rng.randrange(len(toks) + 1)
    toks[pos:pos] = [opener * depth, "1", closer * (depth if rng.random() < 0.5 else 0)]


def _t_swap_lines(toks: list[str], rng: random.Random) -> None:
    lines = "".join(toks).split("\n")
    if len(lines) > 1:
        i, j = rng.randrange(len(lines)), rng.randrange(len(lines))
        if rng.random() < 0.5:
            lines[i], lines[j] = lines[j], lines[i]
        else:
            del lines[i]
        toks[:] = tokens("\n".join(lines))


def _t_char(toks: list[str], rng: random.Random) -> None:
    if toks:
        i = rng.randrange(len(toks))
        t = toks[i]
        j = rng.randrange(len(t))
        toks[i] = t[:j] + chr(rng.choice([rng.randrange(32, 127), 0, 0xE9, 0x2028])) + t[j + 1:]


TEXT_MUTATORS = [_t_number, _t_number, _t_number, _t_delete, _t_insert, _t_insert, _t_duplicate, _t_rename,
                 _t_nest, _t_swap_lines, _t_char]


def mutate_text(text: str, rng: random.Random, rounds: int | None = None) -> str:
    """``text`` after 1-3 (or ``rounds``) token-level edits."""
    toks = tokens(text)
    for _ in range(rounds or rng.randint(1, 3)):
        rng.choice(TEXT_MUTATORS)(toks, rng)
    return "".join(toks)


def u32(data: bytes, pos: int) -> int:
    return struct.unpack_from("<I", data, pos)[0]
