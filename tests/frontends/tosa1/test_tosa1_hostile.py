"""Corrupt TOSA 1.x flatbuffers (issue 21): every aligned 32-bit word of a conformance case overwritten with a hostile
value (a huge size or offset, -1, 2^31-1). Each load either succeeds or raises a FrontendError naming the file:
offsets and lengths outside the buffer are CorruptFlatbuffer (attribute tables are read lazily, long after the
graph), dims beyond TOSA's size limit or the tensor budget are LimitError, before anything is allocated."""

from __future__ import annotations

import struct
from collections import Counter
from pathlib import Path

import pytest

import nnkiln
from nnkiln.errors import NnkilnError
from nnkiln.ir.errors import VerifyError
from nnkiln.limits import LimitError

CORPUS = Path(__file__).resolve().parents[2] / "data" / "tosa_conformance" / "positive"
CASES = [CORPUS / "add" / "add_5x3_i32" / "test.tosa",
         sorted((CORPUS / "conv2d_1x1").glob("*/test.tosa"))[0] if (CORPUS / "conv2d_1x1").exists()
         else sorted(CORPUS.glob("conv2d*/*/test.tosa"))[0]]


@pytest.mark.parametrize("case", CASES, ids=lambda p: p.parent.name)
def test_every_word_overwritten_is_loaded_or_a_frontend_error(tmp_path: Path, case: Path) -> None:
    data = case.read_bytes()
    path = tmp_path / "hostile.tosa"
    seen: Counter[str] = Counter()
    for pos in range(8, len(data) - 3, 4):
        for value in (10**9, 0xFFFFFFFF, 0x7FFFFFFF):
            path.write_bytes(data[:pos] + struct.pack("<I", value) + data[pos + 4:])
            try:
                nnkiln.load(str(path))
                seen["accepted"] += 1
            except NnkilnError as err:
                text = err.describe() if isinstance(err, VerifyError) else str(err)  # the CLI's message
                assert "hostile.tosa" in text, f"word {pos} = {value:#x}: {text}"
                seen[type(err).__name__] += 1
    assert seen["CorruptFlatbuffer"] > 0 and seen["LimitError"] > 0, seen


def test_a_dim_over_the_budget_is_refused_naming_the_tensor(tmp_path: Path, monkeypatch) -> None:  # noqa: ANN001
    monkeypatch.setenv("NNKILN_MAX_TENSOR_BYTES", "32")  # add_5x3_i32's tensors have 60 bytes
    with pytest.raises(LimitError, match="test.tosa: tensor 'input-0': 60 bytes .* budget of 32 bytes"):
        nnkiln.load(str(CASES[0]))


def test_shape_data_of_a_corrupt_length_is_a_frontend_error() -> None:
    from nnkiln.frontends.tosa1.schema import TosaShape, decode_shape_data
    from nnkiln.ir.errors import FrontendError

    assert decode_shape_data(TosaShape("s", 2, bytes(16))) == [0, 0]
    with pytest.raises(FrontendError, match="shape 's': 13 bytes of data for rank 2"):
        decode_shape_data(TosaShape("s", 2, bytes(13)))  # np.frombuffer raised ValueError


def test_tensor_data_with_trailing_bytes_decodes_its_elements() -> None:
    """Found by the fuzzer (seed 20261129, tosa cases 3488, 13880, ...): 7 bytes for 3 int16 elements made
    numpy's frombuffer raise ValueError; the 6 bytes the elements need are decoded, the 7th is not an element."""
    import numpy as np

    from nnkiln.frontends.tosa1.schema import DType, decode_tensor_data

    got = decode_tensor_data(bytes([1, 0, 2, 0, 255, 255, 9]), DType.INT16, [3], "t")
    np.testing.assert_array_equal(got, np.array([1, 2, -1], np.int16))
