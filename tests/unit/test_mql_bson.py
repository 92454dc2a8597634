"""headrace.mql.bson: one BSON order, as a comparison (compare_values) and as a sort key
(sort_key, which zones' shard keys use)."""
from __future__ import annotations

import datetime as dt
import decimal
import itertools
import re

import pytest

from headrace import ejson
from headrace.mql.bson import MISSING, compare_values, sort_key
from headrace.mql.paths import get_path, has_path, set_path

UTC = dt.timezone.utc
VALUES = [
    ejson.MINKEY, None, MISSING, float("nan"), decimal.Decimal("NaN"), float("-inf"), -5, ejson.Int64(-5),
    0, 0.0, decimal.Decimal("0.0"), 1.5, decimal.Decimal("1.5"), 2**62, float("inf"), "", "a", "ab", "b",
    "é", {}, {"a": 1}, {"a": 1.0}, {"a": 2}, {"a": 1, "b": 0}, {"b": 0}, {"a": "x"}, {"a": {"c": [1]}},
    [], [1], [1, 2], [2], [[1]], [{"a": 1}], b"", b"\x00", b"\x01", ejson.Binary(b"\x00", 4), b"\x00\x00",
    ejson.Binary(b"\x00\x00", 128),
    ejson.ObjectId("00" * 12), ejson.ObjectId("01" * 12), False, True,
    dt.datetime(2020, 1, 1, tzinfo=UTC), dt.datetime(2020, 1, 1, 0, 0, 0, 1000, tzinfo=UTC),
    dt.datetime(2021, 1, 1), ejson.Timestamp(0, 5), ejson.Timestamp(1, 0), ejson.Timestamp(2**32 - 1, 1), re.compile("a"), re.compile("a", re.I), re.compile("b"), ejson.MAXKEY,
]


def _sign(x):
    return (x > 0) - (x < 0)


def test_sort_key_agrees_with_compare_values():
    wrong = []
    for a, b in itertools.product(VALUES, VALUES):
        ka, kb = sort_key(a), sort_key(b)
        if (ka > kb) - (ka < kb) != _sign(compare_values(a, b)):
            wrong.append((a, b))
    assert not wrong


def test_bindata_orders_by_length_then_subtype_then_bytes_and_timestamps_by_seconds_then_ordinal():
    assert compare_values(b"\x09", ejson.Binary(b"\x00", 4)) == -1           # subtype before bytes
    assert compare_values(ejson.Binary(b"\x00", 128), b"\x00\x00") == -1     # length first
    assert compare_values(ejson.Binary(b"\x01", 4), b"\x01") == 1 and ejson.Binary(b"\x01", 4) != b"\x01"
    assert compare_values(ejson.Timestamp(1, 9), ejson.Timestamp(2, 0)) == -1
    assert compare_values(ejson.Timestamp(0, 0), dt.datetime(2100, 1, 1, tzinfo=UTC)) == 1   # after dates


def test_sort_key_refuses_values_with_no_order():
    with pytest.raises(TypeError):
        sort_key(object())


def test_plain_dotted_paths():
    doc = {"a": {"b": 1}, "l": [{"b": 2}]}
    assert get_path(doc, "a.b") == 1 and get_path(doc, "l.b") is MISSING and get_path(doc, "x", 7) == 7
    assert has_path(doc, "a") and not has_path(doc, "a.c")
    out = set_path(doc, "a.c.d", 3)
    assert out == {"a": {"b": 1, "c": {"d": 3}}, "l": [{"b": 2}]} and doc["a"] == {"b": 1}


def test_hashed_index_keys_are_mongodbs():
    from headrace.mql.bson import hashed_index_key

    assert hashed_index_key("string to hash") == 763543691661428748       # the manual's example
    assert {hashed_index_key(v) for v in (1, ejson.Int64(1), 1.0, decimal.Decimal("1"))} == {5902408780260971510}
    assert hashed_index_key(None) == hashed_index_key(MISSING) == 2338878944348059895
    assert hashed_index_key(1.9) == hashed_index_key(1)                   # numbers squash to 64-bit ints
    assert hashed_index_key({"a": 1}) != hashed_index_key({"b": 1}) != hashed_index_key([1])


def test_bson_size_is_the_encoded_length():
    """Against pymongo's encoder (``bson.encode``), over every type the value model has."""
    import bson

    from headrace.connectors.mongodb import to_bson
    from headrace.mql.bson import bson_size

    docs = [{}, {"a": 1}, {"a": 2**31}, {"a": ejson.Int64(5)}, {"a": 1.5}, {"s": "é漢🎉"}, {"n": None},
            {"t": True}, {"d": dt.datetime(2024, 1, 1, tzinfo=dt.timezone.utc)}, {"x": decimal.Decimal("1.5")},
            {"o": ejson.ObjectId("5ab9cbfa31c2ab715d42129e")}, {"b": b"\x00\x01"}, {"k": ejson.MINKEY},
            {"u": ejson.Binary(b"\x00" * 16, 4)}, {"ts": ejson.Timestamp(1622731060, 2)},
            {"arr": [1, "two", [3.0], {"four": 4}]}, {"nested": {"deeper": {"deepest": [None, False]}}},
            {"_id": 1, "name": "Ana", "tags": ["x", "y"], "score": 9.5}]
    for d in docs:
        assert bson_size(d) == len(bson.encode(to_bson(d))), d
