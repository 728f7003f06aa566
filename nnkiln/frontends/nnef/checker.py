"""Semantic checks of NNEF documents: types, declarations, invocations, identifiers (spec §3.3, §6 stage 2).

Decisions where §3.3 is silent or self-contradictory (tested in tests/frontends/nnef):

* Comparisons ``< <= > >=`` accept two integers as well as two scalars (the standard library compares
  integers: ``length_of(x) > 0``); ``== !=`` need two primitives of the same type.
* When computing a *common type* (array items, if-else branches) a primitive may be cast to a tensor of the
  same data type (as for operator operands), so ``add_n``'s ``... if ... else 0.0`` is a ``tensor<scalar>``.
  Assigning a plain primitive to a tensor *result* stays invalid (§3.3.1: no primitive→tensor cast for outputs).
* Generic binding: an explicit ``<T>`` wins; otherwise a declared default wins (§3.3.2 says the default is
  substituted); otherwise ``?`` is deduced from the arguments and must be unique.  Lenient mode deduces before
  falling back to the default, so ``constant(shape = [1], value = [1])`` is a ``tensor<integer>``.
* Built-in casts also accept the identity (``scalar(1.0)``).
* Positional arguments: the formal parameter must be of a tensor kind (tensor, tensor array or tensor tuple).
"""

from __future__ import annotations

from dataclasses import dataclass

from nnkiln.frontends.nnef.ast import (
    ANY,
    EMPTY,
    GENERIC,
    INTEGER,
    LOGICAL,
    SCALAR,
    STRING,
    AnyType,
    ArrayExpr,
    ArrayType,
    Assignment,
    BinaryExpr,
    Builtin,
    Comprehension,
    Document,
    EmptyArrayType,
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
    bind_generic,
    has_generic,
    has_tensor,
)
from nnkiln.ir.errors import NnefError

_ARITH = {"+": "add", "-": "sub", "*": "mul", "/": "div", "^": "pow"}
_COMPARE = {"<": "lt", "<=": "le", ">": "gt", ">=": "ge", "==": "eq", "!=": "ne"}
_LOGIC = {"&&": "and", "||": "or"}

# Aliases accepted in lenient mode: defect names of the spec text -> the names we use.
LENIENT_FRAGMENT_ALIASES = {"debbox": "debox"}
LENIENT_ARGUMENT_ALIASES = {("matmul", "trA"): "transposeA", ("matmul", "trB"): "transposeB"}


def literal_type(value: object) -> Type:
    if isinstance(value, bool):
        return LOGICAL
    if isinstance(value, int):
        return INTEGER
    if isinstance(value, float):
        return SCALAR
    return STRING


def can_cast(src: Type, dst: Type, *, to_tensor: bool = False, lenient: bool = False) -> bool:
    """§3.3.1 implicit casts. ``to_tensor`` allows primitive→tensor (fragment inputs only)."""
    if src == dst or isinstance(src, AnyType) or isinstance(dst, AnyType):
        return True
    if isinstance(dst, PrimType):
        if not isinstance(src, PrimType):
            return False
        if dst.prim is Prim.GENERIC:
            return True
        return lenient and src.prim is Prim.INTEGER and dst.prim is Prim.SCALAR
    if isinstance(dst, TensorType):
        if isinstance(src, TensorType):
            if dst.item is None:
                return True
            if dst.item is Prim.GENERIC:
                return src.item is not None
            return src.item == dst.item
        if isinstance(src, PrimType) and to_tensor:
            if dst.item is None or dst.item is Prim.GENERIC or src.prim == dst.item:
                return True
            return lenient and src.prim is Prim.INTEGER and dst.item is Prim.SCALAR
        return False
    if isinstance(dst, ArrayType):
        if isinstance(src, EmptyArrayType):
            return True
        return isinstance(src, ArrayType) and can_cast(src.item, dst.item, to_tensor=to_tensor,
                                                       lenient=lenient)
    if isinstance(dst, TupleType):
        return (isinstance(src, TupleType) and len(src.items) == len(dst.items)
                and all(can_cast(s, d, to_tensor=to_tensor, lenient=lenient)
                        for s, d in zip(src.items, dst.items)))
    return False


def common_type(a: Type, b: Type) -> Type | None:
    if can_cast(a, b, to_tensor=True):
        return b
    if can_cast(b, a, to_tensor=True):
        return a
    return None


def _deduce(formal: Type, actual: Type, out: set[Prim]) -> None:
    if isinstance(formal, PrimType) and formal.prim is Prim.GENERIC:
        if isinstance(actual, PrimType):
            out.add(actual.prim)
    elif isinstance(formal, TensorType) and formal.item is Prim.GENERIC:
        if isinstance(actual, TensorType) and actual.item is not None:
            out.add(actual.item)
        elif isinstance(actual, PrimType):
            out.add(actual.prim)
    elif isinstance(formal, ArrayType) and isinstance(actual, ArrayType):
        _deduce(formal.item, actual.item, out)
    elif isinstance(formal, TupleType) and isinstance(actual, TupleType):
        for f, a in zip(formal.items, actual.items):
            _deduce(f, a, out)


@dataclass
class Scope:
    """Identifier table of one body: name -> type; ``params`` are read-only."""

    types: dict[str, Type]
    params: set[str]
    in_graph: bool
    generic: bool


class Checker:
    def __init__(self, fragments: dict[str, Fragment], *, lenient: bool, file: str) -> None:
        self.fragments = fragments
        self.lenient = lenient
        self.file = file

    def error(self, msg: str, node: Node | object | None = None) -> NnefError:
        line = getattr(node, "line", 0)
        col = getattr(node, "column", 0)
        return NnefError(msg, file=self.file, line=line, column=col)

    # -- declarations (§3.3.2 "Declarations") ---------------------------------------------------
    def check_declaration(self, frag: Fragment) -> None:
        seen: set[str] = set()
        for item in [*frag.params, *frag.results]:
            if item.name in seen:
                raise self.error(f"§3.3.2: fragment '{frag.name}' declares '{item.name}' more than once "
                                 "(parameter and result names must be unique)", item)
            seen.add(item.name)
        attribute_seen = None
        for p in frag.params:
            self.check_type_spec(p.type, p, frag)
            if has_tensor(p.type):
                if attribute_seen is not None:
                    raise self.error(f"§3.3.2: in fragment '{frag.name}' tensor parameter '{p.name}' follows "
                                     f"attribute parameter '{attribute_seen}' (tensor parameters must "
                                     "precede attributes)", p)
            else:
                attribute_seen = p.name
            if p.default is not None:
                dt = self.literal_expr_type(p.default)
                if not can_cast(dt, p.type, to_tensor=True, lenient=self.lenient):
                    raise self.error(f"§3.3.2: the default value of '{p.name}' in fragment '{frag.name}' has "
                                     f"type {dt}, which does not match the parameter type {p.type}", p)
        kinds = {has_tensor(r.type) for r in frag.results}
        if len(kinds) > 1:
            raise self.error(f"§3.3.2: the results of fragment '{frag.name}' must be all tensors or all "
                             "attributes", frag.results[0])
        for r in frag.results:
            self.check_type_spec(r.type, r, frag)
            if _has_unbound(r.type):
                raise self.error(f"§3.3.1: result '{r.name}' of fragment '{frag.name}' has an unbound tensor "
                                 "type (tensor<> may only be used for inputs)", r)
        uses_generic = any(has_generic(x.type) for x in [*frag.params, *frag.results])
        if uses_generic and not frag.generic:
            raise self.error(f"§3.3.2: fragment '{frag.name}' uses the generic type '?' but is not declared "
                             "generic (write '<?>' after its name)", frag)
        if frag.generic and not uses_generic:
            raise self.error(f"§3.3.2: fragment '{frag.name}' is declared generic but has no parameter or "
                             "result of generic type", frag)

    def check_type_spec(self, t: Type, where: object, frag: Fragment) -> None:
        if isinstance(t, TupleType):
            kinds = {has_tensor(i) for i in t.items}
            if len(kinds) > 1:
                raise self.error(f"§3.3.1: tuple type {t} in fragment '{frag.name}' mixes tensor and "
                                 "non-tensor items", where)
            for i in t.items:
                self.check_type_spec(i, where, frag)
        elif isinstance(t, ArrayType):
            self.check_type_spec(t.item, where, frag)

    def literal_expr_type(self, e: Expr) -> Type:
        if isinstance(e, Literal):
            return literal_type(e.value)
        if isinstance(e, TupleExpr):
            return TupleType(tuple(self.literal_expr_type(i) for i in e.items))
        assert isinstance(e, ArrayExpr)
        return self.array_type([self.literal_expr_type(i) for i in e.items], e)

    def array_type(self, items: list[Type], node: Node) -> Type:
        if not items:
            return EMPTY
        t = items[0]
        for other in items[1:]:
            c = common_type(t, other)
            if c is None and self.lenient:
                if {t, other} == {INTEGER, SCALAR}:
                    c = SCALAR
            if c is None:
                raise self.error(f"§3.3.3: array items must have a common type, found {t} and {other}", node)
            t = c
        return ArrayType(t)

    # -- bodies ---------------------------------------------------------------------------------
    def check_fragment_body(self, frag: Fragment) -> None:
        assert frag.body is not None
        scope = Scope({p.name: p.type for p in frag.params}, {p.name for p in frag.params}, False,
                      frag.generic)
        results = {r.name: r for r in frag.results}
        assigned: set[str] = set()
        for stmt in frag.body:
            rhs = self.expr_type(stmt.rhs, scope)
            for ident, t in self.unpack(stmt.lhs, rhs, stmt):
                if ident.name in scope.params:
                    raise self.error(f"§3.3.2: parameter '{ident.name}' of fragment '{frag.name}' must not "
                                     "appear on the left-hand side of an assignment", ident)
                if ident.name in scope.types or ident.name in assigned:
                    raise self.error(f"§3.3.2: identifier '{ident.name}' is assigned more than once", ident)
                if ident.name in results:
                    res = results[ident.name]
                    if not can_cast(t, res.type, lenient=self.lenient):
                        raise self.error(f"§3.3.1: result '{ident.name}' of fragment '{frag.name}' is declared "
                                         f"{res.type} but is assigned a value of type {t}", ident)
                    assigned.add(ident.name)
                    t = res.type
                scope.types[ident.name] = t
        for r in frag.results:
            if r.name not in assigned:
                raise self.error(f"§3.3.2: result '{r.name}' of fragment '{frag.name}' is never assigned", r)

    def check_graph(self, doc: Document) -> dict[str, Type]:
        g = doc.graph
        for names, what in ((g.inputs, "input"), (g.outputs, "output")):
            if len(set(names)) != len(names):
                raise self.error(f"§3.3.2: graph '{g.name}' lists an {what} more than once", g)
        scope = Scope({}, set(), True, False)
        inputs = set(g.inputs)
        for stmt in g.body:
            rhs = self.expr_type(stmt.rhs, scope)
            is_external = isinstance(stmt.rhs, Invocation) and self.canonical(stmt.rhs.name) == "external"
            for ident, t in self.unpack(stmt.lhs, rhs, stmt):
                if ident.name in scope.types:
                    raise self.error(f"§3.3.2: identifier '{ident.name}' is assigned more than once", ident)
                if not isinstance(t, TensorType):
                    raise self.error(f"§3.3.2: identifier '{ident.name}' in the graph body has type {t}; every "
                                     "identifier of the graph body must be a single tensor", ident)
                if ident.name in inputs and not (is_external and isinstance(stmt.lhs, Identifier)):
                    raise self.error(f"§3.3.2: graph input '{ident.name}' must be defined by 'external'", ident)
                if is_external and ident.name not in inputs:
                    # decision: the text makes externals the graph parameters (§3.3.2) and says an external
                    # "must be fed to the graph from the outside" (§4.1.1), which only a parameter can be
                    raise self.error(f"§3.3.2: '{ident.name}' is defined by 'external' but is not a parameter of "
                                     f"graph '{g.name}', so nothing could feed it", ident)
                scope.types[ident.name] = t
        for name in g.inputs:
            if name not in scope.types:
                raise self.error(f"§3.3.2: graph input '{name}' is never defined (it must be the result of "
                                 "'external')", g)
        for name in g.outputs:
            if name not in scope.types:
                raise self.error(f"§3.3.2: graph output '{name}' is never assigned", g)
        return scope.types

    def unpack(self, lhs: Expr, t: Type, stmt: Assignment) -> list[tuple[Identifier, Type]]:
        if isinstance(lhs, Identifier):
            return [(lhs, t)]
        out: list[tuple[Identifier, Type]] = []
        if isinstance(lhs, TupleExpr):
            if not isinstance(t, TupleType):
                raise self.error(f"§3.3.2: cannot unpack a value of type {t} into a tuple of "
                                 f"{len(lhs.items)} items", lhs)
            if len(t.items) != len(lhs.items):
                raise self.error(f"§3.3.2: tuple arity mismatch in assignment: {len(lhs.items)} items on the "
                                 f"left, {len(t.items)} on the right", lhs)
            for item, it in zip(lhs.items, t.items):
                out.extend(self.unpack(item, it, stmt))
            return out
        assert isinstance(lhs, ArrayExpr)
        if isinstance(t, EmptyArrayType):
            if lhs.items:
                raise self.error("§3.3.2: cannot unpack an empty array into a non-empty array", lhs)
            return out
        if not isinstance(t, ArrayType):
            raise self.error(f"§3.3.2: cannot unpack a value of type {t} into an array", lhs)
        for item in lhs.items:
            out.extend(self.unpack(item, t.item, stmt))
        return out

    # -- expressions ----------------------------------------------------------------------------
    def canonical(self, name: str) -> str:
        if self.lenient and name not in self.fragments:
            return LENIENT_FRAGMENT_ALIASES.get(name, name)
        return name

    def expr_type(self, e: Expr, scope: Scope) -> Type:
        if isinstance(e, Literal):
            return literal_type(e.value)
        if isinstance(e, Identifier):
            if e.name not in scope.types:
                raise self.error(f"§3.3.2: identifier '{e.name}' is used before it is defined", e)
            return scope.types[e.name]
        if isinstance(e, ArrayExpr):
            return self.array_type([self.expr_type(i, scope) for i in e.items], e)
        if isinstance(e, TupleExpr):
            items = tuple(self.expr_type(i, scope) for i in e.items)
            return TupleType(items)
        if isinstance(e, UnaryExpr):
            return self.unary_type(e, scope)
        if isinstance(e, BinaryExpr):
            return self.binary_type(e, scope)
        if isinstance(e, IfElseExpr):
            c = self.expr_type(e.condition, scope)
            if c != LOGICAL:
                raise self.error(f"§3.3.3: the condition of an if-else expression must be logical, found {c}",
                                 e.condition)
            a = self.expr_type(e.then, scope)
            b = self.expr_type(e.otherwise, scope)
            r = common_type(a, b)
            if r is None:
                raise self.error(f"§3.3.3: the branches of an if-else expression have no common type "
                                 f"({a} and {b})", e)
            return r
        if isinstance(e, Comprehension):
            inner = Scope(dict(scope.types), scope.params, scope.in_graph, scope.generic)
            for name, it in e.iterators:
                t = self.expr_type(it, scope)
                if isinstance(t, EmptyArrayType):
                    item: Type = ANY
                elif isinstance(t, ArrayType):
                    item = t.item
                else:
                    raise self.error(f"§3.3.3: a comprehension must iterate an array, found {t}", it)
                if name in inner.types and name not in scope.types:
                    raise self.error(f"§3.3.3: loop variable '{name}' is used twice", e)
                inner.types[name] = item
            if e.condition is not None:
                c = self.expr_type(e.condition, inner)
                if c != LOGICAL:
                    raise self.error(f"§3.3.3: the condition of a comprehension must be logical, found {c}",
                                     e.condition)
            return ArrayType(self.expr_type(e.body, inner))
        if isinstance(e, Subscript):
            return self.subscript_type(e, scope)
        if isinstance(e, Builtin):
            return self.builtin_type(e, scope)
        assert isinstance(e, Invocation)
        return self.invocation_type(e, scope)

    def unary_type(self, e: UnaryExpr, scope: Scope) -> Type:
        t = self.expr_type(e.operand, scope)
        if e.op == "!":
            if t == LOGICAL:
                return LOGICAL
            if isinstance(t, TensorType):
                return self.operator_call("not", [t], e)
        else:
            if t in (INTEGER, SCALAR):
                return t
            if isinstance(t, TensorType):
                return self.operator_call("copy" if e.op == "+" else "neg", [t], e)
        raise self.error(f"§3.3.3: operator '{e.op}' cannot be applied to {t}", e)

    def binary_type(self, e: BinaryExpr, scope: Scope) -> Type:
        a = self.expr_type(e.left, scope)
        b = self.expr_type(e.right, scope)
        op = e.op
        if op == "in":
            if not isinstance(b, (ArrayType, EmptyArrayType)):
                raise self.error(f"§3.3.3: the right operand of 'in' must be an array, found {b}", e)
            if isinstance(b, ArrayType) and common_type(a, b.item) is None:
                raise self.error(f"§3.3.3: 'in' tests an item of type {a} against an array of {b.item}", e)
            return LOGICAL
        if isinstance(a, TensorType) or isinstance(b, TensorType):
            name = _ARITH.get(op) or _COMPARE.get(op) or _LOGIC[op]
            return self.operator_call(name, [a, b], e)
        if op in _ARITH:
            if a == b and a in (INTEGER, SCALAR):
                return a
            if self.lenient and {a, b} == {INTEGER, SCALAR}:
                return SCALAR
            if op == "+" and a == b == STRING:
                return STRING
            if op == "*" and a == STRING and b == INTEGER:
                return STRING
            if op == "+" and isinstance(a, (ArrayType, EmptyArrayType)) and isinstance(
                    b, (ArrayType, EmptyArrayType)):
                r = common_type(a, b)
                if r is None:
                    raise self.error(f"§3.3.3: cannot concatenate arrays of {a} and {b} (no common type)", e)
                return r
            if op == "*" and isinstance(a, (ArrayType, EmptyArrayType)) and b == INTEGER:
                return a
            if a in (INTEGER, SCALAR) and b in (INTEGER, SCALAR):
                raise self.error(f"§3.3.3: operator '{op}' cannot mix integer and scalar operands "
                                 f"({a} {op} {b}); use an explicit cast", e)
            raise self.error(f"§3.3.3: operator '{op}' cannot be applied to {a} and {b}", e)
        if op in ("<", "<=", ">", ">="):
            if a == b and a in (INTEGER, SCALAR):
                return LOGICAL
            if self.lenient and {a, b} == {INTEGER, SCALAR}:
                return LOGICAL
            raise self.error(f"§3.3.3: operator '{op}' needs two scalars (or two integers), found {a} and {b}",
                             e)
        if op in ("==", "!="):
            if isinstance(a, PrimType) and a == b:
                return LOGICAL
            if self.lenient and {a, b} == {INTEGER, SCALAR}:
                return LOGICAL
            raise self.error(f"§3.3.3: operator '{op}' needs two primitives of the same type, found {a} and {b}",
                             e)
        if a == b == LOGICAL:
            return LOGICAL
        raise self.error(f"§3.3.3: operator '{op}' needs two logical operands, found {a} and {b}", e)

    def operator_call(self, name: str, types: list[Type], node: Node) -> Type:
        frag = self.fragments[name]
        for p, t in zip(frag.params, types):
            formal = p.type
            if frag.generic:
                cands: set[Prim] = set()
                for q, tt in zip(frag.params, types):
                    _deduce(q.type, tt, cands)
                if len(cands) == 1:
                    formal = bind_generic(formal, next(iter(cands)))
            if not can_cast(t, formal, to_tensor=True, lenient=self.lenient):
                raise self.error(f"§3.3.1: operand of type {t} cannot be passed to parameter '{p.name}: "
                                 f"{p.type}' of '{name}' (the operator maps to '{name}')", node)
        res = frag.results[0].type
        if frag.generic:
            cands = set()
            for q, tt in zip(frag.params, types):
                _deduce(q.type, tt, cands)
            if len(cands) == 1:
                res = bind_generic(res, next(iter(cands)))
        return res

    def subscript_type(self, e: Subscript, scope: Scope) -> Type:
        base = self.expr_type(e.base, scope)
        for part in (e.index, e.end):
            if part is not None and not isinstance(base, TupleType):
                pt = self.expr_type(part, scope)
                if pt != INTEGER:
                    raise self.error(f"§3.3.3: a subscript must be an integer, found {pt}", part)
        if isinstance(base, TupleType):
            if e.is_range or not (isinstance(e.index, Literal) and type(e.index.value) is int):
                raise self.error("§3.3.3: tuples may only be subscripted by an integer literal", e)
            i = e.index.value
            if not 0 <= i < len(base.items):
                raise self.error(f"§3.3.3: tuple subscript {i} is out of range for {base}", e)
            return base.items[i]
        if isinstance(base, (ArrayType, EmptyArrayType)):
            if e.is_range:
                return base
            return base.item if isinstance(base, ArrayType) else ANY
        if base == STRING:
            return STRING
        raise self.error(f"§3.3.3: only arrays, tuples and strings can be subscripted, found {base}", e)

    def builtin_type(self, e: Builtin, scope: Scope) -> Type:
        t = self.expr_type(e.arg, scope)
        if e.name == "shape_of":
            return ArrayType(INTEGER)
        if e.name in ("length_of", "range_of"):
            if not (isinstance(t, (ArrayType, EmptyArrayType)) or t == STRING):
                raise self.error(f"§3.3.3: '{e.name}' needs an array or a string, found {t}", e)
            return INTEGER if e.name == "length_of" else ArrayType(INTEGER)
        allowed = {
            "scalar": (LOGICAL, STRING, INTEGER, SCALAR),
            "integer": (LOGICAL, STRING, SCALAR, INTEGER),
            "logical": (INTEGER, SCALAR, STRING, LOGICAL),
            "string": (INTEGER, SCALAR, STRING, LOGICAL, GENERIC),
        }[e.name]
        if t not in allowed:
            raise self.error(f"§3.3.3: built-in '{e.name}' cannot convert a value of type {t}", e)
        return PrimType(Prim(e.name))

    def resolve_args(self, e: Invocation, frag: Fragment) -> dict[str, tuple[Expr | None, object]]:
        """Map parameter name -> (argument expression or None for a default, node). Checks I2-I8."""
        if len(e.args) > len(frag.params):
            raise self.error(f"§3.3.2: '{frag.name}' takes {len(frag.params)} parameters but "
                             f"{len(e.args)} arguments are given", e)
        out: dict[str, tuple[Expr | None, object]] = {}
        named_seen = False
        for i, a in enumerate(e.args):
            if a.name is None:
                if named_seen:
                    raise self.error(f"§3.3.2: positional argument {i + 1} of '{frag.name}' follows a named "
                                     "argument (positional arguments must precede named ones)", a)
                p = frag.params[i]
                if not has_tensor(p.type):
                    raise self.error(f"§3.3.2: argument {i + 1} of '{frag.name}' is positional but parameter "
                                     f"'{p.name}' is an attribute (attribute values must be named arguments)",
                                     a)
                out[p.name] = (a.value, a)
            else:
                named_seen = True
                name = a.name
                if self.lenient and frag.param(name) is None:
                    name = LENIENT_ARGUMENT_ALIASES.get((frag.name, name), name)
                if frag.param(name) is None:
                    raise self.error(f"§3.3.2: '{frag.name}' has no parameter named '{a.name}'", a)
                if name in out:
                    raise self.error(f"§3.3.2: parameter '{name}' of '{frag.name}' is assigned more than once",
                                     a)
                out[name] = (a.value, a)
        for p in frag.params:
            if p.name not in out:
                if p.default is None:
                    raise self.error(f"§3.3.2: missing argument for parameter '{p.name}' of '{frag.name}' "
                                     "(it has no default value)", e)
                out[p.name] = (None, e)
        return out

    def lookup(self, e: Invocation) -> Fragment:
        frag = self.fragments.get(self.canonical(e.name))
        if frag is None:
            raise self.error(f"§3.3.2: '{e.name}' is not a declared operation", e)
        return frag

    def invocation_type(self, e: Invocation, scope: Scope) -> Type:
        frag = self.lookup(e)
        if frag.name == "external" and not scope.in_graph:
            raise self.error("§3.3.2: 'external' must not be used inside a fragment", e)
        args = self.resolve_args(e, frag)
        actual: dict[str, Type] = {}
        for p in frag.params:
            expr, _node = args[p.name]
            actual[p.name] = (self.literal_expr_type(p.default) if expr is None else  # type: ignore[arg-type]
                              self.expr_type(expr, scope))
        binding = self.bind(e, frag, actual, scope)
        for p in frag.params:
            formal = bind_generic(p.type, binding) if binding else p.type
            t = actual[p.name]
            if not can_cast(t, formal, to_tensor=True, lenient=self.lenient):
                node = args[p.name][1]
                raise self.error(f"§3.3.1: argument '{p.name}' of '{frag.name}' has type {t}, which cannot be "
                                 f"cast to the parameter type {formal}", node)
        results = [bind_generic(r.type, binding) if binding else r.type for r in frag.results]
        return results[0] if len(results) == 1 else TupleType(tuple(results))

    def bind(self, e: Invocation, frag: Fragment, actual: dict[str, Type], scope: Scope) -> Prim | None:
        if not frag.generic:
            if e.generic is not None:
                raise self.error(f"§3.3.2: '{frag.name}' is not generic but is invoked with <{e.generic.value}>", e)
            return None
        if e.generic is not None:
            if e.generic is Prim.GENERIC and not scope.generic:
                raise self.error("§3.3.2: '<?>' may only be used inside a generic fragment", e)
            return e.generic
        if frag.generic_default is not None and not self.lenient:
            return frag.generic_default
        cands: set[Prim] = set()
        for p in frag.params:
            _deduce(p.type, actual[p.name], cands)
        if len(cands) == 1:
            return next(iter(cands))
        if frag.generic_default is not None:
            return frag.generic_default
        if not cands:
            raise self.error(f"§3.3.2: the generic type of '{frag.name}' cannot be deduced from the arguments "
                             "(write the type explicitly, e.g. name<scalar>(...))", e)
        names = ", ".join(sorted(c.value for c in cands))
        raise self.error(f"§3.3.2: the generic type of '{frag.name}' is ambiguous: the arguments suggest {names}",
                         e)


def _has_unbound(t: Type) -> bool:
    if isinstance(t, TensorType):
        return t.item is None
    if isinstance(t, ArrayType):
        return _has_unbound(t.item)
    if isinstance(t, TupleType):
        return any(_has_unbound(i) for i in t.items)
    return False
