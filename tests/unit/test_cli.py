"""The CLI refuses invalid input before Spark starts (exit 2, error naming where and what)."""
import json
import subprocess
import sys

import pytest

PROBE = ("import sys; from headrace.cli import main; rc = main(sys.argv[1:]); "
         "print('SPARK_LOADED' if 'pyspark' in sys.modules else 'NO_SPARK'); sys.exit(rc)")


def run(*args, cwd=None):
    return subprocess.run([sys.executable, "-c", PROBE, *args], capture_output=True, text=True, cwd=cwd, timeout=60)


@pytest.mark.parametrize("pipeline,code,where", [
    ([{"$source": {"connectionName": "sample_stream_solar"}},
      {"$tumblingWindow": {"interval": {"size": 5, "unit": "minutes"}, "pipeline": [{"$count": "n"}]}}],
     "BAD_VALUE", "stage 1 ($tumblingWindow) at 'interval.unit'"),
    ([{"$source": {"connectionName": "nope"}}], "CONNECTION_UNKNOWN", "stage 0 ($source) at 'connectionName'"),
    ([{"$source": {"connectionName": "sample_stream_solar"}}, {"$group": {"_id": 1}}], "STAGE_ORDER", "stage 1"),
    ({"pipeline": [{"$source": {"connectionName": "sample_stream_solar"}}], "options": {"dlq": 5}},
     "TYPE_MISMATCH", "at 'options.dlq'"),
])
def test_invalid_pipeline_exits_2_before_spark(tmp_path, pipeline, code, where):
    f = tmp_path / "p.json"
    f.write_text(json.dumps(pipeline))
    r = run("process", str(f), cwd=tmp_path)
    assert r.returncode == 2, r.stderr
    assert f"error [{code}]" in r.stderr and where in r.stderr
    assert "NO_SPARK" in r.stdout


def test_unreadable_and_malformed_files(tmp_path):
    r = run("process", str(tmp_path / "missing.json"), cwd=tmp_path)
    assert r.returncode == 2 and "PIPELINE_FILE" in r.stderr
    f = tmp_path / "bad.json"
    f.write_text('[{"$source": ')
    r = run("process", str(f), cwd=tmp_path)
    assert r.returncode == 2 and "PIPELINE_JSON" in r.stderr and "line 1" in r.stderr


def test_connections_listing_redacts(tmp_path):
    (tmp_path / "headrace.yaml").write_text("connections:\n  pg: {type: postgres, dsn: 'postgresql://a:s3cret@h/d'}\n")
    r = run("connections", cwd=tmp_path)
    assert r.returncode == 0 and "s3cret" not in r.stdout and "pg" in r.stdout


def _commands(parser):
    import argparse

    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return set(sub.choices)


def test_command_table_matches_what_the_plugins_register():
    """``cli.PLUGINS`` and ``cli._CORE`` name every command; a command line loads only its owner."""
    from headrace import cli

    everything = _commands(cli.build_parser(everything=True))
    assert everything == set(cli._CORE) | {n for names in cli.PLUGINS.values() for n in names}
    core = _commands(cli.build_parser(["process"]))
    assert core == set(cli._CORE)
    for mod, names in cli.PLUGINS.items():
        assert _commands(cli.build_parser([names[0], "--help"])) == core | set(names), mod
    assert _commands(cli.build_parser(["--help"])) == everything
    assert _commands(cli.build_parser(["no-such-command"])) == everything


def test_sp_process_loads_neither_zones_nor_streams():
    code = ("import sys; from headrace.cli import build_parser; build_parser(['sp', 'process', 'x.json']); "
            "print(sorted(m for m in sys.modules if m.startswith(('headrace.zones', 'headrace.streams'))))")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and r.stdout.strip() == "[]", (r.stdout, r.stderr)
