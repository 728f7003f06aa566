"""Fuzz: mutated documents, graph.quant texts and truncated/lying .dat files raise nothing but NnefError."""

from __future__ import annotations

import os
import random
import struct

import numpy as np
import pytest
from nnef_corpus import INVALID, VALID

from nnkiln import NnefError
from nnkiln.frontends.nnef import ItemType, expand, parse_document, parse_quant, read_tensor, write_tensor

SEED = 20240613
ALEXNET = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                       "data", "nnef", "alexnet.nnef")
PIECES = ["(", ")", "[", "]", "{", "}", ",", ";", "=", "->", "<", ">", "?", "-", "+", "*", "/", "^", "!", "&&",
          "'", '"', "\\", "#", "0", "1.5e", "-1", "[]", "x", "y", "if", "else", "for", "in", "yield", "tensor",
          "fragment", "graph", "external", "shape_of(", "[for i in [1,2] yield i]", " ", "\n", "\r", "\x00", "é",
          "1" * 30, "[1]*99999999", "2^99999", "add_n(", "true", "1e999"]


def mutate(text: str, rng: random.Random) -> str:
    chars = list(text)
    for _ in range(rng.randint(1, 4)):
        op = rng.randrange(4)
        pos = rng.randrange(len(chars) + 1)
        if op == 0 and chars:
            del chars[min(pos, len(chars) - 1)]
        elif op == 1:
            chars[pos:pos] = list(rng.choice(PIECES))
        elif op == 2 and chars:
            chars[min(pos, len(chars) - 1)] = chr(rng.randrange(32, 127))
        else:
            a, b = sorted((rng.randrange(len(chars) + 1), rng.randrange(len(chars) + 1)))
            chars[pos:pos] = chars[a:b]
    return "".join(chars)


def test_mutated_documents_raise_only_nnef_errors() -> None:
    rng = random.Random(SEED)
    with open(ALEXNET) as f:
        seeds = [f.read()] + [t for _, t in VALID] + [t for _, t, _ in INVALID]
    for _ in range(1500):
        text = mutate(rng.choice(seeds), rng)
        for lenient in (False, True):
            try:
                expand(parse_document(text, lenient=lenient))
            except NnefError:
                pass


def test_mutated_quant_files_raise_only_nnef_errors() -> None:
    rng = random.Random(SEED + 1)
    doc = parse_document("version 1.0;\ngraph g(x) -> (y) { x = external(shape = [1]); y = relu(x); }")
    seed = ('"x": linear_quantize(min = -1.0, max = [1.0, 2.0], bits = 8);\n'
            "'y': logarithmic_quantize(max = 4.0, bits = 4);\n")
    for _ in range(500):
        try:
            parse_quant(mutate(seed, rng), doc)
        except NnefError:
            pass


def test_lying_dat_files_raise_only_nnef_errors() -> None:
    rng = random.Random(SEED + 2)
    seeds = [
        write_tensor(np.arange(12, dtype=np.float32).reshape(3, 4)),
        write_tensor(np.array([1, -2, 3, -4, 5], dtype=np.int64), bits=5),
        write_tensor(np.array([True, False] * 9)),
        write_tensor(np.linspace(-1, 1, 7), item_type=ItemType.LINEAR_QUANTIZED, bits=3, min=-1.0, max=1.0),
        write_tensor(np.linspace(-4, 4, 7), item_type=ItemType.LOGARITHMIC_QUANTIZED, bits=5, max=4.0, signed=True),
    ]
    for _ in range(3000):
        data = bytearray(rng.choice(seeds))
        kind = rng.randrange(4)
        if kind == 0:
            data = data[:rng.randrange(len(data) + 1)]
        elif kind == 1:  # overwrite a header word with a random or extreme value
            off = rng.choice([4, 8, 12, 16, 20, 40, 44, 48, 52, 56])
            struct.pack_into("<I", data, off, rng.choice([0, 1, 7, 8, 9, 64, 65, 0xFFFF, 0x10000, 0xFFFFFFFF,
                                                          rng.randrange(1 << 32)]))
        elif kind == 2:
            for _ in range(rng.randint(1, 8)):
                data[rng.randrange(len(data))] = rng.randrange(256)
        else:
            data += bytes(rng.randrange(1, 9))
        try:
            t = read_tensor(bytes(data), file="fuzz.dat")
            t.dequantize()
        except NnefError as err:
            assert err.file == "fuzz.dat"


def test_absurdly_large_tensors_are_refused_at_import(tmp_path) -> None:  # noqa: ANN001
    """Valid documents whose "same" padding of a 10^9 window, or whose constant, would need a ~10^10-element tensor: refused when
    imported, naming the op, instead of exhausting memory when run."""
    import nnkiln

    (tmp_path / "graph.nnef").write_text(
        "version 1.0;\ngraph g(x) -> (y) { x = external(shape = [1, 8, 3, 3]);"
        " y = max_pool(x, size = [1000000000, 1, 3, 3], border = 'ignore'); }\n")
    with pytest.raises(NnefError, match=r"'max_pool': tosa.pad would produce a tensor of shape \[1000000000, 8, 5, 5\]: more than 2\^32"):
        nnkiln.load(str(tmp_path))
    (tmp_path / "graph.nnef").write_text(
        "version 1.0;\ngraph g(x) -> (y) { x = external(shape = [1]); y = constant(shape = [100000, 100000], value = [1.0]); }\n")
    with pytest.raises(NnefError, match=r"constant of a tensor of shape \[100000, 100000\]: more than 2\^32 elements"):
        nnkiln.load(str(tmp_path))

