"""Values kept in window state come back with their MQL types.

Window state is written as Parquet; Spark 4's VARIANT shredding (on by default) stores a field as
the type it infers over the batch and reads it back as that type: a decimal ``7`` came back as
the integer ``7``, an int beside decimals as a decimal, and ``1`` beside ``1E-25`` as
``1.0000000000000000000000000``. The session writes VARIANT unshredded
(``spark.sql.variant.writeShredding.enabled``), so values keep their types and digits.
"""
from __future__ import annotations

from decimal import Decimal as D

import pytest

from headrace import ejson
from headrace.testing import run_pipeline

pytestmark = pytest.mark.spark


def test_window_values_keep_their_types():
    docs = [{"k": 1, "t": ejson.millis_to_datetime(1_717_200_000_000 + i * 1000), "x": x}
            for i, x in enumerate([D("7"), 1, D("2.50"), D("1E-25"), 3.0])]
    pipeline = [{"$source": {"timeField": "$t"}},
                {"$tumblingWindow": {"interval": {"size": 10, "unit": "second"}, "pipeline": [
                    {"$group": {"_id": "$k", "first": {"$first": "$x"}, "last": {"$last": "$x"},
                                "all": {"$push": "$x"}, "types": {"$push": {"$type": "$x"}},
                                "min": {"$min": "$x"}}}]}}]
    res = run_pipeline(pipeline, docs, strip_meta=True)
    assert len(res.outputs) == 1, res.outputs
    out = res.outputs[0]
    assert out["first"] == D("7") and isinstance(out["first"], D)
    assert out["last"] == 3.0 and type(out["last"]) is float
    assert [type(v) for v in out["all"]] == [D, int, D, D, float]
    assert out["all"] == [D("7"), 1, D("2.5"), D("1E-25"), 3.0]
    assert out["types"] == ["decimal", "int", "decimal", "decimal", "double"]
    assert out["min"] == D("1E-25")


def _at(ms: int) -> str:
    return ejson.format_date(ejson.millis_to_datetime(1_717_200_000_000 + ms))


@pytest.mark.parametrize("first_batch", ["decimals", "ints"])
def test_decimal_totals_across_batches_of_other_types(spark, first_batch):
    """A window's ``$sum``/``$avg`` state holds a Decimal128 total only when a decimal came in;
    state files record it, so a window is finished with the decimal total whenever any of its
    files has one, whatever the types of the batch that closes it (here one batch of decimals
    and one of ints, each batch's facts typing the field differently)."""
    dec = [D("0.1000000000000000000001"), D("1E-25")]
    ints = [2, 3]
    batches = [dec, ints] if first_batch == "decimals" else [ints, dec]
    docs = [{"arrival": _at(b * 20_000), "t": _at(i * 1000 + b * 2000), "k": 1, "x": x}
            for b, xs in enumerate(batches) for i, x in enumerate(xs)]
    docs.append({"arrival": _at(60_000), "t": _at(59_000), "k": 2, "x": 1})     # closes the window
    pipeline = [{"$source": {"documents": docs, "timeField": {"$toDate": "$t"}, "replay": {"arrivalField": "arrival"}}},
                {"$tumblingWindow": {"interval": {"size": 10, "unit": "second"}, "pipeline": [
                    {"$group": {"_id": "$k", "s": {"$sum": "$x"}, "a": {"$avg": "$x"}}}]}}]
    res = run_pipeline(pipeline, strip_meta=True)
    first = [d for d in res.outputs if d["_id"] == 1]
    assert first == [{"_id": 1, "s": D("5.1000000000000000000001001"), "a": D("1.275000000000000000000025025")}]
