"""The same queries written by hand in PySpark: native DataFrame API, Structured Streaming.

Input: Spark's own JSON file stream source over a directory (the backlog file, then one new file
per feed tick), with an explicit schema holding the fields the query reads. Windowed queries use
Spark's event-time ``window`` with ``withWatermark(ts, "3 seconds")`` in append mode (a window is
emitted once the watermark passes its end); results are collected in ``foreachBatch`` and appended
to a JSON-lines file (q5's top auction per window is picked there: every (window, auction) count
of a window is finalised in the same micro-batch). The pass-through writes with Spark's JSON
writer from ``foreachBatch``. Session settings mirror headrace's (``local[*]``, 1 GB driver,
as many shuffle partitions as the machine has cores, UTC); the state store is Spark's default.
"""
from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, os.path.dirname(__file__))
from runner_util import Events, hard_exit_after, load_config, passthrough_latencies, stop_requested  # noqa: E402

SOLAR_SCHEMA = ("device_id string, group_id int, `timestamp` string, max_watts int, event_type int, "
                "event_details string, obs struct<watts:int,temp:int>, arr double")
NEXMARK_SCHEMA = ("event_type int, dateTime string, "
                  "bid struct<auction:bigint,bidder:bigint,price:bigint,channel:string,url:string,"
                  "dateTime:string,extra:string>, arr double")


def main() -> None:
    cfg = load_config()
    ev = Events(cfg["events_file"])
    from pyspark.sql import SparkSession
    from pyspark.sql import functions as F

    spark = (SparkSession.builder.master(cfg.get("master", "local[*]")).appName("bench-pyspark")
             .config("spark.ui.enabled", "false")
             .config("spark.ui.showConsoleProgress", "false")
             .config("spark.sql.session.timeZone", "UTC")
             .config("spark.sql.shuffle.partitions", str(cfg.get("shuffle_partitions", max(1, os.cpu_count() or 1))))
             .config("spark.driver.memory", cfg.get("driver_memory", "1g"))
             .config("spark.sql.adaptive.enabled", "false")
             .getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    wl = cfg["workload"]
    schema = SOLAR_SCHEMA if wl in ("solar", "passthrough") else NEXMARK_SCHEMA
    src = spark.readStream.schema(schema).json(cfg["input_dir"])
    out_path = Path(cfg["out_dir"])
    out_path.mkdir(parents=True, exist_ok=True)
    sink = open(out_path / "results.jsonl", "a")
    ms = lambda c: F.unix_millis(c)  # noqa: E731

    if wl == "solar":
        q = (src.withColumn("ts", F.col("timestamp").cast("timestamp")).withWatermark("ts", "3 seconds")
             .where("event_type = 0")
             .groupBy(F.window("ts", "10 seconds"), "device_id")
             .agg(F.avg("obs.watts").alias("avg"), F.max("obs.watts").alias("max"), F.count("*").alias("n"))
             .select(ms(F.col("window.start")).alias("ws"), ms(F.col("window.end")).alias("we"),
                     F.col("device_id").alias("k"), "avg", "max", "n"))
    elif wl == "q5":
        q = (src.withColumn("ts", F.col("dateTime").cast("timestamp")).withWatermark("ts", "3 seconds")
             .where("event_type = 2")
             .groupBy(F.window("ts", "10 seconds", "2 seconds"), F.col("bid.auction").alias("auction"))
             .count())
    elif wl == "q7":
        q = (src.withColumn("ts", F.col("dateTime").cast("timestamp")).withWatermark("ts", "3 seconds")
             .where("event_type = 2")
             .groupBy(F.window("ts", "10 seconds"))
             .agg(F.max(F.struct(F.col("bid.price").alias("p"), (-F.col("bid.auction")).alias("a"),
                                 (-F.col("bid.bidder")).alias("b"))).alias("top"))
             .select(ms(F.col("window.start")).alias("ws"), ms(F.col("window.end")).alias("we"),
                     F.col("top.p").alias("price"), (-F.col("top.a")).alias("auction"),
                     (-F.col("top.b")).alias("bidder")))
    else:
        q = (src.where("event_type = 0 AND obs.watts >= 100")
             .select("device_id", F.col("obs.watts").alias("watts"), F.col("timestamp").alias("ts"), "arr"))

    def write_rows(rows: list[dict]) -> None:
        for r in rows:
            sink.write(json.dumps(r) + "\n")
        sink.flush()
        ev.emit("out", rows=rows)

    def on_batch(bdf, batch_id: int) -> None:
        if wl == "q5":
            top = (bdf.groupBy("window")
                   .agg(F.min(F.struct((-F.col("count")).alias("c"), F.col("auction").alias("a"))).alias("t"))
                   .select(ms(F.col("window.start")).alias("ws"), ms(F.col("window.end")).alias("we"),
                           F.col("t.a").alias("auction"), (-F.col("t.c")).alias("n")))
            rows = [r.asDict() for r in top.collect()]
            if rows:
                write_rows(rows)
        elif wl == "passthrough":
            bdf.persist()
            bdf.write.mode("append").json(str(out_path / "data"))
            t = time.time()
            agg = bdf.agg(F.count("*").alias("n"), F.count("arr").alias("live")).collect()[0]
            arrs = [r[0] for r in bdf.where("arr is not null").select("arr").collect()] if agg["live"] else []
            bdf.unpersist()
            if agg["n"]:
                ev.emit("out", t=t, n=agg["n"], backlog=agg["n"] - agg["live"], lat=passthrough_latencies(arrs, t))
        else:
            rows = [r.asDict() for r in bdf.collect()]
            if rows:
                write_rows(rows)

    query = (q.writeStream.outputMode("append").foreachBatch(on_batch)
             .option("checkpointLocation", cfg["checkpoint"]).start())
    ev.emit("ready")
    while not stop_requested(cfg) and query.isActive:
        time.sleep(0.05)
    info = {"exception": str(query.exception()) if query.exception() else None}
    info["progress"] = [{"batchId": p["batchId"], "numInputRows": p["numInputRows"],
                         "durationMs": p["durationMs"]} for p in query.recentProgress]
    hard_exit_after(30)
    query.stop()
    ev.emit("end", info=info)
    ev.close()
    spark.stop()


if __name__ == "__main__":
    main()
