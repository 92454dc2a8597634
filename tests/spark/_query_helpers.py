"""Helpers for tests/spark/test_query.py: documents as a VARIANT frame, many queries evaluated
in one Spark job, and seeded random documents and queries for the differential test against
``headrace.mql.match.matches``.

Random values stay inside what both sides represent the same way (see the deviations in
``headrace.spark.values``): documents have their fields in sorted order, ``Int64`` only beyond
32 bits, and query constants nest containers one level deep at most.
"""
from __future__ import annotations

import datetime as dt
import decimal
import random
from typing import Any

from headrace import ejson
from headrace.ejson import MAXKEY, MINKEY, ObjectId
from headrace.mql.match import matches

CHUNK = 40  # query columns per Spark job


def docs_frame(spark, docs: list[dict]):
    """A DataFrame ``(i BIGINT, doc VARIANT, raw STRING)`` of the documents (``raw``: their
    Extended JSON text, fields in the documents' order)."""
    from pyspark.sql import types as T

    from headrace.spark.docs import to_variant

    schema = T.StructType([T.StructField("i", T.LongType()), T.StructField("doc", T.VariantType()),
                           T.StructField("raw", T.StringType())])
    return spark.createDataFrame([(i, to_variant(d), ejson.dumps(d)) for i, d in enumerate(docs)], schema)


def evaluate(spark, docs: list[dict], queries: list[dict], chunk: int = CHUNK,
             text: bool = False) -> list[list[bool]]:
    """``result[q][d]``: whether Spark's compiled query ``q`` matches document ``d``; one job
    per ``chunk`` queries, every query a column. ``text``: the documents' raw text is at hand
    for every path, as for source records (``Ctx.text``: documents compare in field order)."""
    from pyspark.sql import functions as F

    from headrace.spark.query import compile_query
    from headrace.spark.registry import Ctx

    df = docs_frame(spark, docs).cache()
    ctx = Ctx(root=F.col("doc"), text=(lambda path: F.col("raw")) if text else None)
    out: list[list[bool]] = [[False] * len(docs) for _ in queries]
    try:
        for start in range(0, len(queries), chunk):
            part = queries[start:start + chunk]
            cols = [compile_query(q, ctx).value.alias(f"q{j}") for j, q in enumerate(part)]
            for row in df.select("i", *cols).collect():
                for j in range(len(part)):
                    v = row[f"q{j}"]
                    assert v is not None, f"NULL result for {part[j]}"
                    out[start + j][row["i"]] = v
    finally:
        df.unpersist()
    return out


def mismatches(spark, docs: list[dict], queries: list[dict],
               text: bool = False) -> list[tuple[dict, dict, bool, bool]]:
    """``(query, doc, spark_result, oracle_result)`` for every disagreement."""
    res = evaluate(spark, docs, queries, text=text)
    bad = []
    for qi, q in enumerate(queries):
        for di, d in enumerate(docs):
            want = matches(d, q)
            if res[qi][di] != want:
                bad.append((q, d, res[qi][di], want))
    return bad


# ------------------------------------------------------------------------------ random values

OID_A = ObjectId("5234cc89687ea597eabee675")
OID_B = ObjectId("5234cca387ea597eabee6760")
SCALARS: list[Any] = [
    None, True, False, 0, 1, -1, 2, 3, 7, 2**40, -(2**35), 1.0, 2.5, -0.5, 3.0, float("nan"),
    float("inf"), decimal.Decimal("2.5"), decimal.Decimal("1"), "", "a", "ab", "abc", "b", "B",
    "é", "a\nb", dt.datetime(2024, 1, 1, tzinfo=ejson.UTC), dt.datetime(2024, 6, 1, 12, tzinfo=ejson.UTC),
    OID_A, OID_B, b"", b"\x01", b"\x01\x02", MINKEY, MAXKEY,
]
NAMES = ["a", "b", "c"]
INNER_NAMES = ["a", "b", "c", "0"]
PATHS = ["a", "b", "c"] * 4 + ["a.b", "a.0", "a.1", "b.a", "c.0", "b.c"] * 2 + ["a.b.c", "c.0.a", "a.b.0", "c.a.b"]
REGEXES = [("^a", ""), ("b$", ""), ("a.c", ""), ("^$", ""), ("A", "i"), ("^a|^b", ""), ("\\d", ""),
           ("[a-c]+$", ""), ("É", "i"), ("^b$", "m"), ("a.b", "s"), ("a # letter a\n b", "x"), ("\\bab\\b", "")]
TYPES = ["double", "string", "object", "array", "binData", "objectId", "bool", "date", "null",
         "int", "long", "decimal", "minKey", "maxKey", "number", 1, 2, 16, 18]


class Gen:
    """Seeded random documents and queries."""

    def __init__(self, seed: int):
        self.r = random.Random(seed)

    def scalar(self) -> Any:
        return self.r.choice(SCALARS)

    def value(self, depth: int) -> Any:
        x = self.r.random()
        if depth <= 0 or x < 0.5:
            return self.scalar()
        if x < 0.78:
            return [self.value(depth - 1) for _ in range(self.r.randint(0, 3))]
        return self.obj(depth - 1, INNER_NAMES)

    def obj(self, depth: int, names: list[str], p: float = 0.6) -> dict:
        return {k: self.value(depth) for k in sorted(names) if self.r.random() < p}

    def doc(self) -> dict:
        return self.obj(3, NAMES, 0.85)

    def const(self) -> Any:
        """A query constant: a scalar, or a shallow array / document."""
        x = self.r.random()
        if x < 0.8:
            return self.scalar()
        if x < 0.9:
            return [self.scalar() for _ in range(self.r.randint(0, 2))]
        return {k: self.scalar() for k in sorted(self.r.sample(INNER_NAMES, self.r.randint(0, 2)))}

    def regex(self) -> dict:
        p, o = self.r.choice(REGEXES)
        return {"$regularExpression": {"pattern": p, "options": o}}

    def op(self, value_mode: bool = False) -> dict:
        r = self.r
        kind = r.choice(["cmp", "cmp", "cmp", "in", "nin", "exists", "type", "regex", "size", "mod",
                         "all", "elemMatch", "not", "ne"])
        if kind == "cmp":
            return {r.choice(["$eq", "$gt", "$gte", "$lt", "$lte"]): self.const()}
        if kind == "ne":
            return {"$ne": self.const()}
        if kind in ("in", "nin"):
            items = [self.const() for _ in range(r.randint(0, 3))]
            if r.random() < 0.3:
                items.append(self.regex())
            return {"$" + kind: items}
        if kind == "exists":
            return {"$exists": r.choice([True, False])}
        if kind == "type":
            t = r.choice(TYPES)
            return {"$type": [t, r.choice(TYPES)] if r.random() < 0.2 else t}
        if kind == "regex":
            p, o = r.choice(REGEXES)
            return {"$regex": p, "$options": o} if o else {"$regex": p}
        if kind == "size":
            return {"$size": r.randint(0, 3)}
        if kind == "mod":
            return {"$mod": r.choice([[2, 0], [3, 1], [-2, 0], [2.5, 1], [4, -1]])}
        if kind == "all":
            if r.random() < 0.3:
                return {"$all": [{"$elemMatch": self.op(True)} for _ in range(r.randint(1, 2))]}
            return {"$all": [self.const() for _ in range(r.randint(0, 2))]}
        if kind == "elemMatch":
            if r.random() < 0.5:
                return {"$elemMatch": self.op(True)}
            return {"$elemMatch": self.query(1, names=INNER_NAMES)}
        if r.random() < 0.3:
            return {"$not": self.regex()}
        return {"$not": self.op(value_mode)}

    def clause(self, names: list[str] | None = None) -> dict:
        r = self.r
        path = r.choice(PATHS if names is None else names)
        x = r.random()
        if x < 0.25:
            return {path: self.const()}
        if x < 0.3:
            return {path: self.regex()}
        ops = self.op()
        if r.random() < 0.25:
            ops = {**ops, **{k: v for k, v in self.op().items() if k not in ops and k != "$options"}}
        if "$options" in ops and "$regex" not in ops:
            del ops["$options"]
        return {path: ops}

    def query(self, depth: int = 2, names: list[str] | None = None) -> dict:
        r = self.r
        q: dict = {}
        for _ in range(1 if r.random() < 0.8 else 2):
            q.update(self.clause(names))
        if depth > 0 and r.random() < 0.2:
            op = r.choice(["$and", "$or", "$nor"])
            q[op] = [self.query(depth - 1, names) for _ in range(r.randint(1, 3))]
        return q

    def schema(self, depth: int = 2) -> dict:
        """A small random ``$jsonSchema`` (a property schema when depth < 2)."""
        r = self.r
        s: dict = {}
        if depth < 2 and r.random() < 0.4:
            s["bsonType"] = r.choice(["int", "double", "string", "object", "array", "number", "null",
                                      ["string", "null"], "bool", "date"])
        if r.random() < 0.3:
            s["minimum" if r.random() < 0.5 else "maximum"] = r.choice([0, 1, 2.5])
            if r.random() < 0.3:
                s["exclusiveMinimum" if "minimum" in s else "exclusiveMaximum"] = True
        if r.random() < 0.2:
            s["multipleOf"] = r.choice([1, 2, 0.5])
        if r.random() < 0.2:
            s["minLength" if r.random() < 0.5 else "maxLength"] = r.randint(0, 2)
        if r.random() < 0.15:
            s["pattern"] = r.choice(["^a", "b", "^$"])
        if depth < 2 and r.random() < 0.2:
            s["enum"] = list({repr(x): x for x in (self.const() for _ in range(r.randint(1, 3)))
                              if not (isinstance(x, float) and x != x)}.values()) or [1]
        if depth > 0 and r.random() < 0.5:
            props = r.sample(INNER_NAMES if depth < 2 else NAMES, r.randint(1, 2))
            s["properties"] = {p: self.schema(depth - 1) for p in props}
            if r.random() < 0.25:
                s["required"] = r.sample(props, 1)
            if r.random() < 0.3:
                s["additionalProperties"] = r.choice([False, {"bsonType": "number"}])
            if r.random() < 0.2:
                s["patternProperties"] = {"^0$": {"bsonType": "string"}}
        if depth > 0 and r.random() < 0.3:
            s["items"] = self.schema(depth - 1)
        if r.random() < 0.2:
            s["minItems" if r.random() < 0.5 else "maxItems"] = r.randint(0, 2)
        if r.random() < 0.15:
            s["uniqueItems"] = True
        if r.random() < 0.1:
            s["minProperties" if r.random() < 0.5 else "maxProperties"] = r.randint(1, 3)
        if depth > 0 and r.random() < 0.15:
            s[r.choice(["anyOf", "allOf", "oneOf"])] = [self.schema(depth - 1) for _ in range(2)]
        if depth > 0 and r.random() < 0.1:
            s["not"] = self.schema(depth - 1)
        return s
