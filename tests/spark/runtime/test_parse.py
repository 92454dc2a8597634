"""JVM parsing of plain JSON gives the same documents, with the same MQL types, as Python's."""
import pytest

pytestmark = pytest.mark.spark

LINES = [
    '{"a": 1, "b": 1.5, "c": -0.25, "d": 1e3, "e": 2.5E-2, "f": 3000000000, "g": "x 1.5 y"}',
    '{"s": "quote \\" 1.5 \\\\", "n": 0.1, "t": "2026-11-21T10:00:00.123Z", "arr": [1.5, 2, "3.5"]}',
    '{"nested": {"deep": {"v": 12.75, "w": [{"x": 0.5}]}}, "b": true, "z": null}',
    '{"unicode": "\\u00e9t\\u00e9 1.5", "k": -7, "big": 922337203685477580}',
    '{"dup": 1, "dup": 2.5}',
    '{}',
    '{"1.5": 2.5, "k\\"2.5": [0.5, {"x": "9.5\\\\"}, -3.25], "t": "a\\\\", "u": 4.75}',
]
BAD = ['{"big": 9223372036854775807}', '{"a": 1', '[1, 2]', '"text"', 'not json', '{"a": NaN}', '{"d": {"$date": "2024-01-01T00:00:00Z"}}']


def test_jvm_documents_equal_python_documents(spark):
    from pyspark.sql import functions as F

    from headrace.spark import values as V
    from headrace.spark.docs import from_variant, parse_in_reader, parse_text
    from headrace.spark.runtime.parse import parse

    for line in LINES:
        assert parse_in_reader(line) == (None, None), line   # left to the JVM
    df = spark.createDataFrame([(line, None, None) for line in LINES],
                               "raw string, doc variant, error string")
    got = parse(df, F.lit(True)).select("raw", "doc", "error", V.type_name(V.get_path(F.col("doc"), "b"))
                                        .alias("tb")).collect()
    for r in got:
        want, err = parse_text(r["raw"])
        assert err is None and r["error"] is None, r["raw"]
        assert from_variant(r["doc"]) == from_variant(want), r["raw"]
        assert repr(from_variant(r["doc"])) == repr(from_variant(want)), r["raw"]   # 1.5 a float, 1 an int
    assert got[0]["tb"] == "double"


def test_bad_and_extended_json_text(spark):
    from pyspark.sql import functions as F

    from headrace.spark.docs import parse_error, parse_in_reader
    from headrace.spark.runtime.parse import parse

    rows = []
    for line in BAD:
        doc, err = parse_in_reader(line)
        rows.append((line, doc, err))
    # Extended JSON and NaN are parsed by the reader (Python); the rest is left to the JVM
    assert rows[-1][1] is not None and rows[-2][1] is not None
    assert all(doc is None and err is None for _, doc, err in rows[1:5])
    assert rows[0][1] is not None       # 19 digits: Python (the JVM would make a decimal)
    df = spark.createDataFrame(rows, "raw string, doc variant, error string")
    got = {r["raw"]: r for r in parse(df, F.lit(True)).collect()}
    for line in BAD[1:5]:
        assert got[line]["doc"] is None and got[line]["error"] == "Input is not valid JSON", line
    assert parse_error("[1, 2]").startswith("Input is not a JSON object")
    assert parse_error('{"a": 1').startswith("Input is not valid JSON:")
