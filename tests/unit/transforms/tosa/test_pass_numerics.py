"""The FileCheck cases of the tosa passes and of ``canonicalize`` keep their values.

Every function of each test file below runs through the reference interpreter before and after the
pass of each of the file's RUN lines, on seeded random inputs. Expected values are the reference
results of the UNTRANSFORMED function (the spec semantics), never anything the passes compute. The
results must be identical: same dtype, same shape, same bits; a REQUIRE failure (``TosaUnpredictable``)
before must still be one after. The documented deviations: ``fold-bias-add`` and the HW adaptation passes
re-associate float sums (their docstrings), checked to 1e-5 relative; ``convert-precision-to-fp16`` rounds
to fp16, checked to 1e-2.
"""

from __future__ import annotations

import io
import re
from pathlib import Path

import numpy as np
import pytest
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.dialects.func import FuncOp

from nnkiln.dialects.tosa.base import kind_of
from nnkiln.ir.errors import TosaUnpredictable
from nnkiln.ir.passes import PassManager
from nnkiln.ir.text import parse_module_file
from nnkiln.kinds import Kind
from nnkiln.pipelines.text import parse_pass_pipeline
from nnkiln.reference.interpreter import input_names, run

FILECHECK = Path(__file__).resolve().parents[4] / "tests" / "filecheck"
FILES = {  # test file -> relative tolerance (None: bit-exact)
    "transforms/generic/canonicalize.mlir": None,
    "transforms/tosa/cancel_transpose_pairs.mlir": None,
    "transforms/tosa/fold_constants.mlir": None,
    "transforms/tosa/propagate_transposes.mlir": None,
    "transforms/tosa/split_batch.mlir": None,
    "transforms/tosa/fold_bias_add.mlir": 1e-5,
    # the HW adaptation passes: integers are bit-exact in every one (checked bit by bit in
    # test_hw_adaptation.py); float sums are regrouped by the reference's BLAS (other shapes, other
    # order), and convert-precision-to-fp16 rounds to fp16 on purpose
    "transforms/tosa/fc_to_conv.mlir": 1e-5,
    "transforms/tosa/avgpool_to_depthwise.mlir": 1e-5,
    "transforms/tosa/scale_shift_to_depthwise.mlir": 1e-5,
    "transforms/tosa/expand_channels.mlir": 1e-5,
    "transforms/tosa/split_asymmetric_strides.mlir": 1e-5,
    "transforms/tosa/fuse_low_precision.mlir": None,
    "transforms/tosa/convert_precision_to_fp16.mlir": 1e-2,
}


def _cases() -> list[tuple[str, str, str]]:
    cases = []
    for rel in FILES:
        text = (FILECHECK / rel).read_text()
        specs = re.findall(r"RUN: nnkiln opt %s -p '?([^'\s]+)'?", text)
        assert specs, rel
        funcs = re.findall(r"^func\.func @(\w+)", text, flags=re.M)
        cases += [(rel, spec, f) for spec in specs for f in funcs]
    return cases


def _function(module: ModuleOp, name: str) -> ModuleOp:
    (func,) = [op for op in module.body.block.ops if isinstance(op, FuncOp) and op.sym_name.data == name]
    return ModuleOp([func.clone()])


def _inputs(module: ModuleOp, seed: int) -> dict[str, np.ndarray]:
    (func,) = module.body.block.ops
    rng = np.random.default_rng(seed)
    inputs = {}
    for name, arg in zip(input_names(func), func.body.blocks[0].args):  # type: ignore[attr-defined]
        assert isinstance(arg.type, TensorType)
        shape, kind = tuple(arg.type.get_shape()), kind_of(arg.type)
        if kind is Kind.BOOL:
            inputs[name] = rng.random(shape) < 0.5
        elif kind is not None and kind.is_float:
            inputs[name] = rng.standard_normal(shape).astype(np.float32)
        else:
            low = 0 if kind in (Kind.U8, Kind.U16) else -8
            inputs[name] = rng.integers(low, 9, shape).astype(np.int64)
    return inputs


def _outputs(module: ModuleOp, inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray] | type[TosaUnpredictable]:
    try:
        return run(module, inputs)
    except TosaUnpredictable:
        return TosaUnpredictable


def _bits(a: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(a).reshape(-1).view(np.uint8)


@pytest.mark.parametrize("rel,spec,func", _cases())
def test_pass_keeps_values(rel: str, spec: str, func: str) -> None:
    module = parse_module_file(str(FILECHECK / rel))
    before = _function(module, func)
    PassManager(parse_pass_pipeline(spec), stream=io.StringIO()).run(module)
    after = _function(module, func)
    for seed in range(3):
        inputs = _inputs(before, seed)
        expected, got = _outputs(before, inputs), _outputs(after, inputs)
        if expected is TosaUnpredictable or got is TosaUnpredictable:
            assert got is expected, f"@{func}: {expected} before, {got} after"
            continue
        assert isinstance(expected, dict) and isinstance(got, dict)
        assert expected.keys() == got.keys()
        for k, want in expected.items():
            have = got[k]
            assert (have.dtype, have.shape) == (want.dtype, want.shape), k
            rtol = FILES[rel]
            if rtol is None:
                np.testing.assert_array_equal(_bits(have), _bits(want), err_msg=f"@{func} {k}")
            else:
                np.testing.assert_allclose(have, want, rtol=rtol, atol=rtol * float(np.abs(want).max()), err_msg=k)
