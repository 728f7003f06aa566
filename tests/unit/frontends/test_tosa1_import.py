"""TOSA 1.x flatbuffer importer: graphs built by hand with the flatbuffers Builder (field slots from
tosa.fbs), so every expected attribute value below is the number written into the graph."""

from __future__ import annotations

import os

import flatbuffers
import numpy as np
import pytest
from xdsl.dialects.builtin import IntegerType, Signedness, TensorType

from nnkiln.frontends.tosa1 import (
    InvalidTosa1Graph,
    NotImported,
    UnsupportedIn030,
    import_tosa1_bytes,
    import_tosa1_file,
)
from nnkiln.frontends.tosa1.schema import DType, OpCode, RoundingMode, read_graph
from nnkiln.ir.errors import FrontendError
from nnkiln.ir.verify import verify_module

CORPUS = os.path.join(os.path.dirname(__file__), "..", "..", "data", "tosa_conformance")


# ------------------------------------------------------------------------------------------------
# a minimal TOSA 1.x flatbuffer writer (tables: TosaGraph, Version, TosaRegion, TosaBasicBlock,
# TosaOperator, TosaTensor, TosaShape; attribute tables built by the callers)


class G:
    def __init__(self) -> None:
        self.b = flatbuffers.Builder(1024)
        self.tensors: list[int] = []
        self.shapes: list[int] = []
        self.ops: list[int] = []

    def _strs(self, items: list[str]) -> int:
        offs = [self.b.CreateString(s) for s in items]
        self.b.StartVector(4, len(offs), 4)
        for o in reversed(offs):
            self.b.PrependUOffsetTRelative(o)
        return self.b.EndVector()

    def _i32s(self, items: list[int]) -> int:
        self.b.StartVector(4, len(items), 4)
        for v in reversed(items):
            self.b.PrependInt32(v)
        return self.b.EndVector()

    def _bytes(self, data: bytes) -> int:
        self.b.StartVector(1, len(data), 8)
        for v in reversed(data):
            self.b.PrependUint8(v)
        return self.b.EndVector()

    def tensor(self, name: str, shape: list[int], dtype: DType, data: np.ndarray | None = None) -> None:
        n = self.b.CreateString(name)
        s = self._i32s(shape)
        d = self._bytes(np.ascontiguousarray(data).tobytes()) if data is not None else None
        self.b.StartObject(16)
        self.b.PrependUOffsetTRelativeSlot(0, n, 0)
        self.b.PrependUOffsetTRelativeSlot(1, s, 0)
        self.b.PrependUint32Slot(2, int(dtype), 0)
        if d is not None:
            self.b.PrependUOffsetTRelativeSlot(3, d, 0)
        self.tensors.append(self.b.EndObject())

    def shape(self, name: str, values: list[int]) -> None:
        n = self.b.CreateString(name)
        d = self._bytes(np.asarray(values, "<i8").tobytes())
        self.b.StartObject(3)
        self.b.PrependUOffsetTRelativeSlot(0, n, 0)
        self.b.PrependUint32Slot(1, len(values), 0)
        self.b.PrependUOffsetTRelativeSlot(2, d, 0)
        self.shapes.append(self.b.EndObject())

    def attr(self, fields: list[tuple[str, int, object]]) -> int:
        """An attribute table: (kind, slot, value) with kind in i32s/u32/bool/bytes."""
        pre = {}
        for kind, slot, value in fields:
            if kind == "i32s":
                pre[slot] = self._i32s(list(value))  # type: ignore[arg-type]
            elif kind == "bytes":
                pre[slot] = self._bytes(value)  # type: ignore[arg-type]
        self.b.StartObject(8)
        for kind, slot, value in fields:
            if kind in ("i32s", "bytes"):
                self.b.PrependUOffsetTRelativeSlot(slot, pre[slot], 0)
            elif kind == "u32":
                self.b.PrependUint32Slot(slot, int(value), 0)  # type: ignore[arg-type]
            elif kind == "i32":
                self.b.PrependInt32Slot(slot, int(value), 0)  # type: ignore[arg-type]
            elif kind == "bool":
                self.b.PrependBoolSlot(slot, bool(value), False)
        return self.b.EndObject()

    def op(self, code: OpCode, inputs: list[str], outputs: list[str], attr: int | None = None) -> None:
        ins, outs = self._strs(inputs), self._strs(outputs)
        if attr is None:
            self.b.StartObject(0)
            attr = self.b.EndObject()
        self.b.StartObject(6)
        self.b.PrependUint32Slot(0, int(code), 0)
        self.b.PrependUint8Slot(1, int(code), 0)  # union type: attribute tables follow the Op order
        self.b.PrependUOffsetTRelativeSlot(2, attr, 0)
        self.b.PrependUOffsetTRelativeSlot(3, ins, 0)
        self.b.PrependUOffsetTRelativeSlot(4, outs, 0)
        self.ops.append(self.b.EndObject())

    def finish(self, inputs: list[str], outputs: list[str]) -> bytes:
        b = self.b

        def vec(items: list[int]) -> int:
            b.StartVector(4, len(items), 4)
            for o in reversed(items):
                b.PrependUOffsetTRelative(o)
            return b.EndVector()

        name = b.CreateString("main")
        ops, tens, shp = vec(self.ops), vec(self.tensors), vec(self.shapes)
        ins, outs = self._strs(inputs), self._strs(outputs)
        b.StartObject(6)
        b.PrependUOffsetTRelativeSlot(0, name, 0)
        b.PrependUOffsetTRelativeSlot(1, ops, 0)
        b.PrependUOffsetTRelativeSlot(2, tens, 0)
        b.PrependUOffsetTRelativeSlot(3, ins, 0)
        b.PrependUOffsetTRelativeSlot(4, outs, 0)
        b.PrependUOffsetTRelativeSlot(5, shp, 0)
        block = b.EndObject()
        blocks = vec([block])
        rname = b.CreateString("main")
        b.StartObject(2)
        b.PrependUOffsetTRelativeSlot(0, rname, 0)
        b.PrependUOffsetTRelativeSlot(1, blocks, 0)
        regions = vec([b.EndObject()])
        b.StartObject(4)
        b.PrependInt32Slot(0, 1, -1)
        b.PrependInt32Slot(1, 1, -1)
        b.PrependInt32Slot(2, 0, -1)
        version = b.EndObject()
        b.StartObject(4)
        b.PrependUOffsetTRelativeSlot(0, version, 0)
        b.PrependUOffsetTRelativeSlot(1, regions, 0)
        b.Finish(b.EndObject(), file_identifier=b"TOSA")
        return bytes(b.Output())


def only_op(imp, name: str):
    func = imp.module.body.block.first_op
    ops = [o for o in func.body.block.ops if o.name == name]
    assert len(ops) == 1, [o.name for o in func.body.block.ops]
    return ops[0]


def props(op) -> dict:
    from nnkiln.dialects.tosa.base import from_attr

    return {k: from_attr(v) for k, v in op.properties.items()}


def rescale_graph(*, in_unsigned: bool = False, rounding: RoundingMode = RoundingMode.SINGLE_ROUND,
                  in_zp: int = -3, zp_dtype=np.int8, x_dtype: DType = DType.INT8, y_dtype: DType = DType.INT8,
                  out_unsigned: bool = False) -> bytes:
    g = G()
    g.tensor("x", [2, 3], x_dtype)
    g.tensor("m", [1], DType.INT32, np.array([1 << 30], np.int32))
    g.tensor("s", [1], DType.INT8, np.array([31], np.int8))
    g.tensor("izp", [1], DType.INT8, np.array([in_zp], zp_dtype))
    g.tensor("ozp", [1], DType.INT8, np.array([5], np.int8))
    g.tensor("y", [2, 3], y_dtype)
    for c in ("m", "s", "izp", "ozp"):
        g.op(OpCode.CONST, [], [c])
    a = g.attr([("bool", 0, True), ("u32", 1, int(rounding)), ("bool", 2, False), ("bool", 3, in_unsigned),
                ("bool", 4, out_unsigned)])
    g.op(OpCode.RESCALE, ["x", "m", "s", "izp", "ozp"], ["y"], a)
    return g.finish(["x"], ["y"])


# ------------------------------------------------------------------------------------------------


def test_schema_reader_round_trip() -> None:
    graph = read_graph(rescale_graph())
    assert graph.version[:3] == (1, 1, 0)
    block = graph.regions[0].blocks[0]
    assert block.inputs == ["x"] and block.outputs == ["y"]
    assert [o.op_name for o in block.operators] == ["CONST"] * 4 + ["RESCALE"]
    t = {t.name: t for t in block.tensors}
    assert t["m"].array().tolist() == [1 << 30]
    assert t["izp"].array().tolist() == [-3]
    assert t["x"].shape == [2, 3] and t["x"].dtype is DType.INT8


def test_rescale_const_inputs_become_attributes() -> None:
    imp = import_tosa1_bytes(rescale_graph())
    op = only_op(imp, "tosa.rescale")
    assert props(op) == {"input_zp": -3, "output_zp": 5, "multiplier": (1 << 30,), "shift": (31,),
                         "scale32": True, "double_round": False, "per_channel": False}
    func = imp.module.body.block.first_op
    assert [o.name for o in func.body.block.ops] == ["tosa.rescale", "func.return"]  # zp/scale consts vanish
    assert func.arg_attrs.data[0].data["nnkiln.name"].data == "x"
    assert func.res_attrs.data[0].data["nnkiln.name"].data == "y"
    assert imp.input_names == ["x"] and imp.output_names == ["y"]


def test_rescale_double_round_and_inexact() -> None:
    op = only_op(import_tosa1_bytes(rescale_graph(rounding=RoundingMode.DOUBLE_ROUND)), "tosa.rescale")
    assert props(op)["double_round"] is True
    with pytest.raises(UnsupportedIn030, match="INEXACT"):
        import_tosa1_bytes(rescale_graph(rounding=RoundingMode.INEXACT_ROUND))


def test_rescale_unsigned_input_is_ui8_with_unsigned_zp() -> None:
    imp = import_tosa1_bytes(rescale_graph(in_unsigned=True, in_zp=-128))
    func = imp.module.body.block.first_op
    arg_t = func.body.block.args[0].type
    assert isinstance(arg_t, TensorType)
    assert arg_t.element_type == IntegerType(8, Signedness.UNSIGNED)
    assert props(only_op(imp, "tosa.rescale"))["input_zp"] == 128  # int8 bits 0x80 read as uint8


@pytest.mark.parametrize(("x", "y", "iu", "ou"), [(DType.INT8, DType.INT16, False, True),
                                                 (DType.INT16, DType.INT8, True, False)])
def test_rescale_type_modes_only_in_1x_are_unsupported_in_030(x: DType, y: DType, iu: bool, ou: bool) -> None:
    """int8 -> uint16 and uint16 -> int8 are 1.x RESCALE modes; 0.30's table (spec 2.13.2) lacks them: the conformance
    command skips such cases with this reason instead of failing them."""
    with pytest.raises(UnsupportedIn030, match="is a TOSA 1.x type mode"):
        import_tosa1_bytes(rescale_graph(x_dtype=x, y_dtype=y, in_unsigned=iu, out_unsigned=ou, in_zp=0, zp_dtype=np.int8))


def test_rescale_runtime_multiplier_is_unsupported_in_030() -> None:
    """1.x takes RESCALE's multiplier (and zero points) as tensors, which the reference model accepts at run time
    (the generator's ``_dyn`` cases); 0.30 takes them as attributes: unsupported, not invalid."""
    g = G()
    g.tensor("x", [4], DType.INT8)
    g.tensor("m", [1], DType.INT32)  # a graph input: no data
    g.tensor("s", [1], DType.INT8, np.array([31], np.int8))
    g.tensor("izp", [1], DType.INT8, np.array([0], np.int8))
    g.tensor("ozp", [1], DType.INT8, np.array([0], np.int8))
    g.tensor("y", [4], DType.INT8)
    a = g.attr([("bool", 0, True), ("u32", 1, int(RoundingMode.SINGLE_ROUND))])
    g.op(OpCode.RESCALE, ["x", "m", "s", "izp", "ozp"], ["y"], a)
    with pytest.raises(UnsupportedIn030, match="'m' is a run-time tensor where 0.30 takes a constant attribute"):
        import_tosa1_bytes(g.finish(["x", "m"], ["y"]))


def test_mul_shift_input_becomes_attribute() -> None:
    g = G()
    g.tensor("a", [2], DType.INT32)
    g.tensor("b", [2], DType.INT32)
    g.tensor("sh", [1], DType.INT8, np.array([7], np.int8))
    g.tensor("c", [2], DType.INT32)
    g.op(OpCode.CONST, [], ["sh"])
    g.op(OpCode.MUL, ["a", "b", "sh"], ["c"])
    imp = import_tosa1_bytes(g.finish(["a", "b"], ["c"]))
    op = only_op(imp, "tosa.mul")
    assert props(op) == {"shift": 7}
    assert len(op.operands) == 2
    verify_module(imp.module)


def conv_graph(bias: np.ndarray, out_pad_attr: bool = False) -> bytes:
    g = G()
    g.tensor("x", [1, 4, 4, 2], DType.INT8)
    g.tensor("w", [3, 1, 1, 2], DType.INT8, np.arange(6, dtype=np.int8).reshape(3, 1, 1, 2))
    g.tensor("bias", [bias.size], DType.INT32, bias.astype(np.int32))
    g.tensor("izp", [1], DType.INT8, np.array([-7], np.int8))
    g.tensor("wzp", [1], DType.INT8, np.array([2], np.int8))
    g.tensor("y", [1, 4, 4, 3], DType.INT32)
    for c in ("w", "bias", "izp", "wzp"):
        g.op(OpCode.CONST, [], [c])
    a = g.attr([("i32s", 0, [0, 0, 0, 0]), ("i32s", 1, [1, 1]), ("i32s", 2, [1, 1]), ("u32", 4, int(DType.INT32))])
    g.op(OpCode.CONV2D, ["x", "w", "bias", "izp", "wzp"], ["y"], a)
    return g.finish(["x"], ["y"])


def test_conv2d_zero_points_and_broadcast_bias() -> None:
    imp = import_tosa1_bytes(conv_graph(np.array([11])))
    op = only_op(imp, "tosa.conv2d")
    p = props(op)
    assert p["input_zp"] == -7 and p["weight_zp"] == 2
    assert p["pad"] == (0, 0, 0, 0) and p["stride"] == (1, 1) and p["dilation"] == (1, 1)
    from nnkiln.ir.elements import to_numpy

    bias_op = op.operands[2].owner
    assert bias_op.name == "tosa.const"
    assert to_numpy(bias_op.properties["values"]).tolist() == [11, 11, 11]  # [1] broadcast to OC = 3


def test_pad_const_shape_and_pad_const() -> None:
    g = G()
    g.tensor("x", [2, 3], DType.INT8)
    g.shape("padding", [1, 0, 2, 3])
    g.tensor("pc", [1], DType.INT8, np.array([-9], np.int8))
    g.tensor("y", [3, 8], DType.INT8)
    g.op(OpCode.CONST_SHAPE, [], ["padding"])
    g.op(OpCode.CONST, [], ["pc"])
    g.op(OpCode.PAD, ["x", "padding", "pc"], ["y"])
    imp = import_tosa1_bytes(g.finish(["x"], ["y"]))
    assert props(only_op(imp, "tosa.pad")) == {"padding": (1, 0, 2, 3), "pad_const": -9}


def test_transpose_conv_out_pad_sign() -> None:
    def graph(out_pad: list[int], oh: int) -> bytes:
        g = G()
        g.tensor("x", [1, 3, 3, 1], DType.INT8)
        g.tensor("w", [1, 3, 3, 1], DType.INT8, np.ones((1, 3, 3, 1), np.int8))
        g.tensor("bias", [1], DType.INT32, np.zeros(1, np.int32))
        g.tensor("zp", [1], DType.INT8, np.zeros(1, np.int8))
        g.tensor("y", [1, oh, oh, 1], DType.INT32)
        a = g.attr([("i32s", 0, out_pad), ("i32s", 1, [1, 1]), ("u32", 3, int(DType.INT32))])
        g.op(OpCode.TRANSPOSE_CONV2D, ["x", "w", "bias", "zp", "zp"], ["y"], a)
        return g.finish(["x"], ["y"])

    # 1.x: OH = (IH-1)*s + pad_top + pad_bottom + KH = 2 - 1 - 1 + 3 = 3; 0.30 crops by +1 on each side
    op = only_op(import_tosa1_bytes(graph([-1, -1, -1, -1], 3)), "tosa.transpose_conv2d")
    assert props(op)["out_pad"] == (1, 1, 1, 1)
    assert props(op)["out_shape"] == (1, 3, 3, 1)
    with pytest.raises(UnsupportedIn030, match="out_pad"):
        import_tosa1_bytes(graph([1, 0, 0, 0], 6))


def test_clamp_bounds_decoded_by_input_type() -> None:
    g = G()
    g.tensor("x", [4], DType.INT16)
    g.tensor("y", [4], DType.INT16)
    a = g.attr([("bytes", 0, np.array([-300], "<i2").tobytes()), ("bytes", 1, np.array([1000], "<i2").tobytes())])
    g.op(OpCode.CLAMP, ["x"], ["y"], a)
    imp = import_tosa1_bytes(g.finish(["x"], ["y"]))
    assert props(only_op(imp, "tosa.clamp")) == {"min_val": -300, "max_val": 1000}


def test_unsupported_and_invalid_graphs() -> None:
    g = G()
    g.tensor("x", [4], DType.FP32)
    g.tensor("y", [4], DType.FP32)
    g.op(OpCode.ERF, ["x"], ["y"])
    with pytest.raises(UnsupportedIn030, match="ERF"):
        import_tosa1_bytes(g.finish(["x"], ["y"]))

    g = G()
    g.tensor("a", [4], DType.INT32)
    g.tensor("y", [4], DType.INT32)
    g.op(OpCode.ADD, ["a"], ["y"])
    with pytest.raises(InvalidTosa1Graph, match="takes 2 inputs") as err:
        import_tosa1_bytes(g.finish(["a"], ["y"]))
    assert err.value.rule == "operand count"

    g = G()
    g.tensor("a", [4], DType.INT32)
    g.tensor("y", [4], DType.INT32)
    g.op(OpCode.ADD, ["a", "nowhere"], ["y"])
    with pytest.raises(InvalidTosa1Graph, match="nowhere"):
        import_tosa1_bytes(g.finish(["a"], ["y"]))

    with pytest.raises(FrontendError, match="not a TOSA flatbuffer"):
        import_tosa1_bytes(b"\x00" * 32)
    assert issubclass(UnsupportedIn030, FrontendError) and issubclass(NotImported, FrontendError)


def _corpus_case(name: str) -> str | None:
    for kind in ("positive", "negative"):
        root = os.path.join(CORPUS, kind)
        if not os.path.isdir(root):
            continue
        for op in os.listdir(root):
            p = os.path.join(root, op, name)
            if os.path.isdir(p):
                return p
    return None


@pytest.mark.skipif(not os.path.isdir(CORPUS), reason="conformance corpus not generated")
def test_generated_graphs_import() -> None:
    """Some generated 1.x graphs import with the expected op, names and types."""
    seen = 0
    for op_dir in sorted(os.listdir(os.path.join(CORPUS, "positive"))):
        if op_dir not in ("add", "rescale", "conv2d_1x1", "mul", "pad", "clamp"):
            continue
        case = sorted(os.listdir(os.path.join(CORPUS, "positive", op_dir)))[0]
        path = os.path.join(CORPUS, "positive", op_dir, case)
        try:
            imp = import_tosa1_file(path)
        except UnsupportedIn030:
            continue
        func = imp.module.body.block.first_op
        names = [o.name for o in func.body.block.ops]
        assert "tosa." + op_dir.split("_1x1")[0] in names
        assert imp.input_names and all(n.startswith("input-") for n in imp.input_names)
        assert imp.output_names == ["result-0"]
        seen += 1
    assert seen >= 3
