"""Build minimal one-operator ``.tflite`` models with the ``flatbuffers`` Builder and the ``tflite`` package's
generated schema functions (for lowering tests of ops the generated test models do not contain)."""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from typing import Any

import flatbuffers
import numpy as np

_TYPES = {np.dtype(np.float32): 0, np.dtype(np.int32): 2, np.dtype(np.uint8): 3, np.dtype(np.int64): 4,
          np.dtype(np.bool_): 6, np.dtype(np.int16): 7, np.dtype(np.int8): 9}


def _ivec(b: flatbuffers.Builder, start: Any, values: Sequence[int]) -> int:
    start(b, len(values))
    for v in reversed(list(values)):
        b.PrependInt32(int(v))
    return b.EndVector()


def _finish(b: flatbuffers.Builder, codes: Sequence[str], subgraphs: Sequence[int], buffers: Sequence[int]) -> bytes:
    """The model table around already built subgraphs and buffers: one operator code per builtin name in ``codes``
    (operators index them in that order), version 3, the ``TFL3`` identifier; the file's bytes."""
    Mod, OC = (importlib.import_module(f"tflite.{m}") for m in ("Model", "OperatorCode"))
    from tflite.BuiltinOperator import BuiltinOperator

    oc_offsets = []
    for opname in codes:
        code = getattr(BuiltinOperator, opname)
        OC.Start(b)
        OC.AddDeprecatedBuiltinCode(b, min(code, 127))
        OC.AddBuiltinCode(b, code)
        OC.AddVersion(b, 1)
        oc_offsets.append(OC.End(b))
    vectors = []
    for start, offsets in ((Mod.StartOperatorCodesVector, oc_offsets), (Mod.StartSubgraphsVector, subgraphs),
                           (Mod.StartBuffersVector, buffers)):
        start(b, len(offsets))
        for o in reversed(offsets):
            b.PrependUOffsetTRelative(o)
        vectors.append(b.EndVector())
    Mod.Start(b)
    Mod.AddVersion(b, 3)
    Mod.AddOperatorCodes(b, vectors[0])
    Mod.AddSubgraphs(b, vectors[1])
    Mod.AddBuffers(b, vectors[2])
    b.Finish(Mod.End(b), file_identifier=b"TFL3")
    return bytes(b.Output())


def build_model(op: str, inputs: Sequence[tuple[str, np.ndarray | tuple[Sequence[int], Any]]],
                outputs: Sequence[tuple[str, Sequence[int], Any]], options: tuple[str, dict[str, Any]] | None = None,
                quant: dict[str, tuple[Sequence[float], Sequence[int], int]] | None = None) -> bytes:
    """One subgraph running builtin ``op`` (its name, e.g. ``"PACK"``). ``inputs``: (name, constant array) or
    (name, (shape, dtype)) for a graph input; ``outputs``: (name, shape, dtype). ``options``: (options table
    name, e.g. ``"PackOptions"``, {field: scalar}). ``quant``: tensor name → (scales, zero points, quantized
    dimension)."""
    # the package's __init__ rebinds ``tflite.Buffer`` etc. to the classes: fetch the modules themselves
    Buf, Mod, Op, OC, SG, Ten, QP = (importlib.import_module(f"tflite.{m}") for m in
                                     ("Buffer", "Model", "Operator", "OperatorCode", "SubGraph", "Tensor",
                                      "QuantizationParameters"))
    from tflite.BuiltinOptions import BuiltinOptions

    b = flatbuffers.Builder(1024)
    specs: list[tuple[str, Sequence[int], Any, np.ndarray | None]] = []
    for name, v in inputs:
        if isinstance(v, np.ndarray):
            specs.append((name, v.shape, v.dtype, v))
        else:
            specs.append((name, v[0], np.dtype(v[1]), None))
    specs += [(n, s, np.dtype(d), None) for n, s, d in outputs]
    # buffers: 0 is the empty sentinel
    buf_offsets = []
    Buf.Start(b)
    buf_offsets.append(Buf.End(b))
    buffer_index = []
    for _, _, _, data in specs:
        if data is None:
            buffer_index.append(0)
            continue
        raw = np.ascontiguousarray(data).tobytes()
        vec = b.CreateByteVector(raw)
        Buf.Start(b)
        Buf.AddData(b, vec)
        buffer_index.append(len(buf_offsets))
        buf_offsets.append(Buf.End(b))
    tensors = []
    for (name, shape, dtype, _), bi in zip(specs, buffer_index):
        nm = b.CreateString(name)
        sh = _ivec(b, Ten.StartShapeVector, shape)
        qoff = None
        if quant and name in quant:
            scales, zps, dim = quant[name]
            QP.StartScaleVector(b, len(scales))
            for v in reversed(list(scales)):
                b.PrependFloat32(float(v))
            sv = b.EndVector()
            QP.StartZeroPointVector(b, len(zps))
            for v in reversed(list(zps)):
                b.PrependInt64(int(v))
            zv = b.EndVector()
            QP.Start(b)
            QP.AddScale(b, sv)
            QP.AddZeroPoint(b, zv)
            QP.AddQuantizedDimension(b, dim)
            qoff = QP.End(b)
        Ten.Start(b)
        if qoff is not None:
            Ten.AddQuantization(b, qoff)
        Ten.AddShape(b, sh)
        Ten.AddType(b, _TYPES[np.dtype(dtype)])
        Ten.AddBuffer(b, bi)
        Ten.AddName(b, nm)
        tensors.append(Ten.End(b))
    opt_off, opt_type = None, 0
    if options is not None:
        cls, fields = options
        mod = importlib.import_module(f"tflite.{cls}")
        mod.Start(b)  # type: ignore[attr-defined]
        for k, v in fields.items():
            getattr(mod, f"Add{k}")(b, v)
        opt_off = mod.End(b)  # type: ignore[attr-defined]
        opt_type = getattr(BuiltinOptions, cls)
    n_in = len(inputs)
    graph_inputs = [i for i, (_, _, _, d) in enumerate(specs[:n_in]) if d is None]
    op_in = _ivec(b, Op.StartInputsVector, range(n_in))
    op_out = _ivec(b, Op.StartOutputsVector, range(n_in, len(specs)))
    Op.Start(b)
    Op.AddOpcodeIndex(b, 0)
    Op.AddInputs(b, op_in)
    Op.AddOutputs(b, op_out)
    if opt_off is not None:
        Op.AddBuiltinOptionsType(b, opt_type)
        Op.AddBuiltinOptions(b, opt_off)
    op_off = Op.End(b)
    SG.StartTensorsVector(b, len(tensors))
    for t in reversed(tensors):
        b.PrependUOffsetTRelative(t)
    tvec = b.EndVector()
    SG.StartOperatorsVector(b, 1)
    b.PrependUOffsetTRelative(op_off)
    ovec = b.EndVector()
    gin = _ivec(b, SG.StartInputsVector, graph_inputs)
    gout = _ivec(b, SG.StartOutputsVector, range(n_in, len(specs)))
    SG.Start(b)
    SG.AddTensors(b, tvec)
    SG.AddInputs(b, gin)
    SG.AddOutputs(b, gout)
    SG.AddOperators(b, ovec)
    sg = SG.End(b)
    return _finish(b, [op], [sg], buf_offsets)


# a tensor: (name, shape, dtype, constant data or None); an operator: (builtin name, input tensor indices,
# output tensor indices, options as in ``build_model`` or None)
TensorSpec = tuple[str, Sequence[int], Any, "np.ndarray | None"]
OpSpec = tuple[str, Sequence[int], Sequence[int], "tuple[str, dict[str, Any]] | None"]


def build_graphs(subgraphs: Sequence[tuple[Sequence[TensorSpec], Sequence[OpSpec], Sequence[int], Sequence[int]]]
                 ) -> bytes:
    """A model of several subgraphs (subgraph 0 the main one), each (tensors, operators, input tensor indices,
    output tensor indices); for control-flow ops (WHILE, IF) that reference subgraphs by index."""
    Buf, Mod, Op, OC, SG, Ten = (importlib.import_module(f"tflite.{m}") for m in
                                 ("Buffer", "Model", "Operator", "OperatorCode", "SubGraph", "Tensor"))
    from tflite.BuiltinOptions import BuiltinOptions

    b = flatbuffers.Builder(1024)
    Buf.Start(b)
    buf_offsets = [Buf.End(b)]
    codes: list[str] = []
    sg_offsets = []
    for tensors_spec, ops_spec, g_in, g_out in subgraphs:
        tensors = []
        for name, shape, dtype, data in tensors_spec:
            bi = 0
            if data is not None:
                vec = b.CreateByteVector(np.ascontiguousarray(data).tobytes())
                Buf.Start(b)
                Buf.AddData(b, vec)
                bi = len(buf_offsets)
                buf_offsets.append(Buf.End(b))
            nm = b.CreateString(name)
            sh = _ivec(b, Ten.StartShapeVector, shape)
            Ten.Start(b)
            Ten.AddShape(b, sh)
            Ten.AddType(b, _TYPES[np.dtype(dtype)])
            Ten.AddBuffer(b, bi)
            Ten.AddName(b, nm)
            tensors.append(Ten.End(b))
        ops = []
        for opname, ins, outs, options in ops_spec:
            if opname not in codes:
                codes.append(opname)
            opt_off, opt_type = None, 0
            if options is not None:
                cls, fields = options
                mod = importlib.import_module(f"tflite.{cls}")
                mod.Start(b)  # type: ignore[attr-defined]
                for k, v in fields.items():
                    getattr(mod, f"Add{k}")(b, v)
                opt_off = mod.End(b)  # type: ignore[attr-defined]
                opt_type = getattr(BuiltinOptions, cls)
            op_in = _ivec(b, Op.StartInputsVector, ins)
            op_out = _ivec(b, Op.StartOutputsVector, outs)
            Op.Start(b)
            Op.AddOpcodeIndex(b, codes.index(opname))
            Op.AddInputs(b, op_in)
            Op.AddOutputs(b, op_out)
            if opt_off is not None:
                Op.AddBuiltinOptionsType(b, opt_type)
                Op.AddBuiltinOptions(b, opt_off)
            ops.append(Op.End(b))
        SG.StartTensorsVector(b, len(tensors))
        for t in reversed(tensors):
            b.PrependUOffsetTRelative(t)
        tvec = b.EndVector()
        SG.StartOperatorsVector(b, len(ops))
        for o in reversed(ops):
            b.PrependUOffsetTRelative(o)
        ovec = b.EndVector()
        gin = _ivec(b, SG.StartInputsVector, g_in)
        gout = _ivec(b, SG.StartOutputsVector, g_out)
        SG.Start(b)
        SG.AddTensors(b, tvec)
        SG.AddInputs(b, gin)
        SG.AddOutputs(b, gout)
        SG.AddOperators(b, ovec)
        sg_offsets.append(SG.End(b))
    return _finish(b, codes, sg_offsets, buf_offsets)
