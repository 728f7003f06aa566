"""Syntax tree and types of NNEF documents (NNEF 1.0.3 §3.2, §3.3.1)."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum

# ---------------------------------------------------------------------------------------------
# Types (§3.3.1)


class Prim(Enum):
    """Primitive type names; ``GENERIC`` is the ``?`` of generic fragments."""

    INTEGER = "integer"
    SCALAR = "scalar"
    LOGICAL = "logical"
    STRING = "string"
    GENERIC = "?"


@dataclass(frozen=True)
class PrimType:
    prim: Prim

    def __str__(self) -> str:
        return self.prim.value


@dataclass(frozen=True)
class TensorType:
    """``tensor<T>``; ``item is None`` is the unbound ``tensor<>`` (also written ``tensor``)."""

    item: Prim | None

    def __str__(self) -> str:
        return f"tensor<{self.item.value if self.item else ''}>"


@dataclass(frozen=True)
class ArrayType:
    item: Type

    def __str__(self) -> str:
        return f"{self.item}[]"


@dataclass(frozen=True)
class TupleType:
    items: tuple[Type, ...]

    def __str__(self) -> str:
        return "(" + ",".join(str(t) for t in self.items) + ")"


@dataclass(frozen=True)
class EmptyArrayType:
    """The type of the literal ``[]``; cannot be declared (§3.3.1)."""

    def __str__(self) -> str:
        return "[]"


@dataclass(frozen=True)
class AnyType:
    """Item type of an iterated empty array: casts to and from anything (internal)."""

    def __str__(self) -> str:
        return "any"


Type = PrimType | TensorType | ArrayType | TupleType | EmptyArrayType | AnyType

INTEGER = PrimType(Prim.INTEGER)
SCALAR = PrimType(Prim.SCALAR)
LOGICAL = PrimType(Prim.LOGICAL)
STRING = PrimType(Prim.STRING)
GENERIC = PrimType(Prim.GENERIC)
EMPTY = EmptyArrayType()
ANY = AnyType()


def has_tensor(t: Type) -> bool:
    if isinstance(t, TensorType):
        return True
    if isinstance(t, ArrayType):
        return has_tensor(t.item)
    if isinstance(t, TupleType):
        return any(has_tensor(i) for i in t.items)
    return False


def has_generic(t: Type) -> bool:
    if isinstance(t, PrimType):
        return t.prim is Prim.GENERIC
    if isinstance(t, TensorType):
        return t.item is Prim.GENERIC
    if isinstance(t, ArrayType):
        return has_generic(t.item)
    if isinstance(t, TupleType):
        return any(has_generic(i) for i in t.items)
    return False


def bind_generic(t: Type, prim: Prim) -> Type:
    """Replace ``?`` in ``t`` by ``prim``."""
    if isinstance(t, PrimType) and t.prim is Prim.GENERIC:
        return PrimType(prim)
    if isinstance(t, TensorType) and t.item is Prim.GENERIC:
        return TensorType(prim)
    if isinstance(t, ArrayType):
        return ArrayType(bind_generic(t.item, prim))
    if isinstance(t, TupleType):
        return TupleType(tuple(bind_generic(i, prim) for i in t.items))
    return t


# ---------------------------------------------------------------------------------------------
# Expressions (§3.2.1, §3.2.3)


@dataclass
class Node:
    line: int
    column: int


@dataclass
class Literal(Node):
    value: int | float | str | bool


@dataclass
class Identifier(Node):
    name: str


@dataclass
class ArrayExpr(Node):
    items: list[Expr]


@dataclass
class TupleExpr(Node):
    items: list[Expr]


@dataclass
class UnaryExpr(Node):
    op: str
    operand: Expr


@dataclass
class BinaryExpr(Node):
    op: str
    left: Expr
    right: Expr


@dataclass
class IfElseExpr(Node):
    condition: Expr
    then: Expr
    otherwise: Expr


@dataclass
class Comprehension(Node):
    iterators: list[tuple[str, Expr]]
    condition: Expr | None
    body: Expr


@dataclass
class Subscript(Node):
    base: Expr
    index: Expr | None
    end: Expr | None = None
    is_range: bool = False


@dataclass
class Builtin(Node):
    name: str
    arg: Expr


@dataclass
class Argument:
    name: str | None
    value: Expr
    line: int
    column: int


@dataclass
class Invocation(Node):
    name: str
    generic: Prim | None
    args: list[Argument]


Expr = (Literal | Identifier | ArrayExpr | TupleExpr | UnaryExpr | BinaryExpr | IfElseExpr
        | Comprehension | Subscript | Builtin | Invocation)


@dataclass
class Assignment(Node):
    lhs: Expr  # Identifier / ArrayExpr / TupleExpr of identifiers
    rhs: Expr


# ---------------------------------------------------------------------------------------------
# Declarations


@dataclass
class Param:
    name: str
    type: Type
    default: Expr | None
    line: int
    column: int


@dataclass
class Result:
    name: str
    type: Type
    line: int
    column: int


@dataclass
class Fragment(Node):
    """A fragment; ``body is None`` for primitives of the standard library (§4)."""

    name: str
    generic: bool
    generic_default: Prim | None
    params: list[Param]
    results: list[Result]
    body: list[Assignment] | None
    standard: bool = False

    def param(self, name: str) -> Param | None:
        return next((p for p in self.params if p.name == name), None)


@dataclass
class Graph(Node):
    name: str
    inputs: list[str]
    outputs: list[str]
    body: list[Assignment]


@dataclass
class Document:
    """A parsed NNEF document; ``fragments`` holds the standard library and the document's own."""

    version: tuple[int, int]
    extensions: list[str]
    fragments: dict[str, Fragment]
    graph: Graph
    lenient: bool = False
    file: str = ""
    own_fragments: list[str] = field(default_factory=list)
    types: dict[str, Type] = field(default_factory=dict)  # graph identifiers -> type
