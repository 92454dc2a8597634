"""The same queries in PyFlink SQL (``apache-flink`` wheel, local mini-cluster, streaming mode).

Input: Flink's ``filesystem`` connector with the ``json`` format over the input directory,
monitored continuously (``source.monitor-interval``) so the feed's new files are picked up; the
table declares the fields the query reads, a computed event-time column and
``WATERMARK FOR ts AS ts - INTERVAL '3' SECOND``. Windows are window TVFs (``TUMBLE``/``HOP``);
q5 and q7 take the top row per window with window Top-N (``ROW_NUMBER() ... = 1``). Results come
back to this Python process through ``TableResult.collect()`` and are appended to a JSON-lines
file; "written" is when a row has been appended there.
"""
from __future__ import annotations

import datetime as _dt
import json
import os
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, os.path.dirname(__file__))
from runner_util import Events, hard_exit_after, load_config, passthrough_latencies, stop_requested  # noqa: E402

UTC = _dt.timezone.utc


def _ms(d) -> int:
    if d.tzinfo is None:
        d = d.replace(tzinfo=UTC)
    return int(round(d.timestamp() * 1000))


def main() -> None:
    cfg = load_config()
    ev = Events(cfg["events_file"])
    from pyflink.table import EnvironmentSettings, TableEnvironment

    env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    c = env.get_config()
    c.set("parallelism.default", str(cfg.get("parallelism", 2)))
    c.set("table.local-time-zone", "UTC")
    # a source reader without a split (the backlog is one file) would hold the watermark back
    c.set("table.exec.source.idle-timeout", cfg.get("idle_timeout", "500 ms"))
    wl = cfg["workload"]
    opts = (f"'connector'='filesystem','path'='{cfg['input_dir']}','format'='json',"
            f"'source.monitor-interval'='{cfg.get('monitor_interval', '100ms')}'")
    if wl in ("solar", "passthrough"):
        env.execute_sql(f"""
            CREATE TABLE src (
              device_id STRING, event_type INT, `timestamp` STRING, obs ROW<watts INT, temp INT>, arr DOUBLE,
              ts AS TO_TIMESTAMP(SUBSTRING(`timestamp` FROM 1 FOR 23), 'yyyy-MM-dd''T''HH:mm:ss.SSS'),
              WATERMARK FOR ts AS ts - INTERVAL '3' SECOND
            ) WITH ({opts})""")
    else:
        env.execute_sql(f"""
            CREATE TABLE src (
              event_type INT, `dateTime` STRING, arr DOUBLE,
              bid ROW<auction BIGINT, bidder BIGINT, price BIGINT, channel STRING, url STRING,
                      `dateTime` STRING, extra STRING>,
              ts AS TO_TIMESTAMP(SUBSTRING(`dateTime` FROM 1 FOR 23), 'yyyy-MM-dd''T''HH:mm:ss.SSS'),
              WATERMARK FOR ts AS ts - INTERVAL '3' SECOND
            ) WITH ({opts})""")
    if wl == "solar":
        sql = """
            SELECT window_start, window_end, device_id, AVG(CAST(obs.watts AS DOUBLE)), MAX(obs.watts), COUNT(*)
            FROM TABLE(TUMBLE(TABLE src, DESCRIPTOR(ts), INTERVAL '10' SECOND))
            WHERE event_type = 0
            GROUP BY window_start, window_end, device_id"""
        conv = lambda r: {"ws": _ms(r[0]), "we": _ms(r[1]), "k": r[2], "avg": r[3], "max": r[4], "n": r[5]}  # noqa
    elif wl == "q5":
        sql = """
            SELECT window_start, window_end, auction, num FROM (
              SELECT *, ROW_NUMBER() OVER (PARTITION BY window_start, window_end
                                           ORDER BY num DESC, auction ASC) AS rn
              FROM (SELECT window_start, window_end, bid.auction AS auction, COUNT(*) AS num
                    FROM TABLE(HOP(TABLE src, DESCRIPTOR(ts), INTERVAL '2' SECOND, INTERVAL '10' SECOND))
                    WHERE event_type = 2
                    GROUP BY window_start, window_end, bid.auction))
            WHERE rn = 1"""
        conv = lambda r: {"ws": _ms(r[0]), "we": _ms(r[1]), "auction": r[2], "n": r[3]}  # noqa
    elif wl == "q7":
        sql = """
            SELECT window_start, window_end, price, auction, bidder FROM (
              SELECT window_start, window_end, bid.price AS price, bid.auction AS auction, bid.bidder AS bidder,
                     ROW_NUMBER() OVER (PARTITION BY window_start, window_end
                                        ORDER BY bid.price DESC, bid.auction ASC, bid.bidder ASC) AS rn
              FROM TABLE(TUMBLE(TABLE src, DESCRIPTOR(ts), INTERVAL '10' SECOND))
              WHERE event_type = 2)
            WHERE rn = 1"""
        conv = lambda r: {"ws": _ms(r[0]), "we": _ms(r[1]), "price": r[2], "auction": r[3], "bidder": r[4]}  # noqa
    else:
        sql = """SELECT device_id, obs.watts AS watts, `timestamp` AS ts, arr FROM src
                 WHERE event_type = 0 AND obs.watts >= 100"""
        conv = None

    out_path = Path(cfg["out_dir"])
    out_path.mkdir(parents=True, exist_ok=True)
    sink = open(out_path / "results.jsonl", "a")
    ev.emit("ready")
    result = env.execute_sql(sql)
    stopped = threading.Event()

    def watch() -> None:
        while not stop_requested(cfg):
            time.sleep(0.05)
        stopped.set()
        ev.emit("end", info={})
        ev.close()
        os._exit(0)     # cancelling a collect() job from here is slow; the process just ends

    threading.Thread(target=watch, daemon=True).start()
    hard_exit_after(cfg.get("max_seconds", 3600))
    with result.collect() as it:
        if conv is not None:
            for row in it:
                d = conv(row)
                sink.write(json.dumps(d) + "\n")
                sink.flush()
                ev.emit("out", rows=[d])
        else:
            lock = threading.Lock()
            st = {"n": 0, "live": 0, "arrs": []}

            def flusher() -> None:
                while True:
                    time.sleep(0.02)
                    with lock:
                        if not st["n"]:
                            continue
                        sink.flush()
                        t = time.time()
                        ev.emit("out", t=t, n=st["n"], backlog=st["n"] - st["live"],
                                lat=passthrough_latencies(st["arrs"], t))
                        st.update(n=0, live=0, arrs=[])

            threading.Thread(target=flusher, daemon=True).start()
            for row in it:
                line = json.dumps({"device_id": row[0], "watts": row[1], "ts": row[2], "arr": row[3]}) + "\n"
                with lock:
                    sink.write(line)
                    st["n"] += 1
                    if row[3] is not None:
                        st["arrs"].append(row[3])
                        st["live"] += 1
            time.sleep(0.1)
    if not stopped.is_set():
        ev.emit("end", info={"finished": True})


if __name__ == "__main__":
    main()
