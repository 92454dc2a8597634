"""``headrace process`` stopped by SIGTERM or Ctrl-C: the query stops, ``--stats`` are printed with
status ``STOPPED``, and the exit status is 128 + the signal."""
from __future__ import annotations

import json
import os
import signal

import pytest

from headrace import commands
from headrace.cli import main

pytestmark = pytest.mark.spark


@pytest.mark.parametrize("sig,code", [(signal.SIGTERM, 143), (signal.SIGINT, 130)], ids=["SIGTERM", "SIGINT"])
def test_signal_stops_the_run_and_prints_stats(spark, tmp_path, capsys, monkeypatch, sig, code):
    data = tmp_path / "in.jsonl"
    data.write_text("".join(json.dumps({"n": i}) + "\n" for i in range(5)))
    (tmp_path / "c.yaml").write_text(f"connections:\n  in: {{type: file, path: {data}}}\n")
    (tmp_path / "p.json").write_text(json.dumps([{"$source": {"connectionName": "in"}},
                                                 {"$match": {"n": {"$gte": 2}}}]))
    printed = commands._print_docs

    def print_then_signal(docs):
        printed(docs)
        os.kill(os.getpid(), sig)       # handled in the main thread, which is inside run()

    monkeypatch.setattr(commands, "_print_docs", print_then_signal)
    before = signal.getsignal(signal.SIGTERM)
    rc = main(["process", str(tmp_path / "p.json"), "--connections", str(tmp_path / "c.yaml"),
               "--home", str(tmp_path / "h"), "--stats"])
    out, err = capsys.readouterr()
    assert rc == code
    assert [json.loads(line)["n"] for line in out.splitlines()] == [2, 3, 4]
    stats = json.loads(err[err.index("{"):])
    assert (stats["status"], stats["inputMessageCount"], stats["outputMessageCount"]) == ("STOPPED", 5, 3)
    assert signal.getsignal(signal.SIGTERM) is before       # the caller's handler is back
