"""Tokens generated on the first start of ``headrace serve``: printed once, stored hashed,
valid again after a restart, never in the logs. No worker starts (no Spark)."""
from __future__ import annotations

import re

import httpx
import pytest

from .conftest import Instance

pytestmark = pytest.mark.instance


def test_generated_tokens_printed_once_and_stored_hashed(tmp_path):
    inst = Instance(tmp_path, env_tokens=False)
    try:
        inst.start()
        out = inst.out.read_text()
        toks = dict(re.findall(r"generated (admin|reader) token \(shown once\): (\S+)", out))
        assert set(toks) == {"admin", "reader"}
        stored = (inst.home / "instance" / "tokens.json").read_text()
        logs = "".join(f.read_text() for f in (inst.home / "instance" / "logs").glob("*.log"))
        for t in toks.values():
            assert t not in stored and t not in logs
        h = {"Authorization": f"Bearer {toks['admin']}"}
        assert httpx.post(inst.url + "/api/processors", headers=h,
                          json={"name": "p", "pipeline": [{"$source": {"connectionName": "stream", "stream": "s"}}]}
                          ).status_code == 201
        r = httpx.post(inst.url + "/api/processors/p/stop", headers={"Authorization": f"Bearer {toks['reader']}"})
        assert r.status_code == 403
        inst.stop()
        inst.start()                                       # a restart prints nothing new
        assert inst.out.read_text().count("shown once") == 2
        r = httpx.get(inst.url + "/api/processors", headers=h)
        assert r.status_code == 200 and [p["name"] for p in r.json()] == ["p"]   # the catalog survived
    finally:
        inst.stop()
