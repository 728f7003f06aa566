"""The blob format: round trip, and every corruption is a BlobError (never a crash)."""

from __future__ import annotations

import struct
import zlib

import numpy as np
import pytest
from rt_blobs import two_executor_blob

from nnkiln.blob.format import MAGIC
from nnkiln.blob.reader import decode
from nnkiln.blob.writer import BlobBuilder, encode
from nnkiln.errors import BlobError
from nnkiln.kinds import Kind
from nnkiln.runtime import load_blob


def test_round_trip() -> None:
    blob, _ = two_executor_blob()
    raw = encode(blob)
    back = decode(raw)
    assert back.buffers == blob.buffers
    assert back.tasks == blob.tasks
    assert back.barriers == blob.barriers
    assert back.inputs == blob.inputs and back.outputs == blob.outputs
    assert back.metadata == blob.metadata
    assert bytes(back.constants) == bytes(blob.constants)
    assert encode(back) == raw


def test_header_fields() -> None:
    raw = encode(two_executor_blob()[0])
    assert raw[:8] == MAGIC
    major, minor, flags, size, nsec = struct.unpack_from("<HHIQI", raw, 8)
    assert (major, minor, flags, size, nsec) == (1, 0, 0, len(raw), 7)
    for i in range(nsec):
        kind, _, off, sz, crc, _ = struct.unpack_from("<IIQQII", raw, 64 + 32 * i)
        assert off % 64 == 0 and zlib.crc32(raw[off:off + sz]) == crc


def _resign(raw: bytearray) -> bytes:
    """Recompute every CRC (a deliberate, consistent tampering)."""
    nsec = struct.unpack_from("<I", raw, 24)[0]
    for i in range(nsec):
        base = 64 + 32 * i
        kind, r, off, sz, crc, r2 = struct.unpack_from("<IIQQII", raw, base)
        struct.pack_into("<IIQQII", raw, base, kind, r, off, sz, zlib.crc32(raw[off:off + sz]), r2)
    crc = zlib.crc32(bytes(raw[:28]) + bytes(raw[64:64 + 32 * nsec]))
    struct.pack_into("<I", raw, 28, crc)
    return bytes(raw)


def test_truncation_everywhere() -> None:
    raw = encode(two_executor_blob()[0])
    for n in list(range(0, 200)) + list(range(200, len(raw), 7)):
        with pytest.raises(BlobError):
            load_blob(raw[:n])


def test_random_bit_flips() -> None:
    raw = encode(two_executor_blob()[0])
    rng = np.random.default_rng(1234)
    for _ in range(400):
        data = bytearray(raw)
        for _ in range(int(rng.integers(1, 4))):
            pos = int(rng.integers(0, len(data)))
            data[pos] ^= 1 << int(rng.integers(0, 8))
        if data == raw:  # two flips of one bit cancel
            continue
        with pytest.raises(BlobError):
            load_blob(bytes(data))


def test_resigned_random_bytes_never_crash() -> None:
    """Flips with CRCs recomputed reach the semantic checks: BlobError or a valid load, nothing else."""
    raw = encode(two_executor_blob()[0])
    rng = np.random.default_rng(99)
    x = np.zeros((1, 6, 6, 3), np.float32)
    for _ in range(300):
        data = bytearray(raw)
        pos = int(rng.integers(64, len(data)))
        data[pos] = int(rng.integers(0, 256))
        try:
            exe = load_blob(_resign(data))
        except BlobError:
            continue
        except Exception as err:  # noqa: BLE001
            from nnkiln.errors import NnkilnError

            assert isinstance(err, NnkilnError), f"byte {pos}: {type(err).__name__}: {err}"
            continue
        try:
            exe.run({"x": x})
        except Exception as err:  # noqa: BLE001
            from nnkiln.errors import NnkilnError

            assert isinstance(err, NnkilnError), f"byte {pos}: {type(err).__name__}: {err}"


def test_bad_magic_and_version() -> None:
    raw = bytearray(encode(two_executor_blob()[0]))
    with pytest.raises(BlobError, match="magic"):
        decode(b"XXXXXXXX" + bytes(raw[8:]))
    v2 = bytearray(raw)
    struct.pack_into("<H", v2, 8, 2)
    with pytest.raises(BlobError, match="version 2.0"):
        decode(_resign(v2))
    newer = bytearray(raw)
    struct.pack_into("<H", newer, 10, 2)
    with pytest.raises(BlobError, match="newer"):
        decode(_resign(newer))


def _variant(**changes) -> bytes:  # noqa: ANN003
    blob, _ = two_executor_blob()
    for k, v in changes.items():
        v(blob) if callable(v) else setattr(blob, k, v)
    return encode(blob)


@pytest.mark.parametrize("mutate,message", [
    (lambda b: setattr(b.buffers[6], "offset", b.metadata["arena_bytes"] - 8), "exceed the arena"),
    (lambda b: setattr(b.buffers[6], "size", 12), "size 12 != product"),
    (lambda b: setattr(b.buffers[6], "shape", (1, 6, 6, 5)), "!= product"),
    (lambda b: setattr(b.buffers[2], "offset", 10**6), "exceed the constants section"),
    (lambda b: setattr(b.buffers[0], "index", 3), "input index 3"),
    (lambda b: setattr(b.tasks[0], "ins", (0, 2, 99)), "operand buffer 99"),
    (lambda b: setattr(b.tasks[0], "outs", (0,)), "read-only INPUT"),
    (lambda b: setattr(b.tasks[0], "outs", (2,)), "read-only CONSTANT"),
    (lambda b: setattr(b.tasks[2], "waits", (7,)), "barrier 7 is outside"),
    (lambda b: setattr(b.barriers[0], "producers", 2), "do not match"),
    (lambda b: (setattr(b.tasks[0], "waits", (1,)), setattr(b.tasks[1], "waits", (0,)),
                setattr(b.barriers[1], "consumers", 1), setattr(b.barriers[0], "consumers", 2)), "cycle"),
    (lambda b: b.metadata.update(arena_bytes=-1), "arena_bytes"),
    (lambda b: b.metadata.update(arena_bytes=1 << 50), "exceeds the limit"),
    (lambda b: b.metadata.pop("target"), "target"),
    (lambda b: b.tasks[0].args["post_ops"].append({"kernel": "tosa.add", "attrs": {}, "operand": 5}), "post-op operand"),
])
def test_semantic_rules(mutate, message: str) -> None:  # noqa: ANN001
    blob, _ = two_executor_blob()
    mutate(blob)
    with pytest.raises(BlobError, match=message):
        decode(encode(blob))


def test_dims_overflow_rejected() -> None:
    blob, _ = two_executor_blob()
    raw = bytearray(encode(blob))
    # buffer 5's dims[0] (record at BUFFERS offset + 8 + 5 * 96, dims at +32) set to 2^63
    nsec = 7
    for i in range(nsec):
        kind, _, off, sz, _, _ = struct.unpack_from("<IIQQII", raw, 64 + 32 * i)
        if kind == 3:
            struct.pack_into("<Q", raw, off + 8 + 5 * 96 + 32, 1 << 63)
    with pytest.raises(BlobError, match="2\\^40"):
        decode(_resign(raw))


def test_unknown_dtype_code() -> None:
    blob, _ = two_executor_blob()
    raw = bytearray(encode(blob))
    for i in range(7):
        kind, _, off, sz, _, _ = struct.unpack_from("<IIQQII", raw, 64 + 32 * i)
        if kind == 3:
            raw[off + 8 + 1] = 200
    with pytest.raises(BlobError, match="whitelist"):
        decode(_resign(raw))


def test_views_alias_inside_base() -> None:
    b = BlobBuilder()
    base = b.add_arena(Kind.F32, (4, 4), 0)
    v = b.add_view(base, Kind.F32, (2, 4), 32)
    blob = b.finish(arena_bytes=256)
    back = decode(encode(blob))
    assert back.buffers[v].alias_of == base and back.buffers[v].offset == 32
    back.buffers[v].offset = 40
    with pytest.raises(BlobError, match="not inside base"):
        decode(encode(back))


def test_in_memory_constants_are_views_and_encode_like_the_joined_section() -> None:
    """``finish_in_memory`` keeps each constant's own array (``ConstantStore``): views share its memory,
    the gaps between constants read as zeros, and the encoded blob is byte for byte the one ``finish`` gives."""
    def build() -> tuple[BlobBuilder, np.ndarray, np.ndarray]:
        b = BlobBuilder()
        w = np.arange(10, dtype=np.float32)          # 40 bytes: the next constant starts at 64
        v = np.arange(6, dtype=np.int32).reshape(2, 3)
        b.add_const(w, Kind.F32)
        b.add_const(v, Kind.I32)
        x = b.add_io("x", Kind.F32, (10,), output=False)
        y = b.add_io("y", Kind.F32, (10,), output=True)
        b.add_task("tosa.add", [x, 0], [y])
        return b, w, v

    b, w, v = build()
    store_blob = b.finish_in_memory()
    store = store_blob.constants
    assert len(store) == 64 + 24
    wv = store.view(0, 40)
    assert np.shares_memory(wv, w) and np.array_equal(wv.view(np.float32), w)
    assert np.shares_memory(store.view(64 + 4, 8), v)
    assert not store.view(40, 24).any()  # alignment gap
    joined = build()[0].finish()
    assert store.tobytes() == bytes(joined.constants)
    assert encode(store_blob) == encode(joined)
    out = load_blob(encode(store_blob)).run({"x": np.ones(10, np.float32)})["y"]
    np.testing.assert_array_equal(out, w + 1)
