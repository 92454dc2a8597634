"""Crash injection (headrace.faults): a no-op unless configured; SIGKILL of the group when reached."""
import os
import signal
import subprocess
import sys

CODE = "from headrace.faults import maybe_crash\nmaybe_crash('after_sink', 3)\nmaybe_crash('after_sink', 4)\nprint('alive')"


def run(at):
    env = {**os.environ, "HEADRACE_CRASH_AT": at} if at else {k: v for k, v in os.environ.items()
                                                               if k != "HEADRACE_CRASH_AT"}
    return subprocess.run([sys.executable, "-c", CODE], env=env, capture_output=True, text=True,
                          start_new_session=True)


def test_not_configured_or_not_reached_does_nothing():
    assert run(None).stdout.strip() == "alive"
    assert run("after_state:4").stdout.strip() == "alive"


def test_reached_point_kills_the_process_group():
    r = run("after_sink:4")
    assert r.returncode == -signal.SIGKILL and "alive" not in r.stdout
    assert run("after_sink:*").returncode == -signal.SIGKILL
