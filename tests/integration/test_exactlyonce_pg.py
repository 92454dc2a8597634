"""Exactly-once on a real PostgreSQL server: the fenced sink transaction, crashes between the
sink's commit and Spark's (in both orders), and kill -9 trials.

Kill trials: ``HEADRACE_KILL_TRIALS=N`` sets how many SIGKILLs to try (default 1, the short run
for CI; 200 for a long run outside CI), ``HEADRACE_KILL_SEED`` the first workload's seed (default
1; each workload of eight kills takes the next). Each restart starts a Spark JVM."""
from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest

from headrace.store.base import MergeSpec
from headrace.store.postgres import Fence, store_for

pytestmark = [pytest.mark.integration]


@pytest.fixture(scope="module")
def pg(pg_factory):
    srv = pg_factory.create("eo")
    yield srv
    srv.stop("immediate")


def _xmins(dsn, schema, coll):
    import psycopg

    with psycopg.connect(dsn, autocommit=True) as c:
        return dict(c.execute(f'SELECT id_key, xmin::text FROM "{schema}"."{coll}"').fetchall())


def test_fenced_merge_writes_once_and_a_replay_is_a_no_op_with_the_same_result(pg, schema):
    coll = store_for(pg.dsn).collection(schema, "out")
    coll.ensure()
    coll.merge_many([{"_id": 1, "n": 0}], MergeSpec(when_not_matched="insert"))
    spec = MergeSpec(on=("_id",), when_matched="fail")
    docs = [{"_id": 1, "n": 1}, {"_id": 2, "n": 2}]
    f = Fence("p", "run1", 0)
    res, replayed = coll.merge_fenced(docs, spec, f)
    assert not replayed and res.inserted == 1 and len(res.errors) == 1 and res.errors[0][0] == 0
    before = _xmins(pg.dsn, schema, "out")
    res2, replayed = coll.merge_fenced([{"_id": 2, "n": 99}, {"_id": 3}], spec, f)   # the same batch again
    assert replayed and res2.errors == res.errors and res2.inserted == 1
    assert _xmins(pg.dsn, schema, "out") == before and coll.count() == 2
    _, replayed = coll.merge_fenced([{"_id": 3}], spec, Fence("p", "run2", 0))   # a new run of the same name
    assert not replayed and coll.count() == 3


@pytest.mark.spark
@pytest.mark.parametrize("phase", ["after_dedup", "after_sink", "after_state"])
def test_crash_between_the_sink_and_sparks_commit_recovers_exactly(spark, pg, schema, phase, tmp_path):
    """The batch fails at ``phase`` once (the driver dies in the middle of the batch): after the
    sink's transaction committed and before Spark's commit (``after_sink``, ``after_state``), or
    after the previous batch's Spark commit and before this batch's sink (``after_dedup``). A
    restart from the checkpoint replays the batch: PostgreSQL rows of the batch are untouched
    (same ``xmin``: the fence made the replay a no-op), every id once, the DLQ exact."""
    from headrace.connections import load_registry
    from headrace.killtrials import Workload
    from headrace.spark.engine import Processor, ProcessorFailed, RunOptions
    from headrace.spec import parse_pipeline

    w = Workload(tmp_path / "w", pg.dsn, schema, messages=120, per_batch=30)
    total = w.prepare()
    reg = load_registry(w.connections, w.root / "hr")
    pipe = parse_pipeline(w.pipelines()["eo_pg"])
    seen = {}

    def fault(batch_id, at):
        if at == phase and batch_id == 2 and not seen:
            seen["xmin"] = _xmins(pg.dsn, schema, "out") if phase != "after_dedup" else None
            raise RuntimeError(f"crash at {phase}")

    p = Processor(pipe, RunOptions(name="eo_pg", checkpoint=w.checkpoint("eo_pg"), registry=reg, fault=fault,
                                   fault_phases=(phase,)))
    with pytest.raises(ProcessorFailed):
        p.run(max_input=total)
    assert seen
    stats = Processor(pipe, RunOptions(name="eo_pg", checkpoint=w.checkpoint("eo_pg"), registry=reg)).run(
        max_input=total)
    valid, invalid = w.expected()
    from headrace.killtrials import check

    got = check(w)
    assert got["pg out"][0] == valid
    assert got["store dlq (eo_pg)"][0] == invalid
    if seen["xmin"] is not None:
        after = _xmins(pg.dsn, schema, "out")
        assert {k: after[k] for k in seen["xmin"]} == seen["xmin"]
    assert stats["dedup"]["dropped"] == total - len(valid) - len(invalid)


@pytest.mark.spark
def test_kill_minus_nine_trials(pg, schema, tmp_path):
    """SIGKILL at random instants and at named points (inside the PostgreSQL transaction, after
    the sink, after the engine's state, after the catalog), restart each time: every message id
    exactly once in PostgreSQL and in the store, both DLQs exact."""
    from headrace.killtrials import Workload, check, run_trials

    want = int(os.environ.get("HEADRACE_KILL_TRIALS", "1"))
    first = int(os.environ.get("HEADRACE_KILL_SEED", "1"))     # a long run can start from other seeds
    done, rounds, log = 0, 0, []
    while done < want:
        rounds += 1
        seed = first + rounds - 1
        w = Workload(tmp_path / f"w{rounds}", pg.dsn, f"{schema}_{rounds}", seed=seed,
                     messages=400 if want > 3 else 200)   # the short CI run: 5 batches a processor
        total = w.prepare()
        rep = run_trials(w, total, min(want - done, 8), seed=seed, max_runs=want * 3 + 10)
        done += len(rep.kills)
        log.append((rounds, rep.kills, round(rep.seconds)))
        for target, (ids, expected) in check(w).items():
            assert ids == expected, f"round {rounds} {target}: kills {rep.kills}"
        print(f"kill trials: round {rounds} (seed {seed}) exact after {len(rep.kills)} kills, "
              f"{done} so far", flush=True)
        assert rounds < want * 2 + 5, f"kill points are not being reached: {log}"
    print(f"\nkill trials: {done} kills over {rounds} workloads: {log}")
