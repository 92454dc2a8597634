"""Readers yield Arrow RecordBatches (:mod:`headrace.spark.sources.arrow_rows`): the same rows
as the tuples pyspark would have converted, with only the text Python must read parsed here."""
from __future__ import annotations

import datetime as dt

from headrace import ejson
from headrace.spark.docs import from_variant, parse_in_reader
from headrace.spark.sources import PLAIN


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
        error = None if r["error"] == PLAIN else r["error"]       # PLAIN: a marker for the JVM parse
        assert (ejson.dumps(got), error) == (ejson.dumps(from_variant(doc)), err), raw
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


def test_a_file_source_keeps_the_line_starts_of_one_batch_only(tmp_path):
    """The ``file`` source's planner keeps where lines start from its batch's start to
    ``maxRecordsPerBatch`` past it, not every line of the file (36 MB per million lines): batches
    planned one after another read every line once, in order, and the offsets carry where their
    line starts."""
    from headrace.spark.sources.file import FileReader

    path = tmp_path / "in.jsonl"
    path.write_text("".join(f'{{"i": {i}}}\n' for i in range(25_000)))
    reader = FileReader(str(path), 4_000, 2)
    start, seen, widest = reader.initialOffset(), [], 0
    while True:
        end = reader.latestOffset(start)
        if end == start:
            break
        widest = max(widest, len(reader._lines.starts))
        for p in reader.partitions(start, end):
            seen += [r["offset"] for b in reader.read(p) for r in b.to_pylist()]
        reader.commit(end)
        start = end
    assert seen == list(range(25_000))
    assert start == {"line": 25_000, "byte": path.stat().st_size}
    assert widest <= 4_001


def test_a_file_source_bounds_a_batch_by_its_bytes_too(tmp_path):
    """``maxBytesPerBatch``: a batch holds at most that many bytes of lines, and at most
    ``maxRecordsPerBatch`` lines, but always one line, however long; every line is read once."""
    from headrace.spark.sources.file import FileReader

    path = tmp_path / "in.jsonl"
    small = [f'{{"i": {i}}}\n' for i in range(10)]            # 9 bytes each up to i = 9
    path.write_text("".join(small[:5]) + '{"big": "' + "x" * 100 + '"}\n' + "".join(small[5:]))
    reader = FileReader(str(path), 4, 1, max_bytes=20)
    start, sizes, seen = reader.initialOffset(), [], []
    while (end := reader.latestOffset(start)) is not start:
        sizes.append((end["line"] - start["line"], end["byte"] - start["byte"]))
        for p in reader.partitions(start, end):
            seen += [r["offset"] for b in reader.read(p) for r in b.to_pylist()]
        reader.commit(end)
        start = end
    assert sizes == [(2, 18), (2, 18), (1, 9), (1, 112), (2, 18), (2, 18), (1, 9)]
    assert seen == list(range(11))
    assert all(n <= 4 for n, _ in sizes)
    wide = FileReader(str(path), 4, 1, max_bytes=10 ** 9)
    assert wide.latestOffset(wide.initialOffset())["line"] == 4


def test_a_file_source_resumes_from_an_offset_without_its_byte(tmp_path):
    """An offset written before offsets carried ``byte`` (``{"line": n}``) is found by counting
    lines; a line still being written (no newline yet) waits for the next planning; nothing new
    gives back the same offset."""
    from headrace.spark.sources.file import FileReader

    path = tmp_path / "in.jsonl"
    path.write_text("".join(f'{{"i": {i}}}\n' for i in range(100)) + '{"i": 1')
    reader = FileReader(str(path), 30, 1)
    end = reader.latestOffset({"line": 90})
    assert end == {"line": 100, "byte": path.stat().st_size - len('{"i": 1')}
    (part,) = reader.partitions({"line": 90}, end)
    assert [r["raw"] for b in reader.read(part) for r in b.to_pylist()] == [f'{{"i": {i}}}' for i in range(90, 100)]
    assert reader.latestOffset(end) is end
    with open(path, "a") as f:
        f.write("00}\n")
    fresh = FileReader(str(path), 30, 1)          # a restarted planner, from the checkpoint's offset
    assert fresh.latestOffset(end) == {"line": 101, "byte": path.stat().st_size}
    (part,) = fresh.partitions(end, {"line": 101})
    assert [r["raw"] for b in fresh.read(part) for r in b.to_pylist()] == ['{"i": 100}']


def _java_normalized(text: str) -> str:
    """What :func:`headrace.spark.runtime.parse.normalized` makes of ``text`` in the JVM, in
    Python's ``re`` (the same pattern, possessive quantifiers and masks)."""
    import re

    from headrace.spark.runtime import parse as P

    def fix(t):
        return re.sub(P._FRACTION, r"\1e0", t)

    if "\\" not in text:
        return fix(text)
    masked = text.replace("\\\\", P._BS).replace('\\"', P._QT)
    return fix(masked).replace(P._QT, '\\"').replace(P._BS, "\\\\")


#: texts around the cases the two regular expressions must agree on
TRICKY = ['{"a": 1.5}', '{"t": "23:59:59.234+00:00", "n": 3}', '{"t": "59.2", "x": 0.25}', '{"a": [1, 2.5e3]}',
          '{"a": -0.5E2}', '{"s": "a\\"b 1.5"}', '{"s": "a\\\\", "v": 1.5}', '{"s": "\\\\\\"1.5"}',
          '{"a": 1}', '{"a": "1.5"}', '{"a": 1.}', '{"a": .5}', '{"a": "x" 1.5}', '{"a": "unterminated 1.5}',
          '{"a": 1.5', '[1.5]', '{"k\\u0022": 2.5}', '{"a":\n1.5}', '{"1.5": 2}', '{"a": "\\\\"}', '']


def _random_texts(n: int, seed: int) -> list[str]:
    import random

    rnd = random.Random(seed)
    alphabet = ['"', '\\', '1', '5', '.', 'e', 'E', ':', ',', ' ', 'a', '{', '}', '[', ']', '-', '\n']
    return ["".join(rnd.choice(alphabet) for _ in range(rnd.randint(0, 24))) for _ in range(n)]


def test_text_marked_plain_is_text_the_jvm_normalisation_leaves_as_it_is():
    """The reader's RE2 tests (``WHOLE_STRINGS``, ``FRACTION_OUTSIDE_STRINGS``) mark a text PLAIN
    only where the JVM's fraction normalisation would not change it, over tricky and random texts;
    the solar and Nexmark shapes (fractions only inside their timestamps) are PLAIN."""
    from headrace.spark.sources.arrow_rows import data_batch

    texts = TRICKY + _random_texts(20_000, 7)
    now = dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc)
    rows = data_batch("p", range(len(texts)), now, texts).to_pylist()
    marked = [t for t, r in zip(texts, rows) if r["error"] == PLAIN]
    assert [t for t in marked if _java_normalized(t) != t] == []
    plain = set(marked)
    assert {'{"a": 1.5}', '{"t": "59.2", "x": 0.25}', '{"a": [1, 2.5e3]}', '{"s": "a\\\\", "v": 1.5}',
            '[1.5]', '{"a":\n1.5}'}.isdisjoint(plain)
    assert {'{"t": "23:59:59.234+00:00", "n": 3}', '{"a": 1}', '{"a": "1.5"}', '{"1.5": 2}',
            '{"s": "a\\"b 1.5"}'} <= plain
    assert 0.2 < len(marked) / len(texts) < 0.9      # the random texts test both ways
    solar = '{"device_id":"device_18","timestamp":"2024-05-31T23:59:59.234+00:00","obs":{"watts":419}}'
    nexmark = '{"event_type":2,"dateTime":"2024-06-01T00:00:00.020Z","bid":{"auction":1000,"price":81}}'
    assert [r["error"] for r in data_batch("p", [0, 1], now, [solar, nexmark]).to_pylist()] == [PLAIN, PLAIN]


def test_the_jvm_parse_of_plain_text_equals_the_normalised_parse(spark):
    """Rows as the reader marks them, parsed by the JVM (:func:`headrace.spark.runtime.parse.parse`),
    give the documents and errors of the same rows all parsed with the normalisation."""
    from pyspark.sql import functions as F

    from headrace.spark.runtime.parse import parse
    from headrace.spark.sources import SOURCE_SCHEMA
    from headrace.spark.sources.arrow_rows import data_batch

    texts = TRICKY + _random_texts(3_000, 11) + [
        '{"v": %d.%d, "s": "%d.5", "w": [%d, 0.%d]}' % (i, i % 7, i, i, i) for i in range(200)]
    now = dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc)
    rows = [tuple(r.values()) for r in data_batch("p", range(len(texts)), now, texts).to_pylist()]
    assert sum(r[5] == PLAIN for r in rows) > 100
    df = spark.createDataFrame(rows, SOURCE_SCHEMA)
    normalised = df.withColumn("error", F.when(F.col("error") != F.lit(PLAIN), F.col("error")))

    def parsed(d):
        out = parse(d, F.col("kind") == 0).select("offset", F.to_json("doc").alias("j"),
                                                  F.schema_of_variant("doc").alias("t"), "error")
        return sorted(tuple(r) for r in out.collect())

    got, want = parsed(df), parsed(normalised)
    assert got == want
    assert any(t and "DOUBLE" in t for _, _, t, _ in got) and not any(t and "DECIMAL" in t for _, _, t, _ in got)


def test_a_processor_reads_a_file_in_batches_of_its_byte_bound(spark, tmp_path):
    """End to end: ``maxBytesPerBatch`` in ``$source.config`` makes the micro-batches (a long
    line alone in its batch), and every line comes out once, in order, to the sink."""
    import json

    from headrace.launch import prepare, start
    from headrace.store import open_store

    lines = [json.dumps({"i": i, "pad": "x" * (300 if i == 4 else 10)}) for i in range(12)]
    inp = tmp_path / "in.jsonl"
    inp.write_text("\n".join(lines) + "\n")
    pipeline = [{"$source": {"connectionName": "in", "config": {"maxBytesPerBatch": 100, "parallelism": 1}}},
                {"$project": {"_id": 0, "i": 1}},
                {"$merge": {"into": {"connectionName": "store", "db": "t", "coll": "out"}}}]
    run = prepare(pipeline, home=tmp_path / "home", extra_connections={"in": {"type": "file", "path": str(inp)}})
    proc = start(run, name="bytes", checkpoint=tmp_path / "home" / "ckpt", trigger_ms=0)
    proc.run(max_input=len(lines), duration_s=300)
    sizes = [p["numInputRows"] for p in proc.query.recentProgress if p["numInputRows"]]
    assert sizes == [3, 1, 1, 3, 3, 1], sizes      # 30 bytes a line with its newline, line 4 320
    got = open_store(tmp_path / "home" / "store").collection("t", "out").find()
    assert sorted(d["i"] for d in got) == list(range(12))
