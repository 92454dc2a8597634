"""The ``timeField`` fast path gives the generic expression's instant wherever it applies, and
applies only to the strict ISO form."""
import pytest

pytestmark = pytest.mark.spark

#: values in the strict ISO form the fast path parses (all valid instants)
FAST = ["2026-11-21T10:00:00.123+00:00", "2026-11-21T10:00:00Z", "2026-11-21T10:00:00.5-03:30",
        "2026-11-21T23:59:59.999999+05:45", "2026-11-21T23:59:59.123456789Z", "2026-11-21T23:59:59.999999999-05:30",
        "1969-12-31T23:59:59.9995Z", "1900-01-01T00:00:00.0005+00:00", "0000-01-01T00:00:00Z",
        "0001-01-01T00:00:00Z", "9999-12-31T23:59:59.999Z", "1582-10-10T00:00:00Z", "2024-02-29T00:00:00Z",
        "2024-01-01T00:00:00+18:00", "2024-01-01T00:00:00-18:00", "2024-01-01T00:00:00+00:59",
        "2024-01-01T00:00:00-00:00", "2024-06-01T12:00:00.000000001+14:00"]
#: values it leaves to the generic expression: other forms and types, and strict-looking
#: strings that are no valid instant
GENERIC = ["2026-11-21 10:00:00", "2026-11-21", "2026-02-30T00:00:00Z", "2023-02-29T00:00:00Z",
           "2024-04-31T00:00:00Z", "2026-11-21T24:00:00Z", "2024-01-01T23:60:00Z", "2024-01-01T23:59:60Z",
           "2024-01-01T00:00:00+18:01", "2024-01-01T00:00:00+19:00", "2024-01-01T00:00:00+01:60",
           "2024-13-01T00:00:00Z", "2024-00-01T00:00:00Z", "2024-01-00T00:00:00Z", "x", 1700000000000, None]
VALUES = FAST + GENERIC
#: dates (the documents' own): ``$toDate`` takes them on the fast path, ``$dateFromString`` never
DATES = [{"$date": "2026-11-21T10:00:00.123Z"}, {"$date": "1969-12-31T23:59:59.999Z"},
         {"$date": "0001-01-01T00:00:00Z"}]


@pytest.mark.parametrize("tf", [{"$dateFromString": {"dateString": "$t"}}, {"$toDate": "$t"}])
def test_fast_path_equals_generic(spark, tf):
    from pyspark.sql import functions as F

    from headrace.spark import values as V
    from headrace.spark.docs import to_variant
    from headrace.spark.expr import compile_expression
    from headrace.spark.runtime.timefield import fast_event_time
    from headrace.spark.stages import Env

    from headrace import ejson

    values = VALUES + [ejson.from_plain(d) for d in DATES]
    df = spark.createDataFrame([(i, to_variant({"t": v} if v is not None else {})) for i, v in enumerate(values)],
                               "i int, doc variant")
    c = compile_expression(tf, Env().ctx(where="$source.timeField"))
    # compared as epoch microseconds (Python's datetime has no year 0)
    rows = df.select("i", F.unix_micros(fast_event_time(tf)).alias("fast"),
                     F.unix_micros(V.as_timestamp(c.value)).alias("generic"),
                     c.error.alias("err") if c.error is not None else F.lit(None).alias("err")).orderBy("i").collect()
    fast = [r["fast"] for r in rows]
    assert all(f is not None for f in fast[:len(FAST)]), list(zip(FAST, fast))
    assert all(f is None for f in fast[len(FAST):len(VALUES)]), list(zip(GENERIC, fast[len(FAST):]))
    dates = fast[len(VALUES):]
    assert all(f is not None for f in dates) if "$toDate" in tf else all(f is None for f in dates), dates
    for r in rows:
        if r["fast"] is not None:
            assert r["fast"] == r["generic"] and r["err"] is None, values[r["i"]]


def test_other_forms_have_no_fast_path():
    from headrace.spark.runtime.timefield import field_of

    assert field_of({"$dateFromString": {"dateString": "$a.b"}}) == ["a", "b"]
    assert field_of({"$toDate": ["$t"]}) == ["t"]
    for tf in [{"$dateFromString": {"dateString": "$t", "format": "%Y"}}, {"$toDate": "$$NOW"}, {"$toDate": "x"},
               {"$add": ["$t", 1]}, "$t"]:
        assert field_of(tf) is None, tf



def test_prepared_rows_get_the_generic_expression_s_event_time(spark):
    """Through the source's prepare steps and, for the rows the fast path did not read, the slow
    steps, every value gets the event time (or error) of the generic expression and the
    ``tsFieldName`` field. The streaming steps hold no part of the generic parse (its plan and
    generated code were megabytes, optimised and generated again at every micro-batch)."""
    import datetime as dt
    import json

    from pyspark.sql import functions as F

    from headrace.spark import values as V
    from headrace.spark.expr import compile_expression
    from headrace.spark.runtime.parse import parse
    from headrace.spark.runtime.prepare import SLOW, has_slow_rows, prepare, prepare_steps, slow_steps
    from headrace.spark.sources import DATA, SOURCE_SCHEMA
    from headrace.spark.stages import Env
    from headrace.spec import parse_pipeline

    tf = {"$dateFromString": {"dateString": "$t"}}
    spec = parse_pipeline([{"$source": {"documents": [{}], "timeField": tf}}, {"$match": {}}]).source
    assert has_slow_rows(spec)
    now = dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc)
    rows = [("p", i, now, json.dumps({"t": v} if v is not None else {}), None, None, DATA, now, None)
            for i, v in enumerate(VALUES)]
    df = spark.createDataFrame(rows, SOURCE_SCHEMA)
    c = compile_expression(tf, Env().ctx(where="$source.timeField"))
    fast = prepare(df, prepare_steps(spec, c))
    slow = {r["offset"] for r in fast.filter(F.col(SLOW)).select("offset").collect()}
    assert slow == set(range(len(FAST), len(VALUES)))
    out = prepare(fast, slow_steps(spec, c))
    ts = F.unix_millis(F.try_variant_get(F.col("doc"), "$._ts", "timestamp")).alias("ts")
    got = {r["offset"]: r for r in out.select("offset", "_et", "_err", "_op", ts, SLOW).collect()}
    # the generic expression alone, over the parsed documents
    ref = parse(df, F.lit(True)).select("offset", F.unix_millis(V.as_timestamp(c.value)).alias("et"),
                                        c.error.alias("e")).collect()
    for r in ref:
        g, v = got[r["offset"]], VALUES[r["offset"]]
        assert g["_et"] == r["et"] and g[SLOW] == (r["offset"] in slow), v
        assert (g["_err"] is None) == (r["et"] is not None) and (g["_op"] is None) == (g["_err"] is None), (v, g)
        if r["e"] is not None:
            assert g["_err"] == f"timeField: {r['e']}", v
        assert g["ts"] == r["et"], (v, g)      # tsFieldName holds the event time
    code = str(fast._jdf.queryExecution().optimizedPlan().toString())
    assert "regexp_extract" not in code and len(code) < 100_000, len(code)


def test_batches_with_and_without_rows_for_the_generic_expression(spark):
    """A processor whose batches mix the fast path's strings with dates, numbers and other forms:
    every document gets its instant in ``_ts``, and the one that is no date goes to the DLQ,
    whether or not the previous batch had such rows (``Processor._batch``)."""
    from headrace import ejson
    from headrace.testing import run_pipeline

    base = 1_717_200_000_000
    iso = lambda ms: ejson.format_date(ejson.millis_to_datetime(base + ms))      # noqa: E731
    batches = [
        [iso(0), iso(1_000)],                                           # fast path only
        [iso(2_000), {"$date": iso(3_000)}, base + 4_000, "not a date"],  # a date, a number, an error
        [base + 5_000, base + 6_000],                                   # generic only, from the start
        [iso(7_000), iso(8_000)],                                       # fast path again
    ]
    docs = [{"arrival": iso(20_000 * b), "n": f"{b}.{i}", "t": t} for b, ts in enumerate(batches)
            for i, t in enumerate(ts)]
    pipe = [{"$source": {"documents": docs, "timeField": {"$toDate": "$t"}, "replay": {"arrivalField": "arrival"}}},
            {"$project": {"_id": 0, "n": 1, "ts": "$_ts"}}]
    res = run_pipeline(pipe, strip_meta=True)
    got = {d["n"]: ejson.datetime_to_millis(d["ts"]) - base for d in res.outputs}
    assert got == {"0.0": 0, "0.1": 1_000, "1.0": 2_000, "1.1": 3_000, "1.2": 4_000, "2.0": 5_000, "2.1": 6_000,
                   "3.0": 7_000, "3.1": 8_000}
    assert [d["doc"]["n"] for d in res.dlq] == ["1.3"]
    assert "timeField" in res.dlq[0]["errInfo"]["reason"]
