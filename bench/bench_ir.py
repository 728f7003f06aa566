"""IR scale benchmark (issue 2): a 10,000-op TOSA graph and 100M parameters of weights.

Measures: building, verifying, printing and re-parsing a 10,000-op graph; creating and verifying
a 25M-element f32 constant and a 100M-parameter set of weights, with peak resident memory.
Run: ``.venv/bin/python bench/bench_ir.py``. Figures go to stdout (copy them into bench/README.md).
"""

from __future__ import annotations

import resource
import time

import numpy as np
from xdsl.builder import Builder
from xdsl.dialects.builtin import ModuleOp, TensorType, f32
from xdsl.dialects.func import FuncOp, ReturnOp
from xdsl.ir import Block, Region
from xdsl.rewriter import InsertPoint

from nnkiln.dialects.tosa.ops_data_nodes import ConstOp
from nnkiln.dialects.tosa.ops_elementwise_binary import AddOp, MulOp
from nnkiln.dialects.tosa.ops_elementwise_unary import ExpOp
from nnkiln.ir.elements import from_numpy
from nnkiln.ir.text import parse_module, print_module
from nnkiln.ir.verify import verify_module


def rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def timed(label: str, fn):
    t = time.perf_counter()
    out = fn()
    print(f"{label:<46} {time.perf_counter() - t:8.3f} s   peak RSS {rss_mb():7.0f} MB")
    return out


def chain_graph(n_ops: int) -> ModuleOp:
    ttype = TensorType(f32, [1, 64])
    block = Block(arg_types=[ttype])
    b = Builder(InsertPoint.at_end(block))
    c = b.insert(ConstOp.create(properties={"values": from_numpy(np.ones((1, 64), np.float32))}, result_types=[ttype]))
    x = block.args[0]
    for i in range(n_ops - 1):
        if i % 3 == 0:
            x = b.insert(AddOp.make([x, c.results[0]], f32)).results[0]
        elif i % 3 == 1:
            x = b.insert(MulOp.make([x, c.results[0]], f32, shift=0)).results[0]
        else:
            x = b.insert(ExpOp.make([x], f32)).results[0]
    b.insert(ReturnOp(x))
    func = FuncOp("main", ([ttype], [ttype]), Region(block))
    return ModuleOp([func])


def weights_graph(total_params: int, per_tensor: int) -> ModuleOp:
    ops = []
    rng = np.random.default_rng(0)
    for _ in range(total_params // per_tensor):
        arr = rng.standard_normal(per_tensor, dtype=np.float32)
        t = TensorType(f32, [per_tensor])
        ops.append(ConstOp.create(properties={"values": from_numpy(arr)}, result_types=[t]))
    block = Block()
    block.add_ops(ops)
    block.add_op(ReturnOp())
    return ModuleOp([FuncOp("main", ([], []), Region(block))])


def main() -> None:
    module = timed("build 10,000-op graph", lambda: chain_graph(10_000))
    timed("verify 10,000-op graph", lambda: verify_module(module))
    text = timed("print 10,000-op graph", lambda: print_module(module))
    again = timed("parse 10,000-op graph", lambda: parse_module(text))
    timed("verify parsed graph", lambda: verify_module(again))
    print(f"  ({len(text) / 1e6:.1f} MB of text)")

    big = np.random.default_rng(1).standard_normal(25_000_000, dtype=np.float32)
    attr = timed("create 25M-element f32 constant", lambda: from_numpy(big))  # noqa: F821 (deleted below)
    c = ConstOp.create(properties={"values": attr}, result_types=[attr.type])
    timed("verify the 25M-element constant op", lambda: c.verify())  # noqa: F821 (deleted below)
    del c, attr, big

    weights = timed("create 100M parameters (8 x 12.5M f32)", lambda: weights_graph(100_000_000, 12_500_000))
    timed("verify 100M parameters", lambda: verify_module(weights))
    print("  400 MB of f32 weights; peak RSS above is the whole process")


if __name__ == "__main__":
    main()
