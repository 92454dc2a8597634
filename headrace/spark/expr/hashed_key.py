"""``$toHashedIndexKey``: the long a hashed index stores for a value.

MongoDB semantics (``BSONElementHasher::hash64``, the same as ``convertShardKeyToHashed``): the
first 8 bytes, read little-endian, of the MD5 of the seed (int32 0), the value's canonical type
(int32) and its bytes: numbers of every type as the 64-bit integer they truncate to (NaN 0,
saturating), strings as BSON writes them (int32 length with the terminator, UTF-8, 0x00), dates
as int64 milliseconds, ObjectIds' 12 bytes, binData's length, subtype and bytes; null and missing
hash alike (no bytes).

Built natively: the bytes as hexadecimal text, Spark's ``md5``, and ``conv`` to a signed long.
Deviation: documents and arrays (hashed field by field in MongoDB) are an error here (the row
goes to the DLQ); :func:`headrace.mql.bson.hashed_index_key` is the full reference.

Golden cases (``tests/golden/cases/<name>.json``): ``$toHashedIndexKey`` addfields_tohashedindexkey.
"""
from __future__ import annotations

from typing import Any

from pyspark.sql import Column
from pyspark.sql import functions as F

from .. import values as V
from ..registry import Compiled, Ctx, expression, first_error
from ._common import CODE, bytes_of, compile_args, date_ms, dbl, dec, found, lng, operands, v_long, with_codes

_I64_MAX, _I64_MIN = 2**63 - 1, -(2**63)


def _le(hex_be: Column) -> Column:
    """A big-endian hex string in little-endian byte order (the string reversed, then each pair
    of digits swapped back): ``hex_be`` appears once in the tree, which stays small to plan."""
    return F.regexp_replace(F.reverse(hex_be), "(.)(.)", "$2$1")


def _i32(n: Column) -> Column:
    return _le(F.lpad(F.hex(n.cast("bigint").bitwiseAND(F.lit(0xFFFFFFFF))), 8, "0"))


def _i64(n: Column) -> Column:
    return _le(F.lpad(F.hex(n.cast("bigint")), 16, "0"))


def _safe_long(x: Column, c: Column) -> Column:
    d, m = dbl(x), dec(x)
    from_double = (F.when(F.isnan(d), F.lit(0)).when(d >= float(2**63), F.lit(_I64_MAX))
                   .when(d < float(-(2**63)), F.lit(_I64_MIN)).otherwise(d.cast("bigint")))
    r = F.bround(m, 0)
    # beyond decimal(38,18), and NaN, as the double saturates
    from_decimal = (F.when(m.isNull(), from_double).when(r > _I64_MAX, F.lit(_I64_MAX))
                    .when(r < _I64_MIN, F.lit(_I64_MIN)).otherwise(r.cast("bigint")))
    return (F.when(c.isin(CODE["int"], CODE["long"]), lng(x)).when(c == CODE["double"], from_double)
            .otherwise(from_decimal))


def _canonical_and_bytes(x: Column, c: Column) -> tuple[Column, Column]:
    """(canonical type, value bytes as hex) of a bound value; NULL for documents and arrays."""
    b = bytes_of(x, c)
    canonical = (F.when(c <= CODE["null"], F.lit(5)).when(c.isin(*V.NUMBER_CODES), F.lit(10))
                 .when(c == CODE["string"], F.lit(15)).when(c == CODE["binData"], F.lit(30))
                 .when(c == CODE["objectId"], F.lit(35)).when(c == CODE["bool"], F.lit(40))
                 .when(c == CODE["date"], F.lit(45)).when(c == CODE["timestamp"], F.lit(47))
                 .when(c == CODE["minKey"], F.lit(-1))
                 .when(c == CODE["maxKey"], F.lit(127)))
    value = (F.when(c.isin(CODE["null"], CODE["missing"], CODE["minKey"], CODE["maxKey"]), F.lit(""))
             .when(c.isin(*V.NUMBER_CODES), _i64(_safe_long(x, c)))
             .when(c == CODE["string"], F.concat(_i32(F.octet_length(b) + 1), F.hex(b), F.lit("00")))
             .when(c == CODE["binData"], F.concat(_i32(F.octet_length(b)), F.lpad(F.hex(V.bin_subtype(x)), 2, "0"),
                                                  F.hex(b)))
             .when(c == CODE["timestamp"], F.concat(*[_i32(p) for p in reversed(V.ts_parts(x))]))
             .when(c == CODE["objectId"], V.oid_hex(x))
             .when(c == CODE["bool"], F.when(F.try_variant_get(x, "$", "boolean"), F.lit("01")).otherwise(F.lit("00")))
             .when(c == CODE["date"], _i64(date_ms(x))))
    return canonical, value


@expression("$toHashedIndexKey")
def to_hashed_index_key(arg: Any, ctx: Ctx) -> Compiled:
    a = compile_args(operands(arg), ctx, "$toHashedIndexKey")[0]

    def value(xs, cs):
        canonical, data = _canonical_and_bytes(xs[0], cs[0])
        # NULL data (documents, arrays) gives a NULL digest: the value is missing
        digest = F.md5(F.unhex(F.concat(F.lit("00000000"), _i32(canonical), data)))
        return v_long(F.conv(_le(F.substring(digest, 1, 16)), 16, -10))

    def error(xs, cs):
        x, c = xs[0], cs[0]
        return F.when(c.isin(CODE["object"], CODE["array"]), F.concat(
            F.lit("$toHashedIndexKey of a document or an array is not supported yet, found: "), found(x, c)))
    return Compiled(with_codes([a.value], value), first_error(a.error, with_codes([a.value], error)))
