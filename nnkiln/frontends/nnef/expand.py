"""Compound-fragment expansion: a checked :class:`Document` -> a flat graph of primitives (spec §2.4.1, §6 stage 3).

Compile-time expressions (arithmetic, comprehensions, if-else, built-ins) are evaluated with the actual
argument values; every invocation of a primitive becomes one :class:`FlatOp` whose result shapes are
propagated and checked by :mod:`nnkiln.frontends.nnef.shapes`. Compound fragments named in ``keep`` are
still expanded (to check and shape them) but are emitted as one operation.

Decisions: integer ``/`` is floor division; ``integer(x)`` is ``floor(x)``; array and string indices and
range bounds must lie in ``0..length`` (``a[s:e]`` with ``s >= e`` is empty); ``array * n`` needs ``n >= 0``;
fragment recursion deeper than 256 calls and arrays longer than 2**20 items are errors.
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass, field

from nnkiln.frontends.nnef.ast import (
    ArrayExpr,
    ArrayType,
    BinaryExpr,
    Builtin,
    Comprehension,
    Document,
    Expr,
    Fragment,
    Identifier,
    IfElseExpr,
    Invocation,
    Literal,
    Node,
    Prim,
    PrimType,
    Subscript,
    TensorType,
    TupleExpr,
    TupleType,
    Type,
    UnaryExpr,
    has_tensor,
)
from nnkiln.frontends.nnef.checker import LENIENT_ARGUMENT_ALIASES, LENIENT_FRAGMENT_ALIASES
from nnkiln.frontends.nnef.lexer import INT_MAX, INT_MIN, brief
from nnkiln.frontends.nnef.shapes import Shape, ShapeProblem, compound_args, infer
from nnkiln.ir.errors import NnefError

MAX_DEPTH = 256
# primitives whose ``size`` covers every dimension of the input (§4.3.2, §4.3.3)
_WHOLE_RANK_WINDOWS = frozenset({"box", "debox", "argmax_pool", "sample", "desample"})
MAX_ITEMS = 1 << 20
MAX_WORK = 1 << 21
"""Budget of a document's compile-time evaluation: expression evaluations plus the items of the arrays built,
compared and searched (a few seconds of work); beyond it the document is refused rather than left to run for
hours (a fragment that calls itself twice per level, nested comprehensions over 2^20 items)."""
MAX_OPERATIONS = 1 << 16
"""Most primitive operations an expanded graph may have: 65536, about 30 per layer of a 2000-layer network (larger
graphs took far longer to import: bench/RESULTS.md; the cap keeps an import to seconds)."""


class TensorRef:
    """A tensor of the flat graph; mutable ``name`` so graph identifiers can rename temporaries."""

    __slots__ = ("name", "dtype", "shape")

    def __init__(self, name: str, dtype: Prim, shape: Shape) -> None:
        self.name, self.dtype, self.shape = name, dtype, shape

    def __repr__(self) -> str:
        return f"TensorRef({self.name!r}, {self.dtype.value}, {list(self.shape)})"


@dataclass
class FlatOp:
    """One primitive (or kept compound) with concrete arguments: tensors are TensorRef or literals."""

    name: str
    dtype: Prim | None
    inputs: dict[str, object]
    attribs: dict[str, object]
    outputs: dict[str, object]
    line: int = 0  # line of the graph statement (in the document) that produced the op

    @property
    def results(self) -> list[TensorRef]:
        return _refs(self.outputs)


@dataclass
class FlatGraph:
    name: str
    inputs: list[TensorRef]
    outputs: list[TensorRef]
    operations: list[FlatOp] = field(default_factory=list)
    tensors: dict[str, TensorRef] = field(default_factory=dict)

    def shape(self, name: str) -> Shape:
        return self.tensors[name].shape


def _type_of(v: object) -> Prim | None:
    if isinstance(v, TensorRef):
        return v.dtype
    if isinstance(v, bool):
        return Prim.LOGICAL
    if isinstance(v, int):
        return Prim.INTEGER
    if isinstance(v, float):
        return Prim.SCALAR
    if isinstance(v, str):
        return Prim.STRING
    return None


def _deduce(t: Type, v: object, out: set[Prim]) -> None:
    if (isinstance(t, PrimType) and t.prim is Prim.GENERIC) or (isinstance(t, TensorType) and t.item is Prim.GENERIC):
        p = _type_of(v)
        if p is not None:
            out.add(p)
    elif isinstance(t, ArrayType) and isinstance(v, list):
        for i in v:
            _deduce(t.item, i, out)
    elif isinstance(t, TupleType) and isinstance(v, tuple):
        for ti, vi in zip(t.items, v):
            _deduce(ti, vi, out)


def _literal_string(v: object) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    return repr(v) if isinstance(v, float) else str(v)


class Expander:
    def __init__(self, doc: Document, keep: frozenset[str]) -> None:
        self.doc = doc
        self.keep = keep
        self.graph = FlatGraph(doc.graph.name, [], [])
        self.counter = 0
        self.depth = 0
        self.producer: dict[int, FlatOp] = {}
        self.labels: dict[str, tuple[str, Shape]] = {}
        self.line = 0
        # compound fragments being expanded, outermost first: (fragment, the invocation that entered it)
        self.frames: list[tuple[Fragment, Node]] = []
        self.aliases: set[int] = set()  # ids of the copies that only rename a tensor (``a = b`` in the graph)
        self.updated: dict[str, str] = {}  # lower-case label of each updated variable -> its label
        self.work = 0  # see MAX_WORK
        self.created: list[str] = []  # names given by new_tensor, in order (a kept compound drops its inner ones)

    def error(self, msg: str, node: object) -> NnefError:
        """An error at ``node``; a node inside the standard library's text (which is not in the document) is
        reported at the document's invocation that led there, naming the standard fragment and its line."""
        if self.frames and self.frames[-1][0].standard:
            k = len(self.frames) - 1
            while k > 0 and self.frames[k - 1][0].standard:
                k -= 1
            inner, outer = self.frames[-1][0].name, self.frames[k][0].name
            where = f"stdlib.nnef:{getattr(node, 'line', 0)}:{getattr(node, 'column', 0)}"
            msg += (f" (in the body of the standard fragment '{inner}', {where})" if inner == outer else
                    f" (in the body of the standard fragment '{inner}', {where}, expanded from '{outer}')")
            node = self.frames[k][1]
        return NnefError(msg, file=self.doc.file, line=getattr(node, "line", 0), column=getattr(node, "column", 0))

    def charge(self, amount: int, node: object) -> None:
        """Count ``amount`` units of compile-time work against ``MAX_WORK``."""
        self.work += amount
        if self.work > MAX_WORK:
            raise self.error(f"§6: evaluating the document takes more than {MAX_WORK} steps (compile-time "
                             "expressions, comprehensions and fragment expansions); refused", node)

    def checked_int(self, v: object, node: object) -> object:
        """``v``, unless it is an integer outside the signed 64-bit range (see ``lexer.INT_MAX``)."""
        if type(v) is int and not INT_MIN <= v <= INT_MAX:
            raise self.error("§3.3.3: a compile-time integer result overflows 64 bits (decision: compile-time "
                             "integers are signed 64-bit)", node)
        return v

    # -- graph ------------------------------------------------------------------------------------
    def run(self) -> FlatGraph:
        g = self.doc.graph
        env: dict[str, object] = {}
        for stmt in g.body:
            self.line = getattr(stmt, "line", 0)
            start_ops = len(self.graph.operations)
            value = self.eval(stmt.rhs, env, None)
            for ident, v in self.unpack(stmt.lhs, value):
                env[ident.name] = self.bind_graph_name(ident, v, start_ops)
        self.graph.inputs = [env[n] for n in g.inputs]  # type: ignore[misc]
        self.graph.outputs = [env[n] for n in g.outputs]  # type: ignore[misc]
        return self.graph

    def bind_graph_name(self, ident: Identifier, v: object, start_ops: int) -> TensorRef:
        fresh = {id(r) for op in self.graph.operations[start_ops:] for r in _refs(op.outputs)}
        if isinstance(v, TensorRef) and id(v) in fresh and v.name.startswith("$"):
            del self.graph.tensors[v.name]
            v.name = ident.name
            self.graph.tensors[v.name] = v
            return v
        if isinstance(v, TensorRef):
            ref = self.primitive("copy", None, {"x": v}, ident, name=ident.name)[0]
            self.aliases.add(id(self.graph.operations[-1]))
            return ref  # type: ignore[return-value]
        prim = _type_of(v) or Prim.SCALAR
        return self.primitive("constant", prim, {"shape": [], "value": [v]}, ident, name=ident.name)[0]  # type: ignore[return-value]

    def unpack(self, lhs: Expr, v: object) -> list[tuple[Identifier, object]]:
        if isinstance(lhs, Identifier):
            return [(lhs, v)]
        items = lhs.items  # type: ignore[union-attr]
        if not isinstance(v, (list, tuple)) or len(v) != len(items):
            n = len(v) if isinstance(v, (list, tuple)) else 1
            raise self.error(f"§3.3.2: cannot unpack {n} values into {len(items)} identifiers", lhs)
        out: list[tuple[Identifier, object]] = []
        for item, iv in zip(items, v):
            out.extend(self.unpack(item, iv))
        return out

    # -- invocation -------------------------------------------------------------------------------
    def fragment(self, name: str, node: Node) -> Fragment:
        f = self.doc.fragments.get(name)
        if f is None and self.doc.lenient:
            f = self.doc.fragments.get(LENIENT_FRAGMENT_ALIASES.get(name, name))
        if f is None:
            raise self.error(f"§3.3.2: '{name}' is not a declared operation", node)
        return f

    def invoke(self, e: Invocation, env: dict[str, object], binding: Prim | None) -> object:
        frag = self.fragment(e.name, e)
        args: dict[str, object] = {}
        for i, a in enumerate(e.args):
            pname = frag.params[i].name if a.name is None else a.name
            if self.doc.lenient and frag.param(pname) is None:
                pname = LENIENT_ARGUMENT_ALIASES.get((frag.name, pname), pname)
            args[pname] = self.eval(a.value, env, binding)
        for p in frag.params:
            if p.name not in args:
                args[p.name] = self.eval(p.default, {}, None)  # type: ignore[arg-type]
        generic = None
        if frag.generic:
            if e.generic is Prim.GENERIC:
                generic = binding
            elif e.generic is not None:
                generic = e.generic
            else:
                cands: set[Prim] = set()
                for p in frag.params:
                    _deduce(p.type, args[p.name], cands)
                if frag.generic_default is not None and (not self.doc.lenient or len(cands) != 1):
                    generic = frag.generic_default
                elif len(cands) == 1:
                    generic = next(iter(cands))
                else:
                    raise self.error(f"§3.3.2: the generic type of '{frag.name}' cannot be deduced uniquely", e)
        return self.call(frag, args, generic, e)

    def call(self, frag: Fragment, args: dict[str, object], generic: Prim | None, node: Node) -> object:
        if frag.body is None:
            res = self.primitive(frag.name, generic, args, node)
        else:
            res = self.compound(frag, args, generic, node)
        return res[0] if len(res) == 1 else tuple(res)

    def compound(self, frag: Fragment, args: dict[str, object], generic: Prim | None, node: Node) -> list[object]:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise self.error(f"§6: expansion of '{frag.name}' recurses more than {MAX_DEPTH} levels", node)
        if frag.standard:
            try:
                args = compound_args(frag.name, args, lambda v: v.shape if isinstance(v, TensorRef) else ())
            except ShapeProblem as err:
                raise self.error(f"{err} (in '{frag.name}')", node) from None
        start_ops = len(self.graph.operations)
        start_tensors = len(self.created)
        env = dict(args)
        assert frag.body is not None
        self.frames.append((frag, node))
        for stmt in frag.body:
            value = self.eval(stmt.rhs, env, generic)
            for ident, v in self.unpack(stmt.lhs, value):
                env[ident.name] = v
        self.frames.pop()
        self.depth -= 1
        results = [env[r.name] for r in frag.results]
        if frag.name in self.keep:
            keep_ids = {id(r) for r in _refs(results)}
            del self.graph.operations[start_ops:]
            inner = self.created[start_tensors:]
            del self.created[start_tensors:]
            for n in inner:
                ref = self.graph.tensors.get(n)
                if ref is not None and id(ref) not in keep_ids:
                    del self.graph.tensors[n]
                elif ref is not None:
                    self.created.append(n)
            tensor_params = {p.name for p in frag.params if has_tensor(p.type)}
            op = FlatOp(frag.name, generic, {k: v for k, v in args.items() if k in tensor_params},
                        {k: v for k, v in args.items() if k not in tensor_params},
                        {r.name: env[r.name] for r in frag.results}, self.line)
            self.graph.operations.append(op)
        return results

    def primitive(self, op_name: str, generic: Prim | None, args: dict[str, object], node: object,
                  name: str | None = None) -> list[object]:
        frag = self.fragment(op_name, node)  # type: ignore[arg-type]
        for p in frag.params:
            if p.name not in args:
                args[p.name] = self.eval(p.default, {}, None)  # type: ignore[arg-type]
        if frag.generic and generic is None:
            cands: set[Prim] = set()
            for p in frag.params:
                _deduce(p.type, args[p.name], cands)
            generic = next(iter(cands)) if len(cands) == 1 else (frag.generic_default or Prim.SCALAR)

        def shape(v: object) -> Shape:
            if isinstance(v, TensorRef):
                return v.shape
            if isinstance(v, (bool, int, float)):
                return ()
            raise ShapeProblem(f"§4: expected a tensor argument of '{op_name}', found {v!r}")

        if self.doc.lenient and frag.name in _WHOLE_RANK_WINDOWS:
            self.pad_window_size(args)
        try:
            if op_name == "sample" and args.get("border") == "ignore":
                self.check_sample_ignore(args)
            if op_name == "update":
                self.check_update(args)
            shapes = infer(frag.name, args, shape)
        except ShapeProblem as err:
            raise self.error(f"{err} (in '{op_name}')", node) from None
        except (TypeError, KeyError, IndexError, ValueError) as err:
            raise self.error(f"§4: invalid arguments to '{op_name}': {err}", node) from None
        if frag.name == "variable":
            key = str(args["label"]).lower()
            prev = self.labels.get(key)
            if prev is not None and prev[1] != shapes[0]:
                raise self.error(f"§4.1.3: variables labelled '{args['label']}' share data but have shapes "
                                 f"{list(prev[1])} and {list(shapes[0])}", node)
            self.labels[key] = (str(args["label"]), shapes[0])
        outputs: dict[str, object] = {}
        results: list[object] = []
        for r, shp in zip(frag.results, shapes):
            t = r.type
            if isinstance(t, ArrayType):
                item = t.item
                dtype = (generic if getattr(item, "item", None) is Prim.GENERIC else item.item) or Prim.SCALAR  # type: ignore[union-attr]
                val: object = [self.new_tensor(dtype, s) for s in shp]  # type: ignore[union-attr]
            else:
                dtype = (generic if t.item is Prim.GENERIC else t.item) or Prim.SCALAR  # type: ignore[union-attr]
                val = self.new_tensor(dtype, shp, name)  # type: ignore[arg-type]
            outputs[r.name] = val
            results.append(val)
        tensor_params = {p.name for p in frag.params if has_tensor(p.type)}
        op = FlatOp(frag.name, generic if frag.generic else None,
                    {k: v for k, v in args.items() if k in tensor_params},
                    {k: v for k, v in args.items() if k not in tensor_params}, outputs, self.line)
        for ref in _refs(outputs):
            self.producer[id(ref)] = op
        self.graph.operations.append(op)
        if len(self.graph.operations) > MAX_OPERATIONS:
            raise self.error(f"§6: the expanded graph has more than {MAX_OPERATIONS} operations; refused", node)
        return results

    def check_sample_ignore(self, args: dict[str, object]) -> None:
        src = self.producer.get(id(args.get("index")))
        same = src is not None and src.name == "argmax_pool" and src.inputs.get("input") is args.get("input") and all(
            src.attribs.get(k) == args.get(k) for k in ("size", "border", "padding", "stride", "dilation"))
        if not same:
            raise ShapeProblem("§4.3.3: border 'ignore' is not allowed for 'sample' unless its index comes from "
                               "'argmax_pool' with border 'ignore' over the same window")

    @staticmethod
    def pad_window_size(args: dict[str, object]) -> None:
        """Lenient: a ``size`` shorter than the input's rank gets trailing 1s (tensors have implied trailing
        singleton dimensions, §2.2). The spec's AlexNet (App. D.3.1) writes ``local_response_normalization(x,
        size = [1, 5])`` on a rank-4 tensor, which reaches ``box`` with a 2-item size."""
        x, size = args.get("input"), args.get("size")
        if isinstance(x, TensorRef) and isinstance(size, list) and 0 < len(size) < len(x.shape):
            args["size"] = size + [1] * (len(x.shape) - len(size))

    def check_update(self, args: dict[str, object]) -> None:
        """§4.8: ``update`` takes a variable (a ``variable`` result, possibly renamed by ``a = v``; an update's
        result is not a variable), and each variable (labels equal up to case share data, §4.1.3) is updated
        at most once per cycle."""
        src = self.producer.get(id(args.get("variable")))
        while src is not None and id(src) in self.aliases:
            src = self.producer.get(id(src.inputs.get("x")))
        if src is None or src.name != "variable":
            what = "an external input or literal" if src is None else f"the result of '{src.name}'"
            raise ShapeProblem(f"§4.8: the 'variable' argument of 'update' must be a variable tensor, found {what}")
        label = str(src.attribs["label"])
        if label.lower() in self.updated:
            raise ShapeProblem(f"§4.8: variable '{label}' is updated more than once in a cycle")
        self.updated[label.lower()] = label

    def new_tensor(self, dtype: Prim, shape: Shape, name: str | None = None) -> TensorRef:
        if name is None:
            self.counter += 1
            name = f"${self.counter}"
        ref = TensorRef(name, dtype, tuple(shape))
        self.graph.tensors[name] = ref
        self.created.append(name)
        return ref

    # -- expressions ------------------------------------------------------------------------------
    def eval(self, e: Expr, env: dict[str, object], binding: Prim | None) -> object:
        self.charge(1, e)
        if isinstance(e, Literal):
            return e.value
        if isinstance(e, Identifier):
            if e.name not in env:
                raise self.error(f"§3.3.2: identifier '{e.name}' is used before it is defined", e)
            return env[e.name]
        if isinstance(e, ArrayExpr):
            return [self.eval(i, env, binding) for i in e.items]
        if isinstance(e, TupleExpr):
            return tuple(self.eval(i, env, binding) for i in e.items)
        if isinstance(e, IfElseExpr):
            c = self.eval(e.condition, env, binding)
            return self.eval(e.then if c else e.otherwise, env, binding)
        if isinstance(e, UnaryExpr):
            v = self.eval(e.operand, env, binding)
            if isinstance(v, TensorRef):
                frag = self.fragment({"!": "not", "-": "neg", "+": "copy"}[e.op], e)
                return self.call(frag, {frag.params[0].name: v}, v.dtype if frag.generic else None, e)
            if e.op == "!":
                return not v
            return self.checked_int(-v, e) if e.op == "-" else v  # type: ignore[operator]
        if isinstance(e, BinaryExpr):
            return self.binary(e, env, binding)
        if isinstance(e, Comprehension):
            return self.comprehension(e, env, binding)
        if isinstance(e, Subscript):
            return self.subscript(e, env, binding)
        if isinstance(e, Builtin):
            return self.builtin(e, env, binding)
        assert isinstance(e, Invocation)
        return self.invoke(e, env, binding)

    def binary(self, e: BinaryExpr, env: dict[str, object], binding: Prim | None) -> object:
        a = self.eval(e.left, env, binding)
        b = self.eval(e.right, env, binding)
        op = e.op
        if isinstance(a, (list, str)):
            self.charge(len(a), e)
        if isinstance(b, (list, str)):
            self.charge(len(b), e)
        if op == "in":
            return any(_deep_eq(a, i) for i in b)  # type: ignore[union-attr]
        if isinstance(a, TensorRef) or isinstance(b, TensorRef):
            name = {"+": "add", "-": "sub", "*": "mul", "/": "div", "^": "pow", "<": "lt", "<=": "le", ">": "gt",
                    ">=": "ge", "==": "eq", "!=": "ne", "&&": "and", "||": "or"}[op]
            frag = self.fragment(name, e)
            return self.call(frag, {frag.params[0].name: a, frag.params[1].name: b}, None, e)
        try:
            if op == "+":
                r = a + b  # type: ignore[operator]
            elif op == "-":
                r = a - b  # type: ignore[operator]
            elif op == "*":
                if isinstance(a, (list, str)):
                    if b < 0:  # type: ignore[operator]
                        raise self.error(f"§3.3.3: repetition count {b} must not be negative", e)
                    if len(a) * b > MAX_ITEMS:  # type: ignore[operator]
                        raise self.error(f"§3.3.3: repetition builds {brief(len(a) * b)} items (limit {MAX_ITEMS})", e)  # type: ignore[operator]
                    self.charge(len(a) * b, e)  # type: ignore[operator]
                r = a * b  # type: ignore[operator]
            elif op == "/":
                if b == 0:
                    raise self.error("§3.3.3: division by zero in a compile-time expression", e)
                r = a // b if isinstance(a, int) and isinstance(b, int) and not isinstance(a, bool) else a / b  # type: ignore[operator]
            elif op == "^":
                if type(a) is int and type(b) is int:
                    if b < 0:
                        raise self.error(f"§3.3.3: integer power with negative exponent {b}", e)
                    if b > 4096 or (abs(a) > 1 and b > 64):  # |a|^b >= 2^b: outside 64 bits
                        raise self.error(f"§3.3.3: integer power {brief(a)} ^ {brief(b)} overflows 64 bits", e)
                r = a ** b  # type: ignore[operator]
                if isinstance(r, complex):
                    raise self.error(f"§3.3.3: {a} ^ {b} is not a real number", e)
            elif op == "<":
                r = a < b  # type: ignore[operator]
            elif op == "<=":
                r = a <= b  # type: ignore[operator]
            elif op == ">":
                r = a > b  # type: ignore[operator]
            elif op == ">=":
                r = a >= b  # type: ignore[operator]
            elif op == "==":
                r = _deep_eq(a, b)
            elif op == "!=":
                r = not _deep_eq(a, b)
            elif op == "&&":
                r = bool(a) and bool(b)
            else:
                r = bool(a) or bool(b)
        except (OverflowError, ZeroDivisionError, TypeError, ValueError) as err:
            raise self.error(f"§3.3.3: cannot evaluate '{op}' on {brief(a)} and {brief(b)}: {brief(str(err))}", e) from None
        if isinstance(r, (list, str)) and len(r) > MAX_ITEMS:
            raise self.error(f"§3.3.3: value with {len(r)} items exceeds the limit {MAX_ITEMS}", e)
        return self.checked_int(r, e)

    def comprehension(self, e: Comprehension, env: dict[str, object], binding: Prim | None) -> list[object]:
        seqs = [(n, self.eval(it, env, binding)) for n, it in e.iterators]
        lengths = {len(s) for _n, s in seqs}  # type: ignore[arg-type]
        if len(lengths) > 1:
            raise self.error(f"§3.3.3: iterated arrays of a comprehension must have equal lengths, found "
                             f"{sorted(lengths)}", e)
        out: list[object] = []
        inner = dict(env)
        for i in range(lengths.pop() if lengths else 0):
            for n, s in seqs:
                inner[n] = s[i]  # type: ignore[index]
            if e.condition is not None and not self.eval(e.condition, inner, binding):
                continue
            out.append(self.eval(e.body, inner, binding))
        return out

    def subscript(self, e: Subscript, env: dict[str, object], binding: Prim | None) -> object:
        base = self.eval(e.base, env, binding)
        n = len(base)  # type: ignore[arg-type]
        if not e.is_range:
            i = self.eval(e.index, env, binding)  # type: ignore[arg-type]
            if not 0 <= i < n:  # type: ignore[operator]
                raise self.error(f"§3.3.3: index {brief(i)} is out of range for a sequence of length {n}", e)
            return base[i]  # type: ignore[index]
        b = 0 if e.index is None else self.eval(e.index, env, binding)
        en = n if e.end is None else self.eval(e.end, env, binding)
        for v in (b, en):
            if not 0 <= v <= n:  # type: ignore[operator]
                raise self.error(f"§3.3.3: range bound {brief(v)} is out of range for a sequence of length {n}", e)
        if b < en:
            self.charge(en - b, e)  # type: ignore[operator]
        return base[b:en] if b < en else base[0:0]  # type: ignore[index,misc]

    def builtin(self, e: Builtin, env: dict[str, object], binding: Prim | None) -> object:
        v = self.eval(e.arg, env, binding)
        name = e.name
        if name == "shape_of":
            return list(v.shape) if isinstance(v, TensorRef) else []
        if name == "length_of":
            return len(v)  # type: ignore[arg-type]
        if name == "range_of":
            self.charge(len(v), e)  # type: ignore[arg-type]
            return list(range(len(v)))  # type: ignore[arg-type]
        if name == "string":
            s = _literal_string(v)
            self.charge(len(s), e)
            if len(s) > MAX_ITEMS:
                raise self.error(f"§3.3.3: value with {len(s)} items exceeds the limit {MAX_ITEMS}", e)
            return s
        try:
            if name == "scalar":
                if isinstance(v, str):
                    return float(_parse_number(v, e, self, integer=False))
                return float(v)  # type: ignore[arg-type]
            if name == "integer":
                if isinstance(v, str):
                    return self.checked_int(int(_parse_number(v, e, self, integer=True)), e)
                return self.checked_int(int(math.floor(v)), e)  # type: ignore[arg-type]
            return bool(v)
        except (OverflowError, ValueError) as err:
            raise self.error(f"§3.3.3: '{name}' cannot convert {brief(v)}: {brief(str(err))}", e) from None


def _parse_number(s: str, node: Node, ex: Expander, *, integer: bool) -> float | int:
    from nnkiln.frontends.nnef.lexer import Tok, tokenize

    try:
        toks = tokenize(s.strip())
    except NnefError:
        toks = []
    neg = len(toks) == 3 and toks[0].text == "-"
    body = toks[1:] if neg else toks
    if len(body) != 2 or body[0].kind is not Tok.NUMBER or (integer and not isinstance(body[0].value, int)):
        raise ex.error(f"§3.3.3: string {s!r} is not a valid {'integer' if integer else 'scalar'} literal", node)
    return -body[0].value if neg else body[0].value  # type: ignore[operator,return-value]


def _deep_eq(a: object, b: object) -> bool:
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_deep_eq(x, y) for x, y in zip(a, b))
    return a == b


def _refs(v: object) -> list[TensorRef]:
    if isinstance(v, TensorRef):
        return [v]
    if isinstance(v, dict):
        return [r for x in v.values() for r in _refs(x)]
    if isinstance(v, (list, tuple)):
        return [r for x in v for r in _refs(x)]
    return []


def expand(doc: Document, keep: frozenset[str] | set[str] = frozenset()) -> FlatGraph:
    """Flatten ``doc`` into primitives (compounds in ``keep`` stay single ops), propagating shapes.

    Temporaries are named ``$1``, ``$2``, ...; graph identifiers keep their names. Raises
    :class:`NnefError` for §6 stage-3 errors (invalid primitive arguments, conflicting variable shapes).
    """
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(max(old, 20 * MAX_DEPTH + 2000))
    try:
        return Expander(doc, frozenset(keep)).run()
    except RecursionError:
        g = doc.graph
        raise NnefError("§6: expansion recurses too deeply", file=doc.file, line=g.line, column=g.column) from None
    finally:
        sys.setrecursionlimit(old)
