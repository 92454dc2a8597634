"""``headrace.spark.py4j_calls``: fewer py4j round trips while Column trees are built, and the
same values as PySpark's own calls."""
from __future__ import annotations

import math
from contextlib import contextmanager

import pytest

pytestmark = pytest.mark.spark


@contextmanager
def round_trips():
    """Counts the py4j commands the current thread sends while the block runs."""
    import threading

    import py4j.clientserver as CS

    seen = {"n": 0}
    orig = CS.ClientServerConnection.send_command
    me = threading.get_ident()

    def send(self, command, *a, **k):
        if threading.get_ident() == me:      # not py4j's finalizer thread
            seen["n"] += 1
            seen.setdefault("commands", []).append(command)
        return orig(self, command, *a, **k)

    CS.ClientServerConnection.send_command = send
    try:
        yield seen
    finally:
        CS.ClientServerConnection.send_command = orig


def test_installed_by_the_session(spark):
    from headrace.spark.py4j_calls import installed

    assert installed()


def test_constants_keep_their_types_and_values(spark):
    from pyspark.sql import functions as F

    values = [1, True, 1.0, -0.0, 0.0, None, "1", "", 2 ** 40, float("nan"), False, 0]
    df = spark.range(1).select(*[F.lit(v).alias(f"c{i}") for i, v in enumerate(values)])
    row, types = df.collect()[0], dict(df.dtypes)
    assert [types[f"c{i}"] for i in range(len(values))] == [
        "int", "boolean", "double", "double", "double", "void", "string", "string", "bigint", "double",
        "boolean", "int"]
    got = [row[f"c{i}"] for i in range(len(values))]
    assert got[:3] == [1, True, 1.0] and got[5:9] == [None, "1", "", 2 ** 40] and got[10:] == [False, 0]
    assert math.copysign(1, got[3]) == -1 and math.copysign(1, got[4]) == 1 and math.isnan(got[9])


def test_a_repeated_constant_or_name_costs_no_round_trip_and_is_a_new_python_object(spark):
    from pyspark.sql import functions as F

    a = F.lit("headrace-constant")
    F.col("warm-up")
    with round_trips() as seen:
        b, c = F.lit("headrace-constant"), F.col("headrace_name")
        d = F.col("headrace_name")
    assert seen["n"] == 1, seen          # the first col("headrace_name") only
    assert a is not b and c is not d
    a.marker = 1
    assert "marker" in a.__dict__ and "marker" not in b.__dict__


def test_functions_and_short_lists_take_one_round_trip_each(spark):
    from pyspark.sql import functions as F

    cols = [F.col(f"x{i}") for i in range(3)]
    F.coalesce(*cols)
    with round_trips() as seen:
        F.coalesce(*cols)
    assert seen["n"] == 3          # List.of, PythonUtils.toSeq, functions.coalesce


def test_long_lists_and_every_list_length_give_the_same_columns(spark):
    from pyspark.sql import functions as F

    for n in (1, 10, 11, 25):
        row = spark.range(1).select(F.array(*[F.lit(i) for i in range(n)]).alias("a"),
                                    F.concat(*[F.lit(str(i)) for i in range(n)]).alias("s")).collect()[0]
        assert row["a"] == list(range(n)) and row["s"] == "".join(map(str, range(n)))
