"""Module verification that names the failing op and rule.

xDSL's ``Operation.verify`` attaches the whole printed module to an error; this walker verifies one
op at a time (innermost first) so the error it raises is short: the op name, where the op is (its
function and result name) and the broken rule with its values.

Speed (verification runs after every pass, so it must be cheap). Each op is checked by a fast path
that does exactly what xDSL's ``Operation.verify`` + ``OpDef.verify`` + the op's own ``verify_`` do,
with the per-class work done once (``_Plan``: the op definition's constraints pre-sorted, plain
``BaseAttr`` constraints turned into ``isinstance`` checks). Whenever the fast path finds anything
wrong it does not report it itself: it re-runs xDSL's original ``op.verify(verify_nested_ops=False)``,
whose diagnostic is then raised exactly as before. So an op passes the fast path only if the same
checks as xDSL's pass, and every error is xDSL's own (``verify_module(m, fast=False)`` runs xDSL's
verifier alone; tests compare both on every dialect test case).

Memo of verified op signatures (``_SIGNATURES``). The op-local part of verification -- the IRDL
constraints on operand/result types, properties and attributes, and the custom ``verify_`` of
classes that declare ``VERIFY_IS_LOCAL = True`` -- is a pure function of the op's *signature*: its
class, its operand types, its result types and its property and attribute values (xDSL attributes
are immutable values). A signature that verified once verifies again, so it is remembered and the
op-local part is skipped for it. For an op with regions the signature also holds what the IRDL
region checks read (block counts, entry block argument types); its custom ``verify_`` always runs.
The memo is keyed by the identities of those objects and holds weak references to them: a hit
requires every referenced object to still be alive and to be the very object the op holds now (ids
are unique among live objects), so a changed type or attribute -- even an equal but rebuilt one --
is a miss and is verified in full. What is never memoized: the structural checks (erased operands,
terminators), traits (they may look at parents or nested ops), custom ``verify_`` of classes not
declaring ``VERIFY_IS_LOCAL`` or having regions; ops with successors take xDSL's path entirely.

``VERIFY_IS_LOCAL = True`` on an op class is a promise: its ``verify_`` reads only the op's operand
types, result types, properties, attributes and process-constant data (e.g. the target registry),
never operand owners, users, parents or regions.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import ErasedSSAValue, Operation, OpResult
from xdsl.irdl import IRDLOperation
from xdsl.irdl.constraints import BaseAttr, EqIntConstraint, RangeLengthConstraint, RangeOf, VerificationContext
from xdsl.irdl.operations import (
    OpDef,
    OptAttributeDef,
    OptPropertyDef,
    VariadicDef,
    VarIRConstruct,
    irdl_op_verify_arg_list,
    irdl_op_verify_regions,
)
from xdsl.traits import IsolatedFromAbove, IsTerminator, NoTerminator, OpTrait
from xdsl.utils.exceptions import DiagnosticException, VerifyException

from nnkiln.ir.errors import VerifyError
from nnkiln.ir.walk_cache import walk_memo


def describe_op(op: Operation) -> str:
    """Where an op is: ``@main, op #3 (%conv)``: its function, its index in its block, its result name."""
    func = op
    while func.parent_op() is not None and getattr(func, "sym_name", None) is None:
        func = func.parent_op()  # type: ignore[assignment]
    name = getattr(func, "sym_name", None)  # None: a module without a name, or no function around the op
    where = f"@{name.data}" if name is not None else ""
    from nnkiln.ir.diagnostics import op_source

    text = f"op #{_index(op)}"
    if op.results and op.results[0].name_hint:
        text += f" (%{op.results[0].name_hint})"
    src = op_source(op)
    if src:
        text += f" from {src}"
    return f"{where}, {text}" if where else text


def _index(op: Operation) -> int:
    block = op.parent_block()
    if block is None:
        return 0
    for i, o in enumerate(block.ops):
        if o is op:
            return i
    return 0


# -- the fast path ------------------------------------------------------------------------------


class _Mismatch(Exception):
    """The fast path found something to report: xDSL's original verifier reports it."""


# one checker per fixed (non-variadic) operand/result: (base class for an isinstance check, or None,
# the constraint to run otherwise)
_Check = tuple[type | None, Any]


@dataclass
class _Plan:
    """What verifying one op class takes, computed once per class."""

    op_def: OpDef
    custom: Callable[[Operation], None] | None
    custom_local: bool
    operands: list[_Check] | None  # None: variadic definitions, use xDSL's generic code
    results: list[_Check] | None
    has_regions: bool  # region definitions
    props: list[tuple[str, bool, type | None, Any]]  # name, optional, base class or None, constraint
    attrs: list[tuple[str, bool, type | None, Any]]
    prop_names: frozenset[str]
    traits: tuple[Any, ...]  # those whose verify does something


def _base_of_single(constr: Any) -> type | None:
    """``X`` if ``constr`` is ``RangeLengthConstraint(RangeOf(BaseAttr(X)), length 1)`` (one value of base ``X``)."""
    if (isinstance(constr, RangeLengthConstraint) and isinstance(constr.length, EqIntConstraint)
            and constr.length.value == 1 and isinstance(constr.constraint, RangeOf)
            and type(constr.constraint.constr) is BaseAttr and isinstance(constr.constraint.constr.attr, type)):
        return constr.constraint.constr.attr
    return None


def _base_of_attr(constr: Any) -> type | None:
    if type(constr) is BaseAttr and isinstance(constr.attr, type):
        return constr.attr
    return None


def _fixed(defs: Sequence[tuple[str, Any]]) -> list[_Check] | None:
    if any(isinstance(d, VariadicDef) for _, d in defs):
        return None
    return [(_base_of_single(d.constr), d.constr) for _, d in defs]


def _generated_verify(cls: type) -> tuple[OpDef, Callable[[Operation], None] | None] | None:
    """The op definition and custom verifier inside xDSL's generated ``verify_`` of ``cls``, if it is one."""
    fn = getattr(cls, "verify_", None)
    code = getattr(fn, "__code__", None)
    if code is None or getattr(fn, "__qualname__", "") != "get_accessors_from_op_def.<locals>.verify_":
        return None
    cells = dict(zip(code.co_freevars, fn.__closure__ or ()))
    if "op_def" not in cells:
        return None
    op_def = cells["op_def"].cell_contents
    if not isinstance(op_def, OpDef) or op_def is not cls.get_irdl_definition():  # type: ignore[attr-defined]
        return None
    custom = cells["custom_verify"].cell_contents if "custom_verify" in cells else None
    return op_def, custom


_PLANS: dict[type, _Plan | None] = {}


def _plan_of(cls: type) -> _Plan | None:
    try:
        return _PLANS[cls]
    except KeyError:
        pass
    plan: _Plan | None = None
    if isinstance(cls, type) and issubclass(cls, IRDLOperation):
        found = _generated_verify(cls)
        if found is not None and not found[0].successors:
            op_def, custom = found
            plan = _Plan(
                op_def=op_def,
                custom=custom,
                # an op with regions may check its regions' contents: never treated as local
                custom_local=bool(getattr(cls, "VERIFY_IS_LOCAL", False)) and not op_def.regions,
                operands=_fixed(op_def.operands),
                results=_fixed(op_def.results),
                has_regions=bool(op_def.regions),
                props=[(n, isinstance(d, OptPropertyDef), _base_of_attr(d.constr), d.constr)
                       for n, d in op_def.properties.items()],
                attrs=[(n, isinstance(d, OptAttributeDef), _base_of_attr(d.constr), d.constr)
                       for n, d in op_def.attributes.items()],
                prop_names=frozenset(op_def.properties),
                traits=tuple(t for t in op_def.traits if type(t).verify is not OpTrait.verify),
            )
    _PLANS[cls] = plan
    return plan


def _check_fixed(values: Sequence[Any], checks: list[_Check], ctx: VerificationContext) -> None:
    if len(values) != len(checks):
        raise _Mismatch
    for v, (base, constr) in zip(values, checks):
        t = v.type
        if base is not None:
            if not isinstance(t, base):
                raise _Mismatch
        else:
            constr.verify((t,), ctx)


def _check_named(values: dict[str, Any], defs: list[tuple[str, bool, type | None, Any]],
                 names: frozenset[str] | None, ctx: VerificationContext) -> None:
    """The defined properties/attributes; ``names``: no others may be present (properties)."""
    for name, optional, base, constr in defs:
        v = values.get(name)
        if v is None:
            if optional:
                continue
            raise _Mismatch
        if base is not None:
            if not isinstance(v, base):
                raise _Mismatch
        else:
            constr.verify(v, ctx)
    if names is not None:
        for name in values:
            if name not in names:
                raise _Mismatch


def _irdl_local(op: Operation, plan: _Plan) -> None:
    """``OpDef.verify`` without the traits (the same checks in the same order)."""
    ctx = VerificationContext()
    if plan.operands is not None:
        _check_fixed(op.operands, plan.operands, ctx)
    else:
        irdl_op_verify_arg_list(op, plan.op_def, VarIRConstruct.OPERAND, ctx)
    if plan.results is not None:
        _check_fixed(op.results, plan.results, ctx)
    else:
        irdl_op_verify_arg_list(op, plan.op_def, VarIRConstruct.RESULT, ctx)
    if plan.has_regions:
        irdl_op_verify_regions(op, plan.op_def, ctx)
    elif op.regions:
        raise _Mismatch
    _check_named(op.properties, plan.props, plan.prop_names, ctx)
    _check_named(op.attributes, plan.attrs, None, ctx)


def _structure(op: Operation) -> None:
    """``Operation.verify``'s own checks (ops with successors never take the fast path)."""
    for operand in op._operands:
        if isinstance(operand, ErasedSSAValue):
            raise _Mismatch
    if op._successors:
        raise _Mismatch
    block = op.parent
    if block is not None and block._last_op is op:
        region = block.parent
        if region is not None:
            n = len(region.blocks)
            if n == 1:
                parent_op = region.parent
                if parent_op is not None and not parent_op.has_trait(NoTerminator) and not op.has_trait(IsTerminator):
                    raise _Mismatch
            elif n > 1 and not op.has_trait(IsTerminator):
                raise _Mismatch


def _isolated_from_above(op: Operation) -> None:
    """``IsolatedFromAbove.verify`` (the same traversal) with the ancestor test memoized per block:
    every operand of an op nested in ``op`` (not below a nested isolated op) is defined inside ``op``."""
    inside: dict[int, bool] = {}

    def block_inside(block: Any) -> bool:
        known = inside.get(id(block))
        if known is None:
            known = op.is_ancestor(block)
            inside[id(block)] = known
        return known

    regions = list(op.regions)
    while regions:
        region = regions.pop()
        for block in region.blocks:
            for child in block.ops:
                for operand in child._operands:
                    owner = operand.owner
                    if owner is op:
                        raise _Mismatch
                    where = owner.parent if isinstance(owner, Operation) else owner
                    if where is None or not block_inside(where):
                        raise _Mismatch
                if child.regions and not child.has_trait(IsolatedFromAbove):
                    regions += child.regions


# -- memo of verified signatures --------------------------------------------------------------

_SIGNATURES: dict[tuple[Any, ...], tuple[weakref.ref[Any], ...]] = {}
_MAX_SIGNATURES = 1 << 16


def _signature(op: Operation) -> tuple[tuple[Any, ...], list[Any]]:
    operands, results, props, attrs, regions = op._operands, op.results, op.properties, op.attributes, op.regions
    objs: list[Any] = [type(op), *[v._type for v in operands], *[r._type for r in results], *props.values(),
                       *attrs.values()]
    shape: list[int] = []
    for region in regions:  # what the IRDL region checks read: block counts, entry argument types
        first = region.first_block
        args = first._args if first is not None else ()
        shape.append(len(region.blocks))
        shape.append(len(args))
        objs.extend([a._type for a in args])
    # the counts first: then equal keys have their ids and names at the same positions
    return (len(operands), len(results), len(props), len(attrs), len(regions), *shape, *map(id, objs), *props,
            *attrs), objs


def _known(key: tuple[Any, ...], objs: list[Any]) -> bool:
    refs = _SIGNATURES.get(key)
    if refs is None:
        return False
    for r, o in zip(refs, objs):
        if r() is not o:
            return False
    return True


def _remember(key: tuple[Any, ...], objs: list[Any]) -> None:
    try:
        refs = tuple(weakref.ref(o) for o in objs)
    except TypeError:  # an attribute that cannot be weakly referenced: do not memoize
        return
    if len(_SIGNATURES) >= _MAX_SIGNATURES:  # drop the entries of IR that no longer exists
        for k in [k for k, rs in _SIGNATURES.items() if any(r() is None for r in rs)]:
            del _SIGNATURES[k]
        if len(_SIGNATURES) >= _MAX_SIGNATURES // 2:
            _SIGNATURES.clear()
    _SIGNATURES[key] = refs


def clear_verify_memo() -> None:
    """Forget every memoized signature (tests; the memo holds only weak references)."""
    _SIGNATURES.clear()


def _verify_one(op: Operation, memo: bool) -> None:
    plan = _plan_of(type(op))
    if plan is None:
        op.verify(verify_nested_ops=False)
        return
    key: tuple[Any, ...] | None = None
    known = False
    if memo:
        key, objs = _signature(op)
        known = _known(key, objs)
    try:
        _structure(op)
        if not known:
            _irdl_local(op, plan)
        for trait in plan.traits:
            if type(trait) is IsolatedFromAbove:
                _isolated_from_above(op)
            else:
                trait.verify(op)
        if plan.custom is not None and not (known and plan.custom_local):
            plan.custom(op)
    except Exception:  # report through xDSL's own verifier, exactly as before
        op.verify(verify_nested_ops=False)
        return
    if key is not None and not known:
        _remember(key, objs)


def verify_op(op: Operation, *, fast: bool = True) -> None:
    """Verify ``op`` and everything nested in it; raise ``VerifyError`` naming the first failing op.

    ``fast=False`` runs xDSL's own verifier on every op (no fast path, no memo): the reference the
    fast path is tested against.
    """
    with walk_memo():
        _verify_walk(op, fast)


def _verify_walk(op: Operation, fast: bool) -> None:
    for inner in op.walk(reverse=False, region_first=True):
        try:
            if fast:
                _verify_one(inner, True)
            else:
                inner.verify(verify_nested_ops=False)
        except VerifyError as err:
            err.op_name = err.op_name or inner.name
            err.location = err.location or describe_op(inner)
            if hasattr(err, "__notes__"):
                del err.__notes__
            raise
        except (VerifyException, DiagnosticException) as err:
            message = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
            raise VerifyError(message, op_name=inner.name, rule="op definition", location=describe_op(inner)) from None


def verify_module(module: ModuleOp, *, fast: bool = True) -> None:
    """Verify a whole module (see ``verify_op``), then that every value is defined before it is used."""
    verify_op(module, fast=fast)
    check_defined_before_use(module)
    check_functions_return(module)


def check_functions_return(module: Operation) -> None:
    """Every ``func.func`` with a body ends it with ``func.return`` (xDSL accepts a body without its terminator; the
    lowering passes assume one: an empty body made ``tosa-to-buf`` fail with an AttributeError)."""
    from xdsl.dialects.func import FuncOp, ReturnOp

    for op in module.walk():
        if isinstance(op, FuncOp) and op.body.blocks:
            last = op.body.blocks[-1].last_op
            if not isinstance(last, ReturnOp):
                raise VerifyError("the function body does not end with func.return", op_name=op.name,
                                  rule="function terminator", location=f"@{op.sym_name.data}")


def check_defined_before_use(module: Operation) -> None:
    """Every operand is the result of an earlier op of its block or of a block around it (or a block argument).
    xDSL's parser accepts forward references and its verifier does not check dominance; the passes assume it
    (a use before the definition made ``optimize-async-deps`` fail with an IndexError). Linear in the ops."""
    position: dict[int, int] = {}
    count: dict[int, int] = {}
    for op in module.walk():
        block = op.parent_block()
        key = id(block)
        position[id(op)] = count.get(key, 0)
        count[key] = position[id(op)] + 1
    for op in module.walk():
        for k, v in enumerate(op.operands):
            if not isinstance(v, OpResult):
                continue
            definer = v.op
            block = definer.parent_block()
            user = op
            while user is not None and user.parent_block() is not block:
                user = user.parent_op()
            if user is None or position[id(user)] <= position[id(definer)]:
                name = f" (%{v.name_hint})" if v.name_hint else ""
                raise VerifyError(f"operand #{k}{name} is used before it is defined (or outside its region)",
                                  op_name=op.name, rule="definition before use", location=describe_op(op))
