"""Types: ``$convert`` (``to``, ``onError``, ``onNull``), ``$toInt $toLong $toDouble $toDecimal
$toString $toBool $toDate $toObjectId $toObject $toArray $toUUID``, ``$type``, ``$isNumber``,
``$binarySize``, ``$tsSecond`` and ``$tsIncrement``.

MongoDB's conversion table: numbers convert among themselves (to int / long only when the
truncated value fits, NaN and infinities refuse); bools to 1 / 0; numeric strings parse (base
10; integer targets need an integer string); dates to milliseconds (not to int); to string:
numbers, bools (``"true"``), dates (``2018-03-27T16:58:51.538Z``) and ObjectIds (hex); to bool:
zero is false, every string, date, object and array is true; to date: long, double, decimal
(milliseconds), ISO-8601 strings, ObjectIds and timestamps (their seconds); to ObjectId: 24 hex digits;
to object / array (MongoDB 8.3): a string of JSON text of that type, read as plain JSON (ints by
range, fractions and exponents as doubles, the last of duplicate keys).
binData (``to: "binData"`` or ``{type: "binData", subtype}``, ``format``, ``byteOrder``):
:mod:`.bindata`, through ``$convert`` only (``$toString``/``$toInt``... of binData are errors,
which keeps those operators small); a timestamp converts to a date.
Null or missing input gives ``onNull`` (default null). A failed conversion gives ``onError`` or,
without it, an error naming the operator, the target and what was found (the row goes to the DLQ).
``$type`` names the type (``"missing"`` for a missing field); ``$isNumber`` is true for int,
long, double and decimal.

A double converts to a string as MongoDB's ``%g`` (:mod:`.double_text`: six significant digits,
``1.23457e+17``). A string converts to a date as ``$dateFromString`` without a format reads it
(:mod:`.dates_parse`; MongoDB's ``TimeZoneDatabase::fromString``, in UTC). Deviations: ``$toObject`` /
``$toArray``: an object ``{"$oid": ..}`` in the text reads as an ObjectId, where
MongoDB keeps a nested document; integers beyond 64 bits stay decimals; binData vectors (subtype
9) are not converted to arrays.

Golden cases (``tests/golden/cases/<name>.json``): ``$binarySize`` project_binarysize;
``$convert`` project_toobject project_toarray; ``$toObject`` project_toobject_direct; ``$toArray``
project_toobject_direct; ``$isNumber`` addfields_isnumber; ``$toDecimal``
project_multiply_after_toint; ``$toDouble`` addfields_todouble; ``$toInt`` toint_error_to_dlq;
``$toString`` addfields_tostring; ``$type`` project_type; ``$toBool`` addfields_tobool; ``$toLong``
addfields_tolong; ``$toObjectId`` addfields_toobjectid; ``$toUUID`` project_touuid; ``$tsSecond``
project_tssecond; ``$tsIncrement`` project_tsincrement.
"""
from __future__ import annotations

from typing import Any

from pyspark.sql import Column
from pyspark.sql import functions as F

from ...mql.expressions import CONVERT_TYPES
from ...ejson import Int64
from ..source_text import source_long
from .. import values as V
from . import bindata as B
from . import decimal128 as D
from . import decimal_variant as DV
from ..registry import Compiled, Ctx, expression, first_error
from ._common import (
    CODE, INT_CODES, bytes_of, code, compile_args, compile_child, date_ms, dbl, dec, found, is_num, lng, nullish,
    operands, v_date_ms, v_double, v_long, v_string, with_codes,
)
from .dates_parse import default_date_ms
from .strings import coerce_string

INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1
_FLOAT_RX = r"^[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?$"
_SPECIAL_RX = r"^[+-]?(Infinity|inf|NaN)$"
_INT_RX = r"^[+-]?[0-9]+$"
_OID_RX = r"^[0-9a-fA-F]{24}$"


def _s(x: Column) -> Column:
    return F.try_variant_get(x, "$", "string")


def convert(x: Column, c: Column, to: str, op: str, fmt: str | None = None, order: str = "little",
            subtype: int = 0, from_binary: bool = True) -> tuple[Column, Column | None]:
    """(value, error) converting bound value ``x`` (type code ``c``) to MQL type ``to``, with
    ``$convert``'s ``format``, ``byteOrder`` and ``to.subtype`` for binData (:mod:`.bindata`);
    ``from_binary=False`` leaves binData inputs out (an error), which keeps the shorthand
    operators' expressions small.

    Null / missing give (NULL, NULL): the caller applies ``onNull``."""
    def fail(reason: Column) -> Column:
        return _cannot(op, x, c, to, F.coalesce(F.concat(F.lit(": "), reason), F.lit("")))

    if to == "binData":
        value, reason = B.to_bindata(x, c, fmt, order, subtype)
        return value, F.when(~nullish(c) & value.isNull(), fail(reason))
    value, error = _convert_plain(x, c, to, op)
    special = B.from_bindata(x, to, fmt, order) if from_binary else None
    if special is not None:
        bvalue, reason = special
        is_bin = c == CODE["binData"]
        value = F.when(is_bin, bvalue).otherwise(value)
        error = F.when(is_bin, F.when(bvalue.isNull(), fail(reason))).otherwise(error)
    return value, error


def _cannot(op: str, x: Column, c: Column, to: str, tail: Column | None = None) -> Column:
    """The error of a failed conversion: ``<op>: cannot convert <found> to <to><tail>``."""
    msg = [F.lit(f"{op}: cannot convert "), found(x, c), F.lit(f" to {to}")]
    return F.concat(*msg, *([tail] if tail is not None else []))


def _convert_plain(x: Column, c: Column, to: str, op: str) -> tuple[Column, Column | None]:
    """:func:`convert` between the types other than binData (their table)."""
    def fail() -> Column:
        return _cannot(op, x, c, to)

    s = _s(x)
    d = dbl(x)
    finite = ~F.isnan(d) & (F.abs(d) != float("inf"))
    if to in ("int", "long"):
        lo, hi = (INT32_MIN, INT32_MAX) if to == "int" else (-(2**63), 2**63 - 1)
        l_from_num = F.when(c.isin(*INT_CODES), lng(x)).when(
            c == CODE["decimal"], F.when(dec(x).isNotNull(), F.when(dec(x) >= 0, F.floor(dec(x))).otherwise(
                F.ceil(dec(x))).try_cast("bigint"))).otherwise(
            F.when(finite & (F.abs(d) < 9.223372036854775e18), d.cast("bigint")))
        l_from_str = F.when(s.rlike(_INT_RX), s.try_cast("bigint"))
        raw = (F.when(is_num(c), l_from_num)
               .when(c == CODE["bool"], F.try_variant_get(x, "$", "boolean").cast("bigint"))
               .when(c == CODE["string"], l_from_str))
        if to == "long":
            raw = raw.when(c == CODE["date"], date_ms(x))
        in_range = raw.between(lo, hi)
        value = F.when(in_range, v_long(raw))
        error = (F.when(nullish(c), F.lit(None).cast("string"))
                 .when(raw.isNull() | ~in_range, fail()))
        return value, error
    if to == "double":
        from_str = F.when(s.rlike(_FLOAT_RX), s.try_cast("double")).when(
            s.rlike(_SPECIAL_RX), F.regexp_replace(s, "inf$", "Infinity").try_cast("double"))
        raw = (F.when(is_num(c), d)
               .when(c == CODE["bool"], F.try_variant_get(x, "$", "boolean").cast("double"))
               .when(c == CODE["string"], from_str)
               .when(c == CODE["date"], date_ms(x).cast("double")))
        return F.when(raw.isNotNull(), v_double(raw)), F.when(~nullish(c) & raw.isNull(), fail())
    if to == "decimal":
        # as Decimal128: a number's decimal (:func:`decimal128.read`: a double to 15 digits), a
        # string's to 34 digits, a date's milliseconds; a NaN or infinite double as that decimal
        text = (F.when(c == CODE["bool"], F.try_variant_get(x, "$", "boolean").cast("int").cast("string"))
                .when(c == CODE["string"], F.when(s.rlike(_FLOAT_RX), s))
                .when(c == CODE["date"], date_ms(x).cast("string")))
        parsed = F.when(c.isin(*INT_CODES, CODE["double"]), D.read(x, c)).otherwise(D.rounded(D.parse(text)))
        special = F.when((c == CODE["double"]) & ~finite, F.parse_json(F.concat(
            F.lit('{"$numberDecimal":"'), F.when(F.isnan(d), F.lit("NaN")).when(d > 0, F.lit("Infinity"))
            .otherwise(F.lit("-Infinity")), F.lit('"}'))))
        keep = F.when(c == CODE["decimal"], x)
        value = F.coalesce(keep, special, V.let(parsed, lambda p: F.when(p.isNotNull(), DV.to_variant(p))))
        return value, F.when(~nullish(c) & value.isNull(), fail())
    if to == "string":
        raw = (F.when(c == CODE["string"], s)
               .when(is_num(c) | (c == CODE["date"]), coerce_string(x, c, converting=True))
               .when(c == CODE["bool"], F.when(F.try_variant_get(x, "$", "boolean"), F.lit("true")).otherwise(F.lit("false")))
               .when(c == CODE["objectId"], V.oid_hex(x)))
        return F.when(raw.isNotNull(), v_string(raw)), F.when(~nullish(c) & raw.isNull(), fail())
    if to == "bool":
        raw = (F.when(c == CODE["bool"], F.try_variant_get(x, "$", "boolean"))
               .when(is_num(c), F.when(c == CODE["decimal"], dec(x) != 0).otherwise(d != 0))
               .when(~nullish(c), F.lit(True)))
        return F.when(raw.isNotNull(), raw.cast("variant")), None
    if to == "date":
        oid_secs = F.conv(F.substring(V.oid_hex(x), 1, 8), 16, 10).cast("bigint")
        raw = (F.when(c.isin(*INT_CODES), lng(x))
               .when(c == CODE["double"], F.when(finite, d.try_cast("bigint")))
               .when(c == CODE["decimal"], dec(x).try_cast("bigint"))
               .when(c == CODE["string"], default_date_ms(s)[0])
               .when(c == CODE["objectId"], oid_secs * 1000)
               .when(c == CODE["timestamp"], V.ts_parts(x)[0] * 1000))
        keep = F.when(c == CODE["date"], x)
        return F.coalesce(keep, F.when(raw.isNotNull(), v_date_ms(raw))), \
            F.when(~nullish(c) & keep.isNull() & raw.isNull(), fail())
    if to == "objectId":
        ok = s.rlike(_OID_RX)
        value = (F.when(c == CODE["objectId"], x)
                 .when((c == CODE["string"]) & ok, V.make_object([("$oid", v_string(F.lower(s)))])))
        return value, F.when(~nullish(c) & value.isNull(), fail())
    if to in ("object", "array"):
        # MongoDB 8.3: a string holding JSON of that type (plain JSON: Extended JSON wrappers are
        # not read; ints by range, fractions and exponents as doubles); the same type as is
        from ..runtime.parse import normalized

        want = CODE[to]
        parsed = V.let(F.when(c == CODE["string"], F.try_parse_json(normalized(s))),
                       lambda p: F.when(code(p) == want, p))
        value = F.when(c == want, x).otherwise(parsed)
        return value, F.when(~nullish(c) & value.isNull(), fail())
    raise ValueError(f"unknown conversion target {to!r}")


def _convert(op: str, input_expr: Any, to: Any, ctx: Ctx, on_error: Any = None, on_null: Any = None,
             has_error: bool = False, has_null: bool = False, fmt: str | None = None, order: str | None = None,
             from_binary: bool = True) -> Compiled:
    inp = compile_child(input_expr, ctx, op, "input")
    oe = compile_child(on_error, ctx, op, "onError") if has_error else None
    on = compile_child(on_null, ctx, op, "onNull") if has_null else None
    if isinstance(to, dict) and "$literal" in to:
        to = to["$literal"]
    subtype = 0
    if isinstance(to, dict) and "type" in to:       # {type, subtype}: constants (checked by the validator)
        subtype = int(to.get("subtype", 0))
        to = to["type"]
    if isinstance(to, (int, float)) and not isinstance(to, bool) or isinstance(to, str) and not to.startswith("$"):
        target = CONVERT_TYPES.get(int(to) if isinstance(to, float) else to)
        targets = {target: F.lit(True)}
        to_c = None
    else:  # the target computed per document
        to_c = compile_child(to, ctx, op, "to")
        tname = V.as_string(to_c.value)
        tnum = V.as_integral(to_c.value)
        targets = {}
        for key, name in CONVERT_TYPES.items():
            cond = (tname == key) if isinstance(key, str) else (tnum == key)
            targets[name] = cond if name not in targets else (targets[name] | cond)

    # a small NumberLong the source record wrote converts to 8 bytes of binData (..source_text)
    long_text = source_long(input_expr, ctx) if "binData" in targets else None

    def typed(c: Column, name: str) -> Column:
        if name != "binData" or long_text is None:
            return c
        return F.when((c == CODE["int"]) & long_text, F.lit(CODE["long"])).otherwise(c)

    def value(xs, cs):
        x, c = xs[0], cs[0]
        out = None
        for name, cond in targets.items():
            v, e = convert(x, typed(c, name), name, op, fmt, order or "little", subtype, from_binary)
            if oe is not None and e is not None:
                v = F.when(e.isNotNull(), oe.value).otherwise(v)
            out = F.when(cond, v) if out is None else out.when(cond, v)
        null_value = on.value if on is not None else V.NULL
        return F.when(nullish(c), null_value).otherwise(out)

    def error(xs, cs):
        x, c = xs[0], cs[0]
        out = None
        for name, cond in targets.items():
            _, e = convert(x, typed(c, name), name, op, fmt, order or "little", subtype, from_binary)
            if e is None:
                continue
            e = F.when(e.isNotNull(), oe.error if oe is not None and oe.error is not None else
                       (F.lit(None).cast("string") if oe is not None else e))
            out = F.when(cond, e) if out is None else out.when(cond, e)
        if on is not None and on.error is not None:
            out = F.when(nullish(c), on.error).otherwise(out) if out is not None else F.when(nullish(c), on.error)
        return out if out is not None else F.lit(None).cast("string")

    can_fail = set(targets) != {"bool"} or (on is not None and on.error is not None)
    err = with_codes([inp.value], error) if can_fail else None
    bad_to = None
    if to_c is not None:
        known = None
        for cond in targets.values():
            known = cond if known is None else (known | cond)
        bad_to = F.when(~F.coalesce(known, F.lit(False)) & ~V.is_null_or_missing(to_c.value),
                        F.concat(F.lit(f"{op}: unknown target type, found "), F.coalesce(F.to_json(to_c.value), F.lit(""))))
    value_col = with_codes([inp.value], value)
    if to_c is not None:
        value_col = F.when(V.is_null_or_missing(to_c.value), V.NULL).otherwise(value_col)
    return Compiled(value_col, first_error(inp.error, to_c.error if to_c else None, bad_to, err))


def _const_option(v: Any) -> Any:
    return v["$literal"] if isinstance(v, dict) and "$literal" in v else v


@expression("$convert")
def convert_(arg: dict, ctx: Ctx) -> Compiled:
    return _convert("$convert", arg["input"], arg["to"], ctx, arg.get("onError"), arg.get("onNull"),
                    "onError" in arg, "onNull" in arg, _const_option(arg.get("format")),
                    _const_option(arg.get("byteOrder")))


def _to(op: str, target: str):
    def impl(arg: Any, ctx: Ctx) -> Compiled:
        # binData converts only through $convert (MongoDB's $toString of binData wants a format)
        return _convert(op, operands(arg)[0], target, ctx, from_binary=False)
    return impl


for _op, _t in (("$toInt", "int"), ("$toLong", "long"), ("$toDouble", "double"), ("$toDecimal", "decimal"),
                ("$toString", "string"), ("$toBool", "bool"), ("$toDate", "date"), ("$toObjectId", "objectId"),
                ("$toObject", "object"), ("$toArray", "array")):
    expression(_op)(_to(_op, _t))


def _timestamp_part(op: str, index: int):
    def impl(arg: Any, ctx: Ctx) -> Compiled:
        a = compile_args(operands(arg), ctx, op)[0]

        def value(xs, cs):
            return F.when(nullish(cs[0]), V.NULL).otherwise(v_long(V.ts_parts(xs[0])[index]))

        def error(xs, cs):
            return F.when(~nullish(cs[0]) & (cs[0] != CODE["timestamp"]),
                          F.concat(F.lit(f"{op} requires a timestamp argument, found: "), found(xs[0], cs[0])))
        return Compiled(with_codes([a.value], value), first_error(a.error, with_codes([a.value], error)))
    impl.__doc__ = (f"The {'seconds' if index == 0 else 'incrementing ordinal'} of a timestamp as a long; "
                    "null for null or missing; an error for anything else.")
    return impl


expression("$tsSecond")(_timestamp_part("$tsSecond", 0))
expression("$tsIncrement")(_timestamp_part("$tsIncrement", 1))

@expression("$toUUID")
def to_uuid(arg: Any, ctx: Ctx) -> Compiled:
    """A UUID string (``8-4-4-4-12`` hex digits) as binData of subtype 4; null for null or
    missing; an error for any other value (MongoDB's ``$convert`` to ``{type: "binData",
    subtype: 4}`` with ``format: "uuid"``)."""
    a = compile_args(operands(arg), ctx, "$toUUID")[0]

    def ok(x, c):
        return (c == CODE["string"]) & F.coalesce(_s(x).rlike(B.UUID_RX), F.lit(False))

    def value(xs, cs):
        x, c = xs[0], cs[0]
        data, _ = B.string_to_bindata(_s(x), "uuid", 4)
        return F.when(nullish(c), V.NULL).when(ok(x, c), B.make_bindata(data, 4))

    def error(xs, cs):
        x, c = xs[0], cs[0]
        return F.when(~nullish(c) & ~ok(x, c),
                      F.concat(F.lit("$toUUID: cannot convert "), found(x, c), F.lit(" to a UUID (binData subtype 4)")))
    return Compiled(with_codes([a.value], value), first_error(a.error, with_codes([a.value], error)))


@expression("$type")
def type_(arg: Any, ctx: Ctx) -> Compiled:
    ops = operands(arg)
    a = compile_args(ops, ctx, "$type")[0]
    is_const, value = V.const_of(a.value)
    if is_const and isinstance(value, Int64):     # a constant NumberLong keeps its type (VARIANT does not)
        return Compiled(V.lit_value("long"), a.error)
    name = V.type_name(a.value)
    long_text = source_long(ops[0], ctx) if len(ops) == 1 else None
    if long_text is not None:      # a small NumberLong the source record wrote (..source_text)
        name = V.let(name, lambda n: F.when((n == "int") & long_text, F.lit("long")).otherwise(n))
    return Compiled(name.cast("variant"), a.error)


@expression("$isNumber")
def is_number(arg: Any, ctx: Ctx) -> Compiled:
    a = compile_args(operands(arg), ctx, "$isNumber")[0]
    return Compiled(V.is_number(a.value).cast("variant"), a.error)


@expression("$binarySize")
def binary_size(arg: Any, ctx: Ctx) -> Compiled:
    """The size in bytes of a string (UTF-8) or binData; null for null or missing; an error for
    anything else."""
    a = compile_args(operands(arg), ctx, "$binarySize")[0]

    def value(xs, cs):
        x, c = xs[0], cs[0]
        return F.when(nullish(c), V.NULL).otherwise(v_long(F.octet_length(bytes_of(x, c))))

    def error(xs, cs):
        x, c = xs[0], cs[0]
        return F.when(~nullish(c) & ~c.isin(CODE["string"], CODE["binData"]),
                      F.concat(F.lit("$binarySize requires a string or BinData argument, found: "), found(x, c)))
    return Compiled(with_codes([a.value], value), first_error(a.error, with_codes([a.value], error)))
