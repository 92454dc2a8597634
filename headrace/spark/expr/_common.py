"""Shared helpers of the expression families (not an operator module).

Values are VARIANT columns (SQL NULL = missing); ``Compiled.error`` is a STRING column, non-null
when the row fails. Helpers here take *bound* values (column references or lambda variables,
see :func:`headrace.spark.values.let`) where they use a value more than once.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

from pyspark.sql import Column
from pyspark.sql import functions as F

from .. import values as V
from ..registry import Compiled, Ctx, first_error
from .compiler import compile_expression

CODE = V.CODE
NUM = V.NUMBER_CODES
INT_CODES = (CODE["int"], CODE["long"])
NULLISH = (CODE["missing"], CODE["null"])
LONG_MIN, LONG_MAX = -(2**63), 2**63 - 1


def compile_child(expr: Any, ctx: Ctx, *where: Any) -> Compiled:
    sub = ctx.at(".".join([ctx.where, *map(str, where)]) if ctx.where else ".".join(map(str, where)))
    return compile_expression(expr, sub)


def compile_args(args: Sequence[Any], ctx: Ctx, op: str) -> list[Compiled]:
    return [compile_child(a, ctx, op, i) for i, a in enumerate(args)]


def operands(arg: Any) -> list:
    return arg if isinstance(arg, list) else [arg]


def errors_of(compiled: Sequence[Compiled], *own: Column | None) -> Column | None:
    return first_error(*[c.error for c in compiled], *own)


def bind(values: Sequence[Column], fn: Callable[..., Column]) -> Column:
    """``fn(*xs)`` with every value evaluated once."""
    return V.let_many(list(values), fn)


def code(x: Column) -> Column:
    """Type code of a bound value (see ``values.TYPE_NAMES``)."""
    return V._code_of(x)


def with_codes(values: Sequence[Column], fn: Callable[[list, list], Column]) -> Column:
    """``fn(xs, cs)``: values bound, and their type codes bound too."""
    def inner(*xs: Column) -> Column:
        return V.let_many([code(x) for x in xs], lambda *cs: fn(list(xs), list(cs)))
    return bind(values, inner)


#: the type names as one SQL array literal: one py4j call to build (``F.array`` of 20 ``F.lit``s
#: took 23, and error messages use it often)
_TYPE_NAMES_SQL = "array(" + ", ".join("'" + n.replace("'", "\\'") + "'" for n in V.TYPE_NAMES) + ")"


def name_of_code(c: Column) -> Column:
    return F.element_at(F.expr(_TYPE_NAMES_SQL), c + 1)


def is_num(c: Column) -> Column:
    return c.isin(*NUM)


def nullish(c: Column) -> Column:
    return c <= CODE["null"]


def any_(conds: Sequence[Column]) -> Column:
    out = F.lit(False)
    for i, c in enumerate(conds):
        out = c if i == 0 else (out | c)
    return out


def all_(conds: Sequence[Column]) -> Column:
    out = F.lit(True)
    for i, c in enumerate(conds):
        out = c if i == 0 else (out & c)
    return out


# ------------------------------------------------------------------------------- numbers

def dbl(x: Column) -> Column:
    """DOUBLE of a bound number value."""
    return V._num_double(x)


def lng(x: Column) -> Column:
    return V._tvg(x, "bigint")


def dec(x: Column) -> Column:
    """DECIMAL(38,18) of a bound number (a ``{$numberDecimal}`` wrapper's from its text)."""
    return V.num_decimal(x)


def v_long(c: Column) -> Column:
    return c.cast("bigint").cast("variant")


def v_double(c: Column) -> Column:
    return c.cast("double").cast("variant")


def bytes_of(x: Column, c: Column) -> Column:
    """The bytes of a bound string (UTF-8) or binData value (type code ``c``), else NULL: what
    ``$binarySize``, ``$hash`` and ``$toHashedIndexKey`` measure or hash."""
    return (F.when(c == CODE["string"], F.encode(F.try_variant_get(x, "$", "string"), "UTF-8"))
            .when(c == CODE["binData"], V.bin_bytes(x)))


def v_bool(c: Column) -> Column:
    return c.cast("variant")


def v_string(c: Column) -> Column:
    return c.cast("string").cast("variant")


def v_date_ms(ms: Column) -> Column:
    """A date from epoch milliseconds (missing beyond +-200000 years)."""
    return F.when(ms.between(-6_000_000_000_000_000, 6_000_000_000_000_000),
                  F.timestamp_millis(ms).cast("variant"))


def date_ms(x: Column) -> Column:
    """Milliseconds since the epoch of a bound date value."""
    return F.unix_millis(V._tvg(x, "timestamp"))


_NTZ_EPOCH = "TIMESTAMP_NTZ'1970-01-01 00:00:00'"


def ms_to_ntz(ms: Column) -> Column:
    """UTC wall time (TIMESTAMP_NTZ) of epoch milliseconds, independent of the session zone."""
    days = F.floor(ms / F.lit(86_400_000))
    rest = (ms - days * F.lit(86_400_000)).cast("decimal(18,3)") / F.lit(1000)
    return F.expr(_NTZ_EPOCH) + F.make_dt_interval(days.cast("int"), F.lit(0), F.lit(0), rest.cast("decimal(18,6)"))


def ntz_to_ms(ntz: Column) -> Column:
    """Epoch milliseconds of a TIMESTAMP_NTZ read as UTC wall time."""
    secs = (ntz - F.expr(_NTZ_EPOCH)).cast("decimal(38,6)")
    return F.floor(secs * 1000).cast("bigint")


def iso_string(ms: Column) -> Column:
    """``2020-01-02T03:04:05.678Z`` of epoch milliseconds (MongoDB's date to string)."""
    return F.date_format(ms_to_ntz(ms), "yyyy-MM-dd'T'HH:mm:ss.SSS'Z'")


def long_or_double(l: Column, d: Column) -> Column:
    """The integer result when it did not overflow (``l`` non-null), else the double."""
    return F.when(l.isNotNull(), v_long(l)).otherwise(v_double(d))


# ------------------------------------------------------------------------------- errors

def msg(*parts: Any) -> Column:
    """A message column from literal strings and columns."""
    cols = [p if isinstance(p, Column) else F.lit(str(p)) for p in parts]
    return F.concat(*cols)


def err_when(cond: Column, *parts: Any) -> Column:
    return F.when(cond, msg(*parts))


def found(x: Column, c: Column | None = None) -> Column:
    """``<type> <json>`` of a bound value, short, for error messages."""
    t = name_of_code(c if c is not None else code(x))
    j = F.coalesce(F.to_json(x), F.lit(""))
    j = F.when(F.length(j) > 60, F.concat(F.substring(j, 1, 57), F.lit("..."))).otherwise(j)
    return F.concat(t, F.lit(" "), j)


def prefix(ctx: Ctx, op: str) -> str:
    return f"{op}" + (f" at '{ctx.where}'" if ctx.where else "")
