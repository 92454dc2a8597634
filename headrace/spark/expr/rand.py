"""``$rand`` and ``$createObjectId``: random values that a replay repeats.

MongoDB semantics: ``{$rand: {}}`` is a double in [0, 1), ``{$createObjectId: {}}`` a new
ObjectId; both take only an empty object (validation refuses anything else). Each evaluation
gives its own value: two documents, two fields of one document, two ``$map`` elements.

headrace's values are pseudo-random but replay-stable, so exactly-once holds for a pipeline that
uses them (a ``_id`` made with ``$createObjectId`` is the same when a batch is replayed after a
crash): they are a 64-bit hash (``xxhash64``) of what identifies the evaluation — the record's
source partition and offset when the stage sees them (stateless stages), otherwise the document
itself and the window's bounds (stages after a window's ``$group``) — with the expression's
place in the pipeline and the values of the variables in scope (``$$this`` of ``$map``...). The
53 high bits make ``$rand``'s double. An ObjectId is the record's source time in seconds (the
window's start after a ``$group``, else the batch's time) followed by 8 bytes of a second hash,
as MongoDB's is a timestamp followed by random bytes. Two evaluations with the same identity give
the same value: the same document twice in one window's output is one document.

Golden cases (``tests/golden/cases/<name>.json``): ``$rand`` project_rand_createobjectid,
``$createObjectId`` project_rand_createobjectid (properties only: the values are not MongoDB's);
``tests/spark/test_expressions_more.py`` checks the spread, the independence of evaluations and
the replay.
"""
from __future__ import annotations

from typing import Any

from pyspark.sql import Column
from pyspark.sql import functions as F

from .. import values as V
from ..registry import Compiled, Ctx, expression, stage_position
from ._common import v_string

_SOURCE = ("stream.source.partition", "stream.source.offset")
_WINDOW = ("stream.window.start", "stream.window.end")


def _seed(ctx: Ctx, salt: str) -> list[Column]:
    """The columns that identify one evaluation of the expression at ``ctx.where``."""
    if all(k in ctx.meta for k in _SOURCE):
        ident = [ctx.meta[k].cast("string") for k in _SOURCE]
    else:
        ident = [ctx.root.cast("string")] + [ctx.meta[k].cast("string") for k in _WINDOW if k in ctx.meta]
    scope = [F.lit(name) for name in sorted(ctx.variables)]
    scope += [ctx.variables[name].value.cast("string") for name in sorted(ctx.variables)]
    return [F.lit(f"{salt}|{stage_position()}|{ctx.where}"), *ident, *scope]


def _hash(ctx: Ctx, salt: str) -> Column:
    return F.xxhash64(*_seed(ctx, salt))


@expression("$rand")
def rand(arg: Any, ctx: Ctx) -> Compiled:
    unit = F.shiftrightunsigned(_hash(ctx, "$rand"), 11).cast("double") * F.lit(2.0 ** -53)
    return Compiled(V.from_double(unit))


def _seconds(ctx: Ctx) -> Column:
    times = [F.try_variant_get(ctx.meta[k], "$", "timestamp")
             for k in ("stream.source.ts", "stream.window.start") if k in ctx.meta]
    return F.unix_seconds(F.coalesce(*times, F.current_timestamp()))


def _hex(c: Column, digits: int) -> Column:
    return F.lower(F.lpad(F.hex(c), digits, "0"))


@expression("$createObjectId")
def create_object_id(arg: Any, ctx: Ctx) -> Compiled:
    secs = _seconds(ctx).bitwiseAND(F.lit(0xFFFFFFFF))
    oid = F.concat(_hex(secs, 8), _hex(_hash(ctx, "$createObjectId"), 16))
    return Compiled(V.make_object([("$oid", v_string(oid))]))
