"""Issue 6: hostile NNEF containers, ``.dat`` files and ``graph.quant`` entries end quickly in an NnefError.

Each test builds its hostile input in ``tmp_path`` (sparse files, FIFOs, gzip runs of zeros streamed in chunks)
and failed before the fix (a crash, a hang, or memory far beyond the input's real content). Hangs are turned
into failures by ``_deadline`` (SIGALRM); tests that could allocate gigabytes on a regression run under
``_address_space`` (RLIMIT_AS a few hundred MB above the current size), so a regression is a MemoryError, not
an exhausted machine.
"""

from __future__ import annotations

import contextlib
import gzip
import io
import os
import resource
import signal
import struct
import tarfile
import time
import tracemalloc
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

import nnkiln
from nnkiln.frontends.nnef import ItemType, load_container, parse_quant, read_tensor, write_tensor
from nnkiln.frontends.nnef import container as container_mod
from nnkiln.frontends.nnef.quant_v105 import grid
from nnkiln.ir.errors import NnefError

GRAPH = ("version 1.0;\ngraph G(x) -> (y) {{ x = external(shape = {s}); w = variable(shape = {s}, label = 'w');"
         " y = add(x, w); }}\n")
GOOD = write_tensor(np.ones((1, 4), np.float32))
MiB = 1 << 20


def graph(shape: str = "[1, 4]") -> str:
    return GRAPH.format(s=shape)


def header(length: int, shape: list[int], bits: int, code: int, params: bytes = b"") -> bytes:
    h = bytearray(128)
    h[0:2] = b"\x4e\xef"
    h[2] = 1
    struct.pack_into("<II", h, 4, length, len(shape))
    struct.pack_into("<8I", h, 12, *(list(shape) + [0] * (8 - len(shape))))
    struct.pack_into("<II", h, 44, bits, code)
    h[52:52 + len(params)] = params
    return bytes(h)


@contextlib.contextmanager
def _deadline(seconds: int) -> Iterator[None]:
    """Fail (TimeoutError) instead of hanging: a blocked open() of a FIFO is interrupted too (PEP 475)."""
    def on_alarm(signum, frame):  # noqa: ANN001, ANN202
        raise TimeoutError(f"still running after {seconds} s")

    old = signal.signal(signal.SIGALRM, on_alarm)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


@contextlib.contextmanager
def _address_space(extra: int = 512 * MiB) -> Iterator[None]:
    """Cap this process's address space at its current size + ``extra`` (restored afterwards)."""
    with open("/proc/self/status") as f:
        vm = next(int(line.split()[1]) * 1024 for line in f if line.startswith("VmSize:"))
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    resource.setrlimit(resource.RLIMIT_AS, (vm + extra, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


@contextlib.contextmanager
def _peak(limit: int) -> Iterator[None]:
    """Assert that Python and numpy allocations within the block peak below ``limit`` bytes."""
    tracemalloc.start()
    try:
        yield
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < limit, f"peak allocation {peak} bytes"


def _folder(path: Path, files: dict[str, str | bytes]) -> Path:
    path.mkdir(exist_ok=True)
    for name, data in files.items():
        (path / name).write_bytes(data.encode() if isinstance(data, str) else data)
    return path


class _Zeros(io.RawIOBase):
    """``prefix`` then zeros, ``size`` bytes in all, produced on demand (a bomb without the memory)."""

    def __init__(self, prefix: bytes, size: int) -> None:
        self.prefix, self.size, self.pos = prefix, size, 0

    def readable(self) -> bool:
        return True

    def readinto(self, b) -> int:  # noqa: ANN001
        k = min(len(b), self.size - self.pos)
        b[:k] = bytes(k)
        if self.pos < len(self.prefix):
            pre = self.prefix[self.pos:self.pos + k]
            b[:len(pre)] = pre
        self.pos += k
        return k


def _tgz(path: Path, members: list[tuple[str, bytes | tuple[bytes, int]]]) -> Path:
    """A gzip-compressed tar; a member given as ``(prefix, size)`` is ``prefix`` then zeros, streamed."""
    with gzip.open(path, "wb", compresslevel=1) as gz, tarfile.open(fileobj=gz, mode="w") as tar:
        for name, data in members:
            info = tarfile.TarInfo(name)
            if isinstance(data, tuple):
                info.size = data[1]
                tar.addfile(info, io.BufferedReader(_Zeros(*data), 1 << 20))
            else:
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
    return path


# -- 1. logarithmic quantization at 64 bits (§5.2) ------------------------------------------------------------

@pytest.mark.parametrize("signed", [False, True])
def test_log_quantized_64_bit_items_decode(signed: bool) -> None:
    """bits = 64 (the widest item of §5.2): ``2^(q + m - r)`` with ``r = 2^64 - 1`` overflowed int64
    (OverflowError); all-ones codes are max (m = 2 for max = 4), code 0 is 2^(m - r), i.e. 0.0."""
    params = struct.pack("<ff", -4.0 if signed else 0.0, 4.0)
    data = header(16, [2], 64, 0x11, params) + b"\xff" * 8 + bytes(8)
    t = read_tensor(data, file="w.dat")
    assert t.dequantize().tolist() == [-4.0 if signed else 4.0, 0.0]
    x = np.array([4.0, 2.0, 0.25, 0.0])
    back = read_tensor(write_tensor(x, item_type=ItemType.LOGARITHMIC_QUANTIZED, bits=64, max=4.0, signed=signed))
    assert back.dequantize().tolist() == x.tolist()


# -- 2. bit unpacking proportional to the output; stored shape checked first ---------------------------------

@pytest.mark.parametrize("bits,count,limit", [(1, 16 << 20, 40 * MiB), (3, 4 << 20, 48 * MiB),
                                              (63, 256 << 10, 40 * MiB)])
def test_bit_unpacking_memory_follows_the_output(bits: int, count: int, limit: int) -> None:
    """A ``count x bits`` uint64 array was built: 128 MiB for 16 Mi 1-bit items (2 MiB of data), 128 MiB for
    256 Ki 63-bit items. Now: the output (the narrowest integer type) plus a bounded chunk."""
    rng = np.random.default_rng(bits)
    vals = rng.integers(0, 1 << min(bits, 62), size=count, dtype=np.int64)
    data = write_tensor(vals, bits=bits, signed=False)
    with _peak(limit):
        t = read_tensor(data, file="w.dat")
    assert t.values.itemsize <= 8 and np.array_equal(t.values.astype(np.int64), vals)


def test_stored_shape_is_compared_before_the_data_is_read(tmp_path: Path) -> None:
    """A 1-bit w.dat of 2^29 items (64 MiB, sparse) for a [1, 4] variable: refused from its header (§6 stage 4)
    before the 64 MiB are read or 4 GiB of uint64 are unpacked."""
    n = 1 << 29
    _folder(tmp_path, {"graph.nnef": graph(), "w.dat": header(n // 8, [n], 1, 0x01)})
    with open(tmp_path / "w.dat", "r+b") as f:
        f.truncate(128 + n // 8)
    with _deadline(10), _address_space(), _peak(8 * MiB), pytest.raises(NnefError, match=r"§6 stage 4.*\[536870912\]"):
        load_container(str(tmp_path))


def test_dat_length_is_checked_against_the_file_size_first(tmp_path: Path) -> None:
    """A w.dat whose header declares 16 bytes of data but whose file holds 256 MiB (sparse): refused from the
    header, without reading the 256 MiB."""
    _folder(tmp_path, {"graph.nnef": graph(), "w.dat": GOOD})
    with open(tmp_path / "w.dat", "r+b") as f:
        f.truncate(256 * MiB)
    with _deadline(10), _address_space(), _peak(8 * MiB), pytest.raises(NnefError, match="header declares 16 bytes") as info:
        load_container(str(tmp_path))
    assert info.value.file.endswith("w.dat")


# -- 3. a single .nnef document and the files beside it -------------------------------------------------------

def _single(tmp_path: Path) -> str:
    (tmp_path / "model.nnef").write_text(graph())
    return str(tmp_path / "model.nnef")


@pytest.mark.parametrize("name", ["w.dat", "graph.quant"])
def test_fifo_beside_a_document_is_refused_not_waited_on(tmp_path: Path, name: str) -> None:
    model = _single(tmp_path)
    if name != "w.dat":
        (tmp_path / "w.dat").write_bytes(GOOD)
    os.mkfifo(tmp_path / name)
    with _deadline(5), pytest.raises(NnefError, match="not a regular file") as info:
        nnkiln.load(model)
    assert info.value.file.endswith(name)


@pytest.mark.parametrize("name", ["w.dat", "graph.quant"])
def test_device_or_folder_beside_a_document_is_refused(tmp_path: Path, name: str) -> None:
    """``/dev/zero`` behind a symbolic link was read until memory ran out; a folder raised IsADirectoryError."""
    model = _single(tmp_path)
    if name != "w.dat":
        (tmp_path / "w.dat").write_bytes(GOOD)
    os.symlink("/dev/zero", tmp_path / name)
    with _deadline(10), _address_space(), pytest.raises(NnefError, match="not a regular file"):
        nnkiln.load(model)
    os.remove(tmp_path / name)
    (tmp_path / name).mkdir()
    with pytest.raises(NnefError, match="not a regular file .a folder"):
        nnkiln.load(model)


def test_huge_sparse_dat_beside_a_document_is_refused_from_its_size(tmp_path: Path) -> None:
    """A 5 GiB sparse w.dat was read in full before its magic number was checked."""
    model = _single(tmp_path)
    with open(tmp_path / "w.dat", "wb") as f:
        f.truncate(5 << 30)
    t0 = time.monotonic()
    with _deadline(10), _address_space(), pytest.raises(NnefError, match="absurdly large"):
        nnkiln.load(model)
    assert time.monotonic() - t0 < 5


def test_non_ascii_graph_quant_beside_a_document(tmp_path: Path) -> None:
    model = _single(tmp_path)
    (tmp_path / "w.dat").write_bytes(GOOD)
    (tmp_path / "graph.quant").write_bytes(b'"w": linear_quantize(min = 0.0, max = 1.0, bits = 8); # \xe9\n')
    with pytest.raises(NnefError, match="graph.quant must be ASCII") as info:
        nnkiln.load(model)
    assert info.value.file.endswith("graph.quant")


# -- 4. folder containers: only referenced .dat files are read ------------------------------------------------

def test_folder_reads_only_the_referenced_dat_files(tmp_path: Path) -> None:
    """Two sparse 3 GiB junk*.dat and a garbage one beside the real w.dat: never opened (§5.1, vendor files are
    "simply omitted"); before, all were read (MemoryError)."""
    _folder(tmp_path, {"graph.nnef": graph(), "w.dat": GOOD, "bad.dat": b"garbage"})
    for i in range(2):
        with open(tmp_path / f"junk{i}.dat", "wb") as f:
            f.truncate(3 << 30)
    with _deadline(10), _address_space():
        c = load_container(str(tmp_path))
        nnkiln.load(str(tmp_path))
    assert c.array("w").tolist() == [[1.0] * 4]


def test_fifo_graph_nnef_in_a_folder_or_as_the_archive(tmp_path: Path) -> None:
    (tmp_path / "m").mkdir()
    os.mkfifo(tmp_path / "m" / "graph.nnef")
    os.mkfifo(tmp_path / "m.tgz")
    with _deadline(5):
        with pytest.raises(NnefError, match="not a regular file"):
            load_container(str(tmp_path / "m"))
        with pytest.raises(NnefError, match="not a regular file"):
            load_container(str(tmp_path / "m.tgz"))


# -- 5. tar archives --------------------------------------------------------------------------------------------

def test_archive_skips_unreferenced_members(tmp_path: Path) -> None:
    """An unreferenced 192 MiB junk.dat (a gzip run of zeros) and a garbage one: skipped, not read (the reader
    used to keep every .dat member, and to refuse the garbage one)."""
    path = _tgz(tmp_path / "m.tgz", [("graph.nnef", graph().encode()), ("w.dat", GOOD), ("bad.dat", b"junk"),
                                     ("junk.dat", (b"", 192 * MiB))])
    with _deadline(20), _peak(16 * MiB):
        c = load_container(str(path))
    assert c.array("w").tolist() == [[1.0] * 4]


def test_archive_member_is_read_into_one_buffer(tmp_path: Path) -> None:
    """A referenced 64 MiB float member: read into one buffer that the tensor views (the chunks and their join
    peaked at twice the member, the float decoding at three times)."""
    n = 16 << 20
    path = _tgz(tmp_path / "m.tgz", [("graph.nnef", graph(f"[{n}]").encode()),
                                     ("w.dat", (header(4 * n, [n], 32, 0), 128 + 4 * n))])
    with _deadline(20), _peak(100 * MiB):
        c = load_container(str(path))
        assert c.tensors["w"].values.shape == (n,)


def test_archive_bomb_with_a_valid_header_fails_on_the_shape(tmp_path: Path) -> None:
    """A gzip run of zeros behind a valid header for 64 Mi floats (256 MiB), for a [1, 4] variable: refused from
    the header (§6 stage 4) before the 256 MiB are inflated into memory."""
    n = 64 << 20
    path = _tgz(tmp_path / "m.tgz", [("graph.nnef", graph().encode()),
                                     ("w.dat", (header(4 * n, [n], 32, 0), 128 + 4 * n))])
    with _deadline(20), _peak(16 * MiB), pytest.raises(NnefError, match=r"§6 stage 4.*\[67108864\]"):
        load_container(str(path))


def test_archive_graph_text_is_capped(tmp_path: Path) -> None:
    """A graph.nnef member over MAX_TEXT_BYTES (64 MiB) of comment is refused from its tar header (it used to be
    inflated and lexed character by character)."""
    size = container_mod.MAX_TEXT_BYTES + 1
    assert size <= (64 << 20) + 1
    path = _tgz(tmp_path / "m.tgz", [("graph.nnef", (b"#", size))])
    t0 = time.monotonic()
    with _deadline(20), _peak(8 * MiB), pytest.raises(NnefError, match="absurdly large for a text file"):
        load_container(str(path))
    assert time.monotonic() - t0 < 5


def test_archive_total_size_cap_stops_the_scan(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The sum of the members' sizes (what inflating the archive costs) is capped before each member is
    inflated: with the cap lowered to 32 MiB, the second 24 MiB member is refused."""
    monkeypatch.setattr(container_mod, "MAX_TOTAL_BYTES", 32 * MiB)
    path = _tgz(tmp_path / "m.tgz", [("graph.nnef", graph().encode()), ("w.dat", GOOD),
                                     ("a.bin", (b"", 24 * MiB)), ("b.bin", (b"", 24 * MiB))])
    with pytest.raises(NnefError, match=r"exceed 33554432 bytes in all \(at 'b.bin'\)"):
        load_container(str(path))


def test_archive_inflating_far_beyond_its_size_is_refused_as_a_bomb(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """Past BOMB_ALLOWANCE (lowered here to 8 MiB), members may total at most BOMB_RATIO times the archive's
    size: 24 MiB of zeros (a few KB compressed) is refused from its tar header, before it is inflated;
    12 MiB of random bytes (no compression) in the same position is read."""
    monkeypatch.setattr(container_mod, "BOMB_ALLOWANCE", 8 * MiB)
    bomb = _tgz(tmp_path / "bomb.tgz", [("graph.nnef", graph().encode()), ("w.dat", GOOD), ("a.bin", (b"", 24 * MiB))])
    with pytest.raises(NnefError, match=r"\(at 'a.bin'\) would inflate to more than 64 times .*decompression bomb"):
        load_container(str(bomb))
    noise = np.random.default_rng(0).integers(0, 256, 12 * MiB, dtype=np.uint8).tobytes()
    fine = _tgz(tmp_path / "fine.tgz", [("graph.nnef", graph().encode()), ("w.dat", GOOD), ("a.bin", noise)])
    load_container(str(fine))


# -- 6. graph.quant -----------------------------------------------------------------------------------------

def _quant_folder(tmp_path: Path, quant: str | bytes) -> str:
    return str(_folder(tmp_path, {"graph.nnef": graph(), "w.dat": GOOD, "graph.quant": quant}))


def test_non_ascii_graph_quant_through_the_api(tmp_path: Path) -> None:
    path = _quant_folder(tmp_path, b'"w": linear_quantize(min = 0.0, max = 1.0, bits = 8); # \xe9\n')
    with pytest.raises(NnefError, match="graph.quant must be ASCII"):
        nnkiln.load(path)


def test_deeply_nested_graph_quant_is_an_nnef_error(tmp_path: Path) -> None:
    text = '"w": linear_quantize(min = ' + "(" * 100000 + "0.0" + ")" * 100000 + ", max = 1.0, bits = 8);\n"
    with pytest.raises(NnefError, match="nested too deeply"):
        parse_quant(text)
    with pytest.raises(NnefError, match="nested too deeply"):
        nnkiln.load(_quant_folder(tmp_path, text))


ZP = "zero_point_linear_quantize"


@pytest.mark.parametrize("entry,rule", [
    (f"{ZP}(zero_point = 0, scale = 1e999, bits = 8, signed = true, symmetric = false)", "'scale' .* must be finite"),
    (f"{ZP}(zero_point = 300, scale = 0.5, bits = 8, signed = true, symmetric = false)", r"'zero_point' .* \[-128, 127\]"),
    (f"{ZP}(zero_point = -1, scale = 0.5, bits = 8, signed = false, symmetric = false)", r"\[0, 255\]"),
    (f"{ZP}(zero_point = 9000000000000000000, scale = 1.0, bits = 32, signed = true, symmetric = false)", r"\[-2147483648, 2147483647\]"),
    (f"{ZP}(zero_point = 0, scale = 1.0, bits = 1, signed = true, symmetric = true)", "at least 2 bits"),
    ("min_max_linear_quantize(min = -1e308, max = 1e308, bits = 8, signed = true, symmetric = false)", "finite and positive"),
    ("min_max_linear_quantize(min = 1e300, max = 1.5e300, bits = 64, signed = false, symmetric = false)", "zero point"),
    ("linear_quantize(min = 0.0, max = 1e999, bits = 8)", "'max' .* must be finite"),
    ("linear_quantize(min = [0.0, -1e999], max = 1.0, bits = 8)", "'min' .* must be finite"),
    ("logarithmic_quantize(max = 0.0, bits = 8)", "max > 0"),
])
def test_every_quant_parameter_is_checked(tmp_path: Path, entry: str, rule: str) -> None:
    """Infinite scales, out-of-range zero points, overflowing steps and log2 of 0 used to load (or crash in the
    lowering with AttributeError / OverflowError); now an NnefError names graph.quant, the tensor and the rule."""
    path = _quant_folder(tmp_path, f'"w": {entry};\n')
    with pytest.raises(NnefError, match=rule) as info:
        nnkiln.load(path)
    assert info.value.file.endswith("graph.quant") and "'w'" in str(info.value)


def test_grid_of_unchecked_huge_parameters_does_not_overflow() -> None:
    """``quant_v105.grid`` on parameters that bypassed the parser: None (no code grid), not OverflowError."""
    args = {"scale": 10 ** 400, "zero_point": 0, "bits": 8, "signed": True, "symmetric": False}
    assert grid(ZP, args) is None
    args = {"min": 0, "max": 10 ** 400, "bits": 8, "signed": True, "symmetric": False}
    assert grid("min_max_linear_quantize", args, tol=float("inf")) is None


# -- 7. MemoryError ---------------------------------------------------------------------------------------------

def test_memory_error_while_reading_becomes_an_nnef_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = str(_folder(tmp_path, {"graph.nnef": graph(), "w.dat": GOOD}))

    def no_memory(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        raise MemoryError

    monkeypatch.setattr(container_mod, "read_tensor", no_memory)
    for load in (load_container, nnkiln.load):
        with pytest.raises(NnefError, match="out of memory") as info:
            load(path)
        assert info.value.file == path
