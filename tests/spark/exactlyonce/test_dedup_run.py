"""``$source.dedup`` end to end on the shared Spark session: duplicates dropped and counted,
missing ids to the DLQ, ``atLeastOnce`` skipping the catalog, decisions kept across a restart."""
import pytest

from headrace.testing import replay_docs, run_pipeline

pytestmark = pytest.mark.spark

DEDUP = {"idField": "$m", "horizon": {"size": 1, "unit": "hour"}}


def docs():
    # (arrival second, message id); ids 2 and 4 are sent twice (producer retries), 5 three times
    rows = [(1, 1), (1, 2), (2, 2), (2, 3), (3, 4), (5, 5), (5, 4), (6, 5), (9, 5), (9, 6)]
    out = []
    for a, m in rows:
        out.append({"arrival": {"$date": f"2024-01-01T00:00:{a:02d}Z"}, "t": {"$date": f"2024-01-01T00:00:{a:02d}Z"},
                    "m": m})
    out.append({"arrival": {"$date": "2024-01-01T00:00:09Z"}, "t": {"$date": "2024-01-01T00:00:09Z"}})
    return out


def pipeline(guarantee="exactlyOnce"):
    return {"pipeline": [{"$source": {"timeField": "$t", "dedup": DEDUP}}, {"$project": {"m": 1, "_id": 0}}],
            "options": {"guarantee": guarantee}}


def test_duplicates_dropped_counted_and_missing_ids_to_the_dlq():
    r = run_pipeline(pipeline(), replay={"arrivalField": "arrival"}, documents=docs())
    assert [d["m"] for d in r.outputs] == [1, 2, 3, 4, 5, 6]
    assert len(r.dlq) == 1 and "idField" in r.dlq[0]["errInfo"]["reason"] and r.dlq[0]["operatorName"] == "$source"
    d = r.stats["dedup"]
    assert d["checked"] == 10 and d["dropped"] == 4 and d["expiredDuplicates"] == 0
    assert d["catalogSize"] == 6 and d["bloomHits"] >= 1 and d["bloomNegative"] >= 5
    assert d["bloomNegative"] + d["bloomHits"] <= d["checked"] and d["falsePositiveLookups"] <= d["bloomHits"]


def test_at_least_once_skips_the_catalog():
    r = run_pipeline(pipeline("atLeastOnce"), replay={"arrivalField": "arrival"}, documents=docs())
    assert sorted(d["m"] for d in r.outputs if "m" in d) == [1, 2, 2, 3, 4, 4, 5, 5, 5, 6]
    assert r.stats["dedup"] == {"skipped": "guarantee atLeastOnce"} and r.stats["guarantee"] == "atLeastOnce"
