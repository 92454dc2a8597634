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
