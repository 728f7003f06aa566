"""``fused.row_program`` tasks from elsewhere: a valid program runs (against numpy's float32 ops), and every
malformed one is refused when the blob is loaded, naming the rule, before anything runs it."""

from __future__ import annotations

import numpy as np
import pytest

from nnkiln.blob.writer import BlobBuilder, encode
from nnkiln.errors import BlobError
from nnkiln.kinds import Kind
from nnkiln.runtime import load_blob

F = Kind.F32
EXP, NEG, ADD, STORE, CHAIN, STEP, RSUM = 10, 14, 0, 30, 40, 41, 20


def _blob(code: list[int], *, registers: int = 1, modes=(0, 0), args=(0, 1), rows: int = 4, cols: int = 8,
          block: int = 4, out_shape=(4, 8), extra: dict | None = None) -> bytes:
    b = BlobBuilder()
    x = b.add_io("x", F, (4, 8), output=False)
    y = b.add_io("y", F, out_shape, output=True)
    n = len(code) // 6
    attrs = {"code": code, "bounds": [0.0] * (2 * n), "registers": registers, "rows": rows, "cols": cols,
             "block": block, "modes": list(modes), "args": list(args), "parallel": False, **(extra or {})}
    b.add_task("fused.row_program", [x], [y], attrs=attrs)
    return encode(b.finish())


def test_a_valid_program_runs() -> None:
    # r0 = exp(x); y = -r0 + x  (a CHAIN of two steps from r0), stored straight into argument 1
    code = [EXP, 0, -1, 0, -1, 0,
            CHAIN, -2, 0, 2, -1, 0,
            STEP, -1, -1, -1, NEG, 0,
            STEP, -1, -1, -1, ADD, -1]
    x = np.random.default_rng(0).standard_normal((4, 8)).astype(np.float32)
    exe = load_blob(_blob(code))
    got = exe.run({"x": x})["y"]
    want = np.add(np.negative(np.exp(x)), x)
    np.testing.assert_allclose(got, want, rtol=2e-6, atol=1e-7)
    assert exe.stats["kernel_calls"] == 1


@pytest.mark.parametrize("code,kw,rule", [
    ([EXP, 0, 0, 0, -1, 0, STORE, 1, 0, 0, -1, 0], {}, "reads register 0 before it is written"),
    ([EXP, 3, -1, 0, -1, 0, STORE, 1, 3, 0, -1, 0], {}, "writes register 3 of 1"),
    ([EXP, 0, -1, 0, -1, 0, STORE, 0, 0, 0, -1, 0], {}, "not a row-block or per-row output"),  # into the input
    ([EXP, 0, -7, 0, -1, 0, STORE, 1, 0, 0, -1, 0], {}, "reads argument 6 of 2"),
    ([99, 0, -1, 0, -1, 0], {}, "has code 99"),
    ([CHAIN, -2, -1, 2, -1, 0, STEP, -1, -1, -1, NEG, 0, EXP, 0, -1, 0, -1, 0], {}, "not a step of the chain"),
    ([CHAIN, -2, -1, 40, -1, 0], {}, "a chain of 40 steps"),
    ([EXP, -2, -1, 0, -1, 0], {"out_shape": (4, 4)}, "needs 32 floats, its buffer has 16"),
    ([EXP, -2, -1, 0, -1, 0], {"args": (0, 2)}, "outside the task's 2 buffers"),
    ([EXP, -2, -1, 0, -1, 0], {"modes": (0, 7)}, "modes"),
    ([EXP, -2, -1, 0, -1, 0], {"block": 5}, "block=5"),
    ([EXP, -2, -1, 0, -1, 0], {"extra": {"bounds": [0.0]}}, "6 and 2 per instruction"),
    ([RSUM, 0, -1, 0, -1, 0, STORE, 1, 0, 0, -1, 0], {"modes": (0, 3)}, "not a row-block or per-row output"),
])
def test_malformed_programs_are_refused(code: list[int], kw: dict, rule: str) -> None:
    with pytest.raises(BlobError, match="fused.row_program") as err:
        load_blob(_blob(code, **kw))
    assert rule in str(err.value)
