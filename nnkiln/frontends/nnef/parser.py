"""Recursive-descent parser for NNEF documents (spec §3.2, Appendix A).

Flat syntax (§3.2.1) is always available; fragment definitions (§3.2.2) need
``extension KHR_enable_fragment_definitions`` and extended expressions (§3.2.3) need
``extension KHR_enable_operator_expressions``.

Operator precedence (§3.3.3 gives the binary levels only; the rest is our decision), lowest first:

====  =====================================  =============
 1    ``x if c else y``                      right-assoc.
 2    ``a, b`` (tuple, assignment level)
 3    ``in``                                 left
 4    ``&&`` ``||`` (also the words and/or)  left
 5    ``<`` ``<=`` ``>`` ``>=`` ``==`` ``!=``  left
 6    ``+`` ``-``                            left
 7    ``*`` ``/``                            left
 8    ``^``                                  right
 9    unary ``+`` ``-`` ``!``
10    subscript ``a[i]``, ``a[i:j]``
====  =====================================  =============

Decisions on defects of the grammar text (inventory §1.13):

* ``&&``/``||`` (§3.1, Table 1) and the words ``and``/``or`` (the BNF) are both binary logical operators.
  The words are only operators in infix position, so calls of the fragments ``and(...)``/``or(...)`` still parse.
* ``name<type>(...)`` generic invocations are accepted in both syntaxes (A.2 omits them, §3.3.2 needs them).
* Subscript ranges may be open at both ends (``a[:e]``, ``a[s:]``, ``a[:]``).
* Unparenthesized tuples ``a, b`` are accepted as the whole right-hand side of an assignment (the text of
  §3.3.3 shows them; the rvalue grammar omits them).
* Default values of fragment parameters may carry a leading ``-`` on numbers even in compositional syntax
  (a literal-expr has no unary minus, so negative defaults would otherwise be impossible).
"""

from __future__ import annotations

from nnkiln.frontends.nnef.ast import (
    Argument,
    ArrayExpr,
    ArrayType,
    Assignment,
    BinaryExpr,
    Builtin,
    Comprehension,
    Expr,
    Fragment,
    Graph,
    Identifier,
    IfElseExpr,
    Invocation,
    Literal,
    Param,
    Prim,
    PrimType,
    Result,
    Subscript,
    TensorType,
    TupleExpr,
    TupleType,
    Type,
    UnaryExpr,
)
from nnkiln.frontends.nnef.lexer import Tok, Token, brief, iter_tokens
from nnkiln.ir.errors import NnefError
from nnkiln.limits import MAX_NESTING, line_column, nesting_depth

EXT_FRAGMENTS = "KHR_enable_fragment_definitions"
EXT_OPERATORS = "KHR_enable_operator_expressions"

_PRIM_NAMES = {"integer": Prim.INTEGER, "scalar": Prim.SCALAR, "logical": Prim.LOGICAL,
               "string": Prim.STRING}
_BUILTINS = ("shape_of", "length_of", "range_of", "integer", "scalar", "logical", "string")
_COMPARISON = ("<", "<=", ">", ">=", "==", "!=")


def _check_nesting(text: str, file: str) -> None:
    """Brackets nested deeper than ``nnkiln.limits.MAX_NESTING`` are refused before tokenizing: the parser is
    recursive descent (deeper input would overflow the interpreter's stack)."""
    depth, pos = nesting_depth(text, MAX_NESTING, hash_comments=True, angles=False)
    if pos >= 0:
        line, column = line_column(text, pos)
        raise NnefError(f"§3.2: expression nested too deeply: brackets nested more than {MAX_NESTING} deep "
                        "(nnkiln's limit)", file=file, line=line,
                        column=column)


class Parser:
    def __init__(self, text: str, file: str = "", *, stdlib: bool = False, lenient: bool = False) -> None:
        self.file = file
        self.lenient = lenient
        _check_nesting(text, file)
        self._stream = iter_tokens(text, file)  # tokenized on demand: an early error stops the lexer too
        self.toks: list[Token] = []
        self.pos = 0
        self.stdlib = stdlib
        self.fragments_enabled = stdlib
        self.operators_enabled = stdlib

    # -- token helpers ------------------------------------------------------------------------
    def _fill(self, index: int) -> None:
        """Tokenize until ``toks`` holds ``index`` or ends with EOF."""
        while len(self.toks) <= index and not (self.toks and self.toks[-1].kind is Tok.EOF):
            self.toks.append(next(self._stream))

    @property
    def tok(self) -> Token:
        self._fill(self.pos)
        return self.toks[self.pos]

    def peek(self, k: int = 1) -> Token:
        self._fill(self.pos + k)
        return self.toks[min(self.pos + k, len(self.toks) - 1)]

    def error(self, msg: str, tok: Token | None = None) -> NnefError:
        t = tok or self.tok
        return NnefError(msg, file=self.file, line=t.line, column=t.column)

    def is_op(self, text: str) -> bool:
        return self.tok.kind is Tok.OP and self.tok.text == text

    def is_kw(self, text: str) -> bool:
        return self.tok.kind is Tok.KEYWORD and self.tok.text == text

    def advance(self) -> Token:
        t = self.tok
        if t.kind is not Tok.EOF:
            self.pos += 1
        return t

    def expect_op(self, text: str, where: str = "") -> Token:
        if not self.is_op(text):
            ctx = f" {where}" if where else ""
            raise self.error(f"§3.2: syntax error: expected '{text}'{ctx}, found {self.tok.describe()}")
        return self.advance()

    def expect_kw(self, text: str) -> Token:
        if not self.is_kw(text):
            raise self.error(f"§3.2: syntax error: expected '{text}', found {self.tok.describe()}")
        return self.advance()

    def expect_ident(self, what: str = "an identifier") -> Token:
        if self.tok.kind is not Tok.IDENT:
            if self.tok.kind is Tok.KEYWORD:
                raise self.error(f"§3.1: keyword '{self.tok.text}' cannot be used as an identifier")
            raise self.error(f"§3.2: syntax error: expected {what}, found {self.tok.describe()}")
        return self.advance()

    def require_operators(self, tok: Token, what: str) -> None:
        if not self.operators_enabled:
            raise self.error(f"§3.2.3: {what} requires 'extension {EXT_OPERATORS};'", tok)

    # -- document -----------------------------------------------------------------------------
    def parse_header(self) -> tuple[tuple[int, int], list[str]]:
        self.expect_kw("version")
        t = self.tok
        if t.kind is not Tok.NUMBER or "." not in t.text or "e" in t.text.lower():
            raise self.error("§3.2.4: the version must be a numeric literal 'major.minor' (e.g. 1.0)")
        self.advance()
        major_s, minor_s = t.text.split(".")
        if len(major_s) > 9 or len(minor_s) > 9:
            raise self.error(f"§3.2.4: unsupported NNEF version {brief(t.text)} (this reader implements 1.0)", t)
        version = (int(major_s), int(minor_s))
        if version[0] != 1:
            raise self.error(f"§3.2.4: unsupported NNEF version {t.text} (this reader implements 1.0)", t)
        self.expect_op(";", "after the version")
        extensions: list[str] = []
        while self.is_kw("extension"):
            self.advance()
            names = [self.expect_ident("an extension name").text]
            while self.tok.kind is Tok.IDENT or (self.lenient and self.is_op(",")):
                if self.is_op(","):  # the Khronos parser's separator (it rejects the spec's white space)
                    self.advance()
                names.append(self.expect_ident("an extension name").text)
            if self.is_op(","):
                raise self.error("§3.2.4: extension names are separated by white space, not ',' "
                                 "(lenient mode accepts ',', as the Khronos parser does)")
            self.expect_op(";", "after the extension list")
            extensions.extend(names)
        self.fragments_enabled = EXT_FRAGMENTS in extensions
        self.operators_enabled = EXT_OPERATORS in extensions
        return version, extensions

    def parse_document(self) -> tuple[tuple[int, int], list[str], list[Fragment], Graph]:
        version, extensions = self.parse_header()
        fragments: list[Fragment] = []
        while self.is_kw("fragment"):
            if not self.fragments_enabled:
                raise self.error(f"§3.2.2: fragment definitions require 'extension {EXT_FRAGMENTS};'")
            fragments.append(self.parse_fragment())
        if not self.is_kw("graph"):
            raise self.error(f"§3.2.4: syntax error: expected a fragment or the graph definition, "
                             f"found {self.tok.describe()}")
        graph = self.parse_graph()
        if self.tok.kind is not Tok.EOF:
            raise self.error(f"§3.2.4: the graph definition must be the last item of the document, "
                             f"found {self.tok.describe()}")
        return version, extensions, fragments, graph

    def parse_fragment_list(self) -> list[Fragment]:
        """Standard-library mode: a sequence of fragments, bodies optional (primitives)."""
        out: list[Fragment] = []
        while self.tok.kind is not Tok.EOF:
            out.append(self.parse_fragment())
        return out

    # -- declarations -------------------------------------------------------------------------
    def parse_fragment(self) -> Fragment:
        start = self.expect_kw("fragment")
        name = self.expect_ident("a fragment name").text
        generic, default = False, None
        if self.is_op("<"):
            self.advance()
            self.expect_op("?", "in the generic declaration")
            generic = True
            if self.is_op("="):
                self.advance()
                t = self.tok
                if t.kind is not Tok.KEYWORD or t.text not in _PRIM_NAMES:
                    raise self.error("§3.3.1: the default of a generic type must be a primitive type "
                                     "(integer, scalar, logical or string)")
                self.advance()
                default = _PRIM_NAMES[t.text]
            self.expect_op(">", "closing the generic declaration")
        self.expect_op("(", "opening the parameter list")
        params = [self.parse_param()]
        while self.is_op(","):
            self.advance()
            params.append(self.parse_param())
        self.expect_op(")", "closing the parameter list")
        self.expect_op("->", "before the result list")
        self.expect_op("(", "opening the result list")
        results = [self.parse_result()]
        while self.is_op(","):
            self.advance()
            results.append(self.parse_result())
        self.expect_op(")", "closing the result list")
        body = None
        if self.is_op("{") or not self.stdlib:
            body = self.parse_body()
        return Fragment(start.line, start.column, name, generic, default, params, results, body,
                        standard=self.stdlib)

    def parse_param(self) -> Param:
        t = self.expect_ident("a parameter name")
        self.expect_op(":", "after the parameter name")
        typ = self.parse_type()
        default = None
        if self.is_op("="):
            self.advance()
            default = self.parse_literal_expr()
        return Param(t.text, typ, default, t.line, t.column)

    def parse_result(self) -> Result:
        t = self.expect_ident("a result name")
        self.expect_op(":", "after the result name")
        return Result(t.text, self.parse_type(), t.line, t.column)

    def parse_type(self) -> Type:
        t = self.tok
        typ: Type
        if self.is_op("("):
            self.advance()
            items = [self.parse_type()]
            while self.is_op(","):
                self.advance()
                items.append(self.parse_type())
            self.expect_op(")", "closing the tuple type")
            if len(items) < 2:
                raise self.error("§3.2.2: a tuple type needs at least two items", t)
            typ = TupleType(tuple(items))
        elif self.is_kw("tensor"):
            self.advance()
            item = None
            if self.is_op("<"):
                self.advance()
                if not self.is_op(">"):
                    it = self.tok
                    if self.is_op("?"):
                        item = Prim.GENERIC
                    elif it.kind is Tok.KEYWORD and it.text in _PRIM_NAMES:
                        item = _PRIM_NAMES[it.text]
                    elif it.kind is Tok.KEYWORD and it.text == "tensor":
                        raise self.error("§3.3.1: the data type of a tensor must be a primitive type")
                    else:
                        raise self.error(f"§3.2.2: syntax error: expected a type name, found "
                                         f"{it.describe()}")
                    self.advance()
                self.expect_op(">", "closing the tensor type")
            typ = TensorType(item)
        elif self.is_op("?"):
            self.advance()
            typ = PrimType(Prim.GENERIC)
        elif t.kind is Tok.KEYWORD and t.text in _PRIM_NAMES:
            self.advance()
            typ = PrimType(_PRIM_NAMES[t.text])
        else:
            raise self.error(f"§3.2.2: syntax error: expected a type, found {t.describe()}")
        while self.is_op("[") and self.peek().kind is Tok.OP and self.peek().text == "]":
            self.advance()
            self.advance()
            typ = ArrayType(typ)
        return typ

    def parse_literal_expr(self) -> Expr:
        t = self.tok
        if self.is_op("["):
            self.advance()
            items: list[Expr] = []
            if not self.is_op("]"):
                items.append(self.parse_literal_expr())
                while self.is_op(","):
                    self.advance()
                    items.append(self.parse_literal_expr())
            self.expect_op("]", "closing the array")
            return ArrayExpr(t.line, t.column, items)
        if self.is_op("("):
            self.advance()
            items = [self.parse_literal_expr()]
            while self.is_op(","):
                self.advance()
                items.append(self.parse_literal_expr())
            self.expect_op(")", "closing the tuple")
            if len(items) < 2:
                raise self.error("§3.2.2: a tuple literal needs at least two items", t)
            return TupleExpr(t.line, t.column, items)
        lit = self.parse_literal(allow_minus=True)
        if lit is None:
            raise self.error(f"§3.2.2: a default value must be a literal expression, found {t.describe()}")
        return lit

    def parse_literal(self, allow_minus: bool) -> Literal | None:
        t = self.tok
        if t.kind in (Tok.NUMBER, Tok.STRING, Tok.LOGICAL):
            self.advance()
            return Literal(t.line, t.column, t.value)  # type: ignore[arg-type]
        if allow_minus and self.is_op("-") and self.peek().kind is Tok.NUMBER:
            self.advance()
            n = self.advance()
            return Literal(t.line, t.column, -n.value)  # type: ignore[operator]
        return None

    # -- graph and bodies ---------------------------------------------------------------------
    def parse_graph(self) -> Graph:
        start = self.expect_kw("graph")
        name = self.expect_ident("the graph name").text
        self.expect_op("(", "opening the graph inputs")
        inputs = self.parse_ident_list()
        self.expect_op(")", "closing the graph inputs")
        self.expect_op("->", "before the graph outputs")
        self.expect_op("(", "opening the graph outputs")
        outputs = self.parse_ident_list()
        self.expect_op(")", "closing the graph outputs")
        body = self.parse_body()
        return Graph(start.line, start.column, name, inputs, outputs, body)

    def parse_ident_list(self) -> list[str]:
        names = [self.expect_ident().text]
        while self.is_op(","):
            self.advance()
            names.append(self.expect_ident().text)
        return names

    def parse_body(self) -> list[Assignment]:
        self.expect_op("{", "opening the body")
        body: list[Assignment] = []
        while not self.is_op("}"):
            if self.tok.kind is Tok.EOF:
                raise self.error("§3.2.1: syntax error: unexpected end of input inside a body")
            body.append(self.parse_assignment())
        if not body:
            raise self.error("§3.2.1: a body must contain at least one assignment")
        self.expect_op("}")
        return body

    def parse_assignment(self) -> Assignment:
        start = self.tok
        lhs = self.parse_lvalue(top=True)
        self.expect_op("=", "after the left-hand side of the assignment")
        if self.operators_enabled:
            rhs = self.parse_expr(allow_tuple=True)
        else:
            t = self.tok
            if t.kind is not Tok.IDENT or not (self.peek().kind is Tok.OP and self.peek().text in "(<"):
                raise self.error(f"§3.2.1: in flat syntax the right-hand side of an assignment must be "
                                 f"an invocation (other expressions require 'extension "
                                 f"{EXT_OPERATORS};'), found {t.describe()}")
            rhs = self.parse_invocation()
        self.expect_op(";", "at the end of the assignment")
        return Assignment(start.line, start.column, lhs, rhs)

    def parse_lvalue(self, top: bool = False) -> Expr:
        t = self.tok
        if self.is_op("["):
            self.advance()
            items: list[Expr] = []
            if not self.is_op("]"):
                items.append(self.parse_lvalue())
                while self.is_op(","):
                    self.advance()
                    items.append(self.parse_lvalue())
            self.expect_op("]", "closing the array on the left-hand side")
            node: Expr = ArrayExpr(t.line, t.column, items)
        elif self.is_op("("):
            self.advance()
            items = [self.parse_lvalue()]
            while self.is_op(","):
                self.advance()
                items.append(self.parse_lvalue())
            self.expect_op(")", "closing the tuple on the left-hand side")
            if len(items) < 2:
                raise self.error("§3.3.2: the left-hand side of an assignment must be an identifier or "
                                 "an array/tuple of identifiers (a parenthesized single item is not)", t)
            node = TupleExpr(t.line, t.column, items)
        elif t.kind is Tok.IDENT:
            self.advance()
            node = Identifier(t.line, t.column, t.text)
        else:
            if t.kind is Tok.KEYWORD:
                raise self.error(f"§3.1: keyword '{t.text}' cannot be used as an identifier")
            raise self.error(f"§3.3.2: the left-hand side of an assignment must be an identifier or an "
                             f"array/tuple of identifiers, found {t.describe()}")
        if top and self.is_op(","):
            items = [node]
            while self.is_op(","):
                self.advance()
                items.append(self.parse_lvalue())
            node = TupleExpr(t.line, t.column, items)
        return node

    # -- invocations --------------------------------------------------------------------------
    def parse_invocation(self) -> Invocation:
        t = self.expect_ident("an operation name")
        generic = None
        if self.is_op("<"):
            self.advance()
            g = self.tok
            if self.is_op("?"):
                generic = Prim.GENERIC
            elif g.kind is Tok.KEYWORD and g.text in _PRIM_NAMES:
                generic = _PRIM_NAMES[g.text]
            else:
                raise self.error(f"§3.3.2: a generic argument must be a primitive type name or '?', "
                                 f"found {g.describe()}")
            self.advance()
            self.expect_op(">", "closing the generic argument")
        self.expect_op("(", f"after '{t.text}'")
        args: list[Argument] = []
        if self.is_op(")"):
            raise self.error("§3.2.1: an invocation needs at least one argument")
        while True:
            a = self.tok
            if a.kind is Tok.IDENT and self.peek().kind is Tok.OP and self.peek().text == "=":
                self.advance()
                self.advance()
                args.append(Argument(a.text, self.parse_value(), a.line, a.column))
            else:
                args.append(Argument(None, self.parse_value(), a.line, a.column))
            if self.is_op(","):
                self.advance()
                continue
            break
        self.expect_op(")", "closing the argument list")
        return Invocation(t.line, t.column, t.text, generic, args)

    def parse_value(self) -> Expr:
        return self.parse_expr(allow_tuple=False) if self.operators_enabled else self.parse_flat_rvalue()

    def parse_flat_rvalue(self) -> Expr:
        t = self.tok
        lit = self.parse_literal(allow_minus=True)
        if lit is not None:
            return lit
        if t.kind is Tok.IDENT:
            if self.peek().kind is Tok.OP and self.peek().text in ("(",):
                raise self.error(f"§3.2.1: nested invocations require 'extension {EXT_OPERATORS};'")
            self.advance()
            return Identifier(t.line, t.column, t.text)
        if self.is_op("["):
            self.advance()
            items: list[Expr] = []
            if not self.is_op("]"):
                items.append(self.parse_flat_rvalue())
                while self.is_op(","):
                    self.advance()
                    items.append(self.parse_flat_rvalue())
            self.expect_op("]", "closing the array")
            return ArrayExpr(t.line, t.column, items)
        if self.is_op("("):
            self.advance()
            items = [self.parse_flat_rvalue()]
            while self.is_op(","):
                self.advance()
                items.append(self.parse_flat_rvalue())
            self.expect_op(")", "closing the tuple")
            if len(items) < 2:
                raise self.error(f"§3.2.1: a parenthesized expression requires 'extension {EXT_OPERATORS};' "
                                 "(a tuple needs at least two items)", t)
            return TupleExpr(t.line, t.column, items)
        if t.kind is Tok.KEYWORD:
            if t.text in _BUILTINS:
                raise self.error(f"§3.2.3: the built-in '{t.text}' requires 'extension {EXT_OPERATORS};'")
            raise self.error(f"§3.1: keyword '{t.text}' cannot be used as an identifier")
        if t.kind is Tok.OP and t.text in ("+", "-", "!"):
            raise self.error(f"§3.2.3: operator '{t.text}' requires 'extension {EXT_OPERATORS};'")
        raise self.error(f"§3.2.1: syntax error: expected an argument value, found {t.describe()}")

    # -- extended expressions (§3.2.3) ---------------------------------------------------------
    def parse_expr(self, allow_tuple: bool = False) -> Expr:
        t = self.tok
        first = self.parse_ifelse()
        if allow_tuple and self.is_op(","):
            items = [first]
            while self.is_op(","):
                self.advance()
                items.append(self.parse_ifelse())
            return TupleExpr(t.line, t.column, items)
        return first

    def parse_ifelse(self) -> Expr:
        t = self.tok
        value = self.parse_in()
        if self.is_kw("if"):
            self.advance()
            cond = self.parse_in()
            self.expect_kw("else")
            other = self.parse_ifelse()
            return IfElseExpr(t.line, t.column, cond, value, other)
        return value

    def parse_in(self) -> Expr:
        left = self.parse_logical()
        while self.is_kw("in"):
            op = self.advance()
            right = self.parse_logical()
            left = BinaryExpr(op.line, op.column, "in", left, right)
        return left

    def _is_logical_op(self) -> bool:
        t = self.tok
        if t.kind is Tok.OP and t.text in ("&&", "||"):
            return True
        return t.kind is Tok.IDENT and t.text in ("and", "or") and not (
            self.peek().kind is Tok.OP and self.peek().text in ("(", "<", "="))

    def parse_logical(self) -> Expr:
        left = self.parse_comparison()
        while self._is_logical_op():
            op = self.advance()
            name = {"and": "&&", "or": "||"}.get(op.text, op.text)
            right = self.parse_comparison()
            left = BinaryExpr(op.line, op.column, name, left, right)
        return left

    def parse_comparison(self) -> Expr:
        left = self.parse_additive()
        while self.tok.kind is Tok.OP and self.tok.text in _COMPARISON:
            op = self.advance()
            right = self.parse_additive()
            left = BinaryExpr(op.line, op.column, op.text, left, right)
        return left

    def parse_additive(self) -> Expr:
        left = self.parse_multiplicative()
        while self.tok.kind is Tok.OP and self.tok.text in ("+", "-"):
            op = self.advance()
            right = self.parse_multiplicative()
            left = BinaryExpr(op.line, op.column, op.text, left, right)
        return left

    def parse_multiplicative(self) -> Expr:
        left = self.parse_power()
        while self.tok.kind is Tok.OP and self.tok.text in ("*", "/"):
            op = self.advance()
            right = self.parse_power()
            left = BinaryExpr(op.line, op.column, op.text, left, right)
        return left

    def parse_power(self) -> Expr:
        base = self.parse_unary()
        if self.is_op("^"):
            op = self.advance()
            exponent = self.parse_power()
            return BinaryExpr(op.line, op.column, "^", base, exponent)
        return base

    def parse_unary(self) -> Expr:
        t = self.tok
        if t.kind is Tok.OP and t.text in ("+", "-", "!"):
            self.advance()
            return UnaryExpr(t.line, t.column, t.text, self.parse_unary())
        return self.parse_postfix()

    def parse_postfix(self) -> Expr:
        node = self.parse_primary()
        while self.is_op("["):
            t = self.advance()
            begin: Expr | None = None
            end: Expr | None = None
            if self.is_op(":"):
                self.advance()
                if not self.is_op("]"):
                    end = self.parse_ifelse()
                node = Subscript(t.line, t.column, node, None, end, True)
            else:
                begin = self.parse_ifelse()
                if self.is_op(":"):
                    self.advance()
                    if not self.is_op("]"):
                        end = self.parse_ifelse()
                    node = Subscript(t.line, t.column, node, begin, end, True)
                else:
                    node = Subscript(t.line, t.column, node, begin)
            self.expect_op("]", "closing the subscript")
        return node

    def parse_primary(self) -> Expr:
        t = self.tok
        if t.kind in (Tok.NUMBER, Tok.STRING, Tok.LOGICAL):
            self.advance()
            return Literal(t.line, t.column, t.value)  # type: ignore[arg-type]
        if t.kind is Tok.IDENT:
            nxt = self.peek()
            if nxt.kind is Tok.OP and nxt.text == "(":
                return self.parse_invocation()
            if (nxt.kind is Tok.OP and nxt.text == "<" and self.peek(2).kind in (Tok.KEYWORD, Tok.OP)
                    and self.peek(2).text in (*_PRIM_NAMES, "?") and self.peek(3).text == ">"):
                return self.parse_invocation()
            self.advance()
            return Identifier(t.line, t.column, t.text)
        if t.kind is Tok.KEYWORD and t.text in _BUILTINS:
            self.advance()
            self.expect_op("(", f"after the built-in '{t.text}'")
            if self.is_op(")"):
                raise self.error(f"§3.3.3: built-in '{t.text}' takes exactly one positional argument")
            arg = self.parse_ifelse()
            if not self.is_op(")"):
                raise self.error(f"§3.3.3: built-in '{t.text}' takes exactly one positional argument")
            self.advance()
            return Builtin(t.line, t.column, t.text, arg)
        if self.is_op("("):
            self.advance()
            first = self.parse_ifelse()
            if self.is_op(","):
                items = [first]
                while self.is_op(","):
                    self.advance()
                    items.append(self.parse_ifelse())
                self.expect_op(")", "closing the tuple")
                return TupleExpr(t.line, t.column, items)
            self.expect_op(")", "closing the parenthesized expression")
            return first
        if self.is_op("["):
            self.advance()
            if self.is_kw("for"):
                return self.parse_comprehension(t)
            items: list[Expr] = []
            if not self.is_op("]"):
                items.append(self.parse_ifelse())
                while self.is_op(","):
                    self.advance()
                    items.append(self.parse_ifelse())
            self.expect_op("]", "closing the array")
            return ArrayExpr(t.line, t.column, items)
        if t.kind is Tok.KEYWORD:
            raise self.error(f"§3.2.3: syntax error: unexpected keyword '{t.text}'")
        raise self.error(f"§3.2.3: syntax error: expected an expression, found {t.describe()}")

    def parse_comprehension(self, start: Token) -> Expr:
        self.expect_kw("for")
        iterators: list[tuple[str, Expr]] = []
        while True:
            name = self.expect_ident("a loop variable").text
            self.expect_kw("in")
            iterators.append((name, self.parse_logical()))
            if self.is_op(","):
                self.advance()
                continue
            break
        cond = None
        if self.is_kw("if"):
            self.advance()
            cond = self.parse_ifelse()
        self.expect_kw("yield")
        body = self.parse_ifelse()
        self.expect_op("]", "closing the comprehension")
        return Comprehension(start.line, start.column, iterators, cond, body)
