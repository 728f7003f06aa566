"""The ``rt`` dialect: round trip and each verifier rule (expected outcomes from the rules in its docstring)."""

from __future__ import annotations

import pytest

from nnkiln.ir.errors import VerifyError
from nnkiln.ir.text import parse_module, print_module
from nnkiln.ir.verify import verify_module

HEAD = ('func.func @main(%in0: memref<1x4xf32> {nnkiln.io = "input", nnkiln.name = "x"}, '
        '%out0: memref<1x4xf32> {nnkiln.io = "output", nnkiln.name = "y"}) {\n')
TAIL = "  func.return\n}\n"

GOOD = HEAD + """
  rt.barrier {id = 0 : i64}
  rt.barrier {id = 1 : i64}
  %a = rt.buffer {section = "arena", offset = 64 : i64, index = 0 : i64} : memref<1x4xf32>
  %i = rt.buffer {section = "input", offset = 0 : i64, index = 0 : i64} : memref<1x4xf32>
  %o = rt.buffer {section = "output", offset = 0 : i64, index = 0 : i64} : memref<1x4xf32>
  rt.task {executor = "cpu", executor_index = 0 : i64, waits = array<i64>, updates = array<i64: 0>} {
    rt.end
  }
  rt.task {executor = "cpu", executor_index = 1 : i64, waits = array<i64: 0>, updates = array<i64: 1>} {
    rt.end
  }
  rt.task {executor = "cpu", executor_index = 0 : i64, waits = array<i64: 1>} {
    rt.end
  }
""" + TAIL


def test_round_trip_and_verify() -> None:
    m = parse_module(GOOD)
    verify_module(m)
    text = print_module(m)
    assert "rt.task {" in text and "rt.end" in text
    m2 = parse_module(text)
    verify_module(m2)
    assert print_module(m2) == text


def test_generic_form_parses() -> None:
    text = HEAD + """
  %a = "rt.buffer"() <{section = "arena", offset = 0 : i64}> : () -> memref<4xi8>
  "rt.barrier"() <{id = 0 : i64}> : () -> ()
  "rt.task"() <{executor = "cpu", updates = array<i64: 0>}> ({
    "rt.end"() : () -> ()
  }) : () -> ()
""" + TAIL
    verify_module(parse_module(text))


def test_builders() -> None:
    from xdsl.dialects.builtin import MemRefType, f32

    from nnkiln.dialects.rt import BarrierOp, BufferOp, Section, TaskOp

    b = BufferOp(Section.ARENA, 128, 0, MemRefType(f32, [2, 3]))
    assert b.section_kind is Section.ARENA and b.offset_value == 128 and b.index_value == 0
    t = TaskOp("cpu", 2, [1], [0, 3])
    assert t.executor_name == "cpu" and t.executor_index_value == 2
    assert t.wait_ids == (1,) and t.update_ids == (0, 3)
    assert BarrierOp(5).barrier_id == 5


BAD = [
    ('%a = rt.buffer {section = "spill", offset = 0 : i64} : memref<4xf32>', "section enum"),
    ('%a = rt.buffer {section = "arena", offset = -8 : i64} : memref<4xf32>', "offset >= 0"),
    ('%a = rt.buffer {section = "arena", offset = 0 : i64, index = 1 : i64} : memref<4xf32>', "arena buffers have index 0"),
    ('%a = rt.buffer {section = "input", offset = 0 : i64, index = 1 : i64} : memref<4xf32>', "index < number of inputs"),
    ('%a = rt.buffer {section = "output", offset = 0 : i64, index = 2 : i64} : memref<4xf32>', "index < number of outputs"),
    ('rt.barrier {id = 0 : i64}\n  rt.barrier {id = 2 : i64}', "barrier ids in range"),
    ('rt.barrier {id = 0 : i64}\n  rt.barrier {id = -1 : i64}', "barrier ids in range"),
    ('rt.barrier {id = 0 : i64}\n  rt.barrier {id = 0 : i64}', "no duplicate barrier ids"),
    ('rt.barrier {id = 0 : i64}\n  rt.task {executor = "cpu", waits = array<i64: 1>} {\n    rt.end\n  }',
     "waits reference declared barriers"),
    ('rt.barrier {id = 0 : i64}\n  rt.task {executor = "cpu", updates = array<i64: 4>} {\n    rt.end\n  }',
     "updates reference declared barriers"),
    ('rt.barrier {id = 0 : i64}\n  rt.task {executor = "cpu", waits = array<i64: 0>, updates = array<i64: 0>} {\n    rt.end\n  }',
     "does not wait on a barrier it updates"),
    ('rt.barrier {id = 0 : i64}\n  rt.task {executor = "cpu", waits = array<i64: 0, 0>} {\n    rt.end\n  }',
     "no repeated ids in waits"),
    ('rt.task {executor = "cpu", executor_index = -1 : i64} {\n    rt.end\n  }', "executor_index >= 0"),
    ('rt.task {executor = ""} {\n    rt.end\n  }', "executor names an executor"),
]


@pytest.mark.parametrize("body,rule", BAD, ids=[r for _, r in BAD])
def test_rules(body: str, rule: str) -> None:
    m = parse_module(HEAD + "  " + body + "\n" + TAIL)
    with pytest.raises(VerifyError) as info:
        verify_module(m)
    assert rule in info.value.rule
    assert info.value.op_name.startswith("rt.")


def test_task_without_end_fails() -> None:
    text = HEAD + '  "rt.task"() <{executor = "cpu"}> ({\n    "func.return"() : () -> ()\n  }) : () -> ()\n' + TAIL
    with pytest.raises(VerifyError):
        verify_module(parse_module(text))


def test_a_barrier_without_its_id_is_a_verify_error() -> None:
    """Found by the fuzzer (seed 9001, mlir case 4501): the sibling barriers' checks counted it and raised KeyError."""
    m = parse_module(GOOD.replace("rt.barrier {id = 1 : i64}", "rt.barrier {x = 1 : i64}"))
    with pytest.raises(VerifyError, match="property 'id' expected in operation 'rt.barrier'"):
        verify_module(m)
