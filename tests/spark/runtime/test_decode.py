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
