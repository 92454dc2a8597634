"""Building a batch's documents (:mod:`headrace.spark.runtime.records`): the JSON-lines sink's
text path writes, line for line, what the document path gives through ``ejson.dumps``, and
outputs of one shape share one field-order template (:meth:`OrderPlan.output`)."""
from __future__ import annotations

import itertools
import json

from headrace import ejson
from headrace.mql.field_order import OrderPlan, shape
from headrace.spark.docs import to_variant
from headrace.spark.runtime.records import BatchInfo, build
from headrace.spec.parse import parse_pipeline

_PIPELINE = [{"$source": {"connectionName": "in"}},
             {"$addFields": {"k": {"$divide": ["$n", 2]}, "o.z": 1}},
             {"$emit": {"path": "/dev/null"}}]


def _row(i: int, doc, raw: "str | None", **kw) -> dict:
    r = {"_ph": 0, "_o1": i, "_o2": 0, "_o3": None, "_o4": 0, "partition": kw.pop("partition", "p0"), "offset": i,
         "_arr": 1_700_000_000_000 + i, "doc": None if doc is None else to_variant(doc), "raw": raw, "_err": None,
         "_op": None, "_ws": None, "_we": None, "_wk": None, "_seq": None, "_missed": None,
         "_shape": shape(raw) if isinstance(raw, str) else None}
    r.update(kw)
    return r


def _rows() -> list:
    docs = [{"n": 4, "s": "x", "o": {"b": 1, "a": 2}, "_ts": ejson.millis_to_datetime(5)},
            {"n": 5, "s": "yy", "o": {"b": 3, "a": 4}, "_ts": ejson.millis_to_datetime(6)},      # same shape
            {"_id": 9, "n": 1, "o": {}},                                                           # has an _id
            {"n": 2, "_stream_meta": {"mine": True}},                                               # meta merges
            {"w": [{"q": 1, "p": 2}], "n": float("nan")}]
    rows = []
    for i, d in enumerate(docs):
        raw = {k: v for k, v in d.items() if k != "_ts"}
        text = json.dumps(raw) if i != 4 else '{"w": [{"q": 1, "p": 2}], "n": NaN}'
        out = {**d, "k": d["n"] / 2, "o": {**d.get("o", {}), "z": 1}}
        rows.append(_row(i, out, text))
    rows.append(_row(5, {"u": 1}, '{"u": 1}', offset=4))                  # a second output of offset 4 ($unwind)
    rows.append(_row(6, None, "{nope", _err="Input is not valid JSON", _op="$source"))
    rows.append(_row(7, {"n": "q"}, '{"n": "q"}', _err="$divide: not a number", _op="$addFields"))
    rows.append(_row(8, {"_id": {"g": 1}, "c": 2}, None, _ws=0, _we=1000, _wk="g1", _seq=0))   # a window's output
    rows.append(_row(9, {"n": 1}, '{"n": 1}', _missed="0"))                                    # late
    rows.append(_row(10, {"$oid": "5f" * 12}, '{"$oid": "5f5f5f5f5f5f5f5f5f5f5f5f"}'))         # not a document
    return rows


def test_text_outputs_are_the_documents_dumped():
    order = OrderPlan.of(parse_pipeline(_PIPELINE))
    # a stream's partitions and offsets, a file's type alone (one partition), a file of several
    for (source, multi), meta, ids in itertools.product((("stream", True), ("file", False), ("file", True)),
                                                        (True, False), (True, False)):
        info = BatchInfo("p", source, multi, 1_700_000_100_000, meta, ids, 3, "run", order=order)
        docs, text = build(_rows(), info), build(_rows(), info, text=True)
        assert text.outputs == [ejson.dumps(d) for d in docs.outputs]
        assert len(text.outputs) == 7 and all(type(x) is str for x in text.outputs)
        assert ejson.dumps(text.dlq) == ejson.dumps(docs.dlq) and len(docs.dlq) == 3
        assert text.late == docs.late == 1
    first = ejson.loads(text.outputs[0])
    assert list(first) == ["n", "s", "o", "_ts", "k"] and list(first["o"]) == ["b", "a", "z"]


def _structure(t):
    """A template without the source values it holds (they do not decide any order here)."""
    if type(t) is dict:
        return {k: _structure(x) for k, x in t.items()}
    if type(t) is list:
        return [_structure(x) for x in t]
    return t if not isinstance(t, (str, int, float, type(None))) else None


def test_outputs_of_one_shape_share_a_template():
    order = OrderPlan.of(parse_pipeline(_PIPELINE))
    raws = ['{"b": 1, "a": {"y": "x", "x": 2}}', '{"b": "other", "a": {"y": 7, "x": null}}', '{"a": 1, "b": 2}']
    for raw in raws:
        assert _structure(order.output(raw, shape(raw))) == _structure(order.output(raw))
    assert order.output(raws[0], shape(raws[0])) is order.output(raws[1], shape(raws[1]))   # one entry
    assert shape(raws[0]) == '{"b":,"a":{"y":,"x":}}'


def test_a_plan_that_reads_values_from_templates_is_not_cached_by_shape():
    """``$arrayToObject`` over a source array takes its keys from the values."""
    p = [{"$source": {"connectionName": "in"}}, {"$project": {"o": {"$arrayToObject": "$kv"}}}]
    order = OrderPlan.of(parse_pipeline(p))
    assert not order.by_shape
    a, b = '{"kv": [["b", 1], ["a", 2]]}', '{"kv": [["a", 1], ["b", 2]]}'
    assert shape(a) == shape(b)
    assert list(order.output(a, shape(a))["o"]) == ["b", "a"]
    assert list(order.output(b, shape(b))["o"]) == ["a", "b"]
    assert OrderPlan.of(parse_pipeline(_PIPELINE)).by_shape


def test_the_jvm_computes_the_same_shape(spark):
    from pyspark.sql import functions as F

    from headrace.mql.field_order import SHAPE_PATTERN

    raws = ['{"a": 1, "b" : {"c":"x\\"{y"}, "d":[1,2,{"e":null}], "s":"k:"}', '{"x":"' + "a" * 50_000 + '"}',
            '{"é":"ü","\\u00e9":[true, false], "n": -1.5e3}', "not json {", '{"k": "\\\\"}']
    got = spark.createDataFrame([(r,) for r in raws], "raw string").select(
        F.regexp_replace("raw", SHAPE_PATTERN, "$1").alias("s")).collect()
    assert [g.s for g in got] == [shape(r) for r in raws]
