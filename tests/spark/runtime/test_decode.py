"""The fast VARIANT decoder (:func:`headrace.spark.docs.decode`) gives what pyspark's generic
``toPython`` gives (after headrace's restoring of BSON types), key order included."""
from __future__ import annotations

import datetime as dt
import decimal
import random

from headrace import ejson
from headrace.spark.docs import from_variant, from_variant_slow, to_variant


def _value(rng: random.Random, depth: int = 0):
    kinds = [
        lambda: None, lambda: True, lambda: False, lambda: rng.randint(-200, 200),
        lambda: rng.randint(-2**40, 2**40), lambda: ejson.Int64(rng.randint(-5, 5)),
        lambda: rng.random() * 1e6, lambda: "é" * rng.randint(0, 80),
        lambda: decimal.Decimal(rng.choice(["1.25", "-0.001", "123456789012.5", "1E+400"])),
        lambda: dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc) + dt.timedelta(microseconds=rng.randint(0, 10**12)),
        lambda: dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc) + dt.timedelta(
            microseconds=rng.choice([0, 999, 86_400_000_000 - 1, rng.randint(0, 253_402_300_799_999_999)])),
        lambda: b"\x00\x01\xff", lambda: ejson.ObjectId("5f" * 12), lambda: ejson.MINKEY,
        lambda: ejson.Binary(b"\x0e;\x90c", rng.choice([3, 4, 128])), lambda: ejson.Timestamp(2**32 - 1, rng.randint(0, 9)),
        lambda: {f"k{i}": _value(rng, depth + 1) for i in range(rng.randint(0, 4))},
        lambda: [_value(rng, depth + 1) for _ in range(rng.randint(0, 300 if rng.random() < 0.05 else 4))],
        lambda: {"$oid": "not hex"}, lambda: {"$numberDecimal": "NaN"},
    ]
    return kinds[rng.randrange(len(kinds) if depth < 3 else len(kinds) - 4)]()


def test_decode_matches_pyspark():
    rng = random.Random(11)
    for _ in range(2000):
        doc = {"z": _value(rng), "a": {"x": _value(rng), "b": _value(rng)}, "m": [_value(rng), _value(rng)]}
        v = to_variant(doc)
        fast, slow = from_variant(v), from_variant_slow(v)
        assert ejson.dumps(fast, relaxed=False) == ejson.dumps(slow, relaxed=False)
        assert list(fast) == list(slow)


def test_decode_large_objects():
    doc = {f"field{i:04d}": i * 1000 for i in range(3000)}      # 2-byte ids, large size
    doc["long"] = "x" * 100_000                                    # 4-byte offsets, long string
    v = to_variant(doc)
    assert from_variant(v) == from_variant_slow(v)


def test_decimals_with_an_exponent_or_38_digits_round_trip():
    """``1E+30`` was stored as a corrupt value (pyspark's builder wrote a header before failing
    on the negative scale, and the fallback appended after it), and 29 to 38 digits came back
    rounded to 28."""
    for text in ("1E+30", "5E+3", "-7E+2", "1234567890123456789012345678901",
                 "12345678901234567890.123456789012345678", "1E+40", "1E-50"):
        d = decimal.Decimal(text)
        back = from_variant(to_variant({"v": d}))["v"]
        assert back == d and back.is_finite(), (text, back)


# ---------------------------------------------------------------- writing text straight from VARIANT

def _template(rng: random.Random, v):
    """A random order template for value ``v`` (see :mod:`headrace.mql.order_templates`),
    sometimes wrong for it (a template need not fit: the source document may differ)."""
    from headrace.mql.order_templates import REST, Each, KeyOrder

    r = rng.random()
    if r < 0.05:
        return "a source value"     # a field that was a scalar in the source
    if r < 0.15:
        return None
    if type(v) is dict:
        keys = list(v) + [f"new{i}" for i in range(rng.randint(0, 2))]
        rng.shuffle(keys)
        keys = keys[:rng.randint(0, len(keys))]
        t = {k: _template(rng, v.get(k)) for k in keys}
        if rng.random() < 0.4:
            items = list(t.items())
            items.insert(rng.randint(0, len(items)), (REST, None))
            t = dict(items)
        return t
    if type(v) is list:
        if r < 0.4 and v:
            return Each(_template(rng, rng.choice(v)))
        if r < 0.7:
            return [_template(rng, x) for x in v] + ([{"k": None}] if rng.random() < 0.3 else [])
        if r < 0.8:
            return KeyOrder(("b", "a"))
        return {"x": None}
    return v if r < 0.6 else {"a": None, REST: None}


def test_text_is_the_decoded_document_reordered_and_dumped():
    """``to_text(v, t) == ejson.dumps(reorder(decode(v), t))`` for random documents and templates."""
    from headrace.mql.order_templates import reorder
    from headrace.spark.docs_text import to_text

    rng = random.Random(5)
    extra = [float("nan"), float("-inf"), -0.0, 1e300, dt.datetime(1969, 12, 31, 23, 59, tzinfo=dt.timezone.utc),
             dt.datetime(9999, 12, 31, 23, 59, 59, 999999, tzinfo=dt.timezone.utc), 'quote " back \\ nl \n \u2028',
             [{"k": "a", "v": 1}, {"k": "b", "v": 2}], {"$oid": "5f" * 12}, {"$foo": 1, "$bar": 2}]
    for i in range(3000):
        doc = {"z": _value(rng), "a": {"x": _value(rng), "b": _value(rng)}, "m": [_value(rng), _value(rng)],
               "e": rng.choice(extra)}
        v = to_variant(doc)
        t = _template(rng, from_variant(v))
        assert to_text(v.value, v.metadata, t) == ejson.dumps(reorder(from_variant(v), t)), (i, doc, t)


def test_text_of_large_objects_and_long_strings():
    from headrace.spark.docs_text import to_text

    doc = {f"field{i:04d}": [i, {"s": "é" * (i % 90)}] for i in range(3000)}
    doc["long"] = "x" * 100_000
    v = to_variant(doc)
    t = {f"field{i:04d}": None for i in range(2999, -1, -7)}
    from headrace.mql.order_templates import reorder
    assert to_text(v.value, v.metadata, t) == ejson.dumps(reorder(from_variant(v), t))


def test_text_head_and_tail():
    """The ``_id`` head is left out when the document has one; a document with ``_stream_meta``,
    a one-field ``$`` object and a non-object are left to the general writer (``None``)."""
    from headrace.spark.docs_text import to_text

    def text(doc, **kw):
        v = to_variant(doc)
        return to_text(v.value, v.metadata, None, **kw)

    assert text({"a": 1}, head='"_id":1', tail='"m":2') == '{"_id":1,"a":1,"m":2}'
    assert text({"b": 1, "_id": 5}, head='"_id":1') == '{"_id":5,"b":1}'
    assert text({}, head='"_id":1', tail='"m":2') == '{"_id":1,"m":2}'
    assert text({}) == "{}"
    assert text({"_stream_meta": {}}, tail='"_stream_meta":2') is None
    assert text({"_stream_meta": {}}) == '{"_stream_meta":{}}'
    assert text({"$oid": "5f" * 12}) is None
    v = to_variant([1])
    assert to_text(v.value, v.metadata) is None
