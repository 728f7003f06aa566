"""The NNEF binary tensor file format, ``.dat`` (spec §5.2): reader and writer.

Header, 128 bytes, little-endian: magic ``4E EF``; version major, minor (we write 1.0, read major 1);
u32 data length; u32 rank (<= 8); 8 x u32 extents (unused = 0); u32 bits per item (1..64);
u32 quantization code; 32 parameter bytes; 44 reserved bytes (should be 0; not enforced).

Decisions where §5.2 is silent (inventory §1.13):

* The quantization code is one little-endian u32 whose high 16 bits are the vendor code and low 16 bits the
  algorithm code ("the first part is a vendor code"), so Khronos float is 0x0000_0000, int 0x0000_0001.
  Only vendor 0 (Khronos) is understood; other vendors are rejected with a clear message.
* Items whose width is a multiple of 8 are stored little-endian, byte aligned (all data is little-endian).
  Other widths form a continuous bit stream, most significant bit first, each item written from its most
  significant bit (so 1-bit items fill a byte from bit 7 down to bit 0); the last byte is zero padded.
* Signed integers are two's complement in ``bits`` bits.
* There is no code for logical tensors: they are written as unsigned integers of 1 bit; the reader returns
  integers and ``to_bool`` converts when the graph says the variable is ``logical``.
* Signed logarithmic quantization (min = -max): the most significant of the b bits is the sign (1 =
  negative) and the magnitude code uses b-1 bits.  Decoding follows §5.2: ``x = 2^(q + m - r)`` with
  ``m = ceil(log2 max)``, ``r = 2^b' - 1`` (b' the magnitude width); the encoder maps 0 to code 0.
* NNEF 1.0.5 (written by the Khronos ``nnef`` package 1.0.10 / nnef-tools) reuses the code field as an
  *item type*: 2 unsigned and 3 signed quantized codes (their real values come from the tensor's
  ``graph.quant`` entry, e.g. ``zero_point_linear_quantize``; ``dequantize()`` returns the codes), 4 signed
  integer, 5 logical (1 bit). Code 1 stays the 1.0.3 integer whose first parameter word is the signedness
  (the 1.0.5 "unsigned" code with a zero word reads the same). These are read, not written.
* The data length must equal ``ceil(volume * bits / 8)`` exactly, and the file must end right after it.
"""

from __future__ import annotations

import math
import struct
from dataclasses import dataclass
from enum import IntEnum

import numpy as np

from nnkiln.ir.errors import NnefError

MAGIC = b"\x4e\xef"
HEADER_SIZE = 128
MAX_RANK = 8
MAX_ITEMS = 1 << 32  # absurd-size guard for a single tensor


class ItemType(IntEnum):
    """Khronos algorithm codes (vendor 0) of §5.2."""

    FLOAT = 0x00
    INTEGER = 0x01
    LINEAR_QUANTIZED = 0x10
    LOGARITHMIC_QUANTIZED = 0x11
    # NNEF 1.0.5 item types (Khronos ``nnef`` 1.0.10 writes them; same header offset as the 1.0.3 code)
    QUANTIZED_UNSIGNED = 0x02
    QUANTIZED_SIGNED = 0x03
    SIGNED_INTEGER = 0x04
    LOGICAL = 0x05


#: Item types whose items are integer codes of a quantization given by graph.quant (NNEF 1.0.5).
CODE_TYPES = frozenset({ItemType.QUANTIZED_UNSIGNED, ItemType.QUANTIZED_SIGNED})
#: Item types read as plain numbers (no quantization).
PLAIN_TYPES = frozenset({ItemType.FLOAT, ItemType.INTEGER, ItemType.SIGNED_INTEGER, ItemType.LOGICAL})


@dataclass
class TensorData:
    """A decoded ``.dat`` file. ``values`` are floats, integers or (for quantized types) the raw codes."""

    shape: tuple[int, ...]
    item_type: ItemType
    bits: int
    values: np.ndarray
    signed: bool = False
    min: float = 0.0
    max: float = 0.0
    version: tuple[int, int] = (1, 0)

    def dequantize(self) -> np.ndarray:
        """Real values of the stored items (§5.2 decoding formulas); floats/ints are returned as float64."""
        if self.item_type is ItemType.LINEAR_QUANTIZED:
            r = float((1 << self.bits) - 1)
            return self.values.astype(np.float64) / r * (self.max - self.min) + self.min
        if self.item_type is ItemType.LOGARITHMIC_QUANTIZED:
            return _log_decode(self.values, self.bits, self.max, self.signed)
        return self.values.astype(np.float64)

    def to_bool(self) -> np.ndarray:
        return self.values.astype(bool)


def _err(msg: str, file: str) -> NnefError:
    return NnefError(f"§5.2: {msg}", file=file)


def _pack(codes: np.ndarray, bits: int) -> bytes:
    """Unsigned codes (uint64) -> bytes."""
    codes = codes.astype(np.uint64).ravel()
    if bits % 8 == 0:
        nbytes = bits // 8
        if nbytes in (1, 2, 4, 8):
            return codes.astype(f"<u{nbytes}").tobytes()
        le = codes.astype("<u8").view(np.uint8).reshape(-1, 8)[:, :nbytes]
        return le.tobytes()
    shifts = np.arange(bits - 1, -1, -1, dtype=np.uint64)
    bitarr = ((codes[:, None] >> shifts[None, :]) & np.uint64(1)).astype(np.uint8).ravel()
    return np.packbits(bitarr).tobytes()


def item_dtype(bits: int, signed: bool) -> np.dtype:
    """The smallest numpy integer type that holds a ``bits``-bit item (the decoded array is no wider)."""
    width = 8 if bits <= 8 else 16 if bits <= 16 else 32 if bits <= 32 else 64
    return np.dtype(f"<{'i' if signed else 'u'}{width // 8}")


_UNPACK_CHUNK = 1 << 18  # items decoded per step of the bit-stream path (bounds its temporaries)


def _unpack(data: bytes | memoryview, count: int, bits: int, signed: bool = False) -> np.ndarray:
    """``count`` items of ``bits`` bits from the payload ``data`` (§5.2 layout, see the module docstring) as an
    array of :func:`item_dtype` (signed items sign-extended).

    Decision (issue 6, memory): the memory used is the output plus O(chunk): byte-aligned widths of 1, 2, 4 or 8
    bytes are read in place (``np.frombuffer``; a copy only when ``data`` is read-only), 1-bit items with
    ``np.unpackbits``, other widths a chunk of items at a time from the 9 bytes that can hold an item
    (never a ``count x bits`` array)."""
    raw = np.frombuffer(data, dtype=np.uint8)
    out_dtype = item_dtype(bits, signed)
    if bits % 8 == 0:
        nbytes = bits // 8
        if nbytes in (1, 2, 4, 8):
            arr = np.frombuffer(data, dtype=out_dtype, count=count)
            return arr if arr.flags.writeable else arr.copy()
        padded = np.zeros((count, out_dtype.itemsize), dtype=np.uint8)  # 24 bits -> 4 bytes, 40..56 -> 8
        padded[:, :nbytes] = raw[:count * nbytes].reshape(count, nbytes)
        if signed:  # sign-extend: fill the high bytes with the sign of the top stored byte
            padded[:, nbytes:] = np.where(padded[:, nbytes - 1:nbytes] >= 0x80, 0xFF, 0)
        return padded.view(out_dtype).reshape(count)
    if bits == 1 and not signed:
        return np.unpackbits(raw, count=count)
    out = np.empty(count, dtype=out_dtype)
    one = np.uint64
    for start in range(0, count, _UNPACK_CHUNK):
        stop = min(count, start + _UNPACK_CHUNK)
        first = start * bits // 8
        last = (stop * bits + 7) // 8
        src = np.zeros(last - first + 9, dtype=np.uint8)
        src[:last - first] = raw[first:last]
        off = np.arange(start, stop, dtype=np.uint64) * one(bits) - one(first * 8)
        idx = (off >> one(3)).astype(np.intp)
        sh = off & one(7)
        word = np.zeros(stop - start, dtype=np.uint64)
        for k in range(8):  # the 8 bytes from the item's first byte, big-endian (MSB-first bit stream)
            word = (word << one(8)) | src[idx + k]
        word = (word << sh) | (src[idx + 8] >> (one(8) - sh))  # the 9th byte fills the bits shifted out
        vals = word >> one(64 - bits)
        if signed:
            vals = (vals.view(np.int64) << np.int64(64 - bits)) >> np.int64(64 - bits)
        out[start:stop] = vals
    return out


def _log_decode(codes: np.ndarray, bits: int, vmax: float, signed: bool) -> np.ndarray:
    """§5.2: ``x = 2^(q + m - r)``, evaluated as ``2^(m - (r - q))`` with ``r - q`` in uint64 (exact for any
    width up to 64 bits, where ``q + m - r`` overflows int64); exponents below -1100 give 0 (underflow)."""
    mag_bits = bits - 1 if signed else bits
    codes = np.asarray(codes).astype(np.uint64)
    sign = np.ones(codes.shape)
    if signed:
        neg = (codes >> np.uint64(mag_bits)) & np.uint64(1)
        sign = np.where(neg == 1, -1.0, 1.0)
        codes = codes & np.uint64((1 << mag_bits) - 1)
    r = np.uint64((1 << mag_bits) - 1)
    m = math.ceil(math.log2(vmax)) if vmax > 0 else 0
    down = np.minimum(r - np.minimum(codes, r), np.uint64(2000)).astype(np.float64)
    return sign * np.power(2.0, m - down)


def _log_encode(x: np.ndarray, bits: int, vmax: float, signed: bool) -> np.ndarray:
    """§5.2's logarithmic code, ``q = r - (m - round(clamp(log2 |x|)))`` computed in uint64 (exact up to 64 bits)."""
    mag_bits = bits - 1 if signed else bits
    r = (1 << mag_bits) - 1
    m = math.ceil(math.log2(vmax)) if vmax > 0 else 0
    ax = np.abs(x.astype(np.float64))
    with np.errstate(divide="ignore"):
        lg = np.where(ax > 0, np.log2(np.where(ax > 0, ax, 1.0)), -np.inf)
    down = m - np.floor(np.clip(lg, float(m - r), float(m)) + 0.5)  # 0..r, as a float
    down = np.minimum(np.maximum(down, 0.0), float(min(r, 4096))).astype(np.uint64)  # finite |x|: < 1300
    q = np.where(ax > 0, np.uint64(r) - np.minimum(down, np.uint64(r)), np.uint64(0)).astype(np.uint64)
    if signed:
        q = q | (np.where(x < 0, 1, 0).astype(np.uint64) << np.uint64(mag_bits))
    return q


@dataclass
class Header:
    """The fields of a 128-byte ``.dat`` header (§5.2), validated by :func:`parse_header`."""

    shape: tuple[int, ...]
    item_type: ItemType
    bits: int
    length: int
    count: int
    params: bytes
    version: tuple[int, int]


def parse_header(head: bytes | memoryview, file: str = "<tensor>", size: int | None = None) -> Header:
    """Validate the first 128 bytes of a ``.dat`` file (§5.2) without touching its data.

    ``size``, when known (a file or archive member), is the whole file's size: the header's data length must
    account for it exactly, so a lying header is refused before any of the data is read. The decoded tensor
    must also pass the absurd-size guards: at most ``MAX_ITEMS`` items, and (decoded as :func:`item_dtype` /
    the float width) no more than half of this machine's memory (``nnkiln.targets.HOST_MEMORY``, as
    ``common.graph.too_large``)."""
    head = memoryview(head).cast("B") if not isinstance(head, (bytes, bytearray)) else head
    if len(head) < HEADER_SIZE:
        raise _err(f"truncated header: {len(head)} bytes, the header has 128", file)
    if bytes(head[:2]) != MAGIC:
        raise _err(f"bad magic number {bytes(head[:2]).hex()} (expected 4eef)", file)
    major, minor = head[2], head[3]
    if major != 1:
        raise _err(f"unsupported tensor file version {major}.{minor} (expected 1.x)", file)
    length, rank = struct.unpack_from("<II", head, 4)
    if size is not None and length + HEADER_SIZE != size:
        raise _err(f"the header declares {length} bytes of data but the file holds {size - HEADER_SIZE}", file)
    extents = struct.unpack_from("<8I", head, 12)
    bits, code = struct.unpack_from("<II", head, 44)
    params = bytes(head[52:84])
    if rank > MAX_RANK:
        raise _err(f"rank {rank} exceeds the maximum of 8", file)
    if any(e != 0 for e in extents[rank:]):
        raise _err(f"extents beyond rank {rank} must be zero, found {list(extents)}", file)
    shape = tuple(extents[:rank])
    if any(e == 0 for e in shape):
        raise _err(f"extents must be positive, found {list(shape)}", file)
    if not 1 <= bits <= 64:
        raise _err(f"bits per item must be between 1 and 64, found {bits}", file)
    vendor, algo = code >> 16, code & 0xFFFF
    if vendor != 0:
        raise _err(f"unknown quantization vendor code {vendor:#x} (only Khronos, 0, is supported)", file)
    try:
        item_type = ItemType(algo)
    except ValueError:
        raise _err(f"unknown item type / algorithm code {algo:#x}", file) from None
    if item_type is ItemType.FLOAT and bits not in (16, 32, 64):
        raise _err(f"float items must have 16, 32 or 64 bits, found {bits}", file)
    if item_type is ItemType.LOGICAL and bits != 1:
        raise _err(f"logical items must have 1 bit, found {bits}", file)
    count = math.prod(shape)
    if count > MAX_ITEMS:
        raise _err(f"absurd tensor size: {count} items", file)
    expected = (count * bits + 7) // 8
    if length != expected:
        raise _err(f"data length {length} does not match extents {list(shape)} x {bits} bits "
                   f"(= {expected} bytes)", file)
    from nnkiln.targets import HOST_MEMORY

    itemsize = bits // 8 if item_type is ItemType.FLOAT else item_dtype(bits, False).itemsize
    if count * itemsize > HOST_MEMORY.size // 2:
        raise _err(f"absurd tensor size: {list(shape)} decodes to {count * itemsize} bytes, more than half of "
                   f"this machine's {HOST_MEMORY.size} bytes of memory", file)
    return Header(shape, item_type, bits, length, count, params, (major, minor))


def read_tensor(data: bytes | bytearray | memoryview, file: str = "<tensor>") -> TensorData:
    """Decode one ``.dat`` file. Never reads past ``data``; every defect raises :class:`NnefError`.

    Plain items decode to the narrowest numpy type that holds them (float16/32/64; ``item_dtype`` for integers,
    logical items and quantized codes); float and whole-byte integer items are views of ``data`` when it is
    writable (no copy), see ``_unpack``."""
    h = parse_header(data, file)
    size = len(data) if not isinstance(data, memoryview) else data.nbytes
    if size < HEADER_SIZE + h.length:
        raise _err(f"truncated data: the header promises {h.length} bytes, the file has "
                   f"{size - HEADER_SIZE}", file)
    if size > HEADER_SIZE + h.length:
        raise _err(f"{size - HEADER_SIZE - h.length} unexpected bytes after the data", file)
    payload = memoryview(data).cast("B")[HEADER_SIZE:]
    item_type, bits, params, count = h.item_type, h.bits, h.params, h.count
    signed = False
    vmin = vmax = 0.0
    if item_type is ItemType.FLOAT:
        values = np.frombuffer(payload, dtype=f"<f{bits // 8}", count=count)
        values = values if values.flags.writeable else values.copy()
    elif item_type in (ItemType.INTEGER, ItemType.SIGNED_INTEGER, ItemType.LOGICAL, ItemType.QUANTIZED_SIGNED,
                       ItemType.QUANTIZED_UNSIGNED):
        if item_type is ItemType.INTEGER:
            signed = struct.unpack_from("<I", params, 0)[0] != 0
        else:
            signed = item_type in (ItemType.SIGNED_INTEGER, ItemType.QUANTIZED_SIGNED)
        values = _unpack(payload, count, bits, signed)
    else:
        vmin, vmax = struct.unpack_from("<ff", params, 0)
        if not (math.isfinite(vmin) and math.isfinite(vmax)):
            raise _err(f"quantization range must be finite, found min={vmin}, max={vmax}", file)
        if item_type is ItemType.LINEAR_QUANTIZED:
            if not vmin < vmax:
                raise _err(f"linear quantization needs min < max, found min={vmin}, max={vmax}", file)
        else:
            if vmax <= 0:
                raise _err(f"logarithmic quantization needs max > 0, found {vmax}", file)
            if vmin == 0:
                signed = False
            elif vmin == -vmax:
                signed = True
                if bits < 2:
                    raise _err("signed logarithmic quantization needs at least 2 bits", file)
            else:
                raise _err(f"logarithmic quantization needs min = 0 or min = -max, found min={vmin}, "
                           f"max={vmax}", file)
        values = _unpack(payload, count, bits)
    return TensorData(h.shape, item_type, bits, values.reshape(h.shape), signed, vmin, vmax, h.version)


def write_tensor(array: np.ndarray, *, item_type: ItemType | None = None, bits: int | None = None,
                 signed: bool | None = None, min: float = 0.0, max: float = 0.0) -> bytes:
    """Encode ``array`` as a ``.dat`` file (bytes).

    Defaults follow the array: float16/32/64 -> FLOAT of that width; ints -> INTEGER of the dtype width
    (signed per dtype); bool -> unsigned 1-bit INTEGER. For the quantized types ``array`` holds real values
    which are encoded with §5.2's formulas (``min``/``max``, ``bits`` required; logarithmic signed when
    ``signed``, which sets min = -max).
    """
    a = np.asarray(array)
    if a.ndim > MAX_RANK:
        raise NnefError(f"§5.2: rank {a.ndim} exceeds the maximum of 8")
    if any(d == 0 for d in a.shape):
        raise NnefError("§5.2: extents must be positive")
    if item_type is None:
        if a.dtype.kind == "f":
            item_type = ItemType.FLOAT
        elif a.dtype.kind in "iub":
            item_type = ItemType.INTEGER
        else:
            raise NnefError(f"§5.2: cannot store items of dtype {a.dtype}")
    params = bytearray(32)
    flat = a.ravel()
    if item_type is ItemType.FLOAT:
        bits = bits or a.dtype.itemsize * 8 if a.dtype.kind == "f" else (bits or 32)
        if bits not in (16, 32, 64):
            raise NnefError(f"§5.2: float items must have 16, 32 or 64 bits, found {bits}")
        codes = flat.astype(f"<f{bits // 8}").view(f"<u{bits // 8}").astype(np.uint64)
    elif item_type is ItemType.INTEGER:
        if signed is None:
            signed = a.dtype.kind == "i"
        if bits is None:
            bits = 1 if a.dtype.kind == "b" else a.dtype.itemsize * 8
        if not 1 <= bits <= 64:
            raise NnefError(f"§5.2: bits per item must be between 1 and 64, found {bits}")
        ints = flat.astype(np.int64) if signed or a.dtype.kind != "u" else flat.astype(np.uint64)
        if signed:
            lo, hi = -(1 << (bits - 1)), (1 << (bits - 1)) - 1
        else:
            lo, hi = 0, (1 << bits) - 1
        if ints.size and (int(ints.min()) < lo or int(ints.max()) > hi):
            raise NnefError(f"§5.2: values do not fit in {bits}-bit {'signed' if signed else 'unsigned'} items")
        codes = ints.astype(np.int64).view(np.uint64) if signed else ints.astype(np.uint64)
        if signed and bits < 64:
            codes = codes & np.uint64((1 << bits) - 1)
        struct.pack_into("<I", params, 0, 1 if signed else 0)
    else:
        if bits is None or not 1 <= bits <= 64:
            raise NnefError(f"§5.2: quantized items need 1..64 bits, found {bits}")
        x = flat.astype(np.float64)
        if item_type is ItemType.LINEAR_QUANTIZED:
            if not min < max:
                raise NnefError("§5.2: linear quantization needs min < max")
            r = float((1 << bits) - 1)
            codes = np.floor(np.clip((x - min) / (max - min), 0.0, 1.0) * r + 0.5).astype(np.uint64)
        else:
            if max <= 0:
                raise NnefError("§5.2: logarithmic quantization needs max > 0")
            signed = bool(signed)
            if signed and bits < 2:
                raise NnefError("§5.2: signed logarithmic quantization needs at least 2 bits")
            min = -max if signed else 0.0
            codes = _log_encode(x, bits, max, signed)
        struct.pack_into("<ff", params, 0, min, max)
    header = bytearray(HEADER_SIZE)
    header[0:2] = MAGIC
    header[2], header[3] = 1, 0
    payload = _pack(codes, bits)
    struct.pack_into("<II", header, 4, len(payload), a.ndim)
    struct.pack_into("<8I", header, 12, *(list(a.shape) + [0] * (MAX_RANK - a.ndim)))
    struct.pack_into("<II", header, 44, bits, int(item_type))
    header[52:84] = params
    return bytes(header) + payload
