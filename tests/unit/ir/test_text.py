"""MLIR text: dense_resource blobs for large constants, parse errors with positions."""

from __future__ import annotations

import numpy as np
import pytest

from nnkiln.ir.elements import to_numpy
from nnkiln.ir.errors import InputError
from nnkiln.ir.text import RESOURCE_THRESHOLD, parse_module, print_module

SMALL = """
func.func @main() -> () attributes {w = dense<[1.0, 2.0]> : tensor<2xf32>} {
  func.return
}
"""


def _weights(module):
    func = next(iter(module.body.block.ops))
    return func.attributes["w"]


def test_small_constants_print_inline():
    text = print_module(parse_module(SMALL))
    assert "dense<[1.000000e+00, 2.000000e+00]>" in text
    assert "dialect_resources" not in text


def test_large_constants_print_as_resources_and_round_trip():
    n = RESOURCE_THRESHOLD * 4
    values = np.random.default_rng(0).standard_normal(n).astype(np.float32)
    hexdata = "0x04000000" + values.tobytes().hex()
    text = (
        f"func.func @main() -> () attributes {{w = dense_resource<weights> : tensor<{n}xf32>}} {{\n"
        "  func.return\n}\n"
        f'{{-#\n  dialect_resources: {{\n    builtin: {{\n      weights: "{hexdata}"\n    }}\n  }}\n#-}}\n'
    )
    module = parse_module(text)
    np.testing.assert_array_equal(to_numpy(_weights(module)), values)
    printed = print_module(module)
    assert "dense_resource<blob0>" in printed
    again = parse_module(printed)
    np.testing.assert_array_equal(to_numpy(_weights(again)), values)
    assert print_module(again) == printed


def test_resource_of_wrong_size_is_rejected():
    text = (
        "func.func @main() -> () attributes {w = dense_resource<r> : tensor<4xf32>} {\n  func.return\n}\n"
        '{-#\n  dialect_resources: {\n    builtin: {\n      r: "0x0400000000000000"\n    }\n  }\n#-}\n'
    )
    with pytest.raises(InputError, match="holds 4 bytes"):
        parse_module(text)


def test_parse_error_names_file_line_and_column():
    with pytest.raises(InputError) as info:
        parse_module("func.func @main( {\n", filename="bad.mlir")
    assert str(info.value).startswith("bad.mlir:1:")


def test_parsing_twice_does_not_leak_resources():
    text = (
        "func.func @main() -> () attributes {w = dense_resource<r> : tensor<1xf32>} {\n  func.return\n}\n"
        '{-#\n  dialect_resources: {\n    builtin: {\n      r: "0x040000000000803F"\n    }\n  }\n#-}\n'
    )
    for _ in range(2):
        assert float(to_numpy(_weights(parse_module(text)))[0]) == 1.0


# ------------------------------------------------------------------------------------------------
# hostile text (issue 21): every failure is an InputError naming the file, quickly


@pytest.mark.parametrize("opener, closer", [("tensor<", ">"), ("(", ")"), ("[", "]"), ("memref<", ">")])
def test_deep_nesting_is_an_input_error(opener: str, closer: str) -> None:
    text = f"func.func @main(%a: {opener * 5000}f32{closer * 5000}) {{ func.return }}\n"
    with pytest.raises(InputError, match="deep.mlir:1:.*nested more than 64 deep"):
        parse_module(text, filename="deep.mlir")


def test_an_unterminated_string_fails_in_linear_time() -> None:
    import time

    text = 'func.func @main() attributes {a = "' + "x" * 200 + '\n' + "y = 1\n" * 50
    start = time.perf_counter()
    with pytest.raises(InputError, match="s.mlir:1:.*closing string literal"):
        parse_module(text, filename="s.mlir")
    assert time.perf_counter() - start < 2  # xDSL's pattern backtracks exponentially here (hours)


@pytest.mark.parametrize("shape", ["4294967297", "65536x65536"])
def test_a_huge_splat_is_refused_before_it_is_expanded(shape: str) -> None:
    text = (f'func.func @main() -> tensor<{shape}xf32> {{\n  %0 = "tosa.const"() {{values = dense<1.0> : '
            f'tensor<{shape}xf32>}} : () -> tensor<{shape}xf32>\n  func.return %0 : tensor<{shape}xf32>\n}}\n')
    with pytest.raises(InputError, match=r"big.mlir:2:.*dense literal of type .*(over TOSA's limit|budget)"):
        parse_module(text, filename="big.mlir")


def test_types_xdsl_cannot_store_are_input_errors() -> None:
    text = ("func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {\n  %0 = tosa.transpose %a {perms = array<i128: 0>}"
            " : (tensor<2xf32>) -> tensor<2xf32>\n  func.return %a : tensor<2xf32>\n}\n")
    with pytest.raises(InputError, match="w.mlir: unsupported: .*i128"):
        parse_module(text, filename="w.mlir")


def test_a_stray_return_in_a_module_is_a_verify_error() -> None:
    from nnkiln.ir.errors import VerifyError
    from nnkiln.ir.verify import verify_module

    with pytest.raises(VerifyError, match="expects parent op 'func.func'"):
        verify_module(parse_module('"func.return"() : () -> ()\n'))


def test_a_value_used_before_its_definition_is_a_verify_error() -> None:
    """xDSL's parser accepts forward references; the passes assume definitions come first (issue 21: an
    IndexError in optimize-async-deps)."""
    from nnkiln.ir.errors import VerifyError
    from nnkiln.ir.verify import verify_module

    text = ("func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {\n  %0 = tosa.abs %1 : (tensor<2xf32>) -> tensor<2xf32>\n"
            "  %1 = tosa.abs %a : (tensor<2xf32>) -> tensor<2xf32>\n  func.return %0 : tensor<2xf32>\n}\n")
    with pytest.raises(VerifyError, match="operand #0 .*used before it is defined"):
        verify_module(parse_module(text))
    verify_module(parse_module(text.replace("%1 : (", "%a : (", 1)))  # in order: fine


def test_an_unclosed_string_as_the_first_token_is_refused_at_once() -> None:
    """Found by the fuzzer (seed 20261129, mlir case 9328): a file starting with an unclosed '"' took minutes in
    xDSL's lexer, whose pattern for the first token backtracks exponentially (later tokens use ours)."""
    text = '"func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {\n' + "  %y = tosa.abs %x : (tensor<2xf32>) -> tensor<2xf32>\n" * 40
    with pytest.raises(InputError, match="t.mlir:1: a string literal that is not closed on its line"):
        parse_module(text, filename="t.mlir")


def test_a_function_body_without_its_return_is_a_verify_error() -> None:
    """Found by the fuzzer (seed 20261201, cli cases 510, 5687): an empty body verified, then tosa-to-buf raised
    AttributeError (exit 3)."""
    from nnkiln.ir.errors import VerifyError
    from nnkiln.ir.verify import verify_module

    m = parse_module("func.func @precise(%a: tensor<1xf32>) {\n}\n")
    with pytest.raises(VerifyError, match="the function body does not end with func.return"):
        verify_module(m)
