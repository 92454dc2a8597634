"""Window state files know the bounds of their windows' starts (``StateFile.starts``), and
closing windows read only the files that may hold their rows: a batch that closes an old
window does not read the files of windows opened since."""
from __future__ import annotations

import json

import pytest

from headrace.launch import prepare, start
from headrace.spark.runtime.state import StateFile, start_bounds

pytestmark = pytest.mark.spark


def test_bounds_round_trip_and_files_written_before_them():
    f = StateFile(3, 9_000, 9_500, "/ck/headrace/state/3.parquet", start_bounds({4_000, 2_000, 6_000}))
    assert f.starts == (2_000, 6_000)
    assert StateFile.from_json(json.loads(json.dumps(f.to_json()))) == f
    assert f.holds_any([2_000]) and f.holds_any([6_000, 10_000]) and not f.holds_any([0, 8_000])
    old = StateFile.from_json([3, 9_000, 9_500, "/ck/headrace/state/3.parquet"])  # an older checkpoint
    assert old.starts is None and old.holds_any([123]) and old.to_json() == [3, 9_000, 9_500, old.path]
    assert start_bounds(set()) is None and start_bounds(None) is None
    # whether a partial row needs the full finalisation (a decimal total): unknown reads as yes
    plain = StateFile(4, 9_000, 9_500, "/ck/headrace/state/4.parquet", None, False)
    assert StateFile.from_json(json.loads(json.dumps(plain.to_json()))) == plain
    assert old.flagged and f.flagged


def _at(s: int) -> dict:
    return {"$date": f"2024-01-01T00:00:{s:02d}Z"}


WINDOWS = {
    "partial": [{"$group": {"_id": "$k", "n": {"$count": {}}, "v": {"$push": "$v"}}}, {"$sort": {"_id": 1}}],
    "documents": [{"$sort": {"v": 1}}],
}


@pytest.mark.parametrize("inner", sorted(WINDOWS))
def test_closing_windows_read_only_their_files(inner, spark, tmp_path, monkeypatch):
    from pyspark.sql.readwriter import DataFrameReader

    # one micro-batch per arrival second; event time 10 s per batch; 10 s tumbling windows and
    # 5 s of lateness: batch b opens window [10b, 10b+10) and closes window [10(b-1), 10b)
    docs = [{"arrival": _at(b), "t": _at(10 * b + j), "k": j % 2, "v": 10 * b + j} for b in range(5) for j in range(3)]
    pipe = [{"$source": {"documents": docs, "timeField": "$t", "replay": {"arrivalField": "arrival"}}},
            {"$tumblingWindow": {"interval": {"size": 10, "unit": "second"},
                                 "allowedLateness": {"size": 5, "unit": "second"}, "pipeline": WINDOWS[inner]}}]
    read: list[tuple] = []
    parquet = DataFrameReader.parquet

    def recording(self, *paths, **kw):
        read.append(tuple(p.rsplit("/", 1)[-1] for p in paths))
        return parquet(self, *paths, **kw)

    monkeypatch.setattr(DataFrameReader, "parquet", recording)
    outputs: list = []
    proc = start(prepare({"pipeline": pipe}, home=tmp_path / "home"), name=f"files_{inner}",
                 checkpoint=tmp_path / "ck", on_output=outputs.extend)
    proc.run(duration_s=300)
    if inner == "documents":
        assert [d["v"] for d in outputs] == [10 * b + j for b in range(5) for j in range(3)]
    else:
        assert [(d["_id"], d["n"]) for d in outputs] == [(0, 2), (1, 1)] * 5
    # every state file written knows the starts of its windows: batch b's, 10 s x b
    t0 = 1_704_067_200_000
    files = {}
    for meta in (tmp_path / "ck" / "headrace" / "meta").glob("*.json"):
        for v in json.loads(meta.read_text())["files"]:
            f = StateFile.from_json(v)
            files[f.path.rsplit("/", 1)[-1]] = f.starts
    assert files and all(files[f"{b}.parquet"] == (t0 + 10_000 * b, t0 + 10_000 * b)
                         for b in (int(n.split(".")[0]) for n in files)), files
    # a close reads the closing window's file alone, not those of the windows opened since
    # (the end of the input closes the last two windows together)
    assert len(read) >= 3 and all(len(r) == 1 for r in read[:-1]) and len(read[-1]) <= 2, read


def test_batch_partials_keep_only_what_a_result_can_use(spark, tmp_path):
    """A batch's partial row of ``$top``, ``$firstN``/``$lastN``, ``$addToSet`` and
    ``$mergeObjects`` is stored trimmed (``Partial.trim``): the best candidate, the first or
    last n, each value once, one merged object; ``$bottomN`` keeps its rows (its ties depend on
    the arrivals before). Results over three batches are MongoDB's."""
    import pyarrow.parquet as pq

    # three micro-batches of 6 documents in one 30 s window, two groups; a fourth closes it
    docs = [{"arrival": _at(b), "t": _at(10 * b + j), "k": j % 2, "v": 10 * b + j, "c": (10 * b + j) % 3,
             "o": {"ab"[j % 2]: 10 * b + j}} for b in range(3) for j in range(6)]
    docs.append({"arrival": _at(3), "t": _at(40), "k": 0, "v": 0, "c": 0, "o": {}})
    group = {"_id": "$k", "top": {"$top": {"sortBy": {"v": -1}, "output": "$v"}},
             "first2": {"$firstN": {"n": 2, "input": "$v"}}, "last2": {"$lastN": {"n": 2, "input": "$v"}},
             "set": {"$addToSet": "$c"}, "m": {"$mergeObjects": "$o"},
             "bn": {"$bottomN": {"n": 2, "sortBy": {"v": -1}, "output": "$v"}}}
    pipe = [{"$source": {"documents": docs, "timeField": "$t", "replay": {"arrivalField": "arrival"}}},
            {"$tumblingWindow": {"interval": {"size": 30, "unit": "second"},
                                 "pipeline": [{"$group": group}, {"$sort": {"_id": 1}}]}}]
    state = tmp_path / "ck" / "headrace" / "state"
    lengths: dict = {}

    def on_batch(batch_id: int, _clock, _w) -> None:
        f = state / f"{batch_id}.parquet"
        if batch_id < 3 and f.exists():
            t = pq.read_table(f).to_pylist()
            lengths[batch_id] = sorted(tuple(len(r[f"_a{i}_xs"]) for i in range(6)) for r in t)

    outputs: list = []
    proc = start(prepare({"pipeline": pipe}, home=tmp_path / "home"), name="trimmed",
                 checkpoint=tmp_path / "ck", on_output=outputs.extend, on_batch=on_batch)
    proc.run(duration_s=300)
    # per group and batch: 3 candidates; kept: 1 top, 2 first, 2 last, distinct c, 1 object, 3 bottomN
    assert lengths and all(v == [(1, 2, 2, 3, 1, 3), (1, 2, 2, 3, 1, 3)] for v in lengths.values()), lengths
    vs = {k: [d["v"] for d in docs[:-1] if d["k"] == k] for k in (0, 1)}

    def first_seen(xs):
        return [x for i, x in enumerate(xs) if x not in xs[:i]]

    want = [{"_id": k, "top": max(vs[k]), "first2": vs[k][:2], "last2": vs[k][-2:],
             "set": first_seen([v % 3 for v in vs[k]]), "m": {"ab"[k]: vs[k][-1]}, "bn": sorted(vs[k])[:2][::-1]}
            for k in (0, 1)]
    got = [{f: d[f] for f in ("_id", "top", "first2", "last2", "set", "m", "bn")} for d in outputs[:2]]
    assert got == want and len(outputs) == 3, outputs     # the end of the input closes the last window
