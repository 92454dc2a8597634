"""Objects: ``$mergeObjects`` (later documents' fields win; null and missing arguments are
skipped; nested documents are replaced, not merged), ``$getField`` (``{field, input}`` with
``input`` defaulting to ``$$CURRENT``, or the field name alone; names may contain ``.`` or start
with ``$``; null or missing input gives null, a missing field is missing) and ``$setField``
(``{field, input, value}``; ``value: "$$REMOVE"`` removes the field; null or missing input gives
null). Non-document inputs are errors naming the operator and what was found.

Golden cases (``tests/golden/cases/<name>.json``): ``$getField`` match_getfield_dotted_name;
``$mergeObjects`` replaceroot_mergeobjects; ``$setField`` replacewith_setfield; ``$unsetField``
replacewith_unsetfield.
"""
from __future__ import annotations

from typing import Any

from pyspark.sql import functions as F

from .. import values as V
from ..registry import Compiled, Ctx, expression, first_error
from .compiler import current
from ._common import CODE, compile_args, compile_child, found, nullish, operands, with_codes

OBJECT = CODE["object"]


def _field_name(spec: Any) -> str:
    f = spec["field"] if isinstance(spec, dict) and "field" in spec else spec
    if isinstance(f, dict) and "$literal" in f:
        f = f["$literal"]
    return f


@expression("$mergeObjects")
def merge_objects(arg: Any, ctx: Ctx) -> Compiled:
    args = compile_args(operands(arg), ctx, "$mergeObjects")
    if not args:
        return Compiled(V.lit_value({}))
    vals = [a.value for a in args]

    def value(xs, cs):
        ok = F.lit(True)
        maps = []
        for x, c in zip(xs, cs):
            ok = ok & (nullish(c) | (c == OBJECT))
            maps.append(F.when(c == OBJECT, F.map_entries(V.object_entries(x))).otherwise(
                F.array().cast("array<struct<key:string,value:variant>>")))
        entries = F.concat(*maps) if len(maps) > 1 else maps[0]
        kept = F.filter(entries, lambda e, i: ~F.exists(
            F.slice(entries, i + 2, F.greatest(F.size(entries), F.lit(1))), lambda o: o["key"] == e["key"]))
        return F.when(ok, V.make_object(F.map_from_entries(kept)))

    def error(xs, cs):
        return F.coalesce(*[F.when(~nullish(c) & (c != OBJECT), F.concat(
            F.lit("$mergeObjects requires object inputs, found "), found(x, c))) for x, c in zip(xs, cs)])

    return Compiled(with_codes(vals, value), first_error(*[a.error for a in args], with_codes(vals, error)))


@expression("$getField")
def get_field(arg: Any, ctx: Ctx) -> Compiled:
    name = _field_name(arg)
    if isinstance(arg, dict) and "input" in arg:
        inp = compile_child(arg["input"], ctx, "$getField", "input")
    else:
        inp = current(ctx)
    path = V.variant_path(name)

    def value(xs, cs):
        return F.when(nullish(cs[0]), V.NULL).when(cs[0] == OBJECT, F.variant_get(xs[0], path, "variant"))

    def error(xs, cs):
        return F.when(~nullish(cs[0]) & (cs[0] != OBJECT),
                      F.concat(F.lit("$getField requires 'input' to evaluate to type Object, found "),
                               found(xs[0], cs[0])))

    return Compiled(with_codes([inp.value], value), first_error(inp.error, with_codes([inp.value], error)))


@expression("$setField")
def set_field(arg: dict, ctx: Ctx) -> Compiled:
    name = _field_name(arg)
    inp = compile_child(arg["input"], ctx, "$setField", "input")
    val = compile_child(arg["value"], ctx, "$setField", "value")
    path = F.lit(V.variant_path(name))

    def value(xs, cs):
        x, v = xs
        updated = F.when(v.isNull(), F.variant_delete(x, path)).otherwise(F.variant_set(x, path, v))
        return F.when(nullish(cs[0]), V.NULL).when(cs[0] == OBJECT, updated)

    def error(xs, cs):
        return F.when(~nullish(cs[0]) & (cs[0] != OBJECT),
                      F.concat(F.lit("$setField requires 'input' to evaluate to type Object, found "),
                               found(xs[0], cs[0])))

    return Compiled(with_codes([inp.value, val.value], value),
                    first_error(inp.error, val.error, with_codes([inp.value, val.value], error)))


@expression("$unsetField")
def unset_field(arg: dict, ctx: Ctx) -> Compiled:
    """``$unsetField {field, input}``: ``$setField`` with ``value: "$$REMOVE"``."""
    return set_field({**arg, "value": "$$REMOVE"}, ctx)
