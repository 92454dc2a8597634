"""Boolean: ``$and $or $not`` over MQL truthiness (false: ``false``, null, missing, 0 of any
numeric type; everything else, including empty arrays and strings, is true). ``$and`` and ``$or``
stop at the first deciding operand (errors of later operands do not count); ``$and: []`` is
true, ``$or: []`` false. The result is a bool.

Golden cases (``tests/golden/cases/<name>.json``): ``$and`` match_and; ``$not`` match_not; ``$or``
match_or_range.
"""
from __future__ import annotations

from typing import Any

from pyspark.sql import functions as F

from .. import values as V
from ..registry import Compiled, Ctx, expression
from ._common import compile_args, operands


def _short_circuit(op: str, arg: Any, ctx: Ctx, stop_on: bool) -> Compiled:
    args = compile_args(operands(arg), ctx, op)
    if not args:
        return Compiled(F.lit(not stop_on).cast("variant"))
    truths = [V.truthy(a.value) for a in args]
    value = truths[0]
    for t in truths[1:]:
        value = (value | t) if stop_on else (value & t)
    err = None
    # an operand's error counts only when every earlier operand let evaluation go on
    for i in reversed(range(len(args))):
        e = args[i].error
        later = err
        if e is None and later is None:
            continue
        go_on = truths[i] if not stop_on else ~truths[i]
        tail = F.when(go_on, later) if later is not None else None
        err = F.coalesce(e, tail) if (e is not None and tail is not None) else (e if e is not None else tail)
    return Compiled(value.cast("variant"), err)


@expression("$and")
def and_(arg: Any, ctx: Ctx) -> Compiled:
    return _short_circuit("$and", arg, ctx, stop_on=False)


@expression("$or")
def or_(arg: Any, ctx: Ctx) -> Compiled:
    return _short_circuit("$or", arg, ctx, stop_on=True)


@expression("$not")
def not_(arg: Any, ctx: Ctx) -> Compiled:
    a = compile_args(operands(arg), ctx, "$not")[0]
    return Compiled((~V.truthy(a.value)).cast("variant"), a.error)
