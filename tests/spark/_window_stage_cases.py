"""The cases of ``test_window_stages`` (and ``test_window_partial``): MongoDB's documented
examples of ``$group`` and each accumulator, ``$sort``, ``$limit`` and ``$count`` over closed
windows, with MongoDB's result typing, null/missing handling and tie rules, as
:class:`_window_helpers.Case`s by group (each group one Spark job)."""
from __future__ import annotations

import datetime as dt
import random
from decimal import Decimal as D

from headrace.ejson import Int64

from _window_helpers import Case


def date(s: str) -> dt.datetime:
    return dt.datetime.fromisoformat(s.replace("Z", "+00:00"))


# ------------------------------------------------------------------ data from the MongoDB manual

# $group page: "sales" (Decimal128 prices, Int32 quantities)
SALES = [
    {"_id": 1, "item": "abc", "price": D("10"), "quantity": 2, "date": date("2014-03-01T08:00:00Z")},
    {"_id": 2, "item": "jkl", "price": D("20"), "quantity": 1, "date": date("2014-03-01T09:00:00Z")},
    {"_id": 3, "item": "xyz", "price": D("5"), "quantity": 10, "date": date("2014-03-15T09:00:00Z")},
    {"_id": 4, "item": "xyz", "price": D("5"), "quantity": 20, "date": date("2014-04-04T11:21:39.736Z")},
    {"_id": 5, "item": "abc", "price": D("10"), "quantity": 10, "date": date("2014-04-04T21:23:13.331Z")},
    {"_id": 6, "item": "def", "price": D("7.5"), "quantity": 5, "date": date("2015-06-04T05:08:13Z")},
    {"_id": 7, "item": "def", "price": D("7.5"), "quantity": 10, "date": date("2015-09-10T08:43:00Z")},
    {"_id": 8, "item": "abc", "price": D("10"), "quantity": 5, "date": date("2016-02-06T20:20:13Z")},
]
# $sum / $avg / $max / $min / $addToSet pages: "sales" with int prices
SALES_INT = [
    {"_id": 1, "item": "abc", "price": 10, "quantity": 2, "date": date("2014-01-01T08:00:00Z")},
    {"_id": 2, "item": "jkl", "price": 20, "quantity": 1, "date": date("2014-02-03T09:00:00Z")},
    {"_id": 3, "item": "xyz", "price": 5, "quantity": 5, "date": date("2014-02-03T09:05:00Z")},
    {"_id": 4, "item": "abc", "price": 10, "quantity": 10, "date": date("2014-02-15T08:00:00Z")},
    {"_id": 5, "item": "xyz", "price": 5, "quantity": 10, "date": date("2014-02-15T09:05:00Z")},
]
# $first / $last pages
SALES_FL = SALES_INT + [
    {"_id": 6, "item": "xyz", "price": 5, "quantity": 5, "date": date("2014-02-15T12:05:10Z")},
    {"_id": 7, "item": "xyz", "price": 5, "quantity": 10, "date": date("2014-02-15T14:12:12Z")},
]
BOOKS = [
    {"_id": 8751, "title": "The Banquet", "author": "Dante", "copies": 2},
    {"_id": 8752, "title": "Divine Comedy", "author": "Dante", "copies": 1},
    {"_id": 8645, "title": "Eclogues", "author": "Dante", "copies": 2},
    {"_id": 7000, "title": "The Odyssey", "author": "Homer", "copies": 10},
    {"_id": 7020, "title": "Iliad", "author": "Homer", "copies": 10},
]
GAMESCORES = [
    {"playerId": "PlayerA", "gameId": "G1", "score": 31},
    {"playerId": "PlayerB", "gameId": "G1", "score": 33},
    {"playerId": "PlayerC", "gameId": "G1", "score": 99},
    {"playerId": "PlayerD", "gameId": "G1", "score": 1},
    {"playerId": "PlayerA", "gameId": "G2", "score": 10},
    {"playerId": "PlayerB", "gameId": "G2", "score": 14},
    {"playerId": "PlayerC", "gameId": "G2", "score": 66},
    {"playerId": "PlayerD", "gameId": "G2", "score": 80},
]
# "Null and Missing Values" examples of $top, $bottom, $topN, $bottomN, $firstN, $lastN
NULL_SCORES = [
    {"playerId": "PlayerA", "gameId": "G1", "score": 1},
    {"playerId": "PlayerB", "gameId": "G1", "score": 2},
    {"playerId": "PlayerC", "gameId": "G1", "score": 3},
    {"playerId": "PlayerD", "gameId": "G1"},
    {"playerId": "PlayerE", "gameId": "G1", "score": None},
]
MIXED_SCORES = [
    {"playerId": "PlayerA", "gameId": "G1", "score": 1},
    {"playerId": "PlayerB", "gameId": "G1", "score": "2"},
    {"playerId": "PlayerC", "gameId": "G1", "score": ""},
]
QUARTERS = [
    {"_id": 1, "year": 2017, "item": "A", "quantity": {"2017Q1": 500, "2017Q2": 500}},
    {"_id": 2, "year": 2016, "item": "A", "quantity": {"2016Q1": 400, "2016Q2": 300, "2016Q3": 0, "2016Q4": 0}},
    {"_id": 3, "year": 2017, "item": "B", "quantity": {"2017Q1": 300}},
    {"_id": 4, "year": 2016, "item": "B", "quantity": {"2016Q3": 100, "2016Q4": 250}},
]
USERS = [
    {"_id": 1, "name": "dave123", "quiz": 1, "score": 85},
    {"_id": 2, "name": "dave2", "quiz": 1, "score": 90},
    {"_id": 3, "name": "ahn", "quiz": 1, "score": 71},
    {"_id": 4, "name": "li", "quiz": 2, "score": 96},
    {"_id": 5, "name": "annT", "quiz": 2, "score": 77},
    {"_id": 6, "name": "ty", "quiz": 2, "score": 82},
]
CAKE_SALES = [
    {"_id": 0, "type": "chocolate", "orderDate": date("2020-05-18T14:10:30Z"), "state": "CA", "price": 13,
     "quantity": 120},
    {"_id": 1, "type": "chocolate", "orderDate": date("2021-03-20T11:30:05Z"), "state": "WA", "price": 14,
     "quantity": 140},
    {"_id": 2, "type": "vanilla", "orderDate": date("2021-01-11T06:31:15Z"), "state": "CA", "price": 12,
     "quantity": 145},
    {"_id": 3, "type": "vanilla", "orderDate": date("2020-02-08T13:13:23Z"), "state": "WA", "price": 13,
     "quantity": 104},
    {"_id": 4, "type": "strawberry", "orderDate": date("2019-05-18T16:09:01Z"), "state": "CA", "price": 41,
     "quantity": 162},
    {"_id": 5, "type": "strawberry", "orderDate": date("2019-01-08T06:12:03Z"), "state": "WA", "price": 43,
     "quantity": 134},
]
TEST_SCORES = [
    {"studentId": "2345", "test01": 62, "test02": 81, "test03": 80},
    {"studentId": "2356", "test01": 60, "test02": 83, "test03": 79},
    {"studentId": "2358", "test01": 67, "test02": 82, "test03": 78},
    {"studentId": "2367", "test01": 64, "test02": 72, "test03": 77},
    {"studentId": "2369", "test01": 60, "test02": 53, "test03": 72},
]
RESTAURANTS = [
    {"_id": 1, "name": "Central Park Cafe", "borough": "Manhattan"},
    {"_id": 2, "name": "Rock A Feller Bar and Grill", "borough": "Queens"},
    {"_id": 3, "name": "Empire State Pub", "borough": "Brooklyn"},
    {"_id": 4, "name": "Stan's Pizzaria", "borough": "Manhattan"},
    {"_id": 5, "name": "Jane's Deli", "borough": "Brooklyn"},
]
SCORES = [  # $count stage page, already filtered by {score: {$gt: 80}}
    {"_id": 1, "subject": "History", "score": 88},
    {"_id": 2, "subject": "History", "score": 92},
    {"_id": 4, "subject": "History", "score": 82},
    {"_id": 6, "subject": "History", "score": 83},
]

PCT = [0.5, 0.75, 0.9, 0.95]


def pct(field, p=PCT):
    return {"$percentile": {"input": f"${field}", "p": p, "method": "approximate"}}


def gs(acc):
    return {"_id": "$gameId", "v": acc}


# ------------------------------------------------------------------ random tie-breaking oracle

def mongo_top_bottom(keys: list, n: int, bottom: bool) -> list[int]:
    """MongoDB's AccumulatorTopBottomN (a bounded multimap) over keys in arrival order."""
    kept: list[tuple] = []
    for i, k in enumerate(keys):
        if len(kept) == n:
            if not bottom:
                if kept[-1][0] > k:
                    kept.pop()
                else:
                    continue
            elif k > kept[0][0]:
                kept.pop(0)
            else:
                continue
        pos = sum(1 for x in kept if x[0] <= k)     # insert after equal keys
        kept.insert(pos, (k, i))
    return [i for _, i in kept]


RNG = random.Random(20240101)
TIE_GROUPS = []
for g in range(40):
    TIE_GROUPS.append((g, RNG.randint(1, 5), [RNG.randint(0, 3) for _ in range(RNG.randint(1, 12))]))
_slots = [g for g, _, keys in TIE_GROUPS for _ in keys]
RNG.shuffle(_slots)  # the groups' documents interleave in arrival order
_next = {g: 0 for g, _, _ in TIE_GROUPS}
TIE_DOCS = []
for g in _slots:
    _, n, keys = TIE_GROUPS[g]
    i = _next[g]
    _next[g] += 1
    TIE_DOCS.append({"g": g, "n": n, "k": keys[i], "i": i})


# ------------------------------------------------------------------ the cases

CASES = {
  "group_docs": [
    # $group page
    Case("sales_by_item", [SALES], [("$group", {
        "_id": "$item", "totalSaleAmount": {"$sum": {"$multiply": ["$price", "$quantity"]}}})]),
    Case("sales_by_null", [SALES], [("$group", {
        "_id": None, "totalSaleAmount": {"$sum": {"$multiply": ["$price", "$quantity"]}},
        "averageQuantity": {"$avg": "$quantity"}, "count": {"$sum": 1}, "countAcc": {"$count": {}}})]),
    Case("sales_distinct", [SALES], [("$group", {"_id": "$item"})]),
    Case("sales_by_day", [SALES[:5]], [("$group", {
        "_id": {"$dateToString": {"format": "%Y-%m-%d", "date": "$date"}},
        "totalSaleAmount": {"$sum": {"$multiply": ["$price", "$quantity"]}},
        "averageQuantity": {"$avg": "$quantity"}, "count": {"$sum": 1}}), ("$sort", {"totalSaleAmount": -1})]),
    Case("books", [BOOKS], [("$group", {"_id": "$author", "books": {"$push": "$title"},
                                        "docs": {"$push": "$$ROOT"}})]),
  ],
  "accumulator_docs": [
    Case("sum_avg_min_max", [SALES_INT], [("$group", {
        "_id": {"day": {"$dayOfYear": "$date"}, "year": {"$year": "$date"}},
        "totalAmount": {"$sum": {"$multiply": ["$price", "$quantity"]}}, "count": {"$sum": 1},
        "qty": {"$sum": "$qty"}, "itemsSold": {"$addToSet": "$item"}})]),
    Case("by_item", [SALES_INT], [("$group", {
        "_id": "$item", "avgAmount": {"$avg": {"$multiply": ["$price", "$quantity"]}},
        "avgQuantity": {"$avg": "$quantity"}, "maxTotalAmount": {"$max": {"$multiply": ["$price", "$quantity"]}},
        "maxQuantity": {"$max": "$quantity"}, "minQuantity": {"$min": "$quantity"}})]),
    # $first/$last after $sort; rows delivered to Spark in reverse, arrival order shuffled
    Case("first_last", [[SALES_FL[i] for i in (6, 2, 0, 5, 3, 1, 4)]], [
        ("$sort", {"item": 1, "date": 1}),
        ("$group", {"_id": "$item", "firstSalesDate": {"$first": "$date"}, "lastSalesDate": {"$last": "$date"}})],
        reverse_rows=True),
    Case("merge_objects", [QUARTERS], [("$group", {"_id": "$item", "mergedSales": {"$mergeObjects": "$quantity"}})]),
    Case("std_dev", [USERS], [("$group", {"_id": "$quiz", "stdDev": {"$stdDevPop": "$score"},
                                          "samp": {"$stdDevSamp": "$score"}})]),
    Case("cake_count", [CAKE_SALES], [("$group", {"_id": "$state", "countNumberOfDocumentsForState": {"$count": {}}})]),
    Case("percentiles", [TEST_SCORES], [("$group", {
        "_id": None, "test01_median": {"$median": {"input": "$test01", "method": "approximate"}},
        "single": pct("test01", [0.95]), "test01_percentiles": pct("test01"), "test02_percentiles": pct("test02"),
        "test03_percentiles": pct("test03"), "test03_percent_alt": pct("test03", [0.9, 0.5, 0.75, 0.95]),
        "ends": pct("test01", [0, 1])})]),
  ],
  "top_bottom": [
    # $top & co: two windows (the second holds only G2's scores, changed) to show windows are independent
    Case("games", [GAMESCORES, [dict(d, score=d["score"] + 1) for d in GAMESCORES if d["gameId"] == "G2"]], [
        ("$group", {
            "_id": "$gameId",
            "top": {"$top": {"output": ["$playerId", "$score"], "sortBy": {"score": -1}}},
            "bottom": {"$bottom": {"output": ["$playerId", "$score"], "sortBy": {"score": -1}}},
            "topN": {"$topN": {"output": ["$playerId", "$score"], "sortBy": {"score": -1}, "n": 3}},
            "bottomN": {"$bottomN": {"output": ["$playerId", "$score"], "sortBy": {"score": -1}, "n": 3}},
            "firstN": {"$firstN": {"input": ["$playerId", "$score"], "n": 3}},
            "lastN": {"$lastN": {"input": ["$playerId", "$score"], "n": 3}},
            # the $maxN / $minN accumulator pages
            "maxN": {"$maxN": {"input": ["$score", "$playerId"], "n": 3}},
            "minN": {"$minN": {"input": ["$score", "$playerId"], "n": 3}},
        })]),
    Case("games_n_by_key", [GAMESCORES], [("$group", {
        "_id": {"gameId": "$gameId"},
        "topN": {"$topN": {"output": "$score", "sortBy": {"score": -1},
                           "n": {"$cond": {"if": {"$eq": ["$gameId", "G2"]}, "then": 1, "else": 3}}}},
        "firstN": {"$firstN": {"input": "$score",
                               "n": {"$cond": {"if": {"$eq": ["$gameId", "G2"]}, "then": 1, "else": 3}}}},
        "lastN": {"$lastN": {"input": "$score",
                             "n": {"$cond": {"if": {"$eq": ["$gameId", "G2"]}, "then": 1, "else": 3}}}},
        "maxN": {"$maxN": {"input": ["$score", "$playerId"],
                           "n": {"$cond": {"if": {"$eq": ["$gameId", "G2"]}, "then": 1, "else": 3}}}}})]),
    Case("games_sorted", [GAMESCORES], [("$sort", {"score": -1}), ("$group", {
        "_id": "$gameId", "firstN": {"$firstN": {"input": ["$playerId", "$score"], "n": 3}},
        "lastN": {"$lastN": {"input": ["$playerId", "$score"], "n": 3}}})]),
    Case("null_scores", [NULL_SCORES], [("$group", {
        "_id": "$gameId",
        "top": {"$top": {"output": ["$playerId", "$score"], "sortBy": {"score": 1}}},
        "bottom": {"$bottom": {"output": ["$playerId", "$score"], "sortBy": {"score": -1}}},
        "topN": {"$topN": {"output": ["$playerId", "$score"], "sortBy": {"score": 1}, "n": 3}},
        "bottomN": {"$bottomN": {"output": ["$playerId", "$score"], "sortBy": {"score": -1}, "n": 3}},
        "firstFiveScores": {"$firstN": {"input": "$score", "n": 5}},
        "lastFiveScores": {"$lastN": {"input": "$score", "n": 5}},
        "maxN": {"$maxN": {"input": "$score", "n": 5}}, "minN": {"$minN": {"input": "$score", "n": 2}}})]),
    Case("mixed_scores", [MIXED_SCORES], [("$group", {
        "_id": "$gameId", "topN": {"$topN": {"output": ["$playerId", "$score"], "sortBy": {"score": -1}, "n": 3}},
        "maxN": {"$maxN": {"input": "$score", "n": 2}}, "minN": {"$minN": {"input": "$score", "n": 2}}})]),
    Case("ties", [TIE_DOCS], [("$group", {
        "_id": {"g": "$g", "n": "$n"},
        "top": {"$topN": {"output": "$i", "sortBy": {"k": 1}, "n": "$n"}},
        "bottom": {"$bottomN": {"output": "$i", "sortBy": {"k": 1}, "n": "$n"}},
        "bottomDesc": {"$bottomN": {"output": "$i", "sortBy": {"k": -1}, "n": "$n"}},
        "b1": {"$bottom": {"output": "$i", "sortBy": {"k": 1}}},
        "b1d": {"$bottom": {"output": "$i", "sortBy": {"k": -1}}},
        "t1": {"$top": {"output": "$i", "sortBy": {"k": 1}}},
        "t1d": {"$top": {"output": "$i", "sortBy": {"k": -1}}}})]),
  ],
  "typing": [
    # MongoDB typing and null/missing rules
    Case("typing", [
        [{"x": 1}, {"x": 2}, {"x": "s"}, {"x": [5]}, {"x": None}, {}],                      # ints
        [{"x": 2**31 - 1}, {"x": 1}],                                                       # int -> long
        [{"x": Int64(2**62)}, {"x": Int64(2**62)}],                                          # long -> double
        [{"x": 0.1}, {"x": 0.2}, {"x": 0.3}],                                              # double-double
        [{"x": 1}, {"x": 2.5}],                                                             # int + double
        [{"x": D("1.5")}, {"x": D("2.25")}, {"x": 1}],                                     # decimal wins
        [{"y": 1}, {"x": "a"}],                                                             # nothing to sum
        [{"x": 1e308}, {"x": 1e308}, {"x": -1e308}],                                       # overflow
    ], [("$group", {"_id": None, "sum": {"$sum": "$x"}, "avg": {"$avg": "$x"}, "min": {"$min": "$x"},
                    "max": {"$max": "$x"}, "first": {"$first": "$x"}, "last": {"$last": "$x"},
                    "push": {"$push": "$x"}, "pop": {"$stdDevPop": "$x"}, "samp": {"$stdDevSamp": "$x"},
                    "median": {"$median": {"input": "$x", "method": "approximate"}},
                    "pct": {"$percentile": {"input": "$x", "p": [0, 1], "method": "approximate"}}})]),
    # Decimal128 totals: decimals added one by one in arrival order (34 digits each time), then
    # the other numbers; 1E+34 + 1 + 1 - 1E+34 is 0 there (each + 1 rounds away)
    Case("decimal_sums", [
        [{"x": D("0.1000000000000000000001")}, {"x": D("1E-25")}, {"x": 2}],
        [{"x": D("1E+34")}, {"x": D("1")}, {"x": D("1")}, {"x": D("-1E+34")}],
        [{"x": D("19.99")}, {"x": D("19.99")}, {"x": D("19.99")}, {"x": Int64(5)}],
        [{"x": D("1")}, {"x": D("2")}],
    ], [("$group", {"_id": None, "sum": {"$sum": "$x"}, "avg": {"$avg": "$x"}})]),
    Case("equality", [[{"k": 1, "v": 1}, {"k": 1.0, "v": 1.0}, {"k": Int64(1), "v": Int64(1)}, {"k": "1", "v": [1, 2]},
                       {"v": [1, 2]}, {"k": None, "v": {"a": 1}}, {"k": {"a": 1}, "v": {"a": 1}}]],
         [("$group", {"_id": "$k", "set": {"$addToSet": "$v"}, "n": {"$sum": 1}})]),
    Case("min_max_types", [[{"v": None}, {"v": "b"}, {"v": 5}, {}, {"v": "a"}, {"v": date("2020-01-01T00:00:00Z")},
                            {"v": 5.0}], [{"v": None}, {}]],
         [("$group", {"_id": None, "min": {"$min": "$v"}, "max": {"$max": "$v"}, "first": {"$first": "$v"},
                      "last": {"$last": "$v"}, "set": {"$addToSet": "$v"}, "merged": {"$mergeObjects": "$nope"}})]),
  ],
  "errors": [
    Case("errors", [[{"g": 1, "x": "1"}, {"g": 1, "x": "oops"}, {"g": 2, "x": "2"}, {"g": 3, "x": "3", "y": {"a": 1}},
                     {"g": 3, "x": "4", "y": 5}]],
         [("$group", {"_id": "$g", "n": {"$sum": {"$toInt": "$x"}}, "m": {"$mergeObjects": "$y"}})],
         failed=[(0, 2, {"g": 9}, "failed upstream")]),
    Case("id_error", [[{"g": "1"}, {"g": "x"}, {"g": "1"}]],
         [("$group", {"_id": {"$toInt": "$g"}, "n": {"$sum": 1}})]),
    Case("bad_n", [[{"g": 0}, {"g": 2}, {"g": 2}]],
         [("$group", {"_id": {"g": "$g"}, "f": {"$firstN": {"input": "$g", "n": "$g"}}})]),
  ],
  "stages": [
    Case("sort_restaurants", [RESTAURANTS, RESTAURANTS[::-1]], [("$sort", {"borough": 1})]),
    Case("sort_limit", [RESTAURANTS, RESTAURANTS[:2]], [("$sort", {"borough": -1, "_id": 1}), ("$limit", 3)]),
    Case("count_top", [[{"k": k} for k in ["b", "a", "c", "a", "b", "d", "a", "b", 1, 1, 1]]],
         [("$group", {"_id": "$k", "n": {"$count": {}}}), ("$sort", {"n": -1, "_id": 1}), ("$limit", 3)],
         failed=[(0, 2, {"k": "z"}, "failed upstream")]),
    Case("sort_limit_failed", [RESTAURANTS], [("$sort", {"borough": -1, "_id": 1}), ("$limit", 2)],
         failed=[(0, 1, {"_id": 98}, "failed upstream"), (0, 4, {"_id": 99}, "failed upstream")]),
    Case("sort_types", [[{"_id": i, "v": v} for i, v in enumerate(
        [[3, 1], 2, "a", None, [], {"x": 1}, [0, 9], True, 1.5])] + [{"_id": 9}]],
        [("$sort", {"v": 1})]),
    Case("sort_types_desc", [[{"_id": i, "v": v} for i, v in enumerate(
        [[3, 1], 2, "a", None, [], {"x": 1}, [0, 9], True, 1.5])] + [{"_id": 9}]],
        [("$sort", {"v": -1})]),
    Case("count", [SCORES, SCORES[:1]], [("$count", "passing_scores")],
         failed=[(0, 1, {"_id": 99}, "failed upstream")]),
    Case("limit", [[{"i": i} for i in range(5)], [{"i": 9}]], [("$limit", 2)]),
  ],
}
GROUP_OF = {c.name: g for g, cases in CASES.items() for c in cases}
