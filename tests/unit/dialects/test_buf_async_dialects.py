"""buf and async dialects: round trip and verifier rules (one failing case per rule)."""

from __future__ import annotations

import pytest

from nnkiln.ir.errors import InputError, VerifyError
from nnkiln.ir.text import parse_module, print_module

GOOD = """
func.func @main(%x: memref<1x4x4x2xf32>, %o: memref<1x4x4x2xf32>) {
  %w = buf.const {values = dense<1.0> : tensor<2xf32>} : memref<2xf32>
  %a = buf.alloc : memref<1x4x4x2xf32>
  %s = buf.static_alloc {memory = "host", offset = 128 : i64} : memref<1x4x4x2xf32>
  %t0 = async.execute [] {executor = "cpu", executor_index = 0 : i64} {
    %r = buf.kernel "tosa.add" ins(%x, %w : memref<1x4x4x2xf32>, memref<2xf32>) outs(%a : memref<1x4x4x2xf32>) {attrs = {shift = 0 : i64}, post_ops = [{kernel = "tosa.clamp", attrs = {min_fp = 0.0 : f32}}]} -> memref<1x4x4x2xf32>
    async.yield
  }
  %t1 = async.execute [%t0] {executor = "cpu", executor_index = 1 : i64} {
    %v = buf.reshape %a : memref<1x4x4x2xf32> -> memref<32xf32>
    %sv = buf.subview %a {offsets = array<i64: 0, 1, 0, 0>, sizes = array<i64: 1, 2, 4, 2>} : memref<1x4x4x2xf32> -> memref<1x2x4x2xf32>
    %c = buf.copy ins(%a : memref<1x4x4x2xf32>) outs(%o : memref<1x4x4x2xf32>) -> memref<1x4x4x2xf32>
    async.yield
  }
  async.await_all %t0, %t1
  func.return
}
"""


def test_round_trip_custom_and_generic() -> None:
    m = parse_module(GOOD)
    m.verify()
    text = print_module(m)
    assert print_module(parse_module(text)) == text
    assert print_module(parse_module(print_module(m, generic=True))) == text


def _verify(body: str, args: str = "%x: memref<4xf32>") -> None:
    parse_module(f"func.func @main({args}) {{\n{body}\n func.return\n}}").verify()


@pytest.mark.parametrize(
    "body, rule",
    [
        ('%s = buf.static_alloc {memory = "host", offset = 32 : i64} : memref<4xf32>', "alignment"),
        ('%s = buf.static_alloc {memory = "host", offset = -64 : i64} : memref<4xf32>', "offset >= 0"),
        ('%s = buf.static_alloc {memory = "nowhere", offset = 0 : i64} : memref<4xf32>', "known target"),
        ("%w = buf.const {values = dense<1.0> : tensor<3xf32>} : memref<4xf32>", "type(values)"),
        ("%w = buf.const {values = dense<1> : tensor<4xi32>} : memref<4xf32>", "type(values)"),
        ("%a = buf.alloc : memref<4xf32>\n"
         '%r = buf.kernel "tosa.abs" ins(%x : memref<4xf32>) outs(%a : memref<4xf32>) {attrs = {}} -> memref<2x2xf32>',
         "results alias outs"),
        ("%a = buf.alloc : memref<4xf32>\n"
         '%r = buf.kernel "abs" ins(%x : memref<4xf32>) outs(%a : memref<4xf32>) {attrs = {}} -> memref<4xf32>',
         "tosa op"),
        ("%a = buf.alloc : memref<4xf32>\n"
         '%r = buf.kernel "tosa.abs" ins(%x : memref<4xf32>) outs(%a : memref<4xf32>) '
         '{attrs = {}, post_ops = [{kernel = "tosa.add", attrs = {}, operand = 3 : i64}]} -> memref<4xf32>',
         "post-op operand"),
        ("%v = buf.reshape %x : memref<4xf32> -> memref<5xf32>", "byte size"),
        ("%v = buf.reshape %x : memref<4xf32> -> memref<4xi32>", "byte size"),
        ("%a = buf.alloc : memref<5xf32>\n"
         "%c = buf.copy ins(%x : memref<4xf32>) outs(%a : memref<5xf32>) -> memref<5xf32>", "element count"),
    ],
)
def test_verifier_rules(body: str, rule: str) -> None:
    with pytest.raises(VerifyError) as info:
        _verify(body)
    assert rule in info.value.rule


def test_subview_must_be_contiguous() -> None:
    args = "%x: memref<2x4x3xf32>"
    _verify("%v = buf.subview %x {offsets = array<i64: 1, 1, 0>, sizes = array<i64: 1, 2, 3>} : "
            "memref<2x4x3xf32> -> memref<1x2x3xf32>", args)
    with pytest.raises(VerifyError) as info:
        _verify("%v = buf.subview %x {offsets = array<i64: 0, 1, 0>, sizes = array<i64: 2, 2, 3>} : "
                "memref<2x4x3xf32> -> memref<2x2x3xf32>", args)
    assert "contiguous" in info.value.rule
    with pytest.raises(VerifyError) as info:
        _verify("%v = buf.subview %x {offsets = array<i64: 0, 0, 1>, sizes = array<i64: 1, 2, 2>} : "
                "memref<2x4x3xf32> -> memref<1x2x2xf32>", args)
    assert "contiguous" in info.value.rule


def test_subview_byte_offset() -> None:
    from nnkiln.dialects.buf import SubviewOp

    m = parse_module("func.func @main(%x: memref<2x4x3xf32>) {\n"
                     "%v = buf.subview %x {offsets = array<i64: 1, 1, 0>, sizes = array<i64: 1, 2, 3>} : "
                     "memref<2x4x3xf32> -> memref<1x2x3xf32>\n func.return\n}")
    op = next(o for o in m.walk() if isinstance(o, SubviewOp))
    assert op.byte_offset() == (1 * 12 + 1 * 3) * 4


def test_execute_region_must_end_with_yield() -> None:
    text = ('func.func @main(%x: memref<4xf32>) {\n %t = async.execute [] {executor = "cpu", executor_index = 0 : i64} {\n'
            '  %v = buf.reshape %x : memref<4xf32> -> memref<2x2xf32>\n }\n func.return\n}')
    from xdsl.utils.exceptions import VerifyException

    with pytest.raises((VerifyException, InputError)):
        parse_module(text).verify()
