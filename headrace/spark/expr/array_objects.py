"""Arrays to documents and back: ``$arrayToObject $objectToArray``. ``$arrayToObject`` takes
``[k, v]`` pairs or ``{k, v}`` documents (a repeated name keeps the last value); a null or
missing input gives null, another type an error. ``$objectToArray`` of a field still the source
record's lists its fields in the record's order (:mod:`..source_text`); of another document, in
name order (VARIANT stores fields sorted), which the sink puts back in order where the result
reaches it as it is (:mod:`headrace.mql.field_order`).

Golden cases (``tests/golden/cases/<name>.json``): ``$arrayToObject`` project_arraytoobject;
``$objectToArray`` project_objecttoarray.
"""
from __future__ import annotations

from typing import Any

from pyspark.sql import Column
from pyspark.sql import functions as F

from .. import values as V
from ..source_text import source_value_text
from ..registry import Compiled, Ctx, expression, first_error
from ._common import CODE, compile_args, nullish, operands, with_codes
from .arrays import ARRAY, _elems, _not_array


def entries_object(entries: Column) -> Column:
    """A VARIANT object from an array of struct<k: string, v: variant> (last key wins).
    ``entries`` is bound once: the filter reads it again for every element."""
    def build(es: Column) -> Column:
        kept = F.filter(es, lambda e, i: e["k"].isNotNull() & ~F.exists(
            F.slice(es, i + 2, F.greatest(F.size(es), F.lit(1))), lambda o: o["k"] == e["k"]))
        return V.make_object(F.map_from_entries(F.transform(kept, lambda e: F.struct(e["k"].alias("key"),
                                                                                      e["v"].alias("value")))))
    return V.let(entries, build)


@expression("$arrayToObject")
def array_to_object(arg: Any, ctx: Ctx) -> Compiled:
    a = compile_args(operands(arg), ctx, "$arrayToObject")[0]

    def entry(e: Column) -> Column:
        def build(obj: Column) -> Column:     # the element's fields, bound once
            pair = _elems(e)
            is_pair = V.is_array(e) & (F.size(pair) == 2)
            is_kv = obj.isNotNull() & (F.size(obj) == 2) & obj["k"].isNotNull() & obj["v"].isNotNull()
            k = V.as_string(F.when(is_pair, F.get(pair, 0)).when(is_kv, obj["k"]))
            v = F.when(is_pair, F.get(pair, 1)).when(is_kv, obj["v"])
            return F.struct(k.alias("k"), v.alias("v"))
        return V.let(V.object_entries(e), build)

    def value(xs, cs):
        entries = F.transform(_elems(xs[0]), entry)
        return F.when(nullish(cs[0]), V.NULL).when(cs[0] == ARRAY, entries_object(entries))

    def error(xs, cs):
        bad = F.filter(_elems(xs[0]), lambda e: entry(e)["k"].isNull())
        return (F.when(nullish(cs[0]), F.lit(None).cast("string"))
                .when(cs[0] != ARRAY, _not_array("$arrayToObject requires an array input, found: ", xs[0], cs[0]))
                .when(F.size(bad) > 0, F.concat(
                    F.lit("$arrayToObject requires [name, value] pairs with a string name or {k, v} documents, found "),
                    F.coalesce(F.to_json(F.get(bad, 0)), F.lit("")))))

    return Compiled(with_codes([a.value], value), first_error(a.error, with_codes([a.value], error)))


@expression("$objectToArray")
def object_to_array(arg: Any, ctx: Ctx) -> Compiled:
    ops = operands(arg)
    a = compile_args(ops, ctx, "$objectToArray")[0]
    text = source_value_text(ops[0], ctx) if len(ops) == 1 else None

    def pair(k: Column, v: Column) -> Column:
        return V.make_object([("k", k.cast("variant")), ("v", v)])

    def value(xs, cs):
        fields = V.object_entries(xs[0])
        arr = F.transform(F.map_entries(fields), lambda e: pair(e["key"], e["value"]))
        if text is not None:    # the source record's order of the fields (..source_text)
            arr = V.let(F.json_object_keys(text), lambda keys: F.when(
                F.size(F.array_distinct(keys)) == F.size(fields),
                F.transform(keys, lambda k: pair(k, F.element_at(fields, k)))).otherwise(arr))
        return F.when(nullish(cs[0]), V.NULL).when(cs[0] == CODE["object"], V.make_array(arr))

    def error(xs, cs):
        return F.when(~nullish(cs[0]) & (cs[0] != CODE["object"]),
                      _not_array("$objectToArray requires a document input, found: ", xs[0], cs[0]))
    return Compiled(with_codes([a.value], value), first_error(a.error, with_codes([a.value], error)))
