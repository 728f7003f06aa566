"""Structure-aware edits of TOSA 1.x flatbuffers: walk a (valid) ``.tosa`` buffer with the layout of ``tosa.fbs``,
record where each field lives (dims, element types, op codes, vector lengths, offsets, vtable entries, attribute
fields), then overwrite a few of them with boundary values. The buffer keeps its layout, so the edits reach the
importer's checks instead of stopping at the flatbuffer's first bytes."""

from __future__ import annotations

import random
import struct
from dataclasses import dataclass, field

from fuzz_mutators import INTERESTING_INTS, pack_int

# table name → slot → kind (tosa.fbs); "table:X"/"tables:X" recurse
SCHEMA: dict[str, dict[int, str]] = {
    "TosaGraph": {0: "table:Version", 1: "tables:TosaRegion"},
    "Version": {0: "i32", 1: "i32", 2: "i32", 3: "bool"},
    "TosaRegion": {0: "str", 1: "tables:TosaBasicBlock"},
    "TosaBasicBlock": {0: "str", 1: "tables:TosaOperator", 2: "tables:TosaTensor", 3: "strs", 4: "strs",
                       5: "tables:TosaShape"},
    "TosaOperator": {0: "u32", 1: "u8", 2: "attr", 3: "strs", 4: "strs"},
    "TosaTensor": {0: "str", 1: "i32s", 2: "u32", 3: "u8s", 4: "bool", 5: "bool"},
    "TosaShape": {0: "str", 1: "u32", 2: "u8s"},
}


@dataclass
class Fields:
    """Byte positions by kind: ``dim``, ``dtype``, ``opcode``, ``veclen``, ``offset``, ``vtable``, ``attr``, ..."""

    at: dict[str, list[int]] = field(default_factory=dict)

    def add(self, kind: str, pos: int) -> None:
        self.at.setdefault(kind, []).append(pos)


def _u32(b: bytes, p: int) -> int:
    return struct.unpack_from("<I", b, p)[0]


def _walk(b: bytes, table: int, name: str, out: Fields, depth: int = 0) -> None:
    if depth > 8 or not 0 <= table < len(b) - 4:
        return
    vt = table - struct.unpack_from("<i", b, table)[0]
    if not 0 <= vt < len(b) - 4:
        return
    vt_size = struct.unpack_from("<H", b, vt)[0]
    slots = (vt_size - 4) // 2
    for slot in range(slots):
        entry = vt + 4 + 2 * slot
        off = struct.unpack_from("<H", b, entry)[0]
        if not off:
            continue
        out.add("vtable", entry)
        pos = table + off
        kind = SCHEMA.get(name, {}).get(slot, "attr" if name == "attr" else "")
        if kind in ("i32", "u32", "attr"):
            out.add({"TosaOperator": "opcode", "TosaTensor": "dtype", "TosaShape": "rank"}.get(name, kind), pos)
            if kind == "attr" or name == "attr":
                _maybe_vector(b, pos, out)
            continue
        if kind in ("bool", "u8"):
            out.add("byte", pos)
            continue
        if kind == "attr" or not kind:
            continue
        out.add("offset", pos)
        target = pos + _u32(b, pos)
        if target + 4 > len(b):
            continue
        if kind.startswith("table:"):
            _walk(b, target, kind[6:], out, depth + 1)
        elif kind == "attr":
            pass
        else:
            n = _u32(b, target)
            out.add("veclen", target)
            if kind == "i32s":
                for k in range(min(n, 64)):
                    out.add("dim", target + 4 + 4 * k)
            elif kind.startswith("tables:"):
                for k in range(min(n, 4096)):
                    elem = target + 4 + 4 * k
                    if elem + 4 <= len(b):
                        _walk(b, elem + _u32(b, elem), kind[7:], out, depth + 1)
            elif kind == "strs":
                for k in range(min(n, 4096)):
                    elem = target + 4 + 4 * k
                    if elem + 4 <= len(b) and elem + _u32(b, elem) + 4 <= len(b):
                        out.add("strlen", elem + _u32(b, elem))
    if name == "TosaOperator" and 2 < slots:
        off = struct.unpack_from("<H", b, vt + 4 + 4)[0]
        if off and table + off + 4 <= len(b):
            pos = table + off
            _walk(b, pos + _u32(b, pos), "attr", out, depth + 1)


def _maybe_vector(b: bytes, pos: int, out: Fields) -> None:
    """An attribute field that looks like an offset to a short int32 vector (pad, kernel, stride ...)."""
    target = pos + _u32(b, pos)
    if target + 4 <= len(b):
        n = _u32(b, target)
        if 0 < n <= 16 and target + 4 + 4 * n <= len(b):
            out.add("attr_veclen", target)
            for k in range(n):
                out.add("attr_elem", target + 4 + 4 * k)


def fields_of(data: bytes) -> Fields:
    out = Fields()
    try:
        _walk(data, _u32(data, 0), "TosaGraph", out)
    except struct.error:
        pass
    return out


_VALUES = {
    "dim": [0, -1, 1, 2**31 - 1, -(2**31), 65536, 100000, 10**9, 3],
    "dtype": list(range(0, 20)) + [2**31, 2**32 - 1],
    "opcode": list(range(0, 110)) + [2**32 - 1],
    "rank": [0, 1, 7, 65, 100000, 2**31, 2**32 - 1],
    "attr_elem": [0, -1, 1, 2**31 - 1, -(2**31), 65536, 10**9, 3],
    "byte": [0, 1, 2, 255],
    "i32": [0, 1, -1, 2, 2**31 - 1],
}


def mutate_fields(data: bytes, rng: random.Random) -> tuple[bytes, str]:
    """``data`` with 1-3 recorded fields overwritten; returns the bytes and the kinds edited."""
    f = fields_of(data)
    if not f.at:
        raise ValueError("no fields found")
    out = bytearray(data)
    kinds = []
    for _ in range(rng.randint(1, 3)):
        kind = rng.choice(sorted(f.at))
        pos = rng.choice(f.at[kind])
        size = 2 if kind == "vtable" else 1 if kind == "byte" else 4
        if kind == "vtable":
            value = rng.choice([0, 1, 3, 4, 0xFFFF, rng.randrange(1 << 16)])
        elif kind in ("offset", "veclen", "strlen", "attr_veclen", "attr"):
            value = rng.choice(INTERESTING_INTS + [_u32(data, pos) + rng.choice([-8, -4, 4, 8])])
        else:
            value = rng.choice(_VALUES[kind])
        out[pos:pos + size] = pack_int(value, size)
        kinds.append(kind)
    return bytes(out), "fields " + "+".join(kinds)
