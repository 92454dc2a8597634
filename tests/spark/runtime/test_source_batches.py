"""Readers yield Arrow RecordBatches (:mod:`headrace.spark.sources.arrow_rows`): the same rows
as the tuples pyspark would have converted, with only the text Python must read parsed here."""
from __future__ import annotations

import datetime as dt

from headrace import ejson
from headrace.spark.docs import from_variant, parse_in_reader


def test_data_batch_matches_the_tuples_it_replaces():
    from pyspark.sql.pandas.types import to_arrow_schema  # noqa: F401 - the schema's source
    from pyspark.sql.types import VariantVal

    from headrace.spark.sources.arrow_rows import arrow_schema, data_batch, tick_batch

    raws = ['{"a": 1.5}', '{"d": {"$date": "2024-01-02T00:00:00Z"}}', '{"n": NaN}', "not json", '["x"]',
            '{"big": 12345678901234567890}', '{"s": "$ in a string"}', '{"ts": {"$timestamp": {"t": 1, "i": 2}}}']
    now = dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc)
    b = data_batch("p", range(10, 10 + len(raws)), now, raws, keys=[None, "k"] + [None] * (len(raws) - 2))
    assert b.schema.equals(arrow_schema()) and b.num_rows == len(raws)
    rows = b.to_pylist()
    for r, raw in zip(rows, raws):
        doc, err = parse_in_reader(raw)
        got = None if r["doc"] is None else from_variant(VariantVal(r["doc"]["value"], r["doc"]["metadata"]))
        assert (ejson.dumps(got), r["error"]) == (ejson.dumps(from_variant(doc)), err), raw
        assert (r["partition"], r["raw"], r["kind"], r["arrival"], r["source_ts"]) == ("p", raw, 0, now, now)
    assert [r["offset"] for r in rows] == list(range(10, 18)) and rows[1]["key"] == "k"
    assert rows[7]["doc"] is not None and from_variant(VariantVal(rows[7]["doc"]["value"], rows[7]["doc"]["metadata"])) \
        == {"ts": ejson.Timestamp(1, 2)}
    per_row = data_batch("p", [1, 2], [1_000_000, 2_000_000], ['{"a":1}', '{"a":2}'])
    assert [r["arrival"] for r in per_row.to_pylist()] == [dt.datetime(1970, 1, 1, 0, 0, s, tzinfo=dt.timezone.utc)
                                                             for s in (1, 2)]
    tick = tick_batch("p").to_pylist()[0]
    assert tick["kind"] == 1 and tick["raw"] is None and tick["partition"] == "p"


def test_a_file_batch_arrives_at_one_instant_in_file_order(tmp_path):
    """The ``file`` source's input partitions of one micro-batch carry the batch's one arrival
    instant (taken at planning), so arrival order within the batch is file order whichever
    task reads first (before, each task took its own read instant: ``$first`` over a window
    spanning both halves of a batch could take the second half's document)."""
    import time

    from headrace.spark.sources.file import FileReader

    path = tmp_path / "in.jsonl"
    path.write_text("".join(f'{{"i": {i}}}\n' for i in range(30_000)))
    reader = FileReader(str(path), 30_000, 2)
    end = reader.latestOffset({"line": 0})
    parts = reader.partitions({"line": 0}, end)
    assert len(parts) == 2
    rows = []
    for p in reversed(parts):       # the second half read first, later
        rows += [r for b in reader.read(p) for r in b.to_pylist()]
        time.sleep(0.01)
    assert len({r["arrival"] for r in rows}) == 1
    assert sorted(r["offset"] for r in rows) == list(range(30_000))
