"""The PostgreSQL collection backend on a real private server."""
from __future__ import annotations

import psycopg
import pytest

from headrace import ejson
from headrace.collections import open_collection
from headrace.connections import load_registry
from headrace.errors import ConfigError
from headrace.store.base import MergeSpec
from headrace.store.postgres import PostgresStore

pytestmark = pytest.mark.integration


@pytest.fixture
def coll(pg2, schema):
    store = PostgresStore(pg2[0].dsn)
    c = store.collection(schema, "items")
    yield c
    c.drop()
    store.close()


def test_insert_order_field_order_and_extended_json_round_trip(coll):
    docs = [{"_id": 3, "z": 1, "a": {"y": ejson.Int64(5), "b": 1.5}},
            {"_id": ejson.ObjectId(), "when": ejson.millis_to_datetime(1_700_000_000_123), "dec": __import__("decimal").Decimal("1.10")},
            {"b": b"\x00\x01", "k": ejson.MINKEY}]
    r = coll.insert_many(docs)
    assert r.inserted == 3 and r.errors == []
    got = list(coll.find())
    assert [list(d) for d in got[:2]] == [["_id", "z", "a"], ["_id", "when", "dec"]]
    assert got[0] == docs[0] and isinstance(got[0]["a"]["y"], ejson.Int64)
    assert got[1] == docs[1] and isinstance(got[2]["_id"], ejson.ObjectId) and got[2]["b"] == b"\x00\x01"
    assert coll.insert_many([{"_id": 3}, {"_id": 4}, {"_id": 4}]).errors == [(0, "duplicate key: _id {\"$numberInt\":\"3\"}"),
                                                                              (2, "duplicate key: _id {\"$numberInt\":\"4\"}")]
    assert coll.count() == 4
    # stored as canonical Extended JSON, queryable as JSONB
    with psycopg.connect(coll.store.dsn) as c:
        row = c.execute(f'SELECT doc->\'a\'->\'y\' FROM "{coll.db}"."items" WHERE id_key = %s', ('{"$numberInt":"3"}',)).fetchone()
    assert row[0] == {"$numberLong": "5"}


def test_merge_semantics_by_id(coll):
    coll.insert_many([{"_id": 1, "a": 1, "b": 1}, {"_id": 2, "a": 2}])
    r = coll.merge_many([{"_id": 1, "b": 9, "c": 3}, {"_id": 5, "a": 5}, {"_id": 5, "a": 6}], MergeSpec())
    assert (r.merged, r.inserted) == (2, 1)
    assert {d["_id"]: d for d in coll.find()}[1] == {"_id": 1, "a": 1, "b": 9, "c": 3}
    assert {d["_id"]: d for d in coll.find()}[5] == {"_id": 5, "a": 6}
    r = coll.merge_many([{"_id": 2, "x": 1}], MergeSpec(when_matched="replace"))
    assert r.replaced == 1 and {d["_id"]: d for d in coll.find()}[2] == {"_id": 2, "x": 1}
    r = coll.merge_many([{"_id": 2, "x": 2}, {"_id": 7}], MergeSpec(when_matched="keepExisting", when_not_matched="discard"))
    assert (r.kept, r.discarded, coll.count()) == (1, 1, 3)
    r = coll.merge_many([{"_id": 2}, {"_id": 8}], MergeSpec(when_matched="fail", when_not_matched="fail"))
    assert [i for i, _ in r.errors] == [0, 1]
    r = coll.merge_many([{"_id": 1, "p": 1}], MergeSpec(when_matched=lambda old, new: {**old, "n": old["a"] + new["p"]}))
    assert r.merged == 1 and {d["_id"]: d for d in coll.find()}[1]["n"] == 2
    assert [d["_id"] for d in coll.find()] == [1, 2, 5]        # insertion order


def test_merge_delete(coll):
    from _connector_helpers import check_merge_delete

    check_merge_delete(coll)


def test_merge_on_other_fields_and_per_document_errors(coll):
    coll.insert_many([{"_id": 1, "k": {"x": 1}, "v": 1}, {"_id": 2, "k": {"x": 2}, "v": 2}])
    r = coll.merge_many([{"k": {"x": 2}, "v": 20}, {"k": {"x": 3}, "v": 30}, {"v": 0}, {"k": {"x": 4}, "s": "a\u0000b"}],
                        MergeSpec(on=("k.x",), when_matched="merge"))
    assert (r.merged, r.inserted) == (1, 1)
    assert [i for i, _ in r.errors] == [2, 3] and "NUL" in r.errors[1][1]
    got = {d["k"]["x"]: d for d in coll.find()}
    assert got[2] == {"_id": 2, "k": {"x": 2}, "v": 20} and got[3]["v"] == 30 and isinstance(got[3]["_id"], ejson.ObjectId)
    assert coll.merge_many([{"s": "a\\u0000b"}], MergeSpec()).inserted == 1      # an escaped backslash is fine
    assert coll.delete_ids([1, 2, 99]) == 2


def test_statement_timeout_option_and_unreachable_server(pg2, schema, tmp_path):
    reg = load_registry(None, home=tmp_path, extra={
        "pg": {"type": "postgres", "dsn": pg2[1].dsn, "statementTimeoutMs": 200},
        "dead": {"type": "postgres", "dsn": "postgresql://u:sekret@127.0.0.1:1/x", "connectTimeoutS": 2},
        "nodsn": {"type": "postgres"}})
    c = open_collection(reg, "pg", schema, "slow")
    with psycopg.connect(pg2[1].dsn, autocommit=True) as a:
        a.execute(f"CREATE FUNCTION \"{schema}\".nap() RETURNS trigger LANGUAGE plpgsql AS "
                  "$$BEGIN PERFORM pg_sleep(1); RETURN NEW; END$$")
        a.execute(f"CREATE TRIGGER nap AFTER INSERT ON \"{schema}\".slow FOR EACH ROW EXECUTE FUNCTION \"{schema}\".nap()")
    with pytest.raises(psycopg.errors.QueryCanceled):
        c.insert_many([{"a": 1}])
    assert c.count() == 0
    with pytest.raises(ConfigError) as e:
        open_collection(reg, "dead", schema, "x")
    assert e.value.code == "POSTGRES_UNREACHABLE" and "connection 'dead'" in str(e.value) and "sekret" not in str(e.value)
    with pytest.raises(ConfigError) as e:
        open_collection(reg, "nodsn", schema, "x")
    assert e.value.code == "POSTGRES_INVALID" and "dsn" in str(e.value)


def test_reconnects_after_a_server_restart(pg2, schema):
    store = PostgresStore(pg2[1].dsn)
    c = store.collection(schema, "r")
    c.insert_many([{"_id": 1}])
    pg2[1].stop("immediate")
    with pytest.raises(psycopg.OperationalError):
        c.insert_many([{"_id": 2}])
    pg2[1].start()
    assert c.insert_many([{"_id": 3}]).inserted == 1
    assert [d["_id"] for d in c.find()] == [1, 3]
    assert schema in store.databases() and store.collections(schema) == ["r"]
    store.close()
