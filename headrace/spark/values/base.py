"""Shared bottom layer of :mod:`headrace.spark.values`: the MISSING / NULL constants, VARIANT
paths, the marks a column can carry (a folded constant, a hoisted column), ``let`` binding and
the type-code tables. Everything above imports it; it imports nothing of the package."""
from __future__ import annotations

import re
import threading
from typing import Any, Callable, Mapping

from pyspark.sql import Column
from pyspark.sql import functions as F

INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1

#: BSON comparison order of type names.
RANKS = {
    "minKey": 1, "missing": 2, "null": 2, "int": 3, "long": 3, "double": 3, "decimal": 3,
    "string": 4, "object": 5, "array": 6, "binData": 7, "objectId": 8, "bool": 9, "date": 10,
    "timestamp": 11, "regex": 12, "maxKey": 13,
}


_CONSTANTS = {
    "MISSING": lambda: F.lit(None).cast("variant"),
    "NULL": lambda: F.parse_json(F.lit("null")),
    "_EMPTY_ARRAY": lambda: F.parse_json(F.lit("[]")),
    "_EMPTY_OBJECT": lambda: F.parse_json(F.lit("{}")),
}


def __getattr__(name: str) -> Column:
    # MISSING / NULL are built on first use (a Column needs a running SparkContext);
    if name in _CONSTANTS:
        col = _CONSTANTS[name]()
        globals()[name] = col
        return col
    raise AttributeError(name)


def _const(name: str) -> Column:
    return globals()[name] if name in globals() else __getattr__(name)


def variant_path(*keys: str) -> str:
    """A VARIANT path selecting object keys ``keys`` in turn (quoted, so any name works)."""
    parts = ["$"]
    for k in keys:
        if "'" in k:
            parts.append('["' + k + '"]')
        else:
            parts.append("['" + k + "']")
    return "".join(parts)


def _get(v: Column, *keys: str, type_: str | None = None) -> Column:
    path = variant_path(*keys)
    if type_ is None:
        return F.variant_get(v, path, "variant")
    return F.try_variant_get(v, path, type_)


def _try_cast(c: Column, type_: str) -> Column:
    return c.try_cast(type_)


def _tvg(v: Column, type_: str) -> Column:
    k = _mark(v, "_mql_code")
    if isinstance(k, _Known):
        return k.read(type_)
    return derived(v, type_, lambda x: F.try_variant_get(x, "$", type_))




def from_double(c: Column) -> Column:
    return c.cast("double").cast("variant")


def from_long(c: Column) -> Column:
    return c.cast("bigint").cast("variant")


def _mark(col: Column, name: str) -> Any:
    """A marker this module set on ``col`` (or None). Read from ``__dict__``: ``getattr`` of a
    missing name on a Column builds a field-access Column, several py4j round trips each."""
    return getattr(col, "__dict__", {}).get(name)


class _Const:
    __slots__ = ("value",)

    def __init__(self, value: Any):
        self.value = value


def const_of(col: Column) -> "tuple[bool, Any]":
    """(True, value) when ``col`` came from :func:`lit_value`, else (False, None); lets
    helpers fold constants at compile time instead of testing them per row."""
    c = _mark(col, "_mql_const")
    return (True, c.value) if isinstance(c, _Const) else (False, None)


class _Hoisted:
    __slots__ = ("code", "derive")

    def __init__(self, code: Callable[[], Column], derive: Callable[..., Column]):
        self.code, self.derive = code, derive


def hoisted_ref(col: Column, code: Callable[[], Column], derive: Callable[..., Column]) -> Column:
    """``col``, a column a stage computes once per row (:mod:`headrace.spark.hoist`), marked so
    that :func:`_code_of` answers ``code()`` (a column holding its type code) and
    :func:`derived` ``derive(key, build)`` (a column holding ``build(col)``)."""
    col._mql_code = _Hoisted(code, derive)
    return col


class _Known:
    __slots__ = ("code", "read")

    def __init__(self, code: int, read: Callable[[str], Column]):
        self.code, self.read = code, read


def known(col: Column, code: int, read: Callable[[str], Column]) -> Column:
    """``col``, a value that is missing, null or of MQL type ``code`` on every row (the typed
    fast path, :mod:`headrace.spark.values.facts`), marked so that :func:`_code_of` answers a
    cheap code and typed reads ``read(type)`` (e.g. :func:`variant_reader` straight from the
    document)."""
    col._mql_code = _Known(code, read)
    return col


def variant_reader(v: Column, path: str, code: int) -> Callable[[str], Column]:
    """Typed reads of the value at ``path`` of ``v``, of MQL type ``code`` (or missing or null):
    ``try_variant_get``, except that an integer read as a double or decimal is read as a BIGINT
    and cast by Catalyst (Spark would otherwise build a ``Cast`` for the value's own type)."""
    def read(type_: str) -> Column:
        if code == CODE["int"] and type_ in ("double", "decimal(38,18)"):
            return F.try_variant_get(v, path, "bigint").cast(type_)
        return F.try_variant_get(v, path, type_)
    return read


def known_at(v: Column, path: str, code: int) -> Column:
    """The value at dotted ``path`` of document ``v`` (no array on the way), :func:`known` to be
    missing, null or of MQL type ``code``, its typed reads from that value."""
    value = F.variant_get(v, variant_path(*path.split(".")), "variant")
    # typed reads from the value, not the document: one field look-up per row however many
    # reads there are (code generation computes the common ``variant_get`` once)
    return known(value, code, variant_reader(value, "$", code))


def typed_read(src: Column) -> "tuple[str, Column] | None":
    """``(spark type, column)``: a :func:`known` value read as its own Spark type, if it is one."""
    k = _mark(src, "_mql_code")
    if not isinstance(k, _Known) or k.code not in _BASE_TYPES:
        return None
    t = _BASE_TYPES[k.code]
    return t, k.read(t)


def same_type(dst: Column, src: Column, typed: Column | None = None) -> Column:
    """``dst`` (a column holding ``src``'s value, or a null where ``src`` is missing) marked
    :func:`known` as ``src`` is, if it is; ``typed``: a column holding :func:`typed_read` of
    ``src``, which typed reads then use (one read of the VARIANT per row instead of one per use:
    Spark builds a ``Literal`` and a ``Cast`` for every read)."""
    k = _mark(src, "_mql_code")
    if not isinstance(k, _Known):
        return dst
    from_variant = variant_reader(dst, "$", k.code)
    if typed is None:
        return known(dst, k.code, from_variant)
    base = _BASE_TYPES[k.code]

    def read(type_: str) -> Column:
        if type_ == base:
            return typed
        if type_ in _CAST_FROM_BASE[base]:
            return typed.try_cast(type_)
        return from_variant(type_)
    return known(dst, k.code, read)


def known_type(col: Column) -> int | None:
    """The type code :func:`known` marked ``col`` with, else None."""
    k = _mark(col, "_mql_code")
    return k.code if isinstance(k, _Known) else None


def is_known(col: Column) -> bool:
    """Whether ``col`` carries a :func:`known` type."""
    return known_type(col) is not None


def derived(x: Column, key: str, build: Callable[[Column], Column]) -> Column:
    """``build(x)``; a column computed once per row when ``x`` is a hoisted column (typed
    values of a field path: its DOUBLE, its STRING ...), so that operators reading it in
    several branches repeat a reference, not the conversion."""
    m = _mark(x, "_mql_code")
    return m.derive(key, build) if isinstance(m, _Hoisted) else build(x)



# ---------------------------------------------------------------------------------------------
# let-binding: a value used several times is evaluated once


_SIMPLE = re.compile(r"^[\w.`$]*(\['\w+'\])*$")
_SIMPLE_MAX = 290        # the longest expression text repeated rather than bound
_TEXT = threading.local()


def _text_head(c: Column, n: int) -> str:
    """The first ``n`` characters of ``c``'s expression text (``str(c)`` without ``Column<'...'>``).

    Cut on the JVM: ``str(c)`` brings a large tree's whole text to Python, and a stage's trees
    reach megabytes (1.4 MB in one golden case; ``str`` took 4.2 s of 40 golden cases' 48,
    PROFILE.md). ``String.format("%.Ns", column)`` costs one more round trip."""
    from pyspark import SparkContext

    gw = SparkContext._gateway
    t = _TEXT.__dict__
    if t.get("gw") is not gw:      # per thread and JVM gateway: the argument array, String.format
        t["gw"], t["args"], t["format"] = gw, gw.new_array(gw.jvm.java.lang.Object, 1), gw.jvm.java.lang.String.format
    t["args"][0] = c._jc
    return t["format"](f"%.{n}s", t["args"])


def is_simple(c: Column) -> bool:
    """True for expressions cheaper to repeat than to bind: column references, lambda
    variables, literals and small lambda-free expressions such as ``variant_get(doc, '$.a')``.

    Binding costs a lambda level, and Spark's analyzer needs about one pass over the whole plan
    per level of lambda nesting, so small expressions are repeated instead."""
    s = _text_head(c, _SIMPLE_MAX + 1)
    if len(s) > _SIMPLE_MAX:
        return False
    return bool(_SIMPLE.match(s)) or ("lambda" not in s and "namedlambdavariable" not in s)


def let(c: Column, fn: Callable[[Column], Column]) -> Column:
    """``fn(x)`` with ``x`` bound to ``c`` evaluated once (a one-element ``transform``).

    Not a hoisted column (:func:`shared`): ``fn`` may read ``x`` only on rows where a condition
    holds, and ``c`` may raise on the others (e.g. ``floor`` of 1e300 under ANSI)."""
    if is_simple(c):
        return fn(c)
    return F.transform(F.array(c), lambda x: fn(x)).getItem(0)


def let_many(cols: list[Column], fn: Callable[..., Column]) -> Column:
    """``fn(*xs)`` with each ``xs[i]`` bound to ``cols[i]`` evaluated once."""
    if all(is_simple(c) for c in cols):
        return fn(*cols)
    if len(cols) == 1:
        return let(cols[0], fn)
    s = F.struct(*[c.alias(f"_{i}") for i, c in enumerate(cols)])
    return F.transform(F.array(s), lambda x: fn(*[x[f"_{i}"] for i in range(len(cols))])).getItem(0)



#: type codes (INT) returned by :func:`type_code`, indexed into these names
TYPE_NAMES = ["missing", "null", "int", "long", "double", "decimal", "string", "object", "array",
              "binData", "objectId", "bool", "date", "minKey", "maxKey", "timestamp"]
CODE = {n: i for i, n in enumerate(TYPE_NAMES)}
NUMBER_CODES = (CODE["int"], CODE["long"], CODE["double"], CODE["decimal"])

#: the Spark type a value of a known MQL type is read as, and the types it is cast to from there
#: exactly as ``try_variant_get`` would (which evaluates a TRY ``Cast`` of the value itself)
_BASE_TYPES = {CODE["int"]: "bigint", CODE["string"]: "string", CODE["bool"]: "boolean"}
_CAST_FROM_BASE = {"bigint": ("double", "decimal(38,18)", "string", "boolean"), "string": (), "boolean": ("string",)}


#: constant maps and arrays built once (like MISSING / NULL): each use otherwise costs a py4j call per element
_CONST_COLUMNS: dict[tuple, Column] = {}


def _const_map(d: Mapping) -> Column:
    key = ("map", *((type(k), k, type(x), x) for k, x in d.items()))
    if key not in _CONST_COLUMNS:
        args = []
        for k, x in d.items():
            args += [F.lit(k), F.lit(x)]
        _CONST_COLUMNS[key] = F.create_map(*args)
    return _CONST_COLUMNS[key]


def _const_array(xs: list) -> Column:
    key = ("array", *((type(x), x) for x in xs))
    if key not in _CONST_COLUMNS:
        _CONST_COLUMNS[key] = F.array(*[F.lit(x) for x in xs])
    return _CONST_COLUMNS[key]

