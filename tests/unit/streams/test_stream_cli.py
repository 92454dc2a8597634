"""``headrace stream ...`` through the real CLI (subprocesses) and ``headrace.cli.main``."""
from __future__ import annotations

import io
import json
import subprocess

import pytest

from headrace.cli import main
from headrace.streams import MAX_HASH, Stream, create_stream

from stream_helpers import PY, child_env, cli, cli_json, drain_order


def _lines(text: str) -> list[dict]:
    return [json.loads(ln) for ln in text.splitlines() if ln.strip()]


def test_create_put_split_merge_describe_read_leases(home):
    d = cli_json("stream", "create", "orders", "--shards", "2", "--home", home)
    assert d["name"] == "orders" and [s["state"] for s in d["shards"]] == ["open", "open"]
    assert d["shards"][0]["range"] == {"start": "0", "end": str(MAX_HASH // 2)}

    put = "".join(json.dumps({"key": f"c{i % 5}", "data": {"n": i}}) + "\n" for i in range(30))
    p = cli("stream", "put", "orders", "--home", home, input=put, check=True)
    acks = _lines(p.stdout)
    assert len(acks) == 30 and {a["shard"] for a in acks} <= {"shard-000000", "shard-000001"}
    assert all(set(a) == {"key", "shard", "seq", "arrival"} for a in acks)

    sp = cli_json("stream", "split", "orders", "shard-000000", "--home", home)
    assert sp["children"] == ["shard-000002", "shard-000003"]
    mid = int(sp["stream"]["shards"][3]["range"]["start"])
    assert mid == (MAX_HASH // 2 + 1) // 2
    sp2 = cli_json("stream", "split", "orders", "shard-000001", "--at", str(MAX_HASH - 10), "--home", home)
    assert sp2["children"] == ["shard-000004", "shard-000005"]
    mg = cli_json("stream", "merge", "orders", "shard-000003", "shard-000004", "--home", home)
    assert mg["child"] == "shard-000006"
    cli("stream", "put", "orders", "--home", home, check=True,
        input="".join(json.dumps({"key": f"c{i % 5}", "data": {"n": i}}) + "\n" for i in range(30, 60)))

    desc = cli_json("stream", "describe", "orders", "--home", home)
    by = {s["id"]: s for s in desc["shards"]}
    assert by["shard-000006"]["parents"] == ["shard-000003", "shard-000004"]
    assert by["shard-000000"]["state"] == "closed" and by["shard-000000"]["children"] == ["shard-000002", "shard-000003"]
    assert desc["open_shards"] == 3

    r1 = _lines(cli("stream", "read", "orders", "--group", "g", "--max", "25", "--home", home, check=True).stdout)
    assert len(r1) == 25
    r2 = _lines(cli("stream", "read", "orders", "--group", "g", "--home", home, check=True).stdout)
    assert len(r2) == 35
    recs = r1 + r2
    assert {(r["shard"], r["seq"]) for r in recs} == {(a["shard"], a["seq"]) for a in acks} | {
        (r["shard"], r["seq"]) for r in recs if r["data"]["n"] >= 30}
    per_key: dict[str, list[int]] = {}
    for r in recs:
        per_key.setdefault(r["key"], []).append(r["data"]["n"])
    assert all(v == sorted(v) and len(v) == 12 for v in per_key.values())
    assert _lines(cli("stream", "read", "orders", "--group", "g", "--home", home, check=True).stdout) == []

    leases = cli_json("stream", "leases", "orders", "--group", "g", "--home", home)
    assert len(leases["leases"]) == 7
    assert all(l["owner"] is None for l in leases["leases"])
    assert {l["shard"] for l in leases["leases"] if l["finished"]} == {"shard-000000", "shard-000001",
                                                                        "shard-000003", "shard-000004"}
    assert cli_json("stream", "list", "--home", home) == {"streams": ["orders"]}


def test_raw_records_and_home_from_environment(home, monkeypatch, capsys):
    monkeypatch.setenv("HEADRACE_HOME", str(home))
    assert main(["stream", "create", "t"]) == 0
    monkeypatch.setattr("sys.stdin", __import__("io").StringIO('{"key": "a", "raw": "not json"}\n'))
    assert main(["stream", "put", "t"]) == 0
    capsys.readouterr()
    assert main(["stream", "read", "t", "--group", "g"]) == 0
    (rec,) = _lines(capsys.readouterr().out)
    assert rec["raw"] == "not json" and "data" not in rec
    assert Stream(home, "t").count("shard-000000") == 1


@pytest.mark.parametrize("args, stdin, code, words", [
    (["describe", "nope"], None, "STREAM_UNKNOWN", ["nope"]),
    (["create", "s", "--shards", "2"], None, "STREAM_EXISTS", ["already exists"]),
    (["create", "bad/name"], None, "NAME_INVALID", ["bad/name"]),
    (["split", "s", "shard-000042"], None, "SHARD_UNKNOWN", ["shard-000042"]),
    (["split", "s", "shard-000000", "--at", "0"], None, "SPLIT_KEY_OUT_OF_RANGE", ["outside"]),
    (["split", "s", "shard-000000", "--at", str(MAX_HASH)], None, "SPLIT_KEY_OUT_OF_RANGE", ["outside"]),
    (["split", "s", "shard-000000", "--at", "x"], None, "HASH_KEY_INVALID", ["x"]),
    (["merge", "s", "shard-000000", "shard-000000"], None, "MERGE_NOT_ADJACENT", ["itself"]),
    (["put", "s"], '{"key": "a", "data": 1}\n{"key": "b", "data": }\n', "INPUT_INVALID", ["line 2"]),
    (["put", "s"], '{"key": "a", "data": 1}\n\n[1, 2]\n', "INPUT_INVALID", ["line 3"]),
    (["put", "s"], '{"key": "", "data": 1}\n', "INPUT_INVALID", ["line 1", "key"]),
    (["put", "s"], '{"key": "a"}\n', "INPUT_INVALID", ["line 1", "data"]),
    (["put", "s"], '{"key": "a", "data": NaN}\n', "INPUT_INVALID", ["line 1"]),
    (["put", "s"], '{"key": "a", "data": 1, "extra": 2}\n', "INPUT_INVALID", ["line 1", "extra"]),
    (["read", "nope", "--group", "g"], None, "STREAM_UNKNOWN", ["nope"]),
    (["read", "s", "--group", "../g"], None, "NAME_INVALID", ["group"]),
])
def test_bad_input(home, args, stdin, code, words, monkeypatch, capsys):
    """In-process through ``headrace.cli.main`` (the subprocess path is covered below)."""
    s = create_stream(home, "s", 2)
    s.put("x", {})
    before = json.dumps(Stream(home, "s").describe())
    monkeypatch.setattr("sys.stdin", io.StringIO(stdin or ""))
    capsys.readouterr()
    assert main(["stream", *args, "--home", str(home)]) == 2
    out, err = capsys.readouterr()
    assert err.startswith(f"error [{code}]: "), err
    for w in words:
        assert w in err
    assert out == ""
    assert json.dumps(Stream(home, "s").describe()) == before  # nothing changed
    assert [r.key for r in drain_order(Stream(home, "s"))] == ["x"]


def test_put_line_handling(home):
    create_stream(home, "s", 1)
    # U+2028 inside a JSON string is one line; CRLF line ends are fine; blank lines are skipped
    p = cli("stream", "put", "s", "--home", home, check=True,
            input='{"key": "a", "data": {"t": "x\u2028y"}}\r\n\n{"key": "b", "data": 2}\n')
    assert [a["seq"] for a in _lines(p.stdout)] == [0, 1]
    assert [r.data for r in Stream(home, "s").read("shard-000000")] == ['{"t":"x\u2028y"}', "2"]
    p = subprocess.run([PY, "-m", "headrace.cli", "stream", "put", "s", "--home", str(home)], capture_output=True,
                       input=b'{"key": "c", "data": 1}\n{"key": "\xff", "data": 1}\n', env=child_env(), timeout=60)
    assert p.returncode == 2 and p.stderr.decode().startswith("error [INPUT_INVALID]: stdin line 2: not UTF-8")
    assert Stream(home, "s").count("shard-000000") == 2


def test_merge_errors_after_split(home):
    create_stream(home, "s", 3).split("shard-000001")
    p = cli("stream", "merge", "s", "shard-000000", "shard-000002", "--home", home)
    assert p.returncode == 2 and p.stderr.startswith("error [MERGE_NOT_ADJACENT]")
    p = cli("stream", "merge", "s", "shard-000000", "shard-000001", "--home", home)
    assert p.returncode == 2 and p.stderr.startswith("error [SHARD_CLOSED]")
    p = cli("stream", "split", "s", "shard-000001", "--home", home)
    assert p.returncode == 2 and p.stderr.startswith("error [SHARD_CLOSED]")
    p = cli("stream", "merge", "s", "shard-000000", "shard-000003", "--home", home)
    assert p.returncode == 0


def test_usage_errors_exit_2(home):
    p = cli("stream", "create", "s", "--shards", "0", "--home", home)
    assert p.returncode == 2 and "positive integer" in p.stderr
    p = cli("stream", "read", "s", "--home", home)
    assert p.returncode == 2 and "--group" in p.stderr
