"""The de-duplication catalog (headrace.dedup) without Spark: decisions, versions, Bloom filters."""
import numpy as np
import pytest

from headrace.dedup import Bloom, Shard, bloom_params

H = 60_000  # horizon: one minute


def shard(tmp_path, buckets=4):
    return Shard(tmp_path, 0, H, buckets, 0.01)


def test_bloom_has_no_false_negatives_and_about_the_target_false_positive_rate():
    rng = np.random.default_rng(1)
    bits, k = bloom_params(100_000, 0.01)
    b = Bloom(bits, k)
    ids = rng.integers(-2**63, 2**63 - 1, 100_000, dtype=np.int64).view(np.uint64)
    b.add(ids)
    assert b.contains(ids).all()
    other = rng.integers(-2**63, 2**63 - 1, 200_000, dtype=np.int64).view(np.uint64)
    fpr = b.contains(other).mean()
    assert 0.001 < fpr < 0.02


def test_first_copy_kept_later_copies_dropped_within_and_across_batches(tmp_path):
    s = shard(tmp_path)
    d0 = s.decide(0, np.array([1, 2, 1, 3]), np.array([1000, 1000, 1000, 2000]), None)
    assert d0.drop.tolist() == [False, False, True, False]
    assert d0.stats["dropped"] == 1 and d0.stats["catalogSize"] == 3
    d1 = s.decide(1, np.array([3, 4, 2]), np.array([3000, 3000, 9000]), 2000)
    assert d1.drop.tolist() == [True, False, True]
    assert d1.stats["dropped"] == 2 and d1.stats["bloomHits"] >= 2
    assert d1.stats["catalogSize"] == 4


def test_a_rerun_of_a_batch_reads_the_previous_version_and_decides_the_same(tmp_path):
    s = shard(tmp_path)
    s.decide(0, np.array([10, 11]), np.array([0, 0]), None)
    first = s.decide(1, np.array([11, 12, 12]), np.array([5, 5, 5]), 0)
    again = shard(tmp_path).decide(1, np.array([11, 12, 12]), np.array([5, 5, 5]), 0)   # crash, replay
    assert first.drop.tolist() == again.drop.tolist() == [True, False, True]
    assert first.stats == again.stats


def test_ids_are_collected_once_the_watermark_passes_the_horizon_and_older_records_expire(tmp_path):
    s = shard(tmp_path)
    s.decide(0, np.array([1]), np.array([1000]), None)
    d = s.decide(1, np.array([2]), np.array([200_000]), 200_000)     # W - horizon = 140 000 > bucket end
    assert d.stats["catalogSize"] == 1 and d.stats["buckets"] == 1
    late = s.decide(2, np.array([1, 9]), np.array([1000, 139_000]), 200_000)
    assert late.drop.tolist() == [True, True]
    assert late.stats["expiredDuplicates"] == 2 and late.stats["dropped"] == 0


def test_old_versions_and_unreferenced_files_are_removed(tmp_path):
    s = shard(tmp_path)
    for n in range(40):
        s.decide(n, np.array([n, n + 1000]), np.array([n * 1000, n * 1000]), n * 1000)
    names = [f.name for f in (tmp_path / "0").iterdir()]
    assert sum(1 for x in names if x.startswith("m")) <= 8
    assert len(names) < 60


def test_a_bucket_grows_past_its_bloom_capacity_and_keeps_answering(tmp_path):
    s = shard(tmp_path, buckets=1)
    rng = np.random.default_rng(2)
    ids = rng.integers(-2**62, 2**62, 50_000, dtype=np.int64)
    for i in range(5):
        part = ids[i * 10_000:(i + 1) * 10_000]
        d = s.decide(i, part, np.full(len(part), 10), 0)
        assert not d.drop.any()
    d = s.decide(5, ids[::100], np.full(500, 10), 0)
    assert d.drop.all() and d.stats["catalogSize"] == 50_000
