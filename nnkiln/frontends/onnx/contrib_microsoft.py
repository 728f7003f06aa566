"""onnxruntime's quantized contrib operators (domain ``com.microsoft``) rewritten into standard QDQ form.

Why: ``onnxruntime.quantization.quantize_static(..., quant_format=QuantFormat.QOperator)`` writes Add, Mul,
Gemm, pooling, Concat and some activations as ``com.microsoft`` operators (QLinearAdd, QGemm, ...). Each
of them is *defined* by onnxruntime as "dequantize the inputs, apply the float operator, quantize the
result" (ContribOperators.md; the CPU kernels compute exactly that, in float, with round-half-to-even and
saturation). So each node is replaced, before import, by that very sequence of standard nodes:
``DequantizeLinear`` on every quantized input, the float operator, ``QuantizeLinear`` on the output. The
QDQ fusion of the importer (``lowerings/quant_qdq_fusion.py``) then turns the patterns it knows (Add,
Gemm, average pooling, Concat) into integer TOSA; the rest (Mul, Sigmoid, LeakyRelu, Softmax) run as
dequantize → float → quantize, which is the operator's definition. Results agree with onnxruntime within
one quantization step (tested against onnxruntime in ``tests/frontends/onnx/test_onnx_contrib_ms.py``).

Supported (inputs as onnxruntime documents them; zero points optional):
  QLinearAdd / QLinearMul (A, A_scale, A_zp, B, B_scale, B_zp, C_scale, C_zp)
  QLinearAveragePool / QLinearGlobalAveragePool (X, x_scale, x_zp, y_scale, y_zp), ``channels_last``
  QLinearConcat (Y_scale, Y_zp, then (X, X_scale, X_zp) per input), ``axis``
  QLinearSigmoid / QLinearLeakyRelu (``alpha``) / QLinearSoftmax (``axis``, ``opset``)
  QGemm (A, a_scale, a_zp, B, b_scale, b_zp, C int32 bias, y_scale, y_zp), ``alpha``, ``transA``, ``transB``;
    without ``y_scale`` the output is float; a per-column ``b_scale`` needs default-domain opset >= 13.
Other ``com.microsoft`` operators are left alone and reported as unsupported by the importer.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from nnkiln.ir.errors import FrontendError

DOMAIN = "com.microsoft"


class _Rewriter:
    def __init__(self, graph: Any, path: str, opset: int):
        self.graph = graph
        self.path = path
        self.opset = opset
        self.nodes: list[Any] = []
        self.counter = 0
        self.taken = {o for n in graph.node for o in n.output} | {i.name for i in graph.input} | {
            t.name for t in graph.initializer}

    def fresh(self, node: Any, what: str) -> str:
        while True:
            self.counter += 1
            name = f"{node.name or node.op_type}/{what}_{self.counter}"
            if name not in self.taken:
                self.taken.add(name)
                return name

    def add(self, op_type: str, inputs: list[str], outputs: list[str], node: Any, **attrs: Any) -> None:
        import onnx.helper as oh

        self.nodes.append(oh.make_node(op_type, inputs, outputs, name=f"{node.name or node.op_type}/{op_type}", **attrs))

    def dq(self, node: Any, x: str, scale: str, zp: str, axis: int | None = None) -> str:
        out = self.fresh(node, "dq")
        attrs = {} if axis is None else {"axis": axis}
        self.add("DequantizeLinear", [x, scale] + ([zp] if zp else []), [out], node, **attrs)
        return out

    def q(self, node: Any, x: str, scale: str, zp: str, out: str) -> None:
        self.add("QuantizeLinear", [x, scale] + ([zp] if zp else []), [out], node)

    def error(self, node: Any, message: str) -> FrontendError:
        return FrontendError(f"{DOMAIN}.{node.op_type}: {message}", file=self.path, node=node.name or node.op_type)


def _arg(node: Any, i: int) -> str:
    return node.input[i] if i < len(node.input) else ""


def _attrs(node: Any, drop: tuple[str, ...] = ()) -> dict[str, Any]:
    import onnx.helper as oh

    return {a.name: oh.get_attribute_value(a) for a in node.attribute if a.name not in drop}


def _binary(float_op: str) -> Callable[[_Rewriter, Any], None]:
    def rewrite(rw: _Rewriter, node: Any) -> None:
        a = rw.dq(node, node.input[0], node.input[1], _arg(node, 2))
        b = rw.dq(node, node.input[3], node.input[4], _arg(node, 5))
        y = rw.fresh(node, float_op.lower())
        rw.add(float_op, [a, b], [y], node)
        rw.q(node, y, node.input[6], _arg(node, 7), node.output[0])

    return rewrite


def _unary(float_op: str, keep: tuple[str, ...] = ()) -> Callable[[_Rewriter, Any], None]:
    def rewrite(rw: _Rewriter, node: Any) -> None:
        attrs = {k: v for k, v in _attrs(node).items() if k in keep}
        unknown = set(_attrs(node)) - set(keep) - {"opset"}
        if unknown:
            raise rw.error(node, f"attribute(s) {sorted(unknown)} are not supported")
        x = rw.dq(node, node.input[0], node.input[1], _arg(node, 2))
        if float_op == "Softmax":
            _check_softmax_semantics(rw, node)
        y = rw.fresh(node, float_op.lower())
        rw.add(float_op, [x], [y], node, **attrs)
        rw.q(node, y, node.input[3], _arg(node, 4), node.output[0])

    return rewrite


def _check_softmax_semantics(rw: _Rewriter, node: Any) -> None:
    """QLinearSoftmax's ``opset`` attribute selects Softmax-1 (coerced 2-D) or Softmax-13 (one axis)
    semantics; the standard Softmax node gets the model's opset, so the two must agree."""
    op_semantics = int(_attrs(node).get("opset", rw.opset))
    if (op_semantics >= 13) != (rw.opset >= 13):
        raise rw.error(node, f"softmax semantics of opset {op_semantics} in a model of opset {rw.opset} "
                             "are not supported")


def _pool(float_op: str) -> Callable[[_Rewriter, Any], None]:
    def rewrite(rw: _Rewriter, node: Any) -> None:
        attrs = _attrs(node, drop=("channels_last",))
        channels_last = int(_attrs(node).get("channels_last", 0))
        x = rw.dq(node, node.input[0], node.input[1], _arg(node, 2))
        if channels_last:
            t = rw.fresh(node, "nchw")
            rank = _rank(rw, node.input[0])
            if rank is None:
                raise rw.error(node, "channels_last needs the input's rank (no shape information)")
            rw.add("Transpose", [x], [t], node, perm=[0, rank - 1] + list(range(1, rank - 1)))
            x = t
        y = rw.fresh(node, float_op.lower())
        rw.add(float_op, [x], [y], node, **attrs)
        if channels_last:
            t = rw.fresh(node, "nhwc")
            rank = _rank(rw, node.input[0]) or 4
            rw.add("Transpose", [y], [t], node, perm=[0] + list(range(2, rank)) + [1])
            y = t
        rw.q(node, y, node.input[3], _arg(node, 4), node.output[0])

    return rewrite


def _rank(rw: _Rewriter, name: str) -> int | None:
    for vi in list(rw.graph.input) + list(rw.graph.value_info):
        if vi.name == name and vi.type.tensor_type.HasField("shape"):
            return len(vi.type.tensor_type.shape.dim)
    return None


def _concat(rw: _Rewriter, node: Any) -> None:
    rest = list(node.input[2:])
    if not rest or len(rest) % 3:
        raise rw.error(node, f"expects (X, X_scale, X_zero_point) triples after Y_scale, Y_zero_point; "
                             f"got {len(rest)} more inputs")
    parts = [rw.dq(node, rest[i], rest[i + 1], rest[i + 2]) for i in range(0, len(rest), 3)]
    y = rw.fresh(node, "concat")
    rw.add("Concat", parts, [y], node, axis=int(_attrs(node).get("axis", 0)))
    rw.q(node, y, node.input[0], _arg(node, 1), node.output[0])


def _qgemm(rw: _Rewriter, node: Any) -> None:
    import numpy as np

    attrs = _attrs(node)
    trans_b = int(attrs.get("transB", 0))
    inits = {t.name: t for t in rw.graph.initializer}
    b_scale = inits.get(node.input[4])
    per_column = b_scale is not None and int(np.prod(b_scale.dims)) > 1
    if per_column and rw.opset < 13:
        raise rw.error(node, f"a per-column b_scale needs default-domain opset >= 13 (the model has {rw.opset})")
    axis = (0 if trans_b else 1) if per_column else None
    a = rw.dq(node, node.input[0], node.input[1], _arg(node, 2))
    b = rw.dq(node, node.input[3], node.input[4], _arg(node, 5), axis)
    inputs = [a, b]
    if _arg(node, 6):
        # the bias is int32 in units of a_scale·b_scale (zero point 0)
        c_scale = rw.fresh(node, "c_scale")
        rw.add("Mul", [node.input[1], node.input[4]], [c_scale], node)
        inputs.append(rw.dq(node, node.input[6], c_scale, "", 0 if per_column else None))
    gemm_attrs = {k: v for k, v in attrs.items() if k in ("alpha", "transA", "transB")}
    if _arg(node, 7):
        y = rw.fresh(node, "gemm")
        rw.add("Gemm", inputs, [y], node, **gemm_attrs)
        rw.q(node, y, node.input[7], _arg(node, 8), node.output[0])
    else:
        rw.add("Gemm", inputs, [node.output[0]], node, **gemm_attrs)


REWRITES: dict[str, Callable[[_Rewriter, Any], None]] = {
    "QLinearAdd": _binary("Add"),
    "QLinearMul": _binary("Mul"),
    "QLinearAveragePool": _pool("AveragePool"),
    "QLinearGlobalAveragePool": _pool("GlobalAveragePool"),
    "QLinearConcat": _concat,
    "QLinearSigmoid": _unary("Sigmoid"),
    "QLinearLeakyRelu": _unary("LeakyRelu", keep=("alpha",)),
    "QLinearSoftmax": _unary("Softmax", keep=("axis",)),
    "QGemm": _qgemm,
}


def expand_microsoft_quant_ops(model: Any, path: str, opset: int) -> Any:
    """``model`` with every supported ``com.microsoft`` quantized node of its main graph replaced by its
    standard DequantizeLinear → operator → QuantizeLinear definition (see the module docstring); the
    same object when there is nothing to rewrite, else a rewritten copy (the caller's proto is kept)."""
    if not any(n.domain == DOMAIN and n.op_type in REWRITES for n in model.graph.node):
        return model
    if opset < 10:
        raise FrontendError(f"{DOMAIN} quantized operators need default-domain opset >= 10 (the model has {opset})",
                            file=path)
    copy = type(model)()
    copy.CopyFrom(model)
    graph = copy.graph
    rw = _Rewriter(graph, path, opset)
    for node in graph.node:
        if node.domain == DOMAIN and node.op_type in REWRITES:
            REWRITES[node.op_type](rw, node)
        else:
            rw.nodes.append(node)
    del graph.node[:]
    graph.node.extend(rw.nodes)
    return copy
