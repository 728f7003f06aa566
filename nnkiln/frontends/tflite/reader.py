"""Read a ``.tflite`` flatbuffer into plain Python records (``TfliteModel``).

Why the ``tflite`` package: it is the pure-Python code that ``flatc`` generates from TFLite's own
``schema.fbs`` (pinned to 2.18), run on the ``flatbuffers`` runtime we already use for TOSA 1.x files.
Writing the ~150 option tables by hand would duplicate that schema and drift from it; the generated
classes are read through one small reflective helper (``_options_dict``) so the importer sees options as
a ``dict`` keyed by the schema's field names (``FusedActivationFunction``, ``StrideH``, ...).

Validation: a file that does not carry the ``TFL3`` identifier, or whose tables point outside the file
(truncated or corrupt), raises ``FrontendError`` naming the file; tensor and buffer sizes are bounded by
``nnkiln.limits`` before any array is made.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from nnkiln.errors import FrontendError
from nnkiln.limits import LimitError, check_bytes, check_tensor

FILE_IDENTIFIER = b"TFL3"

# TensorType enum of schema.fbs → numpy dtype (None: no numpy/TOSA equivalent)
_DTYPES: dict[int, Any] = {
    0: np.float32, 1: np.float16, 2: np.int32, 3: np.uint8, 4: np.int64, 5: None, 6: np.bool_,
    7: np.int16, 8: np.complex64, 9: np.int8, 10: np.float64, 12: np.uint64, 15: np.uint32, 16: np.uint16,
}
_TYPE_NAMES = {0: "FLOAT32", 1: "FLOAT16", 2: "INT32", 3: "UINT8", 4: "INT64", 5: "STRING", 6: "BOOL",
               7: "INT16", 8: "COMPLEX64", 9: "INT8", 10: "FLOAT64", 11: "COMPLEX128", 12: "UINT64",
               13: "RESOURCE", 14: "VARIANT", 15: "UINT32", 16: "UINT16", 17: "INT4"}


@dataclass
class Quantization:
    """Affine quantization of a tensor: ``real = (q - zero_point) * scale``; arrays of one element (per tensor)
    or one per channel along ``quantized_dimension``."""

    scale: np.ndarray
    zero_point: np.ndarray
    quantized_dimension: int = 0

    @property
    def per_tensor(self) -> bool:
        return self.scale.size == 1


@dataclass
class Tensor:
    index: int
    name: str
    shape: tuple[int, ...]
    type_code: int
    data: np.ndarray | None = None
    quant: Quantization | None = None

    @property
    def dtype(self) -> Any:
        return _DTYPES.get(self.type_code)

    @property
    def type_name(self) -> str:
        return _TYPE_NAMES.get(self.type_code, str(self.type_code))


@dataclass
class Operator:
    index: int
    code: int
    """The builtin operator code (max of ``builtin_code`` and ``deprecated_builtin_code``)."""
    name: str
    version: int
    inputs: list[int]
    """Tensor indices; -1 for an omitted optional input."""
    outputs: list[int]
    options: dict[str, Any] = field(default_factory=dict)
    custom_code: str = ""


@dataclass
class Subgraph:
    name: str
    tensors: list[Tensor]
    inputs: list[int]
    outputs: list[int]
    operators: list[Operator]


@dataclass
class Signature:
    key: str
    subgraph: int
    inputs: dict[str, int]
    outputs: dict[str, int]


@dataclass
class TfliteModel:
    path: str
    version: int
    subgraphs: list[Subgraph]
    signatures: list[Signature]
    description: str = ""


def builtin_name(code: int) -> str:
    """``CONV_2D`` ... for a builtin operator code (its number if unknown to the schema)."""
    from tflite.BuiltinOperator import BuiltinOperator

    for k, v in vars(BuiltinOperator).items():
        if not k.startswith("_") and v == code:
            return k
    return f"BUILTIN_{code}"


def _option_class_name(union_enum: Any, code: int) -> str | None:
    for k, v in vars(union_enum).items():
        if not k.startswith("_") and v == code and k != "NONE":
            return k
    return None


def _options_dict(table: Any, class_name: str) -> dict[str, Any]:
    """Every scalar field of an options table (vectors as numpy arrays), keyed by schema field name."""
    import importlib

    module = importlib.import_module(f"tflite.{class_name}")
    cls = getattr(module, class_name)
    obj = cls()
    obj.Init(table.Bytes, table.Pos)
    out: dict[str, Any] = {}
    for name, fn in inspect.getmembers(cls, inspect.isfunction):
        if (name.startswith(("_", "GetRootAs", "Init")) or name.endswith(("Length", "IsNone", "AsNumpy"))
                or "BufferHasIdentifier" in name):
            continue
        if hasattr(cls, name + "AsNumpy"):
            out[name] = np.asarray(getattr(obj, name + "AsNumpy")())
            continue
        if len(inspect.signature(fn).parameters) != 1:
            continue
        out[name] = fn(obj)
    return out


def read_model(path: str) -> TfliteModel:
    """Read and validate ``path``; any structural error becomes a ``FrontendError`` naming the file."""
    try:
        with open(path, "rb") as f:
            buf = f.read()
    except OSError as err:
        raise FrontendError(f"cannot read: {err.strerror}", file=path) from None
    return read_bytes(buf, path)


def read_bytes(buf: bytes, path: str = "<bytes>") -> TfliteModel:
    if len(buf) < 8 or buf[4:8] != FILE_IDENTIFIER:
        raise FrontendError(f"not a TFLite model (no '{FILE_IDENTIFIER.decode()}' file identifier at bytes 4..8)",
                            file=path)
    try:
        return _read(buf, path)
    except (FrontendError, LimitError):
        raise
    except Exception as err:  # noqa: BLE001 - any decoding failure of a corrupt flatbuffer
        raise FrontendError(f"corrupt or truncated TFLite flatbuffer ({type(err).__name__}: {err})",
                            file=path) from None


def _buffer_data(model: Any, buf: bytes, index: int, path: str) -> bytes | None:
    if index <= 0 or index >= model.BuffersLength():
        return None
    b = model.Buffers(index)
    if b.DataLength() > 0:
        return b.DataAsNumpy().tobytes()
    offset, size = b.Offset(), b.Size()
    if offset > 1 and size > 0:  # data stored after the flatbuffer (models over 2 GB)
        if offset + size > len(buf):
            raise FrontendError(f"buffer {index} lies outside the file (offset {offset}, size {size})", file=path)
        return buf[offset:offset + size]
    return None


def _tensor(model: Any, buf: bytes, t: Any, index: int, path: str) -> Tensor:
    name = (t.Name() or b"").decode("utf-8", "replace")
    shape = tuple(int(d) for d in t.ShapeAsNumpy()) if t.ShapeLength() > 0 else ()
    sig = t.ShapeSignatureAsNumpy() if t.ShapeSignatureLength() > 0 else None
    if sig is not None and any(int(d) < 0 for d in sig):
        pass  # dynamic dimensions: ``shape`` holds the interpreter's default (1 for batch)
    type_code = int(t.Type())
    dtype = _DTYPES.get(type_code)
    what = f"{path}: tensor {index} '{name}'"
    itemsize = np.dtype(dtype).itemsize if dtype is not None else 1
    check_tensor(shape, itemsize, what)
    data = None
    raw = _buffer_data(model, buf, int(t.Buffer()), path)
    if raw is not None and dtype is not None:
        check_bytes(len(raw), what)
        count = int(np.prod(shape, dtype=np.int64)) if shape else 1
        if len(raw) != count * itemsize:
            raise FrontendError(f"tensor {index} '{name}': buffer of {len(raw)} bytes for shape {list(shape)} of "
                                f"{_TYPE_NAMES.get(type_code)}", file=path)
        data = np.frombuffer(raw, dtype=dtype).reshape(shape).copy()
    quant = None
    q = t.Quantization()
    if q is not None and q.ScaleLength() > 0:
        scale = np.asarray(q.ScaleAsNumpy(), dtype=np.float32)
        zp = np.asarray(q.ZeroPointAsNumpy(), dtype=np.int64) if q.ZeroPointLength() > 0 else np.zeros(
            scale.shape, np.int64)
        quant = Quantization(scale, zp, int(q.QuantizedDimension()))
        if not np.all(np.isfinite(scale)) or np.any(scale < 0):
            raise FrontendError(f"tensor {index} '{name}': quantization scale {scale.tolist()[:4]} is not a finite "
                                "non-negative number", file=path)
        zp_range = {9: (-128, 127), 3: (0, 255), 7: (-32768, 32767)}.get(type_code, (-(2**31), 2**31 - 1))
        if zp.size and (zp.min() < zp_range[0] or zp.max() > zp_range[1]):
            raise FrontendError(f"tensor {index} '{name}': zero point outside {list(zp_range)} for "
                                f"{_TYPE_NAMES.get(type_code)}", file=path)
        if zp.size not in (1, scale.size) or (scale.size > 1 and not 0 <= quant.quantized_dimension < len(shape)):
            raise FrontendError(f"tensor {index} '{name}': inconsistent quantization ({scale.size} scales, "
                                f"{zp.size} zero points, dimension {quant.quantized_dimension})", file=path)
    return Tensor(index, name, shape, type_code, data, quant)


def _read(buf: bytes, path: str) -> TfliteModel:
    from tflite.BuiltinOptions import BuiltinOptions
    from tflite.Model import Model

    model = Model.GetRootAsModel(buf, 0)
    codes = []
    for i in range(model.OperatorCodesLength()):
        oc = model.OperatorCodes(i)
        code = max(int(oc.BuiltinCode()), int(oc.DeprecatedBuiltinCode()))
        custom = (oc.CustomCode() or b"").decode("utf-8", "replace")
        codes.append((code, int(oc.Version()), custom))
    subgraphs = []
    for si in range(model.SubgraphsLength()):
        sg = model.Subgraphs(si)
        tensors = [_tensor(model, buf, sg.Tensors(ti), ti, path) for ti in range(sg.TensorsLength())]
        ops = []
        for oi in range(sg.OperatorsLength()):
            op = sg.Operators(oi)
            ci = int(op.OpcodeIndex())
            if not 0 <= ci < len(codes):
                raise FrontendError(f"operator {oi} of subgraph {si}: opcode index {ci} out of range", file=path)
            code, version, custom = codes[ci]
            options: dict[str, Any] = {}
            table = op.BuiltinOptions()
            if table is not None:
                cname = _option_class_name(BuiltinOptions, int(op.BuiltinOptionsType()))
                if cname is not None:
                    options = _options_dict(table, cname)
            ins = [int(x) for x in op.InputsAsNumpy()] if op.InputsLength() > 0 else []
            outs = [int(x) for x in op.OutputsAsNumpy()] if op.OutputsLength() > 0 else []
            for x in ins + outs:
                if not -1 <= x < len(tensors):
                    raise FrontendError(f"operator {oi} of subgraph {si}: tensor index {x} out of range",
                                        file=path)
            name = custom if code == 32 and custom else builtin_name(code)  # 32: CUSTOM
            ops.append(Operator(oi, code, name, version, ins, outs, options, custom))
        sg_in = [int(x) for x in sg.InputsAsNumpy()] if sg.InputsLength() > 0 else []
        sg_out = [int(x) for x in sg.OutputsAsNumpy()] if sg.OutputsLength() > 0 else []
        for x in sg_in + sg_out:
            if not 0 <= x < len(tensors):
                raise FrontendError(f"subgraph {si}: input/output tensor index {x} out of range", file=path)
        subgraphs.append(Subgraph((sg.Name() or b"").decode("utf-8", "replace"), tensors, sg_in, sg_out, ops))
    signatures = []
    for i in range(model.SignatureDefsLength()):
        sd = model.SignatureDefs(i)
        ins_map = {(sd.Inputs(j).Name() or b"").decode(): int(sd.Inputs(j).TensorIndex())
                   for j in range(sd.InputsLength())}
        outs_map = {(sd.Outputs(j).Name() or b"").decode(): int(sd.Outputs(j).TensorIndex())
                    for j in range(sd.OutputsLength())}
        signatures.append(Signature((sd.SignatureKey() or b"").decode(), int(sd.SubgraphIndex()), ins_map, outs_map))
    if not subgraphs:
        raise FrontendError("the model has no subgraph", file=path)
    return TfliteModel(path, int(model.Version()), subgraphs, signatures,
                       (model.Description() or b"").decode("utf-8", "replace"))
