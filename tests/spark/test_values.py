"""headrace.spark.values: MQL value semantics over VARIANT columns."""
from __future__ import annotations

import datetime as _dt
import decimal

import pytest

from headrace import ejson
from _expr_helpers import MISSING, eval_columns, same

pytestmark = pytest.mark.spark

UTC = ejson.UTC
D = decimal.Decimal
OID = ejson.ObjectId("5f1d7a4b2c3e4a5b6c7d8e9f")
WHEN = _dt.datetime(2020, 1, 2, 3, 4, 5, 678000, tzinfo=UTC)

# value, $type, truthy, as_double, as_long, as_string
TYPES = [
    (1, "int", True, 1.0, 1, MISSING),
    (0, "int", False, 0.0, 0, MISSING),
    (2**40, "long", True, float(2**40), 2**40, MISSING),
    (ejson.Int64(7), "int", True, 7.0, 7, MISSING),      # accepted: fits in 32 bits
    (2.5, "double", True, 2.5, MISSING, MISSING),
    (0.0, "double", False, 0.0, MISSING, MISSING),
    (float("nan"), "double", True, float("nan"), MISSING, MISSING),
    (D("1.50"), "decimal", True, 1.5, MISSING, MISSING),
    (D("0"), "decimal", False, 0.0, MISSING, MISSING),
    ("s", "string", True, MISSING, MISSING, "s"),
    ("", "string", True, MISSING, MISSING, ""),
    ("12", "string", True, MISSING, MISSING, "12"),
    (None, "null", False, MISSING, MISSING, MISSING),
    (MISSING, "missing", False, MISSING, MISSING, MISSING),
    ([1, 2], "array", True, MISSING, MISSING, MISSING),
    ([], "array", True, MISSING, MISSING, MISSING),
    ({"a": 1}, "object", True, MISSING, MISSING, MISSING),
    ({}, "object", True, MISSING, MISSING, MISSING),
    (OID, "objectId", True, MISSING, MISSING, MISSING),
    (True, "bool", True, MISSING, MISSING, MISSING),
    (False, "bool", False, MISSING, MISSING, MISSING),
    (WHEN, "date", True, MISSING, MISSING, MISSING),
    (b"xy", "binData", True, MISSING, MISSING, MISSING),
    (ejson.Binary(b"xy", 4), "binData", True, MISSING, MISSING, MISSING),
    (ejson.Timestamp(1, 2), "timestamp", True, MISSING, MISSING, MISSING),
    (ejson.MINKEY, "minKey", True, MISSING, MISSING, MISSING),
    (ejson.MAXKEY, "maxKey", True, MISSING, MISSING, MISSING),
]


def test_types_and_accessors(spark):
    from headrace.spark import values as V

    docs = [{} if t[0] is MISSING else {"v": t[0]} for t in TYPES]
    v = lambda d: V.get_path(d, "v")  # noqa: E731
    out = eval_columns(spark, docs, {
        "type": lambda d: V.type_name(v(d)),
        "truthy": lambda d: V.truthy(v(d)),
        "double": lambda d: V.as_double(v(d)),
        "long": lambda d: V.as_long(v(d)),
        "string": lambda d: V.as_string(v(d)),
        "is_number": lambda d: V.is_number(v(d)),
        "is_array": lambda d: V.is_array(v(d)),
        "is_object": lambda d: V.is_object(v(d)),
        "is_date": lambda d: V.is_date(v(d)),
        "is_bool": lambda d: V.is_bool(v(d)),
        "is_string": lambda d: V.is_string(v(d)),
        "nullish": lambda d: V.is_null_or_missing(v(d)),
        "ts": lambda d: V.as_timestamp(v(d)),
        "oid": lambda d: V.oid_hex(v(d)),
    })
    bad = []
    for (value, tname, truth, dbl, lng, st), row in zip(TYPES, out):
        exp = {"type": tname, "truthy": truth, "double": dbl, "long": lng, "string": st,
               "is_number": tname in ("int", "long", "double", "decimal"),
               "is_array": tname == "array", "is_object": tname == "object",
               "is_date": tname == "date", "is_bool": tname == "bool", "is_string": tname == "string",
               "nullish": tname in ("null", "missing"),
               "oid": str(OID) if tname == "objectId" else MISSING}
        for k, e in exp.items():
            if not same(row[k], e):
                bad.append(f"{value!r} {k}: expected {e!r}, got {row[k]!r}")
        if tname == "date" and row["ts"].replace(tzinfo=UTC) != WHEN:
            bad.append(f"as_timestamp: {row['ts']!r}")
    assert not bad, "\n".join(bad)


def test_paths_set_unset(spark):
    from headrace.spark import values as V

    docs = [
        {"a": {"b": 1, "c": 2}},
        {"a": [{"b": 1}, {"c": 2}, {"b": [3]}, 5, [{"b": 7}]]},
        {"a": 5},
        {"a": []},
        {},
        {"a": {"b": None}},
        {"a.b": 1},
    ]
    out = eval_columns(spark, docs, {
        "get": lambda d: V.get_path(d, "a.b"),
        "set": lambda d: V.set_fields(d, {"a.b": V.lit_value(9), "z": V.lit_value([1, {"q": None}]),
                                          "gone": V.MISSING}),
        "unset": lambda d: V.unset_fields(d, ["a.b"]),
        "remove": lambda d: V.set_fields(d, {"a": V.MISSING}),
    })
    exp_get = [1, [1, [3], [7]], MISSING, [], MISSING, None, MISSING]
    exp_set = [
        {"a": {"b": 9, "c": 2}, "z": [1, {"q": None}]},
        {"a": [{"b": 9}, {"b": 9, "c": 2}, {"b": 9}, {"b": 9}, [{"b": 9}]], "z": [1, {"q": None}]},
        {"a": {"b": 9}, "z": [1, {"q": None}]},
        {"a": [], "z": [1, {"q": None}]},
        {"a": {"b": 9}, "z": [1, {"q": None}]},
        {"a": {"b": 9}, "z": [1, {"q": None}]},
        {"a.b": 1, "a": {"b": 9}, "z": [1, {"q": None}]},
    ]
    exp_unset = [{"a": {"c": 2}}, {"a": [{}, {"c": 2}, {}, 5, [{"b": 7}]]}, {"a": 5}, {"a": []}, {},
                 {"a": {}}, {"a.b": 1}]
    exp_remove = [{}, {}, {}, {}, {}, {}, {"a.b": 1}]
    for i, row in enumerate(out):
        assert same(row["get"], exp_get[i]), (i, row["get"])
        assert same(row["set"], exp_set[i]), (i, row["set"])
        assert same(row["unset"], exp_unset[i]), (i, row["unset"])
        assert same(row["remove"], exp_remove[i]), (i, row["remove"])


def test_literals_and_builders(spark):
    from pyspark.sql import functions as F

    from headrace.spark import values as V

    consts = [1, 2**40, 1.5, D("1.25"), D("1E+40"), "x", None, True, WHEN, b"\x00\x01", OID,
              [1, "a", None, [2]], {"a": {"b": [1, {"c": None}]}}, {}, [], ejson.MINKEY]
    cols = {f"c{i}": (lambda d, c=c: V.lit_value(c)) for i, c in enumerate(consts)}
    cols["arr"] = lambda d: V.make_array([V.lit_value(1), V.MISSING, V.NULL])
    cols["obj"] = lambda d: V.make_object([("a", V.lit_value(1)), ("b", V.MISSING), ("c", V.NULL),
                                           ("a", V.lit_value(2))])
    cols["objmap"] = lambda d: V.make_object(F.create_map(F.lit("k"), V.lit_value("v"), F.lit("m"), V.MISSING))
    cols["typed"] = lambda d: V.to_variant(F.struct(F.lit(1).alias("i"), F.lit(None).cast("string").alias("n")),
                                           V_struct_type())
    row = eval_columns(spark, [{}], cols)[0]
    for i, c in enumerate(consts):
        assert same(row[f"c{i}"], c), (c, row[f"c{i}"])
    assert row["arr"] == [1, None, None]
    assert row["obj"] == {"a": 2, "c": None}
    assert row["objmap"] == {"k": "v"}
    assert row["typed"] == {"i": 1}


def V_struct_type():
    from pyspark.sql import types as T

    return T.StructType([T.StructField("i", T.IntegerType()), T.StructField("n", T.StringType())])


# BSON order, ascending; values in one inner list are equal
ORDER = [
    [ejson.MINKEY],
    [None, MISSING],
    [float("nan")],
    [-1],
    [1, 1.0, D("1.0"), ejson.Int64(1)],
    [2**62, float(2**62)],
    [2**62 + 1],
    ["a"], ["b"],
    [{"a": 1}], [{"a": 1, "b": 1}], [{"a": "x"}],
    [[]], [[1]], [[1, 2]], [[2]],
    [b"z"], [ejson.Binary(b"a", 4)], [ejson.Binary(b"a", 128)], [b"aa"],
    [OID],
    [False], [True],
    [WHEN],
    [ejson.Timestamp(0, 7)], [ejson.Timestamp(1, 0)], [ejson.Timestamp(2**32 - 1, 0)],
    [ejson.MAXKEY],
]


def test_compare_total_order(spark):
    from pyspark.sql import functions as F

    from headrace.spark import values as V
    from headrace.spark.docs import to_variant

    flat = [(g, x) for g, group in enumerate(ORDER) for x in group]
    rows = [(to_variant({} if a is MISSING else {"v": a}), to_variant({} if b is MISSING else {"v": b}), i, j)
            for i, (_, a) in enumerate(flat) for j, (_, b) in enumerate(flat)]
    df = spark.createDataFrame(rows, "a variant, b variant, i int, j int")
    va, vb = V.get_path(F.col("a"), "v"), V.get_path(F.col("b"), "v")
    got = df.select("i", "j", V.compare(va, vb).alias("c"), V.equal(va, vb).alias("e"),
                    (V.sort_key(va) < V.sort_key(vb)).alias("lt")).collect()
    bad = []
    for r in got:
        gi, gj = flat[r.i][0], flat[r.j][0]
        exp = (gi > gj) - (gi < gj)
        if r.c != exp or r.e != (exp == 0) or r.lt != (exp < 0):
            bad.append((flat[r.i][1], flat[r.j][1], r.c, r.e, r.lt, exp))
    assert not bad, bad[:10]


def test_group_key_groups_by_mql_equality(spark):
    """``group_key_coded`` puts two values in one group iff they are MQL-equal: the groups of
    ``ORDER`` plus numbers at the edges of its integer fast path (-0.0, 2**63 as a double,
    1.5 as a double and a decimal, infinities, [3] against [3.0])."""
    from pyspark.sql import functions as F

    from headrace.spark import values as V
    from headrace.spark.docs import to_variant

    extra = [[0, -0.0, D("0")], [float(2**63)], [-float(2**63), -(2**63)], [1.5, D("1.5")],
             [float("inf")], [float("-inf")], [[3], [3.0]], [{"a": 2}, {"a": 2.0}], ["1"], ["z1"]]
    flat = [(g, x) for g, group in enumerate(ORDER + extra) for x in group]
    df = spark.createDataFrame([(to_variant({} if x is MISSING else {"v": x}), i) for i, (_, x) in enumerate(flat)],
                               "d variant, i int")
    df = df.withColumn("_g", V.get_path(F.col("d"), "v"))
    df = df.withColumn("_c", V.type_code(F.col("_g")))
    groups = df.groupBy(V.group_key_coded(F.col("_g"), F.col("_c")).alias("k")).agg(F.collect_set("i").alias("s"))
    got = sorted(sorted(r.s) for r in groups.collect())
    want = sorted(sorted(i for i, (g, _) in enumerate(flat) if g == gi) for gi in {g for g, _ in flat})
    assert got == want
