"""MongoDB's total order of values over VARIANT: ``sort_key``, ``compare``, ``equal`` (part of
:mod:`headrace.spark.values`)."""
from __future__ import annotations

from pyspark.sql import Column
from pyspark.sql import functions as F

from .base import CODE, NUMBER_CODES, _const, _get, _tvg, known_type, let, let_many
from .build import array_elems
from .types import _code_of, _num_decimal, _num_double, bin_key, rank_of_code, ts_parts

_TWO53 = float(2**53)


#: the MQL types whose values fill each field of a key besides ``r`` (:func:`_leaf_fields`)
_FIELD_CODES = {"nn": NUMBER_CODES, "n": NUMBER_CODES, "dec": NUMBER_CODES,
                "s": (CODE["string"], CODE["objectId"]), "bin": (CODE["binData"],), "b": (CODE["bool"],),
                "t": (CODE["date"],), "ts": (CODE["timestamp"],)}

_TYPES: dict = {}     # Spark types of key parts, learnt once per process (see _type_of)


def _type_of(name: str, build):
    """The Spark type of the Column ``build()`` (one analysis of a zero-row frame, then cached)."""
    if name not in _TYPES:
        from pyspark.sql import SparkSession

        _TYPES[name] = SparkSession.active().range(0).select(build().alias("v")).schema[0].dataType
    return _TYPES[name]


def _leaf_fields(x: Column, c: Column) -> list[Column]:
    """The scalar fields of a key. For a value of known type (:func:`known_type`: missing, null or
    that type) the fields no such value fills are typed NULLs: the same key in a smaller tree."""
    full = _leaf_fields_all(x, c)
    k = known_type(x)
    if k is None:
        return full
    have = {CODE["missing"], CODE["null"], k, *((CODE["long"],) if k == CODE["int"] else ())}
    leaf = _type_of("leaf", lambda: F.struct(*_leaf_fields_all(F.lit(None).cast("variant"), F.lit(CODE["null"]))))
    return [f if n == "r" or have & set(_FIELD_CODES[n]) else F.lit(None).cast(leaf[n].dataType).alias(n)
            for n, f in zip(("r", *_FIELD_CODES), full)]


def _leaf_fields_all(x: Column, c: Column) -> list[Column]:
    num = c.isin(*NUMBER_CODES)
    d = _num_double(x)
    # a double beyond 2**53 is an integer: compare it exactly with longs
    exact_big = F.when((c == CODE["double"]) & (F.abs(d) >= _TWO53) & (F.abs(d) < 9.2e18),
                       d.cast("bigint").cast("decimal(38,18)"))
    return [
        rank_of_code(c).alias("r"),
        F.when(num, ~F.isnan(d)).alias("nn"),           # NaN sorts below every number
        F.when(num & ~F.isnan(d), d).alias("n"),
        F.when(num, F.coalesce(exact_big, _num_decimal(x))).alias("dec"),
        F.when(c == CODE["string"], _tvg(x, "string"))
         .when(c == CODE["objectId"], _get(x, "$oid", type_="string")).alias("s"),
        F.when(c == CODE["binData"], bin_key(x)).alias("bin"),
        F.when(c == CODE["bool"], _tvg(x, "boolean")).alias("b"),
        F.when(c == CODE["date"], F.unix_micros(_tvg(x, "timestamp"))).alias("t"),
        F.when(c == CODE["timestamp"], F.struct(*ts_parts(x))).alias("ts"),
    ]


def _leaf_key(x: Column, c: Column) -> Column:
    """The key of a bound value with bound code; containers by their JSON text."""
    fields = _leaf_fields(x, c)
    fields.append(F.when(c.isin(CODE["object"], CODE["array"]), F.to_json(x)).alias("j"))
    return F.struct(*fields)


_NULL_KEY_NAME = "CAST(NULL AS STRING)"


def _key_items(x: Column, c: Column) -> Column:
    """Keys of the elements of an array, or of the (rank, name, value) fields of a document."""
    def elem(e: Column, name: Column) -> Column:
        return let(_code_of(e), lambda ce: F.struct(rank_of_code(ce).alias("r"), name.alias("k"),
                                                    _leaf_key(e, ce).alias("v")))
    return (F.when(c == CODE["array"],
                   F.transform(array_elems(x), lambda e: elem(e, F.lit(None).cast("string"))))
            .when(c == CODE["object"],
                  F.transform(F.map_entries(_tvg(x, "map<string,variant>")),
                              lambda e: elem(e["value"], e["key"]))))


def sort_key_coded(x: Column, c: Column) -> Column:
    """:func:`sort_key` of a bound value whose type code ``c`` is known."""
    if known_type(x) is not None:       # the facts' types are never arrays or documents
        return sort_key_scalar(x, c)
    return F.struct(*_leaf_fields(x, c), _key_items(x, c).alias("items"))


def sort_key_scalar(x: Column, c: Column) -> Column:
    """:func:`sort_key_coded` of a value that is neither an array nor a document (its ``items``
    a typed NULL): the same key, without the containers' lambdas in the tree."""
    items = _type_of("items", lambda: _key_items(F.lit(None).cast("variant"), F.lit(CODE["null"])))
    return F.struct(*_leaf_fields(x, c), F.lit(None).cast(items).alias("items"))


def sort_key(v: Column) -> Column:
    """An orderable struct: ``sort_key(a) < sort_key(b)`` iff ``compare(a, b) == -1``.

    Missing sorts as null; the elements of arrays and documents are compared by type and
    value, containers nested deeper by their JSON text."""
    return let(v, lambda x: let(_code_of(x), lambda c: sort_key_coded(x, c)))


def compare_coded(a: Column, b: Column, ca: Column, cb: Column) -> Column:
    """:func:`compare` of bound values with known type codes."""
    return let_many([sort_key_coded(a, ca), sort_key_coded(b, cb)], lambda ka, kb: F.when(
        ka < kb, F.lit(-1)).when(ka > kb, F.lit(1)).otherwise(F.lit(0)))


def compare(a: Column, b: Column) -> Column:
    """-1, 0 or 1 (INT) in MongoDB's total order of values; missing compares as null."""
    return let_many([a, b], lambda x, y: let_many(
        [_code_of(x), _code_of(y)], lambda cx, cy: compare_coded(x, y, cx, cy)))


def equal(a: Column, b: Column) -> Column:
    """MQL equality as a Spark boolean (missing equals null, 1 == 1.0 == NumberLong(1))."""
    return sort_key(a) == sort_key(b)


_TWO63 = float(2**63)


#: The known types whose :func:`group_key_coded` key is its tag and text alone: (tag, Spark type).
_TAGGED_KINDS = {CODE["int"]: ("n", "bigint"), CODE["string"]: ("s", "string"), CODE["bool"]: ("b", "boolean")}
_NULL_TAG = "z"      # null and missing


def _tag(kind: str) -> str:
    """The tag of MQL type ``kind``'s keys, in the typed and the generic :func:`group_key_coded` alike
    (keys of batches with and without the facts meet when partial rows merge)."""
    return _TAGGED_KINDS[CODE[kind]][0]


def id_of_group_key(x: Column, key: Column) -> Column | None:
    """The value :func:`group_key_coded` of ``x`` made ``key`` from, read back from ``key``
    alone: for ``x`` of a known type in :data:`_TAGGED_KINDS`, whose keys are the tagged text
    ``f`` (the same VARIANT bytes as ``x``'s value: a null for the null tag); else None."""
    kind = _TAGGED_KINDS.get(known_type(x))
    if kind is None:
        return None
    f = key["f"]
    value = F.substring(f, 2, 1 << 30).cast(kind[1])
    return F.when(f == F.lit(_NULL_TAG), _const("NULL")).otherwise(value.cast("variant"))


def group_key_coded(x: Column, c: Column) -> Column:
    """A grouping key by MQL equality of a bound value ``x`` with type code ``c`` (both simple
    columns): ``group_key_coded(a, ca) == group_key_coded(b, cb)`` iff ``equal(a, b)``.

    ``STRUCT<f STRING, k>``: null and missing (``z``), strings (``s`` + the string), booleans
    (``b`` + true/false) and numbers whose value is an integer within 64 bits (``n`` + that
    integer: 1, 1.0 and NumberLong(1) alike) get the short tagged string ``f`` and a NULL ``k``;
    every other value gets a NULL ``f`` and its :func:`sort_key` as ``k``. No lambda on the path
    of the common keys (Spark evaluates what is under a lambda interpreted), and a short string
    hashes faster than :func:`sort_key`'s struct."""
    if known_type(x) in _TAGGED_KINDS:     # the typed fast path: the tag and text of the one kind
        tag, type_ = _TAGGED_KINDS[known_type(x)]
        text = _tvg(x, type_).cast("string")
        f = F.when(c.isin(CODE["missing"], CODE["null"]), F.lit(_NULL_TAG)).otherwise(F.concat(F.lit(tag), text))
        # k is never needed: a NULL of its type (no tree for Spark to analyse and fold away)
        k = _type_of("key", lambda: sort_key_coded(F.lit(None).cast("variant"), F.lit(CODE["null"])))
        return F.struct(f.alias("f"), F.lit(None).cast(k).alias("k"))
    i = F.when(c.isin(CODE["int"], CODE["long"]), _tvg(x, "bigint"))
    d = F.when(c == CODE["double"], _tvg(x, "double"))
    whole = F.when((d % F.lit(1.0) == F.lit(0.0)) & (d >= F.lit(-_TWO63)) & (d < F.lit(_TWO63)), d.cast("bigint"))
    dec = F.when(c == CODE["decimal"], _num_decimal(x))     # NULL beyond DECIMAL(38,18), as in sort_key
    in_long = (dec >= F.lit(-(2**63)).cast("decimal(38,18)")) & (dec <= F.lit(2**63 - 1).cast("decimal(38,18)"))
    whole_dec = F.when((dec % F.lit(1) == F.lit(0)) & in_long, dec.cast("bigint"))
    f = (F.when(c.isin(CODE["missing"], CODE["null"]), F.lit(_NULL_TAG))
         .when(c == CODE["string"], F.concat(F.lit(_tag("string")), _tvg(x, "string")))
         .when(c == CODE["bool"], F.concat(F.lit(_tag("bool")), _tvg(x, "boolean").cast("string")))
         .otherwise(F.concat(F.lit(_tag("int")), F.coalesce(i, whole, whole_dec).cast("string"))))
    return F.struct(f.alias("f"), F.when(f.isNull(), sort_key_coded(x, c)).alias("k"))
