"""$group (every accumulator), $sort, $limit and $count over closed windows.

Expected values are MongoDB's documented examples (the manual pages of $group and of each
accumulator), plus MongoDB's result typing, null/missing handling and tie rules. Every case runs
in its own window key; several cases put documents in more than one window to show that windows
are independent. Each group of cases runs in one Spark job (module fixture); the cases are in
``_window_stage_cases``.
"""
from __future__ import annotations

import math
import statistics
from decimal import Decimal as D

import pytest

from _window_helpers import by_id, docs_of, run_cases
from _window_stage_cases import BOOKS, CASES, GROUP_OF, TIE_GROUPS, date, mongo_top_bottom

pytestmark = pytest.mark.spark




class Results:
    """Runs a group of cases (one Spark job) the first time one of its cases is asked for."""

    def __init__(self, spark):
        self.spark, self.done = spark, {}

    def __getitem__(self, name):
        group = GROUP_OF[name]
        if group not in self.done:
            self.done[group] = run_cases(self.spark, CASES[group])
        return self.done[group][name]


@pytest.fixture(scope="module")
def res(spark):
    return Results(spark)


def one(res, name, wi=0):
    (doc,) = docs_of(res[name][wi])
    return doc


# ------------------------------------------------------------------ $group page

def test_group_by_item_having(res):
    got = by_id(res["sales_by_item"][0])
    assert got == {"abc": {"_id": "abc", "totalSaleAmount": D("170")},
                   "xyz": {"_id": "xyz", "totalSaleAmount": D("150")},
                   "jkl": {"_id": "jkl", "totalSaleAmount": D("20")},
                   "def": {"_id": "def", "totalSaleAmount": D("112.5")}}
    assert str(got["def"]["totalSaleAmount"]) == "112.5" and str(got["abc"]["totalSaleAmount"]) == "170"


def test_group_by_null(res):
    doc = one(res, "sales_by_null")
    assert doc == {"_id": None, "totalSaleAmount": D("452.5"), "averageQuantity": 7.875, "count": 8, "countAcc": 8}
    assert str(doc["totalSaleAmount"]) == "452.5"
    assert type(doc["averageQuantity"]) is float and type(doc["count"]) is int


def test_distinct_values_in_first_arrival_order(res):
    assert docs_of(res["sales_distinct"][0]) == [{"_id": "abc"}, {"_id": "jkl"}, {"_id": "xyz"}, {"_id": "def"}]


def test_group_by_day_then_sort(res):
    assert docs_of(res["sales_by_day"][0]) == [
        {"_id": "2014-04-04", "totalSaleAmount": D("200"), "averageQuantity": 15.0, "count": 2},
        {"_id": "2014-03-15", "totalSaleAmount": D("50"), "averageQuantity": 10.0, "count": 1},
        {"_id": "2014-03-01", "totalSaleAmount": D("40"), "averageQuantity": 1.5, "count": 2},
    ]


def test_pivot_push(res):
    got = by_id(res["books"][0])
    assert got["Homer"]["books"] == ["The Odyssey", "Iliad"]
    assert got["Dante"]["books"] == ["The Banquet", "Divine Comedy", "Eclogues"]
    assert got["Homer"]["docs"] == BOOKS[3:]
    assert got["Dante"]["docs"] == BOOKS[:3]


# ------------------------------------------------------------------ accumulator pages

def test_sum_and_add_to_set_by_day(res):
    got = by_id(res["sum_avg_min_max"][0])
    assert {k: (v["totalAmount"], v["count"], v["qty"]) for k, v in got.items()} == {
        (("day", 46), ("year", 2014)): (150, 2, 0),
        (("day", 34), ("year", 2014)): (45, 2, 0),
        (("day", 1), ("year", 2014)): (20, 1, 0)}
    assert all(type(v["totalAmount"]) is int for v in got.values())
    # MongoDB leaves the order of $addToSet undefined; we keep first arrivals in order
    assert got[(("day", 46), ("year", 2014))]["itemsSold"] == ["abc", "xyz"]
    assert got[(("day", 34), ("year", 2014))]["itemsSold"] == ["jkl", "xyz"]
    assert got[(("day", 1), ("year", 2014))]["itemsSold"] == ["abc"]


def test_avg_max_min_by_item(res):
    got = by_id(res["by_item"][0])
    assert {k: (v["avgAmount"], v["avgQuantity"]) for k, v in got.items()} == {
        "xyz": (37.5, 7.5), "jkl": (20, 1), "abc": (60, 6)}
    assert all(type(v["avgAmount"]) is float and type(v["avgQuantity"]) is float for v in got.values())
    assert {k: (v["maxTotalAmount"], v["maxQuantity"], v["minQuantity"]) for k, v in got.items()} == {
        "xyz": (50, 10, 5), "jkl": (20, 1, 1), "abc": (100, 10, 2)}


def test_first_last_after_sort(res):
    got = by_id(res["first_last"][0])
    assert got == {
        "abc": {"_id": "abc", "firstSalesDate": date("2014-01-01T08:00:00Z"),
                "lastSalesDate": date("2014-02-15T08:00:00Z")},
        "jkl": {"_id": "jkl", "firstSalesDate": date("2014-02-03T09:00:00Z"),
                "lastSalesDate": date("2014-02-03T09:00:00Z")},
        "xyz": {"_id": "xyz", "firstSalesDate": date("2014-02-03T09:05:00Z"),
                "lastSalesDate": date("2014-02-15T14:12:12Z")}}
    # after $sort, groups come out in sorted order of their first document
    assert [d["_id"] for d in docs_of(res["first_last"][0])] == ["abc", "jkl", "xyz"]


def test_merge_objects(res):
    got = by_id(res["merge_objects"][0])
    assert got["A"]["mergedSales"] == {"2017Q1": 500, "2017Q2": 500, "2016Q1": 400, "2016Q2": 300, "2016Q3": 0,
                                       "2016Q4": 0}
    assert got["B"]["mergedSales"] == {"2017Q1": 300, "2016Q3": 100, "2016Q4": 250}


def test_std_dev(res):
    got = by_id(res["std_dev"][0])
    assert got[1]["stdDev"] == pytest.approx(8.04155872120988, rel=1e-14)
    assert got[2]["stdDev"] == pytest.approx(8.04155872120988, rel=1e-14)
    assert got[1]["samp"] == pytest.approx(statistics.stdev([85, 90, 71]), rel=1e-14)
    assert got[2]["samp"] == pytest.approx(statistics.stdev([96, 77, 82]), rel=1e-14)


def test_count_accumulator(res):
    assert by_id(res["cake_count"][0]) == {"CA": {"_id": "CA", "countNumberOfDocumentsForState": 3},
                                           "WA": {"_id": "WA", "countNumberOfDocumentsForState": 3}}


def test_median_and_percentile(res):
    doc = one(res, "percentiles")
    assert doc["test01_median"] == 62
    assert doc["single"] == [67]
    assert doc["test01_percentiles"] == [62, 64, 67, 67]
    assert doc["test02_percentiles"] == [81, 82, 83, 83]
    assert doc["test03_percentiles"] == [78, 79, 80, 80]
    assert doc["test03_percent_alt"] == [80, 78, 79, 80]
    assert doc["ends"] == [60, 67]                     # p = 0: minimum, p = 1: maximum
    assert all(type(x) is float for x in doc["test01_percentiles"])


def test_top_bottom_family(res):
    got = by_id(res["games"][0])
    assert got["G1"]["top"] == ["PlayerC", 99] and got["G2"]["top"] == ["PlayerD", 80]
    assert got["G1"]["bottom"] == ["PlayerD", 1] and got["G2"]["bottom"] == ["PlayerA", 10]
    assert got["G1"]["topN"] == [["PlayerC", 99], ["PlayerB", 33], ["PlayerA", 31]]
    assert got["G2"]["topN"] == [["PlayerD", 80], ["PlayerC", 66], ["PlayerB", 14]]
    assert got["G1"]["bottomN"] == [["PlayerB", 33], ["PlayerA", 31], ["PlayerD", 1]]
    assert got["G2"]["bottomN"] == [["PlayerC", 66], ["PlayerB", 14], ["PlayerA", 10]]
    assert got["G1"]["firstN"] == [["PlayerA", 31], ["PlayerB", 33], ["PlayerC", 99]]
    assert got["G2"]["firstN"] == [["PlayerA", 10], ["PlayerB", 14], ["PlayerC", 66]]
    assert got["G1"]["lastN"] == [["PlayerB", 33], ["PlayerC", 99], ["PlayerD", 1]]
    assert got["G2"]["lastN"] == [["PlayerB", 14], ["PlayerC", 66], ["PlayerD", 80]]
    # the manual's $maxN and $minN examples
    assert got["G1"]["maxN"] == [[99, "PlayerC"], [33, "PlayerB"], [31, "PlayerA"]]
    assert got["G2"]["maxN"] == [[80, "PlayerD"], [66, "PlayerC"], [14, "PlayerB"]]
    assert got["G1"]["minN"] == [[1, "PlayerD"], [31, "PlayerA"], [33, "PlayerB"]]
    assert got["G2"]["minN"] == [[10, "PlayerA"], [14, "PlayerB"], [66, "PlayerC"]]


def test_windows_are_independent(res):
    w1 = by_id(res["games"][1])
    assert set(w1) == {"G2"}
    assert w1["G2"]["top"] == ["PlayerD", 81]
    assert w1["G2"]["topN"] == [["PlayerD", 81], ["PlayerC", 67], ["PlayerB", 15]]
    assert w1["G2"]["firstN"] == [["PlayerA", 11], ["PlayerB", 15], ["PlayerC", 67]]
    assert by_id(res["games"][0])["G2"]["top"] == ["PlayerD", 80]


def test_n_from_group_key(res):
    got = by_id(res["games_n_by_key"][0])
    assert got[(("gameId", "G1"),)]["topN"] == [99, 33, 31]
    assert got[(("gameId", "G2"),)]["topN"] == [80]
    assert got[(("gameId", "G1"),)]["firstN"] == [31, 33, 99]
    assert got[(("gameId", "G2"),)]["firstN"] == [10]
    assert got[(("gameId", "G1"),)]["lastN"] == [33, 99, 1]
    assert got[(("gameId", "G2"),)]["lastN"] == [80]
    assert got[(("gameId", "G1"),)]["maxN"] == [[99, "PlayerC"], [33, "PlayerB"], [31, "PlayerA"]]
    assert got[(("gameId", "G2"),)]["maxN"] == [[80, "PlayerD"]]


def test_first_last_n_after_sort(res):
    got = by_id(res["games_sorted"][0])
    assert got["G2"]["firstN"] == [["PlayerD", 80], ["PlayerC", 66], ["PlayerB", 14]]
    assert got["G1"]["firstN"] == [["PlayerC", 99], ["PlayerB", 33], ["PlayerA", 31]]
    assert got["G2"]["lastN"] == [["PlayerC", 66], ["PlayerB", 14], ["PlayerA", 10]]
    assert got["G1"]["lastN"] == [["PlayerB", 33], ["PlayerA", 31], ["PlayerD", 1]]


def test_null_and_missing_in_top_bottom_first_last(res):
    doc = one(res, "null_scores")
    assert doc["top"] == ["PlayerD", None]
    assert doc["bottom"] == ["PlayerD", None]
    assert doc["topN"] == [["PlayerD", None], ["PlayerE", None], ["PlayerA", 1]]
    assert doc["bottomN"] == [["PlayerA", 1], ["PlayerD", None], ["PlayerE", None]]
    assert doc["firstFiveScores"] == [1, 2, 3, None, None]
    assert doc["lastFiveScores"] == [1, 2, 3, None, None]
    assert doc["maxN"] == [3, 2, 1]             # $maxN / $minN leave null and missing out
    assert doc["minN"] == [1, 2]


def test_top_n_bson_type_order(res):
    assert one(res, "mixed_scores")["topN"] == [["PlayerB", "2"], ["PlayerC", ""], ["PlayerA", 1]]
    assert one(res, "mixed_scores")["maxN"] == ["2", ""]
    assert one(res, "mixed_scores")["minN"] == [1, ""]


def test_ties_follow_mongodb_implementation(res):
    got = by_id(res["ties"][0])
    assert len(got) == len(TIE_GROUPS)
    for g, n, keys in TIE_GROUPS:
        doc = got[(("g", g), ("n", n))]
        assert doc["top"] == mongo_top_bottom(keys, n, bottom=False), (g, n, keys)
        assert doc["bottom"] == mongo_top_bottom(keys, n, bottom=True), (g, n, keys)
        assert doc["bottomDesc"] == mongo_top_bottom([-k for k in keys], n, bottom=True), (g, n, keys)
        assert doc["b1"] == mongo_top_bottom(keys, 1, bottom=True)[0], (g, keys)
        assert doc["b1d"] == mongo_top_bottom([-k for k in keys], 1, bottom=True)[0], (g, keys)
        assert doc["t1"] == mongo_top_bottom(keys, 1, bottom=False)[0], (g, keys)
        assert doc["t1d"] == mongo_top_bottom([-k for k in keys], 1, bottom=False)[0], (g, keys)


# ------------------------------------------------------------------ typing, null and missing

def test_sum_avg_typing(res):
    w = {i: one(res, "typing", i) for i in range(8)}
    assert w[0]["sum"] == 3 and type(w[0]["sum"]) is int
    assert w[0]["avg"] == 1.5 and type(w[0]["avg"]) is float
    assert w[1]["sum"] == 2**31 and type(w[1]["sum"]) is int                    # a long
    assert w[2]["sum"] == float(2**63) and type(w[2]["sum"]) is float           # long overflow -> double
    assert w[3]["sum"] == 0.6 and w[3]["avg"] == 0.19999999999999998            # 0.6, not 0.6000000000000001
    assert w[4]["sum"] == 3.5 and type(w[4]["sum"]) is float
    assert w[5]["sum"] == D("4.75") and str(w[5]["sum"]) == "4.75"              # decimal wins
    assert w[5]["avg"] == D("1.583333333333333333333333333333333")          # 34 digits, as Decimal128
    assert w[6]["sum"] == 0 and type(w[6]["sum"]) is int and w[6]["avg"] is None
    assert w[7]["sum"] == math.inf                  # MongoDB's double-double sum overflows to Infinity


def test_decimal_sums_as_decimal128(res):
    w = {i: one(res, "decimal_sums", i) for i in range(4)}
    assert w[0]["sum"] == D("2.1000000000000000000001001")           # DECIMAL(38,18) gave 2.1
    assert w[0]["avg"] == D("0.7000000000000000000000333666666667")
    assert w[1]["sum"] == 0 and w[1]["avg"] == 0                      # in order, rounded each time
    assert w[2]["sum"] == D("64.97") and w[2]["avg"] == D("16.2425")
    assert w[3]["sum"] == D("3") and str(w[3]["sum"]) == "3" and w[3]["avg"] == D("1.5")


def test_min_max_first_last_push_typing(res):
    w0 = one(res, "typing", 0)
    # $min/$max: BSON order across types, nulls and missing ignored (arrays compared whole)
    assert w0["min"] == 1 and w0["max"] == [5]
    assert w0["first"] == 1 and w0["last"] is None                              # missing -> null
    assert w0["push"] == [1, 2, "s", [5], None]                                 # missing skipped, null kept
    assert w0["pop"] == pytest.approx(0.5) and w0["samp"] == pytest.approx(math.sqrt(0.5))
    assert w0["median"] == 1.0 and w0["pct"] == [1.0, 2.0]
    w6 = one(res, "typing", 6)
    assert w6["min"] == "a" and w6["max"] == "a"
    assert w6["pop"] is None and w6["samp"] is None and w6["median"] is None and w6["pct"] == [None, None]
    w1 = one(res, "typing", 1)
    assert w1["pop"] == pytest.approx(statistics.pstdev([2**31 - 1, 1]))


def test_group_key_and_add_to_set_equality(res):
    docs = docs_of(res["equality"][0])
    assert [d["_id"] for d in docs] == [1, "1", None, {"a": 1}]                # 1 == 1.0 == NumberLong(1)
    assert docs[0]["n"] == 3 and docs[0]["set"] == [1]
    assert docs[1]["set"] == [[1, 2]]
    assert docs[2]["n"] == 2 and docs[2]["set"] == [[1, 2], {"a": 1}]          # missing _id is null


def test_min_max_bson_order_and_nulls(res):
    doc = one(res, "min_max_types")
    assert doc["min"] == 5 and doc["max"] == date("2020-01-01T00:00:00Z")
    assert doc["first"] is None and doc["last"] == 5.0
    assert doc["set"] == [None, "b", 5, "a", date("2020-01-01T00:00:00Z")]
    assert doc["merged"] == {}
    doc = one(res, "min_max_types", 1)
    assert doc["min"] is None and doc["max"] is None


# ------------------------------------------------------------------ errors

def test_accumulator_errors_fail_only_their_documents(res):
    outs = res["errors"][0]
    failed = [o for o in outs if o.doc == {"g": 9}]
    assert len(failed) == 1 and failed[0].err == "failed upstream"             # passed through untouched
    groups = {o.doc["_id"]: o for o in outs if "_id" in o.doc}
    bad = {o.doc["x"]: o.err for o in outs if "x" in o.doc}
    assert set(groups) == {1, 2, 3} and len(outs) == 6
    assert groups[1].err is None and groups[1].doc == {"_id": 1, "n": 1, "m": {}}
    assert groups[2].err is None and groups[2].doc == {"_id": 2, "n": 2, "m": {}}
    assert groups[3].err is None and groups[3].doc == {"_id": 3, "n": 3, "m": {"a": 1}}
    assert set(bad) == {"oops", "4"}
    assert bad["oops"].startswith("$group.n: ") and "$toInt" in bad["oops"] and '"oops"' in bad["oops"]
    assert bad["4"].startswith("$group.m: ") and "$mergeObjects requires object inputs" in bad["4"]


def test_id_errors_fail_their_documents(res):
    outs = res["id_error"][0]
    ok = [o for o in outs if o.err is None]
    bad = [o for o in outs if o.err is not None]
    assert [o.doc for o in ok] == [{"_id": 1, "n": 2}]
    assert len(bad) == 1 and bad[0].doc == {"g": "x"} and "$toInt" in bad[0].err


def test_n_must_be_positive_per_group(res):
    outs = res["bad_n"][0]
    assert [(o.doc, o.err is None) for o in outs if o.err is None] == [({"_id": {"g": 2}, "f": [2, 2]}, True)]
    bad = [o for o in outs if o.err is not None]
    assert len(bad) == 1 and "'n' must be a positive integer" in bad[0].err


# ------------------------------------------------------------------ $sort, $limit, $count

def test_sort_is_stable(res):
    assert [d["_id"] for d in docs_of(res["sort_restaurants"][0])] == [3, 5, 1, 4, 2]
    assert [d["_id"] for d in docs_of(res["sort_restaurants"][1])] == [5, 3, 4, 1, 2]
    # the window's _seq values are reused in sorted order
    seqs = [o.seq for o in res["sort_restaurants"][0]]
    assert seqs == sorted(seqs) and len(set(seqs)) == 5


def test_sort_then_limit_per_window(res):
    assert [d["_id"] for d in docs_of(res["sort_limit"][0])] == [2, 1, 4]
    assert [d["_id"] for d in docs_of(res["sort_limit"][1])] == [2, 1]
    # failed rows pass the limit untouched, keep their _seq and do not count against it
    outs = res["sort_limit_failed"][0]
    assert [d["_id"] for d in docs_of(outs)] == [2, 1]
    failed = [o for o in outs if o.err is not None]
    assert sorted(o.doc["_id"] for o in failed) == [98, 99] and all(o.err == "failed upstream" for o in failed)
    assert len({o.seq for o in outs}) == 4 and all(o.seq > f.seq for o in outs if o.err is None for f in failed)


def test_count_then_sort_and_limit(res):
    """A $count field read as a known integer by the sort after its $group: ties by _id in BSON
    order (numbers before strings), the failed document passed on."""
    assert docs_of(res["count_top"][0]) == [{"_id": 1, "n": 3}, {"_id": "a", "n": 3}, {"_id": "b", "n": 3}]
    assert [o.err for o in res["count_top"][0] if o.err is not None] == ["failed upstream"]


def test_sort_bson_order_and_arrays(res):
    # ascending: [] < null = missing < numbers (array min) < string < object < bool
    asc = [d["_id"] for d in docs_of(res["sort_types"][0])]
    assert asc == [4, 3, 9, 6, 0, 8, 1, 2, 5, 7]
    # descending: bool > object > string > numbers (array max) > null = missing > []
    desc = [d["_id"] for d in docs_of(res["sort_types_desc"][0])]
    assert desc == [7, 5, 2, 6, 0, 1, 8, 3, 9, 4]


def test_count_stage(res):
    outs = res["count"][0]
    assert [(o.doc, o.err) for o in outs] == [({"passing_scores": 4}, None), ({"_id": 99}, "failed upstream")]
    assert docs_of(res["count"][1]) == [{"passing_scores": 1}]


def test_limit(res):
    assert docs_of(res["limit"][0]) == [{"i": 0}, {"i": 1}]
    assert docs_of(res["limit"][1]) == [{"i": 9}]
